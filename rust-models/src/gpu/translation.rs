//! The TLB hierarchy: every SM's L1 TLBs and every chiplet's L2 TLB, owned in one place
//! with what bounds their throughput.
//!
//! A translation request goes, step by step (the code marks the same steps):
//! 1. **L1 lookup.** The SM's L1 TLBs (one per page size, probed together) take
//!    `l1_tlb.lookups_per_cycle` lookups per cycle; a lookup waits for a port, then
//!    answers `l1_tlb.latency` cycles later.
//! 2. **L1 miss slot.** A miss needs one of the SM's `l1_tlb.misses_in_flight` miss
//!    registers, held until its translation is ready. A second miss to a page already in
//!    flight merges: the entry being filled is already in the TLB with its ready cycle
//!    ([`super::tlb`]), so the second lookup hits it and waits without a register.
//! 3. **L2 lookup.** The chiplet's L2 TLB takes `l2_tlb.lookups_per_cycle` lookups per
//!    cycle and answers `l2_tlb.latency` cycles later.
//! 4. **L2 miss queue.** A miss needs one of the chiplet's `l2_tlb.misses_in_flight`
//!    entries, held until its walk ends; then the walk waits for a walker thread in the
//!    GMMU ([`super::gmmu`]).
//!
//! When no register or queue entry is free the request waits (back-pressure): the warp's
//! translation is late by the wait, and its next issue waits as long ([`Lookup::queued`]).
//! Every bound is 0 = unbounded, the model before ports and queues existed.
//!
//! Time order is the bandwidth resources' ([`super::bandwidth`]): the event loop computes
//! one whole instruction per event, so ports serve in arrival order behind a floor and the
//! miss registers are [`MshrPool`]s.

use super::bandwidth::Budget;
use super::config::GpuConfig;
use super::mshr::MshrPool;
use super::tlb::{Tlb, TlbFill, TlbHit};
use serde::Serialize;

/// One TLB with its lookup port and its miss registers.
struct TlbUnit {
    tlb: Tlb,
    /// Lookups per cycle; `None` = unlimited (no port is modelled).
    port: Option<Budget>,
    /// Cycles one lookup occupies the port (1 / lookups per cycle).
    port_cost: f64,
    misses: MshrPool,
}

impl TlbUnit {
    fn new(tlb: Tlb, lookups_per_cycle: u32, misses_in_flight: u32, arrival_order: bool) -> Self {
        TlbUnit {
            tlb,
            port: (lookups_per_cycle > 0).then(|| Budget::new(arrival_order)),
            port_cost: 1.0 / lookups_per_cycle.max(1) as f64,
            misses: MshrPool::new(misses_in_flight),
        }
    }

    /// Probe at `now` (after the port's wait): (the hit if any, the cycle it answers, the
    /// cycles waited for the port).
    #[inline]
    fn probe(&mut self, va: u64, now: u64, floor: u64) -> (Option<TlbHit>, u64, u64) {
        let wait = match self.port.as_mut() {
            Some(p) => p.consume(now, self.port_cost, floor),
            None => 0,
        };
        let at = now + wait + self.tlb.latency;
        (self.tlb.lookup(va), at, wait)
    }
}

/// A hit the translation can use: the PA and the cycle it is ready.
#[derive(Debug, Clone, Copy)]
pub(super) struct Usable {
    pub hit: TlbHit,
    pub pa: u64,
    pub ready: u64,
}

/// `resolve` of a hit answered at `at`, kept with the hit.
#[inline]
fn usable(
    hit: Option<TlbHit>,
    at: u64,
    resolve: &mut impl FnMut(&TlbHit, u64) -> Option<(u64, u64)>,
) -> Option<Usable> {
    let hit = hit?;
    let (pa, ready) = resolve(&hit, at)?;
    Some(Usable { hit, pa, ready })
}

/// What the TLBs answered for one translation request.
#[derive(Debug, Clone, Copy)]
pub(super) enum Probe {
    /// The SM's L1 TLB hit.
    L1(Usable),
    /// The L1 missed and the chiplet's L2 TLB hit, answering at `at`.
    L2 { hit: Usable, at: u64 },
    /// Both missed: a walk may start at `at`.
    Miss { at: u64 },
}

