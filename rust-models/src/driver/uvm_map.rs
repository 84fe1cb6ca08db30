//! Mapping for the UVM path on the GPU model. There the UVM driver (`crate::uvm`) decides
//! which 4 KB pages are on the GPU — migrations, prefetches, evictions — and the memory
//! manager only places and maps exactly those pages; it never maps a page on its own.
//!
//! Placement follows the policy's region size R (log2 of 4 KB pages: s4k 0, s64k 4,
//! s2m / OLP / CLAP-in-PMM 9): a region gets one contiguous, aligned frame on the chiplet
//! of the fault that brought its first page in, and its pages map into it at their
//! offsets, so a fully migrated region is physically contiguous. Mappings never use a
//! PDE-as-PTE huge leaf, because UVM evicts single pages and a huge leaf cannot be
//! partly unmapped; a region's translation reach comes from the amdgpu fragment field
//! instead, which is rewritten whenever the region's mapped runs change (an unmap must
//! not leave a neighbour claiming a fragment that covers an unmapped page).

use super::manager::MemoryManager;
use super::phys::{BLOCK_FRAMES, LOG_2M};
use super::policy::BlockMode;
use super::state::{bit, set_bits, Reservation, TableFrames};
use super::{alloc_id, DriverError};
use crate::addr::{ChipletId, Pfn, Va, Vpn, PAGE_4K};
use crate::pagetable::{MapOpts, MapTarget};
use crate::pte::PteFlags;

impl MemoryManager {
    /// Map `pages` 4 KB pages from `va` (inside one 2 MB VA block, none mapped yet) that
    /// the UVM driver migrated to the GPU; a region's frame is reserved on `chiplet` when
    /// this is its first page. Returns the chiplet the pages landed on.
    pub fn map_migrated(
        &mut self,
        va: Va,
        pages: u64,
        chiplet: ChipletId,
    ) -> Result<ChipletId, DriverError> {
        let (b, first) = self.uvm_run(va, pages)?;
        let rl = self.uvm_region_log(b);
        let owner = self.blocks[b].alloc;
        let bf = self.block_first_vpn(b);
        let mut placed = chiplet;
        let mut page = first;
        while page < first + pages {
            let r = ((page - bf) >> rl) as usize;
            let region_first = bf + ((r as u64) << rl);
            let run_end = (first + pages).min(region_first + (1 << rl));
            let res = match self.blocks[b].reservations[r] {
                Some(res) => res,
                None => {
                    let pfn = self
                        .phys
                        .alloc_near(chiplet, rl, owner)
                        .ok_or(DriverError::OutOfMemory)?;
                    let res = Reservation {
                        pfn,
                        toucher: chiplet,
                    };
                    self.blocks[b].reservations[r] = Some(res);
                    res
                }
            };
            placed = res.pfn.chiplet(self.cfg.chiplets);
            let blk = &mut self.blocks[b];
            if (page..run_end).any(|p| bit(&blk.mapped, p - bf)) {
                return Err(DriverError::UvmMapping(format!(
                    "page {:#x} is already mapped",
                    Vpn(page).va().0
                )));
            }
            set_bits(&mut blk.mapped, page - bf, run_end - page, true);
            blk.mapped_pages += (run_end - page) as u16;
            self.allocs[owner as usize].mapped_bytes += (run_end - page) * PAGE_4K;
            self.remap_uvm_region(b, r, rl, res)?;
            self.note_mapped(page, run_end - page);
            page = run_end;
        }
        self.lru_touch(b);
        Ok(placed)
    }

