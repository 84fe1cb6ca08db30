//! Exact latencies of the simplest paths through the GPU model.

use crate::gpu_support;

use gpu_support::{config4, read32, Scripted};
use mcmvm_models::driver::PolicyKind;
use mcmvm_models::gpu::memory::MemSystem;
use mcmvm_models::gpu::{simulate, GpuConfig, RunSpec};
use mcmvm_models::workload::{Allocation, Kernel};

fn cycles(cfg: &GpuConfig, accesses: usize) -> u64 {
    let mut w = Scripted::new(
        "one-warp",
        vec![Allocation::new("a", 1 << 16)],
        vec![Kernel::new("k", 1, 1)],
    );
    for _ in 0..accesses {
        w.push(0, 0, 0, read32(0, 0));
    }
    let spec = RunSpec {
        policy: PolicyKind::S64k,
        scale: 1.0,
        seed: 1,
    };
    simulate(cfg, &w, spec).expect("runs").cycles
}

#[test]
fn an_l1_tlb_hit_on_an_l1_cache_hit_costs_exactly_the_two_configured_latencies() {
    for l1_tlb in [10, 7] {
        let mut cfg = config4();
        cfg.l1_tlb.latency = l1_tlb;
        let first = cycles(&cfg, 1);
        let second = cycles(&cfg, 2);
        assert_eq!(second - first, l1_tlb + cfg.l1_cache.latency);
    }
}

#[test]
fn the_first_touch_pays_a_fault_and_a_walk() {
    let cfg = config4();
    let first = cycles(&cfg, 1);
    // Lower bound from the path: L1 TLB, L2 TLB, the fault, then the replayed lookups,
    // a walk of at least one L2 access, and the data from HBM.
    let d = cfg.derived();
    let floor = 2 * (cfg.l1_tlb.latency + cfg.l2_tlb.latency)
        + d.fault_latency
        + cfg.l2_cache.latency
        + cfg.l1_cache.latency
        + cfg.l2_cache.latency
        + cfg.memory.dram_latency;
    assert!(first >= floor, "{first} < {floor}");
}

#[test]
fn a_remote_line_pays_the_ring_and_an_l2_miss_pays_dram() {
    let cfg = config4();
    let d = cfg.derived();
    assert_eq!(d.ring_latency, 36, "32 ns at 1132 MHz");
    let (l2, dram) = (cfg.l2_cache.latency, cfg.memory.dram_latency);
    let mut m = MemSystem::new(&cfg);
    let chiplet1 = 1u64 << 21; // the 2 MB PF block of chiplet 1
    let chiplet2 = 2u64 << 21;
    let r = m.read_line(chiplet1, 1_000, 1);
    assert_eq!((r.done - 1_000, r.remote), (l2 + dram, false));
    let r = m.read_line(chiplet1, 2_000, 1);
    assert_eq!((r.done - 2_000, r.remote), (l2, false), "now an L2 hit");
    let r = m.read_line(chiplet2, 3_000, 0);
    assert_eq!(
        (r.done - 3_000, r.remote),
        (d.ring_latency + l2 + dram, true)
    );
    let r = m.read_line(chiplet2, 4_000, 0);
    assert_eq!((r.done - 4_000, r.remote), (d.ring_latency + l2, true));
}

#[test]
fn lines_on_one_channel_queue_behind_each_other() {
    let cfg = config4();
    let d = cfg.derived();
    let mut m = MemSystem::new(&cfg);
    // Two lines of the same 256-byte channel chunk, both L2 misses, at the same cycle.
    let a = m.read_line(0, 100, 0);
    let b = m.read_line(128, 100, 0);
    assert_eq!(b.done - a.done, d.channel_cycles_per_line.ceil() as u64);
    // A line of the next channel does not wait.
    let c = m.read_line(256, 100, 0);
    assert_eq!(c.done, a.done);
}
