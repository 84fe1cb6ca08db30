//! Behavioural twin of the Remote Tracker (RT, CLAP §4.3): one per chiplet, inside the GMMU.
//!
//! The RT counts, per allocation (data structure), how many completed page walks it saw and
//! how many of them targeted a page mapped on another chiplet. The driver later drains the
//! two counters of an allocation to estimate its remote-access ratio for the memory-mapping
//! analysis (CLAP Eq. 4).
//!
//! # Table
//! `entries` slots (paper: 32), each {valid, 8-bit allocation ID, access counter, remote
//! counter} plus a 5-bit *remote-recency rank* used for replacement: rank 0 is the entry whose
//! remote counter was written most recently, rank `valid_count - 1` the one written longest
//! ago. The ranks of the valid entries are always a permutation of `0..valid_count`.
//! A counter write that moves an entry to rank 0 is: an allocation (its remote counter is
//! initialised) or a walk that increments the remote counter. A local hit leaves ranks alone.
//!
//! # Pipeline (every op is accepted every cycle; see `rtl/src/remote_tracker.md`)
//! Walk or drain issued in cycle `t`:
//! 1. **index** (cycle `t`): the ID is compared with every entry of the table *as it will be
//!    after this cycle's clock edge* — the op in the update stage is forwarded — and the hit
//!    flag and slot are registered.
//! 2. **update** (cycle `t+1`): a drain puts the entry's counters on `drain_*` and clears it;
//!    a walk increments a hit entry, or allocates: the highest-index free slot, else the
//!    entry with the oldest remote update (rank `entries-1`), reported on `evict_*` when
//!    `report_evictions`. The table is written at the end of cycle `t+1`.
//!
//! Ordering: ops take effect in issue order; a walk and a drain issued in the same cycle are
//! ordered drain first. Hence a drain issued in cycle `d` returns exactly the walks of that ID
//! issued in cycles `< d` since the previous drain; a walk issued in the same cycle as the
//! drain lands in the freshly cleared entry. Nothing is lost or counted twice.
//!
//! Counters saturate at `2^counter_bits - 1`. A reset cancels the ops in flight, forces every
//! output to zero for that cycle and invalidates every entry.

use crate::config::RtConfig;
use crate::protocol::{CycleModel, RtIn, RtOut};

/// Maximum number of table entries any configuration may ask for (5-bit slot numbers).
pub const MAX_ENTRIES: usize = 32;

/// The table, one array per field (struct of arrays) so the all-rows compare and the rank
/// updates are short, branch-free loops over fixed-size arrays. Rows at or above `entries`
/// are never valid.
#[derive(Debug, Clone, Default)]
struct Table {
    /// Bit `i` set: row `i` is valid.
    valid: u32,
    alloc_id: [u8; MAX_ENTRIES],
    access: [u32; MAX_ENTRIES],
    remote: [u32; MAX_ENTRIES],
    /// Remote-recency rank; meaningful only while the row is valid.
    rank: [u8; MAX_ENTRIES],
}

impl Table {
    fn is_valid(&self, slot: usize) -> bool {
        (self.valid >> slot) & 1 != 0
    }
}

/// The index-stage result of one lane, held in the pipeline register between the stages.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Indexed {
    valid: bool,
    alloc_id: u8,
    remote: bool,
    hit: bool,
    slot: u8,
}

/// A valid entry as seen by [`RemoteTracker::snapshot`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RtEntryView {
    pub slot: usize,
    pub alloc_id: u8,
    pub access: u32,
    pub remote: u32,
    /// 0 = remote counter written most recently.
    pub remote_rank: u8,
}

/// Behavioural twin of the Remote Tracker: same ports, same cycle behaviour as
/// `mcmvm_rtl::remote_tracker::RemoteTrackerRtl`.
#[derive(Debug, Clone)]
pub struct RemoteTracker {
    entries: usize,
    counter_max: u32,
    report_evictions: bool,
    table: Table,
    walk_stage: Indexed,
    drain_stage: Indexed,
}

