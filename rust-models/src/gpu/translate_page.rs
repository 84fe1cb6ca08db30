//! Translation of one page for a warp memory instruction: L1 TLB → L2 TLB → GMMU walk
//! → fault (CLAP §2.4, §2.5 ❶–❹), with the coalescer lookup unit and the fills.

use super::event_loop::Gpu;
use super::rt_bank::RtBank;
use super::service::{FaultContext, FaultReply};
use super::tlb::{SizeClass, TlbFill};
use super::translation::{Lookup, Probe};
use super::GpuError;
use crate::addr::{ChipletId, Cycle, Va};
use crate::driver::Translation;
use crate::workload::WarpInstr;

/// Faults one access may take before the model gives up (a service that never maps).
const MAX_REPLAYS: u32 = 4;

/// A translation: the PA, the cycle it is ready and the cycles its request waited for TLB
/// ports and miss registers.
pub(super) struct Translated {
    pub pa: u64,
    pub ready: u64,
    pub queued: u64,
}

impl Translated {
    fn new(pa: u64, ready: u64, lookup: &Lookup) -> Translated {
        Translated {
            pa,
            ready,
            queued: lookup.queued,
        }
    }
}

/// What a translation came to.
pub(super) enum Translate {
    Ready(Translated),
    /// A fault whose service defers the replay: the instruction replays whole at this cycle.
    Deferred {
        replay_at: u64,
    },
}

/// What the TLB probe found.
enum Probed {
    /// An L1 or L2 TLB hit: the translation.
    Hit(Translated),
    /// A miss in both levels, leaving the L2 TLB at `at`.
    Miss { lookup: Lookup, at: u64 },
}

/// How a walk for a mapped page ended.
enum Walked {
    /// The TLBs were filled; the translation is ready at `ready`, the walk ended at
    /// `walk_done`.
    Filled { ready: u64, walk_done: u64 },
    /// The walk ended at `walk_done`, before the page's mapping completes (`mapped_at`).
    Joined { walk_done: u64, mapped_at: u64 },
}

