//! TBNp decisions on hand-worked 2 MB blocks, as NVIDIA's driver makes them.

use crate::uvm_common;

use bitvec::prelude::*;
use mcmvm_models::uvm::tbnp::{compute_prefetch, PrefetchRegion, TreeShape};
use mcmvm_models::uvm::{UvmConfig, UvmPolicy};
use mcmvm_models::workload::Allocation;
use uvm_common::{run_small, single_warp, touch};

fn mask(pages: impl IntoIterator<Item = usize>) -> BitVec<u64, Lsb0> {
    let mut m = bitvec![u64, Lsb0; 0; 512];
    for p in pages {
        m.set(p, true);
    }
    m
}

#[test]
fn threshold_is_strictly_greater() {
    // Fault at page 0 fills its 64 KB big page (16 pages); the 32-page subtree then holds
    // exactly 16 of 32 = 50 %.
    let at_50 = compute_prefetch(&mask([]), &mask([0]), 512, TreeShape::TBNP_DEFAULT, 50);
    assert_eq!(
        at_50.regions,
        vec![PrefetchRegion {
            first: 0,
            pages: 16
        }],
        "16*100 > 32*50 is false"
    );
    let at_49 = compute_prefetch(&mask([]), &mask([0]), 512, TreeShape::TBNP_DEFAULT, 49);
    assert_eq!(
        at_49.regions,
        vec![PrefetchRegion {
            first: 0,
            pages: 32
        }]
    );
    // Default 51: one more resident page (17/32 = 53 %) lifts the region to 32 pages.
    let d = compute_prefetch(&mask([20]), &mask([0]), 512, TreeShape::TBNP_DEFAULT, 51);
    assert_eq!(
        d.regions,
        vec![PrefetchRegion {
            first: 0,
            pages: 32
        }]
    );
    assert_eq!(
        d.prefetch.count_ones(),
        30,
        "32 minus the fault and the resident page"
    );
}

#[test]
fn the_upward_walk_keeps_the_largest_qualifying_region() {
    // Upper half resident: 32..256-page subtrees around page 0 fail (16 occupied), the
    // whole block qualifies ((256 + 16) / 512 = 53 % > 51 %) and wins.
    let d = compute_prefetch(
        &mask(256..512),
        &mask([0]),
        512,
        TreeShape::TBNP_DEFAULT,
        51,
    );
    assert_eq!(
        d.regions,
        vec![PrefetchRegion {
            first: 0,
            pages: 512
        }]
    );
    assert_eq!(d.prefetch.count_ones(), 255);
    assert!(!d.prefetch[0] && d.prefetch[1] && d.prefetch[255] && !d.prefetch[256]);
    // A second fault inside the chosen region adds no region.
    let d2 = compute_prefetch(
        &mask(256..512),
        &mask([0, 100]),
        512,
        TreeShape::TBNP_DEFAULT,
        51,
    );
    assert_eq!(d2.regions.len(), 1);
    assert_eq!(
        d2.prefetch.count_ones(),
        254,
        "faulted pages are not prefetches"
    );
}

#[test]
fn faults_are_widened_to_their_big_page() {
    let d = compute_prefetch(&mask([]), &mask([37]), 512, TreeShape::TBNP_DEFAULT, 51);
    assert_eq!(
        d.regions,
        vec![PrefetchRegion {
            first: 32,
            pages: 16
        }]
    );
    assert_eq!(d.prefetch.count_ones(), 15);
    // With a 4 KB "big page" there is no widening: a lone fault prefetches nothing.
    let small = TreeShape::new(512, 1).unwrap();
    let d = compute_prefetch(&mask([]), &mask([37]), 512, small, 51);
    assert_eq!(
        d.regions,
        vec![PrefetchRegion {
            first: 37,
            pages: 1
        }]
    );
    assert_eq!(d.prefetch.count_ones(), 0);
}

fn config() -> UvmConfig {
    UvmConfig::from_text(
        "",
        std::path::Path::new("test"),
        &["memory.oversubscription=1.0".into()],
    )
    .unwrap()
}

#[test]
fn first_touch_with_preferred_location_populates_the_block() {
    let mut preferred = Allocation::new("p", 4 << 20);
    preferred.preferred_gpu = true;
    let plain = Allocation::new("q", 4 << 20);
    let wl = single_warp(
        vec![preferred, plain],
        vec![touch(0, 3, false), touch(1, 3, false)],
    );
    let m = run_small(&wl, &config(), UvmPolicy::Tbnp, 1.0).unwrap().uvm;
    assert_eq!(m.far_faults, 2);
    assert_eq!(
        m.objects[0].pages_migrated, 512,
        "the whole first 2 MB block of `p`"
    );
    assert_eq!(
        m.objects[1].pages_migrated, 16,
        "a plain allocation gets its 64 KB big page"
    );
}
