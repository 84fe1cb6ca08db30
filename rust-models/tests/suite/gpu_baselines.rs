//! The paper's baselines run without CLAP's hardware (issue 20 item 4): the GMMU
//! coalescer and same-offset TLB entry merging serve `clap` and `s64k-coal` only. The
//! static intermediate sizes (`s128k` … `s1m`) have TLBs of their own; `mgvm` places
//! each leaf page-table page where most of its data lives.

use crate::gpu_support;

use gpu_support::{config4, read32, Scripted};
use mcmvm_models::driver::PolicyKind;
use mcmvm_models::gpu::{simulate, RunReport, RunSpec};
use mcmvm_models::workload::{self, Allocation, Kernel, WarpInstr};

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
            PolicyKind::S128k,
            PolicyKind::S256k,
            PolicyKind::S512k,
            PolicyKind::S1m,
            PolicyKind::Mgvm,
            PolicyKind::Cnuma,
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

/// One warp streams `bytes` of one structure twice, line by line.
fn one_warp_streams(bytes: u64) -> Scripted {
    let mut s = Scripted::new(
        "stream",
        vec![Allocation::new("data", bytes)],
        vec![Kernel::new("k", 1, 1)],
    );
    for _ in 0..2 {
        for line in 0..bytes / 128 {
            s.push(0, 0, 0, read32(0, line * 128));
        }
    }
    s
}

fn class(stats: &[mcmvm_models::gpu::metrics::ClassStats], label: &str) -> (u64, u64) {
    stats
        .iter()
        .find(|c| c.class == label)
        .map_or((0, 0), |c| (c.hits, c.misses))
}

#[test]
fn a_full_256k_static_page_is_one_entry_of_the_256k_tlbs() {
    // 256 KB = four 64 KB sub-pages mapped on demand into one reservation; the fault of
    // the fourth remaps them as one 256 KB fragment, and the walk after it installs one
    // 256 KB entry that translates the rest of the run: 511 lines of the fourth 64 KB
    // page and all 2048 of the second pass.
    let w = one_warp_streams(256 << 10);
    let r = gpu_support::run(&w, PolicyKind::S256k);
    assert_eq!(r.faults, 4);
    assert_eq!(class(&r.l1_tlb, "64K"), (3 * 511, 3), "sub-pages 0..3");
    assert_eq!(class(&r.l1_tlb, "256K"), (511 + 2048, 1));
    assert_eq!(class(&r.l2_tlb, "256K"), (0, 1));
    assert_eq!((r.coalesced_fills, r.merged_tlb_entries), (0, 0));
    assert_eq!(r.allocs[0].page_size, "256KB");
    // Under s64k the four 64 KB pages stay four entries.
    let s = gpu_support::run(&w, PolicyKind::S64k);
    assert_eq!(class(&s.l1_tlb, "64K"), (4 * 511 + 2048, 4));
    assert_eq!(class(&s.l1_tlb, "256K"), (0, 0));
    assert!(
        s.l1_tlb.iter().all(|c| c.class != "256K"),
        "unused classes unlisted"
    );
}

#[test]
fn each_intermediate_size_fills_its_own_class_once_per_page() {
    for (p, label, pages) in [
        (PolicyKind::S128k, "128K", 2u64),
        (PolicyKind::S512k, "512K", 8),
        (PolicyKind::S1m, "1M", 16),
    ] {
        let w = one_warp_streams(1 << 20);
        let r = gpu_support::run(&w, p);
        let n = 16 / pages; // intermediate pages in 1 MB
                            // Per page: one fill after its last sub-page's fault and that sub-page's other
                            // 511 lines; then the whole second pass (8192 lines; the n entries fit in L1).
        assert_eq!(class(&r.l1_tlb, label), (n * 511 + 8192, n), "{p}");
        assert_eq!(r.faults, 16, "{p}: one fault per 64 KB sub-page");
    }
}

