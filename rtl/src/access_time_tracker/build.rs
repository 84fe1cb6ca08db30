//! Building the default ATT RTL: its registers and signals for a configuration, every
//! per-slot register typed at the widest width and masked to the configuration's.

use super::AccessTimeTrackerRtl;
use crate::params::{AttParamError, AttParams};
use mcmvm_protocol::config::{AttConfig, AttRecency};
use mcmvm_protocol::protocol::mask;
use rust_hdl::prelude::*;

impl AccessTimeTrackerRtl {
    /// The RTL for `cfg`.
    ///
    /// # Panics
    /// On a configuration that `HwConfig::validate` rejects; see [`Self::try_new`].
    pub fn new(cfg: &AttConfig) -> Self {
        match Self::try_new(cfg) {
            Ok(rtl) => rtl,
            Err(e) => panic!("invalid ATT configuration (validate the config first): {e}"),
        }
    }

    /// The RTL for `cfg`, or why the configuration cannot be built.
    pub fn try_new(cfg: &AttConfig) -> Result<Self, AttParamError> {
        let spec = AttParams::new(cfg)?;
        let shape = Shape::of(cfg, &spec);
        let (n, live, ranks) = (spec.objects, shape.live, shape.ranks);
        Ok(fill_fields! { AccessTimeTrackerRtl {
            interval: rows(shape.slots_if(!shape.interval_from_timer)),
            rank: rows(shape.slots_if(ranks)),
            newer: rows(shape.slots_if(shape.matrix)),
            row_mask: (0..shape.slots_if(shape.matrix))
                .map(|i| word(u64::from(live) & !(1 << i)))
                .collect(),
            slot_id: (0..n as u64)
                .map(|i| Constant::new(Bits::<5>::from(i)))
                .collect(),
            slot_bit: (0..n).map(|i| word(1 << i)).collect(),
            live_slots: word(u64::from(live)),
            node_lower: shape.tree_nodes().map(|n| tree_half(n, false, live)).collect(),
            node_upper: shape.tree_nodes().map(|n| tree_half(n, true, live)).collect(),
            node_bit: shape.tree_nodes().map(|n| word(1 << n)).collect(),
            timer_max: word(u64::from(spec.timer_max)),
            threshold: word(u64::from(spec.threshold)),
            interval_mask: word(mask(bits_below(u64::from(spec.threshold)))),
            interval_from_timer: Constant::new(shape.interval_from_timer),
            rank_mask: constant_if(ranks, mask(bits_below(n as u64))),
            count_mask: constant_if(ranks, mask(bits_below(n as u64 + 1))),
            one: word(1),
            zero: word(0),
            zero_obj: Constant::new(Bits::<5>::from(0)),
            rank_one: constant_if(ranks, 1),
            count_one: constant_if(ranks, 1),
            count_zero: constant_if(ranks, 0),
        }
        // One register per slot.
        rows(n) => [start_vpn, end_vpn, timer]
        // The ports, then the registers and locals every recency structure has.
        Default::default() => [
            reset, acc_valid, acc_vpn, reg_valid, reg_obj, reg_start_vpn, reg_end_vpn,
            rm_valid, rm_obj, cease_valid, cease_obj, rec_valid, rec_obj, rec_vpn, rec_timer,
            irq_valid, irq_obj, oldest_valid, oldest_obj, clock,
        ]
        Default::default() => [
            valid, cease, rec_valid_q, rec_obj_q, rec_vpn_q, rec_timer_q, irq_valid_q,
            irq_obj_q, in_range, hit, hit_bit, hit_obj, hit_timer, hit_interval, hit_cease,
            advanced, timer_inc, timer_after, interval_inc, interval_after, wrapped, reg_bit,
            rm_bit, cease_bit, driver_writes_hit,
        ]
        // The ranks' registers and locals, the tree's or the age matrix's.
        one_if(ranks) => [
            count, hit_rank, reg_rank, rm_rank, lift_hit, lift_reg, lift_rm, append_hit,
            append_reg, lifted, kept, kept_rank, reg_new_rank, rank_drop, oldest_slot,
        ]
        one_if(shape.tree) => [
            tree, hit_touch, reg_touch, tree_next, tree_survivor, tree_oldest,
        ]
        one_if(shape.matrix) => [touched, matrix_found, matrix_oldest]
        })
    }
}

/// Which of the ATT's optional structures a configuration builds: each recency
/// structure's registers, constants and signals exist only when chosen, and the interval
/// counters only when the threshold is not a power of two.
struct Shape {
    objects: usize,
    live: u32,
    interval_from_timer: bool,
    ranks: bool,
    tree: bool,
    matrix: bool,
}

impl Shape {
    fn of(cfg: &AttConfig, spec: &AttParams) -> Shape {
        Shape {
            objects: spec.objects,
            live: spec.slot_mask(),
            interval_from_timer: spec.threshold.is_power_of_two(),
            ranks: cfg.recency == AttRecency::Ranks,
            tree: cfg.recency == AttRecency::TreePlru,
            matrix: cfg.recency == AttRecency::AgeMatrix,
        }
    }

    /// One row per slot when `on`, else none.
    fn slots_if(&self, on: bool) -> usize {
        if on {
            self.objects
        } else {
            0
        }
    }

    /// The pseudo-LRU tree's nodes 1..=31, or none without the tree.
    fn tree_nodes(&self) -> std::ops::RangeInclusive<usize> {
        1..=if self.tree { 31 } else { 0 }
    }
}

/// A 32-bit constant of value `v`.
fn word(v: u64) -> Constant<Bits<32>> {
    Constant::new(Bits::<32>::from(v))
}

/// Bits that hold every value below `v`.
fn bits_below(v: u64) -> u32 {
    64 - v.saturating_sub(1).leading_zeros()
}

/// `k` default-built registers or signals (one per slot, or none).
fn rows<T: Default>(k: usize) -> Vec<T> {
    (0..k).map(|_| T::default()).collect()
}

/// The slots under the lower or `upper` half of tree pseudo-LRU node `node`, as a bit mask.
/// Heap nodes 1..=31 lie over the 32 slot positions, node `j + 1` at index `j`; slots at or
/// above `objects` (outside `live`) are never valid, so they are left out of the halves.
fn tree_half(node: usize, upper: bool, live: u32) -> Constant<Bits<32>> {
    let depth = node.ilog2();
    let size = 32u64 >> depth;
    let lo = (node as u64 - (1 << depth)) * size + if upper { size / 2 } else { 0 };
    word((((1u64 << (size / 2)) - 1) << lo) & u64::from(live))
}

/// One default element when `on`, else none: the registers and signals of a structure the
/// configuration does not build are empty vectors, so its loops emit nothing.
fn one_if<T: Default>(on: bool) -> Vec<T> {
    (0..usize::from(on)).map(|_| T::default()).collect()
}

/// [`one_if`] for a constant of value `v` (at the width of the field it fills).
fn constant_if<const N: usize>(on: bool, v: u64) -> Vec<Constant<Bits<N>>> {
    (0..usize::from(on))
        .map(|_| Constant::new(v.into()))
        .collect()
}
