//! MGvm-style placement of leaf page-table pages (`mgvm`).
//!
//! CLAP's unified-virtual-memory section (§2) says PTE pages are distributed over the
//! chiplets' memory by a PTE-page mapping policy, and its baseline follows MGvm [87]
//! ("PTE pages distributed over the chiplets, to reduce remote accesses during walks").
//! MGvm places page tables, with TLB entries, where the data they translate lives. Under
//! every other policy a page-table page comes from the chiplet whose fault created it
//! (the first toucher of its 2 MB VA block). Under `mgvm` the PTB of a VA block follows
//! its data: after each mapping into the block, if another chiplet now holds strictly
//! more of the block's mapped 64 KB pages than the PTB's chiplet, the PTB moves there
//! (its entries copied, the PDB0 entry repointed; counted as `pt_rehomes`).
//!
//! Not modelled (MGvm's other half): its TLB-entry placement across chiplets (CLAP's
//! baseline has chiplet-private L2 TLBs) and its static analysis; the majority is
//! measured from the pages mapped so far, and the move costs no GPU time (a driver
//! action overlapped with the fault's 3 µs, like the mapping itself).

use super::manager::MemoryManager;
use super::phys::PT_OWNER;
use super::DriverError;
use crate::addr::{ChipletId, Pfn, Vpn};
use crate::pagetable::{Level, TablePageSource};

/// Page-table frames from one chiplet only (a move elsewhere would not be a move home).
struct OnChiplet<'a> {
    phys: &'a mut super::phys::PhysMem,
    chiplet: ChipletId,
}

impl TablePageSource for OnChiplet<'_> {
    fn alloc_table_page(&mut self) -> Option<Pfn> {
        self.phys.alloc(self.chiplet, 0, PT_OWNER)
    }
    fn free_table_page(&mut self, pfn: Pfn) {
        self.phys.free(pfn, 0);
    }
}

impl MemoryManager {
    /// After a mapping into VA block `b`: move its PTB to the chiplet holding most of the
    /// block's mapped 64 KB pages, if that is not where it is (`mgvm` only).
    pub(super) fn rehome_ptb(&mut self, b: usize) -> Result<(), DriverError> {
        if !self.policy.kind().ptes_follow_data() {
            return Ok(());
        }
        let first = Vpn(self.block_first_vpn(b));
        let Some(ptb) = self.pt.table_frame(first, Level::Ptb) else {
            return Ok(());
        };
        let Some(tree) = self.blocks[b].tree.as_deref() else {
            return Ok(());
        };
        let chiplets = self.cfg.chiplets;
        let mut counts = vec![0u32; chiplets as usize];
        for leaf in 0..super::mma::BLOCK_LEAVES {
            if let Some(c) = tree.leaf(leaf) {
                counts[c.0 as usize] += 1;
            }
        }
        let here = ptb.chiplet(chiplets).0 as usize;
        // The first chiplet with the most pages; ties keep the PTB where it is.
        let (best, &most) = counts
            .iter()
            .enumerate()
            .max_by_key(|&(c, &n)| (n, std::cmp::Reverse(c)))
            .unwrap_or((here, &0));
        if most <= counts[here] {
            return Ok(());
        }
        let mut src = OnChiplet {
            phys: &mut self.phys,
            chiplet: ChipletId(best as u8),
        };
        match self.pt.relocate_table(first, Level::Ptb, &mut src) {
            Ok(Some(_)) => self.n.pt_rehomes += 1,
            // That chiplet has no free frame: the PTB stays.
            Ok(None) | Err(crate::pagetable::PageTableError::OutOfTablePages) => {}
            Err(e) => return Err(e.into()),
        }
        Ok(())
    }
}
