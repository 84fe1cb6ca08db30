//! The lockstep harness: every engine is stepped on the same input each cycle, the
//! scoreboard compares every output, the wave recorder streams everything to VCD. The first
//! mismatch stops the run; the VCD up to and including that cycle is flushed and kept.
//!
//! Optionally the block's reference monitor (`mcmvm-refcheck`, written from the block's
//! README alone) checks the first engine's outputs every cycle as well: engines that agree
//! with each other can still share a misreading of the spec, the monitor cannot share it.
//! A violation ends the run like a mismatch. The monitor's functional coverage (named bins
//! of the README's behaviours the run exercised) comes back in the report.

use crate::engine::{BoxedEngine, CosimBlock, EngineKind};
use crate::error::CosimError;
use crate::scoreboard::{Mismatch, Scoreboard};
use crate::wave::WaveRecorder;
use mcmvm_models::config::HwConfig;
use mcmvm_models::protocol::Ports;
use mcmvm_refcheck::{Coverage, Monitor, Violation};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// What to run.
#[derive(Debug, Clone)]
pub struct LockstepOptions {
    /// Engines, compared in this order (the first is listed first in a mismatch).
    pub engines: Vec<EngineKind>,
    /// Cycles to run at most (a finite stimulus may end earlier); at least 1.
    pub cycles: u64,
    /// Write the waves here.
    pub vcd: Option<PathBuf>,
}

/// Time spent inside one engine's `step`.
#[derive(Debug, Clone, PartialEq)]
pub struct EngineTime {
    /// The engine's name.
    pub engine: String,
    /// Total time inside `step`.
    pub time: Duration,
}

/// The `signal` of a [`Mismatch`] that reports a broken state invariant.
pub const STATE_INVARIANT: &str = "state invariant";

/// An engine's internal state broke one of the block's invariants after a cycle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateViolation {
    /// The engine (its name in the lockstep).
    pub engine: String,
    /// The cycle after whose edge the state was wrong.
    pub cycle: u64,
    /// The invariant, as its check names it.
    pub invariant: String,
}

impl StateViolation {
    /// The lockstep's report of it: the [`STATE_INVARIANT`] pseudo-signal, the engine at 1.
    fn as_mismatch(&self) -> Mismatch {
        Mismatch {
            cycle: self.cycle,
            signal: STATE_INVARIANT,
            values: vec![(self.engine.clone(), 1)],
        }
    }
}

impl std::fmt::Display for StateViolation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "cycle {}: {}'s internal state breaks `{}`",
            self.cycle, self.engine, self.invariant
        )
    }
}

/// The outcome of a lockstep run.
#[derive(Debug, Clone)]
pub struct LockstepReport {
    /// Cycles run (including the mismatching one, if any).
    pub cycles: u64,
    /// The first divergence, if any. A reference-monitor violation is reported here too
    /// (when the engines agree in that cycle), as a mismatch between the first engine and
    /// an engine named `reference` holding the expected value, so every caller that checks
    /// for mismatches fails on it.
    pub mismatch: Option<Mismatch>,
    /// The reference monitor's violation, with the README rule, if one was found.
    pub violation: Option<Violation>,
    /// An engine's broken state invariant (a checked Verilator model's own registers), if
    /// one was found; also reported as the `mismatch` on the signal `state invariant`.
    pub invariant: Option<StateViolation>,
    /// The reference monitor's coverage bins over the cycles it observed (up to and
    /// including a mismatching one); `None` when no monitor ran.
    pub coverage: Option<Coverage>,
    /// Wall time of the whole loop (engines, scoreboard, VCD).
    pub wall: Duration,
    /// Per engine, time spent inside its `step`.
    pub engine_time: Vec<EngineTime>,
    /// The VCD written, if any.
    pub vcd: Option<PathBuf>,
}

impl LockstepReport {
    /// Lockstep rate: cycles per second of wall time.
    pub fn cycles_per_second(&self) -> f64 {
        rate(self.cycles, self.wall)
    }

    /// Each engine's own rate: cycles per second of the time spent inside it.
    pub fn engine_rates(&self) -> Vec<(&str, f64)> {
        self.engine_time
            .iter()
            .map(|e| (e.engine.as_str(), rate(self.cycles, e.time)))
            .collect()
    }
}

fn rate(cycles: u64, time: Duration) -> f64 {
    let secs = time.as_secs_f64();
    if secs > 0.0 {
        cycles as f64 / secs
    } else {
        f64::INFINITY
    }
}

