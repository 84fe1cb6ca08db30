//! The UVM path on the MCM GPU model: a [`MemoryService`] that runs the driver state and
//! batch service ([`UvmCore`], `service.rs`) behind the GPU model's fault hook, so TBNp, Forest, SpecForest and their eviction run on any
//! `configs/mcm-*.toml` beside a placement policy.
//!
//! The GPU model calls the service synchronously, in nearly increasing time order (a
//! later page of a warp instruction may report an earlier cycle). The service therefore
//! keeps its own clock (the latest cycle seen; an earlier call is served at it) and, on
//! every fault, first advances to now:
//! 1. a batch whose end has passed is applied to the driver: its migrated and prefetched
//!    pages are mapped in the [`MemoryManager`] on the chiplet of the fault that brought
//!    them (the placement policy's region frame) — pages become visible only here;
//! 2. a batch whose start has passed is closed: `service_batch` decides prefetch and
//!    eviction and times the host link (→ the batch end); evicted pages are unmapped at
//!    once and their TLB entries shot down, migrated ones wait for step 1.
//!
//! The driver runs one batch at a time. A faulting warp waits in the GPU's event-loop
//! queue ([`MemoryService::defers_replays`]) so other warps' faults join the batch; it replays at its batch's end when that batch is closed, else at the batch
//! start, re-executing the whole instruction (`gpu::replay`, with its no-progress bound:
//! after four regressions it resumes at its furthest line, and the hold below makes that
//! progress). Faulting again then is a replay of the same
//! far fault (counted as `repeat_faults`), not a new one. The pages a batch brought are
//! held from the next batch's eviction until accessed (see `close`).

use std::time::Instant;

use serde::Serialize;

use crate::addr::{ChipletId, Cycle, Va, PAGE_4K};
use crate::driver::MemoryManager;
use crate::gpu::{AccessEvent, FaultContext, FaultReply, GpuError, MemoryService};
use crate::workload::{AllocIndex, Workload};

use super::config::UvmConfig;
use super::core::UvmCore;
use super::mask::PAGES_PER_BLOCK;
use super::metrics::UvmMetrics;
use super::stall::StallWatch;
use super::{UvmError, UvmPolicy};

const NO_CHIPLET: u8 = u8::MAX;

/// Counters of the GPU-side protocol (the UVM metrics themselves are in [`UvmMetrics`]).
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct GpuUvmStats {
    /// `on_fault` calls (every walk that found no mapping).
    pub fault_calls: u64,
    /// Faults that put a new entry into the fault buffer.
    pub buffer_entries: u64,
    /// Faults on a page already queued or in flight (a replay before the page arrived).
    pub repeat_faults: u64,
    /// 4 KB pages mapped and unmapped in the memory manager; TLB shootdown ranges.
    pub pages_mapped: u64,
    pub pages_unmapped: u64,
    pub shootdown_ranges: u64,
    /// Most pages resident at once (never above the capacity).
    pub max_resident_pages: usize,
    /// Accesses that reached a page the UVM driver does not hold (must stay 0).
    pub accesses_not_resident: u64,
}

/// A closed batch waiting for its end: its pages and the chiplet each is placed on.
struct InFlight {
    end: u64,
    pages: Vec<(usize, u8)>,
}

/// The UVM driver as the GPU model's memory service. See the module documentation.
pub struct UvmGpuService {
    core: UvmCore,
    /// Base VA of each allocation in the memory manager's layout.
    alloc_base: Vec<u64>,
    clock: u64,
    next_start: Option<u64>,
    in_flight: Option<InFlight>,
    /// Chiplet of the fault that queued each page (placement of its migration).
    fault_chiplet: Vec<u8>,
    /// Pages the last applied batch mapped (held against the next batch's eviction until
    /// accessed; see `close`).
    last_applied: Vec<usize>,
    /// Batches in a row that neither moved a page nor shrank the fault buffer.
    stalled: StallWatch,
    stats: GpuUvmStats,
}

impl UvmGpuService {
    /// A service for `wl` whose allocations `mm` laid out. `cfg.gpu.clock_mhz` must be the
    /// GPU model's clock (µs of fault service become its cycles). With `check`, the
    /// residency invariants are checked after every batch and the page table against
    /// residency at the end (slow; tests).
    pub fn new(
        wl: &dyn Workload,
        cfg: &UvmConfig,
        policy: UvmPolicy,
        check: bool,
        mm: &MemoryManager,
    ) -> Result<UvmGpuService, crate::uvm::UvmError> {
        let mut core = UvmCore::new(wl, cfg, policy, check)?;
        core.record_changes = true;
        let n = wl.allocations().len();
        let span = core.layout.span_pages;
        Ok(UvmGpuService {
            core,
            alloc_base: (0..n).map(|a| mm.alloc_base(a as AllocIndex).0).collect(),
            clock: 0,
            next_start: None,
            in_flight: None,
            fault_chiplet: vec![NO_CHIPLET; span],
            last_applied: Vec::new(),
            stalled: StallWatch::default(),
            stats: GpuUvmStats::default(),
        })
    }

