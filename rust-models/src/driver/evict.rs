//! Migration to host (oversubscription) and the frame audit used by the tests.

use super::manager::MemoryManager;
use super::phys::BLOCK_FRAMES;
use super::state::{bit, TableFrames};
use super::{alloc_id, DriverError, Eviction};
use crate::addr::{ChipletId, Pfn, Va, Vpn, PAGE_4K};
use std::collections::HashSet;

impl MemoryManager {
    /// The least recently mapped VA block with pages on the GPU, other than `exclude`'s.
    pub fn least_recently_mapped_block(&self, exclude: Option<Va>) -> Option<Va> {
        let skip = exclude.and_then(|va| self.block_index(va));
        self.lru
            .values()
            .map(|&b| b as usize)
            .find(|&b| Some(b) != skip)
            .map(|b| Vpn(self.block_first_vpn(b)).va())
    }

    /// Migrate the 2 MB VA block holding `va` to host: unmap all its pages, return their
    /// frames and reservations, and forget its mode (its pages are placed afresh when they
    /// fault back). The caller shoots down `va .. va + 2 MB` in the TLBs.
    pub fn evict_block(&mut self, va: Va) -> Result<Eviction, DriverError> {
        let b = self.block_index(va).ok_or(DriverError::Unallocated(va))?;
        Ok(self.evict_index(b))
    }

    pub(super) fn evict_lru(&mut self, exclude: Option<usize>) -> Option<Eviction> {
        let b = self
            .lru
            .values()
            .map(|&b| b as usize)
            .find(|&b| Some(b) != exclude)?;
        Some(self.evict_index(b))
    }

    fn evict_index(&mut self, b: usize) -> Eviction {
        let bf = self.block_first_vpn(b);
        let blk = &self.blocks[b];
        let bytes = blk.mapped_pages as u64 * PAGE_4K;
        // Frames to return: live reservations whole, other pages one by one at their size.
        let mut frames: Vec<(Pfn, u8)> = Vec::new();
        if let Some(mode) = blk.mode {
            let page_log = mode.page_log();
            let region_log = mode.region_log();
            for (r, res) in blk.reservations.iter().enumerate() {
                if let (Some(res), Some(rl)) = (res, region_log) {
                    debug_assert!(r < (BLOCK_FRAMES >> rl) as usize);
                    frames.push((res.pfn, rl));
                }
            }
            let covered = |page: u64| match region_log {
                Some(rl) => blk
                    .reservations
                    .get((page >> rl) as usize)
                    .is_some_and(|r| r.is_some()),
                None => false,
            };
            let mut page = 0;
            while page < BLOCK_FRAMES {
                if bit(&blk.mapped, page) && !covered(page) {
                    if let Some(pfn) = self.pt.translate(Vpn(bf + page)) {
                        frames.push((pfn, page_log));
                    }
                }
                page += 1 << page_log;
            }
        }
        let toucher = ChipletId(0);
        let mut src = TableFrames {
            phys: &mut self.phys,
            chiplet: toucher,
        };
        // A whole block never splits a huge page, so the unmap cannot be refused.
        let unmapped = self.pt.unmap(Vpn(bf), BLOCK_FRAMES, &mut src);
        debug_assert!(unmapped.is_ok());
        for (pfn, log) in frames {
            self.phys.free(pfn, log);
        }
        let blk = &mut self.blocks[b];
        blk.mapped = [0; 8];
        blk.mapped_pages = 0;
        blk.reservations.clear();
        blk.mode = None;
        blk.tree = None;
        self.allocs[blk.alloc as usize].mapped_bytes -= bytes;
        self.lru_forget(b);
        self.n.evictions += 1;
        Eviction {
            va: Vpn(bf).va(),
            bytes,
        }
    }

    /// Audit every frame: each mapped page translates to a frame that is not free, lies in
    /// its region's reservation if it has one, carries its allocation ID, and no frame is
    /// mapped twice; unmapped pages of touched blocks do not translate; and free + mapped
    /// + reserved-but-unmapped + page-table frames = all frames. For tests: O(mapped).
    pub fn check_invariants(&self) -> Result<(), String> {
        let mut seen: HashSet<u64> = HashSet::new();
        let mut mapped = 0u64;
        let mut reserved_unused = 0u64;
        for (b, blk) in self.blocks.iter().enumerate() {
            let bf = self.block_first_vpn(b);
            let rl = blk.mode.and_then(|m| m.region_log());
            for (r, res) in blk.reservations.iter().enumerate() {
                let (Some(res), Some(rl)) = (res, rl) else {
                    continue;
                };
                for i in 0..1u64 << rl {
                    if !bit(&blk.mapped, ((r as u64) << rl) + i) {
                        reserved_unused += 1;
                        if self.phys.is_free(Pfn(res.pfn.0 + i)) {
                            return Err(format!(
                                "reserved frame {} is on a free list",
                                res.pfn.0 + i
                            ));
                        }
                    }
                }
            }
            if blk.mapped_pages as u32 != blk.mapped.iter().map(|w| w.count_ones()).sum::<u32>() {
                return Err(format!(
                    "block {b}: mapped-page count disagrees with its bitmap"
                ));
            }
            for page in 0..BLOCK_FRAMES {
                let vpn = Vpn(bf + page);
                let leaf = self.pt.lookup(vpn);
                if !bit(&blk.mapped, page) {
                    if leaf.is_some() {
                        return Err(format!("VPN {vpn} translates but was never mapped"));
                    }
                    continue;
                }
                let leaf = leaf.ok_or_else(|| format!("mapped VPN {vpn} does not translate"))?;
                let pfn = leaf.pfn_of(vpn);
                mapped += 1;
                if !seen.insert(pfn.0) {
                    return Err(format!("frame {pfn} is mapped twice (again at VPN {vpn})"));
                }
                if self.phys.is_free(pfn) {
                    return Err(format!("VPN {vpn} maps frame {pfn}, which is free"));
                }
                if leaf.pte.alloc_id() != alloc_id(blk.alloc) {
                    return Err(format!(
                        "VPN {vpn} carries allocation ID {}",
                        leaf.pte.alloc_id()
                    ));
                }
                if let Some(rl) = rl {
                    if let Some(Some(res)) = blk.reservations.get((page >> rl) as usize) {
                        let expect = res.pfn.0 + (page & ((1 << rl) - 1));
                        if pfn.0 != expect {
                            return Err(format!("VPN {vpn} maps {pfn} outside its reservation"));
                        }
                    }
                }
            }
        }
        let total = self.phys.total_frames();
        let free = self.phys.free_frames();
        let pt = self.pt.pt_pages();
        if free + mapped + reserved_unused + pt != total {
            return Err(format!(
                "frames not conserved: free {free} + mapped {mapped} + reserved {reserved_unused} + page table {pt} != {total}"
            ));
        }
        let accounted: u64 = self.allocs.iter().map(|a| a.mapped_bytes).sum();
        if accounted != mapped * PAGE_4K {
            return Err(format!(
                "structures account {accounted} bytes, {} mapped",
                mapped * PAGE_4K
            ));
        }
        Ok(())
    }
}
