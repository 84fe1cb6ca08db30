//! The GMMU of one chiplet: its chiplet-private L2 TLB, a multi-threaded page-table walker
//! with a page-walk cache, and the two hardware twins that sit beside the walker — the
//! Remote Tracker (CLAP §4.3) and the TLB coalescing logic (CLAP §4.6).
//!
//! The twins are held as `Box<dyn CycleModel>` and driven only through `step` with the
//! port structs of `protocol`, so an RTL engine (rust-hdl or Verilator) can replace either
//! without touching this file (hardware in the loop).
//!
//! A walk, in order:
//! 1. wait for a free walker thread (`walkers_per_chiplet` walks in flight at most);
//! 2. per level, root first: a page-walk-cache hit on a directory entry costs
//!    `pwc_latency`; otherwise the entry's line is read through the memory system — local
//!    or remote depending on which chiplet holds that table page;
//! 3. a leaf whose translation reaches 2 MB or more (a huge page, or `ideal`'s 2 MB
//!    translation cost) ends the walk at PDB0;
//! 4. the completed walk steps the Remote Tracker with the PTE's allocation ID and whether
//!    the page lives on another chiplet than the requester;
//! 5. for a 64 KB leaf, the line of the 16 neighbouring 64 KB pages' PTEs is merged by the
//!    coalescing twin into one TLB entry (the twin's cycles are added to the walk).

use super::config::GpuConfig;
use super::memory::MemSystem;
use crate::pagetable::{Level, PageTable};
use crate::protocol::{CoalIn, CoalOut, CycleModel, RtIn, RtOut};
use crate::pte::Pte;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// A Remote Tracker engine (twin or RTL).
pub type RtEngine = Box<dyn CycleModel<In = RtIn, Out = RtOut>>;
/// A TLB coalescing engine (twin or RTL).
pub type CoalescerEngine = Box<dyn CycleModel<In = CoalIn, Out = CoalOut>>;

/// Cycles to wait for a twin's answer before treating it as absent.
const TWIN_TIMEOUT: u32 = 8;

/// Timing and outcome of one page walk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct WalkTiming {
    /// Cycle the walk completes.
    pub done: u64,
    /// Table entries read from memory (page-walk-cache hits excluded).
    pub levels_read: u32,
    /// Of those, entries on another chiplet's memory.
    pub remote_levels: u32,
    /// Directory levels answered by the page-walk cache.
    pub pwc_hits: u32,
}

/// A coalesced entry produced by the merge unit: 64 KB page numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Coalesced {
    pub base_vpn64: u64,
    pub base_ppn64: u64,
    pub mask: u16,
    /// Cycles the twin took.
    pub cycles: u64,
}

/// Small fully associative LRU cache of directory entries, keyed by level and VA prefix.
#[derive(Debug, Clone)]
struct PageWalkCache {
    keys: Vec<u64>,
    stamps: Vec<u64>,
    clock: u64,
}

impl PageWalkCache {
    fn new(entries: u32) -> PageWalkCache {
        PageWalkCache {
            keys: vec![u64::MAX; entries as usize],
            stamps: vec![0; entries as usize],
            clock: 0,
        }
    }

    /// Hit (and refresh) or miss (and install) the directory entry of `level` over `vpn`.
    fn access(&mut self, level: Level, vpn: u64) -> bool {
        if self.keys.is_empty() {
            return false;
        }
        // The entry read at `level` is the one indexed by the VPN bits above its coverage.
        let key = ((vpn >> (level.shift())) << 2) | level.depth() as u64;
        self.clock += 1;
        if let Some(i) = self.keys.iter().position(|&k| k == key) {
            self.stamps[i] = self.clock;
            return true;
        }
        let victim = (0..self.keys.len())
            .min_by_key(|&i| self.stamps[i])
            .unwrap_or(0);
        self.keys[victim] = key;
        self.stamps[victim] = self.clock;
        false
    }
}

/// One chiplet's GMMU.
pub struct Gmmu {
    chiplet: u32,
    chiplets: u32,
    walker_free: BinaryHeap<Reverse<u64>>,
    pwc: PageWalkCache,
    pwc_latency: u64,
    rt: RtEngine,
    coalescer: Option<CoalescerEngine>,
    /// The chiplet-private L2 TLB.
    pub l2_tlb: super::tlb::Tlb,
}

impl Gmmu {
    /// A GMMU for `chiplet` with the given twin engines (`coalescer` None = coalescing off).
    pub fn new(
        cfg: &GpuConfig,
        chiplet: u32,
        rt: RtEngine,
        coalescer: Option<CoalescerEngine>,
    ) -> Gmmu {
        Gmmu {
            chiplet,
            chiplets: cfg.gpu.chiplets,
            walker_free: (0..cfg.walker.walkers_per_chiplet)
                .map(|_| Reverse(0))
                .collect(),
            pwc: PageWalkCache::new(cfg.walker.pwc_entries),
            pwc_latency: cfg.walker.pwc_latency,
            rt,
            coalescer,
            l2_tlb: super::tlb::Tlb::new(&cfg.l2_tlb),
        }
    }

