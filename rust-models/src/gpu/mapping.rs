//! When each page's mapping completes.
//!
//! The driver writes a page's PTEs when it handles the fault, but the mapping exists for
//! the GPU only once the fault's service is over (for first-touch paging, the configured
//! fault latency after the walk that found no mapping). Every 4 KB page mapped during a
//! fault call is stamped with that completion cycle; whatever uses the translation —
//! a walk that reads the PTE, a TLB entry filled from it, a coalesced line, `ideal`'s
//! page-table lookups — must not use it earlier ([`MapTimes::get`]). A page never stamped
//! (mapped before the run, or by a service that maps nothing) reads 0.
//!
//! Storage grows with the touched VA blocks, not the address space: a 2 MB block's 512
//! stamps are allocated at its first mapping.

use crate::addr::Vpn;

/// 4 KB pages per 2 MB VA block.
const PAGES: usize = 512;

/// Completion cycles of one 2 MB VA block's pages, and the latest of them.
struct Block {
    pages: [u64; PAGES],
    latest: u64,
}

/// Completion cycle of every mapped 4 KB page of the allocations' VA span.
pub(super) struct MapTimes {
    /// The span's first page (2 MB aligned).
    first_vpn: Vpn,
    blocks: Vec<Option<Box<Block>>>,
}

impl MapTimes {
    /// Stamps for the VA span starting at 4 KB page `first_vpn` (2 MB aligned) and
    /// holding `blocks` 2 MB blocks.
    pub fn new(first_vpn: Vpn, blocks: u64) -> MapTimes {
        MapTimes {
            first_vpn,
            blocks: (0..blocks).map(|_| None).collect(),
        }
    }

    /// The block index and page index of `vpn`, if it lies in the span.
    #[inline]
    fn locate(&self, vpn: Vpn) -> Option<(usize, usize)> {
        let off = vpn.0.checked_sub(self.first_vpn.0)?;
        let b = (off / PAGES as u64) as usize;
        (b < self.blocks.len()).then_some((b, (off % PAGES as u64) as usize))
    }

    /// `pages` 4 KB pages from `first` were newly mapped; their mapping completes at
    /// cycle `at`. Pages outside the span are ignored.
    pub fn stamp(&mut self, first: Vpn, pages: u64, at: u64) {
        for vpn in first.0..first.0 + pages {
            let Some((b, p)) = self.locate(Vpn(vpn)) else {
                continue;
            };
            let block = self.blocks[b].get_or_insert_with(|| {
                Box::new(Block {
                    pages: [0; PAGES],
                    latest: 0,
                })
            });
            block.pages[p] = at;
            block.latest = block.latest.max(at);
        }
    }

    /// Cycle the mapping of 4 KB page `vpn` completes (0: never stamped).
    #[inline]
    pub fn get(&self, vpn: Vpn) -> u64 {
        match self.locate(vpn) {
            Some((b, p)) => self.blocks[b].as_ref().map_or(0, |blk| blk.pages[p]),
            None => 0,
        }
    }

    /// The latest completion among `pages` 4 KB pages from `first` (inside one 2 MB
    /// block; a whole block reads its running maximum).
    pub fn latest_in(&self, first: Vpn, pages: u64) -> u64 {
        let Some((b, p)) = self.locate(first) else {
            return 0;
        };
        let Some(blk) = self.blocks[b].as_ref() else {
            return 0;
        };
        if p == 0 && pages >= PAGES as u64 {
            return blk.latest;
        }
        let end = (p + pages as usize).min(PAGES);
        blk.pages[p..end].iter().copied().max().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps_are_per_page_and_blocks_keep_their_latest() {
        let mut m = MapTimes::new(Vpn(0x1000), 2);
        assert_eq!(m.get(Vpn(0x1000)), 0, "nothing stamped yet");
        m.stamp(Vpn(0x1010), 16, 700);
        m.stamp(Vpn(0x1020), 16, 300);
        assert_eq!(m.get(Vpn(0x100f)), 0);
        assert_eq!(m.get(Vpn(0x1010)), 700);
        assert_eq!(m.get(Vpn(0x101f)), 700);
        assert_eq!(m.get(Vpn(0x1020)), 300);
        assert_eq!(m.latest_in(Vpn(0x1000), 16), 0);
        assert_eq!(m.latest_in(Vpn(0x1010), 32), 700);
        assert_eq!(m.latest_in(Vpn(0x1000), 512), 700);
        assert_eq!(m.get(Vpn(0x1200)), 0, "second block untouched");
        // Outside the span: ignored, reads 0.
        m.stamp(Vpn(0x1400), 1, 9);
        assert_eq!(m.get(Vpn(0x1400)), 0);
        assert_eq!(m.get(Vpn(0xfff)), 0);
    }
}

#[cfg(test)]
#[path = "mapping_tests.rs"]
mod run_tests;
