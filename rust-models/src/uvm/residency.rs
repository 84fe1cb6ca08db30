//! GPU residency of every page: which pages are on the GPU, in which frame, whether they
//! were prefetched and not yet used, dirty, or evicted before; the frame pool of the
//! oversubscribed GPU memory. This is also the GPU page table of the UVM path (page →
//! frame), updated per contiguous run as the driver maps and unmaps.
//!
//! Invariants (checked by `check_invariants`, used by the tests):
//! a page sits in at most one frame and a frame holds at most one page; the resident
//! count never exceeds the capacity; a frame freed by a dirty eviction is reused only
//! after its write-back finished.

use super::mask::PAGES_PER_BLOCK;
use std::collections::VecDeque;

const RESIDENT: u8 = 1;
/// Migrated as a prefetch and not accessed since.
const PREFETCHED_UNUSED: u8 = 2;
const DIRTY: u8 = 4;
/// Evicted at least once (a later migration is thrashing).
const EVER_EVICTED: u8 = 8;
/// Accessed at least once since it was last migrated in.
const ACCESSED: u8 = 16;

const NO_FRAME: u32 = u32::MAX;

/// What evicting one page did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Evicted {
    pub dirty: bool,
    pub prefetched_unused: bool,
}

/// Per-page state and the frame pool.
#[derive(Debug, Clone)]
pub struct Residency {
    flags: Vec<u8>,
    frame_of: Vec<u32>,
    page_of_frame: Vec<u32>,
    /// Cycle at which each frame's pending write-back completes (0 = none).
    frame_ready_at: Vec<u64>,
    /// Free frames, oldest freed first, so a write-back has the longest time to finish.
    free_frames: VecDeque<u32>,
    block_resident: Vec<u16>,
    resident: usize,
    capacity: usize,
    /// Frames taken before their write-back completed (must stay 0).
    pub early_reuses: u64,
}

impl Residency {
    /// `span_pages` pages, `capacity` GPU frames.
    pub fn new(span_pages: usize, capacity: usize) -> Residency {
        Residency {
            flags: vec![0; span_pages],
            frame_of: vec![NO_FRAME; span_pages],
            page_of_frame: vec![NO_FRAME; capacity],
            frame_ready_at: vec![0; capacity],
            free_frames: (0..capacity as u32).collect(),
            block_resident: vec![0; span_pages.div_ceil(PAGES_PER_BLOCK)],
            resident: 0,
            capacity,
            early_reuses: 0,
        }
    }

    #[inline]
    pub fn is_resident(&self, page: usize) -> bool {
        self.flags[page] & RESIDENT != 0
    }
    pub fn resident_pages(&self) -> usize {
        self.resident
    }
    pub fn capacity(&self) -> usize {
        self.capacity
    }
    pub fn free_frames(&self) -> usize {
        self.free_frames.len()
    }
    pub fn block_resident(&self, block: usize) -> usize {
        self.block_resident[block] as usize
    }
    pub fn was_evicted(&self, page: usize) -> bool {
        self.flags[page] & EVER_EVICTED != 0
    }
    /// Accessed since it was last migrated in.
    pub fn was_accessed(&self, page: usize) -> bool {
        self.flags[page] & ACCESSED != 0
    }
    pub fn is_dirty(&self, page: usize) -> bool {
        self.flags[page] & DIRTY != 0
    }
    pub fn frame_of(&self, page: usize) -> Option<u32> {
        let f = self.frame_of[page];
        (f != NO_FRAME).then_some(f)
    }

    /// Record a GPU access to a resident page. Returns true when it was the first use of
    /// a prefetched page.
    #[inline]
    pub fn touch(&mut self, page: usize, write: bool) -> bool {
        let f = &mut self.flags[page];
        let first_use_of_prefetch = *f & PREFETCHED_UNUSED != 0;
        *f = (*f & !PREFETCHED_UNUSED) | ACCESSED | if write { DIRTY } else { 0 };
        first_use_of_prefetch
    }

    /// The earliest cycle at which the next free frame can be written.
    pub fn next_frame_ready_at(&self) -> u64 {
        self.free_frames
            .front()
            .map(|&f| self.frame_ready_at[f as usize])
            .unwrap_or(0)
    }

