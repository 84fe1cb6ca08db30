//! The paper's baselines run without CLAP's hardware (issue 20 item 4): the GMMU
//! coalescer and same-offset TLB entry merging serve `clap` and `s64k-coal` only.

mod gpu_support;

use gpu_support::config4;
use mcmvm_models::driver::PolicyKind;
use mcmvm_models::gpu::{simulate, RunSpec};
use mcmvm_models::workload;

fn run(name: &str, policy: PolicyKind) -> mcmvm_models::gpu::RunReport {
    let w = workload::by_name(name, 0.05, 1).expect("workload");
    let spec = RunSpec {
        policy,
        scale: 0.05,
        seed: 1,
    };
    simulate(&config4(), w.as_ref(), spec).expect("runs")
}

#[test]
fn baselines_create_no_coalesced_or_merged_entry_and_clap_does() {
    for name in ["bfs", "ste", "gemm-vit"] {
        for p in [
            PolicyKind::S4k,
            PolicyKind::S64k,
            PolicyKind::S2m,
            PolicyKind::Olp,
            PolicyKind::Ideal,
        ] {
            let r = run(name, p);
            assert_eq!(
                (r.coalesced_fills, r.merged_tlb_entries),
                (0, 0),
                "{name} under {p}: coalesced fills, merged entries"
            );
            assert!(!p.tlb_coalescing());
        }
        for p in [PolicyKind::Clap, PolicyKind::S64kCoal] {
            let r = run(name, p);
            assert!(
                r.coalesced_fills > 0 && r.merged_tlb_entries > 0,
                "{name} under {p}: {} coalesced fills, {} merged entries",
                r.coalesced_fills,
                r.merged_tlb_entries
            );
            assert_eq!(r.coalescer_mismatches, 0, "{name} under {p}");
        }
    }
}

#[test]
fn the_coalescer_is_the_only_difference_between_s64k_and_s64k_coal() {
    // Same placement: every structure gets 64 KB pages either way, and the remote ratio
    // moves only with first-touch timing; the coalescer takes walks away.
    let (a, b) = (
        run("ste", PolicyKind::S64k),
        run("ste", PolicyKind::S64kCoal),
    );
    assert_eq!(a.faults, b.faults);
    for (x, y) in a.allocs.iter().zip(&b.allocs) {
        assert_eq!((&x.name, &x.page_size), (&y.name, &y.page_size));
    }
    assert_eq!(b.policy, "s64k-coal");
    assert_eq!(
        "s64k-coal".parse::<PolicyKind>().ok(),
        Some(PolicyKind::S64kCoal)
    );
}

#[test]
fn the_run_report_shows_the_counters_in_text_and_json() {
    let r = run("ste", PolicyKind::Clap);
    let text = r.table();
    assert!(text.contains(&format!("merged TLB entries {}", r.merged_tlb_entries)));
    assert!(text.contains("used before mapped     0"));
    let json = serde_json::to_value(&r).expect("json");
    for key in [
        "coalesced_fills",
        "merged_tlb_entries",
        "translations_before_mapping",
        "fault_joins",
    ] {
        assert!(json[key].is_u64(), "{key} in the JSON report");
    }
}
