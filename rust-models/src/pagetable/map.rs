//! Mapping: cut the range into fragments, write each at the level its size fits (creating
//! directories on the way, freeing a table under a new huge page), one write per
//! table-sized segment.

use super::{
    check_va, fragments, leaf_level, Fragment, Level, MapOpts, MapTarget, PageTable,
    PageTableError, PtWrite, TablePageSource, ENTRIES, NO_CHILD, ROOT,
};
use crate::addr::{Pfn, Vpn};
use crate::pte::{Pte, PteFlags, FRAG_MAX, PFN_BITS};

impl MapTarget {
    /// The first frame, whether it is system memory, and the PTE flags (`system` and
    /// `snooped` forced on for system memory).
    fn resolve(self, opts: &MapOpts) -> (Pfn, bool, PteFlags) {
        match self {
            MapTarget::Frames(p) => (p, false, opts.flags),
            MapTarget::System(p) => (
                p,
                true,
                PteFlags {
                    system: true,
                    snooped: true,
                    ..opts.flags
                },
            ),
        }
    }
}

impl PageTable {
    /// Map `pages` 4 KB pages from `start` to `target`, amdgpu style; returns the writes.
    /// Entries already there are overwritten; a table under a new huge page is freed.
    /// A range that would put small pages under an existing huge page is refused before
    /// anything is written. If `src` runs out of frames the range may be half mapped.
    pub fn map(
        &mut self,
        start: Vpn,
        pages: u64,
        target: MapTarget,
        opts: &MapOpts,
        src: &mut dyn TablePageSource,
    ) -> Result<Vec<PtWrite>, PageTableError> {
        let end = check_va(start, pages)?;
        if opts.max_frag > FRAG_MAX {
            return Err(PageTableError::BadMaxFrag(opts.max_frag));
        }
        let (base, system, flags) = target.resolve(opts);
        if base
            .0
            .checked_add(pages)
            .is_none_or(|e| e > 1u64 << PFN_BITS)
        {
            return Err(PageTableError::PaOutOfRange { pfn: base, pages });
        }
        let frags = fragments(start.0, end, opts.max_frag, system);
        for f in &frags {
            self.check_no_huge_above(f, leaf_level(f.frag, opts.no_huge))?;
        }
        let mut writes = Vec::new();
        // Page `vpn` of the range maps to frame `base + (vpn - start)`.
        let leaf_of = |vpn: u64, frag: u32| {
            Pte::leaf(Pfn(base.0 + (vpn - start.0)), flags, frag, opts.alloc_id)
        };
        for f in frags {
            let level = leaf_level(f.frag, opts.no_huge);
            self.write_fragment(&f, level, &leaf_of, src, &mut writes)?;
        }
        Ok(writes)
    }

    /// Write fragment `f`'s leaves at `level` (`leaf_of` gives each one's PTE), one
    /// table-sized segment at a time, and append one write per segment.
    fn write_fragment(
        &mut self,
        f: &Fragment,
        level: Level,
        leaf_of: &impl Fn(u64, u32) -> Pte,
        src: &mut dyn TablePageSource,
        writes: &mut Vec<PtWrite>,
    ) -> Result<(), PageTableError> {
        let span = (ENTRIES as u64) << level.shift();
        let mut v = f.start;
        while v < f.end {
            let seg_end = f.end.min((v | (span - 1)) + 1);
            let tid = self.ensure_table(level, v, src)?;
            let first = level.index(v);
            let count = (seg_end - v) >> level.shift();
            for k in 0..count as usize {
                let vpn = v + ((k as u64) << level.shift());
                let mut pte = leaf_of(vpn, f.frag);
                if level != Level::Ptb {
                    pte = pte.as_huge_leaf();
                }
                self.set_leaf(tid, first + k, pte, src);
            }
            writes.push(PtWrite {
                level,
                first_vpn: Vpn(v),
                count,
                frag: f.frag,
                pde_as_pte: level != Level::Ptb,
            });
            v = seg_end;
        }
        Ok(())
    }

    /// Refuse a fragment written at `level` under a huge leaf of a higher level.
    fn check_no_huge_above(&self, f: &Fragment, level: Level) -> Result<(), PageTableError> {
        // One probe per table-sized span is enough: all VPNs of a span share the path.
        let span_shift = level.shift() + 9;
        let mut v = f.start;
        while v < f.end {
            let mut t = &self.tables[ROOT as usize];
            while t.level < level {
                let i = t.level.index(v);
                let e = t.entries[i];
                if !e.valid() {
                    break;
                }
                if e.pde_as_pte() {
                    return Err(PageTableError::UnderHugeLeaf(Vpn(v)));
                }
                t = &self.tables[t.children[i] as usize];
            }
            v = ((v >> span_shift) + 1) << span_shift;
        }
        Ok(())
    }

    /// The table at `level` covering `vpn`, creating directories on the way.
    fn ensure_table(
        &mut self,
        level: Level,
        vpn: u64,
        src: &mut dyn TablePageSource,
    ) -> Result<u32, PageTableError> {
        let mut tid = ROOT;
        while self.tables[tid as usize].level < level {
            let t = &self.tables[tid as usize];
            let i = t.level.index(vpn);
            let child = t.children[i];
            tid = if child != NO_CHILD {
                child
            } else {
                let child_level = t.level.child().expect("a directory has a child level");
                let new = self.new_table(child_level, (tid, i as u16), src)?;
                let pfn = self.tables[new as usize].pfn;
                let t = &mut self.tables[tid as usize];
                debug_assert!(
                    !t.entries[i].valid(),
                    "huge leaves are refused before writing"
                );
                t.entries[i] = Pte::directory(pfn);
                t.children[i] = new;
                t.valid += 1;
                new
            };
        }
        Ok(tid)
    }

    /// Write a leaf into entry `i` of table `tid`, freeing a table that hung there.
    fn set_leaf(&mut self, tid: u32, i: usize, pte: Pte, src: &mut dyn TablePageSource) {
        let t = &mut self.tables[tid as usize];
        let was_valid = t.entries[i].valid();
        let child = t.children.get(i).copied().unwrap_or(NO_CHILD);
        if child != NO_CHILD {
            t.children[i] = NO_CHILD;
            self.free_subtree(child, src);
        }
        let t = &mut self.tables[tid as usize];
        t.entries[i] = pte;
        if !was_valid {
            t.valid += 1;
        }
    }
}
