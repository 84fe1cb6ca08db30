//! Migrating a mapped 64 KB page to another chiplet's memory (ideal C-NUMA, `cnuma`).

use super::manager::MemoryManager;
use super::policy::BlockMode;
use super::state::{all_bits, TableFrames};
use super::DriverError;
use crate::addr::{ChipletId, Pfn, Va, Vpn};
use crate::pagetable::{Level, MapTarget};

impl MemoryManager {
    /// The chiplet holding the 64 KB page at `va`, if it is a mapped 64 KB page of a block
    /// with plain 64 KB pages (no reservation region, no huge page).
    pub fn page64_home(&self, va: Va) -> Option<ChipletId> {
        let b = self.block_index(va)?;
        if self.blocks[b].mode != Some(BlockMode::PAGES_64K) {
            return None;
        }
        let leaf = self.pt.lookup(Vpn(va.vpn().0 & !15))?;
        (leaf.level == Level::Ptb && leaf.pte.frag() == 4)
            .then(|| leaf.pte.pfn().chiplet(self.cfg.chiplets))
    }

    /// Move the 64 KB page at `va` to a fresh frame on `to`: its sixteen PTEs are
    /// rewritten to the new frame and the old frame is freed. The mapping stays complete
    /// (the migration is free, as ideal C-NUMA assumes); the caller shoots the page's TLB
    /// entries down. `Ok(false)`: nothing moved (not such a page, already on `to`, or
    /// `to` has no free 64 KB frame).
    pub fn migrate_page64(&mut self, va: Va, to: ChipletId) -> Result<bool, DriverError> {
        let Some(b) = self.block_index(va) else {
            return Ok(false);
        };
        match self.page64_home(va) {
            Some(home) if home != to && (to.0 as u32) < self.cfg.chiplets => {}
            _ => return Ok(false),
        }
        let first = va.vpn().0 & !15;
        let bf = self.block_first_vpn(b);
        if !all_bits(&self.blocks[b].mapped, first - bf, 16) {
            return Ok(false);
        }
        let old = match self.pt.lookup(Vpn(first)) {
            Some(l) => l.pfn_of(Vpn(first)),
            None => return Ok(false),
        };
        let owner = self.blocks[b].alloc;
        let Some(new) = self.phys.alloc(to, 4, owner) else {
            return Ok(false);
        };
        let opts = self.map_opts(b);
        let mut src = TableFrames {
            phys: &mut self.phys,
            chiplet: to,
        };
        if let Err(e) = self
            .pt
            .map(Vpn(first), 16, MapTarget::Frames(new), &opts, &mut src)
        {
            self.phys.free(new, 4);
            return Err(e.into());
        }
        self.phys.free(Pfn(old.0), 4);
        if let Some(tree) = self.blocks[b].tree.as_mut() {
            tree.record(((first - bf) >> 4) as usize, to);
        }
        self.n.migrations += 1;
        Ok(true)
    }
}
