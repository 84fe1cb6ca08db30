//! The event loop: thread-block scheduling and the ready-time queue ([`ReadyQueue`]).
//!
//! Two kinds of event sit in the ready queue (a timing wheel): a warp at the cycle it is
//! next ready, and a pending page at the cycle its late translation is ready
//! (`pending.rs`). The loop pops the earliest. A warp pulls its next memory instruction
//! from its [`WarpStream`] and executes it ([`Gpu::execute`], in `access.rs`): the warp
//! goes back in the queue at the instruction's completion, or at its next issue slot when
//! the instruction is independent, or waits (parked, not queued) for a pending page of
//! its instruction to complete, which queues it. A finished warp frees its slot; a
//! finished thread block frees its SM slot, and the next block of the chiplet's chunk
//! launches there at that cycle. A kernel ends when its last warp does; the next kernel
//! starts then (a launch barrier).

use super::access::Executed;
use super::gmmu::Gmmu;
use super::host_clock;
use super::in_flight::IssueAt;
use super::kernel_state::{KernelState, Warp};
use super::memory::{Budget, LinePort, MemSystem, TagCache};
use super::metrics::{AllocCounters, Counters};
use super::mshr::MshrPool;
use super::pending::Pending;
use super::ready_queue::ReadyQueue;
use super::replay::{Replay, ReplayCounters};
use super::service::MemoryService;
use super::translation::TlbHierarchy;
use super::{GpuConfig, GpuError};
use crate::driver::MemoryManager;
use crate::workload::{WarpInstr, Workload};

/// Warp slots a GPU may have (queue events are `u32`: a warp slot's is even, a pending
/// page's odd, one value kept free).
const MAX_WARP_SLOTS: u64 = (u32::MAX / 2) as u64;

/// The ready queue's event for warp slot `ws` (even) and for pending page `id` (odd).
/// Warps keep their (cycle, slot) pop order among themselves.
#[inline]
pub(super) fn warp_event(ws: usize) -> u32 {
    (ws as u32) << 1
}
#[inline]
fn page_event(id: u32) -> u32 {
    (id << 1) | 1
}

/// One SM's private state (its L1 TLBs are in [`TlbHierarchy`]).
pub(super) struct Sm {
    pub chiplet: u32,
    pub l1_cache: TagCache,
    /// Warp-instruction issue slots (`issue_width` per cycle).
    pub issue: Budget,
    /// The L1's port: one line per cycle.
    pub l1_port: LinePort,
    /// The L1's miss-status holding registers.
    pub mshrs: MshrPool,
    pub resident_tbs: u32,
}

/// The simulated GPU, bound to one workload and one memory manager.
pub struct Gpu<'w> {
    pub(super) cfg: GpuConfig,
    pub(super) workload: &'w dyn Workload,
    pub(super) mm: MemoryManager,
    pub(super) service: Box<dyn MemoryService + 'w>,
    pub(super) gmmus: Vec<Gmmu>,
    /// Every SM's L1 TLBs and every chiplet's L2 TLB.
    pub(super) tlbs: TlbHierarchy,
    pub(super) sms: Vec<Sm>,
    pub(super) mem: MemSystem,
    /// Base VA and size of each allocation.
    pub(super) alloc_base: Vec<u64>,
    pub(super) alloc_bytes: Vec<u64>,
    pub(super) counters: Counters,
    pub(super) per_alloc: Vec<AllocCounters>,
    /// Reused buffers (no allocation per instruction).
    pub(super) lines_buf: Vec<u64>,
    pub(super) shootdowns: Vec<(crate::addr::Va, crate::addr::Va)>,
    pub(super) issue_cost_per_instr: f64,
    pub(super) cycles: u64,
    /// The memory service wants faulting warps requeued at their replay cycle
    /// ([`MemoryService::defers_replays`]); set by a fault that did so.
    pub(super) defer_replays: bool,
    /// The memory service wants every access ([`MemoryService::observes_accesses`]).
    pub(super) observe_accesses: bool,
    /// Pages waiting for late translations, and their instructions.
    pub(super) pending: Pending,
    /// A page whose translation is ready more than this many cycles after its event is
    /// pending: an unloaded L2 TLB hit (`l1_tlb.latency + l2_tlb.latency`).
    pub(super) pending_horizon: u64,
    /// Lines of the page being accessed that go on later (reused buffer).
    pub(super) late_lines: Vec<super::pending::PendingLine>,
    /// How the deferred replays went ([`Replay`]).
    pub(super) replays: ReplayCounters,
    /// Host time of the fault path, sampled (see [`Gpu::fault_seconds`]).
    pub(super) fault_timer: host_clock::FaultTimer,
    /// A block fault raised where no `Result` reaches (the driver's RT drains).
    pub(super) block_fault: Option<mcmvm_protocol::system::BlockFault>,
    /// The policy uses CLAP's TLB coalescing hardware and the config has it: the GMMUs'
    /// coalescers see PTE lines and the TLBs merge same-offset entries.
    pub(super) coalescing: bool,
    /// When each page's mapping completes (stamped after every fault call).
    pub(super) map_times: super::mapping::MapTimes,
    /// Reused buffer of the runs a fault call mapped.
    pub(super) new_maps: Vec<(crate::addr::Vpn, u64)>,
    /// The cycle the last executed memory instruction issued (its warp's next issue
    /// slot follows it when the instruction is independent).
    pub(super) last_issue: u64,
    /// The longest MSHR wait of the executing instruction's lines (its back-pressure on
    /// the warp's next issue).
    pub(super) mshr_stall: u64,
    /// `gpu.loads_in_flight_per_warp`.
    mlp_limit: usize,
    /// The warp slots' buffer between kernels (empty): each kernel's grows to its 16 k
    /// slots of 320 bytes, and growing it anew copied megabytes at every launch.
    spare_slots: Vec<Option<Warp<'w>>>,
}