impl RemoteTracker {
    /// A tracker with an empty table. `cfg` is expected to be validated
    /// (`HwConfig::validate`); out-of-range values are clamped to what the hardware supports.
    pub fn new(cfg: &RtConfig) -> Self {
        let bits = cfg.counter_bits.clamp(1, 32);
        RemoteTracker {
            entries: cfg.entries.clamp(1, MAX_ENTRIES),
            counter_max: u32::MAX >> (32 - bits),
            report_evictions: cfg.report_evictions,
            table: Table::default(),
            walk_stage: Indexed::default(),
            drain_stage: Indexed::default(),
        }
    }

    /// Saturation value of both counters.
    pub fn counter_max(&self) -> u32 {
        self.counter_max
    }

    /// The valid entries, by slot (for reports and the system model's state dump).
    pub fn snapshot(&self) -> Vec<RtEntryView> {
        let t = &self.table;
        (0..self.entries)
            .filter(|&slot| t.is_valid(slot))
            .map(|slot| RtEntryView {
                slot,
                alloc_id: t.alloc_id[slot],
                access: t.access[slot],
                remote: t.remote[slot],
                remote_rank: t.rank[slot],
            })
            .collect()
    }

    /// Check the table's structural invariants: every valid ID appears once and the ranks
    /// of the valid entries are a permutation of `0..valid_count`. Returns a description of
    /// the first violation.
    pub fn check_invariants(&self) -> Result<(), String> {
        let t = &self.table;
        if t.valid & !self.live_rows() != 0 {
            return Err(format!("rows at or above {} are valid", self.entries));
        }
        let count = t.valid.count_ones() as usize;
        let mut seen_rank = [false; MAX_ENTRIES];
        let mut seen_id = [false; 256];
        for slot in (0..self.entries).filter(|&s| t.is_valid(s)) {
            let r = t.rank[slot] as usize;
            if r >= count || seen_rank[r] {
                return Err(format!("slot {slot}: rank {r} repeated or >= {count}"));
            }
            seen_rank[r] = true;
            let id = t.alloc_id[slot] as usize;
            if seen_id[id] {
                return Err(format!("slot {slot}: alloc ID {id} held twice"));
            }
            seen_id[id] = true;
        }
        Ok(())
    }

    /// Mask of the rows this configuration has (`entries` >= 1, so the shift is < 32).
    fn live_rows(&self) -> u32 {
        u32::MAX >> (MAX_ENTRIES - self.entries)
    }

    fn saturating_inc(&self, x: u32) -> u32 {
        if x >= self.counter_max {
            self.counter_max
        } else {
            x + 1
        }
    }

    /// Slot holding `alloc_id`, if any: every row compared at once, as the CAM does.
    fn find(&self, alloc_id: u8) -> Option<usize> {
        let mut matches = 0u32;
        for (i, &id) in self.table.alloc_id.iter().enumerate() {
            matches |= u32::from(id == alloc_id) << i;
        }
        matches &= self.table.valid;
        (matches != 0).then(|| matches.trailing_zeros() as usize)
    }

    /// Clear `slot` and close the gap it leaves in the rank order.
    fn remove(&mut self, slot: usize) {
        let t = &mut self.table;
        let gone = t.rank[slot];
        t.valid &= !(1 << slot);
        for (i, r) in t.rank.iter_mut().enumerate() {
            if (t.valid >> i) & 1 != 0 && *r > gone {
                *r -= 1;
            }
        }
    }

    /// Make `slot` the most recently remote-updated entry. `slot` must be valid or about to
    /// be (an allocation), in which case every other valid entry ages by one.
    fn touch(&mut self, slot: usize) {
        let t = &mut self.table;
        let old = if t.is_valid(slot) {
            t.rank[slot]
        } else {
            u8::MAX
        };
        for (i, r) in t.rank.iter_mut().enumerate() {
            if (t.valid >> i) & 1 != 0 && *r < old {
                *r += 1;
            }
        }
        t.rank[slot] = 0;
    }

    /// Update stage of the drain lane: the response, and the clear.
    fn update_drain(&mut self, out: &mut RtOut) {
        let d = self.drain_stage;
        if !d.valid {
            return;
        }
        out.drain_done = 1;
        if d.hit {
            let slot = d.slot as usize;
            out.drain_hit = 1;
            out.drain_access = u64::from(self.table.access[slot]);
            out.drain_remote = u64::from(self.table.remote[slot]);
            self.remove(slot);
        }
    }

