//! A fixed-seed slice of `make fuzz`: 1,500 inputs of each target (10,500 in all).

use mcmvm_fuzz::runner::{default_crash_dir, run_target, Plan};
use mcmvm_fuzz::targets::TARGETS;
use std::time::Duration;

const SEED: u64 = 2026;
const PER_TARGET: u64 = 1_500;

#[test]
fn a_fixed_seed_slice_of_every_target_breaks_no_property() {
    println!("seed {SEED}, {PER_TARGET} inputs per target");
    let mut total = 0;
    let mut failures = Vec::new();
    for (t, target) in TARGETS.iter().enumerate() {
        let plan = Plan {
            seed: SEED,
            inputs: PER_TARGET,
            workers: 2,
            hang_limit: Duration::from_secs(20),
            crash_dir: default_crash_dir(),
        };
        let s = run_target(t, &plan);
        println!(
            "{}: {} inputs, {} accepted, {} rejected, {} failures, peak {} KB",
            target.name(),
            s.inputs,
            s.accepted,
            s.rejected,
            s.failed(),
            s.peak_bytes / 1024
        );
        assert!(
            s.accepted > 0 && s.rejected > 0,
            "{}: the inputs exercise both outcomes",
            target.name()
        );
        total += s.inputs;
        failures.extend(s.failures.into_iter().map(|f| (target.name(), f)));
    }
    assert!(total >= 10_000, "{total} inputs");
    assert!(failures.is_empty(), "{failures:#?}");
}
