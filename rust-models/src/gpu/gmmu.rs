//! The GMMU of one chiplet: a multi-threaded page-table walker
//! with a page-walk cache, and the two hardware twins that sit beside the walker — the
//! Remote Tracker (CLAP §4.3) and the TLB coalescing logic (CLAP §4.6).
//!
//! Both blocks are [`ClockedBlock`]s in system time: each input is applied at the GPU cycle
//! it arrives (a completed walk at the walk's end, a drain at the fault that ends PMM), and
//! the engine behind it — the behavioural twin, rust-hdl's simulator, the emitted Verilog
//! under Verilator, or a checking pair — is chosen by the configuration's `engines`
//! (hardware in the loop). A completed walk is *posted*: it is clocked in when the next
//! RT input arrives, so a drain of the same cycle shares its block cycle (the RT's
//! same-cycle walk/drain path), and a drain still waiting for its answer sees the walks of
//! the next cycle (its forwarding path).
//!
//! A walk, in order:
//! 1. wait for a free walker thread (`walkers_per_chiplet` walks in flight at most);
//! 2. per level, root first: a page-walk-cache hit on a directory entry costs
//!    `pwc_latency`; otherwise the entry's line is read through the memory system — local
//!    or remote depending on which chiplet holds that table page;
//! 3. a leaf whose translation reaches 2 MB or more (a huge page, or `ideal`'s 2 MB
//!    translation cost) ends the walk at PDB0;
//! 4. the completed walk steps the Remote Tracker with the PTE's allocation ID and whether
//!    the page lives on another chiplet than the requester (a GPU without CLAP's RT,
//!    `walker.remote_tracker = false`, skips this step, and a drain reads zeros);
//! 5. for a 64 KB leaf, the 16 neighbouring 64 KB pages' PTEs, read from the PTB the walk
//!    ended in ([`crate::pagetable::PageTable::group_ptes`], `docs/pte-layout.md`), are
//!    merged by the coalescing twin into one TLB entry (the block's cycles are added: 2
//!    with its output registers, the request's and the answer's; 1 for the combinational
//!    unit, `tlb_coalescer.output_registers = false`, which answers in the request's cycle).

use super::config::GpuConfig;
use super::memory::MemSystem;
use crate::blocks::engine::{CoalescerBlock, RtBlock};
use crate::pagetable::{Level, PageTable};
use crate::protocol::{CoalIn, CoalOut, RtIn};
use crate::pte::Pte;
use mcmvm_protocol::system::{BlockFault, BlockReport};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Block cycles from a request to its answer, as each block's README documents: the RT
/// answers a drain exactly one cycle later. The coalescer's is its configuration's
/// (`CoalescerConfig::answer_latency`: 1 registered, 0 combinational).
const ANSWER_LATENCY: u32 = 1;

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
    /// The PTB entry the walk read last (None if it ended above the PTB): where the
    /// coalescer's PTEs are read from.
    pub leaf: Option<crate::pagetable::LeafEntry>,
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
    /// None on a GPU without CLAP's Remote Tracker (`walker.remote_tracker = false`).
    rt: Option<RtBlock>,
    /// A completed walk not yet clocked into the RT (module docs).
    pending_walk: Option<(u64, RtIn)>,
    coalescer: Option<CoalescerBlock>,
    /// Block cycles from a coalescer request to its answer (0 or 1).
    coalescer_latency: u32,
    /// Cycles walks waited for a free walker thread, summed.
    pub walker_wait_cycles: u64,
}

