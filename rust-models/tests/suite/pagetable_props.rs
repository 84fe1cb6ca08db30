//! Property tests: any mix of mappings (every fragment, every level, VRAM and system,
//! with and without huge pages, any fragment cap) and unmaps leaves the table translating
//! exactly the pages the last successful operations say, and nothing else.

use mcmvm_models::addr::{Pfn, Vpn};
use mcmvm_models::pagetable::{
    MapOpts, MapTarget, PageTable, PageTableError, SequentialTablePages,
};
use proptest::prelude::*;
use std::collections::BTreeMap;

#[derive(Debug, Clone)]
enum Op {
    Map {
        start: u64,
        pages: u64,
        pfn: u64,
        system: bool,
        max_frag: u32,
        no_huge: bool,
    },
    Unmap {
        start: u64,
        pages: u64,
    },
}

/// Starts and lengths biased towards the alignments that make fragments and huge pages.
fn range(window: u64) -> impl Strategy<Value = (u64, u64)> {
    (
        prop_oneof![Just(0u32), Just(2), Just(4), Just(9), Just(10)],
        0u64..window,
        1u64..=4,
        prop_oneof![Just(0u32), Just(2), Just(4), Just(9)],
    )
        .prop_map(move |(align, pos, mult, len_shift)| {
            let start = (pos >> align) << align;
            let pages = (mult << len_shift).min(window - start).max(1);
            (start, pages)
        })
}

fn op(window: u64) -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (range(window), 0u64..4096, any::<bool>(), prop_oneof![Just(31u32), Just(9), Just(4), Just(0)], prop::bool::weighted(0.2), prop::bool::weighted(0.15))
            .prop_map(|((start, pages), pfn_block, aligned_pfn, max_frag, no_huge, system)| {
                // Frames aligned like the VA (what a driver hands out) or arbitrary.
                let pfn = if aligned_pfn { pfn_block * 4096 + start } else { pfn_block * 977 + 3 };
                Op::Map { start, pages, pfn, system, max_frag, no_huge }
            }),
        1 => range(window).prop_map(|(start, pages)| Op::Unmap { start, pages }),
    ]
}

fn apply(
    pt: &mut PageTable,
    src: &mut SequentialTablePages,
    model: &mut BTreeMap<u64, u64>,
    op: &Op,
) {
    match *op {
        Op::Map {
            start,
            pages,
            pfn,
            system,
            max_frag,
            no_huge,
        } => {
            let target = if system {
                MapTarget::System(Pfn(pfn))
            } else {
                MapTarget::Frames(Pfn(pfn))
            };
            let opts = MapOpts {
                max_frag,
                no_huge,
                ..MapOpts::default()
            };
            match pt.map(Vpn(start), pages, target, &opts, src) {
                Ok(writes) => {
                    let covered: u64 = writes.iter().map(|w| w.count << w.level.shift()).sum();
                    assert_eq!(covered, pages, "the writes cover the range exactly");
                    for i in 0..pages {
                        model.insert(start + i, pfn + i);
                    }
                    for w in &writes {
                        let pte = pt.lookup(w.first_vpn).unwrap().pte;
                        assert_eq!(pte.frag(), w.frag);
                        assert!(w.frag <= max_frag && (!system || w.frag == 0));
                        // A fragment is aligned; one write is the part of it inside one table.
                        let align = w.frag.min(w.level.shift() + 9);
                        assert_eq!(w.first_vpn.0 % (1 << align), 0, "fragments are aligned");
                    }
                }
                Err(e) => assert!(matches!(e, PageTableError::UnderHugeLeaf(_)), "{e}"),
            }
        }
        Op::Unmap { start, pages } => match pt.unmap(Vpn(start), pages, src) {
            Ok(_) => {
                for i in 0..pages {
                    model.remove(&(start + i));
                }
            }
            Err(e) => assert!(matches!(e, PageTableError::SplitsHugeLeaf { .. }), "{e}"),
        },
    }
}

