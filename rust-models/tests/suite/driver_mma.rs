//! MMA (CLAP §4.4) on a hand-built 512 KB VA region in the spirit of the paper's Fig. 15,
//! end to end through the memory manager with the Remote Tracker lowering the threshold
//! (Eq. 4), and MMA's fallback to OLP by the paper's condition (§4.5: too few fully mapped
//! 2 MB VA blocks) with the Table 4 label of each outcome.

use mcmvm_models::addr::{ChipletId, Va, PAGE_64K};
use mcmvm_models::driver::mma::{effective_threshold, LocalityTree};
use mcmvm_models::driver::{
    BlockMode, DriverConfig, DriverError, MemoryManager, MmaFallback, NoRemoteTrackers, PolicyKind,
    RtDrain,
};
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

/// Eq. 4, `thres - (ratio_rt + ratio_target) / k`, at the paper's setting (k = 1, target
/// 0) and at the other values `DriverConfig` accepts.
#[test]
fn eq4_lowers_the_threshold_by_the_ratios_over_k() {
    // Every access remote: the paper's setting lowers 1.0 to 0, so every level qualifies.
    assert_eq!(effective_threshold(1.0, 1.0, 0.0, 1.0), 0.0);
    assert_eq!(fig15_tree().select_level(0.0), 3);
    // k = 2 halves the ratios' effect; the target adds to the measured ratio.
    assert!((effective_threshold(1.0, 0.5, 0.0, 2.0) - 0.75).abs() < 1e-12);
    assert!((effective_threshold(0.9, 0.25, 0.25, 4.0) - 0.775).abs() < 1e-12);
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
    clap_until_pmm_ends_with(DriverConfig::default(), rt)
}

