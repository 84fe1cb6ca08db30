//! The UVM replay engine: warps of a [`Workload`] issue memory instructions on a simple
//! one-chiplet GPU timing (per-SM issue bandwidth, a fixed memory latency), and every
//! access to a page not on the GPU goes through the far-fault path in `service.rs`.
//!
//! Event-driven: one priority queue of (cycle, kind, id). At equal cycles a batch end
//! (replays) comes before warp events, which come before a batch start, so faults raised
//! in the cycle a batch starts still make it into that batch.

use std::time::Instant;

use crate::workload::{Lanes, WarpInstr, WarpStream, Workload};

use super::config::UvmConfig;
use super::core::UvmCore;
use super::event_queue::EventQueue;
use super::layout::Layout;
use super::metrics::UvmMetrics;
use super::{UvmError, UvmPolicy};

pub(super) const EV_BATCH_END: u8 = 0;
pub(super) const EV_WARP: u8 = 1;
pub(super) const EV_BATCH_START: u8 = 2;

struct Warp<'w> {
    stream: WarpStream<'w>,
    sm: u32,
    tb: u32,
    cur: Option<WarpInstr>,
    /// A page the warp stalls on (replayed when it is no longer queued as a fault).
    waiting_on: usize,
    /// 128-byte lines of `cur` (its issue cost).
    lines: usize,
    /// The pages of `cur` are known (its first attempt happened).
    started: bool,
}

/// State of one replay run: the shared driver state and the replay loop's own.
pub(super) struct Engine<'w> {
    wl: &'w dyn Workload,
    pub(super) core: UvmCore,
    queue: EventQueue,
    blocked: Vec<u32>,
    driver_busy: bool,
    batch_scheduled: bool,
    batch_end: u64,
    warps: Vec<Option<Warp<'w>>>,
    /// Pages of each warp slot's current instruction not yet accessed.
    pending: Vec<Vec<usize>>,
    free_slots: Vec<u32>,
    sm_free_at: Vec<u64>,
    scratch_pages: Vec<usize>,
    scratch_lines: Vec<u64>,
}

/// Replay `workload` under `policy`. With `check_invariants`, the residency invariants
/// are checked after every batch (slow; tests).
pub fn run_workload(
    workload: &dyn Workload,
    cfg: &UvmConfig,
    policy: UvmPolicy,
    check_invariants: bool,
) -> Result<UvmMetrics, UvmError> {
    if cfg.memory.oversubscription < 1.0 {
        return Err(UvmError::Oversubscription(cfg.memory.oversubscription));
    }
    if workload.allocations().is_empty() {
        return Err(UvmError::NoAllocations(workload.name().to_string()));
    }
    let wall = Instant::now();
    let once = |cfg: &UvmConfig| -> Result<UvmMetrics, UvmError> {
        let mut e = Engine::new(workload, cfg, policy, check_invariants)?;
        e.run()?;
        Ok(e.finish())
    };
    let (mut m, repeated) = cfg.engines.serve(
        |repeat| match repeat {
            None => once(cfg),
            Some(engines) => once(&UvmConfig {
                engines,
                ..cfg.clone()
            }),
        },
        UvmError::block_fault,
    )?;
    m.hardware.repeated_after = repeated;
    m.wall_s = wall.elapsed().as_secs_f64();
    m.finish();
    Ok(m)
}

impl<'w> Engine<'w> {
    fn new(
        wl: &'w dyn Workload,
        cfg: &UvmConfig,
        policy: UvmPolicy,
        check: bool,
    ) -> Result<Self, UvmError> {
        Ok(Engine {
            wl,
            core: UvmCore::new(wl, cfg, policy, check)?,
            queue: EventQueue::new(EV_WARP),
            blocked: Vec::new(),
            driver_busy: false,
            batch_scheduled: false,
            batch_end: 0,
            warps: Vec::new(),
            pending: Vec::new(),
            free_slots: Vec::new(),
            sm_free_at: vec![0; cfg.gpu.sms as usize],
            scratch_pages: Vec::with_capacity(64),
            scratch_lines: Vec::with_capacity(64),
        })
    }