    /// Map `page` into a free frame whose data arrives at cycle `arrival_start` (the
    /// start of its host-link transfer). Returns false when no frame is free.
    pub fn migrate_in(&mut self, page: usize, prefetched: bool, arrival_start: u64) -> bool {
        debug_assert!(!self.is_resident(page), "page {page} resident twice");
        let Some(frame) = self.free_frames.pop_front() else {
            return false;
        };
        if self.frame_ready_at[frame as usize] > arrival_start {
            self.early_reuses += 1;
        }
        self.frame_of[page] = frame;
        self.page_of_frame[frame as usize] = page as u32;
        let f = &mut self.flags[page];
        *f = (*f & EVER_EVICTED) | RESIDENT | if prefetched { PREFETCHED_UNUSED } else { 0 };
        self.block_resident[page / PAGES_PER_BLOCK] += 1;
        self.resident += 1;
        true
    }

    /// Unmap a resident page; its frame becomes free once `writeback_done` (the end of
    /// its write-back transfer, or now for a clean page) has passed.
    pub fn evict(&mut self, page: usize, writeback_done: u64) -> Evicted {
        debug_assert!(self.is_resident(page));
        let frame = self.frame_of[page];
        self.frame_of[page] = NO_FRAME;
        self.page_of_frame[frame as usize] = NO_FRAME;
        self.frame_ready_at[frame as usize] = writeback_done;
        self.free_frames.push_back(frame);
        let f = self.flags[page];
        self.flags[page] = EVER_EVICTED;
        self.block_resident[page / PAGES_PER_BLOCK] -= 1;
        self.resident -= 1;
        Evicted {
            dirty: f & DIRTY != 0,
            prefetched_unused: f & PREFETCHED_UNUSED != 0,
        }
    }

    /// Check the invariants of the module doc; the first violation.
    pub fn check_invariants(&self) -> Result<(), ResidencyError> {
        if self.resident > self.capacity {
            return Err(ResidencyError::OverCapacity {
                resident: self.resident,
                capacity: self.capacity,
            });
        }
        if self.resident + self.free_frames.len() != self.capacity {
            return Err(ResidencyError::FramesNotConserved {
                resident: self.resident,
                free: self.free_frames.len(),
                capacity: self.capacity,
            });
        }
        let mut counted = 0usize;
        for (page, &frame) in self.frame_of.iter().enumerate() {
            let resident = self.flags[page] & RESIDENT != 0;
            if resident != (frame != NO_FRAME) {
                return Err(ResidencyError::FlagFrameDisagree(page));
            }
            if frame != NO_FRAME {
                counted += 1;
                if self.page_of_frame[frame as usize] != page as u32 {
                    return Err(ResidencyError::FrameMapsBack { frame, page });
                }
            }
        }
        if counted != self.resident {
            return Err(ResidencyError::MappedCount {
                counted,
                resident: self.resident,
            });
        }
        if self.early_reuses != 0 {
            return Err(ResidencyError::EarlyReuse(self.early_reuses));
        }
        Ok(())
    }
}