fn clap_until_pmm_ends_with(
    cfg: DriverConfig,
    rt: &mut dyn RtDrain,
) -> (MemoryManager, mcmvm_models::driver::MmaReport) {
    let allocs = [Allocation::new("a", 16 << 20)];
    let mut mm = MemoryManager::new(cfg, PolicyKind::Clap, &allocs).unwrap();
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
    assert_eq!((report.blocks_touched, report.blocks_needed), (2, 1));
    assert_eq!(report.chosen_bytes, Some(128 << 10));
    assert_eq!(report.fallback, None);
    let s = mm.stats();
    assert_eq!(s.allocs[0].placement, "128KB");
    assert_eq!(s.allocs[0].table4, "128KB (MMA)");
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

fn one(bytes: u64, cfg: DriverConfig) -> MemoryManager {
    MemoryManager::new(cfg, PolicyKind::Clap, &[Allocation::new("s", bytes)]).unwrap()
}

/// Fault 64 KB pages `pages` of the structure from `chiplet` until PMM ends; its report.
fn until_pmm_ends(
    mm: &mut MemoryManager,
    pages: impl Iterator<Item = (u64, u8)>,
) -> mcmvm_models::driver::MmaReport {
    let base = mm.alloc_base(0).0;
    for (page, chiplet) in pages {
        let out = mm
            .handle_fault(
                Va(base + page * PAGE_64K),
                ChipletId(chiplet),
                &mut NoRemoteTrackers,
            )
            .unwrap();
        mm.check_invariants().unwrap();
        if let Some(r) = out.analysis {
            return r;
        }
    }
    panic!("PMM did not end");
}

#[test]
fn a_structure_under_10mb_whose_sample_fills_a_block_gets_mma_not_a_byte_cut() {
    // 9.75 MB: 20 % is 1.95 MB, so PMM ends on the 32nd 64 KB page, which completes the
    // first VA block. The paper's condition (a fully mapped block) holds; the old 10 MB
    // byte cut sent the structure to OLP.
    let mut mm = one(9984 << 10, DriverConfig::default());
    let report = until_pmm_ends(&mut mm, (0..32).map(|p| (p, 2)));
    assert_eq!(mm.stats().allocs[0].pmm_end_fault, Some(32));
    assert_eq!((report.blocks_analysed, report.blocks_touched), (1, 1));
    assert_eq!(report.level_histogram, [0, 0, 0, 0, 0, 1]);
    assert_eq!(report.chosen_bytes, Some(2 << 20), "one chiplet: 2 MB");
    let s = mm.stats();
    assert_eq!(s.allocs[0].table4, "2MB (MMA)");
    assert_eq!(
        (
            s.allocs[0].blocks.touched_blocks,
            s.allocs[0].blocks.huge_blocks
        ),
        (1, 1)
    );
}

#[test]
fn a_structure_too_small_to_fill_a_block_falls_back_and_says_what_olp_made_of_it() {
    // 8 MB: 20 % is 26 pages, fewer than a block's 32.
    let mut mm = one(8 << 20, DriverConfig::default());
    let report = until_pmm_ends(&mut mm, (0..32).map(|p| (p, 0)));
    let small = MmaFallback::SmallStructure {
        mapped_bytes: 26 * PAGE_64K,
        capacity: 0,
        needed: 1,
    };
    assert_eq!(report.fallback, Some(small));
    assert_eq!((report.blocks_analysed, report.blocks_touched), (0, 1));
    assert_eq!(
        mm.stats().allocs[0].table4,
        "OLP (fallback: small structure): 64KB",
        "the OLP reservation is not full yet"
    );
    let base = mm.alloc_base(0).0;
    let mut fault = |page: u64, c: u8| {
        mm.handle_fault(
            Va(base + page * PAGE_64K),
            ChipletId(c),
            &mut NoRemoteTrackers,
        )
        .unwrap()
    };
    for page in 26..32 {
        fault(page, 0);
    }
    // Block 1: touched by chiplet 1, then chiplet 2 releases its reservation.
    fault(32, 1);
    assert!(fault(33, 2).olp_released);
    // One release of four blocks is over 5 %: OLP is disabled for the rest.
    let s = mm.stats();
    assert!(s.allocs[0].olp_disabled);
    assert_eq!(
        s.allocs[0].table4,
        "OLP disabled (fallback: small structure): 2MB in 1 of 2 blocks"
    );
    assert_eq!(s.allocs[0].placement, "64KB");
}

#[test]
fn a_sample_spread_over_many_blocks_is_insufficiently_mapped() {
    // 20 MB, seven pages in each of its ten blocks: 64 pages (20 %) could fill two blocks
    // but fill none (the paper's LUD).
    let mut mm = one(20 << 20, DriverConfig::default());
    let pages = (0..7u64).flat_map(|p| (0..10u64).map(move |b| (b * 32 + p, (b % 4) as u8)));
    let report = until_pmm_ends(&mut mm, pages);
    let spread = MmaFallback::InsufficientlyMapped {
        full: 0,
        touched: 10,
        needed: 1,
    };
    assert_eq!(report.fallback, Some(spread));
    assert_eq!(
        spread.to_string(),
        "insufficiently mapped: 0 of 10 touched VA blocks fully mapped; MMA needs 1"
    );
    assert_eq!(
        mm.stats().allocs[0].table4,
        "OLP (fallback: insufficiently mapped): 64KB"
    );
}

#[test]
fn the_block_count_threshold_decides_between_mma_and_each_fallback() {
    let cfg = |n| DriverConfig {
        mma_min_full_blocks: n,
        ..DriverConfig::default()
    };
    // The Fig. 15 structure (16 MB): PMM ends with 52 pages (3.25 MB) mapped and one of
    // its two touched blocks fully mapped. Needing two, the sample is too small.
    let (_, one_block) = clap_until_pmm_ends_with(cfg(1), &mut FixedRatio(0, 0));
    assert_eq!(one_block.chosen_bytes, Some(128 << 10));
    let (mm, two) = clap_until_pmm_ends_with(cfg(2), &mut FixedRatio(0, 0));
    assert_eq!(
        two.fallback,
        Some(MmaFallback::SmallStructure {
            mapped_bytes: 52 * PAGE_64K,
            capacity: 1,
            needed: 2
        })
    );
    assert_eq!(two.level_histogram, [0, 1, 0, 0, 0, 0], "still scored");
    assert_eq!(two.chosen_bytes, None);
    // Its first block mixed chiplets: one release of eight blocks disabled OLP.
    assert_eq!(
        mm.stats().allocs[0].table4,
        "OLP disabled (fallback: small structure): 64KB"
    );
    // 20 MB: block 0 fully on chiplet 0, then four pages in each of blocks 1-8; PMM ends
    // at 64 pages (4 MB), which could have filled two blocks.
    let pages = || {
        (0..32u64)
            .map(|p| (p, 0u8))
            .chain((1..9u64).flat_map(|b| (0..4u64).map(move |p| (b * 32 + p, 1u8))))
    };
    let mut mm = one(20 << 20, cfg(1));
    assert_eq!(until_pmm_ends(&mut mm, pages()).chosen_bytes, Some(2 << 20));
    let mut mm = one(20 << 20, cfg(2));
    let report = until_pmm_ends(&mut mm, pages());
    assert_eq!(
        report.fallback,
        Some(MmaFallback::InsufficientlyMapped {
            full: 1,
            touched: 9,
            needed: 2
        })
    );
    assert_eq!(
        mm.stats().allocs[0].table4,
        "OLP (fallback: insufficiently mapped): 2MB in 1 of 9 blocks"
    );
    let bad = MemoryManager::new(cfg(0), PolicyKind::Clap, &[Allocation::new("a", 1 << 20)]);
    assert!(matches!(
        bad,
        Err(DriverError::Config {
            key: "mma_min_full_blocks",
            ..
        })
    ));
}

#[test]
fn labels_of_the_other_policies() {
    let label = |policy, pages: &[(u64, u8)]| {
        let mut mm = MemoryManager::new(
            DriverConfig::default(),
            policy,
            &[Allocation::new("s", 4 << 20)],
        )
        .unwrap();
        let base = mm.alloc_base(0).0;
        for &(p, c) in pages {
            mm.handle_fault(Va(base + p * PAGE_64K), ChipletId(c), &mut NoRemoteTrackers)
                .unwrap();
        }
        mm.stats().allocs[0].table4.clone()
    };
    let whole_block: Vec<(u64, u8)> = (0..32).map(|p| (p, 1)).collect();
    assert_eq!(label(PolicyKind::S64k, &whole_block), "64KB");
    assert_eq!(label(PolicyKind::S2m, &whole_block), "2MB");
    assert_eq!(label(PolicyKind::S4k, &whole_block), "4KB");
    assert_eq!(label(PolicyKind::Olp, &whole_block), "OLP: 2MB");
    // Two chiplets in one block release it; more than 5 % of the two blocks: disabled.
    assert_eq!(
        label(PolicyKind::Olp, &[(0, 0), (1, 1)]),
        "OLP disabled: 64KB"
    );
    // CLAP before its 20 % (12 pages; the 13th ends PMM).
    assert_eq!(
        label(PolicyKind::Clap, &whole_block[..12]),
        "OLP (PMM not ended): 64KB"
    );
}
