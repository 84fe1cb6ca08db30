//! Placement policies seen through the GPU model: remote ratios, the ideal bound, frame
//! conservation.

use crate::gpu_support;

use gpu_support::{config4, interleaved_regions, run};
use mcmvm_models::addr::Va;
use mcmvm_models::driver::{MemoryManager, PolicyKind};
use mcmvm_models::gpu::{driver_config, FirstTouchService, Gpu};
use mcmvm_models::workload::Workload;
use std::collections::HashSet;

#[test]
fn thread_blocks_owning_sub_2mb_regions_see_more_remote_accesses_under_s2m() {
    // 256 KB slices, neighbours on different chiplets: a 2 MB page spans all four.
    let w = interleaved_regions(256 << 10, 64, 1);
    let s64k = run(&w, PolicyKind::S64k);
    let s2m = run(&w, PolicyKind::S2m);
    assert!(
        s64k.remote_ratio < 0.05,
        "s64k places each 64 KB page locally: {}",
        s64k.remote_ratio
    );
    assert!(
        s2m.remote_ratio > s64k.remote_ratio + 0.5,
        "s2m {} vs s64k {}",
        s2m.remote_ratio,
        s64k.remote_ratio
    );
    // The same holds per structure, and the Remote Tracker sees it.
    let (a64, a2m) = (&s64k.allocs[0], &s2m.allocs[0]);
    assert!(a2m.remote_ratio > a64.remote_ratio + 0.5);
    assert!(a2m.rt_remote_ratio.unwrap_or(0.0) > a64.rt_remote_ratio.unwrap_or(0.0));
}

#[test]
fn ideal_is_no_slower_than_any_policy_on_the_interleaved_slices() {
    let w = interleaved_regions(256 << 10, 64, 2);
    let ideal = run(&w, PolicyKind::Ideal);
    for p in [
        PolicyKind::S4k,
        PolicyKind::S64k,
        PolicyKind::S2m,
        PolicyKind::Olp,
        PolicyKind::Clap,
    ] {
        let r = run(&w, p);
        assert!(
            ideal.cycles <= r.cycles,
            "ideal {} cycles > {} {} cycles",
            ideal.cycles,
            p,
            r.cycles
        );
    }
}

#[test]
fn every_mapped_page_has_its_own_frame_under_every_policy() {
    let cfg = config4();
    let w = interleaved_regions(256 << 10, 64, 1);
    for p in PolicyKind::ALL {
        let mm = MemoryManager::new(driver_config(&cfg), p, w.allocations()).expect("driver");
        let service = Box::new(FirstTouchService { latency: 100 });
        let mut gpu = Gpu::new(&cfg, &w, mm, service).expect("gpu");
        gpu.run_all().expect("runs");
        let mm = gpu.memory_manager();
        let base = mm.alloc_base(0).0;
        let mut frames = HashSet::new();
        let mut mapped = 0u64;
        for page in 0..w.allocations()[0].bytes / 4096 {
            if let Some(t) = mm.translate(Va(base + page * 4096)) {
                mapped += 1;
                assert!(
                    frames.insert(t.pa.0 >> 12),
                    "{p}: frame of page {page} mapped twice"
                );
            }
        }
        // Every page was touched, so every page is mapped, and the frames in use fit in
        // the PF blocks the driver says it used.
        assert_eq!(mapped, w.allocations()[0].bytes / 4096, "{p}");
        let stats = mm.stats();
        let blocks: HashSet<u64> = frames.iter().map(|f| f >> 9).collect();
        assert!(blocks.len() as u64 <= stats.pf_blocks_used, "{p}");
        let total = cfg.memory.bytes_per_chiplet / 4096 * cfg.gpu.chiplets as u64;
        assert!(
            stats.free_frames + mapped + stats.pt_pages <= total,
            "{p}: frames created"
        );
    }
}

/// The Remote Tracker counts page walks. GEMM's B is read by every thread block and 75 %
/// of its accesses are remote; without TLB coalescing (s64k, the paper's baseline) each
/// chiplet walks each 64 KB page, so the RT sees the same 75 %. With CLAP's coalescing
/// hardware (`s64k-coal`), the chiplet that first touches a page walks it while its 1 MB
/// group is still partly mapped, and the other chiplets later cover sixteen pages per
/// (remote) walk: the RT's estimate falls well below the truth (measured: 21 % at scale
/// 0.25, 19 % at 1). Whether a group is still partly mapped when the others arrive depends
/// on timing: with the calibrated timing (ring 3,072 GB/s, 2 loads in flight, 4 L2 TLB
/// ports) the chiplets reach B's groups together and the RT sees 75 % either way, so the
/// mechanism is checked at the timing where it shows (ring 768 GB/s in all, 4 loads in
/// flight, unbounded L2 TLB ports).
fn remote_tracker_vs_access_ratio_of_gemm(scale: f64) {
    println!("gemm-resnet50 at scale {scale}, seed 1, ring 768 GB/s, 4 loads in flight");
    let mut cfg = config4();
    cfg.interconnect.total_bandwidth_gbs = 768.0;
    cfg.gpu.loads_in_flight_per_warp = 4;
    cfg.l2_tlb.lookups_per_cycle = 0;
    let w = mcmvm_models::workload::by_name("gemm-resnet50", scale, 1).expect("builds");
    let b_of = |policy: PolicyKind| {
        let spec = mcmvm_models::gpu::RunSpec {
            policy,
            scale,
            seed: 1,
        };
        let r = mcmvm_models::gpu::simulate(&cfg, w.as_ref(), spec).expect("runs");
        let b = r.allocs.iter().find(|a| a.name == "B").expect("B").clone();
        (b.remote_ratio, b.rt_remote_ratio.expect("B reached the RT"))
    };
    let (truth, rt) = b_of(PolicyKind::S64k);
    assert!(
        (truth - 0.75).abs() < 0.01,
        "B is read evenly by 4 chiplets: {truth}"
    );
    assert!(
        (rt - truth).abs() < 0.02,
        "RT {rt} vs true {truth} without coalescing"
    );
    let (truth_c, rt_c) = b_of(PolicyKind::S64kCoal);
    assert!(
        (truth_c - truth).abs() < 0.01,
        "placement does not depend on coalescing"
    );
    assert!(
        rt_c < truth_c / 2.0,
        "RT {rt_c} vs true {truth_c} with coalescing"
    );
}

/// Scale 0.25: a few seconds, against minutes for the default size below.
#[test]
fn remote_tracker_matches_the_access_ratio_until_coalescing_thins_remote_walks() {
    remote_tracker_vs_access_ratio_of_gemm(0.25);
}

#[test]
#[ignore = "slow: gemm-resnet50 at scale 1 (minutes); the fast case \
            remote_tracker_matches_the_access_ratio_until_coalescing_thins_remote_walks \
            asserts the same at 0.25; run by make test-exhaustive"]
fn remote_tracker_matches_the_access_ratio_at_the_default_scale() {
    remote_tracker_vs_access_ratio_of_gemm(1.0);
}
