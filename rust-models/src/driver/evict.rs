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
            for page in (0..BLOCK_FRAMES).step_by(1 << page_log) {
                if bit(&blk.mapped, page) && !covered(page) {
                    if let Some(pfn) = self.pt.translate(Vpn(bf + page)) {
                        frames.push((pfn, page_log));
                    }
                }
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
    pub fn check_invariants(&self) -> Result<(), FrameAuditError> {
        let mut seen: HashSet<u64> = HashSet::new();
        let (mut mapped, mut reserved_unused) = (0u64, 0u64);
        for b in 0..self.blocks.len() {
            reserved_unused += self.audit_reservations(b)?;
            mapped += self.audit_block_pages(b, &mut seen)?;
        }
        let total = self.phys.total_frames();
        let free = self.phys.free_frames();
        let page_table = self.pt.pt_pages();
        if free + mapped + reserved_unused + page_table != total {
            return Err(FrameAuditError::NotConserved {
                free,
                mapped,
                reserved: reserved_unused,
                page_table,
                total,
            });
        }
        let accounted: u64 = self.allocs.iter().map(|a| a.mapped_bytes).sum();
        if accounted != mapped * PAGE_4K {
            return Err(FrameAuditError::BytesAccounted {
                accounted,
                mapped: mapped * PAGE_4K,
            });
        }
        Ok(())
    }

    /// Block `b`'s reserved-but-unmapped frames, none of them free; returns their count.
    fn audit_reservations(&self, b: usize) -> Result<u64, FrameAuditError> {
        let blk = &self.blocks[b];
        let mut reserved_unused = 0u64;
        let Some(rl) = blk.mode.and_then(|m| m.region_log()) else {
            return Ok(0);
        };
        for (r, res) in blk.reservations.iter().enumerate() {
            let Some(res) = res else {
                continue;
            };
            for i in 0..1u64 << rl {
                if !bit(&blk.mapped, ((r as u64) << rl) + i) {
                    reserved_unused += 1;
                    if self.phys.is_free(Pfn(res.pfn.0 + i)) {
                        return Err(FrameAuditError::ReservedFree(res.pfn.0 + i));
                    }
                }
            }
        }
        Ok(reserved_unused)
    }

    /// Block `b`'s pages: mapped ones translate to a frame of their own (recorded in
    /// `seen`), in use, with the block's allocation ID, inside their reservation; unmapped
    /// ones do not translate. Returns the mapped count.
    fn audit_block_pages(&self, b: usize, seen: &mut HashSet<u64>) -> Result<u64, FrameAuditError> {
        let blk = &self.blocks[b];
        let bf = self.block_first_vpn(b);
        let rl = blk.mode.and_then(|m| m.region_log());
        if blk.mapped_pages as u32 != blk.mapped.iter().map(|w| w.count_ones()).sum::<u32>() {
            return Err(FrameAuditError::BlockCount(b));
        }
        let mut mapped = 0u64;
        for page in 0..BLOCK_FRAMES {
            let vpn = Vpn(bf + page);
            let leaf = self.pt.lookup(vpn);
            if !bit(&blk.mapped, page) {
                if leaf.is_some() {
                    return Err(FrameAuditError::TranslatesUnmapped(vpn));
                }
                continue;
            }
            let leaf = leaf.ok_or(FrameAuditError::MappedUntranslated(vpn))?;
            let pfn = leaf.pfn_of(vpn);
            mapped += 1;
            if !seen.insert(pfn.0) {
                return Err(FrameAuditError::MappedTwice { pfn, vpn });
            }
            if self.phys.is_free(pfn) {
                return Err(FrameAuditError::MapsFree { vpn, pfn });
            }
            if leaf.pte.alloc_id() != alloc_id(blk.alloc) {
                return Err(FrameAuditError::AllocId {
                    vpn,
                    id: leaf.pte.alloc_id(),
                });
            }
            if let Some(rl) = rl {
                if let Some(Some(res)) = blk.reservations.get((page >> rl) as usize) {
                    if pfn.0 != res.pfn.0 + (page & ((1 << rl) - 1)) {
                        return Err(FrameAuditError::OutsideReservation { vpn, pfn });
                    }
                }
            }
        }
        Ok(mapped)
    }
}

