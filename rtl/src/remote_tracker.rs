//! Remote Tracker (CLAP §4.3) as a RustHDL module, and its rust-hdl simulation adapter.
//!
//! The cycle behaviour is specified in `remote_tracker.md` next to this file and in the
//! behavioural twin `mcmvm_models::blocks::remote_tracker`; the two must agree on every
//! output of every cycle (the lockstep tests check it against the emitted Verilog too).
//!
//! Implementation notes (rust-hdl 0.46):
//! - The table is `entries` rows of flip-flops, so all rows are compared at once (a CAM);
//!   rows are `Vec`s of DFFs and every `for` loop runs over `0..self.valid.len()`, which
//!   the Verilog generator unrolls.
//! - `#[hdl_gen]` has no `let`, and reading a `Local` that was assigned in the same pass
//!   sees last pass's value in simulation, so selections are written as "last assignment
//!   wins" loops (a later row overrides an earlier one) instead of accumulations.
//! - Every constant that meets a sized signal is a typed `Constant<Bits<N>>`: rust-hdl
//!   prints bare literals as 32-bit numbers, which would widen the Verilog expression.

use mcmvm_protocol::config::RtConfig;
use rust_hdl::prelude::*;

/// Largest table the 5-bit slot numbers and recency ranks can address.
pub const MAX_ENTRIES: usize = 32;

/// Why a Remote Tracker cannot be built from a configuration.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RtParamError {
    #[error("remote_tracker.entries: expected 1..={MAX_ENTRIES}, got {0}")]
    Entries(usize),
    #[error("remote_tracker.counter_bits: expected 2..=32, got {0}")]
    CounterBits(u32),
    #[error("remote_tracker.alloc_id_bits: the port is 8 bits wide, got {0}")]
    AllocIdBits(u32),
}

/// The Remote Tracker: a table of {valid, allocation ID, access counter, remote counter,
/// remote-recency rank} rows behind a two-stage (index, update) pipeline.
#[derive(LogicBlock)]
pub struct RemoteTrackerRtl {
    /// Synchronous reset: invalidates every row, cancels the ops in flight, zeroes outputs.
    pub reset: Signal<In, Bit>,
    /// A page walk completed this cycle.
    pub walk_valid: Signal<In, Bit>,
    /// Allocation ID from the PTE's ignored bits.
    pub walk_alloc_id: Signal<In, Bits<8>>,
    /// The walked page lives on another chiplet than the requester.
    pub walk_remote: Signal<In, Bit>,
    /// The driver asks for (and clears) the counters of `drain_alloc_id`.
    pub drain_valid: Signal<In, Bit>,
    /// Allocation ID to drain.
    pub drain_alloc_id: Signal<In, Bits<8>>,
    /// Drain response present (the cycle after the request).
    pub drain_done: Signal<Out, Bit>,
    /// The drained ID was in the table.
    pub drain_hit: Signal<Out, Bit>,
    /// Drained access counter (0 on a miss).
    pub drain_access: Signal<Out, Bits<32>>,
    /// Drained remote counter (0 on a miss).
    pub drain_remote: Signal<Out, Bits<32>>,
    /// A row was replaced this cycle (only with `report_evictions`).
    pub evict_valid: Signal<Out, Bit>,
    /// ID of the replaced row.
    pub evict_alloc_id: Signal<Out, Bits<8>>,
    /// Access counter of the replaced row.
    pub evict_access: Signal<Out, Bits<32>>,
    /// Remote counter of the replaced row.
    pub evict_remote: Signal<Out, Bits<32>>,
    /// Clock; everything updates on its rising edge.
    pub clock: Signal<In, Clock>,

    // Table rows.
    valid: Vec<DFF<Bit>>,
    alloc_id: Vec<DFF<Bits<8>>>,
    access: Vec<DFF<Bits<32>>>,
    remote: Vec<DFF<Bits<32>>>,
    /// 0 = remote counter written most recently; valid rows hold 0..valid_count.
    rank: Vec<DFF<Bits<5>>>,

    // Pipeline register between index and update, walk lane.
    walk_stage_valid: DFF<Bit>,
    walk_stage_id: DFF<Bits<8>>,
    walk_stage_remote: DFF<Bit>,
    walk_stage_hit: DFF<Bit>,
    walk_stage_slot: DFF<Bits<5>>,
    // Drain lane.
    drain_stage_valid: DFF<Bit>,
    drain_stage_hit: DFF<Bit>,
    drain_stage_slot: DFF<Bits<5>>,

