//! A block engine inside a full-system run (hardware in the loop).
//!
//! The system models (the MCM GPU's GMMUs, the UVM driver) never call a block directly: each
//! block instance sits behind a [`ClockedBlock`], which clocks its engine at the **system
//! cycles at which its inputs arrive** and hands the outputs back. The engine is any
//! [`SystemEngine`]: the behavioural twin through [`Plain`], the RustHDL module under
//! rust-hdl's simulator, the emitted Verilog under Verilator, or a checking engine that runs
//! two of them side by side (`mcmvm-cosim`). All of them see the same block cycles, so a run
//! gives the same answers whichever engine serves.
//!
//! # Block time
//! 1. An input for system cycle `t` is applied at block cycle `max(t, next)`, where `next` is
//!    the cycle after the block's last one: one input port per block, so two inputs of one
//!    cycle queue one behind the other (a FIFO in front of the block, as hardware has).
//! 2. Between two inputs the block sees idle cycles (every input port zero). The first
//!    [`BlockKind::quiesce_cycles`] of them are stepped; the rest are *skipped*: after that
//!    many idle cycles every block's pipeline is empty and its state and outputs no longer
//!    change. The engine is told how many it skipped ([`SystemEngine::skip_idle`]), so a
//!    checking engine can step them on one side and prove the claim (`--hw check`'s
//!    `every_cycle` option and its test).

use crate::config::{AttConfig, CoalescerConfig, RtConfig};
use crate::protocol::{AttIn, AttOut, BlockKind, CoalIn, CoalOut, CycleModel, Ports, RtIn, RtOut};
use serde::Serialize;
use std::path::PathBuf;

/// Why a block could not serve a system run. One line each, naming the block instance and
/// the system cycle.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BlockFault {
    /// Two engines of a checked block disagree.
    #[error(
        "{block} on {unit}: engines disagree at system cycle {system_cycle} (block cycle \
         {block_cycle}) on `{signal}`: {}{}",
        values.iter().map(|(e, v)| format!("{e} = {v:#x}")).collect::<Vec<_>>().join(", "),
        vcd.as_ref().map(|p| format!("; last cycles of port traffic in {}", p.display())).unwrap_or_default()
    )]
    Mismatch {
        block: &'static str,
        unit: String,
        system_cycle: u64,
        block_cycle: u64,
        signal: &'static str,
        /// (engine, value) pairs.
        values: Vec<(String, u64)>,
        /// VCD of the block's last cycles of port traffic, when one was written.
        vcd: Option<PathBuf>,
    },
    /// The block did not answer within its documented latency.
    #[error(
        "{block} on {unit}: no `{port}` within {latency} cycle(s) of the request at system \
         cycle {system_cycle}"
    )]
    NoAnswer {
        block: &'static str,
        unit: String,
        system_cycle: u64,
        port: &'static str,
        latency: u32,
    },
    /// An independent reference check of the outputs failed.
    #[error("{block} on {unit}: reference check failed at system cycle {system_cycle}: {message}")]
    Reference {
        block: &'static str,
        unit: String,
        system_cycle: u64,
        message: String,
    },
    /// A check on an RTL engine's own internal state (an invariant of the block's registers)
    /// failed after a block cycle.
    #[error(
        "{block} on {unit}: {engine}'s internal state breaks the invariant `{invariant}` at \
         system cycle {system_cycle} (block cycle {block_cycle})"
    )]
    Invariant {
        block: &'static str,
        unit: String,
        system_cycle: u64,
        block_cycle: u64,
        engine: String,
        invariant: String,
    },
    /// The engine could not be built or stepped (tool missing, build failed, …).
    #[error("{block}: engine unavailable: {reason}")]
    Unavailable { block: &'static str, reason: String },
    /// The twin that predicts an RTL engine's outputs (so the RTL can run on a thread of
    /// its own) was wrong: the RTL gave `rtl` where the twin gave `twin`. The run is
    /// repeated with the RTL serving on the system's thread ([`serve_predicted`]).
    #[error(
        "{block} on {unit}: the twin mispredicted `{signal}` at system cycle {system_cycle} \
         (block cycle {block_cycle}): twin = {twin:#x}, {engine} = {rtl:#x}"
    )]
    Mispredicted {
        block: &'static str,
        unit: String,
        system_cycle: u64,
        block_cycle: u64,
        signal: &'static str,
        engine: String,
        twin: u64,
        rtl: u64,
    },
}

