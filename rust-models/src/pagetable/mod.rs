//! The amdgpu-style 4-level GPU page table: PDB2 → PDB1 → PDB0 → PTB, 9 bits per level
//! above a 4 KB page (block size 9), so a 48-bit virtual address space.
//!
//! | level | entry covers | as a leaf |
//! |-------|--------------|-----------|
//! | PTB   | 4 KB         | 4 KB page |
//! | PDB0  | 2 MB         | 2 MB huge page (PDE-as-PTE) |
//! | PDB1  | 1 GB         | 1 GB giant page (PDE-as-PTE) |
//! | PDB2  | 512 GB       | never a leaf here (the root) |
//!
//! [`PageTable::map`] follows amdgpu: the range is cut into fragments (largest power of two
//! allowed by the start's alignment and the remaining length, capped by `max_frag`), each
//! fragment is written at the level whose entry size fits it, FRAG is written into every
//! entry, and a fragment of 2 MB or more becomes PDE-as-PTE entries with no PTB below
//! (a table that was there is freed, as amdgpu frees the children of a new huge page).
//!
//! Tables live in an arena and are reached through child indices, so the table grows with
//! mapped pages, never with the virtual address space, and a walk is four array reads.
//! Every table occupies a 4 KB frame from a [`TablePageSource`]; walks report the physical
//! address of the entry read at each level so the GPU model can tell local from remote.

mod fragment;
mod leaf_line;
mod level;
mod map;
mod relocate;
mod table_pages;
mod unmap;

pub use fragment::{fragments, leaf_level, next_fragment, Fragment};
pub use leaf_line::{LeafEntry, LINE_PTES};
pub use level::Level;
pub use table_pages::{SequentialTablePages, TablePageSource};

use crate::addr::{Pa, Pfn, Vpn};
use crate::pte::{Pte, PteFlags, FRAG_MAX};
use serde::Serialize;

/// Entries per table (block size 9).
pub const ENTRIES: usize = 512;
/// VPN bits of the 48-bit virtual address space (48 - 12).
pub const VPN_BITS: u32 = 36;
const NO_CHILD: u32 = u32::MAX;
const ROOT: u32 = 0;

/// What a mapping points at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MapTarget {
    /// Contiguous VRAM frames starting at this frame (page `i` → frame + `i`).
    Frames(Pfn),
    /// Host (system) memory starting at this host frame; always fragment 0.
    System(Pfn),
}

/// How to map.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MapOpts {
    /// Fragment cap: 31 on GMC v9 and later, `fragment_size` (9) before.
    pub max_frag: u32,
    /// Always descend to the PTB (no PDE-as-PTE), as before GMC v9.
    pub no_huge: bool,
    /// Permissions; `system`/`snooped` are forced on for [`MapTarget::System`].
    pub flags: PteFlags,
    /// Allocation ID written into the ignored PTE bits (0 = none).
    pub alloc_id: u8,
}

impl Default for MapOpts {
    fn default() -> Self {
        MapOpts {
            max_frag: FRAG_MAX,
            no_huge: false,
            flags: PteFlags::VRAM_RWX,
            alloc_id: 0,
        }
    }
}

/// One page-table update: `count` consecutive entries of one table at `level`, the first
/// of which maps `first_vpn`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct PtWrite {
    pub level: Level,
    pub first_vpn: Vpn,
    pub count: u64,
    pub frag: u32,
    /// The entries are directory entries used as leaves (huge pages).
    pub pde_as_pte: bool,
}

/// A leaf entry found by a lookup.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Leaf {
    pub pte: Pte,
    pub level: Level,
    /// First VPN the entry maps (the looked-up VPN aligned down to the entry size).
    pub first_vpn: Vpn,
}

impl Leaf {
    /// Frame holding `vpn` (which must lie under this leaf).
    pub fn pfn_of(&self, vpn: Vpn) -> Pfn {
        Pfn(self.pte.pfn().0 + (vpn.0 - self.first_vpn.0))
    }
}

