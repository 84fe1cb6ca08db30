//! Physical frames, managed in 2 MB PF blocks (CLAP §4.1).
//!
//! Physical addresses interleave chiplets at 2 MB, so global PF block `g` (frames
//! `512 g .. 512 g + 512`) belongs to chiplet `g % chiplets`. A PF block is free, held
//! whole (a 2 MB frame or reservation), or split into frames of ONE size (4 KB … 1 MB);
//! frames of a split block carry a free bitmap. Free lists are per chiplet, per frame size
//! and per owner (the data structure, or the page table): §4.7's per-structure free lists,
//! so one PF block never mixes structures and returns whole when they are gone. A split
//! block whose frames are all free again goes back to its chiplet's free PF blocks.

use crate::addr::{ChipletId, Pfn};
use std::collections::{BTreeSet, HashMap};

/// Frames per PF block (2 MB / 4 KB).
pub const BLOCK_FRAMES: u64 = 512;
/// log2 of a 2 MB frame in 4 KB frames.
pub const LOG_2M: u8 = 9;
/// Owner of page-table pages in the free lists.
pub const PT_OWNER: u16 = u16::MAX;

#[derive(Debug, Clone)]
enum BlockState {
    Free,
    /// One 2 MB frame (a 2 MB page or reservation) of `owner`.
    Whole {
        owner: u16,
    },
    /// Frames of `1 << size_log` 4 KB frames; `free` has one bit per frame.
    Split {
        size_log: u8,
        owner: u16,
        free: [u64; 8],
        free_count: u16,
    },
}

/// Key of a free list: chiplet, frame size (log2 of 4 KB frames), owner.
type ListKey = (u8, u8, u16);

/// Every 4 KB frame of the GPU, in PF blocks. See the module documentation.
#[derive(Debug, Clone)]
pub struct PhysMem {
    chiplets: u32,
    blocks: Vec<BlockState>,
    free_blocks: Vec<Vec<u32>>,
    partial: HashMap<ListKey, BTreeSet<u32>>,
}

impl PhysMem {
    /// `chiplets` (a power of two) with `blocks_per_chiplet` PF blocks each.
    pub fn new(chiplets: u32, blocks_per_chiplet: u64) -> Self {
        let total = chiplets as u64 * blocks_per_chiplet;
        let mut free_blocks = vec![Vec::new(); chiplets as usize];
        // Pop order = lowest address first, which keeps runs easy to read in tests.
        for g in (0..total as u32).rev() {
            free_blocks[(g % chiplets) as usize].push(g);
        }
        PhysMem {
            chiplets,
            blocks: vec![BlockState::Free; total as usize],
            free_blocks,
            partial: HashMap::new(),
        }
    }

    pub fn chiplets(&self) -> u32 {
        self.chiplets
    }
    /// All 4 KB frames.
    pub fn total_frames(&self) -> u64 {
        self.blocks.len() as u64 * BLOCK_FRAMES
    }
    /// Free PF blocks of `chiplet`.
    pub fn free_blocks(&self, chiplet: ChipletId) -> usize {
        self.free_blocks[chiplet.0 as usize].len()
    }
    /// PF blocks not free (whole or split): the paper's "PF blocks consumed".
    pub fn used_blocks(&self) -> u64 {
        self.blocks.len() as u64 - self.free_blocks.iter().map(|v| v.len() as u64).sum::<u64>()
    }
    /// Free 4 KB frames on `chiplet`, in free PF blocks and in split blocks.
    pub fn free_frames_on(&self, chiplet: ChipletId) -> u64 {
        let mut n = self.free_blocks(chiplet) as u64 * BLOCK_FRAMES;
        for (k, set) in &self.partial {
            if k.0 == chiplet.0 {
                for &g in set {
                    if let BlockState::Split {
                        size_log,
                        free_count,
                        ..
                    } = self.blocks[g as usize]
                    {
                        n += (free_count as u64) << size_log;
                    }
                }
            }
        }
        n
    }
    /// Free 4 KB frames on every chiplet.
    pub fn free_frames(&self) -> u64 {
        (0..self.chiplets)
            .map(|c| self.free_frames_on(ChipletId(c as u8)))
            .sum()
    }