impl BlockFault {
    /// The same fault attributed to block instance `unit` (engines do not know where they sit).
    pub fn at_unit(mut self, name: &str) -> BlockFault {
        match &mut self {
            BlockFault::Mismatch { unit, .. }
            | BlockFault::NoAnswer { unit, .. }
            | BlockFault::Reference { unit, .. }
            | BlockFault::Invariant { unit, .. }
            | BlockFault::Mispredicted { unit, .. } => *unit = name.to_string(),
            BlockFault::Unavailable { .. } => {}
        }
        self
    }
}

/// Block cycles one engine stepped.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct EngineCycles {
    /// `twin`, `rusthdl`, `verilator`.
    pub engine: String,
    /// Cycles stepped (skipped idle cycles the engine stepped anyway included).
    pub cycles: u64,
}

/// What a block engine reports at the end of a run.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct EngineReport {
    /// `twin`, `rusthdl`, `verilator`, or `check(twin,verilator)`.
    pub engine: String,
    /// Per underlying engine.
    pub stepped: Vec<EngineCycles>,
    /// Block cycles whose outputs were compared between engines (check mode), else 0.
    pub compared: u64,
    /// Cycles checked by an independent reference monitor, else 0.
    pub reference_checked: u64,
}

/// A block engine as a system run drives it.
pub trait SystemEngine<I: Ports, O: Ports>: Send {
    /// One block cycle, at system cycle `system_cycle` (the cycle convention of
    /// [`crate::protocol`]).
    fn step(&mut self, system_cycle: u64, input: &I) -> Result<O, BlockFault>;
    /// The system skips `cycles` idle cycles starting at `from` (the block is quiescent).
    /// Engines ignore this unless they check the claim.
    fn skip_idle(&mut self, _from: u64, _cycles: u64) -> Result<(), BlockFault> {
        Ok(())
    }
    /// Wait until every cycle stepped so far has been checked, and return the first fault
    /// found. An engine that checks on another thread (`--hw check`) reports a fault of
    /// cycle `t` at a later `step` or here; the system calls this where a run ends (a
    /// kernel's end, the GPU's final flush), so no fault goes unreported.
    fn sync(&mut self) -> Result<(), BlockFault> {
        Ok(())
    }
    /// Who served and how many cycles each engine stepped.
    fn report(&self) -> EngineReport;
}

/// A boxed system engine.
pub type BoxedSystemEngine<I, O> = Box<dyn SystemEngine<I, O>>;

impl<I: Ports, O: Ports> SystemEngine<I, O> for BoxedSystemEngine<I, O> {
    #[inline]
    fn step(&mut self, system_cycle: u64, input: &I) -> Result<O, BlockFault> {
        (**self).step(system_cycle, input)
    }
    fn skip_idle(&mut self, from: u64, cycles: u64) -> Result<(), BlockFault> {
        (**self).skip_idle(from, cycles)
    }
    fn sync(&mut self) -> Result<(), BlockFault> {
        (**self).sync()
    }
    fn report(&self) -> EngineReport {
        (**self).report()
    }
}

/// Builds the engine of every block instance a system run needs: the behavioural twins
/// (`mcmvm_models::blocks::TwinFactory`) or the RTL (`mcmvm_cosim::system::RtlFactory`).
pub trait BlockFactory: Send + Sync {
    /// `twin`, `rusthdl`, `verilator`, `check`.
    fn name(&self) -> &str;
    /// True when every engine is the behavioural twin (the system may then call the twin
    /// directly on its hottest path, with the same block-cycle semantics).
    fn is_twin(&self) -> bool {
        false
    }
    /// The same engines with no twin predicting their outputs, when this factory's do
    /// (a mispredicted run is repeated with them: [`serve_predicted`]).
    fn unpredicted(&self) -> Option<std::sync::Arc<dyn BlockFactory>> {
        None
    }
    fn remote_tracker(
        &self,
        cfg: &RtConfig,
        unit: &str,
    ) -> Result<BoxedSystemEngine<RtIn, RtOut>, BlockFault>;
    fn tlb_coalescer(
        &self,
        cfg: &CoalescerConfig,
        unit: &str,
    ) -> Result<BoxedSystemEngine<CoalIn, CoalOut>, BlockFault>;
    fn access_time_tracker(
        &self,
        cfg: &AttConfig,
        unit: &str,
    ) -> Result<BoxedSystemEngine<AttIn, AttOut>, BlockFault>;
}

