//! The memory system serves in arrival order, and warps overlap independent accesses.
//!
//! The bandwidth resources are checked against a first-come-first-served reference written
//! here from the rule alone (docs: `gpu::bandwidth`): a request starts when every request
//! processed so far that arrived before it (ties: processed before it) has been served.
//! Memory-level parallelism is checked with exact cycles on one warp.

use crate::gpu_support;

use gpu_support::{config4, read32, Scripted};
use mcmvm_models::driver::PolicyKind;
use mcmvm_models::gpu::memory::Budget;
use mcmvm_models::gpu::{simulate, GpuConfig, RunSpec};
use mcmvm_models::workload::rng::XorShift;
use mcmvm_models::workload::{by_name, Allocation, Kernel};

/// The start of the last of `reqs` (arrival, cost) under FCFS by arrival, ties in order.
fn reference_start(reqs: &[(u64, f64)]) -> f64 {
    let mut order: Vec<usize> = (0..reqs.len()).collect();
    order.sort_by_key(|&i| (reqs[i].0, i));
    let mut free = 0.0f64;
    let mut last = 0.0;
    for i in order {
        let start = free.max(reqs[i].0 as f64);
        free = start + reqs[i].1;
        if i == reqs.len() - 1 {
            last = start;
        }
    }
    last
}

#[test]
fn every_request_starts_as_first_come_first_served_by_arrival() {
    // Seed printed by the assertion; arrivals up to 300 cycles ahead of a floor that
    // advances like an event clock.
    let seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut x = XorShift::new(seed);
    let mut b = Budget::new(true);
    let mut seen: Vec<(u64, f64)> = Vec::new();
    let mut floor = 0u64;
    for k in 0..3_000 {
        floor += x.next_u64() % 3;
        let arrival = floor + x.next_u64() % 300;
        let cost = [0.5, 1.0, 2.6, 7.0][(x.next_u64() % 4) as usize];
        let wait = b.consume(arrival, cost, floor);
        seen.push((arrival, cost));
        let start = reference_start(&seen);
        let expect = (start - arrival as f64).max(0.0).ceil() as u64;
        assert_eq!(wait, expect, "seed {seed:#x}, request {k} at {arrival}");
    }
    assert!(
        b.out_of_order > 100,
        "the stimulus reached out-of-order arrivals"
    );
}

/// One warp: a dependent read of line 0 that faults the page in, then a read at each of
/// `offsets`, independent or not; the run's cycles.
fn one_warp_reads(cfg: &GpuConfig, offsets: impl Iterator<Item = u64>, independent: bool) -> u64 {
    let mut w = Scripted::new(
        "one-warp",
        vec![Allocation::new("a", 1 << 16)],
        vec![Kernel::new("k", 1, 1)],
    );
    w.push(0, 0, 0, read32(0, 0));
    for offset in offsets {
        let mut r = read32(0, offset);
        r.independent = independent;
        w.push(0, 0, 0, r);
    }
    let spec = RunSpec {
        policy: PolicyKind::S64k,
        scale: 1.0,
        seed: 1,
    };
    simulate(cfg, &w, spec).expect("runs").cycles
}

/// `n` more reads of line 0 (L1 TLB and L1 cache hits).
fn one_warp(cfg: &GpuConfig, n: usize, independent: bool) -> u64 {
    one_warp_reads(cfg, std::iter::repeat_n(0, n), independent)
}

#[test]
fn independent_hits_issue_one_per_cycle_until_the_limit_then_wait_for_the_oldest() {
    let mut cfg = config4();
    cfg.gpu.loads_in_flight_per_warp = 4;
    cfg.memory.serve_in_arrival_order = true;
    let l = cfg.l1_tlb.latency + cfg.l1_cache.latency;
    let d = one_warp(&cfg, 0, false);
    assert_eq!(
        one_warp(&cfg, 3, false) - d,
        3 * l,
        "dependent: one after another"
    );
    assert_eq!(
        one_warp(&cfg, 3, true) - d,
        2 + l,
        "issued in three cycles, overlapped"
    );
    // Six with four in flight: the fifth waits for the first (done at l), the sixth for
    // the second (l + 1); the last completes at l + 1 + l.
    assert_eq!(one_warp(&cfg, 6, true) - d, 1 + 2 * l);
    cfg.gpu.loads_in_flight_per_warp = 1;
    assert_eq!(
        one_warp(&cfg, 3, true) - d,
        3 * l,
        "a limit of 1 blocks every access"
    );
}

#[test]
fn every_policy_serves_out_of_order_arrivals_and_overlaps_independent_loads() {
    let mut cfg = config4();
    cfg.gpu.loads_in_flight_per_warp = 4;
    cfg.memory.serve_in_arrival_order = true;
    let w = by_name("ste", 0.05, 1).expect("ste");
    for policy in PolicyKind::ALL {
        let spec = RunSpec {
            policy,
            scale: 0.05,
            seed: 1,
        };
        let r = simulate(&cfg, w.as_ref(), spec).expect("runs");
        assert!(r.out_of_order_requests > 0, "{policy:?}");
        assert!(r.overlapped_instrs > 0, "{policy:?}");
        assert_eq!(r.translations_before_mapping, 0, "{policy:?}");
        let again = simulate(&cfg, w.as_ref(), spec).expect("runs");
        assert_eq!(again.cycles, r.cycles, "{policy:?}: deterministic");
    }
}

/// `n` independent reads of fresh lines 256 bytes apart (L1 and L2 misses on distinct
/// HBM channels).
fn one_warp_misses(cfg: &GpuConfig, n: u64) -> u64 {
    one_warp_reads(cfg, (1..=n).map(|k| 256 * k), true)
}

/// Bounded MSHRs: with one register per SM, each miss waits for the previous one's line
/// and holds the warp's next issue as long (back-pressure); unbounded, the three misses
/// overlap.
#[test]
fn a_full_mshr_pool_delays_the_miss_and_stalls_the_warps_issue() {
    let mut cfg = config4();
    cfg.gpu.loads_in_flight_per_warp = 4;
    cfg.gpu.l1_mshrs_per_sm = 0;
    cfg.memory.serve_in_arrival_order = true;
    let base = one_warp_misses(&cfg, 0);
    // m: one miss from issue to its line, measured alone; l: its issue to the L1 miss.
    let m = one_warp_misses(&cfg, 1) - base;
    let l = cfg.l1_tlb.latency + cfg.l1_cache.latency;
    assert_eq!(
        one_warp_misses(&cfg, 3) - base,
        2 + m,
        "unbounded: issued in three cycles, overlapped"
    );
    cfg.gpu.l1_mshrs_per_sm = 1;
    assert_eq!(one_warp_misses(&cfg, 1) - base, m, "one miss never waits");
    // r = m - l: a miss's time holding its register. The second miss (issued at +1)
    // waits r - 1 for the first's line; the third issues r - 1 cycles later than it would
    // (at +r+1) and waits for the second's line: the misses end l + r, l + 2r, l + 3r.
    let r = m - l;
    assert_eq!(one_warp_misses(&cfg, 3) - base, l + 3 * r);
    cfg.gpu.l1_mshrs_per_sm = 2;
    // Two registers: the third miss waits for the first's line (at l + r), issued at +2.
    assert_eq!(one_warp_misses(&cfg, 3) - base, l + 2 * r);
}