    /// Whether `chiplet` can supply a frame of `size_log` for `owner` without falling back.
    pub fn can_alloc(&self, chiplet: ChipletId, size_log: u8, owner: u16) -> bool {
        !self.free_blocks[chiplet.0 as usize].is_empty()
            || (size_log < LOG_2M
                && self
                    .partial
                    .get(&(chiplet.0, size_log, owner))
                    .is_some_and(|s| !s.is_empty()))
    }

    /// A naturally aligned frame of `1 << size_log` 4 KB frames on `chiplet` for `owner`:
    /// from a split block of that size and owner, else by splitting a free PF block.
    pub fn alloc(&mut self, chiplet: ChipletId, size_log: u8, owner: u16) -> Option<Pfn> {
        debug_assert!(size_log <= LOG_2M);
        if size_log == LOG_2M {
            let g = self.free_blocks[chiplet.0 as usize].pop()?;
            self.blocks[g as usize] = BlockState::Whole { owner };
            return Some(Pfn(g as u64 * BLOCK_FRAMES));
        }
        let key = (chiplet.0, size_log, owner);
        let g = match self.partial.get(&key).and_then(|s| s.first().copied()) {
            Some(g) => g,
            None => {
                let g = self.free_blocks[chiplet.0 as usize].pop()?;
                let n = (BLOCK_FRAMES >> size_log) as u16;
                let mut free = [0u64; 8];
                for i in 0..n as usize {
                    free[i / 64] |= 1 << (i % 64);
                }
                self.blocks[g as usize] = BlockState::Split {
                    size_log,
                    owner,
                    free,
                    free_count: n,
                };
                self.partial.entry(key).or_default().insert(g);
                g
            }
        };
        let BlockState::Split {
            free, free_count, ..
        } = &mut self.blocks[g as usize]
        else {
            unreachable!("partial lists hold split blocks only");
        };
        let word = free
            .iter()
            .position(|w| *w != 0)
            .expect("a partial block has a free frame");
        let bit = free[word].trailing_zeros() as usize;
        free[word] &= !(1 << bit);
        *free_count -= 1;
        if *free_count == 0 {
            self.partial.get_mut(&key).map(|s| s.remove(&g));
        }
        let index = (word * 64 + bit) as u64;
        Some(Pfn(g as u64 * BLOCK_FRAMES + (index << size_log)))
    }

    /// Like [`PhysMem::alloc`], falling back to the chiplet with the most free memory when
    /// `chiplet` is full (CLAP §4.7 "chiplet memory exhausted").
    pub fn alloc_near(&mut self, chiplet: ChipletId, size_log: u8, owner: u16) -> Option<Pfn> {
        if let Some(p) = self.alloc(chiplet, size_log, owner) {
            return Some(p);
        }
        let mut order: Vec<u8> = (0..self.chiplets as u8)
            .filter(|&c| c != chiplet.0)
            .collect();
        order.sort_by_key(|&c| core::cmp::Reverse(self.free_blocks[c as usize].len()));
        order
            .into_iter()
            .find_map(|c| self.alloc(ChipletId(c), size_log, owner))
    }

    /// Return a frame of `1 << size_log` frames obtained from `alloc`.
    pub fn free(&mut self, pfn: Pfn, size_log: u8) {
        let g = (pfn.0 / BLOCK_FRAMES) as u32;
        let chiplet = (g % self.chiplets) as u8;
        match &mut self.blocks[g as usize] {
            BlockState::Whole { .. } => {
                debug_assert_eq!(size_log, LOG_2M);
                self.blocks[g as usize] = BlockState::Free;
                self.free_blocks[chiplet as usize].push(g);
            }
            BlockState::Split {
                size_log: s,
                owner,
                free,
                free_count,
            } => {
                debug_assert_eq!(*s, size_log, "frame freed with the wrong size");
                let index = ((pfn.0 % BLOCK_FRAMES) >> size_log) as usize;
                debug_assert!(
                    free[index / 64] & (1 << (index % 64)) == 0,
                    "double free of {pfn}"
                );
                free[index / 64] |= 1 << (index % 64);
                *free_count += 1;
                let key = (chiplet, *s, *owner);
                let all_free = *free_count as u64 == BLOCK_FRAMES >> *s;
                if all_free {
                    self.partial.get_mut(&key).map(|set| set.remove(&g));
                    self.blocks[g as usize] = BlockState::Free;
                    self.free_blocks[chiplet as usize].push(g);
                } else {
                    self.partial.entry(key).or_default().insert(g);
                }
            }
            BlockState::Free => debug_assert!(false, "free of {pfn} in a free PF block"),
        }
    }