/// Run `run` with `factory`'s engines. Where a twin predicts an RTL engine's outputs and
/// the RTL disagreed ([`BlockFault::Mispredicted`], which `fault` finds in the run's
/// error), run it again with [`BlockFactory::unpredicted`]'s engines: the RTL then serves
/// on the system's thread, so the result is the one the RTL gives, whatever the twin
/// says. Returns the run and, if repeated, the failed prediction.
pub fn serve_predicted<F, T, E>(
    factory: &F,
    run: impl Fn(Option<std::sync::Arc<dyn BlockFactory>>) -> Result<T, E>,
    fault: impl Fn(&E) -> Option<&BlockFault>,
) -> Result<(T, Option<BlockFault>), E>
where
    F: BlockFactory + ?Sized,
{
    match run(None) {
        Err(e) => match (fault(&e), factory.unpredicted()) {
            (Some(f @ BlockFault::Mispredicted { .. }), Some(unpredicted)) => {
                let f = f.clone();
                run(Some(unpredicted)).map(|t| (t, Some(f)))
            }
            _ => Err(e),
        },
        Ok(t) => Ok((t, None)),
    }
}

/// Any single `CycleModel` (a twin, a simulator) as a system engine.
pub struct Plain<M> {
    model: M,
    name: &'static str,
    cycles: u64,
}

impl<M> Plain<M> {
    pub fn new(model: M, name: &'static str) -> Plain<M> {
        Plain {
            model,
            name,
            cycles: 0,
        }
    }
}

impl<M: CycleModel + Send> SystemEngine<M::In, M::Out> for Plain<M> {
    #[inline]
    fn step(&mut self, _system_cycle: u64, input: &M::In) -> Result<M::Out, BlockFault> {
        self.cycles += 1;
        Ok(self.model.step(input))
    }
    fn report(&self) -> EngineReport {
        EngineReport {
            engine: self.name.to_string(),
            stepped: vec![EngineCycles {
                engine: self.name.to_string(),
                cycles: self.cycles,
            }],
            compared: 0,
            reference_checked: 0,
        }
    }
}

impl BlockKind {
    /// Idle cycles after which the block's state and outputs no longer change: every
    /// block answers one cycle after its inputs (RT: index then update; coalescer and ATT:
    /// one rank of output registers), so after two idle cycles nothing is in flight. The
    /// claim is tested by stepping the skipped cycles on one engine of a checked run.
    pub fn quiesce_cycles(self) -> u64 {
        2
    }
}

/// One block instance clocked in system time (module docs: "Block time").
pub struct ClockedBlock<I: Ports, O: Ports, E = BoxedSystemEngine<I, O>> {
    engine: E,
    kind: BlockKind,
    unit: String,
    /// The system cycle of the block's next cycle.
    next: u64,
    /// Idle cycles stepped since the last input with any port set.
    idle_run: u64,
    /// Block cycles stepped and idle cycles skipped.
    stepped: u64,
    skipped: u64,
    _ports: std::marker::PhantomData<fn(I) -> O>,
}

impl<I: Ports, O: Ports, E: SystemEngine<I, O>> ClockedBlock<I, O, E> {
    /// `unit` names the instance in messages ("chiplet 2", "UVM driver").
    pub fn new(kind: BlockKind, unit: String, engine: E) -> Self {
        ClockedBlock {
            engine,
            kind,
            unit,
            next: 0,
            // Power-on state is quiescent.
            idle_run: kind.quiesce_cycles(),
            stepped: 0,
            skipped: 0,
            _ports: std::marker::PhantomData,
        }
    }

    /// The system cycle the block's next cycle will be at.
    pub fn next_cycle(&self) -> u64 {
        self.next
    }

    /// Apply `input` at system cycle `at` (or the block's next free cycle, if later), after
    /// the idle cycles since the last one. Returns the cycle it was applied at and the
    /// outputs of that cycle.
    pub fn step_at(&mut self, at: u64, input: &I) -> Result<(u64, O), BlockFault> {
        self.step_at_with(at, input, &mut |_, _| {})
    }