/// A translation request's passage through the TLBs: what they answered, the miss
/// registers it holds (to release with [`TlbHierarchy::release`] once its times are
/// known) and the cycles it waited for ports and registers.
#[derive(Debug, Clone, Copy)]
pub(super) struct Lookup {
    pub probe: Probe,
    /// Cycle the L1 miss register was granted, if the L1 missed.
    l1_grant: Option<u64>,
    /// Cycle the L2 miss-queue entry was granted, if the L2 missed.
    l2_grant: Option<u64>,
    /// Cycles waited for ports and miss registers (back-pressure on the warp).
    pub queued: u64,
}

/// Every TLB of the GPU.
pub(super) struct TlbHierarchy {
    /// Per SM.
    l1: Vec<TlbUnit>,
    /// Per chiplet.
    l2: Vec<TlbUnit>,
    sms_per_chiplet: u32,
}

impl TlbHierarchy {
    /// The TLBs of `cfg`'s GPU; `merging`: CLAP's same-offset merging is on (the policy
    /// has the coalescing hardware).
    pub fn new(cfg: &GpuConfig, merging: bool) -> TlbHierarchy {
        let order = cfg.memory.serve_in_arrival_order;
        let unit = |spec: &super::config::TlbSpec| {
            let mut t = Tlb::new(spec);
            t.set_merging(merging);
            TlbUnit::new(t, spec.lookups_per_cycle, spec.misses_in_flight, order)
        };
        let sms = cfg.gpu.chiplets * cfg.gpu.sms_per_chiplet;
        TlbHierarchy {
            l1: (0..sms).map(|_| unit(&cfg.l1_tlb)).collect(),
            l2: (0..cfg.gpu.chiplets).map(|_| unit(&cfg.l2_tlb)).collect(),
            sms_per_chiplet: cfg.gpu.sms_per_chiplet,
        }
    }

    /// Send `va`'s translation request from `sm` at `now` through the TLBs. `resolve`
    /// turns a hit answered at a cycle into (PA, ready cycle), or None when the entry
    /// cannot translate the page yet (it reaches further than the mapping; the request
    /// goes on as a miss). `floor`: no request processed later arrives before it.
    #[inline]
    pub fn lookup(
        &mut self,
        sm: u32,
        va: u64,
        now: u64,
        floor: u64,
        mut resolve: impl FnMut(&TlbHit, u64) -> Option<(u64, u64)>,
    ) -> Lookup {
        // 1. The SM's L1 lookup.
        let l1 = &mut self.l1[sm as usize];
        let (hit, t1, mut queued) = l1.probe(va, now, floor);
        let mut out = Lookup {
            probe: Probe::Miss { at: t1 },
            l1_grant: None,
            l2_grant: None,
            queued: 0,
        };
        if let Some(u) = usable(hit, t1, &mut resolve) {
            out.probe = Probe::L1(u);
            out.queued = queued;
            return out;
        }
        // 2. An L1 miss register.
        let g1 = l1.misses.acquire(t1, floor);
        out.l1_grant = Some(g1);
        queued += g1 - t1;
        // 3. The chiplet's L2 lookup.
        let l2 = &mut self.l2[(sm / self.sms_per_chiplet) as usize];
        let (hit, t2, wait) = l2.probe(va, g1, floor);
        queued += wait;
        if let Some(hit) = usable(hit, t2, &mut resolve) {
            out.probe = Probe::L2 { hit, at: t2 };
            out.queued = queued;
            return out;
        }
        // 4. An L2 miss-queue entry; the walk starts when it is granted.
        let g2 = l2.misses.acquire(t2, floor);
        out.l2_grant = Some(g2);
        out.probe = Probe::Miss { at: g2 };
        out.queued = queued + (g2 - t2);
        out
    }

    /// Release the miss registers `lookup` holds: the L1's when the translation reaches
    /// the SM (`ready`), the L2's when the walk ended (`walk_done`; the L2 hit's `ready`
    /// when no walk ran).
    #[inline]
    pub fn release(&mut self, sm: u32, lookup: &Lookup, ready: u64, walk_done: u64) {
        if let Some(g) = lookup.l1_grant {
            self.l1[sm as usize].misses.hold(g, ready.max(g));
        }
        if let Some(g) = lookup.l2_grant {
            let c = (sm / self.sms_per_chiplet) as usize;
            self.l2[c].misses.hold(g, walk_done.max(g));
        }
    }

