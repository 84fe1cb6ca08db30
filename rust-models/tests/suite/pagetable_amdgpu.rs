//! The amdgpu examples of the fragment / huge-page document, and the rules around them.

use mcmvm_models::addr::{Pfn, Vpn};
use mcmvm_models::pagetable::{
    Level, MapOpts, MapTarget, PageTable, PageTableError, PtWrite, SequentialTablePages,
};

fn empty() -> (PageTable, SequentialTablePages) {
    let mut src = SequentialTablePages::new(Pfn(0x80_0000));
    (PageTable::new(&mut src).unwrap(), src)
}

fn w(level: Level, first_vpn: u64, count: u64, frag: u32) -> PtWrite {
    PtWrite {
        level,
        first_vpn: Vpn(first_vpn),
        count,
        frag,
        pde_as_pte: level != Level::Ptb,
    }
}

#[test]
fn aligned_2mb_range_is_one_pde_as_pte_at_pdb0_with_no_ptb() {
    let (mut pt, mut src) = empty();
    let writes = pt
        .map(
            Vpn(0x200),
            512,
            MapTarget::Frames(Pfn(0x1000)),
            &MapOpts::default(),
            &mut src,
        )
        .unwrap();
    assert_eq!(writes, vec![w(Level::Pdb0, 0x200, 1, 9)]);
    // Root, one PDB1, one PDB0 — no PTB.
    assert_eq!(pt.pt_pages(), 3);
    let walk = pt.walk(Vpn(0x3ff));
    assert_eq!(walk.depth, 3, "the walk ends at PDB0");
    let leaf = walk.leaf.unwrap();
    assert_eq!(leaf.level, Level::Pdb0);
    assert!(leaf.pte.pde_as_pte());
    assert_eq!(leaf.pte.frag(), 9);
    assert_eq!(leaf.pfn_of(Vpn(0x3ff)), Pfn(0x11ff));
}

#[test]
fn four_contiguous_16kb_aligned_pages_are_four_ptb_entries_with_frag_2() {
    let (mut pt, mut src) = empty();
    let writes = pt
        .map(
            Vpn(0x104),
            4,
            MapTarget::Frames(Pfn(0x2004)),
            &MapOpts::default(),
            &mut src,
        )
        .unwrap();
    assert_eq!(writes, vec![w(Level::Ptb, 0x104, 4, 2)]);
    assert_eq!(pt.pt_pages(), 4, "root, PDB1, PDB0, PTB");
    for i in 0..4 {
        let leaf = pt.lookup(Vpn(0x104 + i)).unwrap();
        assert_eq!(leaf.level, Level::Ptb);
        assert_eq!(leaf.pte.frag(), 2);
        assert!(!leaf.pte.pde_as_pte());
        assert_eq!(leaf.pfn_of(Vpn(0x104 + i)), Pfn(0x2004 + i));
    }
    assert!(pt.lookup(Vpn(0x108)).is_none());
}

#[test]
fn system_memory_gets_fragment_0_even_when_aligned() {
    let (mut pt, mut src) = empty();
    let writes = pt
        .map(
            Vpn(0x200),
            512,
            MapTarget::System(Pfn(0x200)),
            &MapOpts::default(),
            &mut src,
        )
        .unwrap();
    assert_eq!(writes, vec![w(Level::Ptb, 0x200, 512, 0)]);
    let pte = pt.lookup(Vpn(0x300)).unwrap().pte;
    assert!(pte.system() && pte.snooped() && pte.frag() == 0);
}

#[test]
fn no_huge_descends_to_the_ptb_but_keeps_the_fragment() {
    let (mut pt, mut src) = empty();
    let opts = MapOpts {
        no_huge: true,
        ..MapOpts::default()
    };
    let writes = pt
        .map(
            Vpn(0x400),
            1024,
            MapTarget::Frames(Pfn(0x400)),
            &opts,
            &mut src,
        )
        .unwrap();
    // One 4 MB fragment (frag 10), one write per PTB it spans.
    assert_eq!(
        writes,
        vec![w(Level::Ptb, 0x400, 512, 10), w(Level::Ptb, 0x600, 512, 10)]
    );
    assert_eq!(pt.pt_pages(), 5);
    assert_eq!(pt.walk(Vpn(0x7ff)).depth, 4);
}

