//! The Access Time Tracker (Forest) as a RustHDL module, and its rust-hdl simulation adapter.
//!
//! Same ports and cycle behaviour as the behavioural twin
//! `mcmvm_models::blocks::access_time_tracker::AccessTimeTracker`; the port list, the
//! per-cycle walk and the cost of each structure are in `access_time_tracker.md` next to
//! this file.
//!
//! The default structure keeps the recency among objects as a pseudo-LRU tree (31 node
//! bits, `recency = "tree-plru"`); `recency = "ranks"` builds the same module with exact
//! ranks (5 bits per slot) instead — the structure not chosen has empty vectors, so none of
//! its logic is emitted. Both derive the profiling interval from the timer when the threshold
//! is a power of two. The original age-matrix structure is
//! [`AccessTimeTrackerAgeMatrixRtl`], selectable through [`AttRecency`] for cost
//! comparisons.
//!
//! Table sizes and thresholds come from the configuration, but rust-hdl types have fixed
//! widths, so per-slot registers are typed wider than a configuration may need and every
//! value written to them is masked with a constant: bits a configuration can never set get
//! a constant-zero D input, and yosys removes those flip-flops.

mod age_matrix;
mod build;
mod hdl_sim;

pub use age_matrix::AccessTimeTrackerAgeMatrixRtl;
pub use hdl_sim::{AccessTimeTrackerAgeMatrixHdlSim, AccessTimeTrackerHdlSim};

use crate::emit::{verilog_of, EmitError};
use mcmvm_protocol::config::AttConfig;
use mcmvm_protocol::protocol::BlockKind;
use rust_hdl::prelude::*;

/// How the RTL keeps the recency order among objects (`access_time_tracker.md`,
/// "Recency"; the `recency` key of `[access_time_tracker]`).
pub use mcmvm_protocol::config::AttRecency;

/// The Verilog (module `access_time_tracker`) of the ATT built with `recency`.
pub fn verilog_with(cfg: &AttConfig, recency: AttRecency) -> Result<String, EmitError> {
    let name = BlockKind::AccessTimeTracker.module_name();
    let cfg = AttConfig {
        recency,
        ..cfg.clone()
    };
    match recency {
        AttRecency::Ranks | AttRecency::TreePlru => {
            verilog_of(&mut AccessTimeTrackerRtl::new(&cfg), name)
        }
        AttRecency::AgeMatrix => verilog_of(&mut AccessTimeTrackerAgeMatrixRtl::new(&cfg), name),
    }
}

/// The ATT's RTL: object table, per-object timers, the recency tree or exact ranks, and registered
/// `rec_*` / `irq_*` outputs. Interval counters exist only for a threshold that is not a
/// power of two; otherwise the interval is the timer's low bits.
#[derive(LogicBlock)]
pub struct AccessTimeTrackerRtl {
    /// Synchronous reset: clears the valid bits and the output registers; blocks every
    /// other update in its cycle.
    pub reset: Signal<In, Bit>,
    /// A GPU memory access to `acc_vpn` this cycle.
    pub acc_valid: Signal<In, Bit>,
    /// 4 KB virtual page number of the access.
    pub acc_vpn: Signal<In, Bits<32>>,
    /// Driver: register slot `reg_obj` for `reg_start_vpn ..= reg_end_vpn`.
    pub reg_valid: Signal<In, Bit>,
    /// Slot to register (values at or above `objects` are ignored).
    pub reg_obj: Signal<In, Bits<5>>,
    /// First VPN of the registered range.
    pub reg_start_vpn: Signal<In, Bits<32>>,
    /// Last VPN of the registered range (inclusive).
    pub reg_end_vpn: Signal<In, Bits<32>>,
    /// Driver: remove slot `rm_obj`.
    pub rm_valid: Signal<In, Bit>,
    /// Slot to remove.
    pub rm_obj: Signal<In, Bits<5>>,
    /// Driver: set the cease bit of slot `cease_obj`.
    pub cease_valid: Signal<In, Bit>,
    /// Slot whose profiling interrupts stop.
    pub cease_obj: Signal<In, Bits<5>>,
    /// A (page, timer) record for the access-counter store (the access of the last cycle).
    pub rec_valid: Signal<Out, Bit>,
    /// Object the recorded access hit.
    pub rec_obj: Signal<Out, Bits<5>>,
    /// VPN of the recorded access.
    pub rec_vpn: Signal<Out, Bits<32>>,
    /// The object's timer after the access (its access count, saturating).
    pub rec_timer: Signal<Out, Bits<32>>,
    /// Profiling interrupt: the recorded access completed a profiling interval.
    pub irq_valid: Signal<Out, Bit>,
    /// Object the interrupt names.
    pub irq_obj: Signal<Out, Bits<5>>,
    /// Some object is registered.
    pub oldest_valid: Signal<Out, Bit>,
    /// Least recently accessed (or registered) object.
    pub oldest_obj: Signal<Out, Bits<5>>,
    /// The clock; every flip-flop updates on its rising edge.
    pub clock: Signal<In, Clock>,

