//! Regression testbenches recorded from full-system runs (`mcmvm run --record-ports`):
//! each block's system-driven port traffic played back as stimulus through the twin, rust-hdl's simulator
//! and the emitted Verilog in lockstep, 0 mismatches. `testbenches/recorded/README.md`
//! says which run produced each file.

use mcmvm_cosim::stimulus::read_stimulus;
use mcmvm_cosim::{lockstep, Att, Coalescer, CosimBlock, EngineKind, LockstepOptions, Rt};
use mcmvm_models::config::HwConfig;
use std::path::Path;

fn run_recorded_stimulus<B: CosimBlock>(file: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("recorded")
        .join(file);
    let stimulus = read_stimulus::<B::In>(&path).expect("recorded stimulus reads");
    let cycles = stimulus.len();
    let options = LockstepOptions {
        engines: EngineKind::ALL.to_vec(),
        cycles,
        vcd: None,
    };
    let report =
        lockstep::<B>(&HwConfig::default(), &options, stimulus.into_iter()).expect("engines build");
    assert_eq!(report.cycles, cycles, "{file}: every recorded cycle ran");
    assert!(report.mismatch.is_none(), "{file}: {:?}", report.mismatch);
}

#[test]
fn remote_tracker_traffic_of_bfs_under_clap_as_stimulus_gives_no_mismatch() {
    run_recorded_stimulus::<Rt>("rt-bfs-clap-chiplet2.vcd");
}

#[test]
fn coalescer_traffic_of_bfs_under_clap_as_stimulus_gives_no_mismatch() {
    run_recorded_stimulus::<Coalescer>("coalescer-bfs-clap-chiplet2.vcd");
}

#[test]
fn att_traffic_of_ls_under_forest_as_stimulus_gives_no_mismatch() {
    run_recorded_stimulus::<Att>("att-ls-forest.vcd.gz");
}