/// The first violation [`MemoryManager::check_invariants`] finds.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrameAuditError {
    #[error("reserved frame {0} is on a free list")]
    ReservedFree(u64),
    #[error("block {0}: mapped-page count disagrees with its bitmap")]
    BlockCount(usize),
    #[error("VPN {0} translates but was never mapped")]
    TranslatesUnmapped(Vpn),
    #[error("mapped VPN {0} does not translate")]
    MappedUntranslated(Vpn),
    #[error("frame {pfn} is mapped twice (again at VPN {vpn})")]
    MappedTwice { pfn: Pfn, vpn: Vpn },
    #[error("VPN {vpn} maps frame {pfn}, which is free")]
    MapsFree { vpn: Vpn, pfn: Pfn },
    #[error("VPN {vpn} carries allocation ID {id}")]
    AllocId { vpn: Vpn, id: u8 },
    #[error("VPN {vpn} maps {pfn} outside its reservation")]
    OutsideReservation { vpn: Vpn, pfn: Pfn },
    #[error("frames not conserved: free {free} + mapped {mapped} + reserved {reserved} + page table {page_table} != {total}")]
    NotConserved {
        free: u64,
        mapped: u64,
        reserved: u64,
        page_table: u64,
        total: u64,
    },
    #[error("structures account {accounted} bytes, {mapped} mapped")]
    BytesAccounted { accounted: u64, mapped: u64 },
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::{DriverConfig, PolicyKind, RtDrain};
    use crate::workload::Allocation;

    struct NoRemote;
    impl RtDrain for NoRemote {
        fn drain(&mut self, _id: u8) -> (u64, u64) {
            (0, 0)
        }
    }

    /// One 2 MB structure under `policy` after one fault at its base from `chiplet`, audited.
    fn after_one_fault(policy: PolicyKind, chiplet: ChipletId) -> MemoryManager {
        let allocs = [Allocation::new("a", 2 << 20)];
        let mut mm = MemoryManager::new(DriverConfig::default(), policy, &allocs).unwrap();
        mm.handle_fault(mm.alloc_base(0), chiplet, &mut NoRemote)
            .unwrap();
        mm.check_invariants().unwrap();
        mm
    }

    /// Under S-128KB one fault maps a 64 KB page (4 KB pages 0..16) into a 128 KB
    /// reservation (32 frames). With that reservation put back on the free list behind the
    /// manager's back, the audit names the first reserved-but-unmapped frame: the
    /// reservation's frame 16.
    #[test]
    fn the_audit_names_the_first_free_reserved_frame() {
        let mut mm = after_one_fault(PolicyKind::S128k, ChipletId(1));
        let res = mm.blocks[0].reservations[0].expect("region 0 reserved");
        assert_eq!(mm.blocks[0].mapped_pages, 16);
        mm.phys.free(res.pfn, 5);
        assert_eq!(
            mm.check_invariants(),
            Err(FrameAuditError::ReservedFree(res.pfn.0 + 16))
        );
    }

    /// Under S-128KB, faults at 0 and 128 KB map a 64 KB page into each of the block's first
    /// two reservations. With region 1's reservation recorded at region 0's frames, the
    /// audit finds region 1's first page outside its reservation: the page's region is its
    /// index shifted right by the region size (page 32 is region 1, not region 1024).
    #[test]
    fn the_audit_finds_a_page_outside_a_later_regions_reservation() {
        let mut mm = after_one_fault(PolicyKind::S128k, ChipletId(1));
        let va = Va(mm.alloc_base(0).0 + (128 << 10));
        mm.handle_fault(va, ChipletId(1), &mut NoRemote).unwrap();
        mm.check_invariants().unwrap();
        let region0 = mm.blocks[0].reservations[0].expect("region 0 reserved");
        let vpn = Vpn(mm.block_first_vpn(0) + 32);
        let pfn = mm.pt.lookup(vpn).expect("page 32 mapped").pfn_of(vpn);
        mm.blocks[0].reservations[1]
            .as_mut()
            .expect("region 1 reserved")
            .pfn = region0.pfn;
        assert_eq!(
            mm.check_invariants(),
            Err(FrameAuditError::OutsideReservation { vpn, pfn })
        );
    }

    /// An allocation whose byte count disagrees with its mapped pages is reported with
    /// both sides in bytes: one 64 KB page mapped, 4 KB more accounted.
    #[test]
    fn the_audit_reports_accounted_and_mapped_bytes() {
        let mut mm = after_one_fault(PolicyKind::S64k, ChipletId(0));
        mm.allocs[0].mapped_bytes += PAGE_4K;
        assert_eq!(
            mm.check_invariants(),
            Err(FrameAuditError::BytesAccounted {
                accounted: (16 + 1) * PAGE_4K,
                mapped: 16 * PAGE_4K,
            })
        );
    }
}
