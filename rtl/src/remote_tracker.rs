//! Remote Tracker (CLAP §4.3) as a RustHDL module, and its rust-hdl simulation adapter.
//!
//! The cycle behaviour is specified in `remote_tracker.md` next to this file and in the
//! behavioural twin `mcmvm_models::blocks::remote_tracker`; the two must agree on every
//! output of every cycle (the lockstep tests check it against the emitted Verilog too).
//!
//! Implementation notes (rust-hdl 0.46):
//! - The table is `entries` rows of flip-flops, so all rows are compared at once (a CAM);
//!   rows are `Vec`s of DFFs and every `for` loop (over the rows, `0..self.valid.len()`, or
//!   over a read tree's nodes) has constant bounds, which the Verilog generator unrolls.
//!   The update function is in `remote_tracker/datapath.rs`.
//! - `#[hdl_gen]` has no `let`, and reading a `Local` that was assigned in the same pass
//!   sees last pass's value in simulation, so a wide selection is never an accumulation
//!   into one signal: a row is selected by a one-hot flag, masked into a leaf of a balanced
//!   OR tree of separate locals (`READ_TREE_NODES`), and the root is the selected row
//!   (AND-OR, no priority chain). The highest free row is a balanced priority tree of the
//!   same layout, and the replacement victim a one-hot flag (unique when the table is full).
//! - One walk writes one row per cycle, so the row's counters are read once (the target
//!   tree) and incremented by one shared saturating incrementer pair; each row only muxes
//!   the shared new value in.
//! - Every constant that meets a sized signal is a typed `Constant<Bits<N>>`: rust-hdl
//!   prints bare literals as 32-bit numbers, which would widen the Verilog expression.

use mcmvm_protocol::config::{RtConfig, RtReplacement};
use rust_hdl::prelude::*;

/// Largest table the 5-bit slot numbers and recency ranks can address.
pub const MAX_ENTRIES: usize = 32;