    /// Global page of `va` in allocation `alloc`, if it lies in the allocation.
    #[inline]
    fn page_of(&self, alloc: AllocIndex, va: Va) -> Option<usize> {
        let a = alloc as usize;
        let obj = self.core.layout.objects.get(a)?;
        let rel = (va.0.checked_sub(*self.alloc_base.get(a)?)? / PAGE_4K) as usize;
        (rel < obj.pages).then_some(obj.first_page + rel)
    }

    fn va_of(&self, page: usize) -> Option<Va> {
        let o = self.core.layout.object_of(page)?;
        Some(self.va_in(o, page))
    }

    /// VA of global page `page` of object `o` (which holds it).
    fn va_in(&self, o: usize, page: usize) -> Va {
        let obj = &self.core.layout.objects[o];
        Va(self.alloc_base[o] + (page - obj.first_page) as u64 * PAGE_4K)
    }

    /// Apply every batch end and close every batch start up to `now`.
    fn advance(
        &mut self,
        now: u64,
        mm: &mut MemoryManager,
        shootdowns: &mut Vec<(Va, Va)>,
    ) -> Result<(), GpuError> {
        loop {
            if let Some(b) = &self.in_flight {
                // The driver is busy until this end; no batch can start before it.
                if b.end > now {
                    return Ok(());
                }
                self.apply(mm)?;
                continue;
            }
            match self.next_start {
                Some(s) if s <= now => self.close(s, mm, shootdowns)?,
                _ => return Ok(()),
            }
        }
    }

    /// Close the batch starting at `start`: service it, unmap what it evicted.
    fn close(
        &mut self,
        start: u64,
        mm: &mut MemoryManager,
        shootdowns: &mut Vec<(Va, Va)>,
    ) -> Result<(), GpuError> {
        let w0 = Instant::now();
        self.next_start = None;
        // The warps a batch served re-translate after its end, and the next batch may close
        // in between (at the first replay's fault); so the pages the last batch brought stay
        // unevictable (the batch's own marker, `ready_at = MAX`) until accessed, for this
        // one batch. Without it, a full memory evicts them unused, and the warps livelock.
        let mut held = std::mem::take(&mut self.last_applied);
        held.retain(|&p| self.core.res.is_resident(p) && !self.core.res.was_accessed(p));
        let saved: Vec<u64> = held.iter().map(|&p| self.core.ready_at[p]).collect();
        for &p in &held {
            self.core.ready_at[p] = u64::MAX;
        }
        let waiting = self.core.buffer.len();
        let served = self.core.service_batch(start);
        for (&p, &r) in held.iter().zip(&saved) {
            self.core.ready_at[p] = r;
        }
        let end = served.map_err(|e| GpuError::Service(Box::new(e)))?;
        let mut evicted = std::mem::take(&mut self.core.evicted_log);
        let moved = evicted.len() + self.core.migrated_log.len();
        if let Some(batches) = self
            .stalled
            .after_batch(moved, waiting, self.core.buffer.len())
        {
            return Err(self.stall(start, batches));
        }
        evicted.sort_unstable();
        let mut i = 0;
        while i < evicted.len() {
            let j = run_end(&evicted, i, |&p| p, |_, _| true);
            let va = self.va_of(evicted[i]).ok_or_else(|| stray(evicted[i]))?;
            let n = (j - i) as u64;
            let was = mm.unmap_evicted(va, n)?;
            if was != n {
                return Err(GpuError::Service(
                    format!("evicted {n} pages at {va} but {was} were mapped").into(),
                ));
            }
            shootdowns.push((va, Va(va.0 + n * PAGE_4K)));
            self.stats.pages_unmapped += n;
            self.stats.shootdown_ranges += 1;
            i = j;
        }
        evicted.clear();
        self.core.evicted_log = evicted;
        let migrated = std::mem::take(&mut self.core.migrated_log);
        let pages = self.place(migrated);
        self.in_flight = Some(InFlight { end, pages });
        let resident = self.core.res.resident_pages();
        self.stats.max_resident_pages = self.stats.max_resident_pages.max(resident);
        self.core.service_wall += w0.elapsed().as_secs_f64();
        Ok(())
    }

