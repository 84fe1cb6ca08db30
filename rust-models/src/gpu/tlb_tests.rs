//! Tests of the TLB arrays: probes, replacement, shootdowns.

use super::*;

fn spec(ways: u32) -> TlbSpec {
    TlbSpec {
        entries_4k: 4,
        entries_64k: 2,
        entries_2m: 2,
        entries_intermediate: None,
        ways,
        latency: 10,
        lookups_per_cycle: 0,
        misses_in_flight: 0,
    }
}

#[test]
fn coalesced_entry_covers_only_its_masked_pages() {
    let mut t = Tlb::new(&spec(0));
    let va = 0x4010_0000u64; // 1 MB aligned
    let fill = TlbFill {
        class: SizeClass::K64,
        mask: 0b1011,
        pa_base: Some(0x80_0000),
        ready: 5,
        late_mask: 0,
        late_ready: 0,
    };
    t.insert(va + 0x1_0000, &fill);
    let h = t.lookup(va + 0x3_0123).expect("page 3 is covered");
    assert_eq!(h.pa, Some(0x80_0000 + 0x3_0123));
    assert_eq!(h.ready, 5);
    assert!(
        t.lookup(va + 0x2_0000).is_none(),
        "page 2 is not in the mask"
    );
    assert!(t.lookup(va + 0x10_0000).is_none(), "next group");
}

#[test]
fn least_recently_used_way_is_replaced() {
    let mut t = Tlb::new(&spec(0));
    let f = |pa| TlbFill {
        class: SizeClass::K4,
        mask: 1,
        pa_base: Some(pa),
        ready: 0,
        late_mask: 0,
        late_ready: 0,
    };
    let va = |page: u64| crate::addr::Vpn(page).va().0;
    for p in 0..4u64 {
        t.insert(va(p), &f(va(p)));
    }
    assert!(t.lookup(0).is_some()); // page 0 becomes most recent
    t.insert(va(9), &f(0));
    assert!(t.lookup(0).is_some());
    assert!(t.lookup(va(1)).is_none(), "page 1 was the LRU victim");
}

#[test]
fn shootdown_removes_overlapping_entries() {
    let mut t = Tlb::new(&spec(2));
    let fill = TlbFill {
        class: SizeClass::M2,
        mask: 1,
        pa_base: None,
        ready: 0,
        late_mask: 0,
        late_ready: 0,
    };
    t.insert(0x20_0000, &fill);
    assert!(t.lookup(0x20_1000).is_some_and(|h| h.pa.is_none()));
    t.invalidate(0x3f_f000, 0x40_0000);
    assert!(t.lookup(0x20_1000).is_none());
}

/// The fixed-width probes (8, 16 and 32 ways) and the general one find the first way
/// a way-by-way scan finds, hit or miss (fixed seed).
#[test]
fn probe_finds_the_first_matching_way_at_every_associativity() {
    let mut draws = crate::workload::rng::XorShift::new(0x7f4a_7c15_9e37_79b9); // fixed seed
    let mut rng = move || draws.next_u64();
    for (entries, ways) in [
        (8, 0),
        (16, 0),
        (32, 0),
        (64, 16),
        (64, 8),
        (12, 3),
        (96, 0),
    ] {
        for _ in 0..200 {
            let mut a = TlbArray::new(SizeClass::K64, entries, ways);
            a.merging = rng() % 2 == 0;
            for _ in 0..(rng() % 120) {
                let va = (rng() % 24) << 20 | (rng() % 16) << 16;
                let fill = TlbFill {
                    class: SizeClass::K64,
                    mask: (rng() & rng()) as u16 | 1 << ((va >> 16) & 15),
                    pa_base: Some((rng() % 4) << 20),
                    ready: 0,
                    late_mask: 0,
                    late_ready: 0,
                };
                a.insert(va, &fill, rng() % 1000);
            }
            for _ in 0..50 {
                let tag = rng() % 24;
                let bit = 1u16 << (rng() % 16);
                let s = a.set_start(tag);
                let expect =
                    (s..s + a.ways).find(|&w| a.masks[w] & bit != 0 && a.entries[w].tag == tag);
                assert_eq!(a.find(s, tag, bit, |_| true), expect, "{entries}/{ways}");
            }
        }
    }
}

