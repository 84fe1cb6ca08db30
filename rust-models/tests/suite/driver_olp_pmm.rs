//! OLP release and its 5 % disable, PMM ending at 20 %, promotion of a full 2 MB
//! reservation, the chiplet-full fallback, and how each policy's translations look.

use mcmvm_models::addr::{ChipletId, Va, PAGE_2M, PAGE_4K, PAGE_64K};
use mcmvm_models::driver::{
    BlockMode, DriverConfig, DriverError, MemoryManager, MmaFallback, NoRemoteTrackers, PolicyKind,
};
use mcmvm_models::pagetable::Level;
use mcmvm_models::workload::Allocation;

fn one(bytes: u64, policy: PolicyKind, cfg: DriverConfig) -> MemoryManager {
    let a = [Allocation {
        name: "s".into(),
        bytes,
        stride_hint: None,
        preferred_gpu: false,
        similarity_group: None,
    }];
    MemoryManager::new(cfg, policy, &a).unwrap()
}

fn fault(mm: &mut MemoryManager, va: u64, chiplet: u8) -> mcmvm_models::driver::FaultOutcome {
    let out = mm
        .handle_fault(Va(va), ChipletId(chiplet), &mut NoRemoteTrackers)
        .unwrap();
    mm.check_invariants().unwrap();
    out
}

#[test]
fn a_full_2mb_reservation_is_promoted_to_a_huge_page() {
    for policy in [PolicyKind::S2m, PolicyKind::Olp] {
        let mut mm = one(4 << 20, policy, DriverConfig::default());
        let base = mm.alloc_base(0).0;
        // Sub-pages in a scrambled order, all from chiplet 2.
        let pt_before = mm.page_table().pt_pages();
        for k in 0..32u64 {
            let page = (k * 7) % 32;
            let out = fault(&mut mm, base + page * PAGE_64K, 2);
            assert_eq!(out.promoted, k == 31, "{policy}: page {page}");
            assert_eq!(out.chiplet, ChipletId(2));
            let t = mm.translate(Va(base + page * PAGE_64K)).unwrap();
            if k < 31 {
                assert_eq!(
                    (t.leaf_level, t.leaf_bytes, t.tlb_reach_bytes),
                    (Level::Ptb, PAGE_64K, PAGE_64K)
                );
            }
        }
        let t = mm.translate(Va(base + 0x12_3456)).unwrap();
        assert_eq!(t.leaf_level, Level::Pdb0);
        assert!(t.pte.pde_as_pte());
        assert_eq!((t.leaf_bytes, t.tlb_reach_bytes), (PAGE_2M, PAGE_2M));
        assert_eq!(
            t.pa.0 % PAGE_2M,
            0x12_3456,
            "the reservation is 2 MB aligned"
        );
        assert_eq!(
            mm.page_table().pt_pages(),
            pt_before + 2,
            "PDB1 + PDB0; the PTB was freed"
        );
        assert_eq!(mm.stats().promotions, 1);
    }
}

#[test]
fn s2m_places_the_whole_block_on_its_first_toucher() {
    let mut mm = one(2 << 20, PolicyKind::S2m, DriverConfig::default());
    let base = mm.alloc_base(0).0;
    fault(&mut mm, base, 1);
    let out = fault(&mut mm, base + 5 * PAGE_64K, 3);
    assert_eq!(
        out.chiplet,
        ChipletId(1),
        "a large page ignores the second toucher"
    );
    assert!(!out.olp_released);
}

