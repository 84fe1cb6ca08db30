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
        let n = spec.objects;
        let dffs = |k: usize| {
            (0..k)
                .map(|_| DFF::default())
                .collect::<Vec<DFF<Bits<32>>>>()
        };
        let word = |v: u64| Constant::new(Bits::<32>::from(v));
        // Bits that hold every value below `v`.
        let bits_below = |v: u64| 64 - v.saturating_sub(1).leading_zeros();
        let interval_from_timer = spec.threshold.is_power_of_two();
        let live = spec.slot_mask();
        // Tree pseudo-LRU: heap nodes 1..=31 over the 32 slot positions, node `j + 1` at
        // index `j`; slots at or above `objects` are never valid, so they are left out of
        // the halves.
        let tree = cfg.recency == AttRecency::TreePlru;
        let tree_nodes = if tree { 31 } else { 0 };
        // The ranks' registers, constants and signals exist only without the tree.
        let ranks = !tree;
        let half = |n: usize, upper: bool| {
            let depth = n.ilog2();
            let size = 32u64 >> depth;
            let lo = (n as u64 - (1 << depth)) * size + if upper { size / 2 } else { 0 };
            word((((1u64 << (size / 2)) - 1) << lo) & u64::from(live))
        };

        let intervals = if interval_from_timer { 0 } else { n };
        Ok(AccessTimeTrackerRtl {
            reset: Default::default(),
            acc_valid: Default::default(),
            acc_vpn: Default::default(),
            reg_valid: Default::default(),
            reg_obj: Default::default(),
            reg_start_vpn: Default::default(),
            reg_end_vpn: Default::default(),
            rm_valid: Default::default(),
            rm_obj: Default::default(),
            cease_valid: Default::default(),
            cease_obj: Default::default(),
            rec_valid: Default::default(),
            rec_obj: Default::default(),
            rec_vpn: Default::default(),
            rec_timer: Default::default(),
            irq_valid: Default::default(),
            irq_obj: Default::default(),
            oldest_valid: Default::default(),
            oldest_obj: Default::default(),
            clock: Default::default(),
            valid: Default::default(),
            cease: Default::default(),
            start_vpn: dffs(n),
            end_vpn: dffs(n),
            timer: dffs(n),
            interval: dffs(intervals),
            rank: (0..if ranks { n } else { 0 })
                .map(|_| DFF::default())
                .collect(),
            count: one_if(ranks),
            tree: one_if(tree),
            rec_valid_q: Default::default(),
            rec_obj_q: Default::default(),
            rec_vpn_q: Default::default(),
            rec_timer_q: Default::default(),
            irq_valid_q: Default::default(),
            irq_obj_q: Default::default(),
            slot_id: (0..n as u64)
                .map(|i| Constant::new(Bits::<5>::from(i)))
                .collect(),
            slot_bit: (0..n).map(|i| word(1 << i)).collect(),
            live_slots: word(u64::from(live)),
            node_lower: (1..=tree_nodes).map(|n| half(n, false)).collect(),
            node_upper: (1..=tree_nodes).map(|n| half(n, true)).collect(),
            node_bit: (1..=tree_nodes).map(|n| word(1 << n)).collect(),
            timer_max: word(u64::from(spec.timer_max)),
            threshold: word(u64::from(spec.threshold)),
            interval_mask: word(mask(bits_below(u64::from(spec.threshold)))),
            interval_from_timer: Constant::new(interval_from_timer),
            rank_mask: constant_if(ranks, mask(bits_below(n as u64))),
            count_mask: constant_if(ranks, mask(bits_below(n as u64 + 1))),
            one: word(1),
            zero: word(0),
            zero_obj: Constant::new(Bits::<5>::from(0)),
            rank_one: constant_if(ranks, 1),
            count_one: constant_if(ranks, 1),
            count_zero: constant_if(ranks, 0),
            in_range: Default::default(),
            hit: Default::default(),
            hit_bit: Default::default(),
            hit_obj: Default::default(),
            hit_timer: Default::default(),
            hit_interval: Default::default(),
            hit_rank: one_if(ranks),
            hit_cease: Default::default(),
            advanced: Default::default(),
            timer_inc: Default::default(),
            timer_after: Default::default(),
            interval_inc: Default::default(),
            interval_after: Default::default(),
            wrapped: Default::default(),
            reg_bit: Default::default(),
            rm_bit: Default::default(),
            cease_bit: Default::default(),
            driver_writes_hit: Default::default(),
            reg_rank: one_if(ranks),
            rm_rank: one_if(ranks),
            lift_hit: one_if(ranks),
            lift_reg: one_if(ranks),
            lift_rm: one_if(ranks),
            append_hit: one_if(ranks),
            append_reg: one_if(ranks),
            lifted: one_if(ranks),
            kept: one_if(ranks),
            kept_rank: one_if(ranks),
            reg_new_rank: one_if(ranks),
            rank_drop: one_if(ranks),
            oldest_slot: one_if(ranks),
            hit_touch: one_if(tree),
            reg_touch: one_if(tree),
            tree_next: one_if(tree),
            tree_survivor: one_if(tree),
            tree_oldest: one_if(tree),
        })
    }
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
