//! The Access Time Tracker (Forest) as a RustHDL module, and its rust-hdl simulation adapter.
//!
//! Same ports and cycle behaviour as the behavioural twin
//! `mcmvm_models::blocks::access_time_tracker::AccessTimeTracker`; the port list, the
//! per-cycle walk and the cost of each structure are in `access_time_tracker.md` next to
//! this file.
//!
//! The default structure keeps the recency among objects as a pseudo-LRU tree (31 node
//! bits, `recency = "tree-plru"`); `recency = "ranks"` builds the same module with exact
//! ranks (5 bits per slot) and `recency = "age-matrix"` with the original exact age matrix
//! (`objects - 1` bits per slot) instead — the structures not chosen have empty vectors, so
//! none of their logic is emitted. All three share the ports, the object table, the timers
//! and the read-out, and derive the profiling interval from the timer when the threshold is
//! a power of two.
//!
//! Table sizes and thresholds come from the configuration, but rust-hdl types have fixed
//! widths, so per-slot registers are typed wider than a configuration may need and every
//! value written to them is masked with a constant: bits a configuration can never set get
//! a constant-zero D input, and yosys removes those flip-flops.

mod build;
mod hdl_sim;
mod update;

pub use hdl_sim::AccessTimeTrackerHdlSim;

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
    verilog_of(&mut AccessTimeTrackerRtl::new(&cfg), name)
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
    /// `age-matrix` only (else empty): row `i` holds the slots touched more recently than
    /// slot `i`.
    newer: Vec<DFF<Bits<32>>>,
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
    /// `age-matrix` only: the bits row `i` can hold (every live slot but `i`).
    row_mask: Vec<Constant<Bits<32>>>,
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
    /// `age-matrix` only (one element, else empty): the slots touched this cycle (hit and
    /// registered), whether the oldest valid slot is found yet, and its number.
    touched: Vec<Signal<Local, Bits<32>>>,
    matrix_found: Vec<Signal<Local, Bit>>,
    matrix_oldest: Vec<Signal<Local, Bits<5>>>,
}

#[cfg(test)]
mod tests;