#[test]
fn olp_releases_a_reservation_when_another_chiplet_touches_and_disables_after_5_percent() {
    // 40 VA blocks: 5 % is 2 blocks, so the third release disables OLP.
    let mut mm = one(80 << 20, PolicyKind::Olp, DriverConfig::default());
    let base = mm.alloc_base(0).0;
    let free0 = mm.stats().free_frames;
    fault(&mut mm, base, 0);
    fault(&mut mm, base + PAGE_64K, 0);
    assert_eq!(mm.block_mode(Va(base)), Some(BlockMode::Opportunistic));
    assert_eq!(
        free0 - mm.stats().free_frames,
        512 + 3,
        "2 MB reserved, plus PDB1, PDB0, PTB"
    );
    let out = fault(&mut mm, base + 2 * PAGE_64K, 1);
    assert!(out.olp_released);
    assert_eq!(
        out.chiplet,
        ChipletId(1),
        "the conflicting page goes to its own chiplet"
    );
    assert_eq!(mm.block_mode(Va(base)), Some(BlockMode::PAGES_64K));
    // The 30 unused 64 KB frames went back; 2 stay mapped; chiplet 1 split a PF block.
    assert_eq!(free0 - mm.stats().free_frames, 3 * 16 + 3);
    let first = mm.translate(Va(base)).unwrap();
    assert_eq!(
        first.chiplet,
        ChipletId(0),
        "already mapped pages stay where they are"
    );
    for blk in 1..=2u64 {
        let va = base + blk * PAGE_2M;
        fault(&mut mm, va, 0);
        let out = fault(&mut mm, va + PAGE_64K, 2);
        assert!(out.olp_released);
        let s = &mm.stats().allocs[0];
        assert_eq!(s.olp_releases, blk + 1);
        assert_eq!(s.olp_disabled, blk == 2, "after release {}", blk + 1);
    }
    let fresh = base + 10 * PAGE_2M;
    fault(&mut mm, fresh, 3);
    assert_eq!(
        mm.block_mode(Va(fresh)),
        Some(BlockMode::PAGES_64K),
        "no reservation once disabled"
    );
    assert_eq!(mm.stats().allocs[0].placement, "64KB");
}

#[test]
fn clap_pmm_ends_at_20_percent_and_small_structures_fall_back_to_olp() {
    // 20 MB: 20 % = 4 MB = 64 pages of 64 KB.
    let mut mm = one(20 << 20, PolicyKind::Clap, DriverConfig::default());
    let base = mm.alloc_base(0).0;
    for page in 0..64u64 {
        let out = fault(&mut mm, base + page * PAGE_64K, 1);
        assert_eq!(out.analysis.is_some(), page == 63, "page {page}");
    }
    let s = mm.stats();
    assert_eq!(s.allocs[0].pmm_end_fault, Some(64));
    assert_eq!(
        s.allocs[0].placement, "2MB",
        "two blocks fully on chiplet 1"
    );
    assert_eq!(s.promotions, 2, "OLP promoted both during PMM");
    let next = base + 3 * PAGE_2M;
    fault(&mut mm, next, 0);
    assert_eq!(
        mm.block_mode(Va(next)),
        Some(BlockMode::Fixed {
            page_log: 4,
            region_log: 9
        })
    );

    // 8 MB: its 20 % (26 pages of 64 KB) fills no whole 2 MB VA block, however laid out:
    // OLP for the rest.
    let mut small = one(8 << 20, PolicyKind::Clap, DriverConfig::default());
    let base = small.alloc_base(0).0;
    let mut report = None;
    for page in 0..26u64 {
        report = report.or(fault(&mut small, base + page * PAGE_64K, 0).analysis);
    }
    let report = report.expect("20 % of 8 MB is 26 pages");
    assert_eq!(report.chosen_bytes, None);
    assert_eq!(
        report.fallback,
        Some(MmaFallback::SmallStructure {
            mapped_bytes: 26 * PAGE_64K,
            capacity: 0,
            needed: 1
        })
    );
    assert_eq!(small.stats().allocs[0].placement, "OLP");
}

#[test]
fn clap_without_a_fully_mapped_block_falls_back_to_olp() {
    let mut mm = one(20 << 20, PolicyKind::Clap, DriverConfig::default());
    let base = mm.alloc_base(0).0;
    let mut report = None;
    // Seven 64 KB pages in each of the ten blocks: 70 pages > 20 %, no block full.
    'outer: for page in 0..7u64 {
        for blk in 0..10u64 {
            report = fault(
                &mut mm,
                base + blk * PAGE_2M + page * PAGE_64K,
                (blk % 4) as u8,
            )
            .analysis;
            if report.is_some() {
                break 'outer;
            }
        }
    }
    let report = report.expect("PMM ended");
    assert_eq!(report.blocks_analysed, 0);
    assert_eq!(
        report.fallback,
        Some(MmaFallback::InsufficientlyMapped {
            full: 0,
            touched: 10,
            needed: 1
        })
    );
}

