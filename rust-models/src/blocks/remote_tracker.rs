//! Behavioural twin of the Remote Tracker (RT, CLAP §4.3): one per chiplet, inside the GMMU.
//!
//! The RT counts, per allocation (data structure), how many completed page walks it saw and
//! how many of them targeted a page mapped on another chiplet. The driver later drains the
//! two counters of an allocation to estimate its remote-access ratio for the memory-mapping
//! analysis (CLAP Eq. 4).
//!
//! # Table
//! `entries` slots (paper: 32), each {valid, 8-bit allocation ID, access counter, remote
//! counter} plus (`replacement = "ranks"`, the default; `nru` and `tree-plru` keep one bit a
//! row or 31 tree bits instead, `rtl/src/remote_tracker.md`) a 5-bit *remote-recency rank* used for replacement: rank 0 is the entry whose
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

use crate::config::{RtConfig, RtReplacement};
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
    /// Remote-recency rank (`Ranks`); meaningful only while the row is valid.
    rank: [u8; MAX_ENTRIES],
    /// Bit `i`: row `i`'s not-recently-used bit (`Nru`); meaningful only while valid.
    used: u32,
    /// Bit `j`: inner node `32 + j` of the pseudo-LRU tree points to its upper child
    /// (`TreePlru`; see [`PLRU_ROOT`]). Cleared by reset (any value would be a valid state;
    /// the clear keeps a four-state simulation free of X after reset).
    plru: u32,
}

/// The pseudo-LRU tree's layout (that of the RTL's read trees): nodes `0..32` are the rows,
/// inner node `32 + j` has the children `2j` (lower rows) and `2j + 1` (upper rows), so a
/// node's parent is `32 + node / 2` and the root is node 62.
const PLRU_ROOT: usize = 62;
/// Inner nodes on a row's path to the root: log2 of the rows.
const PLRU_LEVELS: u32 = MAX_ENTRIES.trailing_zeros();

/// The lowest row number under tree node `node` (layout of [`PLRU_ROOT`]).
fn plru_lowest_row(mut node: usize) -> usize {
    // At most PLRU_LEVELS steps down, as the tree has levels (a bounded walk, like
    // `touch`'s: a wrong child index gives a wrong row rather than a walk that never ends).
    for _ in 0..PLRU_LEVELS {
        if node < MAX_ENTRIES {
            break;
        }
        node = 2 * (node - MAX_ENTRIES);
    }
    node
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

/// A broken structural invariant of the Remote Tracker's table
/// ([`RemoteTracker::check_invariants`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum RtInvariantError {
    #[error("rows at or above {entries} are valid")]
    RowBeyondTable { entries: usize },
    /// Under `Nru`, a full table of two or more rows always keeps one bit clear.
    #[error("full table with every not-recently-used bit set")]
    EveryRowRecentlyUsed,
    /// Under `Ranks`, the valid rows' ranks are a permutation of `0..valid`.
    #[error("slot {slot}: rank {rank} repeated or >= {valid}")]
    BadRank {
        slot: usize,
        rank: usize,
        valid: usize,
    },
    #[error("slot {slot}: alloc ID {id} held twice")]
    IdHeldTwice { slot: usize, id: usize },
}

/// A valid entry as seen by [`RemoteTracker::snapshot`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RtEntryView {
    pub slot: usize,
    pub alloc_id: u8,
    pub access: u32,
    pub remote: u32,
    /// 0 = remote counter written most recently (`Ranks`; 0 under `Nru`).
    pub remote_rank: u8,
    /// The row's not-recently-used bit (`Nru`; false under `Ranks`).
    pub remote_used: bool,
}

