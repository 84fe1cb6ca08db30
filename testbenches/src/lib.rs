//! # mcmvm-testbenches — stimulus for the hardware blocks
//!
//! Per block: directed sequences for every documented behaviour and a seeded random
//! generator. The tests in `tests/` run them through the lockstep harness of `mcmvm-cosim`
//! on all three engines and write their waves under `out/waves/`.

pub mod access_time_tracker;
pub mod remote_tracker;
pub mod tlb_coalescer;

use mcmvm_cosim::{run_lockstep, BoxedEngine};
use mcmvm_models::protocol::Ports;
use std::path::Path;

/// Run `engines` in lockstep on `stimulus` for `cycles` and panic with the first mismatch
/// (cycle, signal, every engine's value); prints each engine's simulation rate.
///
/// # Panics
/// On a mismatch, a lockstep error, or fewer cycles run than asked: this is the assertion
/// of the block tests.
pub fn assert_lockstep<I: Ports, O: Ports>(
    engines: Vec<(String, BoxedEngine<I, O>)>,
    cycles: u64,
    vcd: Option<&Path>,
    stimulus: impl Iterator<Item = I>,
) {
    let report =
        run_lockstep(engines, cycles, vcd, stimulus).unwrap_or_else(|e| panic!("lockstep: {e}"));
    if let Some(m) = &report.mismatch {
        panic!(
            "engines diverge at cycle {}: {} {:?}",
            m.cycle, m.signal, m.values
        );
    }
    assert_eq!(report.cycles, cycles);
    for (engine, rate) in report.engine_rates() {
        println!("  {engine}: {rate:.0} cycles/s");
    }
}

/// `out/waves/<stem>.vcd` (the directory is created).
///
/// # Panics
/// When `out/waves` cannot be created: the tests have nowhere to write their waves.
pub fn waves(stem: &str) -> std::path::PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../out/waves");
    std::fs::create_dir_all(&dir).expect("create out/waves");
    dir.join(format!("{stem}.vcd"))
}

/// Block `B` on `engines` (built by the cosim crate for `cfg`), in lockstep, through
/// [`assert_lockstep`].
///
/// # Panics
/// When an engine cannot be built (Verilator missing, other parameters than the ones it
/// was compiled for) or the engines disagree.
pub fn assert_block_lockstep<B: mcmvm_cosim::CosimBlock>(
    cfg: &mcmvm_models::config::HwConfig,
    engines: &[mcmvm_cosim::EngineKind],
    cycles: u64,
    vcd: Option<&Path>,
    stimulus: impl Iterator<Item = B::In>,
) {
    let named = engines
        .iter()
        .map(|&k| {
            let e = B::engine(k, cfg).unwrap_or_else(|e| panic!("{k} engine: {e}"));
            (k.name().to_string(), e)
        })
        .collect();
    assert_lockstep(named, cycles, vcd, stimulus);
}