    fn run(&mut self) -> Result<(), UvmError> {
        let mut now = 0u64;
        let kernels = self.wl.kernels().to_vec();
        for (k, kernel) in kernels.iter().enumerate() {
            self.core.kernel_launch(k, &kernel.name);
            let per_sm = (self.core.cfg.gpu.warps_per_sm / kernel.warps_per_tb.max(1)).max(1);
            let sms = self.core.cfg.gpu.sms;
            let mut tb_warps_left = vec![kernel.warps_per_tb; kernel.grid as usize];
            let mut next_tb = 0u32;
            for _ in 0..per_sm {
                for sm in 0..sms {
                    if next_tb < kernel.grid {
                        self.dispatch_tb(k, next_tb, sm, kernel.warps_per_tb, now);
                        next_tb += 1;
                    }
                }
            }
            while let Some((t, kind, id)) = self.queue.pop() {
                now = now.max(t);
                match kind {
                    EV_BATCH_END => self.on_batch_end(t),
                    EV_BATCH_START => self.on_batch_start(t)?,
                    _ => {
                        let finished = self.on_warp(id, t);
                        if let Some(f) = self.core.take_block_fault() {
                            return Err(f.into());
                        }
                        if let Some(finished_tb) = finished {
                            let left = &mut tb_warps_left[finished_tb.0 as usize];
                            *left -= 1;
                            if *left == 0 && next_tb < kernel.grid {
                                self.dispatch_tb(k, next_tb, finished_tb.1, kernel.warps_per_tb, t);
                                next_tb += 1;
                            }
                        }
                    }
                }
            }
            if !self.blocked.is_empty() || next_tb < kernel.grid {
                return Err(UvmError::Stall {
                    cycle: now,
                    detail: format!(
                        "kernel {} ({}): {} warps stalled, {} faults queued, {} of {} thread blocks dispatched, driver busy {}",
                        k, kernel.name, self.blocked.len(), self.core.buffer.len(), next_tb, kernel.grid, self.driver_busy
                    ),
                });
            }
            self.core.kernel_end();
            if let Some(f) = self.core.take_block_fault() {
                return Err(f.into());
            }
        }
        if let Some(f) = self.core.sync_blocks() {
            return Err(f.into());
        }
        self.core.metrics.cycles = now.max(self.core.driver_free_at.min(now));
        Ok(())
    }

    fn dispatch_tb(&mut self, kernel: usize, tb: u32, sm: u32, warps: u32, t: u64) {
        for w in 0..warps {
            let warp = Warp {
                stream: self.wl.warp_stream(kernel, tb, w),
                sm,
                tb,
                cur: None,
                waiting_on: 0,
                lines: 0,
                started: false,
            };
            let slot = match self.free_slots.pop() {
                Some(s) => {
                    self.warps[s as usize] = Some(warp);
                    s
                }
                None => {
                    self.warps.push(Some(warp));
                    self.pending.push(Vec::new());
                    (self.warps.len() - 1) as u32
                }
            };
            self.queue.push(t, EV_WARP, slot);
        }
    }

    /// One warp event. Returns (thread block, SM) when the warp finished its stream.
    fn on_warp(&mut self, id: u32, t: u64) -> Option<(u32, u32)> {
        let warp = self.warps[id as usize].as_mut()?;
        if warp.cur.is_none() {
            match warp.stream.next() {
                None => {
                    let done = (warp.tb, warp.sm);
                    self.warps[id as usize] = None;
                    self.free_slots.push(id);
                    return Some(done);
                }
                Some(instr) => {
                    let compute = instr.compute_cycles as u64;
                    warp.cur = Some(instr);
                    warp.started = false;
                    if compute > 0 {
                        self.queue.push(t + compute, EV_WARP, id);
                        return None;
                    }
                }
            }
        }
        let sm = warp.sm as usize;
        let pending = &mut self.pending[id as usize];
        if !warp.started {
            // First attempt of this instruction: its pages and issue cost.
            let instr = warp.cur.as_ref()?;
            warp.lines = instr_pages(
                &self.core.layout,
                instr,
                &mut self.scratch_pages,
                &mut self.scratch_lines,
                &mut self.core.metrics.out_of_range_accesses,
            );
            warp.started = true;
            pending.clear();
            pending.extend_from_slice(&self.scratch_pages);
        }
        let write = warp.cur.as_ref().map(|i| i.write).unwrap_or(false);
        // Pages on the GPU are accessed now (a replay only redoes the missing ones, so a
        // warp spanning more pages than fit at once still makes progress); a page still
        // in flight delays the warp; a missing page is a far fault.
        let mut wait_until = 0u64;
        let mut missing = false;
        let mut k = 0;
        while k < pending.len() {
            let p = pending[k];
            if !self.core.res.is_resident(p) {
                missing = true;
                self.core.queue_fault(p, t);
                warp.waiting_on = p;
                k += 1;
            } else if self.core.ready_at[p] > t {
                wait_until = wait_until.max(self.core.ready_at[p]);
                k += 1;
            } else {
                self.core.access_page(t, p, write);
                pending.swap_remove(k);
            }
        }
        let busy_until = if self.driver_busy { self.batch_end } else { t };
        self.core.service_profiling(busy_until);
        if missing {
            self.blocked.push(id);
            if !self.batch_scheduled && !self.driver_busy {
                let c = &self.core;
                let start =
                    (t + c.cfg.us_to_cycles(c.cfg.fault.interrupt_delay_us)).max(c.driver_free_at);
                self.queue.push(start, EV_BATCH_START, 0);
                self.batch_scheduled = true;
            }
            return None;
        }
        if wait_until > t {
            self.queue.push(wait_until, EV_WARP, id);
            return None;
        }
        // Every page was accessed: the instruction completes.
        warp.cur = None;
        self.core.metrics.warp_mem_instrs += 1;
        let lines = warp.lines;
        let per_cycle = self.core.cfg.gpu.lines_per_cycle_per_sm as u64;
        let issue = t.max(self.sm_free_at[sm]);
        self.sm_free_at[sm] = issue + (lines as u64).div_ceil(per_cycle).max(1);
        let done = issue + self.core.cfg.gpu.memory_latency_cycles;
        self.queue.push(done, EV_WARP, id);
        None
    }

