//! One warp memory instruction, end to end: issue, coalescing, translation (L1 TLB → L2
//! TLB → GMMU walk → fault), data access (L1 cache → home chiplet's L2 → HBM). Every step
//! returns its completion cycle; nothing here advances a clock.

use super::engine::Gpu;
use super::pending::{Completed, PendingLine, Stage};
use super::rt_bank::RtBank;
use super::service::{AccessEvent, FaultContext};
use super::tlb::{SizeClass, TlbFill};
use super::translation::Probe;
use super::GpuError;
use crate::addr::{ChipletId, Cycle, Va};
use crate::driver::Translation;
use crate::workload::WarpInstr;

/// Faults one access may take before the model gives up (a service that never maps).
const MAX_REPLAYS: u32 = 4;

/// A translation: the PA, the cycle it is ready and the cycles its request waited for TLB
/// ports and miss registers.
struct Translated {
    pa: u64,
    ready: u64,
    queued: u64,
}

impl Translated {
    fn new(pa: u64, ready: u64, lookup: &super::translation::Lookup) -> Translated {
        Translated {
            pa,
            ready,
            queued: lookup.queued,
        }
    }
}

/// One memory instruction's progress through its pages.
struct InstrAccess {
    /// The event's cycle (the floor of the bandwidth resources).
    t: u64,
    /// The cycle the memory instruction issued.
    t_issue: u64,
    sm: u32,
    chiplet: u32,
    /// The allocation's base VA.
    base: u64,
    /// The latest completion of its lines so far.
    done: u64,
    /// The longest translation stall of its pages so far.
    translation_stall: u64,
    /// The longest wait of its translation requests for TLB ports and miss registers.
    queue_stall: u64,
    /// The pending-page token, once a page of it waits for a late translation.
    token: Option<u32>,
}

/// What a translation came to.
enum Translate {
    Ready(Translated),
    /// A fault whose service defers the replay: the instruction replays whole at this cycle.
    Deferred {
        replay_at: u64,
    },
}

