//! Unmapping: clear leaves, and free tables left empty so the table shrinks with the
//! mapped pages (eviction, migration and OLP release all unmap).

use super::{check_va, Level, PageTable, PageTableError, PtWrite, TablePageSource, NO_CHILD, ROOT};
use crate::addr::Vpn;
use crate::pte::Pte;

/// Where the entry for a VPN sits: its table, level and index, and whether it is a leaf.
struct Slot {
    tid: u32,
    level: Level,
    index: usize,
    leaf: bool,
}

impl PageTable {
    /// The deepest existing entry on the path to `vpn` (a leaf or an invalid entry).
    fn slot(&self, vpn: u64) -> Slot {
        let mut tid = ROOT;
        loop {
            let t = &self.tables[tid as usize];
            let index = t.level.index(vpn);
            let e = t.entries[index];
            let leaf = e.valid() && (t.level == Level::Ptb || e.pde_as_pte());
            if !e.valid() || leaf {
                return Slot {
                    tid,
                    level: t.level,
                    index,
                    leaf,
                };
            }
            tid = t.children[index];
        }
    }

    /// Unmap `pages` pages from `start`. Unmapped pages in the range are skipped; a huge
    /// page only partly inside the range is refused before anything changes. Returns one
    /// write per run of cleared entries (fragment 0, the entries become invalid).
    pub fn unmap(
        &mut self,
        start: Vpn,
        pages: u64,
        src: &mut dyn TablePageSource,
    ) -> Result<Vec<PtWrite>, PageTableError> {
        let end = check_va(start, pages)?;
        // Pass 1: refuse to split a huge page.
        self.check_no_split(start, pages, end)?;
        // Pass 2: clear.
        let mut writes = Vec::new();
        let mut v = start.0;
        while v < end {
            let s = self.slot(v);
            let size = 1u64 << s.level.shift();
            let first = v & !(size - 1);
            if !s.leaf {
                v = first + size;
                continue;
            }
            let (write, next) = self.clear_run(&s, first, end);
            writes.extend(write);
            self.prune(s.tid, src);
            v = next;
        }
        Ok(writes)
    }

    /// A huge leaf only partly inside `start..end` (VPNs) is an error.
    fn check_no_split(&self, start: Vpn, pages: u64, end: u64) -> Result<(), PageTableError> {
        let mut v = start.0;
        while v < end {
            let s = self.slot(v);
            let size = 1u64 << s.level.shift();
            let first = v & !(size - 1);
            if s.leaf && s.level != Level::Ptb && (first < start.0 || first + size > end) {
                return Err(PageTableError::SplitsHugeLeaf {
                    start,
                    pages,
                    leaf: Vpn(first),
                });
            }
            v = first + size;
        }
        Ok(())
    }

    /// Clear the run of leaves of slot `s`'s table from VPN `first` up to `end` or the
    /// table's end: the write for the cleared entries (None if none was a leaf), and the
    /// VPN to go on from.
    fn clear_run(&mut self, s: &Slot, first: u64, end: u64) -> (Option<PtWrite>, u64) {
        // A PDB run may hold pointers to lower tables between huge leaves: the run stops
        // there and the loop descends through the pointer on its next step.
        let table_end = (first | (((super::ENTRIES as u64) << s.level.shift()) - 1)) + 1;
        let run_end = end.min(table_end);
        let count = (run_end - first) >> s.level.shift();
        let mut cleared = 0;
        // Resume after the last whole entry examined, not at `run_end`: a huge leaf
        // followed by a partial block (e.g. a 2 MB leaf then one 4 KB page) must not
        // skip the remainder, which lives at a lower level.
        let mut next = first + (count << s.level.shift());
        let t = &mut self.tables[s.tid as usize];
        for k in 0..count as usize {
            let e = t.entries[s.index + k];
            if e.valid() && (t.level == Level::Ptb || e.pde_as_pte()) {
                t.entries[s.index + k] = Pte::INVALID;
                t.valid -= 1;
                cleared += 1;
            } else if e.valid() {
                next = first + ((k as u64) << s.level.shift());
                break;
            }
        }
        let write = (cleared > 0).then(|| PtWrite {
            level: s.level,
            first_vpn: Vpn(first),
            count: cleared,
            frag: 0,
            pde_as_pte: s.level != Level::Ptb,
        });
        (write, next)
    }

    /// Free `tid` and its ancestors while they are empty (never the root).
    fn prune(&mut self, mut tid: u32, src: &mut dyn TablePageSource) {
        while tid != ROOT && self.tables[tid as usize].valid == 0 {
            let (parent, idx) = self.tables[tid as usize].parent;
            self.free_subtree(tid, src);
            let p = &mut self.tables[parent as usize];
            p.entries[idx as usize] = Pte::INVALID;
            p.children[idx as usize] = NO_CHILD;
            p.valid -= 1;
            tid = parent;
        }
    }
}