    /// [`ClockedBlock::step_at`], handing the outputs of the idle cycles stepped before the
    /// input to `gap` (cycle, outputs): a registered output of the previous input appears
    /// there, and a system that consumes outputs as a stream (the ATT's records) must see it.
    pub fn step_at_with(
        &mut self,
        at: u64,
        input: &I,
        gap_outputs: &mut dyn FnMut(u64, &O),
    ) -> Result<(u64, O), BlockFault> {
        let at = at.max(self.next);
        let gap = at - self.next;
        if gap > 0 {
            let stepped = gap.min(self.kind.quiesce_cycles().saturating_sub(self.idle_run));
            let idle = I::default();
            for _ in 0..stepped {
                let cycle = self.next;
                let out = self.one(cycle, &idle)?;
                gap_outputs(cycle, &out);
            }
            let skip = gap - stepped;
            if skip > 0 {
                self.engine
                    .skip_idle(self.next, skip)
                    .map_err(|f| f.at_unit(&self.unit))?;
                self.skipped += skip;
                self.next += skip;
            }
        }
        let out = self.one(at, input)?;
        Ok((at, out))
    }

    /// One idle cycle at the block's next cycle.
    pub fn idle(&mut self) -> Result<(u64, O), BlockFault> {
        let at = self.next;
        let out = self.one(at, &I::default())?;
        Ok((at, out))
    }

    #[inline]
    fn one(&mut self, at: u64, input: &I) -> Result<O, BlockFault> {
        let out = self
            .engine
            .step(at, input)
            .map_err(|f| f.at_unit(&self.unit))?;
        self.idle_run = if *input == I::default() {
            self.idle_run + 1
        } else {
            0
        };
        self.stepped += 1;
        self.next = at + 1;
        Ok(out)
    }

    /// Every cycle stepped so far checked ([`SystemEngine::sync`]); the first fault found.
    pub fn sync(&mut self) -> Result<(), BlockFault> {
        self.engine.sync().map_err(|f| f.at_unit(&self.unit))
    }

    /// This instance's line of the run's hardware report.
    pub fn report(&self) -> BlockReport {
        BlockReport {
            block: self.kind.module_name(),
            unit: self.unit.clone(),
            engine: self.engine.report(),
            block_cycles: self.stepped,
            skipped_idle: self.skipped,
        }
    }

    /// Which block this is.
    pub fn kind(&self) -> BlockKind {
        self.kind
    }

    /// The instance's name in messages.
    pub fn unit(&self) -> &str {
        &self.unit
    }
}

/// One block instance's line in a run's `hardware` report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BlockReport {
    pub block: &'static str,
    pub unit: String,
    pub engine: EngineReport,
    /// Block cycles the system stepped.
    pub block_cycles: u64,
    /// Idle cycles skipped while the block was quiescent.
    pub skipped_idle: u64,
}

#[cfg(test)]
mod tests;

/// The `hardware` section of a run's report: which engine served each block instance and
/// how many block cycles each engine stepped.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct HardwareReport {
    /// The `--hw` mode: `twin`, `rusthdl`, `verilator`, `check`.
    pub engine: String,
    pub blocks: Vec<BlockReport>,
    /// The twin's failed prediction, when the run was repeated with the RTL serving on
    /// the system's thread ([`serve_predicted`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub repeated_after: Option<String>,
}

impl HardwareReport {
    /// Cycles compared between engines, over every instance.
    pub fn compared(&self) -> u64 {
        self.blocks.iter().map(|b| b.engine.compared).sum()
    }

    /// Cycles checked by the README reference monitors, over every instance.
    pub fn reference_checked(&self) -> u64 {
        self.blocks.iter().map(|b| b.engine.reference_checked).sum()
    }

    /// The text section: one line per block instance.
    pub fn table(&self) -> String {
        use std::fmt::Write;
        let mut s = format!("hardware (--hw {})\n", self.engine);
        let _ = writeln!(
            s,
            "  {:<20} {:<11} {:<24} {:>12} {:>12} {:>12} {:>12}",
            "block", "unit", "engine", "cycles", "skipped", "compared", "ref-checked"
        );
        for b in &self.blocks {
            let stepped = b
                .engine
                .stepped
                .iter()
                .map(|e| format!("{}:{}", e.engine, e.cycles))
                .collect::<Vec<_>>()
                .join(" ");
            let _ = writeln!(
                s,
                "  {:<20} {:<11} {:<24} {:>12} {:>12} {:>12} {:>12}  {}",
                b.block,
                b.unit,
                b.engine.engine,
                b.block_cycles,
                b.skipped_idle,
                b.engine.compared,
                b.engine.reference_checked,
                stepped
            );
        }
        if let Some(why) = &self.repeated_after {
            let _ = writeln!(s, "  repeated with the RTL serving unpredicted: {why}");
        }
        if self.engine == "check" {
            let _ = writeln!(
                s,
                "  block cycles compared: {}, checked by the README references: {}, mismatches: 0",
                self.compared(),
                self.reference_checked()
            );
        }
        s
    }
}