/// A shootdown empties exactly the valid entries whose group overlaps the range, in
/// fully associative and set-associative arrays, for ranges of one tag to more tags
/// than sets (fixed seed).
#[test]
fn shootdown_empties_exactly_the_overlapping_entries() {
    let mut draws = crate::workload::rng::XorShift::new(0x1357_9bdf_2468_ace0); // fixed seed
    let mut rng = move || draws.next_u64();
    for (entries, ways) in [(32, 0), (64, 16), (16, 4)] {
        for class in SizeClass::ALL {
            for _ in 0..300 {
                let mut a = TlbArray::new(class, entries, ways);
                let gs = class.group_shift();
                for _ in 0..(rng() % 80) {
                    let va = (rng() % 64) << gs | (rng() % 16) << class.page_shift();
                    let fill = TlbFill {
                        class,
                        mask: 1 << (rng() % 16),
                        pa_base: None,
                        ready: 0,
                        late_mask: 0,
                        late_ready: 0,
                    };
                    a.insert(va, &fill, rng() % 1000);
                }
                let before: Vec<(u64, u16)> = a
                    .entries
                    .iter()
                    .map(|e| e.tag)
                    .zip(a.masks.clone())
                    .collect();
                // Mostly one to five groups; sometimes more groups than sets.
                let start = rng() % (64 << gs);
                let len = if rng() % 4 == 0 { 64 << gs } else { 5 << gs };
                let end = start + 1 + rng() % len;
                a.invalidate(start, end);
                let mut occupied = 0;
                for (w, &(tag, mask)) in before.iter().enumerate() {
                    let overlaps = tag << gs < end && start < (tag + 1) << gs;
                    let keep = mask != 0 && !overlaps;
                    assert_eq!(a.masks[w] != 0, keep, "way {w} of {start:#x}..{end:#x}");
                    occupied += keep as usize;
                }
                assert_eq!(a.occupied, occupied);
            }
        }
    }
}

#[test]
fn without_merging_same_offset_pages_take_their_own_ways() {
    let mut t = Tlb::new(&spec(0));
    let va = 0x4010_0000u64; // 1 MB aligned
    for page in 0..2u64 {
        let fill = TlbFill::new(SizeClass::K64, 1 << page, Some(0x80_0000), 5);
        t.insert(va + (page << 16), &fill);
    }
    assert_eq!(t.merges(), 0);
    let h = t.lookup(va + 0x1_0000).expect("page 1 is in the TLB");
    assert_eq!(h.entry.mask, 0b10, "its own entry");
}

#[test]
fn a_merged_page_is_usable_from_its_own_fill_and_the_old_pages_stay_as_they_were() {
    let mut t = Tlb::new(&spec(0));
    t.set_merging(true);
    let va = 0x4010_0000u64;
    t.insert(
        va,
        &TlbFill::new(SizeClass::K64, 0b0001, Some(0x80_0000), 100),
    );
    // A later fill (a coalesced line read after page 1 was mapped) widens the entry.
    t.insert(
        va,
        &TlbFill::new(SizeClass::K64, 0b0011, Some(0x80_0000), 900),
    );
    assert_eq!(t.merges(), 1);
    assert_eq!(t.lookup(va).map(|h| h.ready), Some(100), "page 0 as before");
    let h = t.lookup(va + 0x1_0000).expect("page 1 merged");
    assert_eq!(h.ready, 900, "page 1 only once its fill completes");
    // An L1 fill from that hit keeps both parts; past the late cycle they are one.
    let l1 = h.entry.not_before(120);
    assert_eq!((l1.ready, l1.late_mask, l1.late_ready), (120, 0b10, 900));
    let l1 = h.entry.not_before(1000);
    assert_eq!((l1.ready, l1.late_mask), (1000, 0));
    // A merge that completes earlier than the entry delays nothing and brings nothing
    // forward: page 2 is usable from the entry's own cycle.
    t.insert(
        va,
        &TlbFill::new(SizeClass::K64, 0b0100, Some(0x80_0000), 50),
    );
    assert_eq!(t.lookup(va + 0x2_0000).map(|h| h.ready), Some(100));
    assert_eq!(t.lookup(va).map(|h| h.ready), Some(100));
    // A second late merge: pages 1 and 3 wait for the later of the two fills.
    t.insert(
        va,
        &TlbFill::new(SizeClass::K64, 0b1000, Some(0x80_0000), 1200),
    );
    assert_eq!(t.lookup(va + 0x3_0000).map(|h| h.ready), Some(1200));
    assert_eq!(t.lookup(va + 0x1_0000).map(|h| h.ready), Some(1200));
    assert_eq!(t.lookup(va).map(|h| h.ready), Some(100));
}