#[test]
fn a_full_chiplet_falls_back_to_another() {
    let cfg = DriverConfig {
        frames_per_chiplet: 2 * 512,
        ..DriverConfig::default()
    };
    let mut mm = one(16 << 20, PolicyKind::S64k, cfg);
    let base = mm.alloc_base(0).0;
    let mut elsewhere = 0;
    for page in 0..64u64 {
        if fault(&mut mm, base + page * PAGE_64K, 0).chiplet != ChipletId(0) {
            elsewhere += 1;
        }
    }
    // Chiplet 0 holds 2 PF blocks, one of which also holds the page table.
    assert!(elsewhere > 0 && elsewhere < 64);
    assert_eq!(mm.stats().chiplet_fallbacks, elsewhere);
    assert_eq!(mm.stats().evictions, 0);
}

#[test]
fn static_and_ideal_translations() {
    let mut s4k = one(2 << 20, PolicyKind::S4k, DriverConfig::default());
    let base = s4k.alloc_base(0).0;
    let out = fault(&mut s4k, base + 0x5123, 1);
    assert_eq!((out.va, out.bytes), (Va(base + 0x5000), PAGE_4K));
    let t = s4k.translate(Va(base + 0x5123)).unwrap();
    assert_eq!(
        (t.leaf_bytes, t.tlb_reach_bytes, t.pte.frag()),
        (PAGE_4K, PAGE_4K, 0)
    );
    assert!(s4k.translate(Va(base + 0x6000)).is_none());

    let mut ideal = one(2 << 20, PolicyKind::Ideal, DriverConfig::default());
    let base = ideal.alloc_base(0).0;
    fault(&mut ideal, base, 0);
    let out = fault(&mut ideal, base + PAGE_64K, 3);
    assert_eq!(out.chiplet, ChipletId(3), "64 KB placement");
    let t = ideal.translate(Va(base + PAGE_64K)).unwrap();
    assert_eq!(
        (t.leaf_bytes, t.tlb_reach_bytes, t.leaf_level),
        (PAGE_64K, PAGE_2M, Level::Pdb0)
    );
    assert_eq!(t.chiplet, ChipletId(3));
}

#[test]
fn unknown_policy_names_the_valid_ones_and_bad_addresses_are_errors() {
    let e = "s1g".parse::<PolicyKind>().unwrap_err();
    assert_eq!(
        e.to_string(),
        "unknown policy `s1g` (valid: s4k, s64k, s2m, olp, clap, ideal, s64k-coal, s128k, s256k, \
         s512k, s1m, mgvm, cnuma)"
    );
    let names: Vec<&str> = PolicyKind::ALL.iter().map(|p| p.name()).collect();
    assert_eq!(PolicyKind::NAMES, names.join(", "));
    for p in PolicyKind::ALL {
        assert_eq!(p.name().parse::<PolicyKind>().unwrap(), p);
    }
    let mut mm = one(2 << 20, PolicyKind::S64k, DriverConfig::default());
    assert_eq!(
        mm.handle_fault(Va(0x1000), ChipletId(0), &mut NoRemoteTrackers),
        Err(DriverError::Unallocated(Va(0x1000)))
    );
    let bad = DriverConfig {
        chiplets: 3,
        ..DriverConfig::default()
    };
    let a = [Allocation {
        name: "s".into(),
        bytes: 1,
        stride_hint: None,
        preferred_gpu: false,
        similarity_group: None,
    }];
    assert!(matches!(
        MemoryManager::new(bad, PolicyKind::S64k, &a),
        Err(DriverError::Config {
            key: "chiplets",
            ..
        })
    ));
}