/// The mapping-completion stamps over `mm`'s VA span; from here on `mm` logs the pages
/// it maps, so each fault's new mappings can be stamped.
fn map_times_for(mm: &mut MemoryManager) -> super::mapping::MapTimes {
    mm.log_new_mappings();
    let (va0, span) = mm.va_span();
    super::mapping::MapTimes::new(va0.vpn(), span / crate::addr::PAGE_2M)
}

/// The first byte of each of the `n` allocations in `mm`'s VA space.
fn alloc_bases(mm: &MemoryManager, n: usize) -> Vec<u64> {
    (0..n)
        .map(|i| mm.alloc_base(i as crate::workload::AllocIndex).0)
        .collect()
}

impl Sm {
    /// SM number `sm` of the GPU, idle, on chiplet `sm / sms_per_chiplet`.
    fn new(cfg: &GpuConfig, sm: u32) -> Sm {
        Sm {
            chiplet: sm / cfg.gpu.sms_per_chiplet,
            l1_cache: TagCache::new(&cfg.l1_cache),
            issue: Budget::default(),
            l1_port: LinePort::new(cfg.memory.serve_in_arrival_order),
            mshrs: MshrPool::new(cfg.gpu.l1_mshrs_per_sm),
            resident_tbs: 0,
        }
    }
}

/// What the model cannot build: more warp slots than it indexes, or a policy that drains
/// the Remote Trackers on a GPU without them.
fn check_buildable(cfg: &GpuConfig, policy: crate::driver::PolicyKind) -> Result<(), GpuError> {
    let slots = cfg.derived().sms as u64 * cfg.gpu.warps_per_sm as u64;
    if slots > MAX_WARP_SLOTS {
        return Err(GpuError::TooManyWarps(slots));
    }
    if policy.drains_remote_tracker() && !cfg.walker.remote_tracker {
        return Err(GpuError::NoRemoteTracker(policy.name()));
    }
    Ok(())
}