    // --- state ---
    /// Valid bit per slot.
    valid: DFF<Bits<32>>,
    /// Cease bit per slot.
    cease: DFF<Bits<32>>,
    start_vpn: Vec<DFF<Bits<32>>>,
    end_vpn: Vec<DFF<Bits<32>>>,
    /// Object-local access timer, saturating at `timer_max`.
    timer: Vec<DFF<Bits<32>>>,
    /// Accesses since the last profiling interrupt, wrapping at `threshold`: one per slot
    /// when the threshold is not a power of two, none otherwise (then it is the timer's
    /// low bits).
    interval: Vec<DFF<Bits<32>>>,
    /// Recency rank among the valid slots: 0 = least recently touched, `count - 1` = most.
    rank: Vec<DFF<Bits<5>>>,
    /// Valid slots (0..=objects). `ranks` only, like every field and signal of the ranks
    /// below: one element, or none under `tree-plru`, so no rank logic is emitted there.
    count: Vec<DFF<Bits<6>>>,
    /// `tree-plru` only (else empty): bit `n` (1..=31) is node `n` of the pseudo-LRU tree
    /// (heap order: node `n` has the children `2n` and `2n + 1`); 1 = its upper half is
    /// the older one.
    tree: Vec<DFF<Bits<32>>>,
    rec_valid_q: DFF<Bit>,
    rec_obj_q: DFF<Bits<5>>,
    rec_vpn_q: DFF<Bits<32>>,
    rec_timer_q: DFF<Bits<32>>,
    irq_valid_q: DFF<Bit>,
    irq_obj_q: DFF<Bits<5>>,

    // --- constants (typed, so the emitted Verilog has the right widths) ---
    /// Slot number `i` as an object port value.
    slot_id: Vec<Constant<Bits<5>>>,
    /// Slot `i` as a one-hot mask.
    slot_bit: Vec<Constant<Bits<32>>>,
    /// The `objects` low bits.
    live_slots: Constant<Bits<32>>,
    timer_max: Constant<Bits<32>>,
    threshold: Constant<Bits<32>>,
    /// Covers every interval value below `threshold`.
    interval_mask: Constant<Bits<32>>,
    /// The interval is the timer's low bits (`threshold` is a power of two).
    interval_from_timer: Constant<Bit>,
    /// `tree-plru` only: per tree node `n` (at index `n - 1`), the live slots of its lower
    /// and upper half, and its own bit.
    node_lower: Vec<Constant<Bits<32>>>,
    node_upper: Vec<Constant<Bits<32>>>,
    node_bit: Vec<Constant<Bits<32>>>,
    /// Covers every rank below `objects`.
    rank_mask: Vec<Constant<Bits<5>>>,
    /// Covers every count up to `objects`.
    count_mask: Vec<Constant<Bits<6>>>,
    one: Constant<Bits<32>>,
    zero: Constant<Bits<32>>,
    zero_obj: Constant<Bits<5>>,
    rank_one: Vec<Constant<Bits<5>>>,
    count_one: Vec<Constant<Bits<6>>>,
    count_zero: Vec<Constant<Bits<6>>>,

