//! UVM on the MCM GPU model: invariants of whole runs (checked after every batch and at
//! the end against the page table), far faults under oversubscription, and the exact
//! migration count when nothing can be prefetched or evicted.

use std::path::Path;

use crate::driver::PolicyKind;
use crate::gpu::{simulate, GpuConfig, RunSpec};
use crate::workload::{by_name, Workload};

use super::{run_on_gpu, GpuUvmReport, UvmConfig, UvmError, UvmGpu, UvmPolicy};

/// The 4-chiplet config with 4 SMs per chiplet, so small workloads keep every chiplet
/// busy and the tests stay fast.
fn small_mcm() -> GpuConfig {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/mcm-4chiplet.toml");
    let mut cfg = GpuConfig::load(&path).expect("configs/mcm-4chiplet.toml loads");
    cfg.gpu.sms_per_chiplet = 4;
    cfg
}

/// The Forest study's GPU (`configs/gpu-turing.toml`, 4 KB pages) with 8 of its 68 SMs:
/// the same SMs, caches and clock, so small workloads run in seconds.
pub(super) fn small_turing() -> UvmGpu {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/gpu-turing.toml");
    let mut cfg = GpuConfig::load(&path).expect("configs/gpu-turing.toml loads");
    cfg.gpu.sms_per_chiplet = 8;
    UvmGpu::new(cfg)
}

fn uvm_cfg(sets: &[&str]) -> UvmConfig {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    UvmConfig::from_text("", Path::new("test"), &sets).expect("test overrides are valid")
}

fn spec(policy: PolicyKind) -> RunSpec {
    RunSpec {
        policy,
        scale: 0.03,
        seed: 1,
    }
}

fn run(wl: &dyn Workload, placement: PolicyKind, uvm: UvmPolicy, sets: &[&str]) -> GpuUvmReport {
    run_on_gpu(&small_mcm(), &uvm_cfg(sets), wl, spec(placement), uvm, true)
        .unwrap_or_else(|e| panic!("{} {placement} {uvm:?} {sets:?}: {e}", wl.name()))
}

/// Mapped bytes the driver reports at the end of a run, over all allocations.
fn mapped_pages(r: &GpuUvmReport) -> u64 {
    r.gpu.driver["allocs"]
        .as_array()
        .expect("driver stats list allocations")
        .iter()
        .map(|a| a["mapped_bytes"].as_u64().expect("mapped_bytes") / 4096)
        .sum()
}

#[test]
fn uvm_on_the_gpu_keeps_residency_and_page_table_consistent() {
    // mixed under s2m with Forest livelocked before the next batch was kept from evicting
    // the pages the last one brought before their warps replayed (regression case).
    let cases = [
        ("ls", 1.5, PolicyKind::S64k),
        ("ls", 1.5, PolicyKind::S2m),
        ("mixed", 1.5, PolicyKind::S64k),
        ("mixed", 1.5, PolicyKind::S2m),
        ("hchi", 2.0, PolicyKind::S4k),
    ];
    for (name, oversub, placement) in cases {
        let wl = by_name(name, 0.03, 1).expect("built-in workload");
        let sets = format!("memory.oversubscription={oversub}");
        for uvm in [UvmPolicy::Tbnp, UvmPolicy::Forest, UvmPolicy::SpecForest] {
            let r = run(wl.as_ref(), placement, uvm, &[sets.as_str()]);
            let what = format!("{name} {oversub} {placement} {uvm:?}");
            // Every access completed: the GPU performed every warp instruction.
            assert_eq!(r.gpu.warp_mem_instrs, wl.instr_count(), "{what}");
            assert_eq!(r.protocol.accesses_not_resident, 0, "{what}");
            // Every fault call is one fault episode, fresh or a replay's, and some fresh
            // faults were timed.
            let (eps, timed) = (r.fault_episodes, r.fault_episodes_timed);
            assert_eq!(eps[0] + eps[1], r.protocol.fault_calls, "{what}");
            assert!(timed[0] <= eps[0] && timed[1] <= eps[1], "{what}");
            assert!(timed[0] > 0 && r.fault_path_s > 0.0, "{what}: {timed:?}");
            assert!(r.gpu_speed >= r.gpu.speed, "{what}");
            assert!(
                r.uvm.far_faults > 0,
                "{what}: oversubscribed, yet no far fault"
            );
            assert!(
                r.protocol.max_resident_pages <= r.uvm.capacity_pages,
                "{what}: {} resident > capacity {}",
                r.protocol.max_resident_pages,
                r.uvm.capacity_pages
            );
            // The page table holds what was mapped minus what was unmapped, and
            // (checked at the end of the run) exactly the resident pages.
            assert_eq!(
                mapped_pages(&r),
                r.protocol.pages_mapped - r.protocol.pages_unmapped,
                "{what}"
            );
            assert_eq!(r.protocol.pages_mapped, r.uvm.pages_migrated, "{what}");
            assert_eq!(r.protocol.pages_unmapped, r.uvm.pages_evicted, "{what}");
            if name == "ls" {
                // Streaming over 1.5x memory must evict, and evictions shoot down.
                assert!(r.uvm.evictions > 0, "{what}");
                assert!(r.gpu.shootdowns > 0, "{what}");
            }
        }
    }
}

