//! The lockstep harness: every engine is stepped on the same input each cycle, the
//! scoreboard compares every output, the wave recorder streams everything to VCD. The first
//! mismatch stops the run; the VCD up to and including that cycle is flushed and kept.

use crate::engine::{BoxedEngine, CosimBlock, EngineKind};
use crate::error::CosimError;
use crate::scoreboard::{Mismatch, Scoreboard};
use crate::wave::WaveRecorder;
use mcmvm_models::config::HwConfig;
use mcmvm_models::protocol::Ports;
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

/// The outcome of a lockstep run.
#[derive(Debug, Clone)]
pub struct LockstepReport {
    /// Cycles run (including the mismatching one, if any).
    pub cycles: u64,
    /// The first divergence, if any.
    pub mismatch: Option<Mismatch>,
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
    run_lockstep(engines, opts.cycles, opts.vcd.as_deref(), stimulus)
}

/// Run named engines in lockstep for at most `cycles` cycles of `stimulus`. Engines are
/// any `CycleModel`, so a test can put a deliberately wrong twin beside the real ones.
pub fn run_lockstep<I: Ports, O: Ports>(
    mut engines: Vec<(String, BoxedEngine<I, O>)>,
    cycles: u64,
    vcd: Option<&Path>,
    stimulus: impl Iterator<Item = I>,
) -> Result<LockstepReport, CosimError> {
    if engines.is_empty() {
        return Err(CosimError::NoEngines);
    }
    if cycles == 0 {
        return Err(CosimError::ZeroCycles);
    }
    let names: Vec<String> = engines.iter().map(|(n, _)| n.clone()).collect();
    let name_refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let mut wave = match vcd {
        Some(path) => Some(WaveRecorder::<I, O>::create(path, &name_refs)?),
        None => None,
    };
    let mut scoreboard = Scoreboard::new(names.clone());
    let mut outputs = vec![O::default(); engines.len()];
    let mut inside = vec![Duration::ZERO; engines.len()];
    let mut mismatch = None;
    let mut ran = 0u64;
    let start = Instant::now();
    for (cycle, input) in (0..cycles).zip(stimulus) {
        for ((_, engine), (out, spent)) in engines
            .iter_mut()
            .zip(outputs.iter_mut().zip(inside.iter_mut()))
        {
            let t0 = Instant::now();
            *out = engine.step(&input);
            *spent += t0.elapsed();
        }
        ran = cycle + 1;
        if let Some(w) = wave.as_mut() {
            w.record(cycle, &input, &outputs)?;
        }
        if let Some(m) = scoreboard.check(cycle, &outputs) {
            mismatch = Some(m);
            break;
        }
    }
    let vcd = match wave {
        Some(w) => Some(w.finish(ran)?),
        None => None,
    };
    let wall = start.elapsed();
    Ok(LockstepReport {
        cycles: ran,
        mismatch,
        wall,
        engine_time: names
            .into_iter()
            .zip(inside)
            .map(|(engine, time)| EngineTime { engine, time })
            .collect(),
        vcd,
    })
}