    /// The error of a batch service that has stopped making progress (a rule that finds
    /// no victim although GPU memory is full, say): without it the run would service the
    /// same faults for ever.
    fn stall(&self, start: u64, batches: u32) -> GpuError {
        let c = &self.core;
        let detail = format!(
            "{batches} fault batches in a row moved no page and left the fault buffer as \
             it was ({} faults waiting, {} of {} frames free, {} pages resident)",
            c.buffer.len(),
            c.res.free_frames(),
            c.res.capacity(),
            c.res.resident_pages()
        );
        GpuError::Service(Box::new(UvmError::Stall {
            cycle: start,
            detail,
        }))
    }

    /// The chiplet of each migrated page: its own fault's, else that of the first faulted
    /// page of its 2 MB block in the batch, else the batch's first fault's (a page
    /// prefetched into a block nobody faulted on goes where the prefetch was triggered).
    fn place(&mut self, mut pages: Vec<usize>) -> Vec<(usize, u8)> {
        pages.sort_unstable();
        let batch_first = pages
            .iter()
            .map(|&p| self.fault_chiplet[p])
            .find(|&c| c != NO_CHIPLET)
            .unwrap_or(0);
        let mut out = Vec::with_capacity(pages.len());
        let mut i = 0;
        while i < pages.len() {
            let block = pages[i] / PAGES_PER_BLOCK;
            let mut j = i;
            while j < pages.len() && pages[j] / PAGES_PER_BLOCK == block {
                j += 1;
            }
            let block_c = pages[i..j]
                .iter()
                .map(|&p| self.fault_chiplet[p])
                .find(|&c| c != NO_CHIPLET)
                .unwrap_or(batch_first);
            for &p in &pages[i..j] {
                let c = std::mem::replace(&mut self.fault_chiplet[p], NO_CHIPLET);
                out.push((p, if c == NO_CHIPLET { block_c } else { c }));
            }
            i = j;
        }
        out
    }

    /// The in-flight batch ended: map its pages, schedule the next batch.
    fn apply(&mut self, mm: &mut MemoryManager) -> Result<(), GpuError> {
        let Some(b) = self.in_flight.take() else {
            return Ok(());
        };
        let w0 = Instant::now();
        let pages = &b.pages;
        let mut i = 0;
        while i < pages.len() {
            let (p0, c) = pages[i];
            let j = run_end(pages, i, |x| x.0, |a, b| a.1 == b.1);
            let va = self.va_of(p0).ok_or_else(|| stray(p0))?;
            mm.map_migrated(va, (j - i) as u64, ChipletId(c))?;
            self.stats.pages_mapped += (j - i) as u64;
            i = j;
        }
        self.last_applied.clear();
        self.last_applied.extend(pages.iter().map(|x| x.0));
        let c = &mut self.core;
        c.driver_free_at = c.driver_free_at.max(b.end);
        if !c.buffer.is_empty() {
            self.next_start = Some(b.end.max(c.driver_free_at));
        }
        c.service_wall += w0.elapsed().as_secs_f64();
        Ok(())
    }

    /// Settle every outstanding batch (end of run) and, with `check`, audit the page
    /// table against residency: a page is mapped exactly when it is resident.
    fn settle(&mut self, mm: &mut MemoryManager) -> Result<(), GpuError> {
        let mut sd = Vec::new();
        // Each round closes or applies one batch; the buffer only shrinks once no warp
        // faults any more, so this ends.
        while self.in_flight.is_some() || self.next_start.is_some() {
            self.advance(u64::MAX, mm, &mut sd)?;
        }
        if !self.core.check_invariants {
            return Ok(());
        }
        let bad =
            |d: String| GpuError::Service(format!("invariant violated at the end: {d}").into());
        // GpuError's service variant carries a message (gpu/ owns it), so the typed
        // audits' errors become text here.
        self.core
            .res
            .check_invariants()
            .map_err(|e| bad(e.to_string()))?;
        mm.check_invariants().map_err(|e| bad(e.to_string()))?;
        for o in 0..self.core.layout.objects.len() {
            let obj = &self.core.layout.objects[o];
            for p in obj.first_page..obj.first_page + obj.pages {
                let va = self.va_in(o, p);
                if mm.translate(va).is_some() != self.core.res.is_resident(p) {
                    return Err(bad(format!(
                        "page {va}: mapped {} but resident {}",
                        mm.translate(va).is_some(),
                        self.core.res.is_resident(p)
                    )));
                }
            }
        }
        if mm.mapped_pages() != self.core.res.resident_pages() as u64 {
            return Err(bad(format!(
                "{} pages mapped, {} resident",
                mm.mapped_pages(),
                self.core.res.resident_pages()
            )));
        }
        Ok(())
    }