/// A page walk: the physical address of the entry read at each level, root first, and the
/// leaf if the VPN is mapped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Walk {
    /// `reads[..depth]` are the entry addresses read (PDB2 first).
    pub reads: [Pa; 4],
    pub depth: usize,
    pub leaf: Option<Leaf>,
    /// The leaf table page and entry the walk read last, when it ended in a PTB (mapped
    /// or not): what [`PageTable::group_ptes`] reads the coalescer's PTEs from.
    pub leaf_entry: Option<LeafEntry>,
}

impl Walk {
    /// The entry addresses read, root first.
    pub fn reads(&self) -> &[Pa] {
        &self.reads[..self.depth]
    }
}

/// Why a page-table operation was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PageTableError {
    #[error("VPN range {start}+{pages:#x} leaves the 48-bit virtual address space")]
    VaOutOfRange { start: Vpn, pages: u64 },
    #[error("frame range {pfn}+{pages:#x} leaves the 48-bit physical address space")]
    PaOutOfRange { pfn: Pfn, pages: u64 },
    #[error("max fragment {0} does not fit the 5-bit FRAG field (0..=31)")]
    BadMaxFrag(u32),
    #[error("VPN {0} lies under a huge page; unmap the huge page first")]
    UnderHugeLeaf(Vpn),
    #[error("unmapping {start}+{pages:#x} would split the huge page at {leaf}")]
    SplitsHugeLeaf { start: Vpn, pages: u64, leaf: Vpn },
    #[error("no free frame for a page-table page")]
    OutOfTablePages,
}

struct Table {
    level: Level,
    pfn: Pfn,
    entries: Box<[Pte; ENTRIES]>,
    /// Arena index of the table below each entry (directories only; empty for a PTB).
    children: Vec<u32>,
    /// Valid entries (leaves and pointers).
    valid: u16,
    /// Arena index and entry of the parent directory (unused for the root).
    parent: (u32, u16),
}

/// The page table. See the module documentation.
pub struct PageTable {
    tables: Vec<Table>,
    free_slots: Vec<u32>,
    live: u64,
}

impl core::fmt::Debug for PageTable {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "PageTable {{ pt_pages: {} }}", self.live)
    }
}

impl PageTable {
    /// An empty table: only the root PDB2, whose frame comes from `src`.
    pub fn new(src: &mut dyn TablePageSource) -> Result<Self, PageTableError> {
        let mut pt = PageTable {
            tables: Vec::new(),
            free_slots: Vec::new(),
            live: 0,
        };
        let root = pt.new_table(Level::Pdb2, (0, 0), src)?;
        debug_assert_eq!(root, ROOT);
        Ok(pt)
    }

    /// Number of 4 KB page-table pages in use (root included).
    pub fn pt_pages(&self) -> u64 {
        self.live
    }

    /// The leaf mapping `vpn`, if any (the fast path: four array reads at most).
    #[inline]
    pub fn lookup(&self, vpn: Vpn) -> Option<Leaf> {
        let mut t = &self.tables[ROOT as usize];
        loop {
            let i = t.level.index(vpn.0);
            let e = t.entries[i];
            if !e.valid() {
                return None;
            }
            if t.level == Level::Ptb || e.pde_as_pte() {
                let mask = (1u64 << t.level.shift()) - 1;
                return Some(Leaf {
                    pte: e,
                    level: t.level,
                    first_vpn: Vpn(vpn.0 & !mask),
                });
            }
            t = &self.tables[t.children[i] as usize];
        }
    }