impl Gmmu {
    /// A GMMU for `chiplet`, its blocks served by `cfg.engines` (the Remote Tracker only
    /// with `walker.remote_tracker`, the coalescer only with `walker.coalescing`).
    pub fn new(cfg: &GpuConfig, chiplet: u32) -> Result<Gmmu, BlockFault> {
        let unit = format!("chiplet {chiplet}");
        let rt = cfg
            .walker
            .remote_tracker
            .then(|| {
                cfg.engines
                    .remote_tracker(&cfg.hw.remote_tracker, unit.clone())
            })
            .transpose()?;
        let coalescer = cfg
            .walker
            .coalescing
            .then(|| cfg.engines.tlb_coalescer(&cfg.hw.tlb_coalescer, unit))
            .transpose()?;
        Ok(Gmmu {
            chiplet,
            chiplets: cfg.gpu.chiplets,
            walker_free: (0..cfg.walker.walkers_per_chiplet)
                .map(|_| Reverse(0))
                .collect(),
            pwc: PageWalkCache::new(cfg.walker.pwc_entries),
            pwc_latency: cfg.walker.pwc_latency,
            rt,
            pending_walk: None,
            coalescer,
            coalescer_latency: cfg.hw.tlb_coalescer.answer_latency(),
            walker_wait_cycles: 0,
        })
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
        self.walker_wait_cycles += t - now;
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
        out.leaf = walk.leaf_entry.filter(|_| depth == walk.depth);
        if let Some(w) = walker.as_mut() {
            **w = Reverse(t);
        }
        out
    }

    /// Tell the Remote Tracker a walk for a page with `pte` completed at cycle `at`.
    pub fn track_walk(&mut self, at: u64, pte: Pte) -> Result<(), BlockFault> {
        if self.rt.is_none() {
            return Ok(());
        }
        self.flush_walk()?;
        let remote = pte.chiplet(self.chiplets).0 as u32 != self.chiplet;
        self.pending_walk = Some((at, RtIn::walk(pte.alloc_id(), remote)));
        Ok(())
    }

    /// Clock a posted walk into the RT.
    fn flush_walk(&mut self) -> Result<(), BlockFault> {
        if let (Some(rt), Some((at, walk))) = (self.rt.as_mut(), self.pending_walk.take()) {
            rt.step_at(at, &walk)?;
        }
        Ok(())
    }

    /// Drain (read and clear) the Remote Tracker's counters of `alloc_id` at cycle `at`:
    /// (accesses, remote accesses), zeros if the ID is not in the table. A posted walk of
    /// an earlier cycle is clocked in first; one of the drain's cycle shares it (the RT
    /// orders the drain first); one of the answer's cycle shares that.
    pub fn drain_rt(&mut self, at: u64, alloc_id: u8) -> Result<(u64, u64), BlockFault> {
        let Some(rt) = self.rt.as_mut() else {
            return Ok((0, 0));
        };
        let cycle = at.max(rt.next_cycle());
        if let Some((w, walk)) = self.pending_walk {
            if w.max(rt.next_cycle()) < cycle {
                self.pending_walk = None;
                rt.step_at(w, &walk)?;
            }
        }
        let req = take_walk_in_cycle(&mut self.pending_walk, rt.next_cycle(), cycle)
            .unwrap_or_default()
            .with_drain(alloc_id);
        let (issued, _) = rt.step_at(cycle, &req)?;
        let answer_in =
            take_walk_in_cycle(&mut self.pending_walk, issued + 1, issued + 1).unwrap_or_default();
        let (_, out) = rt.step_at(issued + 1, &answer_in)?;
        if out.drain_done == 0 {
            return Err(BlockFault::NoAnswer {
                block: "remote_tracker",
                unit: rt.unit().to_string(),
                system_cycle: issued,
                port: "drain_done",
                latency: ANSWER_LATENCY,
            });
        }
        Ok(if out.drain_hit == 0 {
            (0, 0)
        } else {
            (out.drain_access, out.drain_remote)
        })
    }