#[test]
fn tbnp_without_prefetch_or_pressure_migrates_exactly_the_touched_pages() {
    let wl = by_name("mixed", 0.03, 1).expect("built-in workload");
    // Pages first touch maps with 4 KB pages = the distinct pages the workload touches.
    let ft = simulate(&small_mcm(), wl.as_ref(), spec(PolicyKind::S4k)).expect("first touch");
    let touched: u64 = ft.driver["allocs"]
        .as_array()
        .expect("allocs")
        .iter()
        .map(|a| a["mapped_bytes"].as_u64().expect("mapped_bytes") / 4096)
        .sum();
    assert!(touched > 0);
    // Threshold 100 % can never be exceeded and 4 KB leaves stop the big-page widening.
    let sets = [
        "memory.oversubscription=1.0",
        "tbnp.threshold=100",
        "tbnp.big_page_kb=4",
    ];
    for placement in [PolicyKind::S4k, PolicyKind::S64k] {
        let r = run(wl.as_ref(), placement, UvmPolicy::Tbnp, &sets);
        assert_eq!(r.protocol.accesses_not_resident, 0, "{placement}");
        assert_eq!(r.gpu.warp_mem_instrs, wl.instr_count(), "{placement}");
        assert_eq!(r.uvm.pages_migrated, touched, "{placement}");
        assert_eq!(r.uvm.far_faults, touched, "{placement}");
        assert_eq!(r.uvm.pages_prefetched, 0, "{placement}");
        assert_eq!(r.uvm.evictions, 0, "{placement}");
        assert_eq!(r.uvm.thrashed_pages, 0, "{placement}");
        assert_eq!(mapped_pages(&r), touched, "{placement}");
    }
}

#[test]
fn prefetch_reduces_far_faults_on_a_stream() {
    let wl = by_name("ls", 0.03, 1).expect("built-in workload");
    let base = ["memory.oversubscription=1.0"];
    let with = run(wl.as_ref(), PolicyKind::S64k, UvmPolicy::Tbnp, &base);
    let without = run(
        wl.as_ref(),
        PolicyKind::S64k,
        UvmPolicy::Tbnp,
        &[base[0], "tbnp.threshold=100", "tbnp.big_page_kb=4"],
    );
    assert!(with.uvm.pages_prefetched > 0);
    assert!(
        with.uvm.far_faults < without.uvm.far_faults,
        "prefetching {} vs {} far faults",
        with.uvm.far_faults,
        without.uvm.far_faults
    );
}

#[test]
fn bad_uvm_requests_are_refused() {
    let wl = by_name("ls", 0.03, 1).expect("built-in workload");
    let mut c = uvm_cfg(&[]);
    c.memory.oversubscription = 0.5;
    let e = run_on_gpu(
        &small_mcm(),
        &c,
        wl.as_ref(),
        spec(PolicyKind::S64k),
        UvmPolicy::Tbnp,
        false,
    );
    assert!(matches!(e, Err(UvmError::Oversubscription(_))));
    let e = run_on_gpu(
        &small_mcm(),
        &uvm_cfg(&[]),
        wl.as_ref(),
        spec(PolicyKind::S64k),
        UvmPolicy::None,
        false,
    );
    assert!(matches!(e, Err(UvmError::NoneOnGpu)));
}

/// The 8-chiplet config and a CLAP-suite workload (irregular gathers, many structures):
/// the same residency and page-table invariants, every dirty page written back exactly
/// when it is evicted dirty (write-backs never exceed evictions).
#[test]
fn uvm_runs_on_the_8_chiplet_config_with_a_clap_workload() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/mcm-8chiplet.toml");
    let mut gpu = GpuConfig::load(&path).expect("configs/mcm-8chiplet.toml loads");
    gpu.gpu.sms_per_chiplet = 2;
    let wl = by_name("bfs", 0.03, 1).expect("built-in workload");
    for uvm in [UvmPolicy::Tbnp, UvmPolicy::Forest] {
        let r = run_on_gpu(
            &gpu,
            &uvm_cfg(&["memory.oversubscription=1.5"]),
            wl.as_ref(),
            spec(PolicyKind::S64k),
            uvm,
            true,
        )
        .unwrap_or_else(|e| panic!("bfs 8 chiplets {uvm:?}: {e}"));
        let what = format!("bfs 8 chiplets {uvm:?}");
        assert_eq!(r.gpu.chiplets, 8, "{what}");
        assert_eq!(r.gpu.warp_mem_instrs, wl.instr_count(), "{what}");
        assert_eq!(r.protocol.accesses_not_resident, 0, "{what}");
        assert!(r.uvm.far_faults > 0 && r.uvm.evictions > 0, "{what}");
        assert!(
            r.protocol.max_resident_pages <= r.uvm.capacity_pages,
            "{what}"
        );
        assert!(r.uvm.dirty_writebacks <= r.uvm.pages_evicted, "{what}");
        assert_eq!(
            mapped_pages(&r),
            r.protocol.pages_mapped - r.protocol.pages_unmapped,
            "{what}"
        );
    }
}
