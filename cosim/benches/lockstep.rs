//! Lockstep speed per block: `twin,verilator` over 2 M cycles and `twin,rusthdl` over
//! 200 k cycles of seeded random stimulus, printing the lockstep rate and each engine's
//! own rate (time inside its `step`). Targets (issue 2): twin,verilator on the RT at
//! least 1 M cycles/s; rusthdl at least 100 k cycles/s.
//!
//! Run: `cargo bench -p mcmvm-cosim --bench lockstep` (MCMVM_BENCH_CYCLES scales it).

use mcmvm_cosim::{lockstep, Att, Coalescer, CosimBlock, EngineKind, LockstepOptions, Rt};
use mcmvm_models::config::HwConfig;
use mcmvm_models::protocol::Ports;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const SEED: u64 = 7;

/// Uniform random values on every port, except `reset`, asserted once in 4096 cycles so
/// the state builds up; strobes are high half the time.
fn random_inputs<I: Ports>(seed: u64) -> impl Iterator<Item = I> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    std::iter::repeat_with(move || {
        let mut input = I::default();
        for (i, port) in I::PORTS.iter().enumerate() {
            let v = if port.name == "reset" {
                u64::from(rng.gen_ratio(1, 4096))
            } else {
                rng.gen::<u64>()
            };
            input.set(i, v);
        }
        input
    })
}

fn run<B: CosimBlock>(engines: &[EngineKind], cycles: u64) {
    let cfg = HwConfig::default();
    let opts = LockstepOptions {
        engines: engines.to_vec(),
        cycles,
        vcd: None,
    };
    let names: Vec<&str> = engines.iter().map(|e| e.name()).collect();
    match lockstep::<B>(&cfg, &opts, random_inputs::<B::In>(SEED)) {
        Ok(report) => {
            let per_engine: Vec<String> = report
                .engine_rates()
                .iter()
                .map(|(e, r)| format!("{e} {:.2} M/s", r / 1e6))
                .collect();
            let verdict = match &report.mismatch {
                None => "0 mismatches".to_string(),
                Some(m) => format!("MISMATCH {m}"),
            };
            println!(
                "{:<20} {:<18} {:>9} cycles  lockstep {:>6.2} M cycles/s  ({})  {verdict}",
                B::KIND.module_name(),
                names.join(","),
                report.cycles,
                report.cycles_per_second() / 1e6,
                per_engine.join(", "),
            );
        }
        Err(e) => println!(
            "{:<20} {:<18} skipped: {e}",
            B::KIND.module_name(),
            names.join(",")
        ),
    }
}

fn main() {
    let scale: u64 = std::env::var("MCMVM_BENCH_CYCLES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2_000_000);
    println!("seed {SEED}; random stimulus, reset 1/4096");
    let fast = [EngineKind::Twin, EngineKind::Verilator];
    let hdl = [EngineKind::Twin, EngineKind::RustHdl];
    run::<Rt>(&fast, scale);
    run::<Rt>(&hdl, scale / 10);
    run::<Coalescer>(&fast, scale);
    run::<Coalescer>(&hdl, scale / 10);
    run::<Att>(&fast, scale);
    run::<Att>(&hdl, scale / 10);
}
