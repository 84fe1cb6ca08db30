//! Invariants of full UVM runs on a small Turing GPU under every policy and
//! oversubscription: a page is never resident twice, GPU memory never exceeds its
//! capacity, a dirty evicted page is written back before its frame is reused, the page
//! table holds exactly the resident pages (all checked after every batch and at the end),
//! and every access eventually completes (the run ends with every warp instruction
//! performed).

use crate::uvm_common::run_small;
use mcmvm_models::uvm::{UvmConfig, UvmError, UvmPolicy};
use mcmvm_models::workload::by_name;

fn config(oversub: f64) -> UvmConfig {
    UvmConfig::from_text(
        "",
        std::path::Path::new("test"),
        &[format!("memory.oversubscription={oversub}")],
    )
    .unwrap()
}

#[test]
fn invariants_hold_and_every_access_completes() {
    for name in ["mixed", "ls"] {
        let wl = by_name(name, 0.03, 1).unwrap();
        let expected = wl.instr_count();
        for oversub in [1.25, 2.0] {
            for policy in [UvmPolicy::Tbnp, UvmPolicy::Forest, UvmPolicy::SpecForest] {
                let r = run_small(wl.as_ref(), &config(oversub), policy, 0.03)
                    .unwrap_or_else(|e| panic!("{name} {policy:?} {oversub}: {e}"));
                let m = &r.uvm;
                assert_eq!(m.warp_mem_instrs, expected, "{name} {policy:?} {oversub}");
                assert_eq!(r.protocol.accesses_not_resident, 0);
                if name == "ls" {
                    // Streaming touches every page: memory pressure must evict.
                    assert!(m.evictions > 0, "{name} {policy:?} {oversub}");
                }
                assert!(m.pages_migrated >= m.far_faults);
                assert_eq!(m.out_of_range_accesses, 0);
            }
        }
    }
}

/// No UVM on the GPU model is the first-touch path (`mcmvm run` without `--uvm`), not a
/// UVM service; an oversubscription below 1 and an unknown policy are refused.
#[test]
fn bad_uvm_requests_are_refused() {
    let wl = by_name("ls", 0.03, 1).unwrap();
    assert!(matches!(
        run_small(wl.as_ref(), &config(1.5), UvmPolicy::None, 0.03),
        Err(UvmError::NoneOnGpu)
    ));
    let mut c = config(1.5);
    c.memory.oversubscription = 0.9;
    assert!(matches!(
        run_small(wl.as_ref(), &c, UvmPolicy::Tbnp, 0.03),
        Err(UvmError::Oversubscription(_))
    ));
    assert!("lru".parse::<UvmPolicy>().is_err());
}
