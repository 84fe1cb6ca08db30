//! The leaf line the coalescer merges, read from the page-table page the walker ended in.
//!
//! Layout ([`docs/pte-layout.md`](../../../docs/pte-layout.md)): a PTB is one 4 KB page of
//! 512 eight-byte PTEs, one per 4 KB page, so a 128 B line holds 16 consecutive PTEs: the
//! sixteen 4 KB PTEs (FRAG >= 4) of *one* 64 KB page. The PTEs of the sixteen 64 KB pages
//! of an aligned 1 MB group — the coalescer's input (CLAP §4.6) — are the first PTE of
//! each of those pages: entries `256·g + 16·k` (k = 0..16) of the same PTB, at a 128 B
//! stride. In a leaf table of 64 KB PTEs (NVIDIA's big-page table, which CLAP's
//! GPGPU-Sim baseline has) the same sixteen PTEs are one 128 B line.

use super::{Level, PageTable};
use crate::pte::Pte;

/// PTEs per 128 B line (8 bytes each), and 64 KB pages per coalescing group.
pub const LINE_PTES: usize = 16;

/// A PTB entry a walk read: its table's arena slot and the entry index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LeafEntry {
    table: u32,
    index: u16,
}

impl LeafEntry {
    pub(super) fn new(table: u32, index: usize) -> LeafEntry {
        LeafEntry {
            table,
            index: index as u16,
        }
    }
    /// The entry's index in its PTB (0..512).
    pub fn index(self) -> usize {
        self.index as usize
    }
}

impl PageTable {
    /// The sixteen 64 KB pages' PTEs of the 1 MB group holding the entry `e` a walk read,
    /// as its PTB holds them now: entry `16·k` of the group's 256 (the first 4 KB PTE of
    /// each 64 KB page). `e` must come from a walk of this table with no map or unmap in
    /// between (an entry of a freed table reads as invalid PTEs).
    pub fn group_ptes(&self, e: LeafEntry) -> [Pte; LINE_PTES] {
        let Some(t) = self.tables.get(e.table as usize) else {
            return [Pte::INVALID; LINE_PTES];
        };
        if t.level != Level::Ptb || t.entries.len() < super::ENTRIES {
            return [Pte::INVALID; LINE_PTES];
        }
        let first = e.index() & !(LINE_PTES * LINE_PTES - 1);
        std::array::from_fn(|k| t.entries[first + k * LINE_PTES])
    }
}

#[cfg(test)]
mod tests {
    use super::super::{MapOpts, MapTarget, SequentialTablePages};
    use super::*;
    use crate::addr::{Pfn, Vpn};

    #[test]
    fn the_group_line_holds_the_first_pte_of_each_64k_page_of_the_1m_group() {
        let mut src = SequentialTablePages::new(Pfn(0x10_0000));
        let mut pt = PageTable::new(&mut src).unwrap();
        // 64 KB pages 1 and 3 of the second 1 MB group of a 2 MB block (VPN 0x200 + 0x100).
        let group = 0x300u64;
        for (page, pfn) in [(1u64, 0x5010u64), (3, 0x7030)] {
            pt.map(
                Vpn(group + page * 16),
                16,
                MapTarget::Frames(Pfn(pfn)),
                &MapOpts::default(),
                &mut src,
            )
            .unwrap();
        }
        let w = pt.walk(Vpn(group + 3 * 16 + 5));
        let e = w.leaf_entry.expect("the walk ends in a PTB");
        assert_eq!(e.index(), 0x100 + 3 * 16 + 5);
        let line = pt.group_ptes(e);
        assert_eq!(line[1].pfn(), Pfn(0x5010));
        assert_eq!(line[3].pfn(), Pfn(0x7030));
        assert_eq!(line[1].frag(), 4);
        for k in [0, 2, 4, 15] {
            assert!(!line[k].valid(), "page {k} is not mapped");
        }
        // The walk read the 128 B line of page 3's own sixteen 4 KB PTEs.
        let line_pa = w.reads[3].0 & !127;
        assert_eq!(line_pa % 4096, ((0x100 + 3 * 16) * 8) as u64);
    }
}
