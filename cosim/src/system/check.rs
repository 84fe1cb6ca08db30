//! `--hw check`: two engines of one block instance on identical inputs inside a system run,
//! every output port compared every cycle. The first difference is a
//! [`BlockFault::Mismatch`] naming the system cycle, block, instance, signal and both
//! values, with a VCD of the instance's last `history` cycles of port traffic (inputs and
//! both engines' outputs) written next to it. The block's independent reference monitor
//! (`mcmvm-refcheck`, written from the block's README alone) watches the same cycles and
//! stops the run when the outputs break a documented rule, even if both engines agree.

use super::{HwOptions, SendModel};
use crate::wave::WaveRecorder;
use mcmvm_models::config::HwConfig;
use mcmvm_models::protocol::{BlockKind, Ports};
use mcmvm_protocol::system::{BlockFault, EngineCycles, EngineReport, SystemEngine};
use mcmvm_refcheck::Monitor;
use std::collections::VecDeque;
use std::path::PathBuf;

/// One cycle of port traffic kept for the mismatch VCD.
struct Traffic<I, O> {
    block_cycle: u64,
    input: I,
    outputs: [O; 2],
}

/// Two engines of one block, compared every cycle.
pub struct CheckEngine<I: Ports, O: Ports> {
    kind: BlockKind,
    unit: String,
    names: [&'static str; 2],
    engines: [SendModel<I, O>; 2],
    history: VecDeque<Traffic<I, O>>,
    keep: usize,
    wave_path: PathBuf,
    every_cycle: bool,
    /// Block cycles stepped on both engines (skipped idle cycles stepped in `every_cycle`
    /// mode included).
    cycles: u64,
    compared: u64,
    reference: Option<Box<dyn Monitor<I, O>>>,
    reference_checked: u64,
}

impl<I: Ports, O: Ports> CheckEngine<I, O> {
    pub fn new(
        kind: BlockKind,
        unit: &str,
        a: (&'static str, SendModel<I, O>),
        b: (&'static str, SendModel<I, O>),
        hw: &HwConfig,
        opts: &HwOptions,
    ) -> CheckEngine<I, O> {
        let file = format!(
            "{}-{}-mismatch.vcd",
            kind.short_name(),
            unit.replace(' ', "")
        );
        CheckEngine {
            kind,
            unit: unit.to_string(),
            names: [a.0, b.0],
            engines: [a.1, b.1],
            history: VecDeque::with_capacity(opts.history.min(1 << 16)),
            keep: opts.history.max(1),
            wave_path: opts.mismatch_dir.join(file),
            every_cycle: opts.every_cycle,
            cycles: 0,
            compared: 0,
            reference: mcmvm_refcheck::monitor_for::<I, O>(kind, hw),
            reference_checked: 0,
        }
    }

    /// Step both engines one cycle and compare; `system_cycle` names it in a report.
    fn both(&mut self, system_cycle: u64, input: &I) -> Result<O, BlockFault> {
        let oa = self.engines[0].step(input);
        let ob = self.engines[1].step(input);
        let block_cycle = self.cycles;
        self.cycles += 1;
        if self.history.len() == self.keep {
            self.history.pop_front();
        }
        self.history.push_back(Traffic {
            block_cycle,
            input: *input,
            outputs: [oa, ob],
        });
        self.compared += 1;
        if let Some((engine, invariant)) = self
            .names
            .iter()
            .zip(&self.engines)
            .find_map(|(name, e)| e.state_violation().map(|inv| (name.to_string(), inv)))
        {
            return Err(BlockFault::Invariant {
                block: self.kind.module_name(),
                unit: self.unit.clone(),
                system_cycle,
                block_cycle,
                engine,
                invariant,
            });
        }
        if oa != ob {
            let i = (0..O::PORTS.len())
                .find(|&i| oa.get(i) != ob.get(i))
                .unwrap_or(0);
            let vcd = self.write_history();
            return Err(BlockFault::Mismatch {
                block: self.kind.module_name(),
                unit: self.unit.clone(),
                system_cycle,
                block_cycle,
                signal: O::PORTS[i].name,
                values: vec![
                    (self.names[0].to_string(), oa.get(i)),
                    (self.names[1].to_string(), ob.get(i)),
                ],
                vcd,
            });
        }
        if let Some(m) = self.reference.as_mut() {
            self.reference_checked += 1;
            if let Err(v) = m.observe(block_cycle, input, &oa) {
                return Err(BlockFault::Reference {
                    block: self.kind.module_name(),
                    unit: self.unit.clone(),
                    system_cycle,
                    message: format!(
                        "`{}` = {:#x} where the README's rule gives {:#x} ({}); both engines agree",
                        v.signal, v.got, v.expected, v.rule
                    ),
                });
            }
        }
        Ok(oa)
    }

    /// The kept traffic as a VCD (time = block cycle); None if it cannot be written (the
    /// mismatch is reported either way).
    fn write_history(&self) -> Option<PathBuf> {
        let mut w = WaveRecorder::<I, O>::create(&self.wave_path, &self.names).ok()?;
        let mut end = 0;
        for t in &self.history {
            w.record(t.block_cycle, &t.input, &t.outputs).ok()?;
            end = t.block_cycle + 1;
        }
        w.finish(end).ok()
    }
}

impl<I: Ports, O: Ports> SystemEngine<I, O> for CheckEngine<I, O> {
    fn step(&mut self, system_cycle: u64, input: &I) -> Result<O, BlockFault> {
        self.both(system_cycle, input)
    }

    /// In `every_cycle` mode the skipped cycles are stepped on both engines: their outputs
    /// must agree and equal the idle outputs before the skip (the claim that lets the
    /// system skip them).
    fn skip_idle(&mut self, from: u64, cycles: u64) -> Result<(), BlockFault> {
        if !self.every_cycle {
            return Ok(());
        }
        let before = self.history.back().map(|t| t.outputs[0]);
        let idle = I::default();
        for k in 0..cycles {
            let out = self.both(from + k, &idle)?;
            if let Some(b) = before.filter(|b| *b != out) {
                let i = (0..O::PORTS.len())
                    .find(|&i| b.get(i) != out.get(i))
                    .unwrap_or(0);
                return Err(BlockFault::Mismatch {
                    block: self.kind.module_name(),
                    unit: self.unit.clone(),
                    system_cycle: from + k,
                    block_cycle: self.cycles - 1,
                    signal: O::PORTS[i].name,
                    values: vec![
                        ("before the skip".to_string(), b.get(i)),
                        ("skipped cycle".to_string(), out.get(i)),
                    ],
                    vcd: self.write_history(),
                });
            }
        }
        Ok(())
    }

    fn report(&self) -> EngineReport {
        EngineReport {
            engine: format!("check({},{})", self.names[0], self.names[1]),
            stepped: self
                .names
                .iter()
                .map(|n| EngineCycles {
                    engine: n.to_string(),
                    cycles: self.cycles,
                })
                .collect(),
            compared: self.compared,
            reference_checked: self.reference_checked,
        }
    }
}