/// The first invariant [`Residency::check_invariants`] finds violated.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ResidencyError {
    #[error("{resident} pages resident > capacity {capacity}")]
    OverCapacity { resident: usize, capacity: usize },
    #[error("frames not conserved: {resident} resident + {free} free != {capacity}")]
    FramesNotConserved {
        resident: usize,
        free: usize,
        capacity: usize,
    },
    #[error("page {0}: resident flag and frame disagree")]
    FlagFrameDisagree(usize),
    #[error("frame {frame} does not map back to page {page}")]
    FrameMapsBack { frame: u32, page: usize },
    #[error("{counted} mapped pages but resident count {resident}")]
    MappedCount { counted: usize, resident: usize },
    #[error("{0} frames reused before their write-back finished")]
    EarlyReuse(u64),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_are_conserved_and_reused_after_eviction() {
        let mut r = Residency::new(1024, 2);
        assert!(r.migrate_in(0, false, 0));
        assert!(r.migrate_in(1, true, 0));
        assert!(!r.migrate_in(2, false, 0), "memory is full");
        let (f0, f1) = (r.frame_of(0).unwrap(), r.frame_of(1).unwrap());
        assert_ne!(f0, f1);
        assert_eq!(r.frame_of(2), None);
        r.touch(0, true);
        let e = r.evict(0, 500);
        assert!(e.dirty && !e.prefetched_unused);
        let e = r.evict(1, 0);
        assert!(e.prefetched_unused);
        assert!(r.was_evicted(0));
        r.check_invariants().unwrap();
        // The dirty page's frame is reused first, after its write-back (cycle 500).
        assert_eq!(r.next_frame_ready_at(), 500);
        assert!(r.migrate_in(2, false, 600));
        assert!(r.migrate_in(3, false, 600));
        // Oldest freed first: page 2 takes page 0's frame, page 3 page 1's.
        assert_eq!((r.frame_of(2), r.frame_of(3)), (Some(f0), Some(f1)));
        assert_eq!((r.frame_of(0), r.frame_of(1)), (None, None));
        r.check_invariants().unwrap();
    }

    /// The per-2 MB-block resident count (the LRU's "block emptied" test) follows every
    /// migration and eviction.
    #[test]
    fn block_resident_counts_follow_migrations_and_evictions() {
        let mut r = Residency::new(2 * PAGES_PER_BLOCK, 8);
        for p in [0, 1, 2, PAGES_PER_BLOCK + 5] {
            assert!(r.migrate_in(p, false, 0));
        }
        assert_eq!((r.block_resident(0), r.block_resident(1)), (3, 1));
        r.evict(1, 0);
        assert_eq!((r.block_resident(0), r.block_resident(1)), (2, 1));
        r.evict(0, 0);
        r.evict(2, 0);
        r.evict(PAGES_PER_BLOCK + 5, 0);
        assert_eq!((r.block_resident(0), r.block_resident(1)), (0, 0));
        assert_eq!(r.resident_pages(), 0);
        r.check_invariants().unwrap();
    }

    /// "Accessed since it was last migrated in": clear on arrival, set by a touch and kept by
    /// the next, clear again after an eviction and a new migration. Dirty only after a
    /// write; "ever evicted" only after an eviction; an eviction reports what it found.
    #[test]
    fn accessed_flag_is_per_migration() {
        let mut r = Residency::new(16, 2);
        assert!(r.migrate_in(3, true, 0));
        assert!(!r.was_accessed(3));
        assert!(!r.was_evicted(3), "a first migration");
        assert!(r.touch(3, false), "first use of a prefetch");
        assert!(r.was_accessed(3));
        assert!(!r.is_dirty(3), "a read leaves it clean");
        r.touch(3, true);
        assert!(r.was_accessed(3), "a second touch keeps it accessed");
        assert!(r.is_dirty(3));
        let e = r.evict(3, 0);
        assert!(e.dirty && !e.prefetched_unused);
        assert!(r.was_evicted(3));
        assert!(r.migrate_in(3, false, 0));
        assert!(!r.was_accessed(3));
        assert!(r.was_evicted(3), "it stays ever evicted");
        r.touch(3, false);
        let e = r.evict(3, 0);
        assert!(!e.dirty, "read only since its last migration");
    }

    #[test]
    fn reusing_a_frame_before_its_write_back_is_caught() {
        let mut r = Residency::new(16, 1);
        assert!(r.migrate_in(0, false, 0));
        r.touch(0, true);
        r.evict(0, 1000);
        assert!(r.migrate_in(1, false, 999));
        assert!(matches!(
            r.check_invariants(),
            Err(ResidencyError::EarlyReuse(1))
        ));
    }

    /// `touch` answers true once, at the first access of a prefetched page; never for a
    /// page migrated on demand.
    #[test]
    fn touch_reports_only_the_first_use_of_a_prefetch() {
        let mut r = Residency::new(16, 2);
        assert!(r.migrate_in(0, true, 0));
        assert!(r.migrate_in(1, false, 0));
        assert!(r.touch(0, false));
        assert!(!r.touch(0, false));
        assert!(!r.touch(1, true));
    }
}