impl Gpu<'_> {
    /// Translate `va` for `sm` starting at `now`: (PA, cycle the translation is ready).
    /// Each attempt is 1. the TLBs, then for a miss 2. a walk of the mapped page or
    /// 3. a fault; a walk that joins a fault, or a fault served in place, tries again at
    /// the cycle the page's mapping completes.
    pub(super) fn translate(
        &mut self,
        va: u64,
        now: u64,
        sm: u32,
        instr: &WarpInstr,
    ) -> Result<Translate, GpuError> {
        let mut now = now;
        for _ in 0..MAX_REPLAYS {
            // A fault found below was discovered from here (the probes are repeated when
            // the access replays); the timer samples a few attempts' starts.
            self.fault_timer.attempt_start();
            // 1. L1 TLB, L2 TLB.
            let (lookup, t2) = match self.probe_tlbs(va, now, sm)? {
                Probed::Hit(t) => return Ok(Translate::Ready(t)),
                Probed::Miss { lookup, at } => (lookup, at),
            };
            match self.mm.translate(Va(va)) {
                // 2. The walk of a mapped page.
                Some(tr) => match self.walk_and_fill(va, t2, sm, instr.alloc as usize, &tr)? {
                    Walked::Filled { ready, walk_done } => {
                        self.tlbs.release(sm, &lookup, ready, walk_done);
                        return Ok(Translate::Ready(Translated::new(tr.pa.0, ready, &lookup)));
                    }
                    Walked::Joined {
                        walk_done,
                        mapped_at: done,
                    } => {
                        self.tlbs.release(sm, &lookup, walk_done, walk_done);
                        // The walker read the PTE before the fault that maps it
                        // completed: the access joins that fault and replays after it
                        // (here, not from the event loop's queue: no fault call was made).
                        now = done;
                    }
                },
                // 3. No mapping: a fault.
                None => {
                    now = self.serve_fault(va, t2, sm, instr, &lookup)?;
                    if self.defer_replays {
                        // The warp waits in the event loop's queue and re-issues the
                        // instruction then, so other warps run meanwhile (their faults
                        // join the same batch). The fault timer stops once it is queued.
                        return Ok(Translate::Deferred { replay_at: now });
                    }
                    self.fault_timer.handled(|| self.service.driver_seconds());
                }
            }
        }
        Err(GpuError::FaultNotResolved(Va(va)))
    }

    /// Step 1: probe the L1 and L2 TLBs for `va` at `now`. A hit is counted and its L1
    /// fill made; a miss returns the lookup (its ports and miss registers are released
    /// once the walk or fault ends) and the cycle it left the L2 TLB.
    #[inline]
    fn probe_tlbs(&mut self, va: u64, now: u64, sm: u32) -> Result<Probed, GpuError> {
        let chiplet = self.sms[sm as usize].chiplet;
        let (mm, map_times) = (&self.mm, &self.map_times);
        let lookup = self.tlbs.lookup(sm, va, now, self.mem.floor, |h, at| {
            resolve_hit(mm, map_times, va, h, at)
        });
        match lookup.probe {
            Probe::L1(u) => {
                self.counters.l1_tlb_hits[u.hit.class as usize] += 1;
                Ok(Probed::Hit(Translated::new(u.pa, u.ready, &lookup)))
            }
            Probe::L2 { hit: u, at: t2 } => {
                let pa = self.coalesced_pa(va, u.pa, &u.hit.entry, chiplet, t2)?;
                let c = u.hit.class as usize;
                self.counters.l1_tlb_misses[c] += 1;
                self.counters.l2_tlb_hits[c] += 1;
                self.tlbs.fill_l1(sm, va, &u.hit.entry.not_before(t2));
                self.tlbs.release(sm, &lookup, u.ready, u.ready);
                Ok(Probed::Hit(Translated::new(pa, u.ready, &lookup)))
            }
            Probe::Miss { at } => Ok(Probed::Miss { lookup, at }),
        }
    }

    /// Step 3: the walk that finds no mapping at `at`, then the memory service's fault
    /// call; the pages it mapped are stamped and its shootdowns applied. Returns the
    /// cycle the access replays.
    fn serve_fault(
        &mut self,
        va: u64,
        at: u64,
        sm: u32,
        instr: &WarpInstr,
        lookup: &Lookup,
    ) -> Result<u64, GpuError> {
        self.fault_timer
            .fault_found(|| self.service.driver_seconds());
        let chiplet = self.sms[sm as usize].chiplet;
        let w = self.gmmus[chiplet as usize].walk(
            self.mm.page_table(),
            Va(va).vpn().0,
            at,
            None,
            &mut self.mem,
        );
        self.tlbs.release(sm, lookup, w.done, w.done);
        self.count_walk(&w, instr.alloc as usize);
        self.counters.faults += 1;
        self.per_alloc[instr.alloc as usize].faults += 1;
        let reply = self.call_fault_service(va, w.done, chiplet, sm, instr)?;
        let mapped_at = self.service.mappings_complete_at(Cycle(w.done), &reply).0;
        self.stamp_new_mappings(mapped_at);
        if let Some(o) = &reply.outcome {
            // PMM ends when the last structure is analysed (CLAP §4.2).
            if o.analysis.is_some() {
                self.counters.pmm_end_instr = Some(self.counters.warp_mem_instrs);
            }
            for e in &o.evicted {
                self.shootdowns
                    .push((e.va, Va(e.va.0 + crate::addr::PAGE_2M)));
            }
        }
        self.apply_shootdowns();
        Ok(reply.replay_at.0.max(w.done))
    }

    /// The memory service's fault call at `at` (the walk's end), with the Remote Trackers
    /// as its drain port; a block fault raised meanwhile is the error.
    fn call_fault_service(
        &mut self,
        va: u64,
        at: u64,
        chiplet: u32,
        sm: u32,
        instr: &WarpInstr,
    ) -> Result<FaultReply, GpuError> {
        let mut rt = RtBank {
            gmmus: &mut self.gmmus,
            per_alloc: &mut self.per_alloc,
            now: at,
            fault: &mut self.block_fault,
        };
        self.shootdowns.clear();
        let reply = self.service.on_fault(FaultContext {
            now: Cycle(at),
            va: Va(va),
            chiplet: ChipletId(chiplet as u8),
            sm,
            alloc: instr.alloc,
            write: instr.write,
            mm: &mut self.mm,
            rt: &mut rt,
            shootdowns: &mut self.shootdowns,
        })?;
        if let Some(f) = self.block_fault.take() {
            return Err(f.into());
        }
        Ok(reply)
    }

    /// An L2 TLB hit on a coalesced 64 KB entry takes its PPN from the chiplet's coalescer
    /// lookup unit, which sits beside the L2 TLB in the GMMU (probed at `at`, the hit's
    /// cycle; the L2 TLB's hit latency covers its one cycle). An SM's L1 TLB would need a
    /// lookup unit of its own; those are not block instances here (their PA comes from the
    /// entry's base, the same arithmetic).
    /// Any other hit keeps the TLB's `pa`. A lookup that disagrees with the entry is
    /// counted (`coalescer_mismatches`) and the TLB's PA is used.
    #[inline]
    fn coalesced_pa(
        &mut self,
        va: u64,
        pa: u64,
        entry: &TlbFill,
        chiplet: u32,
        at: u64,
    ) -> Result<u64, GpuError> {
        if !self.coalescing || entry.class != SizeClass::K64 || entry.mask.count_ones() < 2 {
            return Ok(pa);
        }
        let Some(base) = entry.pa_base else {
            return Ok(pa);
        };
        let vpn64 = va >> 16;
        let ppn = self.gmmus[chiplet as usize].lookup_coalesced(
            at,
            vpn64,
            vpn64 & !15,
            base >> 16,
            entry.mask,
        )?;
        match ppn.map(|p| (p << 16) | (va & 0xffff)) {
            Some(from_unit) if from_unit == pa => Ok(pa),
            _ => {
                self.counters.coalescer_mismatches += 1;
                Ok(pa)
            }
        }
    }

    fn count_walk(&mut self, w: &super::gmmu::WalkTiming, alloc: usize) {
        self.counters.walks += 1;
        self.counters.walk_levels_read += w.levels_read as u64;
        self.counters.walk_remote_levels += w.remote_levels as u64;
        self.counters.walks_with_remote_level += (w.remote_levels > 0) as u64;
        self.counters.pwc_hits += w.pwc_hits as u64;
        self.per_alloc[alloc].walks += 1;
    }

    /// Walk for a mapped page, tell the Remote Tracker, build the TLB entry (coalesced when
    /// possible) and fill both TLB levels: the cycle the translation is ready. A walk that
    /// ends before the page's mapping completes read an invalid PTE: nothing is filled
    /// and the access joins the outstanding fault.
    fn walk_and_fill(
        &mut self,
        va: u64,
        t2: u64,
        sm: u32,
        alloc: usize,
        tr: &Translation,
    ) -> Result<Walked, GpuError> {
        let chiplet = self.sms[sm as usize].chiplet;
        let reach = tr.tlb_reach_bytes.max(tr.leaf_bytes);
        let g = &mut self.gmmus[chiplet as usize];
        let w = g.walk(
            self.mm.page_table(),
            Va(va).vpn().0,
            t2,
            Some(reach),
            &mut self.mem,
        );
        let mapped_at = self.map_times.get(Va(va).vpn());
        if w.done < mapped_at {
            self.count_walk(&w, alloc);
            self.counters.fault_joins += 1;
            return Ok(Walked::Joined {
                walk_done: w.done,
                mapped_at,
            });
        }
        g.track_walk(w.done, tr.pte)?;
        self.count_walk(&w, alloc);
        let (mut fill, extra) = self.make_fill(va, tr, reach, chiplet, w.done, w.leaf)?;
        let class = fill.class as usize;
        self.counters.l1_tlb_misses[class] += 1;
        self.counters.l2_tlb_misses[class] += 1;
        fill.ready = w.done + extra;
        self.tlbs.fill_both(sm, va, &fill);
        Ok(Walked::Filled {
            ready: fill.ready,
            walk_done: w.done,
        })
    }

    /// Stamp the pages the last fault call mapped with the cycle their mapping completes.
    fn stamp_new_mappings(&mut self, at: u64) {
        self.mm.take_new_mappings(&mut self.new_maps);
        for &(first, pages) in &self.new_maps {
            self.map_times.stamp(first, pages, at);
        }
        self.new_maps.clear();
    }

    /// Drop the TLB entries the memory service asked to shoot down, in every TLB.
    fn apply_shootdowns(&mut self) {
        if self.shootdowns.is_empty() {
            return;
        }
        for &(s, e) in &self.shootdowns {
            self.counters.shootdowns += 1;
            self.tlbs.invalidate(s.0, e.0);
        }
    }
}

/// The PA of `va` and the cycle it is ready from a TLB hit `h` answered at `t`. An entry
/// that reaches further than its mapping is contiguous (`ideal`'s 2 MB reach over 64 KB
/// placement) gives the PA from the page table, and only once the page's mapping has
/// completed (a page still being mapped joins its fault); None if the page is not mapped
/// at all (the access walks and faults).
#[inline]
fn resolve_hit(
    mm: &crate::driver::MemoryManager,
    map_times: &super::mapping::MapTimes,
    va: u64,
    h: &super::tlb::TlbHit,
    t: u64,
) -> Option<(u64, u64)> {
    let ready = t.max(h.ready);
    match h.pa {
        Some(pa) => Some((pa, ready)),
        None => {
            let pa = mm.translate(Va(va))?.pa.0;
            Some((pa, ready.max(map_times.get(Va(va).vpn()))))
        }
    }
}