    // Constants (typed, so the Verilog keeps their widths).
    slot_number: Vec<Constant<Bits<5>>>,
    oldest_rank: Constant<Bits<5>>,
    rank_zero: Constant<Bits<5>>,
    rank_one: Constant<Bits<5>>,
    counter_max: Constant<Bits<32>>,
    counter_zero: Constant<Bits<32>>,
    counter_one: Constant<Bits<32>>,
    id_zero: Constant<Bits<8>>,
    report_evictions: Constant<Bit>,

    // Update-stage combinational signals.
    /// Row the walk in the update stage writes: its hit row, else a free row, else the victim.
    walk_target: Signal<Local, Bits<5>>,
    /// The walk writes a new row (ID, 1, remote) instead of incrementing one.
    walk_fresh: Signal<Local, Bit>,
    /// The walk replaces a valid row (no free row, no hit).
    walk_evicts: Signal<Local, Bit>,
    /// The walk moves its row to rank 0 (a fresh row or a remote hit).
    walk_touch: Signal<Local, Bit>,
    /// Rank of `walk_target` before this edge.
    target_rank: Signal<Local, Bits<5>>,
    /// The drain in the update stage clears a row.
    drain_clears: Signal<Local, Bit>,
    /// Rank of the drained row before this edge.
    drained_rank: Signal<Local, Bits<5>>,
}

/// `n` default-built rows of flip-flops.
fn rows<T: Default>(n: usize) -> Vec<T> {
    (0..n).map(|_| T::default()).collect()
}

impl RemoteTrackerRtl {
    /// Build the module for `cfg`, checking the parameters the ports and ranks can carry.
    pub fn try_new(cfg: &RtConfig) -> Result<Self, RtParamError> {
        if !(1..=MAX_ENTRIES).contains(&cfg.entries) {
            return Err(RtParamError::Entries(cfg.entries));
        }
        if !(2..=32).contains(&cfg.counter_bits) {
            return Err(RtParamError::CounterBits(cfg.counter_bits));
        }
        if cfg.alloc_id_bits != 8 {
            return Err(RtParamError::AllocIdBits(cfg.alloc_id_bits));
        }
        let n = cfg.entries;
        Ok(RemoteTrackerRtl {
            reset: Default::default(),
            walk_valid: Default::default(),
            walk_alloc_id: Default::default(),
            walk_remote: Default::default(),
            drain_valid: Default::default(),
            drain_alloc_id: Default::default(),
            drain_done: Default::default(),
            drain_hit: Default::default(),
            drain_access: Default::default(),
            drain_remote: Default::default(),
            evict_valid: Default::default(),
            evict_alloc_id: Default::default(),
            evict_access: Default::default(),
            evict_remote: Default::default(),
            clock: Default::default(),
            valid: rows(n),
            alloc_id: rows(n),
            access: rows(n),
            remote: rows(n),
            rank: rows(n),
            walk_stage_valid: Default::default(),
            walk_stage_id: Default::default(),
            walk_stage_remote: Default::default(),
            walk_stage_hit: Default::default(),
            walk_stage_slot: Default::default(),
            drain_stage_valid: Default::default(),
            drain_stage_hit: Default::default(),
            drain_stage_slot: Default::default(),
            slot_number: (0..n)
                .map(|i| Constant::new((i as u64).to_bits()))
                .collect(),
            oldest_rank: Constant::new(((n - 1) as u64).to_bits()),
            rank_zero: Constant::new(0u64.to_bits()),
            rank_one: Constant::new(1u64.to_bits()),
            counter_max: Constant::new(u64::from(u32::MAX >> (32 - cfg.counter_bits)).to_bits()),
            counter_zero: Constant::new(0u64.to_bits()),
            counter_one: Constant::new(1u64.to_bits()),
            id_zero: Constant::new(0u64.to_bits()),
            report_evictions: Constant::new(cfg.report_evictions),
            walk_target: Default::default(),
            walk_fresh: Default::default(),
            walk_evicts: Default::default(),
            walk_touch: Default::default(),
            target_rank: Default::default(),
            drain_clears: Default::default(),
            drained_rank: Default::default(),
        })
    }

    /// Build the module for a validated `cfg` (`HwConfig::validate`).
    ///
    /// # Panics
    /// If `cfg` holds a value [`Self::try_new`] rejects; configurations from
    /// `HwConfig::load` never do.
    pub fn new(cfg: &RtConfig) -> Self {
        match Self::try_new(cfg) {
            Ok(rt) => rt,
            Err(e) => panic!("invalid Remote Tracker configuration: {e}"),
        }
    }
}

