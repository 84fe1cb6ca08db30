//! The UVM replay engine: warps of a [`Workload`] issue memory instructions on a simple
//! one-chiplet GPU timing (per-SM issue bandwidth, a fixed memory latency), and every
//! access to a page not on the GPU goes through the far-fault path in `service.rs`.
//!
//! Event-driven: one priority queue of (cycle, kind, id). At equal cycles a batch end
//! (replays) comes before warp events, which come before a batch start, so faults raised
//! in the cycle a batch starts still make it into that batch.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::time::Instant;

use bitvec::prelude::*;

use crate::workload::{Lanes, WarpInstr, WarpStream, Workload};

use super::config::UvmConfig;
use super::forest::ForestState;
use super::layout::{Layout, BASE_VPN};
use super::lru::FaultOrderLru;
use super::metrics::{ObjectReport, UvmMetrics};
use super::residency::Residency;
use super::tbnp::TreeShape;
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

/// State of one run; fields are shared with `service.rs`.
pub(super) struct Engine<'w> {
    pub(super) wl: &'w dyn Workload,
    pub(super) cfg: UvmConfig,
    pub(super) policy: UvmPolicy,
    pub(super) layout: Layout,
    pub(super) res: Residency,
    /// Cycle at which a resident page's data is on the GPU (end of its batch).
    pub(super) ready_at: Vec<u64>,
    pub(super) lru: FaultOrderLru,
    pub(super) forest: Option<ForestState>,
    pub(super) tbnp_shape: TreeShape,
    /// Fault buffer: (page, cycle), one entry per page (duplicates coalesced).
    pub(super) buffer: VecDeque<(u32, u64)>,
    pub(super) queued: BitVec<u64, Lsb0>,
    /// 2 MB blocks that ever received a page (for the preferred-location first touch).
    pub(super) block_populated: BitVec<u64, Lsb0>,
    pub(super) pinned_blocks: BitVec<u64, Lsb0>,
    pub(super) heap: BinaryHeap<Reverse<(u64, u8, u32)>>,
    blocked: Vec<u32>,
    pub(super) driver_busy: bool,
    batch_scheduled: bool,
    pub(super) driver_free_at: u64,
    pub(super) batch_end: u64,
    pub(super) metrics: UvmMetrics,
    pub(super) obj_faults: Vec<u64>,
    pub(super) obj_migrated: Vec<u64>,
    pub(super) check_invariants: bool,
    pub(super) service_wall: f64,
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
    let mut e = Engine::new(workload, cfg, policy, check_invariants);
    e.run()?;
    let mut m = e.finish();
    m.wall_s = wall.elapsed().as_secs_f64();
    m.finish();
    Ok(m)
}

impl<'w> Engine<'w> {
    fn new(wl: &'w dyn Workload, cfg: &UvmConfig, policy: UvmPolicy, check: bool) -> Self {
        let layout = Layout::new(wl.allocations());
        let capacity = if policy == UvmPolicy::None {
            layout.span_pages
        } else {
            ((layout.footprint_pages as f64 / cfg.memory.oversubscription).ceil() as usize).max(1)
        };
        let mut res = Residency::new(layout.span_pages, capacity);
        if policy == UvmPolicy::None {
            for o in &layout.objects {
                for p in o.first_page..o.first_page + o.pages {
                    res.migrate_in(p, false, 0);
                }
            }
        }
        let forest = matches!(policy, UvmPolicy::Forest | UvmPolicy::SpecForest)
            .then(|| ForestState::new(cfg, &layout, policy == UvmPolicy::SpecForest));
        let n_obj = layout.objects.len();
        let metrics = UvmMetrics {
            workload: wl.name().to_string(),
            policy: policy.name().to_string(),
            oversubscription: cfg.memory.oversubscription,
            footprint_pages: layout.footprint_pages,
            capacity_pages: capacity,
            att_engine: forest
                .as_ref()
                .map(|f| f.att.engine.to_string())
                .unwrap_or_else(|| "none".into()),
            ..Default::default()
        };
        let sms = cfg.gpu.sms as usize;
        Engine {
            wl,
            cfg: cfg.clone(),
            policy,
            res,
            ready_at: vec![0; layout.span_pages],
            lru: FaultOrderLru::new(layout.blocks()),
            forest,
            tbnp_shape: cfg.tbnp_shape().unwrap_or(TreeShape::TBNP_DEFAULT),
            buffer: VecDeque::new(),
            queued: bitvec![u64, Lsb0; 0; layout.span_pages],
            block_populated: bitvec![u64, Lsb0; 0; layout.blocks()],
            pinned_blocks: bitvec![u64, Lsb0; 0; layout.blocks()],
            heap: BinaryHeap::new(),
            blocked: Vec::new(),
            driver_busy: false,
            batch_scheduled: false,
            driver_free_at: 0,
            batch_end: 0,
            metrics,
            obj_faults: vec![0; n_obj],
            obj_migrated: vec![0; n_obj],
            check_invariants: check,
            service_wall: 0.0,
            warps: Vec::new(),
            pending: Vec::new(),
            free_slots: Vec::new(),
            sm_free_at: vec![0; sms],
            scratch_pages: Vec::with_capacity(64),
            scratch_lines: Vec::with_capacity(64),
            layout,
        }
    }