/// Build `opts.engines` for block `B` with parameters `cfg` and run them in lockstep.
pub fn lockstep<B: CosimBlock>(
    cfg: &HwConfig,
    opts: &LockstepOptions,
    stimulus: impl Iterator<Item = B::In>,
) -> Result<LockstepReport, CosimError> {
    lockstep_with_reference::<B>(cfg, opts, false, stimulus)
}

/// [`lockstep`], and with `reference` the block's reference monitor checks the first
/// engine's outputs every cycle. (A separate argument rather than a `LockstepOptions`
/// field: the options are built with struct literals across the workspace.)
pub fn lockstep_with_reference<B: CosimBlock>(
    cfg: &HwConfig,
    opts: &LockstepOptions,
    reference: bool,
    stimulus: impl Iterator<Item = B::In>,
) -> Result<LockstepReport, CosimError> {
    if opts.engines.is_empty() {
        return Err(CosimError::NoEngines);
    }
    let mut engines = Vec::with_capacity(opts.engines.len());
    for &kind in &opts.engines {
        if engines.iter().any(|(name, _)| name == kind.name()) {
            return Err(CosimError::DuplicateEngine(kind.name().to_string()));
        }
        engines.push((kind.name().to_string(), B::engine(kind, cfg)?));
    }
    let monitor = if reference {
        let monitor =
            mcmvm_refcheck::monitor_for::<B::In, B::Out>(B::KIND, cfg).ok_or_else(|| {
                CosimError::EngineUnavailable {
                    engine: "reference",
                    module: B::KIND.module_name(),
                    reason: "the block's port sets are not the ones its reference monitor checks"
                        .to_string(),
                }
            })?;
        Some(monitor)
    } else {
        None
    };
    run_lockstep_monitored(engines, opts.cycles, opts.vcd.as_deref(), monitor, stimulus)
}

/// Run named engines in lockstep for at most `cycles` cycles of `stimulus`. Engines are
/// any `CycleModel`, so a test can put a deliberately wrong twin beside the real ones.
pub fn run_lockstep<I: Ports, O: Ports>(
    engines: Vec<(String, BoxedEngine<I, O>)>,
    cycles: u64,
    vcd: Option<&Path>,
    stimulus: impl Iterator<Item = I>,
) -> Result<LockstepReport, CosimError> {
    run_lockstep_monitored(engines, cycles, vcd, None, stimulus)
}

/// [`run_lockstep`] with an optional reference `monitor` observing the first engine.
pub fn run_lockstep_monitored<I: Ports, O: Ports>(
    mut engines: Vec<(String, BoxedEngine<I, O>)>,
    cycles: u64,
    vcd: Option<&Path>,
    mut monitor: Option<Box<dyn Monitor<I, O>>>,
    stimulus: impl Iterator<Item = I>,
) -> Result<LockstepReport, CosimError> {
    if engines.is_empty() {
        return Err(CosimError::NoEngines);
    }
    if cycles == 0 {
        return Err(CosimError::ZeroCycles);
    }
    let names: Vec<String> = engines.iter().map(|(n, _)| n.clone()).collect();
    let mut wave = open_wave::<I, O>(vcd, &names)?;
    let mut scoreboard = Scoreboard::new(names.clone());
    let (mut outputs, mut inside) = (
        vec![O::default(); engines.len()],
        vec![Duration::ZERO; engines.len()],
    );
    let (mut mismatch, mut violation, mut invariant) = (None, None, None);
    let mut ran = 0u64;
    let start = Instant::now();
    for (cycle, input) in (0..cycles).zip(stimulus) {
        step_all(&mut engines, &input, &mut outputs, &mut inside);
        ran = cycle + 1;
        if let Some(w) = wave.as_mut() {
            w.record(cycle, &input, &outputs)?;
        }
        // The engines' disagreement is the most direct report, then a broken state
        // invariant, then the reference monitor's violation.
        let mut found = scoreboard.check(cycle, &outputs);
        if let Some(v) = first_state_violation(&engines, cycle) {
            found.get_or_insert_with(|| v.as_mismatch());
            invariant = Some(v);
        }
        if let Some(m) = monitor.as_mut() {
            if let Err(v) = m.observe(cycle, &input, &outputs[0]) {
                found.get_or_insert_with(|| reference_mismatch(cycle, &names[0], &v));
                violation = Some(v);
            }
        }
        if found.is_some() {
            mismatch = found;
            break;
        }
    }
    let vcd = wave.map(|w| w.finish(ran)).transpose()?;
    Ok(LockstepReport {
        cycles: ran,
        mismatch,
        violation,
        invariant,
        coverage: monitor.map(|m| m.coverage().clone()),
        wall: start.elapsed(),
        engine_time: engine_times(names, inside),
        vcd,
    })
}

