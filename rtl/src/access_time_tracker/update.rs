//! The default ATT's per-cycle logic (`access_time_tracker.md`, "One cycle, step by
//! step"): range match, timer and interval, driver writes, recency (tree, ranks or age
//! matrix), state updates. Sections are numbered as in the README.

use super::AccessTimeTrackerRtl;
use rust_hdl::prelude::*;

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
        for i in 0..self.newer.len() {
            self.newer[i].clock.next = self.clock.val();
            self.newer[i].d.next = self.newer[i].q.val() & self.row_mask[i].val();
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

        // 4c. Age matrix (`age-matrix`): a touch clears the slot's row and sets its bit in
        //     every other row; the oldest valid slot is the one whose row holds every other
        //     valid slot (the lowest such, as a priority chain).
        for m in 0..self.touched.len() {
            self.touched[m].next = self.hit_bit.val() | self.reg_bit.val();
            self.matrix_found[m].next = false;
            self.matrix_oldest[m].next = self.zero_obj.val();
            for i in 0..self.newer.len() {
                if !self.matrix_found[m].val()
                    & self.valid.q.val().get_bit(i)
                    & (((self.newer[i].q.val() | !self.valid.q.val() | self.slot_bit[i].val())
                        & self.live_slots.val())
                        == self.live_slots.val())
                {
                    self.matrix_found[m].next = true;
                    self.matrix_oldest[m].next = self.slot_id[i].val();
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
        for m in 0..self.touched.len() {
            self.oldest_obj.next = self.matrix_oldest[m].val();
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
            for m in 0..self.touched.len() {
                for i in 0..self.newer.len() {
                    // Only a register in the same cycle is newer than this access.
                    if self.hit_bit.val().get_bit(i) {
                        self.newer[i].d.next = self.reg_bit.val() & self.row_mask[i].val();
                    } else {
                        self.newer[i].d.next = (self.newer[i].q.val() | self.touched[m].val())
                            & self.row_mask[i].val();
                    }
                    if self.reg_bit.val().get_bit(i) {
                        self.newer[i].d.next = self.zero.val();
                    }
                }
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
