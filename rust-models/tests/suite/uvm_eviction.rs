//! Eviction order: the baseline evicts by fault (migration) order, Forest by the ATT's
//! access recency — so an object that is hot on the GPU but faulted long ago survives
//! under Forest and thrashes under TBNp (on a small Turing GPU, one warp).

use crate::uvm_common;

use mcmvm_models::uvm::{UvmConfig, UvmPolicy};
use mcmvm_models::workload::Allocation;
use uvm_common::{run_small, single_warp, touch};

/// Three 64 KB objects (one big page each), GPU memory for two of them.
fn scenario() -> uvm_common::ListWorkload {
    let allocs = vec![
        Allocation::new("A", 64 << 10),
        Allocation::new("B", 64 << 10),
        Allocation::new("C", 64 << 10),
    ];
    // B is read whole: the GPU's UVM service holds the pages a batch brought from the next
    // batch's eviction until they are accessed, and this scenario is about recency.
    let mut instrs = vec![touch(0, 0, false)];
    instrs.extend((0..16).map(|i| touch(1, i, false)));
    // A is hot on the GPU: these hits never reach the driver.
    for i in 0..50 {
        instrs.push(touch(0, i % 16, false));
    }
    instrs.push(touch(2, 0, false)); // needs room: evict A (fault order) or B (recency)
    instrs.push(touch(0, 5, false)); // A again
    single_warp(allocs, instrs)
}

fn config() -> UvmConfig {
    config_with(&["memory.oversubscription=1.5"])
}

/// The default UVM configuration with the overrides `sets`.
fn config_with(sets: &[&str]) -> UvmConfig {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    UvmConfig::from_text("", std::path::Path::new("test"), &sets).unwrap()
}

#[test]
fn fault_order_lru_evicts_the_hot_object_and_it_thrashes() {
    let m = run_small(&scenario(), &config(), UvmPolicy::Tbnp, 1.0)
        .unwrap()
        .uvm;
    assert_eq!(m.capacity_pages, 32);
    assert_eq!(m.far_faults, 4, "A, B, C, then A again");
    assert_eq!(m.thrashed_pages, 16, "A's big page comes back");
    assert_eq!(m.pages_evicted, 32, "A for C, then B for A");
}

#[test]
fn access_aware_eviction_keeps_the_recently_accessed_object() {
    for policy in [UvmPolicy::Forest, UvmPolicy::SpecForest] {
        let m = run_small(&scenario(), &config(), policy, 1.0).unwrap().uvm;
        assert_eq!(m.far_faults, 3, "{policy:?}: A stays resident");
        assert_eq!(m.thrashed_pages, 0, "{policy:?}");
        assert_eq!(m.pages_evicted, 16, "{policy:?}: B's leaf only");
        assert_ne!(m.att_engine, "none");
    }
}

/// tbnp-aae is TBNp's prefetcher with access-aware eviction: its trees are TBNp's
/// (`[tbnp]`), not Forest's LC trees, even where the two differ, and the ATT still runs.
#[test]
fn tbnp_aae_prefetches_with_tbnps_trees_not_forests() {
    let wl = single_warp(
        vec![Allocation::new("A", 2 << 20)],
        (0..8).map(|i| touch(0, i * 16, false)).collect(),
    );
    let cfg = config_with(&["forest.trees.lc_tree_kb=128", "forest.trees.lc_leaf_kb=16"]);
    let tbnp = run_small(&wl, &cfg, UvmPolicy::Tbnp, 1.0).unwrap().uvm;
    let aae = run_small(&wl, &cfg, UvmPolicy::TbnpAae, 1.0).unwrap().uvm;
    assert_eq!(tbnp.pages_evicted, 0, "memory is plentiful");
    assert_eq!(
        (aae.far_faults, aae.pages_migrated, aae.pages_prefetched),
        (tbnp.far_faults, tbnp.pages_migrated, tbnp.pages_prefetched)
    );
    // 64 KB big pages: at least 8 × 16 pages arrive (16 KB leaves would bring 8 × 4).
    assert!(aae.pages_migrated >= 128, "{}", aae.pages_migrated);
    assert_ne!(aae.att_engine, "none");
}
