//! The RTL in full-system runs (`--hw rusthdl|verilator|check`): a [`BlockFactory`] that
//! puts rust-hdl's simulator of the RustHDL modules, or the emitted Verilog under
//! Verilator, behind every block instance a system run creates — each chiplet's Remote
//! Tracker and TLB coalescer, the UVM driver's Access Time Tracker — and a checking engine
//! that runs the twin and the Verilator model side by side on identical inputs, compares
//! every output every cycle and stops the run at the first mismatch with a VCD of the
//! block's last cycles of port traffic.
//!
//! `mcmvm-models` knows none of this: it sees only `mcmvm_protocol::system`'s traits.

mod board;
mod check;
mod check_thread;
mod record;
mod stream_store;

pub use check::CheckEngine;
pub use record::RecordingEngine;

use crate::error::CosimError;
use crate::verilator::VerilatorModel;
use mcmvm_models::blocks::{access_time_tracker, remote_tracker, tlb_coalescer, Hardware};
use mcmvm_models::config::{AttConfig, CoalescerConfig, HwConfig, RtConfig};
use mcmvm_models::protocol::{
    AttIn, AttOut, BlockKind, CoalIn, CoalOut, CycleModel, Ports, RtIn, RtOut,
};
use mcmvm_protocol::system::{BlockFactory, BlockFault, BoxedSystemEngine, Plain};
use std::path::PathBuf;
use std::str::FromStr;
use std::sync::Arc;

/// Which engines serve the blocks of a system run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HwMode {
    /// The behavioural twins (the default).
    Twin,
    /// rust-hdl's simulator on the RustHDL modules.
    RustHdl,
    /// The emitted Verilog under Verilator.
    Verilator,
    /// Twin and Verilator side by side, every output compared every cycle.
    Check,
}

impl HwMode {
    pub const ALL: [HwMode; 4] = [
        HwMode::Twin,
        HwMode::RustHdl,
        HwMode::Verilator,
        HwMode::Check,
    ];

    pub fn name(self) -> &'static str {
        match self {
            HwMode::Twin => "twin",
            HwMode::RustHdl => "rusthdl",
            HwMode::Verilator => "verilator",
            HwMode::Check => "check",
        }
    }
}

impl FromStr for HwMode {
    type Err = CosimError;
    fn from_str(s: &str) -> Result<HwMode, CosimError> {
        HwMode::ALL
            .into_iter()
            .find(|m| m.name() == s)
            .ok_or_else(|| CosimError::UnknownHwMode(s.to_string()))
    }
}

/// Options of a system run's hardware.
#[derive(Debug, Clone)]
pub struct HwOptions {
    pub mode: HwMode,
    /// Where `check` writes the VCD of a mismatching block's last cycles.
    pub mismatch_dir: PathBuf,
    /// Cycles of port traffic kept for that VCD.
    pub history: usize,
    /// `check` also steps the idle cycles the system skips, on both engines, and proves
    /// they change no output (slow; tests).
    pub every_cycle: bool,
    /// Write every block instance's port traffic here (`--record-ports`).
    pub record_dir: Option<PathBuf>,
    /// `check` also checks the Verilator models' state invariants after every block cycle
    /// (`--hw-invariants`; `verilator_invariants`): their O(n²) pair checks cost more than
    /// the block itself, so a system run asks for them.
    pub invariants: bool,
    /// `check` steps the second engine and compares on a thread of its own (the default;
    /// `system/check.rs`); false compares on the system's thread.
    pub check_thread: bool,
    /// `rusthdl` / `verilator`: the twin predicts the RTL's outputs so the RTL runs on a
    /// thread of its own, and a misprediction repeats the run unpredicted (the default;
    /// `CheckEngine::predicted`). False: the RTL serves on the system's thread.
    pub predict: bool,
    /// Serve this mutant of its block's Verilog instead of the emitted Verilog (tests of
    /// the checks: `rtl_mutants`; the other blocks serve their own Verilog).
    pub mutant: Option<&'static crate::rtl_mutants::RtlMutant>,
}

impl HwOptions {
    pub fn new(mode: HwMode) -> HwOptions {
        HwOptions {
            mode,
            mismatch_dir: PathBuf::from("out/hw-check"),
            history: 1000,
            every_cycle: false,
            record_dir: None,
            invariants: false,
            check_thread: true,
            predict: true,
            mutant: None,
        }
    }
}

/// The [`Hardware`] handle for `opts`: the plain twins for `twin` without recording.
pub fn hardware(opts: HwOptions) -> Hardware {
    if opts.mode == HwMode::Twin && opts.record_dir.is_none() {
        return Hardware::default();
    }
    Hardware(Arc::new(RtlFactory { opts }))
}

/// Builds RTL, checking or recording engines for every block instance.
pub struct RtlFactory {
    opts: HwOptions,
}

/// A single engine of a block, `Send` so a system run can own it.
type SendModel<I, O> = Box<dyn CycleModel<In = I, Out = O> + Send>;

/// The emitted Verilog of `kind` for `hw` under Verilator.
/// With `invariants` the model also checks the block's state invariants every cycle.
fn verilator<I: Ports, O: Ports>(
    kind: BlockKind,
    hw: &HwConfig,
    opts: &HwOptions,
) -> Result<SendModel<I, O>, BlockFault> {
    let model = if let Some(m) = opts.mutant.filter(|m| m.block == kind) {
        m.verilator_model::<I, O>(hw)
    } else if opts.invariants {
        VerilatorModel::<I, O>::checked(kind, hw, true)
    } else {
        VerilatorModel::<I, O>::new(kind, hw)
    };
    model
        .map(|m| Box::new(m) as SendModel<I, O>)
        .map_err(|e| unavailable(kind, e))
}

