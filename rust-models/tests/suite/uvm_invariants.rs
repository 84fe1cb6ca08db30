//! Invariants of full UVM runs under every policy and oversubscription: a page is never
//! resident twice, GPU memory never exceeds its capacity, a dirty evicted page is written
//! back before its frame is reused (all checked after every batch), and every access
//! eventually completes (the run ends with every warp instruction performed).

use mcmvm_models::uvm::{run_workload, UvmConfig, UvmError, UvmPolicy};
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
                let m = run_workload(wl.as_ref(), &config(oversub), policy, true)
                    .unwrap_or_else(|e| panic!("{name} {policy:?} {oversub}: {e}"));
                assert_eq!(m.warp_mem_instrs, expected, "{name} {policy:?} {oversub}");
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

#[test]
fn no_uvm_runs_without_faults_and_bad_oversubscription_is_refused() {
    let wl = by_name("ls", 0.03, 1).unwrap();
    let m = run_workload(wl.as_ref(), &config(1.5), UvmPolicy::None, true).unwrap();
    assert_eq!(m.far_faults, 0);
    assert_eq!(m.warp_mem_instrs, wl.instr_count());
    let mut c = config(1.5);
    c.memory.oversubscription = 0.9;
    assert!(matches!(
        run_workload(wl.as_ref(), &c, UvmPolicy::Tbnp, false),
        Err(UvmError::Oversubscription(_))
    ));
    assert!("lru".parse::<UvmPolicy>().is_err());
}