    /// Update stage of the walk lane; runs after the same cycle's drain (drain first).
    fn update_walk(&mut self, out: &mut RtOut) {
        let w = self.walk_stage;
        if !w.valid {
            return;
        }
        let hit_slot = w.slot as usize;
        // A hit whose entry the drain just cleared restarts the entry from zero.
        if w.hit && self.table.is_valid(hit_slot) {
            self.table.access[hit_slot] = self.saturating_inc(self.table.access[hit_slot]);
            if w.remote {
                self.table.remote[hit_slot] = self.saturating_inc(self.table.remote[hit_slot]);
                self.touch(hit_slot);
            }
            return;
        }
        let free = !self.table.valid & self.live_rows();
        let slot = if w.hit {
            hit_slot
        } else if free != 0 {
            // The highest-numbered free row, as the RTL's "last assignment wins" loop picks.
            31 - free.leading_zeros() as usize
        } else {
            let oldest = (self.entries - 1) as u8;
            // While the rank invariant holds exactly one row of a full table has it.
            let victim = self.table.rank[..self.entries]
                .iter()
                .position(|&r| r == oldest)
                .unwrap_or(0);
            if self.report_evictions {
                out.evict_valid = 1;
                out.evict_alloc_id = u64::from(self.table.alloc_id[victim]);
                out.evict_access = u64::from(self.table.access[victim]);
                out.evict_remote = u64::from(self.table.remote[victim]);
            }
            self.remove(victim);
            victim
        };
        self.touch(slot);
        let t = &mut self.table;
        t.valid |= 1 << slot;
        t.alloc_id[slot] = w.alloc_id;
        t.access[slot] = 1;
        t.remote[slot] = u32::from(w.remote);
    }

    /// Index stage of one lane against the table as it stands after this cycle's updates.
    fn index(&self, valid: bool, alloc_id: u8, remote: bool) -> Indexed {
        if !valid {
            return Indexed::default();
        }
        let found = self.find(alloc_id);
        Indexed {
            valid,
            alloc_id,
            remote,
            hit: found.is_some(),
            slot: found.unwrap_or(0) as u8,
        }
    }
}

impl CycleModel for RemoteTracker {
    type In = RtIn;
    type Out = RtOut;

