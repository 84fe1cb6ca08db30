//! One warp memory instruction, end to end: issue, coalescing, translation (L1 TLB → L2
//! TLB → GMMU walk → fault), data access (L1 cache → home chiplet's L2 → HBM). Every step
//! returns its completion cycle; nothing here advances a clock.

use super::event_loop::Gpu;
use super::pending::{Completed, PendingLine, Stage};
use super::service::AccessEvent;
use super::translate_page::{Translate, Translated};
use super::GpuError;
use crate::addr::{ChipletId, Cycle, Va};
use crate::workload::WarpInstr;

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
        let result = self.access_pages(&mut acc, instr, &lines, first_line);
        self.counters.translation_stall_cycles += acc.translation_stall;
        // Back-pressure: an instruction whose lines waited for MSHRs, or whose translation
        // waited for a TLB port or miss register, holds the warp's issue for as long.
        self.last_issue = t_issue + self.mshr_stall.max(acc.queue_stall);
        self.lines_buf = lines;
        result
    }

    /// Translate and access the instruction's `lines` (sorted offsets in the allocation)
    /// page by page from `first_line`, until the end or a deferred fault.
    #[inline(always)]
    fn access_pages(
        &mut self,
        acc: &mut InstrAccess,
        instr: &WarpInstr,
        lines: &[u64],
        first_line: usize,
    ) -> Result<Executed, GpuError> {
        let base = acc.base;
        let mut i = first_line;
        while i < lines.len() {
            // One translation per 4 KB page of the instruction.
            let page = Va(base + lines[i]).vpn();
            let mut j = i + 1;
            while j < lines.len() && Va(base + lines[j]).vpn() == page {
                j += 1;
            }
            if let Some(replay_at) = self.access_page(acc, instr, &lines[i..j])? {
                // The memory instruction counts when its replay completes (its compute
                // instructions did issue and count now).
                self.counters.warp_mem_instrs -= 1;
                self.counters.warp_instrs -= 1;
                if let Some(token) = acc.token {
                    self.pending.abandon(token);
                }
                return Ok(Executed::Deferred {
                    at: replay_at,
                    line: i,
                });
            }
            i = j;
        }
        Ok(match acc.token {
            None => Executed::Done(acc.done),
            Some(token) => {
                self.pending.issued(token, acc.done);
                Executed::Pending { token }
            }
        })
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
        let page = Va(va).vpn();
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
        let home = self.mem.home(pa);
        let remote = n * (home != chiplet) as u64;
        let offset = va.wrapping_sub(self.alloc_base[instr.alloc as usize]);
        let ac = &mut self.per_alloc[instr.alloc as usize];
        ac.pages.record(offset, chiplet, home, n);
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
