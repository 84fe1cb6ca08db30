//! `--hw check`: two engines of one block instance on identical inputs inside a system run,
//! every output port compared every cycle. The first difference is a
//! [`BlockFault::Mismatch`] naming the system cycle, block, instance, signal and both
//! values, with a VCD of the instance's last `history` cycles of port traffic (inputs and
//! both engines' outputs) written next to it. The block's independent reference monitor
//! (`mcmvm-refcheck`, written from the block's README alone) watches the same cycles and
//! stops the run when the outputs break a documented rule, even if both engines agree.
//!
//! ## Two threads
//! The first engine (the twin) serves the system; the second (the Verilator model) only
//! has to agree with it. So by default the second engine, the comparison and the mismatch
//! history run on a thread of their own ([`super::check_thread`]), fed in batches of
//! cycles: the run pays for the slower engine once instead of for both. `every_cycle` mode
//! and `HwOptions::check_thread = false` compare on the system's thread.
//!
//! ## Which fault
//! A fault is parked on the run's board (`board.rs`), never returned at once: the run
//! reports the earliest fault over all its checked instances, by system cycle and then
//! instance, whichever thread finds its fault first — the same fault on every run and on
//! either thread. The system may run on past it (serving the first engine's outputs) until
//! every instance is checked that far; the faulty instance then returns it from a `step`
//! or from [`SystemEngine::sync`].

use super::board::{Seat, NO_FAULT};
use super::check_thread::Worker;
use super::{HwOptions, SendModel};
use crate::wave::WaveRecorder;
use mcmvm_models::config::HwConfig;
use mcmvm_models::protocol::{BlockKind, Ports};
use mcmvm_protocol::system::{BlockFault, EngineCycles, EngineReport, SystemEngine};
use mcmvm_refcheck::Monitor;
use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::Arc;

/// One cycle of port traffic kept for the mismatch VCD.
struct Traffic<I, O> {
    block_cycle: u64,
    input: I,
    outputs: [O; 2],
}

/// The comparison of two engines' outputs, cycle by cycle, with the traffic history a
/// mismatch VCD shows.
pub(super) struct Compare<I: Ports, O: Ports> {
    kind: BlockKind,
    unit: String,
    names: [&'static str; 2],
    history: VecDeque<Traffic<I, O>>,
    keep: usize,
    wave_path: PathBuf,
    /// Cycles compared (every cycle compared is one block cycle of both engines).
    pub(super) compared: u64,
    /// The first engine predicts the second's outputs (`--hw verilator`): a difference is
    /// a [`BlockFault::Mispredicted`], and no VCD is written.
    predicting: bool,
}

impl<I: Ports, O: Ports> Compare<I, O> {
    /// One block cycle's outputs of both engines; `violation` is the first engine's (index,
    /// invariant) whose internal state the cycle broke.
    pub(super) fn cycle(
        &mut self,
        system_cycle: u64,
        input: &I,
        outputs: [O; 2],
        violation: Option<(usize, String)>,
    ) -> Result<(), BlockFault> {
        let block_cycle = self.compared;
        self.compared += 1;
        // A misprediction repeats the run: there is no history to show.
        if !self.predicting {
            if self.history.len() == self.keep {
                self.history.pop_front();
            }
            self.history.push_back(Traffic {
                block_cycle,
                input: *input,
                outputs,
            });
        }
        if let Some((engine, invariant)) = violation {
            return Err(BlockFault::Invariant {
                block: self.kind.module_name(),
                unit: self.unit.clone(),
                system_cycle,
                block_cycle,
                engine: self.names[engine].to_string(),
                invariant,
            });
        }
        let [oa, ob] = outputs;
        if oa != ob {
            let i = (0..O::PORTS.len())
                .find(|&i| oa.get(i) != ob.get(i))
                .unwrap_or(0);
            if self.predicting {
                return Err(BlockFault::Mispredicted {
                    block: self.kind.module_name(),
                    unit: self.unit.clone(),
                    system_cycle,
                    block_cycle,
                    signal: O::PORTS[i].name,
                    engine: self.names[1].to_string(),
                    twin: oa.get(i),
                    rtl: ob.get(i),
                });
            }
            return Err(self.mismatch(
                system_cycle,
                block_cycle,
                O::PORTS[i].name,
                [(self.names[0], oa.get(i)), (self.names[1], ob.get(i))],
            ));
        }
        Ok(())
    }