    // --- combinational values ---
    /// Valid slots whose range holds the access VPN.
    in_range: Signal<Local, Bits<32>>,
    hit: Signal<Local, Bit>,
    /// The lowest slot of `in_range`, one-hot (zero on a miss).
    hit_bit: Signal<Local, Bits<32>>,
    hit_obj: Signal<Local, Bits<5>>,
    hit_timer: Signal<Local, Bits<32>>,
    hit_interval: Signal<Local, Bits<32>>,
    hit_rank: Vec<Signal<Local, Bits<5>>>,
    hit_cease: Signal<Local, Bit>,
    advanced: Signal<Local, Bit>,
    timer_inc: Signal<Local, Bits<32>>,
    timer_after: Signal<Local, Bits<32>>,
    interval_inc: Signal<Local, Bits<32>>,
    interval_after: Signal<Local, Bits<32>>,
    wrapped: Signal<Local, Bit>,
    reg_bit: Signal<Local, Bits<32>>,
    rm_bit: Signal<Local, Bits<32>>,
    cease_bit: Signal<Local, Bits<32>>,
    driver_writes_hit: Signal<Local, Bit>,
    reg_rank: Vec<Signal<Local, Bits<5>>>,
    rm_rank: Vec<Signal<Local, Bits<5>>>,
    /// The hit slot leaves its place in the order (it is appended, or removed).
    lift_hit: Vec<Signal<Local, Bit>>,
    /// A valid slot other than the hit one is re-registered.
    lift_reg: Vec<Signal<Local, Bit>>,
    /// A valid slot neither hit nor registered is removed.
    lift_rm: Vec<Signal<Local, Bit>>,
    /// The hit slot ends up newest but for a register.
    append_hit: Vec<Signal<Local, Bit>>,
    /// The registered slot ends up newest.
    append_reg: Vec<Signal<Local, Bit>>,
    lifted: Vec<Signal<Local, Bits<6>>>,
    /// Valid slots that keep their relative place: the rank the first appended slot gets.
    kept: Vec<Signal<Local, Bits<6>>>,
    kept_rank: Vec<Signal<Local, Bits<5>>>,
    reg_new_rank: Vec<Signal<Local, Bits<5>>>,
    /// Per slot (reused in the loop): lifted slots ranked below it.
    rank_drop: Vec<Signal<Local, Bits<5>>>,
    oldest_slot: Vec<Signal<Local, Bits<5>>>,
    /// `tree-plru` only (one element, else empty): the touches that reach the tree (a
    /// slot removed in the cycle is not touched), the tree after them, the valid slots left
    /// after every node has excluded its younger half (exactly the oldest one), its number.
    hit_touch: Vec<Signal<Local, Bits<32>>>,
    reg_touch: Vec<Signal<Local, Bits<32>>>,
    tree_next: Vec<Signal<Local, Bits<32>>>,
    tree_survivor: Vec<Signal<Local, Bits<32>>>,
    tree_oldest: Vec<Signal<Local, Bits<5>>>,
}