/// Behavioural twin of the Remote Tracker: same ports, same cycle behaviour as
/// `mcmvm_rtl::remote_tracker::RemoteTrackerRtl`.
#[derive(Debug, Clone)]
pub struct RemoteTracker {
    entries: usize,
    counter_max: u32,
    report_evictions: bool,
    replacement: RtReplacement,
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
            replacement: cfg.replacement,
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
                remote_rank: match self.replacement {
                    RtReplacement::Ranks => t.rank[slot],
                    RtReplacement::Nru | RtReplacement::TreePlru => 0,
                },
                remote_used: self.replacement == RtReplacement::Nru && (t.used >> slot) & 1 != 0,
            })
            .collect()
    }

    /// Check the table's structural invariants: every valid ID appears once; under `Ranks`
    /// the ranks of the valid entries are a permutation of `0..valid_count`, under `Nru` a
    /// full table of two or more rows has a row whose bit is clear. Returns the first
    /// violation.
    pub fn check_invariants(&self) -> Result<(), RtInvariantError> {
        let t = &self.table;
        if t.valid & !self.live_rows() != 0 {
            return Err(RtInvariantError::RowBeyondTable {
                entries: self.entries,
            });
        }
        let count = t.valid.count_ones() as usize;
        let mut seen_rank = [false; MAX_ENTRIES];
        let mut seen_id = [false; 256];
        let full = t.valid == self.live_rows();
        if self.replacement == RtReplacement::Nru
            && full
            && self.entries >= 2
            && t.used & self.live_rows() == self.live_rows()
        {
            return Err(RtInvariantError::EveryRowRecentlyUsed);
        }
        for slot in (0..self.entries).filter(|&s| t.is_valid(s)) {
            let r = t.rank[slot] as usize;
            if self.replacement == RtReplacement::Ranks {
                if r >= count || seen_rank[r] {
                    return Err(RtInvariantError::BadRank {
                        slot,
                        rank: r,
                        valid: count,
                    });
                }
                seen_rank[r] = true;
            }
            let id = t.alloc_id[slot] as usize;
            if seen_id[id] {
                return Err(RtInvariantError::IdHeldTwice { slot, id });
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
        if self.replacement == RtReplacement::TreePlru {
            // Every inner node on the row's path points to the other child. The path has
            // exactly PLRU_LEVELS inner nodes, as the RTL's tree has levels: walking a fixed
            // count (not "until the root") keeps a wrong parent index a wrong pointer, not a hang.
            let mut node = slot;
            for _ in 0..PLRU_LEVELS {
                let j = node / 2;
                if node.is_multiple_of(2) {
                    t.plru |= 1 << j;
                } else {
                    t.plru &= !(1 << j);
                }
                node = MAX_ENTRIES + j;
            }
            debug_assert_eq!(
                node, PLRU_ROOT,
                "tree walk from row {slot} must end at the root"
            );
            return;
        }
        if self.replacement == RtReplacement::Nru {
            // Set the row's bit; when no other valid row's bit would stay clear, clear them.
            let others = t.valid & !(1 << slot);
            if others & !t.used == 0 {
                t.used &= !others;
            }
            t.used |= 1 << slot;
            return;
        }
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
            let victim = self.victim();
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

    /// The row a miss replaces in a full table.
    fn victim(&self) -> usize {
        match self.replacement {
            RtReplacement::Ranks => {
                let oldest = (self.entries - 1) as u8;
                // While the rank invariant holds exactly one row of a full table has it.
                self.table.rank[..self.entries]
                    .iter()
                    .position(|&r| r == oldest)
                    .unwrap_or(0)
            }
            RtReplacement::Nru => {
                // The highest-numbered row whose bit is clear; row 0 if none is (only
                // reachable with one row).
                let clear = !self.table.used & self.live_rows();
                if clear == 0 {
                    0
                } else {
                    31 - clear.leading_zeros() as usize
                }
            }
            RtReplacement::TreePlru => {
                // Follow the pointers from the root; an upper child without rows of this
                // table (`entries` < 32) is never taken.
                let mut node = PLRU_ROOT;
                while node >= MAX_ENTRIES {
                    let j = node - MAX_ENTRIES;
                    let upper = 2 * j + 1;
                    node = if (self.table.plru >> j) & 1 != 0
                        && plru_lowest_row(upper) < self.entries
                    {
                        upper
                    } else {
                        2 * j
                    };
                }
                node
            }
        }
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
            self.table.plru = 0;
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
#[path = "remote_tracker_tests.rs"]
mod tests;
