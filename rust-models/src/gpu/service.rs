//! The hook between the GPU model and whoever services its memory: the default first-touch
//! demand paging of CLAP's baseline, or the UVM path (far faults, prefetch, eviction).
//!
//! The event loop calls [`MemoryService::on_access`] for every GPU memory access — once per
//! page per warp instruction, after translation, which is what an Access Time Tracker in
//! the GMMU observes — and [`MemoryService::on_fault`] for every walk that finds no valid
//! mapping. The fault handler maps the page through the [`MemoryManager`] (or migrates,
//! prefetches, evicts), may ask for TLB shootdowns, and returns the cycle at which the
//! faulting warp replays its access. The replay walks again, so whatever the handler
//! mapped is what the warp then sees.

use super::GpuError;
use crate::addr::{ChipletId, Cycle, Va};
use crate::driver::{FaultOutcome, MemoryManager, RtDrain};
use crate::workload::AllocIndex;

/// One translated access, as the GMMU sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AccessEvent {
    /// Cycle the translation is available.
    pub now: Cycle,
    /// First byte the instruction touches in this page.
    pub va: Va,
    /// Its physical address.
    pub pa: u64,
    /// Requesting chiplet and SM (global SM index).
    pub chiplet: ChipletId,
    pub sm: u32,
    pub alloc: AllocIndex,
    pub write: bool,
    /// 128-byte lines the instruction touches in this page.
    pub lines: u32,
}

/// Everything a fault handler may touch.
pub struct FaultContext<'a> {
    /// Cycle the walk detected the fault.
    pub now: Cycle,
    pub va: Va,
    pub chiplet: ChipletId,
    pub sm: u32,
    pub alloc: AllocIndex,
    pub write: bool,
    /// The driver's memory manager (page table, frames, placement policy).
    pub mm: &'a mut MemoryManager,
    /// The chiplets' Remote Trackers, drained through their ports.
    pub rt: &'a mut dyn RtDrain,
    /// VA ranges `[start, end)` whose TLB entries must be shot down (e.g. after an
    /// eviction or migration); the event loop applies them to every TLB before the replay.
    pub shootdowns: &'a mut Vec<(Va, Va)>,
}

/// A resolved fault.
#[derive(Debug, Clone, PartialEq)]
pub struct FaultReply {
    /// Cycle the faulting warp replays its access.
    pub replay_at: Cycle,
    /// What the driver did, if the service asked it to map: the event loop records the end of
    /// a structure's PMM phase from `analysis` and shoots down `evicted` blocks.
    pub outcome: Option<FaultOutcome>,
}

/// Services the GPU's accesses and page faults. See the module documentation.
pub trait MemoryService {
    /// Observe one translated access (default: nothing).
    fn on_access(&mut self, _ev: &AccessEvent) {}

    /// Whether [`MemoryService::on_access`] needs to be called at all (default: yes). A
    /// service that ignores accesses says no, and the event loop builds no event per page:
    /// at millions of instructions per second the call alone cost several percent.
    fn observes_accesses(&self) -> bool {
        true
    }

    /// Resolve a fault; say when the warp may replay its access.
    fn on_fault(&mut self, ctx: FaultContext<'_>) -> Result<FaultReply, GpuError>;

    /// A kernel starts at `now` (default: nothing); Forest re-registers its objects here.
    fn on_kernel_start(&mut self, _kernel: usize, _name: &str, _now: Cycle) {}

    /// A kernel's last warp finished at `now` (default: nothing).
    fn on_kernel_end(&mut self, _kernel: usize, _now: Cycle) {}

    /// The last kernel finished at `now`: settle outstanding work with the memory manager
    /// (default: nothing).
    fn on_run_end(&mut self, _now: Cycle, _mm: &mut MemoryManager) -> Result<(), GpuError> {
        Ok(())
    }

    /// Cycle at which the mappings made while resolving a fault (the pages the memory
    /// manager newly mapped during [`MemoryService::on_fault`]) are complete: no walk, TLB
    /// entry or access may use them earlier. Default: the fault's cycle `fault_at`, right
    /// for a service whose mappings record transfers already finished (the UVM path maps
    /// a batch's pages once its end has passed).
    fn mappings_complete_at(&self, fault_at: Cycle, _reply: &FaultReply) -> Cycle {
        fault_at
    }

    /// Whether a faulting warp goes back to the event loop's queue until `replay_at` and then
    /// issues its instruction again (default: no, it replays inside the access, which is
    /// right for a short, independent fault latency). A batched service (UVM) needs the
    /// other warps to run meanwhile, or every batch would hold a single fault.
    fn defers_replays(&self) -> bool {
        false
    }

    /// Host seconds the service has spent on driver work so far (default: none). The
    /// engine takes them out of the GPU side of the fault path it times.
    fn driver_seconds(&self) -> f64 {
        0.0
    }

    /// Extra metrics this service wants in the run report (default: none).
    fn report(&self) -> Option<serde_json::Value> {
        None
    }
}

/// CLAP's baseline: demand paging on first touch. The driver maps the page on the chiplet
/// that touched it (per its placement policy); the warp replays `latency` cycles later.
/// Faults are serviced independently of each other (no fault-buffer serialisation).
#[derive(Debug, Clone, Copy)]
pub struct FirstTouchService {
    /// Cycles from the fault to the replay.
    pub latency: u64,
}

impl MemoryService for FirstTouchService {
    fn observes_accesses(&self) -> bool {
        false
    }

    /// The driver's work — and so the mapping — completes when the warp may replay.
    fn mappings_complete_at(&self, _fault_at: Cycle, reply: &FaultReply) -> Cycle {
        reply.replay_at
    }

    fn on_fault(&mut self, ctx: FaultContext<'_>) -> Result<FaultReply, GpuError> {
        let outcome = ctx.mm.handle_fault(ctx.va, ctx.chiplet, ctx.rt)?;
        Ok(FaultReply {
            replay_at: Cycle(ctx.now.0 + self.latency),
            outcome: Some(outcome),
        })
    }
}