    /// Unmap `pages` 4 KB pages from `va` (inside one 2 MB VA block) that the UVM driver
    /// evicted; a region whose last page goes returns its frame. Returns the pages that
    /// were mapped (the caller shoots down `va .. va + pages * 4 KB`).
    pub fn unmap_evicted(&mut self, va: Va, pages: u64) -> Result<u64, DriverError> {
        let (b, first) = self.uvm_run(va, pages)?;
        let rl = self.uvm_region_log(b);
        let bf = self.block_first_vpn(b);
        let owner = self.blocks[b].alloc as usize;
        let mut src = TableFrames {
            phys: &mut self.phys,
            chiplet: ChipletId(0),
        };
        self.pt.unmap(Vpn(first), pages, &mut src)?;
        let blk = &mut self.blocks[b];
        let was = (first..first + pages)
            .filter(|&p| bit(&blk.mapped, p - bf))
            .count() as u64;
        set_bits(&mut blk.mapped, first - bf, pages, false);
        blk.mapped_pages -= was as u16;
        self.allocs[owner].mapped_bytes -= was * PAGE_4K;
        let r_first = ((first - bf) >> rl) as usize;
        let r_last = ((first + pages - 1 - bf) >> rl) as usize;
        for r in r_first..=r_last {
            let Some(res) = self.blocks[b].reservations[r] else {
                continue;
            };
            let lo = (r as u64) << rl;
            if (lo..lo + (1 << rl)).any(|p| bit(&self.blocks[b].mapped, p)) {
                self.remap_uvm_region(b, r, rl, res)?;
            } else {
                self.blocks[b].reservations[r] = None;
                self.phys.free(res.pfn, rl);
            }
        }
        if self.blocks[b].mapped_pages == 0 {
            self.lru_forget(b);
        }
        Ok(was)
    }

    /// 4 KB pages mapped in all (for audits: the UVM path keeps it equal to its resident
    /// pages).
    pub fn mapped_pages(&self) -> u64 {
        self.blocks.iter().map(|b| b.mapped_pages as u64).sum()
    }

    /// Block index and first VPN of a run that must lie inside one VA block.
    fn uvm_run(&self, va: Va, pages: u64) -> Result<(usize, u64), DriverError> {
        let b = self.block_index(va).ok_or(DriverError::Unallocated(va))?;
        let first = va.vpn().0;
        let bf = self.block_first_vpn(b);
        if pages == 0 || first - bf + pages > BLOCK_FRAMES {
            return Err(DriverError::UvmMapping(format!(
                "{pages} pages from {:#x} leave their 2 MB block",
                va.0
            )));
        }
        Ok((b, first))
    }

    /// The block's region size, fixed from the policy at its first UVM mapping. The block
    /// is recorded as 4 KB pages in regions of that size, which is what the audit
    /// (`check_invariants`) and whole-block eviction understand.
    fn uvm_region_log(&mut self, b: usize) -> u8 {
        if let Some(BlockMode::Fixed {
            page_log: 0,
            region_log,
        }) = self.blocks[b].mode
        {
            return region_log;
        }
        let a = self.blocks[b].alloc as usize;
        let rl = match self.policy.block_mode(self.allocs[a].view()) {
            BlockMode::Opportunistic => LOG_2M,
            BlockMode::Fixed {
                page_log,
                region_log,
            } => page_log.max(region_log),
        };
        let blk = &mut self.blocks[b];
        blk.mode = Some(BlockMode::Fixed {
            page_log: 0,
            region_log: rl,
        });
        blk.reservations = vec![None; (BLOCK_FRAMES >> rl) as usize];
        rl
    }

    /// Rewrite every mapped run of region `r` in one call per run, so each run's fragment
    /// is what amdgpu would compute for it now.
    fn remap_uvm_region(
        &mut self,
        b: usize,
        r: usize,
        rl: u8,
        res: Reservation,
    ) -> Result<(), DriverError> {
        let opts = MapOpts {
            max_frag: self.cfg.max_frag,
            no_huge: true,
            flags: PteFlags::VRAM_RWX,
            alloc_id: alloc_id(self.blocks[b].alloc),
        };
        let bf = self.block_first_vpn(b);
        let lo = (r as u64) << rl;
        let hi = lo + (1 << rl);
        let mut p = lo;
        while p < hi {
            if !bit(&self.blocks[b].mapped, p) {
                p += 1;
                continue;
            }
            let mut e = p + 1;
            while e < hi && bit(&self.blocks[b].mapped, e) {
                e += 1;
            }
            let mut src = TableFrames {
                phys: &mut self.phys,
                chiplet: res.toucher,
            };
            let pfn = Pfn(res.pfn.0 + (p - lo));
            self.pt
                .map(Vpn(bf + p), e - p, MapTarget::Frames(pfn), &opts, &mut src)?;
            p = e;
        }
        Ok(())
    }
}