    fn on_batch_start(&mut self, t: u64) -> Result<(), UvmError> {
        self.batch_scheduled = false;
        self.driver_busy = true;
        let w0 = Instant::now();
        let end = self.core.service_batch(t)?;
        self.core.service_wall += w0.elapsed().as_secs_f64();
        self.batch_end = end;
        self.queue.push(end, EV_BATCH_END, 0);
        Ok(())
    }

    fn on_batch_end(&mut self, t: u64) {
        self.driver_busy = false;
        self.core.driver_free_at = self.core.driver_free_at.max(t);
        // Replay every stalled warp whose page is no longer waiting in the fault buffer.
        let mut still = Vec::with_capacity(self.blocked.len());
        for id in std::mem::take(&mut self.blocked) {
            let waiting = self.warps[id as usize]
                .as_ref()
                .map(|w| w.waiting_on)
                .unwrap_or(0);
            if self.core.queued[waiting] {
                still.push(id);
            } else {
                self.queue.push(t, EV_WARP, id);
            }
        }
        self.blocked = still;
        if !self.core.buffer.is_empty() {
            self.queue
                .push(t.max(self.core.driver_free_at), EV_BATCH_START, 0);
            self.batch_scheduled = true;
        }
    }

    fn finish(mut self) -> UvmMetrics {
        self.core.finish()
    }
}

/// Distinct global pages of one warp instruction into `pages`; returns the 128-byte
/// lines it touches (the load/store unit's issue cost).
fn instr_pages(
    layout: &Layout,
    instr: &WarpInstr,
    pages: &mut Vec<usize>,
    lines: &mut Vec<u64>,
    out_of_range: &mut u64,
) -> usize {
    pages.clear();
    let Some(obj) = layout.objects.get(instr.alloc as usize) else {
        *out_of_range += 1;
        return 0;
    };
    let limit = obj.pages as u64;
    let push = |rel: u64, pages: &mut Vec<usize>| {
        if rel < limit {
            pages.push(obj.first_page + rel as usize);
            true
        } else {
            false
        }
    };
    match &instr.lanes {
        Lanes::Strided {
            offset,
            stride,
            lanes,
            elem,
        } => {
            let n = (*lanes).max(1) as u64;
            let last = offset + stride * (n - 1) + (*elem).max(1) as u64 - 1;
            if *stride <= 4096 {
                for rel in (offset >> 12)..=(last >> 12) {
                    if !push(rel, pages) {
                        *out_of_range += 1;
                        break;
                    }
                }
            } else {
                for i in 0..n {
                    if !push((offset + stride * i) >> 12, pages) {
                        *out_of_range += 1;
                    }
                }
            }
            let span_lines = ((last >> 7) - (offset >> 7) + 1) as usize;
            span_lines.min(n as usize)
        }
        Lanes::Gather { offsets, .. } => {
            // One sort: the distinct lines in order give the distinct pages in order
            // (32 lines of 128 bytes per 4 KB page), which is what the fault path needs.
            lines.clear();
            for &off in offsets.iter() {
                if off >> 12 >= limit {
                    *out_of_range += 1;
                }
                lines.push(off >> 7);
            }
            lines.sort_unstable();
            lines.dedup();
            for &line in lines.iter() {
                let rel = line >> 5;
                if rel < limit && pages.last() != Some(&(obj.first_page + rel as usize)) {
                    pages.push(obj.first_page + rel as usize);
                }
            }
            lines.len()
        }
    }
}