fn unavailable(block: BlockKind, e: CosimError) -> BlockFault {
    BlockFault::Unavailable {
        block: block.module_name(),
        reason: e.to_string(),
    }
}

impl RtlFactory {
    /// Wrap `single` / the checking pair and the optional recorder around one instance.
    fn assemble<I: Ports, O: Ports>(
        &self,
        kind: BlockKind,
        unit: &str,
        hw: &HwConfig,
        twin: SendModel<I, O>,
        rtl: impl FnOnce() -> Result<(SendModel<I, O>, &'static str), BlockFault>,
    ) -> Result<BoxedSystemEngine<I, O>, BlockFault> {
        let engine: BoxedSystemEngine<I, O> = match self.opts.mode {
            HwMode::Twin => Box::new(Plain::new(twin, "twin")),
            HwMode::RustHdl | HwMode::Verilator if self.opts.predict => {
                let rtl = rtl()?;
                Box::new(CheckEngine::predicted(
                    kind,
                    unit,
                    twin,
                    (rtl.1, rtl.0),
                    hw,
                    &self.opts,
                ))
            }
            HwMode::RustHdl | HwMode::Verilator => {
                let (model, name) = rtl()?;
                Box::new(Plain::new(model, name))
            }
            HwMode::Check => {
                let (model, name) = rtl()?;
                Box::new(CheckEngine::new(
                    kind,
                    unit,
                    ("twin", twin),
                    (name, model),
                    hw,
                    &self.opts,
                ))
            }
        };
        match &self.opts.record_dir {
            None => Ok(engine),
            Some(dir) => {
                let file = dir.join(format!(
                    "{}-{}.vcd",
                    kind.short_name(),
                    unit.replace(' ', "")
                ));
                let rec = RecordingEngine::new(engine, &file).map_err(|e| unavailable(kind, e))?;
                Ok(Box::new(rec))
            }
        }
    }

    fn rtl_mode(&self) -> HwMode {
        match self.opts.mode {
            HwMode::Check => HwMode::Verilator,
            m => m,
        }
    }
}

impl BlockFactory for RtlFactory {
    fn name(&self) -> &str {
        self.opts.mode.name()
    }

    fn unpredicted(&self) -> Option<Arc<dyn BlockFactory>> {
        let predicted = matches!(self.opts.mode, HwMode::RustHdl | HwMode::Verilator);
        (predicted && self.opts.predict).then(|| {
            let mut opts = self.opts.clone();
            opts.predict = false;
            Arc::new(RtlFactory { opts }) as Arc<dyn BlockFactory>
        })
    }

    fn remote_tracker(
        &self,
        cfg: &RtConfig,
        unit: &str,
    ) -> Result<BoxedSystemEngine<RtIn, RtOut>, BlockFault> {
        let kind = BlockKind::RemoteTracker;
        // The instance's own parameters: they elaborate its Verilog and its reference.
        let hw = HwConfig {
            remote_tracker: cfg.clone(),
            ..HwConfig::default()
        };
        let twin = Box::new(remote_tracker::RemoteTracker::new(cfg));
        self.assemble(kind, unit, &hw, twin, || match self.rtl_mode() {
            HwMode::RustHdl => Ok((
                Box::new(mcmvm_rtl::remote_tracker::RemoteTrackerHdlSim::new(cfg))
                    as SendModel<_, _>,
                "rusthdl",
            )),
            _ => Ok((verilator(kind, &hw, &self.opts)?, "verilator")),
        })
    }

    fn tlb_coalescer(
        &self,
        cfg: &CoalescerConfig,
        unit: &str,
    ) -> Result<BoxedSystemEngine<CoalIn, CoalOut>, BlockFault> {
        let kind = BlockKind::TlbCoalescer;
        // The instance's own parameters: they elaborate its Verilog and its reference.
        let hw = HwConfig {
            tlb_coalescer: cfg.clone(),
            ..HwConfig::default()
        };
        let twin = Box::new(tlb_coalescer::TlbCoalescer::new(cfg));
        self.assemble(kind, unit, &hw, twin, || match self.rtl_mode() {
            HwMode::RustHdl => Ok((
                Box::new(mcmvm_rtl::tlb_coalescer::TlbCoalescerHdlSim::new(cfg)) as SendModel<_, _>,
                "rusthdl",
            )),
            _ => Ok((verilator(kind, &hw, &self.opts)?, "verilator")),
        })
    }

    fn access_time_tracker(
        &self,
        cfg: &AttConfig,
        unit: &str,
    ) -> Result<BoxedSystemEngine<AttIn, AttOut>, BlockFault> {
        let kind = BlockKind::AccessTimeTracker;
        // The instance's own parameters: they elaborate its Verilog and its reference.
        let hw = HwConfig {
            access_time_tracker: cfg.clone(),
            ..HwConfig::default()
        };
        let twin = Box::new(access_time_tracker::AccessTimeTracker::new(cfg));
        self.assemble(kind, unit, &hw, twin, || match self.rtl_mode() {
            HwMode::RustHdl => {
                let sim: SendModel<_, _> =
                    Box::new(mcmvm_rtl::access_time_tracker::AccessTimeTrackerHdlSim::new(cfg));
                Ok((sim, "rusthdl"))
            }
            _ => Ok((verilator(kind, &hw, &self.opts)?, "verilator")),
        })
    }
}

#[cfg(test)]
mod tests;