/// Nodes of a read tree: `MAX_ENTRIES` leaves (node `i` = row `i` masked by its select,
/// zero for rows the table does not have), then the OR levels: node `MAX_ENTRIES + j` is
/// `node[2j] | node[2j + 1]`, so children always precede their parent and the root is the
/// last node (62; `datapath.rs` writes the numbers out, as the Verilog generator evaluates
/// index expressions over loop variables and literals only). The layout is fixed so that
/// rows the table does not have are constant-zero leaves.
const READ_TREE_NODES: usize = 2 * MAX_ENTRIES - 1;
const _: () = assert!(MAX_ENTRIES == 32 && READ_TREE_NODES == 63);

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
    /// `ranks` only (else empty): 0 = remote counter written most recently; valid rows
    /// hold 0..valid_count.
    rank: Vec<DFF<Bits<5>>>,
    /// `nru` only (else empty): the row's remote counter was written since the bits were
    /// last cleared.
    used: Vec<DFF<Bit>>,
    /// `tree-plru` only (else empty): bit `j` = inner node `32 + j` of the pseudo-LRU tree
    /// (layout of the read trees) points the victim search to its upper child `2j + 1`.
    plru: Vec<DFF<Bit>>,

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
    rank_zero: Constant<Bits<5>>,
    // `ranks` only (one element, else empty: an unused constant is a lint warning).
    oldest_rank: Vec<Constant<Bits<5>>>,
    rank_one: Vec<Constant<Bits<5>>>,
    /// -1 modulo 32: the rank step that closes a drained row's gap.
    rank_minus_one: Vec<Constant<Bits<5>>>,
    counter_max: Constant<Bits<32>>,
    counter_zero: Constant<Bits<32>>,
    counter_one: Constant<Bits<32>>,
    id_zero: Constant<Bits<8>>,
    report_evictions: Constant<Bit>,
    /// `tree-plru` only: per inner node `32 + j`, its upper child holds rows of this table
    /// (row `lowest(2j + 1) < entries`); the search never enters a child without rows.
    plru_upper_live: Vec<Constant<Bit>>,
    /// `tree-plru` only: the slot numbers of the rows (the victim tree's leaves).
    plru_leaf: Vec<Constant<Bits<5>>>,

    // Update-stage combinational signals.
    /// Priority tree of the free rows (`READ_TREE_NODES` nodes, layout of the read trees):
    /// per node, whether a row below it is free, and the highest-numbered such row.
    free_any_tree: Vec<Signal<Local, Bit>>,
    free_slot_tree: Vec<Signal<Local, Bits<5>>>,
    /// Some row is free (counting the one the drain clears).
    any_free: Signal<Local, Bit>,
    /// Per row: it is the update-stage walk's slot (`walk_stage_slot` decoded).
    slot_sel: Vec<Signal<Local, Bit>>,
    /// Per row: the replacement victim when no row is free (`ranks`: valid with rank
    /// `entries - 1`; `nru`: the root of `victim_slot_tree`).
    victim_sel: Vec<Signal<Local, Bit>>,
    /// `nru` only: priority tree of the rows whose bit is clear (layout of the free-row
    /// tree; the root is the highest such row, row 0 if none).
    victim_any_tree: Vec<Signal<Local, Bit>>,
    victim_slot_tree: Vec<Signal<Local, Bits<5>>>,
    /// `nru` only: OR tree of "valid after this edge, not the target, bit clear".
    other_clear_tree: Vec<Signal<Local, Bit>>,
    /// `tree-plru` only: per node, the row the pointers lead to below it (the root is the
    /// victim), and whether the walk's target row is below it (OR tree of `target_sel`).
    plru_slot_tree: Vec<Signal<Local, Bits<5>>>,
    plru_touch_tree: Vec<Signal<Local, Bit>>,
    /// The walk in the update stage moves its row to the front (`walk_touch` of a walk).
    touch: Signal<Local, Bit>,
    /// Per row: the target tree reads it (the hit row on a hit, else the victim).
    read_sel: Vec<Signal<Local, Bit>>,
    /// The walk writes a new row (ID, 1, remote) instead of incrementing one.
    walk_fresh: Signal<Local, Bit>,
    /// The walk replaces a valid row (no free row, no hit).
    walk_evicts: Signal<Local, Bit>,
    /// The walk moves its row to rank 0 (a fresh row or a remote hit).
    walk_touch: Signal<Local, Bit>,
    /// `ranks` only (one element): rank of the hit row before this edge (only read on a
    /// hit that is not fresh).
    target_rank: Vec<Signal<Local, Bits<5>>>,
    /// The drain in the update stage clears a row.
    drain_clears: Signal<Local, Bit>,
    /// `ranks` only (one element): rank of the drained row before this edge.
    drained_rank: Vec<Signal<Local, Bits<5>>>,
    /// Per row: the walk in the update stage writes it (hit row, else highest free row,
    /// else the victim; one-hot).
    target_sel: Vec<Signal<Local, Bit>>,
    /// Per row: the drain in the update stage clears it.
    drain_sel: Vec<Signal<Local, Bit>>,
    /// `ranks` only, per row: the rank moves up (`rank_inc`), down (`rank_dec`); the net step.
    rank_inc: Vec<Signal<Local, Bit>>,
    rank_dec: Vec<Signal<Local, Bit>>,
    rank_step: Vec<Signal<Local, Bits<5>>>,
    /// Per row: the incoming walk / drain ID matches the row as it is after this edge.
    walk_match: Vec<Signal<Local, Bit>>,
    drain_match: Vec<Signal<Local, Bit>>,
    // Read trees (`READ_TREE_NODES` nodes each): the target row, the drained row, and the
    // slot numbers of the matching rows; the rank trees only with `ranks`.
    target_access_tree: Vec<Signal<Local, Bits<32>>>,
    target_remote_tree: Vec<Signal<Local, Bits<32>>>,
    target_rank_tree: Vec<Signal<Local, Bits<5>>>,
    target_id_tree: Vec<Signal<Local, Bits<8>>>,
    drain_access_tree: Vec<Signal<Local, Bits<32>>>,
    drain_remote_tree: Vec<Signal<Local, Bits<32>>>,
    drain_rank_tree: Vec<Signal<Local, Bits<5>>>,
    walk_slot_tree: Vec<Signal<Local, Bits<5>>>,
    drain_slot_tree: Vec<Signal<Local, Bits<5>>>,
    /// The target row's counters after the walk (shared saturating incrementers).
    new_access: Signal<Local, Bits<32>>,
    new_remote: Signal<Local, Bits<32>>,
    /// The walk writes the remote counter (fresh row or remote walk).
    remote_write: Signal<Local, Bit>,
    /// The update-stage walk's ID equals the incoming walk's / drain's (forwarding).
    forward_walk: Signal<Local, Bit>,
    forward_drain: Signal<Local, Bit>,
}

/// The lowest row under node `node` of a read tree's layout (`READ_TREE_NODES`).
fn plru_lowest_row(mut node: usize) -> usize {
    while node >= MAX_ENTRIES {
        node = 2 * (node - MAX_ENTRIES);
    }
    node
}

/// `n` default-built rows of flip-flops.
fn rows<T: Default>(n: usize) -> Vec<T> {
    (0..n).map(|_| T::default()).collect()
}

/// Rows of each replacement order's state and logic. Only the configured order's are
/// non-zero: the other orders' registers and trees do not exist at all, so their loops emit
/// no Verilog.
struct ReplacementSizes {
    /// `rank`, `rank_inc`, `rank_dec`, `rank_step`: one per row with exact ranks.
    rank_rows: usize,
    /// The single rank constants and signals (`oldest_rank`, `target_rank`, ...): 1 or 0.
    rank_one_of: usize,
    /// The rank read trees.
    rank_tree: usize,
    /// `used`: one bit per row with NRU.
    used_rows: usize,
    /// The NRU victim trees.
    nru_tree: usize,
    /// `plru`: the tree pseudo-LRU's node bits.
    plru_nodes: usize,
    /// `plru_leaf`: one per row with tree pseudo-LRU.
    plru_rows: usize,
    /// The tree pseudo-LRU's read trees.
    plru_tree: usize,
}