    /// Time a walk for `vpn` requested at `now`. `leaf_reach` is the bytes the resulting
    /// translation reaches (None when the walk ends in a fault): 2 MB or more stops at PDB0.
    pub fn walk(
        &mut self,
        pt: &PageTable,
        vpn: u64,
        now: u64,
        leaf_reach: Option<u64>,
        mem: &mut MemSystem,
    ) -> WalkTiming {
        // The walker free first takes the walk; its slot in the heap is rewritten in place
        // when the walk's end is known (one sift instead of a pop and a push).
        let mut walker = self.walker_free.peek_mut();
        let mut t = now.max(walker.as_ref().map_or(0, |w| w.0));
        let walk = pt.walk(crate::addr::Vpn(vpn));
        let mut depth = walk.depth;
        if leaf_reach.is_some_and(|r| r >= crate::addr::PAGE_2M) {
            depth = depth.min(Level::Pdb0.depth() + 1);
        }
        let mut out = WalkTiming::default();
        for (i, pa) in walk.reads[..depth].iter().enumerate() {
            let level = Level::ALL[i];
            let is_last = i + 1 == depth;
            if !is_last && self.pwc.access(level, vpn) {
                out.pwc_hits += 1;
                t += self.pwc_latency;
                continue;
            }
            let r = mem.read_line(pa.0, t, self.chiplet);
            out.levels_read += 1;
            out.remote_levels += r.remote as u32;
            t = r.done;
        }
        out.done = t;
        if let Some(w) = walker.as_mut() {
            **w = Reverse(t);
        }
        out
    }

    /// Tell the Remote Tracker a walk completed for a page with `pte`: two cycles, index
    /// then update, so an idle cycle follows the request.
    pub fn track_walk(&mut self, pte: Pte) {
        let remote = pte.chiplet(self.chiplets).0 as u32 != self.chiplet;
        let req = RtIn {
            walk_valid: 1,
            walk_alloc_id: pte.alloc_id() as u64,
            walk_remote: remote as u64,
            ..RtIn::default()
        };
        self.rt.step(&req);
        self.rt.step(&RtIn::default());
    }

    /// Drain (read and clear) the Remote Tracker's counters of `alloc_id`:
    /// (accesses, remote accesses), zeros if the ID is not in the table.
    pub fn drain_rt(&mut self, alloc_id: u8) -> (u64, u64) {
        let req = RtIn {
            drain_valid: 1,
            drain_alloc_id: alloc_id as u64,
            ..RtIn::default()
        };
        let mut out = self.rt.step(&req);
        let mut waited = 0;
        while out.drain_done == 0 && waited < TWIN_TIMEOUT {
            out = self.rt.step(&RtIn::default());
            waited += 1;
        }
        if out.drain_done == 0 || out.drain_hit == 0 {
            return (0, 0);
        }
        (out.drain_access, out.drain_remote)
    }

    /// Merge the line of 16 PTEs around `vpn64` (one per 64 KB page of the aligned 1 MB
    /// group) with the coalescing twin. None if coalescing is off or the twin gives no
    /// answer.
    pub fn coalesce(&mut self, vpn64: u64, line: &[u64; 16]) -> Option<Coalesced> {
        let engine = self.coalescer.as_mut()?;
        let mut req = CoalIn {
            merge_valid: 1,
            merge_vpn: vpn64 & 0xffff_ffff,
            ..CoalIn::default()
        };
        req.set_ptes(line);
        let mut out = engine.step(&req);
        let mut cycles = 1;
        while out.merge_done == 0 && cycles < TWIN_TIMEOUT as u64 {
            out = engine.step(&CoalIn::default());
            cycles += 1;
        }
        if out.merge_done == 0 || out.merge_mask == 0 {
            return None;
        }
        // The twin's ports are 32 bits wide: restore the VPN bits above them.
        let base_vpn64 = (vpn64 & !0xffff_ffff) | out.merge_base_vpn;
        Some(Coalesced {
            base_vpn64,
            base_ppn64: out.merge_base_ppn,
            mask: out.merge_mask as u16,
            cycles,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_walk_cache_hits_the_same_directory_entry_only() {
        let mut p = PageWalkCache::new(2);
        assert!(!p.access(Level::Pdb0, 0x200));
        assert!(p.access(Level::Pdb0, 0x3ff), "same 2 MB region");
        assert!(!p.access(Level::Pdb0, 0x400), "next 2 MB region");
        assert!(!p.access(Level::Pdb1, 0x200), "other level");
        assert!(!p.access(Level::Pdb0, 0x200), "evicted as LRU");
    }
}
