//! The Remote Tracker's update function: index stage, update stage, row writes.
//!
//! Structure (see `remote_tracker.md`, "Implementation"):
//! - `target_sel` / `drain_sel`: one-hot row selects of the two update-stage ops.
//!   `target_sel` = hit row, else the highest free row (a log-depth priority tree), else
//!   the victim (one-hot: the one valid row at rank `entries - 1`).
//! - Read trees: every row masked by its select into a leaf, then a balanced OR tree; the
//!   root is the selected row. One for the walk's target row (its counters feed one shared
//!   saturating incrementer pair, its rank the recency update, its ID and counters the
//!   eviction report) and one for the drained row (the drain response and its rank).
//! - Rows write the shared new counter values under their select: one 2:1 mux per bit.
//! - The index stage's CAM: per row a match flag, the slot number is the OR tree of the
//!   matching rows' numbers (IDs are unique, so at most one row matches).

// The loop bounds `(len + 1) / 2` stay as written: `#[hdl_gen]` turns the body into
// Verilog and evaluates bounds over plain arithmetic; `div_ceil` is not something it was
// checked to translate.
#![allow(clippy::manual_div_ceil)]

use super::*;

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
            self.valid[i].d.next = self.valid[i].q.val();
            self.alloc_id[i].d.next = self.alloc_id[i].q.val();
            self.access[i].d.next = self.access[i].q.val();
            self.remote[i].d.next = self.remote[i].q.val();
        }
        // The replacement state: ranks or not-recently-used bits (the other is empty).
        for i in 0..self.rank.len() {
            self.rank[i].clock.next = self.clock.val();
            self.rank[i].d.next = self.rank[i].q.val();
        }
        for i in 0..self.used.len() {
            self.used[i].clock.next = self.clock.val();
            self.used[i].d.next = self.used[i].q.val();
        }
        for j in 0..self.plru.len() {
            self.plru[j].clock.next = self.clock.val();
            self.plru[j].d.next = self.plru[j].q.val();
        }

        // ---- Update stage, combinational part: where the walk goes, what the drain reads.
        self.drain_clears.next = self.drain_stage_valid.q.val() && self.drain_stage_hit.q.val();
        for i in 0..self.valid.len() {
            self.drain_sel[i].next = self.drain_clears.val()
                && (self.drain_stage_slot.q.val() == self.slot_number[i].val());
        }
        // Highest-numbered free row (the one the drain clears counts as free): a balanced
        // priority tree, leaves as in the read trees; node `32 + j` takes its upper child
        // (`2j + 1`, higher row numbers) if that holds a free row, else its lower one. Log
        // depth instead of a 32-deep "last assignment wins" chain; the root is the row.
        for i in 0..self.valid.len() {
            self.free_any_tree[i].next = !self.valid[i].q.val() || self.drain_sel[i].val();
            self.free_slot_tree[i].next = self.slot_number[i].val();
        }
        for i in self.valid.len()..32 {
            self.free_any_tree[i].next = false;
            self.free_slot_tree[i].next = self.rank_zero.val();
        }
        for j in 0..31 {
            self.free_any_tree[32 + j].next =
                self.free_any_tree[2 * j].val() || self.free_any_tree[2 * j + 1].val();
            self.free_slot_tree[32 + j].next = self.free_slot_tree[2 * j].val();
            if self.free_any_tree[2 * j + 1].val() {
                self.free_slot_tree[32 + j].next = self.free_slot_tree[2 * j + 1].val();
            }
        }
        self.any_free.next = self.free_any_tree[62].val();

        self.walk_fresh.next = false;
        self.walk_evicts.next = false;
        self.walk_touch.next = self.walk_stage_remote.q.val();
        if !self.walk_stage_hit.q.val() {
            self.walk_fresh.next = true;
            self.walk_evicts.next = !self.any_free.val();
            self.walk_touch.next = true;
        } else if self.drain_clears.val()
            && (self.drain_stage_slot.q.val() == self.walk_stage_slot.q.val())
        {
            // Drain first: the walk's row was cleared this very edge, so it starts afresh.
            self.walk_fresh.next = true;
            self.walk_touch.next = true;
        }
        self.touch.next = self.walk_stage_valid.q.val() && self.walk_touch.val();
        // The victim, one-hot. `ranks`: rank `entries - 1` (with no free row every row is
        // valid and the valid ranks are a permutation, so exactly one row has it). `nru`:
        // the highest-numbered row whose bit is clear, by a priority tree like the free
        // row's (row 0 if every bit is set, which only one row can reach).
        for i in 0..self.rank.len() {
            self.victim_sel[i].next =
                self.valid[i].q.val() && (self.rank[i].q.val() == self.oldest_rank[0].val());
        }
        for i in 0..self.used.len() {
            self.victim_any_tree[i].next = !self.used[i].q.val();
            self.victim_slot_tree[i].next = self.slot_number[i].val();
        }
        for i in self.used.len()..((self.victim_any_tree.len() + 1) / 2) {
            self.victim_any_tree[i].next = false;
            self.victim_slot_tree[i].next = self.rank_zero.val();
        }
        for j in 0..(self.victim_any_tree.len() / 2) {
            self.victim_any_tree[32 + j].next =
                self.victim_any_tree[2 * j].val() || self.victim_any_tree[2 * j + 1].val();
            self.victim_slot_tree[32 + j].next = self.victim_slot_tree[2 * j].val();
            if self.victim_any_tree[2 * j + 1].val() {
                self.victim_slot_tree[32 + j].next = self.victim_slot_tree[2 * j + 1].val();
            }
        }
        for i in 0..self.used.len() {
            // No clear bit: row 0 (the tree's root slot is 0 then too; said explicitly).
            self.victim_sel[i].next = self.slot_number[i].val() == self.rank_zero.val();
            if self.victim_any_tree[62].val() {
                self.victim_sel[i].next =
                    self.victim_slot_tree[62].val() == self.slot_number[i].val();
            }
        }
        // `tree-plru`: the victim is where the node bits lead from the root; node `32 + j`
        // takes its upper child's row if its bit is set and that child holds rows of the
        // table, else its lower child's (a bottom-up mux tree, layout of the free-row tree).
        for i in 0..self.plru_leaf.len() {
            self.plru_slot_tree[i].next = self.plru_leaf[i].val();
        }
        for i in self.plru_leaf.len()..((self.plru_slot_tree.len() + 1) / 2) {
            self.plru_slot_tree[i].next = self.rank_zero.val();
        }
        for j in 0..self.plru.len() {
            self.plru_slot_tree[32 + j].next = self.plru_slot_tree[2 * j].val();
            if self.plru[j].q.val() && self.plru_upper_live[j].val() {
                self.plru_slot_tree[32 + j].next = self.plru_slot_tree[2 * j + 1].val();
            }
        }
        for i in 0..self.plru_leaf.len() {
            self.victim_sel[i].next = self.plru_slot_tree[62].val() == self.slot_number[i].val();
        }
        // One-hot target row: the hit row, else the highest-numbered free row, else the
        // victim. `read_sel` is the row whose
        // counters, rank and ID are read: the hit row or the victim; a walk into a free row
        // writes constants and reads nothing, so the free-row tree stays off the read path.
        for i in 0..self.valid.len() {
            self.slot_sel[i].next = self.walk_stage_slot.q.val() == self.slot_number[i].val();
            self.read_sel[i].next = self.slot_sel[i].val();
            self.target_sel[i].next = self.walk_stage_valid.q.val() && self.slot_sel[i].val();
            if !self.walk_stage_hit.q.val() {
                self.read_sel[i].next = self.victim_sel[i].val();
                self.target_sel[i].next = self.walk_stage_valid.q.val() && self.victim_sel[i].val();
                if self.any_free.val() {
                    self.target_sel[i].next = self.walk_stage_valid.q.val()
                        && (self.free_slot_tree[62].val() == self.slot_number[i].val());
                }
            }
        }

        // ---- Read trees: leaves (rows beyond the table are zero), then the OR levels.
        for i in 0..self.valid.len() {
            self.target_access_tree[i].next = self.counter_zero.val();
            self.target_remote_tree[i].next = self.counter_zero.val();
            self.target_id_tree[i].next = self.id_zero.val();
            if self.read_sel[i].val() {
                self.target_access_tree[i].next = self.access[i].q.val();
                self.target_remote_tree[i].next = self.remote[i].q.val();
                self.target_id_tree[i].next = self.alloc_id[i].q.val();
            }
            self.drain_access_tree[i].next = self.counter_zero.val();
            self.drain_remote_tree[i].next = self.counter_zero.val();
            if self.drain_sel[i].val() {
                self.drain_access_tree[i].next = self.access[i].q.val();
                self.drain_remote_tree[i].next = self.remote[i].q.val();
            }
        }
        for i in self.valid.len()..32 {
            self.target_access_tree[i].next = self.counter_zero.val();
            self.target_remote_tree[i].next = self.counter_zero.val();
            self.target_id_tree[i].next = self.id_zero.val();
            self.drain_access_tree[i].next = self.counter_zero.val();
            self.drain_remote_tree[i].next = self.counter_zero.val();
        }
        for i in 0..self.rank.len() {
            self.target_rank_tree[i].next = self.rank_zero.val();
            if self.read_sel[i].val() {
                self.target_rank_tree[i].next = self.rank[i].q.val();
            }
            self.drain_rank_tree[i].next = self.rank_zero.val();
            if self.drain_sel[i].val() {
                self.drain_rank_tree[i].next = self.rank[i].q.val();
            }
        }
        for i in self.rank.len()..((self.target_rank_tree.len() + 1) / 2) {
            self.target_rank_tree[i].next = self.rank_zero.val();
            self.drain_rank_tree[i].next = self.rank_zero.val();
        }
        for j in 0..(self.target_rank_tree.len() / 2) {
            self.target_rank_tree[32 + j].next =
                self.target_rank_tree[2 * j].val() | self.target_rank_tree[2 * j + 1].val();
            self.drain_rank_tree[32 + j].next =
                self.drain_rank_tree[2 * j].val() | self.drain_rank_tree[2 * j + 1].val();
        }
        for k in 0..self.target_rank.len() {
            self.target_rank[k].next = self.target_rank_tree[62].val();
            self.drained_rank[k].next = self.drain_rank_tree[62].val();
        }
        for j in 0..31 {
            self.target_access_tree[32 + j].next =
                self.target_access_tree[2 * j].val() | self.target_access_tree[2 * j + 1].val();
            self.target_remote_tree[32 + j].next =
                self.target_remote_tree[2 * j].val() | self.target_remote_tree[2 * j + 1].val();
            self.target_id_tree[32 + j].next =
                self.target_id_tree[2 * j].val() | self.target_id_tree[2 * j + 1].val();
            self.drain_access_tree[32 + j].next =
                self.drain_access_tree[2 * j].val() | self.drain_access_tree[2 * j + 1].val();
            self.drain_remote_tree[32 + j].next =
                self.drain_remote_tree[2 * j].val() | self.drain_remote_tree[2 * j + 1].val();
        }

        // ---- The shared saturating incrementers: the target row's counters after the walk.
        self.remote_write.next = self.walk_fresh.val() || self.walk_stage_remote.q.val();
        if self.walk_fresh.val() {
            self.new_access.next = self.counter_one.val();
            self.new_remote.next = self.counter_zero.val();
            if self.walk_stage_remote.q.val() {
                self.new_remote.next = self.counter_one.val();
            }
        } else {
            self.new_access.next = self.target_access_tree[62].val();
            if self.target_access_tree[62].val() != self.counter_max.val() {
                self.new_access.next = self.target_access_tree[62].val() + self.counter_one.val();
            }
            self.new_remote.next = self.target_remote_tree[62].val();
            if self.target_remote_tree[62].val() != self.counter_max.val() {
                self.new_remote.next = self.target_remote_tree[62].val() + self.counter_one.val();
            }
        }

        // ---- Outputs of the update stage.
        self.drain_done.next = self.drain_stage_valid.q.val();
        self.drain_hit.next = self.drain_clears.val();
        self.drain_access.next = self.drain_access_tree[62].val();
        self.drain_remote.next = self.drain_remote_tree[62].val();
        self.evict_valid.next =
            self.report_evictions.val() && self.walk_stage_valid.q.val() && self.walk_evicts.val();
        self.evict_alloc_id.next = self.id_zero.val();
        self.evict_access.next = self.counter_zero.val();
        self.evict_remote.next = self.counter_zero.val();
        if self.report_evictions.val() && self.walk_stage_valid.q.val() && self.walk_evicts.val() {
            // The victim is the walk's target row: its read tree holds what is replaced.
            self.evict_alloc_id.next = self.target_id_tree[62].val();
            self.evict_access.next = self.target_access_tree[62].val();
            self.evict_remote.next = self.target_remote_tree[62].val();
        }

        // ---- Index stage, CAM: every row as it will be after this edge (the walk being
        // written is forwarded, the row being drained is gone).
        self.forward_walk.next =
            self.walk_valid.val() && (self.walk_stage_id.q.val() == self.walk_alloc_id.val());
        self.forward_drain.next =
            self.drain_valid.val() && (self.walk_stage_id.q.val() == self.drain_alloc_id.val());
        for i in 0..self.valid.len() {
            if self.target_sel[i].val() {
                self.walk_match[i].next = self.forward_walk.val();
                self.drain_match[i].next = self.forward_drain.val();
            } else {
                self.walk_match[i].next = self.walk_valid.val()
                    && self.valid[i].q.val()
                    && !self.drain_sel[i].val()
                    && (self.alloc_id[i].q.val() == self.walk_alloc_id.val());
                self.drain_match[i].next = self.drain_valid.val()
                    && self.valid[i].q.val()
                    && !self.drain_sel[i].val()
                    && (self.alloc_id[i].q.val() == self.drain_alloc_id.val());
            }
            self.walk_slot_tree[i].next = self.rank_zero.val();
            self.drain_slot_tree[i].next = self.rank_zero.val();
            if self.walk_match[i].val() {
                self.walk_slot_tree[i].next = self.slot_number[i].val();
            }
            if self.drain_match[i].val() {
                self.drain_slot_tree[i].next = self.slot_number[i].val();
            }
        }
        for i in self.valid.len()..32 {
            self.walk_slot_tree[i].next = self.rank_zero.val();
            self.drain_slot_tree[i].next = self.rank_zero.val();
        }
        for j in 0..31 {
            self.walk_slot_tree[32 + j].next =
                self.walk_slot_tree[2 * j].val() | self.walk_slot_tree[2 * j + 1].val();
            self.drain_slot_tree[32 + j].next =
                self.drain_slot_tree[2 * j].val() | self.drain_slot_tree[2 * j + 1].val();
        }

        // ---- `ranks`: the recency-rank step of every row: +1, -1 (all ones) or 0.
        for i in 0..self.rank.len() {
            self.rank_dec[i].next =
                self.drain_clears.val() && (self.rank[i].q.val() > self.drained_rank[0].val());
            self.rank_inc[i].next = self.touch.val()
                && (self.walk_fresh.val() || (self.rank[i].q.val() < self.target_rank[0].val()));
            self.rank_step[i].next = self.rank_zero.val();
            if self.rank_inc[i].val() && !self.rank_dec[i].val() {
                self.rank_step[i].next = self.rank_one[0].val();
            }
            if self.rank_dec[i].val() && !self.rank_inc[i].val() {
                self.rank_step[i].next = self.rank_minus_one[0].val();
            }
        }
        // ---- `nru`: does a valid row other than the target keep its bit clear after this
        // edge? (The drained row is gone; the target's own bit is set.) If not, a touch
        // clears every other bit.
        for i in 0..self.used.len() {
            self.other_clear_tree[i].next = self.valid[i].q.val()
                && !self.drain_sel[i].val()
                && !self.target_sel[i].val()
                && !self.used[i].q.val();
        }
        for i in self.used.len()..((self.other_clear_tree.len() + 1) / 2) {
            self.other_clear_tree[i].next = false;
        }
        for j in 0..(self.other_clear_tree.len() / 2) {
            self.other_clear_tree[32 + j].next =
                self.other_clear_tree[2 * j].val() || self.other_clear_tree[2 * j + 1].val();
        }

        // ---- `tree-plru`: which subtrees hold the walk's target row (OR tree).
        for i in 0..self.plru_leaf.len() {
            self.plru_touch_tree[i].next = self.target_sel[i].val();
        }
        for i in self.plru_leaf.len()..((self.plru_touch_tree.len() + 1) / 2) {
            self.plru_touch_tree[i].next = false;
        }
        for j in 0..self.plru.len() {
            self.plru_touch_tree[32 + j].next =
                self.plru_touch_tree[2 * j].val() || self.plru_touch_tree[2 * j + 1].val();
        }

        if self.reset.val() {
            // Reset blocks every other update: rows invalid, nothing in flight, outputs idle.
            for i in 0..self.valid.len() {
                self.valid[i].d.next = false;
            }
            // The tree bits are state of the whole table, not of a row: cleared, so no
            // unknown start value reaches the victim (every value would be legal).
            for j in 0..self.plru.len() {
                self.plru[j].d.next = false;
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
                if self.drain_sel[i].val() {
                    self.valid[i].d.next = false;
                }
                if self.target_sel[i].val() {
                    self.valid[i].d.next = true;
                    if self.walk_fresh.val() {
                        self.alloc_id[i].d.next = self.walk_stage_id.q.val();
                    }
                    self.access[i].d.next = self.new_access.val();
                    if self.remote_write.val() {
                        self.remote[i].d.next = self.new_remote.val();
                    }
                }
            }

            // Recency ranks: close the drained row's gap (-1 above it) and age the rows
            // younger than the touched one (+1); both at once cancel. One adder per row
            // (step 0 holds). Ranks of invalid rows are never read, so only the touched
            // row (set to 0) needs an exception; the drained row's rank is moot.
            for i in 0..self.rank.len() {
                self.rank[i].d.next = self.rank[i].q.val() + self.rank_step[i].val();
                if self.target_sel[i].val() && self.walk_touch.val() {
                    self.rank[i].d.next = self.rank_zero.val();
                }
            }
            // Not-recently-used bits: a touch sets the target's; if no other valid row's
            // bit would stay clear, it clears the others. Bits of invalid rows are never
            // read (a row's bit is set when it becomes valid).
            for i in 0..self.used.len() {
                if self.touch.val() {
                    if self.target_sel[i].val() {
                        self.used[i].d.next = true;
                    } else if !self.other_clear_tree[62].val() {
                        self.used[i].d.next = false;
                    }
                }
            }

            // Pseudo-LRU: a touch points every node on the target row's path to the other
            // child (bit set = upper child, so set when the row is in the lower one).
            // (The tree's root, "the walk writes a row", holds whenever `touch` does; it is
            // read so that the tree has no unused node.)
            for j in 0..self.plru.len() {
                if self.touch.val() && self.plru_touch_tree[62].val() {
                    if self.plru_touch_tree[2 * j + 1].val() {
                        self.plru[j].d.next = false;
                    } else if self.plru_touch_tree[2 * j].val() {
                        self.plru[j].d.next = true;
                    }
                }
            }

            // ---- Index stage, registers: hit flags and the matching row's slot number.
            self.walk_stage_valid.d.next = self.walk_valid.val();
            self.walk_stage_id.d.next = self.walk_alloc_id.val();
            self.walk_stage_remote.d.next = self.walk_remote.val();
            self.walk_stage_hit.d.next = false;
            self.walk_stage_slot.d.next = self.walk_slot_tree[62].val();
            self.drain_stage_valid.d.next = self.drain_valid.val();
            self.drain_stage_hit.d.next = false;
            self.drain_stage_slot.d.next = self.drain_slot_tree[62].val();
            for i in 0..self.valid.len() {
                if self.walk_match[i].val() {
                    self.walk_stage_hit.d.next = true;
                }
                if self.drain_match[i].val() {
                    self.drain_stage_hit.d.next = true;
                }
            }
        }
    }
}