/// CLAP Fig. 6's extra TLBs: with the repository's L2 spec (512 intermediate entries,
/// 16-way), a 256 KB static page is one entry of the 256 KB array translating its four
/// 64 KB pages; the next 256 KB misses; 512 pages fit, the 513th of a set evicts its LRU.
#[test]
fn a_256k_page_is_one_l2_entry_covering_four_64k_pages() {
    let l2 = TlbSpec {
        entries_4k: 1024,
        entries_64k: 512,
        entries_2m: 256,
        entries_intermediate: Some(512),
        ways: 16,
        latency: 80,
        lookups_per_cycle: 0,
        misses_in_flight: 0,
    };
    assert_eq!(l2.intermediate_entries(), 512);
    let mut t = Tlb::new(&l2);
    let va = 0x1_0004_0000u64; // 256 KB aligned
    let pa = 0x20_00c0_0000u64;
    t.insert(va, &TlbFill::new(SizeClass::K256, 1, Some(pa), 7));
    for k in 0..4u64 {
        let off = (k << 16) + 0x1234;
        let h = t.lookup(va + off).expect("inside the 256 KB page");
        assert_eq!(h.class, SizeClass::K256);
        assert_eq!(h.pa, Some(pa + off));
        assert_eq!(h.ready, 7);
    }
    assert!(t.lookup(va + (256 << 10)).is_none(), "the next 256 KB page");
    assert!(t.lookup(va - 1).is_none(), "the previous one");
    // 512 entries in 32 sets of 16: 512 pages of consecutive tags all fit.
    let mut t = Tlb::new(&l2);
    for p in 0..512u64 {
        t.insert(p << 18, &TlbFill::new(SizeClass::K256, 1, Some(p << 18), 0));
    }
    assert!((0..512u64).all(|p| t.lookup(p << 18).is_some()));
    // One more page in set 0 evicts set 0's least recently used way (page 0, looked up
    // first above), nothing else.
    t.insert(512 << 18, &TlbFill::new(SizeClass::K256, 1, Some(0), 0));
    assert!(t.lookup(0).is_none());
    assert!((1..=512u64).all(|p| t.lookup(p << 18).is_some()));
    // The default is the 64 KB TLB's size (16 in L1, 512 in L2, as the paper's).
    let l1 = TlbSpec {
        entries_intermediate: None,
        entries_64k: 16,
        ..l2
    };
    assert_eq!(l1.intermediate_entries(), 16);
}

#[test]
fn intermediate_classes_have_their_page_sizes_and_single_page_groups() {
    for (c, bytes, label) in [
        (SizeClass::K128, 128u64 << 10, "128K"),
        (SizeClass::K256, 256 << 10, "256K"),
        (SizeClass::K512, 512 << 10, "512K"),
        (SizeClass::M1, 1 << 20, "1M"),
    ] {
        assert_eq!(1u64 << c.page_shift(), bytes);
        assert_eq!(c.group_shift(), c.page_shift());
        assert_eq!(SizeClass::intermediate(bytes), Some(c));
        assert_eq!(c.label(), label);
        // CLAP's regions of these sizes stay in the 64 KB TLB.
        assert_eq!(SizeClass::for_reach(bytes), SizeClass::K64);
    }
    assert_eq!(SizeClass::intermediate(64 << 10), None);
    assert_eq!(SizeClass::intermediate(2 << 20), None);
}