    /// Turn a whole 2 MB frame into frames of `size_log`, keeping the frames whose bit is
    /// set in `used` (one bit per frame) allocated and freeing the rest: an OLP release.
    pub fn split_whole(&mut self, block_pfn: Pfn, size_log: u8, used: &[bool]) {
        let g = (block_pfn.0 / BLOCK_FRAMES) as u32;
        let BlockState::Whole { owner } = self.blocks[g as usize] else {
            debug_assert!(false, "split of a block that is not whole");
            return;
        };
        let n = (BLOCK_FRAMES >> size_log) as usize;
        debug_assert_eq!(used.len(), n);
        self.blocks[g as usize] = BlockState::Split {
            size_log,
            owner,
            free: [0; 8],
            free_count: 0,
        };
        for (i, &u) in used.iter().enumerate() {
            if !u {
                self.free(Pfn(block_pfn.0 + ((i as u64) << size_log)), size_log);
            }
        }
    }

    /// Whether the 4 KB frame `pfn` is free (for audits).
    pub fn is_free(&self, pfn: Pfn) -> bool {
        let g = (pfn.0 / BLOCK_FRAMES) as usize;
        match &self.blocks[g] {
            BlockState::Free => true,
            BlockState::Whole { .. } => false,
            BlockState::Split { size_log, free, .. } => {
                let i = ((pfn.0 % BLOCK_FRAMES) >> size_log) as usize;
                free[i / 64] & (1 << (i % 64)) != 0
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_interleave_chiplets_and_split_blocks_return_whole() {
        let mut m = PhysMem::new(4, 2);
        let a = m.alloc(ChipletId(1), 4, 0).unwrap();
        assert_eq!(a, Pfn(512), "chiplet 1's first PF block is global block 1");
        assert_eq!(a.chiplet(4), ChipletId(1));
        let b = m.alloc(ChipletId(1), 4, 0).unwrap();
        assert_eq!(b, Pfn(512 + 16), "next 64 KB frame of the same block");
        let other_owner = m.alloc(ChipletId(1), 4, 1).unwrap();
        assert_eq!(
            other_owner,
            Pfn(5 * 512),
            "another structure splits its own block"
        );
        assert_eq!(m.free_blocks(ChipletId(1)), 0);
        assert_eq!(m.free_frames_on(ChipletId(1)), 1024 - 48);
        m.free(a, 4);
        m.free(b, 4);
        m.free(other_owner, 4);
        assert_eq!(m.free_blocks(ChipletId(1)), 2);
        assert_eq!(m.free_frames(), 8 * 512);
    }

    #[test]
    fn full_chiplet_falls_back_to_the_emptiest_other_chiplet() {
        let mut m = PhysMem::new(2, 1);
        m.alloc(ChipletId(0), LOG_2M, 0).unwrap();
        assert!(m.alloc(ChipletId(0), 4, 0).is_none());
        let p = m.alloc_near(ChipletId(0), 4, 0).unwrap();
        assert_eq!(p.chiplet(2), ChipletId(1));
    }

    #[test]
    fn olp_split_keeps_used_frames_and_frees_the_rest() {
        let mut m = PhysMem::new(1, 1);
        let r = m.alloc(ChipletId(0), LOG_2M, 0).unwrap();
        let mut used = vec![false; 32];
        used[3] = true;
        m.split_whole(r, 4, &used);
        assert_eq!(m.free_frames(), 512 - 16);
        assert!(!m.is_free(Pfn(3 * 16)) && m.is_free(Pfn(0)));
        m.free(Pfn(3 * 16), 4);
        assert_eq!(m.free_blocks(ChipletId(0)), 1);
    }
}