    fn step(&mut self, input: &RtIn) -> RtOut {
        let mut out = RtOut::default();
        if input.reset != 0 {
            self.table.valid = 0;
            self.walk_stage = Indexed::default();
            self.drain_stage = Indexed::default();
            return out;
        }
        // Update stage first: the index stage below must see the table after this edge.
        self.update_drain(&mut out);
        self.update_walk(&mut out);
        self.walk_stage = self.index(
            input.walk_valid != 0,
            input.walk_alloc_id as u8,
            input.walk_remote != 0,
        );
        self.drain_stage = self.index(input.drain_valid != 0, input.drain_alloc_id as u8, false);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rt(entries: usize, counter_bits: u32, report: bool) -> RemoteTracker {
        RemoteTracker::new(&RtConfig {
            entries,
            alloc_id_bits: 8,
            counter_bits,
            report_evictions: report,
        })
    }

    /// Run `inputs` and return the outputs, checking the invariants after every cycle.
    fn run(t: &mut RemoteTracker, inputs: &[RtIn]) -> Vec<RtOut> {
        inputs
            .iter()
            .map(|i| {
                let o = t.step(i);
                t.check_invariants().unwrap();
                o
            })
            .collect()
    }

    #[test]
    fn drain_returns_counts_one_cycle_after_request_and_clears() {
        let mut t = rt(4, 32, false);
        let mut seq = vec![RtIn::reset(), RtIn::walk(7, true), RtIn::walk(7, false)];
        seq.extend([RtIn::drain(7), RtIn::idle(), RtIn::drain(7), RtIn::idle()]);
        let out = run(&mut t, &seq);
        assert_eq!(
            out[3],
            RtOut::default(),
            "response never in the request cycle"
        );
        assert_eq!((out[4].drain_done, out[4].drain_hit), (1, 1));
        assert_eq!((out[4].drain_access, out[4].drain_remote), (2, 1));
        assert_eq!(
            (out[6].drain_done, out[6].drain_hit, out[6].drain_access),
            (1, 0, 0)
        );
    }

    #[test]
    fn walk_in_same_cycle_as_drain_lands_in_cleared_entry() {
        let mut t = rt(4, 32, false);
        let seq = [
            RtIn::reset(),
            RtIn::walk(3, true),
            RtIn::walk(3, true).with_drain(3),
            RtIn::drain(3),
            RtIn::idle(),
        ];
        let out = run(&mut t, &seq);
        assert_eq!((out[3].drain_access, out[3].drain_remote), (1, 1));
        assert_eq!((out[4].drain_access, out[4].drain_remote), (1, 1));
        assert!(t.snapshot().is_empty());
    }

    #[test]
    fn back_to_back_walks_to_a_new_id_share_one_entry() {
        let mut t = rt(2, 32, false);
        let seq = [
            RtIn::reset(),
            RtIn::walk(9, false),
            RtIn::walk(9, true),
            RtIn::idle(),
        ];
        run(&mut t, &seq);
        let s = t.snapshot();
        assert_eq!(s.len(), 1);
        assert_eq!((s[0].alloc_id, s[0].access, s[0].remote), (9, 2, 1));
    }

    #[test]
    fn full_table_replaces_oldest_remote_update_and_reports_it() {
        let mut t = rt(3, 32, true);
        // 1, 2, 3 allocated in that order; 1 then gets a remote hit, 2 a local hit.
        let seq = [
            RtIn::reset(),
            RtIn::walk(1, false),
            RtIn::walk(2, true),
            RtIn::walk(3, false),
            RtIn::walk(1, true),
            RtIn::walk(2, false),
            RtIn::walk(4, false),
            RtIn::idle(),
        ];
        let out = run(&mut t, &seq);
        // Remote-update order, oldest first: 2 (allocated), 3, 1. The local hit on 2 does
        // not refresh it, so 2 is replaced.
        let e = out[7];
        assert_eq!((e.evict_valid, e.evict_alloc_id), (1, 2));
        assert_eq!((e.evict_access, e.evict_remote), (2, 1));
        let ids: Vec<u8> = t.snapshot().iter().map(|v| v.alloc_id).collect();
        assert!(ids.contains(&4) && !ids.contains(&2));
    }

    #[test]
    fn evictions_stay_silent_unless_reported() {
        let mut t = rt(1, 32, false);
        let out = run(
            &mut t,
            &[
                RtIn::reset(),
                RtIn::walk(1, true),
                RtIn::walk(2, true),
                RtIn::idle(),
            ],
        );
        assert!(out
            .iter()
            .all(|o| o.evict_valid == 0 && o.evict_alloc_id == 0));
        assert_eq!(t.snapshot()[0].alloc_id, 2);
    }

    #[test]
    fn counters_saturate_at_counter_bits() {
        let mut t = rt(2, 4, false);
        let mut seq = vec![RtIn::reset()];
        seq.extend(std::iter::repeat_n(RtIn::walk(5, true), 20));
        seq.extend([RtIn::drain(5), RtIn::idle()]);
        let out = run(&mut t, &seq);
        let last = out.last().unwrap();
        assert_eq!((last.drain_access, last.drain_remote), (15, 15));
        assert_eq!(rt(1, 32, false).counter_max(), u32::MAX);
    }

    #[test]
    fn reset_cancels_in_flight_work_and_clears_the_table() {
        let mut t = rt(4, 32, false);
        let seq = [
            RtIn::reset(),
            RtIn::walk(1, true),
            RtIn::walk(2, true).with_drain(1),
            RtIn::reset(),
            RtIn::drain(2),
            RtIn::idle(),
        ];
        let out = run(&mut t, &seq);
        assert_eq!(
            out[3],
            RtOut::default(),
            "reset silences the drain response"
        );
        assert_eq!((out[5].drain_done, out[5].drain_hit), (1, 0));
        assert!(t.snapshot().is_empty());
    }
}
