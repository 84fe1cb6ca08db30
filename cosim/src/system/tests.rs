//! The fault a checked run reports is the earliest over its instances, on every run.

use super::{CheckEngine, HwMode, HwOptions};
use mcmvm_models::blocks::remote_tracker::RemoteTracker;
use mcmvm_models::config::{HwConfig, RtConfig};
use mcmvm_models::protocol::{BlockKind, CycleModel, Ports, RtIn, RtOut};
use mcmvm_protocol::system::{BlockFault, SystemEngine};

/// The RT twin with its first output port flipped at one block cycle.
struct FlipAt {
    twin: RemoteTracker,
    cycle: u64,
    at: u64,
}

impl CycleModel for FlipAt {
    type In = RtIn;
    type Out = RtOut;
    fn step(&mut self, input: &RtIn) -> RtOut {
        let mut o = self.twin.step(input);
        if self.cycle == self.at {
            o.set(0, o.get(0) ^ 1);
        }
        self.cycle += 1;
        o
    }
}

/// A checked RT whose second engine goes wrong at its block cycle `at`.
fn checked(unit: &str, at: u64, opts: &HwOptions) -> CheckEngine<RtIn, RtOut> {
    let cfg = RtConfig::default();
    let hw = HwConfig::default();
    let wrong = FlipAt {
        twin: RemoteTracker::new(&cfg),
        cycle: 0,
        at,
    };
    CheckEngine::new(
        BlockKind::RemoteTracker,
        unit,
        ("twin", Box::new(RemoteTracker::new(&cfg))),
        ("wrong", Box::new(wrong)),
        &hw,
        opts,
    )
}

/// A run like the one that blamed a different chiplet each time: `busy` is stepped every
/// system cycle and goes wrong at cycle 5,000; `quiet` is stepped every 50th cycle and
/// goes wrong at its block cycle 10 (system cycle 500), which stays in a half-full batch
/// until the end. The run stops at the first fault any call returns, syncing both at the
/// end as a system does.
fn two_faults(check_thread: bool, dir: &std::path::Path) -> BlockFault {
    let mut opts = HwOptions::new(HwMode::Check);
    opts.mismatch_dir = dir.to_path_buf();
    opts.check_thread = check_thread;
    let mut busy = checked("busy", 5_000, &opts);
    let mut quiet = checked("quiet", 10, &opts);
    let idle = RtIn::default();
    let mut run = || -> Result<(), BlockFault> {
        for t in 0..20_000 {
            busy.step(t, &idle)?;
            if t % 50 == 0 {
                quiet.step(t, &idle)?;
            }
        }
        busy.sync()?;
        quiet.sync()
    };
    run().expect_err("both wrong engines are caught")
}

#[test]
fn the_earliest_fault_over_all_instances_is_reported_on_every_run() {
    for check_thread in [true, false] {
        let dir = std::env::temp_dir().join(format!(
            "mcmvm-earliest-{}-{check_thread}",
            std::process::id()
        ));
        let faults: Vec<BlockFault> = (0..5).map(|_| two_faults(check_thread, &dir)).collect();
        for f in &faults {
            match f {
                BlockFault::Mismatch {
                    unit,
                    system_cycle,
                    block_cycle,
                    vcd,
                    ..
                } => {
                    assert_eq!(
                        (unit.as_str(), *system_cycle, *block_cycle),
                        ("quiet", 500, 10),
                        "check_thread = {check_thread}: {f}"
                    );
                    let vcd = vcd.as_ref().expect("the mismatch VCD is written");
                    assert!(vcd.ends_with("rt-quiet-mismatch.vcd"), "{}", vcd.display());
                    assert!(vcd.exists(), "{}", vcd.display());
                }
                f => panic!("expected a mismatch, got {f}"),
            }
        }
        assert!(faults.windows(2).all(|w| w[0] == w[1]), "{faults:?}");
        let _ = std::fs::remove_dir_all(dir);
    }
}

#[test]
fn a_single_fault_is_still_reported_by_its_instance() {
    let dir = std::env::temp_dir().join(format!("mcmvm-single-{}", std::process::id()));
    let mut opts = HwOptions::new(HwMode::Check);
    opts.mismatch_dir = dir.clone();
    let mut good = checked("good", u64::MAX, &opts);
    let mut bad = checked("bad", 3_000, &opts);
    let idle = RtIn::default();
    let mut run = || -> Result<(), BlockFault> {
        for t in 0..10_000 {
            good.step(t, &idle)?;
            bad.step(t, &idle)?;
        }
        good.sync()?;
        bad.sync()
    };
    match run() {
        Err(BlockFault::Mismatch {
            unit, system_cycle, ..
        }) => assert_eq!((unit.as_str(), system_cycle), ("bad", 3_000)),
        r => panic!("expected bad's mismatch at 3000, got {r:?}"),
    }
    let _ = std::fs::remove_dir_all(dir);
}