/// What executing a warp memory instruction came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Executed {
    /// Every line's completion is known: the instruction completes at this cycle.
    Done(u64),
    /// Pages of it wait for late translations as events of their own (`pending.rs`,
    /// queued in `Gpu::pending.queued`); the token tells when the last completes.
    Pending { token: u32 },
    /// A fault deferred it: it replays whole at `at`; `line` is where it faulted (in the
    /// instruction's sorted lines).
    Deferred { at: u64, line: usize },
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
    /// Issue `instr` for a warp of `sm` ready at `t`: when it completes, or which of its
    /// pages wait for their translation, or when it replays.
    /// A deferred replay re-executes the whole instruction (`first_line` 0) or, once it
    /// has lost ground too often, resumes at its furthest line (`super::replay`).
    pub(super) fn execute(
        &mut self,
        t: u64,
        sm: u32,
        instr: &WarpInstr,
        first_line: usize,
    ) -> Result<Executed, GpuError> {
        let alloc = instr.alloc as usize;
        let Some(&base) = self.alloc_base.get(alloc) else {
            return Err(GpuError::BadAccess(format!(
                "allocation index {alloc} but the workload declares {}",
                self.alloc_base.len()
            )));
        };
        // Compute instructions and the memory instruction share the SM's issue slots.
        let n = instr.compute_cycles as u64;
        let s = &mut self.sms[sm as usize];
        self.mem.floor = t;
        let wait = s
            .issue
            .consume(t, (n + 1) as f64 * self.issue_cost_per_instr, t);
        let t_issue = t + wait + n;
        self.last_issue = t_issue;
        self.mshr_stall = 0;
        self.counters.warp_mem_instrs += 1;
        self.counters.warp_instrs += n + 1;

        let mut lines = std::mem::take(&mut self.lines_buf);
        let end = super::lanes::lines_of(&instr.lanes, &mut lines);
        if end > self.alloc_bytes[alloc] {
            self.lines_buf = lines;
            return Err(GpuError::BadAccess(format!(
                "access to byte {} of `{}`, which has {} bytes",
                end - 1,
                self.workload.allocations()[alloc].name,
                self.alloc_bytes[alloc]
            )));
        }
        let mut acc = InstrAccess {
            t,
            t_issue,
            sm,
            chiplet: self.sms[sm as usize].chiplet,
            base,
            done: t_issue,
            translation_stall: 0,
            queue_stall: 0,
            token: None,
        };
        let mut i = first_line;
        let result = loop {
            if i >= lines.len() {
                break Ok(match acc.token {
                    None => Executed::Done(acc.done),
                    Some(token) => {
                        self.pending.issued(token, acc.done);
                        Executed::Pending { token }
                    }
                });
            }
            // One translation per 4 KB page of the instruction.
            let page = (base + lines[i]) >> 12;
            let mut j = i + 1;
            while j < lines.len() && (base + lines[j]) >> 12 == page {
                j += 1;
            }
            match self.access_page(&mut acc, instr, &lines[i..j]) {
                Ok(None) => i = j,
                Ok(Some(replay_at)) => {
                    // The memory instruction counts when its replay completes (its
                    // compute instructions did issue and count now).
                    self.counters.warp_mem_instrs -= 1;
                    self.counters.warp_instrs -= 1;
                    if let Some(token) = acc.token {
                        self.pending.abandon(token);
                    }
                    break Ok(Executed::Deferred {
                        at: replay_at,
                        line: i,
                    });
                }
                Err(e) => break Err(e),
            }
        };
        self.counters.translation_stall_cycles += acc.translation_stall;
        // Back-pressure: an instruction whose lines waited for MSHRs, or whose translation
        // waited for a TLB port or miss register, holds the warp's issue for as long.
        self.last_issue = t_issue + self.mshr_stall.max(acc.queue_stall);
        self.lines_buf = lines;
        result
    }

    /// Translate one 4 KB page of the instruction and access its `lines` (offsets in the
    /// allocation, all in that page). Returns the cycle the instruction replays if the
    /// translation faulted and the service deferred the replay, else None.
    #[inline(always)]
    fn access_page(
        &mut self,
        acc: &mut InstrAccess,
        instr: &WarpInstr,
        lines: &[u64],
    ) -> Result<Option<u64>, GpuError> {
        let (sm, chiplet, base) = (acc.sm, acc.chiplet, acc.base);
        let va = base + lines[0];
        let page = va >> 12;
        let Translated { pa, ready, queued } = match self.translate(va, acc.t_issue, sm, instr)? {
            Translate::Ready(tr) => tr,
            Translate::Deferred { replay_at } => return Ok(Some(replay_at)),
        };
        // Translation stall: how much later than an L1 TLB hit the page was ready.
        let l1_hit = acc.t_issue + self.cfg.l1_tlb.latency;
        acc.translation_stall = acc.translation_stall.max(ready.saturating_sub(l1_hit));
        acc.queue_stall = acc.queue_stall.max(queued);
        // The check the model must pass: no access uses a translation before its
        // mapping completed (counted, reported, and 0 in every test run).
        self.counters.translations_before_mapping += (ready < self.map_times.get(page)) as u64;
        if ready > acc.t + self.pending_horizon {
            self.observe_and_count(acc, instr, va, pa, ready, lines.len());
            // A late translation: the lines go to memory as their own event at `ready`.
            let token = self.token_of(acc);
            let mut buf = std::mem::take(&mut self.late_lines);
            buf.extend(lines.iter().map(|&line| PendingLine {
                pa: pa + (base + line - va),
                at: ready,
                grant: 0,
            }));
            self.pending
                .add_page(token, ready, (sm, chiplet), Stage::L1, &mut buf);
            self.late_lines = buf;
            return Ok(None);
        }
        // Every line's L1 set and home L2 set, fetched while the event and counters
        // are done. The L2 set is asked for now, not after the L1 misses, so the two
        // host misses overlap (~42 % of bfs's lines miss the L1); an L1 hit wastes
        // only the hint.
        for &line in lines {
            let line_pa = pa + (base + line - va);
            self.sms[sm as usize].l1_cache.prefetch_set(line_pa);
            self.mem.prefetch_l2_set(line_pa);
        }
        self.observe_and_count(acc, instr, va, pa, ready, lines.len());
        // The page's lines go through the L1 port back to back, one per cycle.
        let n = lines.len() as u64;
        let first = self.sms[sm as usize].l1_port.take(ready, n, acc.t);
        for (t, &line) in (first..).zip(lines) {
            let line_pa = pa + (base + line - va);
            if let Some(done) = self.data_access(line_pa, t, sm, chiplet) {
                acc.done = acc.done.max(done);
            }
        }
        if !self.late_lines.is_empty() {
            let token = self.token_of(acc);
            self.queue_late_lines(token, sm, chiplet);
        }
        Ok(None)
    }

    /// The instruction's pending token, made when its first group of lines goes pending.
    #[inline]
    fn token_of(&mut self, acc: &mut InstrAccess) -> u32 {
        *acc.token
            .get_or_insert_with(|| self.pending.new_token(acc.t_issue))
    }

    /// The lines `data_access` left late (one page's, so one home chiplet) go on at the
    /// home L2 as one event, at the cycle the first of them arrives there.
    #[cold]
    fn queue_late_lines(&mut self, token: u32, sm: u32, chiplet: u32) {
        let home = self.mem.home(self.late_lines[0].pa);
        let ready = self.late_lines.iter().map(|l| l.at).min().unwrap_or(0);
        let mut lines = std::mem::take(&mut self.late_lines);
        self.pending.add_page(
            token,
            ready,
            (sm, chiplet),
            Stage::Home { home },
            &mut lines,
        );
        self.late_lines = lines;
    }

    /// Tell an observing memory service of the page's access (when its translation is
    /// ready), and count its lines, local and remote.
    #[inline(always)]
    fn observe_and_count(
        &mut self,
        acc: &InstrAccess,
        instr: &WarpInstr,
        va: u64,
        pa: u64,
        ready: u64,
        lines: usize,
    ) {
        let (sm, chiplet) = (acc.sm, acc.chiplet);
        if self.observe_accesses {
            self.service.on_access(&AccessEvent {
                now: Cycle(ready),
                va: Va(va),
                pa,
                chiplet: ChipletId(chiplet as u8),
                sm,
                alloc: instr.alloc,
                write: instr.write,
                lines: lines as u32,
            });
        }
        // Counted without a branch: local and remote pages alternate at random.
        let n = lines as u64;
        let remote = n * (self.mem.home(pa) != chiplet) as u64;
        let ac = &mut self.per_alloc[instr.alloc as usize];
        ac.lines += n;
        ac.remote_lines += remote;
        self.counters.remote_lines += remote;
        self.counters.lines += n;
    }

    /// Run pending page `id` at `t`, its translation's ready cycle: its lines take the L1
    /// port and go to memory. Returns its instruction's completion if it was the last
    /// page and a warp waits for it.
    pub(super) fn run_pending_page(&mut self, t: u64, id: u32) -> Option<Completed> {
        self.mem.floor = t;
        let page = self.pending.take_page(id);
        let (sm, chiplet) = (page.sm, page.chiplet);
        let mut done = t;
        match page.stage {
            Stage::L1 => {
                let n = page.lines.len() as u64;
                let first = self.sms[sm as usize].l1_port.take(t, n, t);
                for (at, l) in (first..).zip(&page.lines) {
                    if let Some(d) = self.data_access(l.pa, at, sm, chiplet) {
                        done = done.max(d);
                    }
                }
                // Before this group finishes, so the instruction is not complete yet.
                if !self.late_lines.is_empty() {
                    self.queue_late_lines(page.token, sm, chiplet);
                }
            }
            Stage::Home { home } => {
                for l in &page.lines {
                    let d = self.mem.at_home(l.pa, home, l.at);
                    self.sms[sm as usize].mshrs.hold(l.grant, d);
                    done = done.max(d);
                }
            }
        }
        self.pending.finish_page(id, page, done)
    }

    /// One line through the SM's L1 cache (its port slot starts at `now`), then the
    /// memory system: the cycle its data is back, or None if it is a remote line that
    /// reaches its home L2 beyond the pending horizon (put in `late_lines`, to go on then).
    #[inline]
    fn data_access(&mut self, pa: u64, now: u64, sm: u32, chiplet: u32) -> Option<u64> {
        let s = &mut self.sms[sm as usize];
        let t = now + s.l1_cache.latency;
        if s.l1_cache.access(pa) {
            self.counters.l1_cache_hits += 1;
            return Some(t);
        }
        self.counters.l1_cache_misses += 1;
        let grant = s.mshrs.acquire(t, self.mem.floor);
        self.mshr_stall = self.mshr_stall.max(grant - t);
        let home = self.mem.home(pa);
        let at = if home == chiplet {
            grant
        } else {
            self.mem.cross_ring(home, grant)
        };
        // A bounded MSHR pool must know each register's release before the next miss
        // asks for one, so with one the line is computed whole.
        if at > self.mem.floor + self.pending_horizon && !self.sms[sm as usize].mshrs.bounded() {
            self.late_lines.push(PendingLine { pa, at, grant });
            return None;
        }
        let done = self.mem.at_home(pa, home, at);
        self.sms[sm as usize].mshrs.hold(grant, done);
        Some(done)
    }

    /// Translate `va` for `sm` starting at `now`: (PA, cycle the translation is ready).
    fn translate(
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
            let chiplet = self.sms[sm as usize].chiplet;
            let (mm, map_times) = (&self.mm, &self.map_times);
            let lookup = self.tlbs.lookup(sm, va, now, self.mem.floor, |h, at| {
                resolve_hit(mm, map_times, va, h, at)
            });
            let t2 = match lookup.probe {
                Probe::L1(u) => {
                    self.counters.l1_tlb_hits[u.hit.class as usize] += 1;
                    return Ok(Translate::Ready(Translated::new(u.pa, u.ready, &lookup)));
                }
                Probe::L2 { hit: u, at: t2 } => {
                    let pa = self.coalesced_pa(va, u.pa, &u.hit.entry, chiplet, t2)?;
                    let c = u.hit.class as usize;
                    self.counters.l1_tlb_misses[c] += 1;
                    self.counters.l2_tlb_hits[c] += 1;
                    self.tlbs.fill_l1(sm, va, &u.hit.entry.not_before(t2));
                    self.tlbs.release(sm, &lookup, u.ready, u.ready);
                    return Ok(Translate::Ready(Translated::new(pa, u.ready, &lookup)));
                }
                Probe::Miss { at } => at,
            };
            let vpn = va >> 12;
            match self.mm.translate(Va(va)) {
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
                        // (here, not from the engine's queue: no fault call was made).
                        now = done;
                    }
                },
                None => {
                    self.fault_timer
                        .fault_found(|| self.service.driver_seconds());
                    let w = self.gmmus[chiplet as usize].walk(
                        self.mm.page_table(),
                        vpn,
                        t2,
                        None,
                        &mut self.mem,
                    );
                    self.tlbs.release(sm, &lookup, w.done, w.done);
                    self.count_walk(&w, instr.alloc as usize);
                    self.counters.faults += 1;
                    self.per_alloc[instr.alloc as usize].faults += 1;
                    let mut rt = RtBank {
                        gmmus: &mut self.gmmus,
                        per_alloc: &mut self.per_alloc,
                        now: w.done,
                        fault: &mut self.block_fault,
                    };
                    self.shootdowns.clear();
                    let reply = self.service.on_fault(FaultContext {
                        now: Cycle(w.done),
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
                    now = reply.replay_at.0.max(w.done);
                    if self.defer_replays {
                        // The warp waits in the engine's queue and re-issues the
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
            va >> 12,
            t2,
            Some(reach),
            &mut self.mem,
        );
        let mapped_at = self.map_times.get(va >> 12);
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
            Some((pa, ready.max(map_times.get(va >> 12))))
        }
    }
}

#[cfg(test)]
impl Gpu<'_> {
    /// Execute `instr` alone and run its pending pages in ready order: its completion.
    pub(super) fn execute_to_end(
        &mut self,
        t: u64,
        sm: u32,
        instr: &WarpInstr,
    ) -> Result<u64, GpuError> {
        match self.execute(t, sm, instr, 0)? {
            Executed::Done(done) => Ok(done),
            Executed::Deferred { at, .. } => Ok(at),
            Executed::Pending { token } => {
                self.pending.own(token, 0);
                let mut pages = std::mem::take(&mut self.pending.queued);
                pages.sort_unstable();
                let mut last = None;
                for (ready, id) in pages {
                    last = self.run_pending_page(ready, id).or(last);
                }
                Ok(last.expect("the last page completes the instruction").done)
            }
        }
    }
}