/// The lockstep's report of a reference violation on engine `first`'s outputs.
fn reference_mismatch(cycle: u64, first: &str, v: &Violation) -> Mismatch {
    Mismatch {
        cycle,
        signal: v.signal,
        values: vec![(first.to_string(), v.got), ("reference".into(), v.expected)],
    }
}

/// Each engine's time inside its `step`, by name.
fn engine_times(names: Vec<String>, inside: Vec<Duration>) -> Vec<EngineTime> {
    names
        .into_iter()
        .zip(inside)
        .map(|(engine, time)| EngineTime { engine, time })
        .collect()
}

/// The wave recorder for `vcd`, one output scope per engine, if a path was given.
fn open_wave<I: Ports, O: Ports>(
    vcd: Option<&Path>,
    names: &[String],
) -> Result<Option<WaveRecorder<I, O>>, CosimError> {
    let name_refs: Vec<&str> = names.iter().map(String::as_str).collect();
    vcd.map(|path| WaveRecorder::<I, O>::create(path, &name_refs))
        .transpose()
}

/// Step every engine on `input` into `outputs`, adding each one's time to `inside`.
fn step_all<I: Ports, O: Ports>(
    engines: &mut [(String, BoxedEngine<I, O>)],
    input: &I,
    outputs: &mut [O],
    inside: &mut [Duration],
) {
    for ((_, engine), (out, spent)) in engines
        .iter_mut()
        .zip(outputs.iter_mut().zip(inside.iter_mut()))
    {
        let t0 = Instant::now();
        *out = engine.step(input);
        *spent += t0.elapsed();
    }
}