    /// Walk to `vpn`, recording the physical address of every entry read.
    pub fn walk(&self, vpn: Vpn) -> Walk {
        let mut w = Walk {
            reads: [Pa(0); 4],
            depth: 0,
            leaf: None,
            leaf_entry: None,
        };
        let mut tid = ROOT;
        loop {
            let t = &self.tables[tid as usize];
            let i = t.level.index(vpn.0);
            w.reads[w.depth] = Pa(t.pfn.pa().0 + i as u64 * 8);
            w.depth += 1;
            if t.level == Level::Ptb {
                w.leaf_entry = Some(LeafEntry::new(tid, i));
            }
            let e = t.entries[i];
            if !e.valid() {
                return w;
            }
            if t.level == Level::Ptb || e.pde_as_pte() {
                let mask = (1u64 << t.level.shift()) - 1;
                w.leaf = Some(Leaf {
                    pte: e,
                    level: t.level,
                    first_vpn: Vpn(vpn.0 & !mask),
                });
                return w;
            }
            tid = t.children[i];
        }
    }

    /// Frame mapping `vpn`, if any.
    pub fn translate(&self, vpn: Vpn) -> Option<Pfn> {
        self.lookup(vpn).map(|l| l.pfn_of(vpn))
    }

    fn new_table(
        &mut self,
        level: Level,
        parent: (u32, u16),
        src: &mut dyn TablePageSource,
    ) -> Result<u32, PageTableError> {
        let pfn = src
            .alloc_table_page()
            .ok_or(PageTableError::OutOfTablePages)?;
        let children = if level == Level::Ptb {
            Vec::new()
        } else {
            vec![NO_CHILD; ENTRIES]
        };
        self.live += 1;
        if let Some(slot) = self.free_slots.pop() {
            let t = &mut self.tables[slot as usize];
            t.level = level;
            t.pfn = pfn;
            t.entries.fill(Pte::INVALID);
            t.children = children;
            t.valid = 0;
            t.parent = parent;
            return Ok(slot);
        }
        self.tables.push(Table {
            level,
            pfn,
            entries: Box::new([Pte::INVALID; ENTRIES]),
            children,
            valid: 0,
            parent,
        });
        Ok((self.tables.len() - 1) as u32)
    }

    /// Free table `tid` and everything below it, returning their frames to `src`.
    fn free_subtree(&mut self, tid: u32, src: &mut dyn TablePageSource) {
        let children: Vec<u32> = self.tables[tid as usize]
            .children
            .iter()
            .copied()
            .filter(|&c| c != NO_CHILD)
            .collect();
        for c in children {
            self.free_subtree(c, src);
        }
        let t = &mut self.tables[tid as usize];
        src.free_table_page(t.pfn);
        t.children.clear();
        t.valid = 0;
        self.free_slots.push(tid);
        self.live -= 1;
    }
}

/// End VPN of `start + pages`, checked against the 48-bit virtual address space.
fn check_va(start: Vpn, pages: u64) -> Result<u64, PageTableError> {
    match start.0.checked_add(pages) {
        Some(end) if end <= 1u64 << VPN_BITS => Ok(end),
        _ => Err(PageTableError::VaOutOfRange { start, pages }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> (PageTable, SequentialTablePages) {
        let mut src = SequentialTablePages::new(Pfn(0x10_0000));
        (PageTable::new(&mut src).unwrap(), src)
    }

    #[test]
    fn walk_reads_one_entry_per_level_down_to_the_leaf() {
        let (mut pt, mut src) = table();
        pt.map(
            Vpn(0x123),
            1,
            MapTarget::Frames(Pfn(7)),
            &MapOpts::default(),
            &mut src,
        )
        .unwrap();
        let w = pt.walk(Vpn(0x123));
        assert_eq!(w.depth, 4);
        // Root is the first table frame; entry 0 (VPN 0x123 >> 27 = 0).
        assert_eq!(w.reads[0], Pa(0x10_0000 << 12));
        // PTB entry 0x123 of the fourth table frame.
        assert_eq!(w.reads[3], Pa(((0x10_0000 + 3) << 12) + 0x123 * 8));
        assert_eq!(w.leaf.unwrap().pfn_of(Vpn(0x123)), Pfn(7));
        assert_eq!(pt.walk(Vpn(0x124)).leaf, None);
        assert_eq!(
            pt.walk(Vpn(1 << 27)).depth,
            1,
            "an empty root entry stops the walk"
        );
    }
}