#[test]
fn max_frag_caps_the_fragment_and_the_level() {
    let (mut pt, mut src) = empty();
    // A 1 GB-aligned 1 GB range: frag 18 at PDB1 on modern parts …
    let modern = pt
        .map(
            Vpn(1 << 18),
            1 << 18,
            MapTarget::Frames(Pfn(1 << 18)),
            &MapOpts::default(),
            &mut src,
        )
        .unwrap();
    assert_eq!(modern, vec![w(Level::Pdb1, 1 << 18, 1, 18)]);
    // … but 512 PDB0 entries of frag 9 with the old fragment_size = 9.
    let (mut old_pt, mut old_src) = empty();
    let opts = MapOpts {
        max_frag: 9,
        ..MapOpts::default()
    };
    let old = old_pt
        .map(
            Vpn(1 << 18),
            1 << 18,
            MapTarget::Frames(Pfn(1 << 18)),
            &opts,
            &mut old_src,
        )
        .unwrap();
    assert_eq!(old, vec![w(Level::Pdb0, 1 << 18, 512, 9)]);
    // A small cap limits PTB fragments too: 64 KB aligned, frag capped at 2.
    let (mut pt3, mut src3) = empty();
    let opts = MapOpts {
        max_frag: 2,
        ..MapOpts::default()
    };
    let capped = pt3
        .map(Vpn(0x10), 16, MapTarget::Frames(Pfn(0)), &opts, &mut src3)
        .unwrap();
    assert_eq!(capped, vec![w(Level::Ptb, 0x10, 16, 2)]);
}

#[test]
fn unaligned_range_splits_into_fragments_and_levels_as_amdgpu() {
    let (mut pt, mut src) = empty();
    // 0x1ff .. 0x401: a single page, a 2 MB huge page, a single page.
    let writes = pt
        .map(
            Vpn(0x1ff),
            0x202,
            MapTarget::Frames(Pfn(0x1ff)),
            &MapOpts::default(),
            &mut src,
        )
        .unwrap();
    assert_eq!(
        writes,
        vec![
            w(Level::Ptb, 0x1ff, 1, 0),
            w(Level::Pdb0, 0x200, 1, 9),
            w(Level::Ptb, 0x400, 1, 0)
        ]
    );
}

#[test]
fn huge_page_over_small_pages_frees_their_ptb_and_unmap_frees_empty_tables() {
    let (mut pt, mut src) = empty();
    let opts = MapOpts::default();
    for i in 0..32 {
        pt.map(
            Vpn(0x200 + i * 16),
            16,
            MapTarget::Frames(Pfn(0x200 + i * 16)),
            &opts,
            &mut src,
        )
        .unwrap();
    }
    assert_eq!(pt.pt_pages(), 4);
    assert_eq!(pt.lookup(Vpn(0x210)).unwrap().pte.frag(), 4);
    pt.map(
        Vpn(0x200),
        512,
        MapTarget::Frames(Pfn(0x200)),
        &opts,
        &mut src,
    )
    .unwrap();
    assert_eq!(pt.pt_pages(), 3, "promotion freed the PTB");
    assert_eq!(
        pt.unmap(Vpn(0x300), 16, &mut src),
        Err(PageTableError::SplitsHugeLeaf {
            start: Vpn(0x300),
            pages: 16,
            leaf: Vpn(0x200)
        })
    );
    assert_eq!(
        pt.map(Vpn(0x300), 1, MapTarget::Frames(Pfn(9)), &opts, &mut src),
        Err(PageTableError::UnderHugeLeaf(Vpn(0x300)))
    );
    pt.unmap(Vpn(0x200), 512, &mut src).unwrap();
    assert!(pt.lookup(Vpn(0x200)).is_none());
    assert_eq!(pt.pt_pages(), 1, "only the root remains");
}

#[test]
fn out_of_range_inputs_are_errors() {
    let (mut pt, mut src) = empty();
    let opts = MapOpts::default();
    assert!(matches!(
        pt.map(
            Vpn((1 << 36) - 1),
            2,
            MapTarget::Frames(Pfn(0)),
            &opts,
            &mut src
        ),
        Err(PageTableError::VaOutOfRange { .. })
    ));
    assert!(matches!(
        pt.map(
            Vpn(0),
            2,
            MapTarget::Frames(Pfn((1 << 36) - 1)),
            &opts,
            &mut src
        ),
        Err(PageTableError::PaOutOfRange { .. })
    ));
    let bad = MapOpts {
        max_frag: 32,
        ..opts
    };
    assert_eq!(
        pt.map(Vpn(0), 1, MapTarget::Frames(Pfn(0)), &bad, &mut src),
        Err(PageTableError::BadMaxFrag(32))
    );
}