proptest! {
    // Fixed seed: the same 256 cases on every run, so CI is reproducible. Change it (or
    // set PROPTEST_RNG_SEED) to explore more mixes.
    #![proptest_config(ProptestConfig {
        cases: 256,
        rng_seed: proptest::test_runner::RngSeed::Fixed(0x6d63_6d76_6d00_0001),
        ..ProptestConfig::default()
    })]

    #[test]
    fn every_mapped_vpn_translates_to_its_frame_and_nothing_else_does(ops in prop::collection::vec(op(4096), 1..24)) {
        let mut src = SequentialTablePages::new(Pfn(1 << 30));
        let mut pt = PageTable::new(&mut src).unwrap();
        let mut model = BTreeMap::new();
        for op in &ops {
            apply(&mut pt, &mut src, &mut model, op);
            for vpn in 0..4096u64 {
                prop_assert_eq!(pt.translate(Vpn(vpn)).map(|p| p.0), model.get(&vpn).copied(), "VPN {:#x} after {:?}", vpn, op);
            }
        }
        // Unmapping everything leaves only the root: the table shrinks with the mappings.
        pt.unmap(Vpn(0), 4096, &mut src).unwrap();
        prop_assert_eq!(pt.pt_pages(), 1);
    }
}

#[test]
fn giant_pages_at_pdb1_translate_and_unmap() {
    let mut src = SequentialTablePages::new(Pfn(1 << 30));
    let mut pt = PageTable::new(&mut src).unwrap();
    let mut model = BTreeMap::new();
    let gb = 1u64 << 18;
    let ops = [
        Op::Map {
            start: gb,
            pages: gb,
            pfn: 5 * gb,
            system: false,
            max_frag: 31,
            no_huge: false,
        },
        Op::Map {
            start: gb - 16,
            pages: 32,
            pfn: 7,
            system: false,
            max_frag: 31,
            no_huge: false,
        },
        Op::Unmap {
            start: gb + 5,
            pages: 1,
        },
        Op::Unmap {
            start: gb,
            pages: gb,
        },
        Op::Map {
            start: 2 * gb,
            pages: gb + 512,
            pfn: 2 * gb,
            system: false,
            max_frag: 31,
            no_huge: false,
        },
    ];
    for op in &ops {
        apply(&mut pt, &mut src, &mut model, op);
        for vpn in [
            gb - 17,
            gb - 16,
            gb - 1,
            gb,
            gb + 5,
            2 * gb - 1,
            2 * gb,
            3 * gb - 1,
            3 * gb,
            3 * gb + 511,
            3 * gb + 512,
        ] {
            assert_eq!(
                pt.translate(Vpn(vpn)).map(|p| p.0),
                model.get(&vpn).copied(),
                "VPN {vpn:#x} after {op:?}"
            );
        }
    }
    let leaf = pt.lookup(Vpn(2 * gb + 77)).unwrap();
    assert_eq!(leaf.level, mcmvm_models::pagetable::Level::Pdb1);
    assert_eq!(pt.walk(Vpn(2 * gb + 77)).depth, 2);
}

/// Regression (found by the property test): a 2 MB leaf followed by a lone 4 KB page in the
/// next block; unmapping the whole range must also clear the 4 KB page.
#[test]
fn unmap_past_a_huge_leaf_clears_the_trailing_small_page() {
    let mut src = SequentialTablePages::new(Pfn(1 << 30));
    let mut pt = PageTable::new(&mut src).unwrap();
    let mut model = BTreeMap::new();
    let map = Op::Map {
        start: 1025,
        pages: 1024,
        pfn: 3,
        system: false,
        max_frag: 31,
        no_huge: false,
    };
    apply(&mut pt, &mut src, &mut model, &map);
    apply(
        &mut pt,
        &mut src,
        &mut model,
        &Op::Unmap {
            start: 1,
            pages: 2048,
        },
    );
    for vpn in 0..4096u64 {
        assert_eq!(
            pt.translate(Vpn(vpn)).map(|p| p.0),
            model.get(&vpn).copied(),
            "VPN {vpn:#x}"
        );
    }
    assert_eq!(pt.translate(Vpn(0x800)), None);
}