    /// Merge, at cycle `at`, the line of 16 PTEs around `vpn64` (one per 64 KB page of the
    /// aligned 1 MB group) with the coalescing logic. None if coalescing is off or nothing
    /// merged.
    pub fn coalesce(
        &mut self,
        at: u64,
        vpn64: u64,
        line: &[u64; 16],
    ) -> Result<Option<Coalesced>, BlockFault> {
        let Some(block) = self.coalescer.as_mut() else {
            return Ok(None);
        };
        let mut req = CoalIn {
            merge_valid: 1,
            merge_vpn: vpn64 & 0xffff_ffff,
            ..CoalIn::default()
        };
        req.set_ptes(line);
        let latency = self.coalescer_latency;
        let out = ask_coalescer(block, at, &req, latency, "merge_done", |o| o.merge_done)?;
        if out.merge_mask == 0 {
            return Ok(None);
        }
        // The block's ports are 32 bits wide: restore the VPN bits above them.
        let base_vpn64 = (vpn64 & !0xffff_ffff) | out.merge_base_vpn;
        Ok(Some(Coalesced {
            base_vpn64,
            base_ppn64: out.merge_base_ppn,
            mask: out.merge_mask as u16,
            // The request's cycle and the answer's (the same one without output registers).
            cycles: 1 + u64::from(latency),
        }))
    }

    /// The coalescer's lookup unit, at cycle `at`: the 64 KB PPN of `vpn64` in the
    /// coalesced entry (`base_vpn64`, `base_ppn64`, `mask`), or None on a miss. None too
    /// when coalescing is off.
    pub fn lookup_coalesced(
        &mut self,
        at: u64,
        vpn64: u64,
        base_vpn64: u64,
        base_ppn64: u64,
        mask: u16,
    ) -> Result<Option<u64>, BlockFault> {
        let Some(block) = self.coalescer.as_mut() else {
            return Ok(None);
        };
        let req = CoalIn {
            lookup_valid: 1,
            lookup_vpn: vpn64 & 0xffff_ffff,
            entry_base_vpn: base_vpn64 & 0xffff_ffff,
            entry_base_ppn: base_ppn64 & 0xffff_ffff,
            entry_mask: mask as u64,
            ..CoalIn::default()
        };
        let latency = self.coalescer_latency;
        let out = ask_coalescer(block, at, &req, latency, "lookup_done", |o| o.lookup_done)?;
        // The PPN port is 32 bits: restore the bits above from the entry's base.
        Ok((out.lookup_hit == 1).then_some((base_ppn64 & !0xffff_ffff) | out.lookup_ppn))
    }

    /// Clock in what is still posted (the end of a run).
    pub fn flush(&mut self) -> Result<(), BlockFault> {
        self.flush_walk()
    }

    /// Wait until a checking engine has compared every cycle so far (the end of a run).
    pub fn sync_blocks(&mut self) -> Result<(), BlockFault> {
        if let Some(rt) = self.rt.as_mut() {
            rt.sync()?;
        }
        if let Some(c) = self.coalescer.as_mut() {
            c.sync()?;
        }
        Ok(())
    }

    /// This GMMU's lines of the run's hardware report.
    pub fn block_reports(&self) -> Vec<BlockReport> {
        let rt = self.rt.as_ref().map(|rt| rt.report());
        rt.into_iter()
            .chain(self.coalescer.as_ref().map(|c| c.report()))
            .collect()
    }
}

/// The posted walk, if it falls in the RT's cycle `cycle` given the RT's next cycle `next`
/// (taken out of the post).
fn take_walk_in_cycle(pending: &mut Option<(u64, RtIn)>, next: u64, cycle: u64) -> Option<RtIn> {
    match *pending {
        Some((at, walk)) if at.max(next) == cycle => {
            *pending = None;
            Some(walk)
        }
        _ => None,
    }
}

/// Apply `req` to the coalescer at cycle `at` and return the outputs of its answer cycle,
/// `latency` cycles later (0: the request's own outputs, the combinational unit);
/// `NoAnswer` naming `port` when `done` is not set there.
fn ask_coalescer(
    block: &mut CoalescerBlock,
    at: u64,
    req: &CoalIn,
    latency: u32,
    port: &'static str,
    done: impl Fn(&CoalOut) -> u64,
) -> Result<CoalOut, BlockFault> {
    let (issued, mut out) = block.step_at(at, req)?;
    for _ in 0..latency {
        out = block.idle()?.1;
    }
    if done(&out) == 0 {
        return Err(BlockFault::NoAnswer {
            block: "tlb_coalescer",
            unit: block.unit().to_string(),
            system_cycle: issued,
            port,
            latency,
        });
    }
    Ok(out)
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