impl Logic for AccessTimeTrackerRtl {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            valid,
            cease,
            rec_valid_q,
            rec_obj_q,
            rec_vpn_q,
            rec_timer_q,
            irq_valid_q,
            irq_obj_q
        );
        // Per-slot registers hold by default. The masks make bits no configuration can
        // set constant zero, so synthesis drops their flip-flops.
        for i in 0..self.slot_id.len() {
            self.start_vpn[i].clock.next = self.clock.val();
            self.end_vpn[i].clock.next = self.clock.val();
            self.timer[i].clock.next = self.clock.val();
            self.start_vpn[i].d.next = self.start_vpn[i].q.val();
            self.end_vpn[i].d.next = self.end_vpn[i].q.val();
            self.timer[i].d.next = self.timer[i].q.val() & self.timer_max.val();
        }
        for r in 0..self.count.len() {
            self.count[r].clock.next = self.clock.val();
            self.count[r].d.next = self.count[r].q.val();
            for i in 0..self.rank.len() {
                self.rank[i].clock.next = self.clock.val();
                self.rank[i].d.next = self.rank[i].q.val() & self.rank_mask[r].val();
            }
            // Per-slot scratch of section 6, assigned on every path (no latch).
            self.rank_drop[r].next = self.zero_obj.val();
        }
        for i in 0..self.interval.len() {
            self.interval[i].clock.next = self.clock.val();
            self.interval[i].d.next = self.interval[i].q.val() & self.interval_mask.val();
        }
        for p in 0..self.tree.len() {
            self.tree[p].clock.next = self.clock.val();
            self.tree[p].d.next = self.tree[p].q.val();
        }

        // 1. Range match: the lowest valid slot whose range holds the VPN, one-hot
        //    (x & -x), then its fields read out by AND-OR (no priority mux chain).
        self.in_range.next = self.zero.val();
        for i in 0..self.slot_id.len() {
            if self.acc_valid.val()
                & self.valid.q.val().get_bit(i)
                & (self.start_vpn[i].q.val() <= self.acc_vpn.val())
                & (self.acc_vpn.val() <= self.end_vpn[i].q.val())
            {
                self.in_range.next = self.in_range.val() | self.slot_bit[i].val();
            }
        }
        self.hit_bit.next = self.in_range.val() & (!self.in_range.val() + self.one.val());
        self.hit.next = self.in_range.val().any();
        self.hit_cease.next = (self.cease.q.val() & self.hit_bit.val()).any();
        self.hit_obj.next = self.zero_obj.val();
        self.hit_timer.next = self.zero.val();
        for i in 0..self.slot_id.len() {
            if self.hit_bit.val().get_bit(i) {
                self.hit_obj.next = self.hit_obj.val() | self.slot_id[i].val();
                self.hit_timer.next = self.hit_timer.val() | self.timer[i].q.val();
            }
        }
        self.hit_interval.next = self.zero.val();
        for i in 0..self.interval.len() {
            if self.hit_bit.val().get_bit(i) {
                self.hit_interval.next = self.hit_interval.val() | self.interval[i].q.val();
            }
        }

        // 2. One shared incrementer: the timer saturates; the interval advances only with
        //    the timer and wraps at the threshold. The interval always equals the timer
        //    modulo the threshold, so for a power of two it is the timer's low bits.
        self.advanced.next = self.hit_timer.val() != self.timer_max.val();
        self.timer_inc.next = self.hit_timer.val() + self.one.val();
        self.timer_after.next = self.hit_timer.val();
        self.interval_inc.next = self.hit_interval.val() + self.one.val();
        self.interval_after.next = self.hit_interval.val();
        self.wrapped.next = false;
        if self.advanced.val() {
            self.timer_after.next = self.timer_inc.val();
            if self.interval_from_timer.val() {
                self.interval_after.next = self.timer_inc.val() & self.interval_mask.val();
            } else {
                self.interval_after.next = self.interval_inc.val();
                if self.interval_inc.val() == self.threshold.val() {
                    self.interval_after.next = self.zero.val();
                }
            }
            // The interval after an advance is never 0 unless it wrapped.
            self.wrapped.next = !self.interval_after.val().any();
        }

        // 3. Driver ports decoded to one-hot slot masks (object numbers >= objects fall
        //    outside `live_slots` and name no slot).
        self.reg_bit.next = self.zero.val();
        self.rm_bit.next = self.zero.val();
        self.cease_bit.next = self.zero.val();
        if self.reg_valid.val() {
            self.reg_bit.next = (self.one.val() << self.reg_obj.val()) & self.live_slots.val();
        }
        if self.rm_valid.val() {
            self.rm_bit.next = (self.one.val() << self.rm_obj.val()) & self.live_slots.val();
        }
        if self.cease_valid.val() {
            self.cease_bit.next = (self.one.val() << self.cease_obj.val()) & self.live_slots.val();
        }
        self.driver_writes_hit.next =
            ((self.reg_bit.val() | self.rm_bit.val() | self.cease_bit.val()) & self.hit_bit.val())
                .any();

        // 4. Recency ranks. The new order is the old one without the slots that leave
        //    their place (the hit slot; a valid re-registered one; a valid removed one),
        //    then the hit slot unless registered or removed, then the registered slot
        //    unless removed. A kept slot drops by the lifted slots ranked below it.
        for r in 0..self.count.len() {
            self.hit_rank[r].next = self.zero_obj.val();
            for i in 0..self.rank.len() {
                if self.hit_bit.val().get_bit(i) {
                    self.hit_rank[r].next = self.hit_rank[r].val() | self.rank[i].q.val();
                }
            }
            self.reg_rank[r].next = self.zero_obj.val();
            self.rm_rank[r].next = self.zero_obj.val();
            for i in 0..self.rank.len() {
                if self.reg_bit.val().get_bit(i) {
                    self.reg_rank[r].next = self.reg_rank[r].val() | self.rank[i].q.val();
                }
                if self.rm_bit.val().get_bit(i) {
                    self.rm_rank[r].next = self.rm_rank[r].val() | self.rank[i].q.val();
                }
            }
            self.lift_hit[r].next = self.hit.val();
            self.lift_reg[r].next =
                (self.reg_bit.val() & self.valid.q.val() & !self.hit_bit.val()).any();
            self.lift_rm[r].next = (self.rm_bit.val()
                & self.valid.q.val()
                & !self.hit_bit.val()
                & !self.reg_bit.val())
            .any();
            self.append_hit[r].next = self.hit.val()
                & !((self.reg_bit.val() | self.rm_bit.val()) & self.hit_bit.val()).any();
            self.append_reg[r].next =
                self.reg_bit.val().any() & !(self.reg_bit.val() & self.rm_bit.val()).any();
            self.lifted[r].next = self.count_zero[r].val();
            if self.lift_hit[r].val() {
                self.lifted[r].next = self.lifted[r].val() + self.count_one[r].val();
            }
            if self.lift_reg[r].val() {
                self.lifted[r].next = self.lifted[r].val() + self.count_one[r].val();
            }
            if self.lift_rm[r].val() {
                self.lifted[r].next = self.lifted[r].val() + self.count_one[r].val();
            }
            self.kept[r].next = self.count[r].q.val() - self.lifted[r].val();
            self.kept_rank[r].next = self.kept[r].val().get_bits::<5>(0);
            self.reg_new_rank[r].next = self.kept_rank[r].val();
            if self.append_hit[r].val() {
                self.reg_new_rank[r].next = self.kept_rank[r].val() + self.rank_one[r].val();
            }
        }

        // 4b. Tree pseudo-LRU (`tree-plru`). A touch points every node above the slot at
        //     the other half (the register after the access: it is the newer touch).
        //     The oldest: every node excludes its younger half — the upper one unless its
        //     bit says the upper is older and it holds a valid slot, or the lower holds
        //     none — and the one valid slot no node excluded remains.
        for p in 0..self.tree.len() {
            self.hit_touch[p].next = self.hit_bit.val() & !self.rm_bit.val();
            self.reg_touch[p].next = self.reg_bit.val() & !self.rm_bit.val();
            self.tree_next[p].next = self.tree[p].q.val();
            self.tree_survivor[p].next = self.valid.q.val();
            for n in 0..self.node_bit.len() {
                if (self.reg_touch[p].val() & self.node_lower[n].val()).any() {
                    self.tree_next[p].next = self.tree_next[p].val() | self.node_bit[n].val();
                } else if (self.reg_touch[p].val() & self.node_upper[n].val()).any() {
                    self.tree_next[p].next = self.tree_next[p].val() & !self.node_bit[n].val();
                } else if (self.hit_touch[p].val() & self.node_lower[n].val()).any() {
                    self.tree_next[p].next = self.tree_next[p].val() | self.node_bit[n].val();
                } else if (self.hit_touch[p].val() & self.node_upper[n].val()).any() {
                    self.tree_next[p].next = self.tree_next[p].val() & !self.node_bit[n].val();
                }
                if (self.valid.q.val() & self.node_upper[n].val()).any()
                    & ((self.tree[p].q.val() & self.node_bit[n].val()).any()
                        | !(self.valid.q.val() & self.node_lower[n].val()).any())
                {
                    self.tree_survivor[p].next =
                        self.tree_survivor[p].val() & !self.node_lower[n].val();
                } else {
                    self.tree_survivor[p].next =
                        self.tree_survivor[p].val() & !self.node_upper[n].val();
                }
            }
            self.tree_oldest[p].next = self.zero_obj.val();
            for i in 0..self.slot_id.len() {
                if self.tree_survivor[p].val().get_bit(i) {
                    self.tree_oldest[p].next = self.tree_oldest[p].val() | self.slot_id[i].val();
                }
            }
        }

        // 5. Oldest valid slot: the one ranked 0 (exactly one while any slot is valid).
        self.oldest_obj.next = self.zero_obj.val();
        for r in 0..self.count.len() {
            self.oldest_slot[r].next = self.zero_obj.val();
            for i in 0..self.rank.len() {
                if self.valid.q.val().get_bit(i) & !self.rank[i].q.val().any() {
                    self.oldest_slot[r].next = self.oldest_slot[r].val() | self.slot_id[i].val();
                }
            }
            self.oldest_obj.next = self.oldest_slot[r].val();
        }
        self.oldest_valid.next = self.valid.q.val().any();
        for p in 0..self.tree.len() {
            self.oldest_obj.next = self.tree_oldest[p].val();
        }
        self.rec_valid.next = self.rec_valid_q.q.val();
        self.rec_obj.next = self.rec_obj_q.q.val();
        self.rec_vpn.next = self.rec_vpn_q.q.val();
        self.rec_timer.next = self.rec_timer_q.q.val();
        self.irq_valid.next = self.irq_valid_q.q.val();
        self.irq_obj.next = self.irq_obj_q.q.val();

        // 6. State updates at the edge. Order inside a slot: access, register, cease,
        //    remove (the last write wins).
        if self.reset.val() {
            self.valid.d.next = self.zero.val();
            for r in 0..self.count.len() {
                self.count[r].d.next = self.count_zero[r].val();
            }
            self.rec_valid_q.d.next = false;
            self.rec_obj_q.d.next = self.zero_obj.val();
            self.rec_vpn_q.d.next = self.zero.val();
            self.rec_timer_q.d.next = self.zero.val();
            self.irq_valid_q.d.next = false;
            self.irq_obj_q.d.next = self.zero_obj.val();
            for p in 0..self.tree.len() {
                self.tree[p].d.next = self.zero.val();
            }
        } else {
            for p in 0..self.tree.len() {
                self.tree[p].d.next = self.tree_next[p].val();
            }
            for i in 0..self.slot_id.len() {
                if self.hit_bit.val().get_bit(i) {
                    self.timer[i].d.next = self.timer_after.val() & self.timer_max.val();
                }
                if self.reg_bit.val().get_bit(i) {
                    self.start_vpn[i].d.next = self.reg_start_vpn.val();
                    self.end_vpn[i].d.next = self.reg_end_vpn.val();
                    self.timer[i].d.next = self.zero.val();
                }
            }
            for r in 0..self.count.len() {
                for i in 0..self.rank.len() {
                    self.rank_drop[r].next = self.zero_obj.val();
                    if self.lift_hit[r].val() & (self.rank[i].q.val() > self.hit_rank[r].val()) {
                        self.rank_drop[r].next = self.rank_drop[r].val() + self.rank_one[r].val();
                    }
                    if self.lift_reg[r].val() & (self.rank[i].q.val() > self.reg_rank[r].val()) {
                        self.rank_drop[r].next = self.rank_drop[r].val() + self.rank_one[r].val();
                    }
                    if self.lift_rm[r].val() & (self.rank[i].q.val() > self.rm_rank[r].val()) {
                        self.rank_drop[r].next = self.rank_drop[r].val() + self.rank_one[r].val();
                    }
                    self.rank[i].d.next =
                        (self.rank[i].q.val() - self.rank_drop[r].val()) & self.rank_mask[r].val();
                    if self.append_hit[r].val() & self.hit_bit.val().get_bit(i) {
                        self.rank[i].d.next = self.kept_rank[r].val() & self.rank_mask[r].val();
                    }
                    if self.append_reg[r].val() & self.reg_bit.val().get_bit(i) {
                        self.rank[i].d.next = self.reg_new_rank[r].val() & self.rank_mask[r].val();
                    }
                }
            }
            for i in 0..self.interval.len() {
                if self.hit_bit.val().get_bit(i) {
                    self.interval[i].d.next = self.interval_after.val() & self.interval_mask.val();
                }
                if self.reg_bit.val().get_bit(i) {
                    self.interval[i].d.next = self.zero.val();
                }
            }
            self.valid.d.next = (self.valid.q.val() | self.reg_bit.val())
                & !self.rm_bit.val()
                & self.live_slots.val();
            self.cease.d.next = ((self.cease.q.val() & !self.reg_bit.val()) | self.cease_bit.val())
                & self.live_slots.val();
            for r in 0..self.count.len() {
                self.count[r].d.next = self.kept[r].val();
                if self.append_hit[r].val() & self.append_reg[r].val() {
                    self.count[r].d.next =
                        (self.kept[r].val() + self.count_one[r].val() + self.count_one[r].val())
                            & self.count_mask[r].val();
                } else if self.append_hit[r].val() | self.append_reg[r].val() {
                    self.count[r].d.next =
                        (self.kept[r].val() + self.count_one[r].val()) & self.count_mask[r].val();
                }
            }
            self.rec_valid_q.d.next = self.hit.val();
            self.rec_obj_q.d.next = self.hit_obj.val();
            self.rec_vpn_q.d.next = self.zero.val();
            self.rec_timer_q.d.next = self.zero.val();
            if self.hit.val() {
                self.rec_vpn_q.d.next = self.acc_vpn.val();
                self.rec_timer_q.d.next = self.timer_after.val();
            }
            self.irq_valid_q.d.next = false;
            self.irq_obj_q.d.next = self.zero_obj.val();
            if self.hit.val()
                & self.wrapped.val()
                & !self.hit_cease.val()
                & !self.driver_writes_hit.val()
            {
                self.irq_valid_q.d.next = true;
                self.irq_obj_q.d.next = self.hit_obj.val();
            }
        }
    }
}

#[cfg(test)]
mod tests;