impl ReplacementSizes {
    fn of(replacement: RtReplacement, n: usize) -> Self {
        let on = |order: RtReplacement, size: usize| if replacement == order { size } else { 0 };
        ReplacementSizes {
            rank_rows: on(RtReplacement::Ranks, n),
            rank_one_of: on(RtReplacement::Ranks, 1),
            rank_tree: on(RtReplacement::Ranks, READ_TREE_NODES),
            used_rows: on(RtReplacement::Nru, n),
            nru_tree: on(RtReplacement::Nru, READ_TREE_NODES),
            plru_nodes: on(RtReplacement::TreePlru, MAX_ENTRIES - 1),
            plru_rows: on(RtReplacement::TreePlru, n),
            plru_tree: on(RtReplacement::TreePlru, READ_TREE_NODES),
        }
    }
}

/// The parameters the ports and ranks can carry, checked before any row is built.
fn check_params(cfg: &RtConfig) -> Result<(), RtParamError> {
    if !(1..=MAX_ENTRIES).contains(&cfg.entries) {
        return Err(RtParamError::Entries(cfg.entries));
    }
    if !(2..=32).contains(&cfg.counter_bits) {
        return Err(RtParamError::CounterBits(cfg.counter_bits));
    }
    if cfg.alloc_id_bits != 8 {
        return Err(RtParamError::AllocIdBits(cfg.alloc_id_bits));
    }
    Ok(())
}

impl RemoteTrackerRtl {
    /// Build the module for `cfg`, checking the parameters the ports and ranks can carry.
    pub fn try_new(cfg: &RtConfig) -> Result<Self, RtParamError> {
        check_params(cfg)?;
        Ok(Self::for_checked(cfg))
    }

    /// The module for a `cfg` that passed [`check_params`]: constants set from the
    /// parameters, every port, register and local at its default, sized per row or per
    /// read-tree node (`ReplacementSizes` for the replacement order's own).
    fn for_checked(cfg: &RtConfig) -> Self {
        let n = cfg.entries;
        let sizes = ReplacementSizes::of(cfg.replacement, n);
        let rank_const = |v: u64| {
            (0..sizes.rank_one_of)
                .map(|_| Constant::new(v.to_bits()))
                .collect()
        };
        fill_fields! { RemoteTrackerRtl {
            slot_number: (0..n)
                .map(|i| Constant::new((i as u64).to_bits()))
                .collect(),
            rank_zero: Constant::new(0u64.to_bits()),
            oldest_rank: rank_const((n - 1) as u64),
            rank_one: rank_const(1),
            rank_minus_one: rank_const(31),
            counter_max: Constant::new(u64::from(u32::MAX >> (32 - cfg.counter_bits)).to_bits()),
            counter_zero: Constant::new(0u64.to_bits()),
            counter_one: Constant::new(1u64.to_bits()),
            id_zero: Constant::new(0u64.to_bits()),
            report_evictions: Constant::new(cfg.report_evictions),
            plru_upper_live: (0..sizes.plru_nodes)
                .map(|j| Constant::new(plru_lowest_row(2 * j + 1) < n))
                .collect(),
            plru_leaf: (0..sizes.plru_rows)
                .map(|i| Constant::new((i as u64).to_bits()))
                .collect(),
        }
        Default::default() => [
            reset, walk_valid, walk_alloc_id, walk_remote, drain_valid, drain_alloc_id,
            drain_done, drain_hit, drain_access, drain_remote, evict_valid, evict_alloc_id,
            evict_access, evict_remote, clock,
            walk_stage_valid, walk_stage_id, walk_stage_remote, walk_stage_hit,
            walk_stage_slot, drain_stage_valid, drain_stage_hit, drain_stage_slot,
            any_free, touch, walk_fresh, walk_evicts, walk_touch, drain_clears,
            new_access, new_remote, remote_write, forward_walk, forward_drain,
        ]
        rows(n) => [
            valid, alloc_id, access, remote, slot_sel, victim_sel, read_sel, target_sel,
            drain_sel, walk_match, drain_match,
        ]
        rows(READ_TREE_NODES) => [
            free_any_tree, free_slot_tree, target_access_tree, target_remote_tree,
            target_id_tree, drain_access_tree, drain_remote_tree, walk_slot_tree,
            drain_slot_tree,
        ]
        rows(sizes.rank_rows) => [rank, rank_inc, rank_dec, rank_step]
        rows(sizes.rank_one_of) => [target_rank, drained_rank]
        rows(sizes.rank_tree) => [target_rank_tree, drain_rank_tree]
        rows(sizes.used_rows) => [used]
        rows(sizes.nru_tree) => [victim_any_tree, victim_slot_tree, other_clear_tree]
        rows(sizes.plru_nodes) => [plru]
        rows(sizes.plru_tree) => [plru_slot_tree, plru_touch_tree]
        }
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

mod datapath;

mod hdl_sim;
pub use hdl_sim::RemoteTrackerHdlSim;

#[cfg(test)]
mod tests;