/// Chiplet 0 touches the first 64 KB page of a 2 MB block first (its fault creates the
/// block's PTB on chiplet 0); chiplet 1, later, touches the other 31 pages and reads them.
fn one_page_then_the_rest_elsewhere() -> Scripted {
    let mut s = Scripted::new(
        "late-owner",
        vec![Allocation::new("data", 2 << 20)],
        vec![Kernel::new("k", 4, 1)],
    );
    s.push(0, 0, 0, read32(0, 0));
    s.push(
        0,
        1,
        0,
        WarpInstr {
            compute_cycles: 50_000,
            independent: false,
            ..read32(0, 64 << 10)
        },
    );
    for pass in 0..2 {
        for page in 1..32u64 {
            for line in 0..4u64 {
                let _ = pass;
                s.push(0, 1, 0, read32(0, (page << 16) + line * 4096));
            }
        }
    }
    s
}

fn rehomes(r: &RunReport) -> u64 {
    r.driver["pt_rehomes"]
        .as_u64()
        .expect("pt_rehomes in the driver stats")
}

#[test]
fn mgvm_moves_the_ptb_to_the_chiplet_holding_most_of_its_data() {
    let w = one_page_then_the_rest_elsewhere();
    let (s, m) = (
        gpu_support::run(&w, PolicyKind::S64k),
        gpu_support::run(&w, PolicyKind::Mgvm),
    );
    assert_eq!(rehomes(&s), 0);
    // Moved once, when chiplet 1 held 2 pages to chiplet 0's 1, and never again.
    assert_eq!(rehomes(&m), 1);
    assert_eq!((s.faults, s.remote_ratio), (m.faults, m.remote_ratio));
    assert!(
        m.walk_remote_levels < s.walk_remote_levels,
        "chiplet 1's walks read a local PTB: {} remote PTE reads under mgvm, {} under s64k",
        m.walk_remote_levels,
        s.walk_remote_levels
    );
    assert_eq!((m.coalesced_fills, m.merged_tlb_entries), (0, 0));
}

/// Chiplet 0 first-touches all sixteen 64 KB pages of 1 MB (thread block 0); then, after
/// more than an epoch, chiplet 1 (thread block 1) reads them over and over, and its
/// accesses to a second buffer fault once per page, giving the driver its epochs.
fn touched_by_one_used_by_another() -> Scripted {
    let mut s = Scripted::new(
        "moved-owner",
        vec![
            Allocation::new("data", 1 << 20),
            Allocation::new("later", 4 << 20),
        ],
        vec![Kernel::new("k", 4, 1)],
    );
    for page in 0..16u64 {
        s.push(0, 0, 0, read32(0, page << 16));
    }
    for page in 0..64u64 {
        s.push(
            0,
            1,
            0,
            WarpInstr {
                compute_cycles: if page == 0 { 200_000 } else { 0 },
                independent: false,
                ..read32(1, page << 16)
            },
        );
        for line in 0..16u64 {
            s.push(0, 1, 0, read32(0, ((line % 16) << 16) + (page % 32) * 128));
        }
    }
    s
}

#[test]
fn cnuma_migrates_pages_to_the_chiplet_that_uses_them() {
    let w = touched_by_one_used_by_another();
    let (s, c) = (
        gpu_support::run(&w, PolicyKind::S64k),
        gpu_support::run(&w, PolicyKind::Cnuma),
    );
    let migrations = c.driver["migrations"].as_u64().expect("migrations");
    let service = c.service.as_ref().expect("the C-NUMA service reports");
    // All sixteen pages of `data` move to chiplet 1 once, none of `later`'s (chiplet 1's
    // own first touches), and never back.
    assert_eq!(migrations, 16);
    assert_eq!(service["cnuma_migrations"].as_u64(), Some(16));
    assert_eq!(s.driver["migrations"].as_u64(), Some(0));
    assert_eq!(s.faults, c.faults);
    assert!(
        c.allocs[0].remote_ratio < s.allocs[0].remote_ratio,
        "data: {} remote under cnuma, {} under s64k",
        c.allocs[0].remote_ratio,
        s.allocs[0].remote_ratio
    );
    assert!(c.shootdowns >= 16);
    assert_eq!(c.translations_before_mapping, 0);
    assert_eq!((c.coalesced_fills, c.merged_tlb_entries), (0, 0));
}