/// The first engine whose state broke an invariant after `cycle`'s edge.
fn first_state_violation<I: Ports, O: Ports>(
    engines: &[(String, BoxedEngine<I, O>)],
    cycle: u64,
) -> Option<StateViolation> {
    engines.iter().find_map(|(name, e)| {
        e.state_violation().map(|inv| StateViolation {
            engine: name.clone(),
            cycle,
            invariant: inv,
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{Att, Coalescer, Rt};
    use mcmvm_models::protocol::{AttIn, CoalIn, CycleModel, RtIn, RtOut};
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// The twin with its drain answers one walk short, as a wrong engine would be.
    struct ShortDrain(BoxedEngine<RtIn, RtOut>);

    impl CycleModel for ShortDrain {
        type In = RtIn;
        type Out = RtOut;
        fn step(&mut self, input: &RtIn) -> RtOut {
            let mut out = self.0.step(input);
            out.drain_access = out.drain_access.saturating_sub(1);
            out
        }
    }

    fn traffic() -> impl Iterator<Item = RtIn> {
        let mut s = vec![RtIn::reset()];
        for k in 0..200u8 {
            s.push(RtIn::walk(k % 7, k % 3 == 0));
            if k % 11 == 0 {
                s.push(RtIn::drain(k % 7));
            }
        }
        s.into_iter()
    }

    #[test]
    fn the_reference_monitor_passes_the_twin_and_reports_a_wrong_engine_as_a_mismatch() {
        let cfg = HwConfig::default();
        let opts = LockstepOptions {
            engines: vec![EngineKind::Twin],
            cycles: 1_000,
            vcd: None,
        };
        let report = lockstep_with_reference::<Rt>(&cfg, &opts, true, traffic()).expect("runs");
        let coverage = report.coverage.expect("the monitor's coverage is reported");
        assert!(
            coverage.count("walk_hit_remote").unwrap_or(0) > 0,
            "{coverage}"
        );
        assert_eq!((report.mismatch, report.violation), (None, None));
        let plain = lockstep::<Rt>(&cfg, &opts, traffic()).expect("runs");
        assert!(plain.coverage.is_none(), "no monitor, no coverage");

        let model = Rt::engine(EngineKind::Twin, &cfg).expect("twin");
        let wrong: BoxedEngine<RtIn, RtOut> = Box::new(ShortDrain(model));
        let monitor = mcmvm_refcheck::monitor_for::<RtIn, RtOut>(Rt::KIND, &cfg);
        let report = run_lockstep_monitored(
            vec![("wrong".into(), wrong)],
            1_000,
            None,
            monitor,
            traffic(),
        )
        .expect("runs");
        let m = report
            .mismatch
            .expect("the violation is reported as a mismatch");
        assert_eq!(m.signal, "drain_access");
        assert_eq!(m.values[1].0, "reference");
        let v = report.violation.expect("and with its rule");
        assert_eq!(
            (v.cycle, v.expected, v.got),
            (m.cycle, m.values[1].1, m.values[0].1)
        );
    }

    /// Small local generators (`mcmvm-testbenches` depends on this crate): a reset first
    /// and now and then, otherwise random traffic on few IDs / slots / near-contiguous lines.
    fn random<I>(seed: u64, mut gen: impl FnMut(&mut ChaCha8Rng) -> I) -> impl Iterator<Item = I>
    where
        I: Ports,
    {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        (0u64..).map(move |k| {
            let mut input = gen(&mut rng);
            if k == 0 || rng.gen_ratio(1, 2000) {
                input.set(0, 1); // `reset` is port 0 of every block
            }
            input
        })
    }

    fn rt_input(rng: &mut ChaCha8Rng) -> RtIn {
        let mut i = RtIn::idle();
        if rng.gen_bool(0.7) {
            i = RtIn::walk(rng.gen_range(0..12) * 21, rng.gen());
        }
        if rng.gen_bool(0.1) {
            i = i.with_drain(rng.gen_range(0..12) * 21);
        }
        i
    }

    fn coal_input(rng: &mut ChaCha8Rng) -> CoalIn {
        let first: u64 = rng.gen::<u32>().into();
        let perms = [0b110_0000, 0b010_0000][rng.gen_range(0..2)];
        let mut line: [u64; 16] =
            std::array::from_fn(|i| 1 | perms | (((first + i as u64) & 0xFFFF_FFFF) << 16));
        for _ in 0..rng.gen_range(0..4) {
            line[rng.gen_range(0..16)] ^= 1 << rng.gen_range(0..20);
        }
        let mut i = CoalIn {
            merge_valid: rng.gen_bool(0.6).into(),
            merge_vpn: rng.gen::<u32>().into(),
            lookup_valid: rng.gen_bool(0.6).into(),
            lookup_vpn: rng.gen_range(0x1230..0x1250),
            entry_base_vpn: 0x1234,
            entry_base_ppn: first,
            entry_mask: rng.gen::<u16>().into(),
            ..CoalIn::default()
        };
        i.set_ptes(&line);
        i
    }

    fn att_input(rng: &mut ChaCha8Rng) -> AttIn {
        let slot = rng.gen_range(0..34u64).min(31);
        let start = rng.gen_range(0..8u64) * 16;
        AttIn {
            acc_valid: rng.gen_bool(0.8).into(),
            acc_vpn: rng.gen_range(0..150),
            reg_valid: rng.gen_bool(0.05).into(),
            reg_obj: slot,
            reg_start_vpn: start,
            reg_end_vpn: start + rng.gen_range(0..40),
            rm_valid: rng.gen_bool(0.02).into(),
            rm_obj: rng.gen_range(0..32),
            cease_valid: rng.gen_bool(0.02).into(),
            cease_obj: rng.gen_range(0..32),
            ..AttIn::default()
        }
    }

    fn check_rtl(engines: &[EngineKind], cycles: u64) {
        let mut cfg = HwConfig::default();
        cfg.access_time_tracker.profiling_threshold = 5;
        let opts = LockstepOptions {
            engines: engines.to_vec(),
            cycles,
            vcd: None,
        };
        let reports = [
            lockstep_with_reference::<Rt>(&cfg, &opts, true, random(1, rt_input)),
            lockstep_with_reference::<Coalescer>(&cfg, &opts, true, random(2, coal_input)),
            lockstep_with_reference::<Att>(&cfg, &opts, true, random(3, att_input)),
        ];
        for r in reports {
            let r = r.unwrap_or_else(|e| panic!("lockstep: {e}"));
            assert_eq!(
                (r.cycles, &r.mismatch, &r.violation),
                (cycles, &None, &None)
            );
        }
    }

    #[test]
    fn the_reference_monitor_agrees_with_the_rusthdl_engine() {
        check_rtl(&[EngineKind::Twin, EngineKind::RustHdl], 3_000);
    }

    /// Builds the three Verilator models (minutes of C++): run with `--ignored`.
    #[test]
    #[ignore]
    fn the_reference_monitor_agrees_with_the_verilator_engine() {
        check_rtl(&[EngineKind::Verilator, EngineKind::Twin], 100_000);
    }
}
