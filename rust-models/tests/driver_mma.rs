//! MMA (CLAP §4.4) on a hand-built 512 KB VA region in the spirit of the paper's Fig. 15,
//! and end to end through the memory manager with the Remote Tracker lowering the
//! threshold (Eq. 4).

use mcmvm_models::addr::{ChipletId, Va, PAGE_64K};
use mcmvm_models::driver::mma::{effective_threshold, LocalityTree};
use mcmvm_models::driver::{BlockMode, DriverConfig, MemoryManager, PolicyKind, RtDrain};
use mcmvm_models::workload::Allocation;

/// Chiplets of the eight 64 KB leaves: two 256 KB halves, the first all on chiplet 0,
/// the second two 128 KB pairs on chiplets 1 and 2.
const FIG15: [u8; 8] = [0, 0, 0, 0, 1, 1, 2, 2];

fn fig15_tree() -> LocalityTree {
    let mut t = LocalityTree::new(8, 4);
    for (leaf, &c) in FIG15.iter().enumerate() {
        t.record(leaf, ChipletId(c));
    }
    t
}

#[test]
fn locality_scores_per_level_of_a_512kb_region() {
    let t = fig15_tree();
    assert!(t.full());
    // Level 1 (128 KB): every pair sits on one chiplet.
    assert_eq!(t.node_score(1, 0), 1.0);
    assert_eq!(t.node_score(1, 3), 1.0);
    // Level 2 (256 KB): the left half is uniform; the right half's busiest chiplet holds
    // 2 of its 4 leaves.
    assert_eq!(t.node_score(2, 0), 1.0);
    assert_eq!(t.node_score(2, 1), 0.5);
    // Level 3 (512 KB): chiplet 0 holds 4 of 8.
    assert_eq!(t.node_score(3, 0), 0.5);
    assert_eq!(t.level_scores(), vec![1.0, 1.0, 0.75, 0.5]);
}

#[test]
fn threshold_one_keeps_128kb_and_a_075_remote_ratio_selects_512kb() {
    let t = fig15_tree();
    assert_eq!(
        t.select_level(1.0),
        1,
        "128 KB: the largest size every leaf agrees with"
    );
    let lowered = effective_threshold(1.0, 0.75, 0.0, 1.0);
    assert!((lowered - 0.25).abs() < 1e-12);
    assert_eq!(t.select_level(lowered), 3, "512 KB");
    assert_eq!(t.select_level(0.75), 2, "256 KB in between");
    assert_eq!(t.select_level(0.8), 1);
}

struct FixedRatio(u64, u64);
impl RtDrain for FixedRatio {
    fn drain(&mut self, _id: u8) -> (u64, u64) {
        (self.0, self.1)
    }
}

/// Fault a 16 MB structure under CLAP until PMM ends. Each 512 KB region `r` of the
/// first two VA blocks follows Fig. 15 rotated by `r` chiplets, so 1 MB and 2 MB nodes
/// mix chiplets.
fn clap_until_pmm_ends(rt: &mut dyn RtDrain) -> (MemoryManager, mcmvm_models::driver::MmaReport) {
    let allocs = [Allocation {
        name: "a".into(),
        bytes: 16 << 20,
        stride_hint: None,
        preferred_gpu: false,
        similarity_group: None,
    }];
    let mut mm = MemoryManager::new(DriverConfig::default(), PolicyKind::Clap, &allocs).unwrap();
    let base = mm.alloc_base(0).0;
    for page in 0..64u64 {
        let region = page / 8;
        let chiplet = (FIG15[(page % 8) as usize] as u64 + region) % 4;
        let out = mm
            .handle_fault(Va(base + page * PAGE_64K), ChipletId(chiplet as u8), rt)
            .unwrap();
        mm.check_invariants().unwrap();
        // 20 % of 16 MB = 3.2 MB: PMM ends on the 52nd 64 KB page.
        if page < 51 {
            assert!(out.analysis.is_none(), "page {page}");
        } else {
            let report = out.analysis.expect("PMM ends at 20 %");
            assert_eq!(page, 51);
            return (mm, report);
        }
    }
    unreachable!()
}

#[test]
fn clap_picks_128kb_without_remote_accesses() {
    let (mm, report) = clap_until_pmm_ends(&mut FixedRatio(0, 0));
    assert_eq!(
        report.blocks_analysed, 1,
        "only the first VA block is fully mapped"
    );
    assert_eq!(report.level_histogram, [0, 1, 0, 0, 0, 0]);
    assert_eq!(report.chosen_bytes, Some(128 << 10));
    assert_eq!(mm.stats().allocs[0].placement, "128KB");
}

#[test]
fn a_structure_shared_by_every_chiplet_gets_2mb_once_the_rt_reports_075_remote() {
    // 0.75 remote is what even sharing over 4 chiplets gives; no level scores below 1/4.
    let (mm, report) = clap_until_pmm_ends(&mut FixedRatio(400, 300));
    assert!((report.rt_ratio - 0.75).abs() < 1e-12);
    assert!((report.threshold - 0.25).abs() < 1e-12);
    assert_eq!(report.chosen_bytes, Some(2 << 20));
    assert_eq!(mm.stats().allocs[0].rt_ratio, Some(0.75));
}

#[test]
fn clap_picks_512kb_when_the_rt_reports_half_remote() {
    // Threshold 0.5: the 512 KB regions score 4/8; 1 MB nodes 6/16, 2 MB 8/32.
    let (mut mm, report) = clap_until_pmm_ends(&mut FixedRatio(400, 200));
    assert!((report.threshold - 0.5).abs() < 1e-12);
    assert_eq!(report.level_histogram, [0, 0, 0, 1, 0, 0]);
    assert_eq!(report.chosen_bytes, Some(512 << 10));
    let s = mm.stats();
    assert_eq!(s.allocs[0].placement, "512KB");
    // The rest of the structure: an untouched VA block gets 512 KB regions, reserved on
    // the first toucher's chiplet; other chiplets' pages land in the same region.
    let block = mm.alloc_base(0).0 + 4 * (2 << 20);
    let mut rt = FixedRatio(0, 0);
    for (i, c) in [(0u64, 3u8), (1, 1), (7, 2)] {
        let out = mm
            .handle_fault(Va(block + i * PAGE_64K), ChipletId(c), &mut rt)
            .unwrap();
        assert_eq!(
            out.chiplet,
            ChipletId(3),
            "page {i} lands in the region reserved by chiplet 3"
        );
    }
    assert_eq!(
        mm.block_mode(Va(block)),
        Some(BlockMode::Fixed {
            page_log: 4,
            region_log: 7
        })
    );
    let a = mm.translate(Va(block)).unwrap();
    let b = mm.translate(Va(block + 7 * PAGE_64K)).unwrap();
    assert_eq!(
        b.pa.0 - a.pa.0,
        7 * PAGE_64K,
        "virtually and physically contiguous"
    );
    assert_eq!(a.tlb_reach_bytes, PAGE_64K, "the region is not full yet");
    for i in 2..7 {
        let out = mm
            .handle_fault(Va(block + i * PAGE_64K), ChipletId(0), &mut rt)
            .unwrap();
        assert_eq!(out.promoted, i == 6, "page {i}");
    }
    let t = mm.translate(Va(block + 3 * PAGE_64K)).unwrap();
    assert_eq!(t.pte.frag(), 7, "FRAG now encodes the 512 KB region");
    assert_eq!(t.tlb_reach_bytes, 512 << 10);
    assert_eq!(t.leaf_bytes, PAGE_64K);
    mm.check_invariants().unwrap();
}