impl Logic for RemoteTrackerRtl {
    #[hdl_gen]
    fn update(&mut self) {
        // Every register holds unless assigned below (no latch can be inferred).
        dff_setup!(
            self,
            clock,
            walk_stage_valid,
            walk_stage_id,
            walk_stage_remote,
            walk_stage_hit,
            walk_stage_slot,
            drain_stage_valid,
            drain_stage_hit,
            drain_stage_slot
        );
        for i in 0..self.valid.len() {
            self.valid[i].clock.next = self.clock.val();
            self.alloc_id[i].clock.next = self.clock.val();
            self.access[i].clock.next = self.clock.val();
            self.remote[i].clock.next = self.clock.val();
            self.rank[i].clock.next = self.clock.val();
            self.valid[i].d.next = self.valid[i].q.val();
            self.alloc_id[i].d.next = self.alloc_id[i].q.val();
            self.access[i].d.next = self.access[i].q.val();
            self.remote[i].d.next = self.remote[i].q.val();
            self.rank[i].d.next = self.rank[i].q.val();
        }

        // ---- Update stage, combinational part: where the walk goes, what the drain reads.
        self.drain_clears.next = self.drain_stage_valid.q.val() && self.drain_stage_hit.q.val();
        self.walk_target.next = self.walk_stage_slot.q.val();
        self.walk_fresh.next = false;
        self.walk_evicts.next = false;
        self.walk_touch.next = self.walk_stage_remote.q.val();
        if !self.walk_stage_hit.q.val() {
            self.walk_fresh.next = true;
            self.walk_evicts.next = true;
            self.walk_touch.next = true;
            // Victim: the row whose remote counter was written longest ago.
            for i in 0..self.valid.len() {
                if self.valid[i].q.val() && (self.rank[i].q.val() == self.oldest_rank.val()) {
                    self.walk_target.next = self.slot_number[i].val();
                }
            }
            // A free row (the highest-numbered, counting the one the drain clears) wins.
            for i in 0..self.valid.len() {
                if !self.valid[i].q.val()
                    || (self.drain_stage_valid.q.val()
                        && self.drain_stage_hit.q.val()
                        && (self.drain_stage_slot.q.val() == self.slot_number[i].val()))
                {
                    self.walk_target.next = self.slot_number[i].val();
                    self.walk_evicts.next = false;
                }
            }
        } else if self.drain_stage_valid.q.val()
            && self.drain_stage_hit.q.val()
            && (self.drain_stage_slot.q.val() == self.walk_stage_slot.q.val())
        {
            // Drain first: the walk's row was cleared this very edge, so it starts afresh.
            self.walk_fresh.next = true;
            self.walk_touch.next = true;
        }
        self.target_rank.next = self.rank_zero.val();
        self.drained_rank.next = self.rank_zero.val();
        for i in 0..self.valid.len() {
            if self.walk_target.val() == self.slot_number[i].val() {
                self.target_rank.next = self.rank[i].q.val();
            }
            if self.drain_stage_slot.q.val() == self.slot_number[i].val() {
                self.drained_rank.next = self.rank[i].q.val();
            }
        }

        // ---- Outputs of the update stage.
        self.drain_done.next = self.drain_stage_valid.q.val();
        self.drain_hit.next = self.drain_clears.val();
        self.drain_access.next = self.counter_zero.val();
        self.drain_remote.next = self.counter_zero.val();
        self.evict_valid.next =
            self.report_evictions.val() && self.walk_stage_valid.q.val() && self.walk_evicts.val();
        self.evict_alloc_id.next = self.id_zero.val();
        self.evict_access.next = self.counter_zero.val();
        self.evict_remote.next = self.counter_zero.val();
        for i in 0..self.valid.len() {
            if self.drain_clears.val()
                && (self.drain_stage_slot.q.val() == self.slot_number[i].val())
            {
                self.drain_access.next = self.access[i].q.val();
                self.drain_remote.next = self.remote[i].q.val();
            }
            if self.report_evictions.val()
                && self.walk_stage_valid.q.val()
                && self.walk_evicts.val()
                && (self.walk_target.val() == self.slot_number[i].val())
            {
                self.evict_alloc_id.next = self.alloc_id[i].q.val();
                self.evict_access.next = self.access[i].q.val();
                self.evict_remote.next = self.remote[i].q.val();
            }
        }

        if self.reset.val() {
            // Reset blocks every other update: rows invalid, nothing in flight, outputs idle.
            for i in 0..self.valid.len() {
                self.valid[i].d.next = false;
            }
            self.walk_stage_valid.d.next = false;
            self.drain_stage_valid.d.next = false;
            self.drain_done.next = false;
            self.drain_hit.next = false;
            self.drain_access.next = self.counter_zero.val();
            self.drain_remote.next = self.counter_zero.val();
            self.evict_valid.next = false;
            self.evict_alloc_id.next = self.id_zero.val();
            self.evict_access.next = self.counter_zero.val();
            self.evict_remote.next = self.counter_zero.val();
        } else {
            // ---- Update stage, sequential part: drain clear, then the walk's write.
            for i in 0..self.valid.len() {
                if self.drain_clears.val()
                    && (self.drain_stage_slot.q.val() == self.slot_number[i].val())
                {
                    self.valid[i].d.next = false;
                }
                // Recency ranks of the rows that survive and are not the walk's row: close
                // the drained row's gap (-1 above it) and age the rows younger than the
                // touched one (+1); both at once cancel.
                if self.valid[i].q.val()
                    && !(self.drain_clears.val()
                        && (self.drain_stage_slot.q.val() == self.slot_number[i].val()))
                    && !(self.walk_stage_valid.q.val()
                        && self.walk_touch.val()
                        && (self.walk_target.val() == self.slot_number[i].val()))
                {
                    if self.drain_clears.val() && (self.rank[i].q.val() > self.drained_rank.val()) {
                        if !(self.walk_stage_valid.q.val()
                            && self.walk_touch.val()
                            && (self.walk_fresh.val()
                                || (self.rank[i].q.val() < self.target_rank.val())))
                        {
                            self.rank[i].d.next = self.rank[i].q.val() - self.rank_one.val();
                        }
                    } else if self.walk_stage_valid.q.val()
                        && self.walk_touch.val()
                        && (self.walk_fresh.val()
                            || (self.rank[i].q.val() < self.target_rank.val()))
                    {
                        self.rank[i].d.next = self.rank[i].q.val() + self.rank_one.val();
                    }
                }
                if self.walk_stage_valid.q.val()
                    && (self.walk_target.val() == self.slot_number[i].val())
                {
                    self.valid[i].d.next = true;
                    if self.walk_touch.val() {
                        self.rank[i].d.next = self.rank_zero.val();
                    }
                    if self.walk_fresh.val() {
                        self.alloc_id[i].d.next = self.walk_stage_id.q.val();
                        self.access[i].d.next = self.counter_one.val();
                        if self.walk_stage_remote.q.val() {
                            self.remote[i].d.next = self.counter_one.val();
                        } else {
                            self.remote[i].d.next = self.counter_zero.val();
                        }
                    } else {
                        // Counters saturate: they never wrap.
                        if self.access[i].q.val() != self.counter_max.val() {
                            self.access[i].d.next = self.access[i].q.val() + self.counter_one.val();
                        }
                        if self.walk_stage_remote.q.val()
                            && (self.remote[i].q.val() != self.counter_max.val())
                        {
                            self.remote[i].d.next = self.remote[i].q.val() + self.counter_one.val();
                        }
                    }
                }
            }

            // ---- Index stage: compare both incoming IDs with every row as it will be after
            // this edge (the walk being written is forwarded, the row being drained is gone).
            self.walk_stage_valid.d.next = self.walk_valid.val();
            self.walk_stage_id.d.next = self.walk_alloc_id.val();
            self.walk_stage_remote.d.next = self.walk_remote.val();
            self.walk_stage_hit.d.next = false;
            self.walk_stage_slot.d.next = self.rank_zero.val();
            self.drain_stage_valid.d.next = self.drain_valid.val();
            self.drain_stage_hit.d.next = false;
            self.drain_stage_slot.d.next = self.rank_zero.val();
            for i in 0..self.valid.len() {
                if self.walk_stage_valid.q.val()
                    && (self.walk_target.val() == self.slot_number[i].val())
                {
                    if self.walk_valid.val()
                        && (self.walk_stage_id.q.val() == self.walk_alloc_id.val())
                    {
                        self.walk_stage_hit.d.next = true;
                        self.walk_stage_slot.d.next = self.slot_number[i].val();
                    }
                    if self.drain_valid.val()
                        && (self.walk_stage_id.q.val() == self.drain_alloc_id.val())
                    {
                        self.drain_stage_hit.d.next = true;
                        self.drain_stage_slot.d.next = self.slot_number[i].val();
                    }
                } else if !(self.drain_clears.val()
                    && (self.drain_stage_slot.q.val() == self.slot_number[i].val()))
                    && self.valid[i].q.val()
                {
                    if self.walk_valid.val()
                        && (self.alloc_id[i].q.val() == self.walk_alloc_id.val())
                    {
                        self.walk_stage_hit.d.next = true;
                        self.walk_stage_slot.d.next = self.slot_number[i].val();
                    }
                    if self.drain_valid.val()
                        && (self.alloc_id[i].q.val() == self.drain_alloc_id.val())
                    {
                        self.drain_stage_hit.d.next = true;
                        self.drain_stage_slot.d.next = self.slot_number[i].val();
                    }
                }
            }
        }
    }
}

mod hdl_sim;
pub use hdl_sim::RemoteTrackerHdlSim;

#[cfg(test)]
mod tests;