    /// The UVM metrics of the run (cycles and instructions are the GPU model's), and the
    /// GPU-side counters.
    pub fn finish(&mut self, cycles: u64, warp_mem_instrs: u64) -> (UvmMetrics, GpuUvmStats) {
        let mut m = self.core.finish();
        m.cycles = cycles;
        m.warp_mem_instrs = warp_mem_instrs;
        (m, self.stats.clone())
    }
}

/// End of the run from `i` of items on consecutive pages inside one 2 MB block that
/// `same` also keeps together (e.g. the same chiplet).
fn run_end<T>(
    items: &[T],
    i: usize,
    page: impl Fn(&T) -> usize,
    same: impl Fn(&T, &T) -> bool,
) -> usize {
    let block = page(&items[i]) / PAGES_PER_BLOCK;
    let mut j = i + 1;
    while j < items.len()
        && page(&items[j]) == page(&items[j - 1]) + 1
        && page(&items[j]) / PAGES_PER_BLOCK == block
        && same(&items[j - 1], &items[j])
    {
        j += 1;
    }
    j
}

fn stray(page: usize) -> GpuError {
    GpuError::Service(format!("UVM page {page} lies in no allocation").into())
}

impl MemoryService for &mut UvmGpuService {
    fn on_access(&mut self, ev: &AccessEvent) {
        let Some(p) = self.page_of(ev.alloc, ev.va) else {
            return;
        };
        if self.core.res.is_resident(p) {
            self.core.access_page(ev.now.0, p, ev.write);
        } else {
            self.stats.accesses_not_resident += 1;
        }
        let busy_until = self.in_flight.as_ref().map_or(ev.now.0, |b| b.end);
        self.core.service_profiling(busy_until);
    }

    fn on_fault(&mut self, ctx: FaultContext<'_>) -> Result<FaultReply, GpuError> {
        self.stats.fault_calls += 1;
        if let Some(f) = self.core.take_block_fault() {
            return Err(f.into());
        }
        let t = ctx.now.0.max(self.clock);
        self.clock = t;
        self.advance(t, ctx.mm, ctx.shootdowns)?;
        let p = self
            .page_of(ctx.alloc, ctx.va)
            .ok_or_else(|| GpuError::BadAccess(format!("{} outside its allocation", ctx.va)))?;
        let replay_at = if self.core.res.is_resident(p) {
            if ctx.mm.translate(ctx.va).is_some() {
                // Mapped by the batch end applied just now: replay at once.
                t
            } else {
                self.stats.repeat_faults += 1;
                self.in_flight.as_ref().map(|b| b.end).ok_or_else(|| {
                    GpuError::Service(format!("{} resident but unmapped", ctx.va).into())
                })?
            }
        } else {
            if self.core.queued[p] {
                self.stats.repeat_faults += 1;
            } else {
                self.stats.buffer_entries += 1;
                self.core.queue_fault(p, t);
                self.fault_chiplet[p] = ctx.chiplet.0;
            }
            if self.next_start.is_none() && self.in_flight.is_none() {
                let c = &self.core;
                let delay = c.cfg.us_to_cycles(c.cfg.fault.interrupt_delay_us);
                self.next_start = Some((t + delay).max(c.driver_free_at));
            }
            match (self.next_start, &self.in_flight) {
                (Some(s), _) => s,
                (None, Some(b)) => b.end,
                (None, None) => t,
            }
        };
        Ok(FaultReply {
            replay_at: Cycle(replay_at),
            outcome: None,
        })
    }

    fn on_kernel_start(&mut self, kernel: usize, name: &str, _now: Cycle) {
        self.core.kernel_launch(kernel, name);
    }

    fn on_kernel_end(&mut self, _kernel: usize, _now: Cycle) {
        self.core.kernel_end();
    }

    fn on_run_end(&mut self, _now: Cycle, mm: &mut MemoryManager) -> Result<(), GpuError> {
        self.settle(mm)?;
        self.core.run_end_faults()
    }

    fn defers_replays(&self) -> bool {
        true
    }

    fn driver_seconds(&self) -> f64 {
        self.core.service_wall
    }
}