    /// Fill the SM's L1 TLB (from an L2 hit).
    #[inline]
    pub fn fill_l1(&mut self, sm: u32, va: u64, fill: &TlbFill) {
        self.l1[sm as usize].tlb.insert(va, fill);
    }

    /// Fill the chiplet's L2 TLB and the SM's L1 TLB (from a walk).
    #[inline]
    pub fn fill_both(&mut self, sm: u32, va: u64, fill: &TlbFill) {
        self.l2[(sm / self.sms_per_chiplet) as usize]
            .tlb
            .insert(va, fill);
        self.l1[sm as usize].tlb.insert(va, fill);
    }

    /// Drop the entries covering `[start, end)` from every TLB (a shootdown).
    pub fn invalidate(&mut self, start: u64, end: u64) {
        for u in self.l1.iter_mut().chain(self.l2.iter_mut()) {
            u.tlb.invalidate(start, end);
        }
    }

    /// Entries widened by same-offset merging, in every TLB.
    pub fn merges(&self) -> u64 {
        self.l1.iter().chain(&self.l2).map(|u| u.tlb.merges()).sum()
    }

    /// The run's translation figures: `stall_cycles` and `warp_cycles` from the event
    /// loop, `walker_wait_cycles` from the GMMUs, the rest from the TLBs' ports and miss
    /// registers.
    pub fn report(
        &self,
        stall_cycles: u64,
        warp_cycles: u64,
        walker_wait_cycles: u64,
    ) -> TranslationReport {
        let misses = |v: &[TlbUnit]| {
            v.iter().fold((0, 0, 0), |(n, c, o), u| {
                (
                    n + u.misses.waits,
                    c + u.misses.wait_cycles,
                    o + u.misses.overbooked,
                )
            })
        };
        let port = |v: &[TlbUnit]| -> u64 {
            v.iter()
                .map(|u| u.port.as_ref().map_or(0.0, |p| p.queued_cycles))
                .sum::<f64>()
                .round() as u64
        };
        let (l1_waits, l1_wait_cycles, l1_over) = misses(&self.l1);
        let (l2_waits, l2_wait_cycles, l2_over) = misses(&self.l2);
        TranslationReport {
            stall_cycles,
            warp_cycles,
            stall_share: super::metrics::ratio(stall_cycles, warp_cycles),
            l1_port_wait_cycles: port(&self.l1),
            l2_port_wait_cycles: port(&self.l2),
            l1_miss_waits: l1_waits,
            l1_miss_wait_cycles: l1_wait_cycles,
            l2_miss_waits: l2_waits,
            l2_miss_wait_cycles: l2_wait_cycles,
            miss_registers_overbooked: l1_over + l2_over,
            walker_wait_cycles,
        }
    }
}

/// How translation went in one run.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct TranslationReport {
    /// Warp-cycles spent waiting on a translation: per memory instruction, how much later
    /// than an L1 TLB hit its slowest page's translation was ready (TLB misses, walks,
    /// port and queue waits; not page faults), summed over instructions. With loads in
    /// flight (`gpu.loads_in_flight_per_warp` > 1) a warp's instructions overlap, so this
    /// bounds the time translation cost the warps from above.
    pub stall_cycles: u64,
    /// Warp-cycles in all: every warp's residence, launch to end, summed.
    pub warp_cycles: u64,
    /// `stall_cycles / warp_cycles`.
    pub stall_share: f64,
    /// Cycles lookups waited for an L1 / L2 TLB port, summed over lookups.
    pub l1_port_wait_cycles: u64,
    pub l2_port_wait_cycles: u64,
    /// L1 misses that waited for a miss register, and the cycles they waited.
    pub l1_miss_waits: u64,
    pub l1_miss_wait_cycles: u64,
    /// L2 misses that waited for a miss-queue entry, and the cycles they waited.
    pub l2_miss_waits: u64,
    pub l2_miss_wait_cycles: u64,
    /// Miss-register grants made while a hold processed earlier but starting later was
    /// counted (see `gpu::mshr`).
    pub miss_registers_overbooked: u64,
    /// Cycles walks waited for a free walker thread, summed over walks.
    pub walker_wait_cycles: u64,
}