    fn run(&mut self) -> Result<(), UvmError> {
        let mut now = 0u64;
        let kernels = self.wl.kernels().to_vec();
        for (k, kernel) in kernels.iter().enumerate() {
            if let Some(f) = self.forest.as_mut() {
                f.kernel_launch(&kernel.name, &self.layout);
            }
            let per_sm = (self.cfg.gpu.warps_per_sm / kernel.warps_per_tb.max(1)).max(1);
            let sms = self.cfg.gpu.sms;
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
            while let Some(Reverse((t, kind, id))) = self.heap.pop() {
                now = now.max(t);
                match kind {
                    EV_BATCH_END => self.on_batch_end(t),
                    EV_BATCH_START => self.on_batch_start(t)?,
                    _ => {
                        if let Some(finished_tb) = self.on_warp(id, t) {
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
                        k, kernel.name, self.blocked.len(), self.buffer.len(), next_tb, kernel.grid, self.driver_busy
                    ),
                });
            }
            if let Some(f) = self.forest.as_mut() {
                f.kernel_end();
            }
        }
        self.metrics.cycles = now.max(self.driver_free_at.min(now));
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
            self.heap.push(Reverse((t, EV_WARP, slot)));
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
                        self.heap.push(Reverse((t + compute, EV_WARP, id)));
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
                &self.layout,
                instr,
                &mut self.scratch_pages,
                &mut self.scratch_lines,
                &mut self.metrics.out_of_range_accesses,
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
            if !self.res.is_resident(p) {
                missing = true;
                if !self.queued[p] {
                    self.queued.set(p, true);
                    self.buffer.push_back((p as u32, t));
                }
                warp.waiting_on = p;
                k += 1;
            } else if self.ready_at[p] > t {
                wait_until = wait_until.max(self.ready_at[p]);
                k += 1;
            } else {
                self.res.touch(p, write);
                self.metrics.page_accesses += 1;
                if let Some(f) = self.forest.as_mut() {
                    f.att.access(BASE_VPN + p as u64, &mut f.tracker);
                }
                pending.swap_remove(k);
            }
        }
        if let Some(f) = self.forest.as_mut() {
            if !f.tracker.pending_irqs.is_empty() {
                let w0 = Instant::now();
                let steps = f.service_interrupts(&self.layout);
                self.metrics.profiling_steps += steps;
                let us = steps as f64 * self.cfg.fault.profiling_step_us;
                self.metrics.service.profiling_us += us;
                let busy_until = if self.driver_busy { self.batch_end } else { t };
                self.driver_free_at =
                    self.driver_free_at.max(busy_until) + self.cfg.us_to_cycles(us);
                self.service_wall += w0.elapsed().as_secs_f64();
            }
        }
        if missing {
            self.blocked.push(id);
            if !self.batch_scheduled && !self.driver_busy {
                let start = (t + self.cfg.us_to_cycles(self.cfg.fault.interrupt_delay_us))
                    .max(self.driver_free_at);
                self.heap.push(Reverse((start, EV_BATCH_START, 0)));
                self.batch_scheduled = true;
            }
            return None;
        }
        if wait_until > t {
            self.heap.push(Reverse((wait_until, EV_WARP, id)));
            return None;
        }
        // Every page was accessed: the instruction completes.
        warp.cur = None;
        self.metrics.warp_mem_instrs += 1;
        let lines = warp.lines;
        let per_cycle = self.cfg.gpu.lines_per_cycle_per_sm as u64;
        let issue = t.max(self.sm_free_at[sm]);
        self.sm_free_at[sm] = issue + (lines as u64).div_ceil(per_cycle).max(1);
        let done = issue + self.cfg.gpu.memory_latency_cycles;
        self.heap.push(Reverse((done, EV_WARP, id)));
        None
    }

    fn on_batch_start(&mut self, t: u64) -> Result<(), UvmError> {
        self.batch_scheduled = false;
        self.driver_busy = true;
        let w0 = Instant::now();
        let end = self.service_batch(t)?;
        self.service_wall += w0.elapsed().as_secs_f64();
        self.batch_end = end;
        self.heap.push(Reverse((end, EV_BATCH_END, 0)));
        Ok(())
    }

    fn on_batch_end(&mut self, t: u64) {
        self.driver_busy = false;
        self.driver_free_at = self.driver_free_at.max(t);
        // Replay every stalled warp whose page is no longer waiting in the fault buffer.
        let mut still = Vec::with_capacity(self.blocked.len());
        for id in std::mem::take(&mut self.blocked) {
            let waiting = self.warps[id as usize]
                .as_ref()
                .map(|w| w.waiting_on)
                .unwrap_or(0);
            if self.queued[waiting] {
                still.push(id);
            } else {
                self.heap.push(Reverse((t, EV_WARP, id)));
            }
        }
        self.blocked = still;
        if !self.buffer.is_empty() {
            self.heap
                .push(Reverse((t.max(self.driver_free_at), EV_BATCH_START, 0)));
            self.batch_scheduled = true;
        }
    }

    fn finish(mut self) -> UvmMetrics {
        let mut m = std::mem::take(&mut self.metrics);
        m.service_wall_s = self.service_wall;
        for (i, o) in self.layout.objects.iter().enumerate() {
            let (class, source, shape, steps) = match &self.forest {
                Some(f) => {
                    let fo = &f.tracker.objects[i];
                    (
                        fo.class.map(|(c, _)| c.name().to_string()),
                        fo.class.map(|(_, s)| format!("{s:?}")),
                        fo.shape,
                        fo.steps,
                    )
                }
                None => (None, None, self.tbnp_shape, 0),
            };
            m.objects.push(ObjectReport {
                name: o.name.clone(),
                pages: o.pages,
                class,
                source,
                tree_kb: shape.tree_pages as u64 * 4,
                leaf_kb: shape.leaf_pages as u64 * 4,
                profiling_steps: steps,
                far_faults: self.obj_faults[i],
                pages_migrated: self.obj_migrated[i],
            });
        }
        m
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