impl<'w> Gpu<'w> {
    /// Assemble the GPU; every GMMU's Remote Tracker and TLB coalescing logic are served
    /// by the engines `cfg.engines` names (the behavioural twins by default).
    pub fn new(
        cfg: &GpuConfig,
        workload: &'w dyn Workload,
        mut mm: MemoryManager,
        service: Box<dyn MemoryService + 'w>,
    ) -> Result<Gpu<'w>, GpuError> {
        let d = cfg.derived();
        check_buildable(cfg, mm.policy())?;
        // CLAP's hardware: off for the paper's baselines, whose coalescer blocks (if the
        // config has them) then see no traffic.
        let coalescing = cfg.walker.coalescing && mm.policy().tlb_coalescing();
        let gmmus = (0..cfg.gpu.chiplets)
            .map(|c| Gmmu::new(cfg, c))
            .collect::<Result<Vec<_>, _>>()?;
        let sms = (0..d.sms).map(|s| Sm::new(cfg, s)).collect();
        let allocs = workload.allocations();
        let alloc_base = alloc_bases(&mm, allocs.len());
        let defer_replays = service.defers_replays();
        let map_times = map_times_for(&mut mm);
        let observe_accesses = service.observes_accesses();
        Ok(Gpu {
            cfg: cfg.clone(),
            workload,
            mm,
            service,
            gmmus,
            tlbs: TlbHierarchy::new(cfg, coalescing),
            sms,
            mem: MemSystem::new(cfg),
            alloc_base,
            alloc_bytes: allocs.iter().map(|a| a.bytes).collect(),
            counters: Counters::default(),
            per_alloc: allocs
                .iter()
                .map(|a| AllocCounters::new(a.bytes, cfg.gpu.chiplets))
                .collect(),
            lines_buf: Vec::with_capacity(64),
            shootdowns: Vec::new(),
            issue_cost_per_instr: 1.0 / cfg.gpu.issue_width as f64,
            cycles: 0,
            defer_replays,
            observe_accesses,
            pending: Pending::default(),
            pending_horizon: cfg.l1_tlb.latency + cfg.l2_tlb.latency,
            late_lines: Vec::new(),
            replays: ReplayCounters::default(),
            fault_timer: host_clock::FaultTimer::new(defer_replays),
            block_fault: None,
            coalescing,
            map_times,
            new_maps: Vec::new(),
            last_issue: 0,
            mshr_stall: 0,
            mlp_limit: cfg.gpu.loads_in_flight_per_warp as usize,
            spare_slots: Vec::new(),
        })
    }

    /// The memory manager (its page table, statistics).
    pub fn memory_manager(&self) -> &MemoryManager {
        &self.mm
    }

    /// Host seconds the run spent handling faults on the GPU side, estimated from a random
    /// one in eight episodes ([`host_clock::FaultTimer`]; `rate` converts the run's ticks):
    /// each walk that found no mapping, the memory service's fault call, the TLB
    /// shootdowns it asked for and requeueing the warp; and each deferred replay attempt
    /// that faulted again, whole from before the pop that dequeued it (its TLB misses and
    /// re-walk are work the access repeats only because its page has not arrived); and, for
    /// the same reason, each fresh fault's discovery — its attempt's TLB probes and
    /// page-table lookup before that walk — and each completed replay's dequeue and
    /// re-issue up to its translation ([`Gpu::fault_prelude_seconds`]). The service's own
    /// driver work ([`MemoryService::driver_seconds`]) is not in it, nor are a completed
    /// replay's translation and data access (the access's own work).
    pub fn fault_seconds(&self, rate: &host_clock::TickRate) -> f64 {
        self.fault_timer.estimated_seconds(rate)
    }

    /// Three parts of [`Gpu::fault_seconds`] estimated from event-loop events sampled at their
    /// start: the fresh faults' discovery, the dequeue of replays that faulted again and
    /// the re-issue of replays that completed, each with how many were timed.
    pub fn fault_prelude_seconds(&self, rate: &host_clock::TickRate) -> [(f64, u64); 3] {
        self.fault_timer.prelude_parts(rate)
    }

    /// Fault episodes (fresh faults, replays that faulted again) and how many were timed.
    pub fn fault_episodes(&self) -> ([u64; 2], [u64; 2]) {
        self.fault_timer.counts()
    }

    /// Cycles simulated so far (the end of the last finished kernel).
    pub fn cycles(&self) -> u64 {
        self.cycles
    }

    /// Run every kernel of the workload to completion.
    pub fn run_all(&mut self) -> Result<(), GpuError> {
        for k in 0..self.workload.kernels().len() {
            let (instrs, start) = (self.counters.warp_instrs, self.cycles);
            self.run_kernel(k)?;
            let c = &mut self.counters;
            c.kernels
                .push((c.warp_instrs - instrs, self.cycles - start));
        }
        self.service
            .on_run_end(crate::addr::Cycle(self.cycles), &mut self.mm)
    }

    /// Run kernel `k` from the current cycle until its last warp finishes.
    pub fn run_kernel(&mut self, k: usize) -> Result<(), GpuError> {
        let workload = self.workload;
        let kernel = &workload.kernels()[k];
        if kernel.grid == 0 {
            return Ok(());
        }
        let start = self.cycles;
        let mut ks = self.launch_kernel(k, start)?;
        let mut end = start;
        loop {
            // The event may be a replay that faults again, whose dequeue is fault handling.
            self.fault_timer.event_start();
            let Some((t, ev)) = ks.heap.pop() else {
                break;
            };
            ks.prefetch_upcoming(&self.sms, &self.pending);
            if ev & 1 == 1 {
                if let Some(c) = self.run_pending_page(t, ev >> 1) {
                    ks.complete(c);
                }
            } else {
                let ws = (ev >> 1) as usize;
                match self.step_warp(&mut ks, t, ws)? {
                    WarpNext::At(next) => {
                        ks.heap.push(next, warp_event(ws));
                        self.fault_timer.handled(|| self.service.driver_seconds());
                    }
                    WarpNext::Parked => {
                        if let Some(w) = ks.warps[ws].as_mut() {
                            w.parked = true;
                        }
                    }
                    WarpNext::Finished => {
                        end = end.max(t);
                        self.retire_warp(&mut ks, t, ws);
                    }
                }
            }
            // Groups of lines the event left pending go on when they are due.
            for (ready, id) in self.pending.queued.drain(..) {
                ks.heap.push(ready, page_event(id));
            }
        }
        let stuck = ks.warps.iter().filter(|w| w.is_some()).count();
        if stuck > 0 || self.pending.outstanding() != (0, 0) {
            return Err(GpuError::Stuck {
                kernel: kernel.name.clone(),
                warps: stuck,
                pending: self.pending.outstanding(),
            });
        }
        self.cycles = end;
        self.spare_slots = std::mem::take(&mut ks.warps);
        self.spare_slots.clear();
        self.service.on_kernel_end(k, crate::addr::Cycle(end));
        Ok(())
    }

    /// Check kernel `k`'s shape, tell the memory service it starts at `start`, and launch
    /// its first thread blocks.
    fn launch_kernel(&mut self, k: usize, start: u64) -> Result<KernelState<'w>, GpuError> {
        let workload = self.workload;
        let kernel = &workload.kernels()[k];
        let wpt = kernel.warps_per_tb;
        if wpt == 0 || wpt > self.cfg.gpu.warps_per_sm {
            return Err(GpuError::BadKernel {
                kernel: kernel.name.clone(),
                message: format!(
                    "{wpt} warps per thread block; an SM holds 1..={}",
                    self.cfg.gpu.warps_per_sm
                ),
            });
        }
        let tbs_per_sm = (self.cfg.gpu.warps_per_sm / wpt).min(self.cfg.gpu.max_tbs_per_sm);
        let chiplets = self.cfg.gpu.chiplets;
        let spc = self.cfg.gpu.sms_per_chiplet;
        // First-touch placement: one contiguous chunk of the grid per chiplet.
        let chunk = kernel.grid.div_ceil(chiplets);
        self.service
            .on_kernel_start(k, &kernel.name, crate::addr::Cycle(start));
        let mut ks = KernelState {
            kernel: k,
            warps_per_tb: wpt,
            heap: ReadyQueue::new(),
            warps: std::mem::take(&mut self.spare_slots),
            free_warps: Vec::new(),
            tbs: Vec::new(),
            free_tbs: Vec::new(),
            next_tb: (0..chiplets)
                .map(|c| (c * chunk).min(kernel.grid))
                .collect(),
            end_tb: (0..chiplets)
                .map(|c| ((c + 1) * chunk).min(kernel.grid))
                .collect(),
        };
        // Fill every SM breadth-first so a chiplet's blocks spread over its SMs.
        for _ in 0..tbs_per_sm {
            for c in 0..chiplets {
                for s in 0..spc {
                    ks.launch_next(workload, c, c * spc + s, start, &mut self.sms);
                }
            }
        }
        Ok(ks)
    }

    /// A warp's event at `t`: replay its deferred instruction, or issue its next one (or
    /// hold it while it waits for accesses in flight), or end.
    #[inline(always)]
    fn step_warp(
        &mut self,
        ks: &mut KernelState<'w>,
        t: u64,
        ws: usize,
    ) -> Result<WarpNext, GpuError> {
        let Some(warp) = ks.warps[ws].as_mut() else {
            return Ok(WarpNext::Parked);
        };
        // The instruction is used where the stream returned it: moving a warp
        // instruction copied it in pieces of other sizes than the stream wrote, and
        // reading those back stalled on store forwarding every time.
        if warp.replay.is_some() {
            return self.step_replay(warp, t, ws);
        }
        // Borrowed, not bound by value: a binding moved (copied) it first.
        let next = match warp.held.take() {
            Some(held) => Some(held),
            None if warp.ended => None,
            None => warp.stream.next(),
        };
        let Some(instr) = &next else {
            // The warp ends when its last accesses complete.
            return Ok(match warp.in_flight.drained(t) {
                IssueAt::At(last) if last > t => {
                    warp.ended = true;
                    WarpNext::At(last)
                }
                IssueAt::At(_) => WarpNext::Finished,
                IssueAt::Park => {
                    warp.ended = true;
                    WarpNext::Parked
                }
            });
        };
        match warp
            .in_flight
            .issue_at(t, instr.independent, self.mlp_limit)
        {
            IssueAt::At(at) if at <= t => {}
            // It waits for accesses in flight: back in the queue until then, or parked
            // until one whose completion is not known yet completes.
            waits => {
                warp.held = next.clone();
                return Ok(match waits {
                    IssueAt::At(at) => WarpNext::At(at),
                    IssueAt::Park => WarpNext::Parked,
                });
            }
        }
        self.issue_instr(warp, instr, t, ws)
    }

    /// Re-execute the warp's deferred instruction at `t`.
    #[inline(always)]
    fn step_replay(
        &mut self,
        warp: &mut Warp<'w>,
        t: u64,
        ws: usize,
    ) -> Result<WarpNext, GpuError> {
        let Some(replay) = &mut warp.replay else {
            return Ok(WarpNext::At(t));
        };
        self.fault_timer
            .replay_start(|| self.service.driver_seconds());
        let first_line = replay.start_line(&mut self.replays);
        let out = self.execute(t, warp.sm, &replay.instr, first_line)?;
        // Faulted again: it waits where it is (most replays fault again, so neither a
        // copy nor a move per attempt), and the whole attempt is fault handling.
        let next = match out {
            Executed::Deferred { at, line } => {
                replay.faulted_at(line, &mut self.replays);
                WarpNext::At(at)
            }
            Executed::Done(done) => {
                warp.replay = None;
                WarpNext::At(done)
            }
            Executed::Pending { token } => {
                warp.replay = None;
                self.pending.own(token, ws as u32);
                WarpNext::Parked
            }
        };
        let refaulted = matches!(out, Executed::Deferred { .. });
        self.fault_timer.replay_end(refaulted);
        Ok(next)
    }

    /// Execute the warp's next instruction `instr` at `t`, free to issue: where the warp
    /// goes next (its completion, its next issue slot, parked, or a replay).
    #[inline(always)]
    fn issue_instr(
        &mut self,
        warp: &mut Warp<'w>,
        instr: &WarpInstr,
        t: u64,
        ws: usize,
    ) -> Result<WarpNext, GpuError> {
        let overlaps = instr.independent && self.mlp_limit > 1;
        Ok(match self.execute(t, warp.sm, instr, 0)? {
            Executed::Deferred { at, line } => {
                // Its compute instructions already issued; only the access replays. (A
                // copy: faults are rare, and taking the instruction by value made every
                // issue copy it.)
                let mut instr = instr.clone();
                instr.compute_cycles = 0;
                warp.replay = Some(Box::new(Replay::new(instr, line)));
                WarpNext::At(at)
            }
            Executed::Done(done) if overlaps => {
                // The warp goes on at its next issue slot.
                warp.in_flight.push(done);
                self.counters.overlapped_instrs += 1;
                WarpNext::At(self.last_issue + 1)
            }
            Executed::Done(done) => WarpNext::At(done),
            Executed::Pending { token } => {
                self.pending.own(token, ws as u32);
                if overlaps {
                    warp.in_flight.push_pending(token);
                    self.counters.overlapped_instrs += 1;
                    WarpNext::At(self.last_issue + 1)
                } else {
                    WarpNext::Parked
                }
            }
        })
    }

    /// Warp `ws` finished at `t`: free its slot, and its thread block's SM slot if it was
    /// the block's last warp (the chiplet's next block launches there).
    fn retire_warp(&mut self, ks: &mut KernelState<'w>, t: u64, ws: usize) {
        let Some(w) = ks.warps[ws].as_ref() else {
            return;
        };
        let (launched, tb_slot) = (w.launched, w.tb);
        // Dropped in place: `take()` copied the 320-byte slot out first.
        ks.warps[ws] = None;
        self.counters.warp_cycles += t - launched;
        ks.free_warps.push(ws as u32);
        let tb = &mut ks.tbs[tb_slot as usize];
        tb.warps_left -= 1;
        if tb.warps_left == 0 {
            let sm = tb.sm;
            ks.free_tbs.push(tb_slot);
            self.sms[sm as usize].resident_tbs -= 1;
            let spc = self.cfg.gpu.sms_per_chiplet;
            ks.launch_next(self.workload, sm / spc, sm, t, &mut self.sms);
        }
    }
}

/// Where a warp goes after its event.
enum WarpNext {
    /// Back in the queue at this cycle.
    At(u64),
    /// Out of the queue until a pending instruction it waits for completes.
    Parked,
    /// Its last access completed: it retires.
    Finished,
}