    fn mismatch(
        &self,
        system_cycle: u64,
        block_cycle: u64,
        signal: &'static str,
        values: [(&str, u64); 2],
    ) -> BlockFault {
        BlockFault::Mismatch {
            block: self.kind.module_name(),
            unit: self.unit.clone(),
            system_cycle,
            block_cycle,
            signal,
            values: values.iter().map(|(e, v)| (e.to_string(), *v)).collect(),
            vcd: self.write_history(),
        }
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

/// Where the second engine runs.
enum Second<I: Ports, O: Ports> {
    /// On the system's thread, compared at once.
    Here {
        engine: SendModel<I, O>,
        compare: Compare<I, O>,
    },
    /// On its own thread.
    Thread(Worker<I, O>),
}

/// Two engines of one block, compared every cycle.
pub struct CheckEngine<I: Ports, O: Ports> {
    kind: BlockKind,
    unit: String,
    names: [&'static str; 2],
    first: SendModel<I, O>,
    second: Second<I, O>,
    every_cycle: bool,
    /// Block cycles stepped on both engines (skipped idle cycles stepped in `every_cycle`
    /// mode included).
    cycles: u64,
    reference: Option<Box<dyn Monitor<I, O>>>,
    reference_checked: u64,
    /// The last outputs served (the idle outputs before a skip).
    last: Option<O>,
    predicting: bool,
    /// This instance on its run's board (`board.rs`); None when predicting.
    seat: Option<Arc<Seat>>,
    /// Every cycle up to this system cycle is known checked by the board.
    confirmed: u64,
    /// A fault found on the system's thread is parked: no more comparing here.
    parked: bool,
}

impl<I: Ports + Send + 'static, O: Ports + Send + 'static> CheckEngine<I, O> {
    pub fn new(
        kind: BlockKind,
        unit: &str,
        a: (&'static str, SendModel<I, O>),
        b: (&'static str, SendModel<I, O>),
        hw: &HwConfig,
        opts: &HwOptions,
    ) -> CheckEngine<I, O> {
        CheckEngine::build(kind, unit, a, b, hw, opts, false)
    }

    /// `rtl` serves and `twin` predicts its outputs, so that the RTL runs on a thread of its
    /// own: the system goes on with the twin's outputs while the RTL confirms them, cycle
    /// by cycle. A difference is a [`BlockFault::Mispredicted`], after which the run is
    /// repeated with the RTL serving on the system's thread (`serve_predicted`). So the
    /// run's results are always the RTL's.
    pub fn predicted(
        kind: BlockKind,
        unit: &str,
        twin: SendModel<I, O>,
        rtl: (&'static str, SendModel<I, O>),
        hw: &HwConfig,
        opts: &HwOptions,
    ) -> CheckEngine<I, O> {
        CheckEngine::build(kind, unit, ("twin", twin), rtl, hw, opts, true)
    }

    fn build(
        kind: BlockKind,
        unit: &str,
        a: (&'static str, SendModel<I, O>),
        b: (&'static str, SendModel<I, O>),
        hw: &HwConfig,
        opts: &HwOptions,
        predicting: bool,
    ) -> CheckEngine<I, O> {
        let file = format!(
            "{}-{}-mismatch.vcd",
            kind.short_name(),
            unit.replace(' ', "")
        );
        let names = [a.0, b.0];
        let compare = Compare {
            kind,
            unit: unit.to_string(),
            names,
            history: VecDeque::with_capacity(opts.history.min(1 << 16)),
            keep: opts.history.max(1),
            wave_path: opts.mismatch_dir.join(file),
            compared: 0,
            predicting,
        };
        let seat = (!predicting).then(Seat::join);
        let second = if predicting || (opts.check_thread && !opts.every_cycle) {
            Second::Thread(Worker::spawn(b.1, compare, seat.clone()))
        } else {
            Second::Here {
                engine: b.1,
                compare,
            }
        };
        CheckEngine {
            kind,
            unit: unit.to_string(),
            names,
            first: a.1,
            second,
            every_cycle: opts.every_cycle && !predicting,
            cycles: 0,
            // The README references watch `--hw check`; a served run is not a check.
            reference: if predicting {
                None
            } else {
                mcmvm_refcheck::monitor_for::<I, O>(kind, hw)
            },
            reference_checked: 0,
            last: None,
            predicting,
            seat,
            confirmed: 0,
            parked: false,
        }
    }
}

impl<I: Ports, O: Ports> CheckEngine<I, O> {
    /// Step both engines one cycle and compare; `system_cycle` names it in a report.
    fn both(&mut self, system_cycle: u64, input: &I) -> Result<O, BlockFault> {
        let oa = self.first.step(input);
        let block_cycle = self.cycles;
        self.cycles += 1;
        let va = self.first.state_violation();
        match &mut self.second {
            Second::Here { engine, compare } => {
                let ob = engine.step(input);
                if !self.parked {
                    let v = va
                        .map(|v| (0, v))
                        .or_else(|| engine.state_violation().map(|v| (1, v)));
                    if let Err(f) = compare.cycle(system_cycle, input, [oa, ob], v) {
                        self.fail(system_cycle, f)?;
                    }
                }
            }
            Second::Thread(w) => w.push(system_cycle, input, oa, va)?,
        }
        self.last = Some(oa);
        if let Some(m) = self.reference.as_mut().filter(|_| !self.parked) {
            self.reference_checked += 1;
            if let Err(v) = m.observe(block_cycle, input, &oa) {
                // A fault the other thread found up to this cycle comes first (the order of
                // the single-threaded check: invariants, then mismatches, then the README).
                if let Second::Thread(w) = &mut self.second {
                    w.sync()?;
                }
                let f = BlockFault::Reference {
                    block: self.kind.module_name(),
                    unit: self.unit.clone(),
                    system_cycle,
                    message: format!(
                        "`{}` = {:#x} where the README's rule gives {:#x} ({}); both engines agree",
                        v.signal, v.got, v.expected, v.rule
                    ),
                };
                self.fail(system_cycle, f)?;
            }
        }
        Ok(oa)
    }

    /// A fault of this instance at `system_cycle`: parked on the board, or (predicting)
    /// returned.
    fn fail(&mut self, system_cycle: u64, fault: BlockFault) -> Result<(), BlockFault> {
        match &self.seat {
            Some(seat) => {
                seat.park(system_cycle, fault);
                self.parked = true;
                Ok(())
            }
            None => Err(fault),
        }
    }

    /// While a fault is parked anywhere in the run: past its cycle, make this instance's
    /// cycles up to `now` checked (`board.rs`, step 2), and return the run's fault if it is
    /// this instance's. A passing run reads one word here.
    #[inline]
    fn arbitrate(&mut self, now: u64) -> Result<(), BlockFault> {
        let Some(seat) = &self.seat else {
            return Ok(());
        };
        let horizon = seat.horizon();
        if horizon == NO_FAULT {
            return Ok(());
        }
        let seat = seat.clone();
        if now >= horizon && self.confirmed < horizon {
            if let Second::Thread(w) = &mut self.second {
                w.sync()?;
            }
            seat.checked(now);
            self.confirmed = now;
        }
        seat.verdict(false)
    }
}

impl<I: Ports, O: Ports> SystemEngine<I, O> for CheckEngine<I, O> {
    fn step(&mut self, system_cycle: u64, input: &I) -> Result<O, BlockFault> {
        let out = self.both(system_cycle, input)?;
        self.arbitrate(system_cycle)?;
        Ok(out)
    }

    /// In `every_cycle` mode the skipped cycles are stepped on both engines: their outputs
    /// must agree and equal the idle outputs before the skip (the claim that lets the
    /// system skip them).
    fn skip_idle(&mut self, from: u64, cycles: u64) -> Result<(), BlockFault> {
        if !self.every_cycle {
            return Ok(());
        }
        let before = self.last;
        let idle = I::default();
        for k in 0..cycles {
            let out = self.both(from + k, &idle)?;
            if self.parked {
                break;
            }
            if let Some(b) = before.filter(|b| *b != out) {
                let i = (0..O::PORTS.len())
                    .find(|&i| b.get(i) != out.get(i))
                    .unwrap_or(0);
                let values = [("before the skip", b.get(i)), ("skipped cycle", out.get(i))];
                let (cycle, signal) = (self.cycles - 1, O::PORTS[i].name);
                let f = match &self.second {
                    Second::Here { compare, .. } => {
                        compare.mismatch(from + k, cycle, signal, values)
                    }
                    // `every_cycle` compares on the system's thread; no history elsewhere.
                    Second::Thread(_) => BlockFault::Mismatch {
                        block: self.kind.module_name(),
                        unit: self.unit.clone(),
                        system_cycle: from + k,
                        block_cycle: cycle,
                        signal,
                        values: values.iter().map(|(e, v)| (e.to_string(), *v)).collect(),
                        vcd: None,
                    },
                };
                self.fail(from + k, f)?;
                break;
            }
        }
        self.arbitrate((from + cycles).saturating_sub(1))
    }

    /// Every cycle checked; this instance is decided, and returns the run's fault if it is
    /// its own (`board.rs`, step 4).
    fn sync(&mut self) -> Result<(), BlockFault> {
        if let Second::Thread(w) = &mut self.second {
            w.sync()?;
        }
        match &self.seat {
            Some(seat) => {
                seat.synced();
                seat.verdict(true)
            }
            None => Ok(()),
        }
    }

    fn report(&self) -> EngineReport {
        let compared = match &self.second {
            Second::Here { compare, .. } => compare.compared,
            Second::Thread(w) => w.compared(),
        };
        let engine = if self.predicting {
            format!("{} (twin-predicted)", self.names[1])
        } else {
            format!("check({},{})", self.names[0], self.names[1])
        };
        EngineReport {
            engine,
            stepped: self
                .names
                .iter()
                .map(|n| EngineCycles {
                    engine: n.to_string(),
                    cycles: self.cycles,
                })
                .collect(),
            compared,
            reference_checked: self.reference_checked,
        }
    }
}
