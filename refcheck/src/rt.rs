//! Reference monitor of the Remote Tracker, from `rtl/src/remote_tracker.md` alone.
//!
//! # Model (my reading of the README)
//! * `replacement = "ranks"`: the table is kept as the list of valid rows **in rank order**
//!   (index = rank: 0 is the most recent remote-counter write). Row *numbers* are not
//!   modelled: the README uses them only to pick which free row a miss writes
//!   ("highest-numbered free row"), and nothing at the ports depends on which physical row
//!   holds an ID — replacement goes by rank, drains go by ID. So "the walk starts the
//!   drained row afresh" and "a miss takes a free row" are the same thing here: a fresh
//!   row at rank 0.
//! * `replacement = "nru"`: rows by number with one bit each (`rt_table.rs`): the victim
//!   and the free row are named by row number there.
//! * `replacement = "tree-plru"`: rows by number and one bit per node of the tree over the
//!   row numbers (`rt_table.rs`), the victim found from the root.
//! * An op issued in cycle `t` is held in the lane register and applied in `t + 1`, drain
//!   first, then walk, against the table as it stood at the start of `t + 1`. That is the
//!   README's index-with-forwarding: the index stage in `t` looks up the table "as it will
//!   be after this cycle's edge", which is exactly the table the update in `t + 1` starts
//!   from, and the only thing that changes it in between is the drain of the same update
//!   stage, which the README orders first. Computing hit/slot at update time from that
//!   table is therefore the same as computing it at index time with forwarding.
//! * Saturation: `access` and `remote` stop at `2^counter_bits - 1`. A remote hit moves the
//!   row to rank 0 even when its remote counter is already saturated ("the row then moves
//!   to rank 0" is stated for every remote hit; the README does not make it conditional on
//!   the value changing). Ambiguity noted in the crate README.
//! * Power-on state: the README only describes reset; the monitor assumes power-on equals
//!   the reset state (empty table, empty lanes). Every testbench sequence starts with a
//!   reset, so this only matters for stimulus that does not.
//! * Input ports are read at their widths (8-bit IDs, 1-bit flags).
//!
//! Every output is predicted exactly; nothing is checked only as a property.

use crate::coverage::{bins, Coverage, Covered};
use crate::rt_table::{Key, Row, Table, Touch};
use crate::{bits, compare, Monitor, Violation};
use mcmvm_protocol::config::{RtConfig, RtReplacement};
use mcmvm_protocol::protocol::{RtIn, RtOut};

/// A walk in the update stage.
#[derive(Debug, Clone, Copy)]
struct Walk {
    id: u8,
    remote: bool,
    issued: u64,
}

/// A drain in the update stage.
#[derive(Debug, Clone, Copy)]
struct Drain {
    id: u8,
    issued: u64,
}

/// What the update stage did this cycle: only used to explain a violation.
#[derive(Debug, Clone, Copy, Default)]
struct Why {
    reset: bool,
    drain: Option<Drain>,
    walk: Option<Walk>,
    /// Cycle of the previous drain of the drained ID (since reset), if any.
    previous_drain: Option<u64>,
    /// The walk replaced this row (ID) at rank `entries - 1`.
    evicted: Option<u8>,
}

bins! {
    /// What an update stage (or a reset) did, per the README. Walk bins: hit (row present),
    /// miss (a free row is written) or evict (no free row: rank `entries - 1` is replaced),
    /// each local or remote.
    pub enum RtBin {
        WalkHitLocal = "walk_hit_local",
        WalkHitRemote = "walk_hit_remote",
        WalkMissLocal = "walk_miss_local",
        WalkMissRemote = "walk_miss_remote",
        WalkEvictLocal = "walk_evict_local",
        WalkEvictRemote = "walk_evict_remote",
        DrainHit = "drain_hit",
        DrainMiss = "drain_miss",
        /// Full table, the walk misses, and the drain of the same update stage clears the
        /// row at rank `entries - 1` it would have replaced: the walk takes that row, nothing
        /// is evicted.
        DrainOfVictimRow = "drain_of_victim_row",
        /// A walk and a drain of one ID issued in the same cycle (the drain is first).
        WalkDrainSameId = "walk_drain_same_id",
        /// ... and the drain hit: the walk starts the drained row afresh.
        WalkRestartsDrainedRow = "walk_restarts_drained_row",
        /// A walk of an ID allocated by the walk of the cycle before (index forwarding).
        BackToBackNewId = "back_to_back_new_id",
        /// A walk hit on an access counter already at `2^counter_bits - 1` (held).
        AccessSaturated = "access_counter_saturated",
        /// A remote walk hit on a remote counter already saturated (held, row to rank 0).
        RemoteSaturated = "remote_counter_saturated",
        /// Reset while a walk or a drain is in the update stage (cancelled).
        ResetInFlight = "reset_with_ops_in_flight",
        /// An update stage that starts with every row valid.
        TableFull = "table_full",
        /// `nru` only (the last two bins): a touch that leaves the other rows' bits alone
        /// (another valid row's bit is clear) ...
        NruTouchKeepsOthers = "nru_touch_keeps_others",
        /// ... and one that clears them (no other valid row's bit was clear).
        NruTouchClearsOthers = "nru_touch_clears_others",
    }
}

/// Bins that only `nru` can hit (the last ones declared).
const NRU_ONLY_BINS: usize = 2;

/// Checks `RtOut` against the Remote Tracker README.
pub struct RtMonitor {
    entries: usize,
    saturation: u64,
    report_evictions: bool,
    table: Table,
    walk: Option<Walk>,
    drain: Option<Drain>,
    /// Cycle of the last drain issued per ID since reset (for the violation text only).
    last_drain: [Option<u64>; 256],
    why: Why,
    /// ID the previous cycle's walk allocated (for the back-to-back bin).
    allocated: Option<u8>,
    coverage: Coverage,
}

impl RtMonitor {
    /// A monitor of a tracker with parameters `cfg`, in its power-on (= reset) state.
    pub fn new(cfg: &RtConfig) -> Self {
        // Counters are 32-bit ports; a `counter_bits` above 32 cannot occur in a valid
        // config, clamp rather than overflow.
        let width = cfg.counter_bits.min(32);
        RtMonitor {
            entries: cfg.entries,
            saturation: mcmvm_protocol::protocol::mask(width),
            report_evictions: cfg.report_evictions,
            table: Table::new(cfg.replacement, cfg.entries),
            walk: None,
            drain: None,
            last_drain: [None; 256],
            why: Why::default(),
            allocated: None,
            coverage: Coverage::new(
                "rt",
                match cfg.replacement {
                    RtReplacement::Ranks | RtReplacement::TreePlru => {
                        &RtBin::NAMES[..RtBin::NAMES.len() - NRU_ONLY_BINS]
                    }
                    RtReplacement::Nru => RtBin::NAMES,
                },
            ),
        }
    }

    fn count_touch(&mut self, t: Touch) {
        match t {
            Touch::Ranked => {}
            Touch::KeptOthers => self.coverage.hit(RtBin::NruTouchKeepsOthers),
            Touch::ClearedOthers => self.coverage.hit(RtBin::NruTouchClearsOthers),
        }
    }

    fn bump(&self, v: u64) -> u64 {
        // Saturate, never wrap.
        (v + 1).min(self.saturation)
    }

    /// The update stage: drain, then walk, on the table at the start of this cycle.
    /// Returns the cycle's outputs and applies the writes of the coming edge.
    fn update(&mut self) -> RtOut {
        let mut out = RtOut::default();
        let full = self.entries > 0 && self.table.len() >= self.entries;
        self.coverage.hit_if(full, RtBin::TableFull);
        // The row a miss would replace, before the drain frees one.
        let victim_before = if full { self.table.victim() } else { None };
        let allocated_before = self.allocated.take();
        let drained = match self.drain.take() {
            Some(d) => self.drain_stage(d, &mut out),
            None => None,
        };
        if let Some(w) = self.walk.take() {
            self.why.walk = Some(w);
            let found = self.table.find(w.id);
            if let Some((key, row)) = found.and_then(|k| Some((k, self.table.get(k)?))) {
                self.walk_hit(w, key, row, allocated_before);
            } else if self.entries > 0 {
                let victim_drained = full
                    && drained.is_some_and(|(id, key)| id != w.id && Some(key) == victim_before);
                self.coverage
                    .hit_if(victim_drained, RtBin::DrainOfVictimRow);
                self.walk_miss(w, drained, &mut out);
            }
        }
        out
    }

    /// The drain `d`: its row's counters out and the row cleared at the edge; the
    /// (ID, key) of the row it cleared, if it hit.
    fn drain_stage(&mut self, d: Drain, out: &mut RtOut) -> Option<(u8, Key)> {
        self.why.drain = Some(d);
        out.drain_done = 1;
        let mut drained = None;
        if let Some(key) = self.table.find(d.id) {
            // Cleared at the edge; under `ranks` the rows ranked after it move up one.
            let row = self.table.remove(key).unwrap_or(Row {
                id: d.id,
                access: 0,
                remote: 0,
            });
            out.drain_hit = 1;
            out.drain_access = row.access;
            out.drain_remote = row.remote;
            drained = Some((d.id, key));
            self.coverage.hit(RtBin::DrainHit);
        } else {
            self.coverage.hit(RtBin::DrainMiss);
        }
        if self.walk.is_some_and(|w| w.id == d.id) {
            self.coverage.hit(RtBin::WalkDrainSameId);
            self.coverage
                .hit_if(drained.is_some(), RtBin::WalkRestartsDrainedRow);
        }
        drained
    }

    /// A walk that hit row `key`: its counters count (saturating), and a remote walk makes
    /// the row the most recent.
    fn walk_hit(&mut self, w: Walk, key: Key, mut row: Row, allocated_before: Option<u8>) {
        let c = &mut self.coverage;
        c.hit(if w.remote {
            RtBin::WalkHitRemote
        } else {
            RtBin::WalkHitLocal
        });
        c.hit_if(row.access == self.saturation, RtBin::AccessSaturated);
        c.hit_if(
            w.remote && row.remote == self.saturation,
            RtBin::RemoteSaturated,
        );
        c.hit_if(allocated_before == Some(w.id), RtBin::BackToBackNewId);
        row.access = self.bump(row.access);
        if w.remote {
            row.remote = self.bump(row.remote);
        }
        self.table.set(key, row);
        if w.remote {
            // A remote-counter write makes the row the most recent; a local hit
            // leaves the order alone.
            let t = self.table.touch(key);
            self.count_touch(t);
        }
    }

    /// A walk that missed: a new row, replacing the victim when the table is full (its
    /// counters out when evictions are reported).
    fn walk_miss(&mut self, w: Walk, drained: Option<(u8, Key)>, out: &mut RtOut) {
        if self.table.len() >= self.entries {
            self.coverage.hit(if w.remote {
                RtBin::WalkEvictRemote
            } else {
                RtBin::WalkEvictLocal
            });
            // No free row: replace the victim (rank `entries - 1` under `ranks`).
            let victim = self.table.victim().and_then(|k| self.table.remove(k));
            if let Some(victim) = victim {
                self.why.evicted = Some(victim.id);
                if self.report_evictions {
                    out.evict_valid = 1;
                    out.evict_alloc_id = u64::from(victim.id);
                    out.evict_access = victim.access;
                    out.evict_remote = victim.remote;
                }
            }
        } else {
            self.coverage.hit(if w.remote {
                RtBin::WalkMissRemote
            } else {
                RtBin::WalkMissLocal
            });
        }
        let row = Row {
            id: w.id,
            access: 1,
            remote: u64::from(w.remote),
        };
        // A walk restarting the row its ID's drain just cleared keeps that row.
        let restart = drained.filter(|(id, _)| *id == w.id).map(|(_, k)| k);
        let t = self.table.insert(row, restart);
        self.count_touch(t);
        self.allocated = Some(w.id);
    }

    fn explain(&self, signal: &'static str) -> String {
        let why = &self.why;
        if why.reset {
            return "reset = 1: every output is 0 in the reset cycle (RT README, Reset)".into();
        }
        let drain = match why.drain {
            Some(d) => {
                let since = match why.previous_drain {
                    Some(p) => format!("since its previous drain in cycle {p}"),
                    None => "since the last reset".to_string(),
                };
                format!(
                    "drain of ID {} issued in cycle {} answers one cycle later with exactly \
                     the walks of that ID issued before cycle {} {since}, counters saturating \
                     at {:#x} (ordering rule)",
                    d.id, d.issued, d.issued, self.saturation
                )
            }
            None => "no drain was issued the cycle before: drain_* read 0".to_string(),
        };
        let walk = match (why.walk, why.evicted) {
            (Some(w), Some(v)) => format!(
                "walk of ID {} issued in cycle {} missed a full table and replaced ID {v}, the \
                 replacement victim (ranks: rank entries-1, the oldest remote-counter write; nru: the \
                 highest-numbered row whose bit is clear; tree-plru: the row the tree bits lead \
                 to from the root){}",
                w.id,
                w.issued,
                if self.report_evictions {
                    ", reported on evict_* (report_evictions)"
                } else {
                    "; evict_* stay 0 without report_evictions"
                }
            ),
            (Some(w), None) => format!(
                "walk of ID {} issued in cycle {} replaced nothing: evict_* read 0",
                w.id, w.issued
            ),
            (None, _) => "no walk in the update stage: evict_* read 0".to_string(),
        };
        if signal.starts_with("drain") {
            drain
        } else {
            walk
        }
    }
}

impl Monitor<RtIn, RtOut> for RtMonitor {
    fn observe(&mut self, cycle: u64, input: &RtIn, output: &RtOut) -> Result<(), Violation> {
        self.why = Why::default();
        let expected = if bits(input.reset, 1) != 0 {
            // Ops in flight are cancelled, this cycle's inputs ignored, the table emptied.
            self.why.reset = true;
            self.coverage.hit_if(
                self.walk.is_some() || self.drain.is_some(),
                RtBin::ResetInFlight,
            );
            self.allocated = None;
            self.table.clear();
            self.walk = None;
            self.drain = None;
            self.last_drain = [None; 256];
            RtOut::default()
        } else {
            if let Some(d) = self.drain {
                self.why.previous_drain = self.last_drain[usize::from(d.id)];
                self.last_drain[usize::from(d.id)] = Some(d.issued);
            }
            let out = self.update();
            // Load the lane registers with this cycle's ops (they index now, update next).
            if bits(input.walk_valid, 1) != 0 {
                self.walk = Some(Walk {
                    id: bits(input.walk_alloc_id, 8) as u8,
                    remote: bits(input.walk_remote, 1) != 0,
                    issued: cycle,
                });
            }
            if bits(input.drain_valid, 1) != 0 {
                self.drain = Some(Drain {
                    id: bits(input.drain_alloc_id, 8) as u8,
                    issued: cycle,
                });
            }
            out
        };
        compare("rt", cycle, &expected, output, |s| self.explain(s))
    }
}

impl Covered for RtMonitor {
    fn coverage(&self) -> &Coverage {
        &self.coverage
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The README's `latency` example: a walk is not seen by a drain of the same cycle
    /// but by one a cycle later.
    #[test]
    fn readme_latency_example() {
        let cfg = RtConfig::default();
        let mut m = RtMonitor::new(&cfg);
        let seq = [
            RtIn::reset(),
            RtIn::walk(5, true).with_drain(5),
            RtIn::drain(5),
            RtIn::idle(),
        ];
        let want = [
            RtOut::default(),
            RtOut::default(),
            RtOut {
                drain_done: 1,
                ..RtOut::default()
            },
            RtOut {
                drain_done: 1,
                drain_hit: 1,
                drain_access: 1,
                drain_remote: 1,
                ..RtOut::default()
            },
        ];
        for (c, (i, o)) in seq.iter().zip(want.iter()).enumerate() {
            assert_eq!(m.observe(c as u64, i, o), Ok(()), "cycle {c}");
        }
    }

    #[test]
    fn wrong_count_is_reported_with_the_signal() {
        let mut m = RtMonitor::new(&RtConfig::default());
        m.observe(0, &RtIn::walk(1, false), &RtOut::default())
            .unwrap_or_else(|v| panic!("{v}"));
        m.observe(1, &RtIn::drain(1), &RtOut::default())
            .unwrap_or_else(|v| panic!("{v}"));
        let bad = RtOut {
            drain_done: 1,
            drain_hit: 1,
            drain_access: 2,
            ..RtOut::default()
        };
        let v = m.observe(2, &RtIn::idle(), &bad).err();
        let v = v.unwrap_or_else(|| panic!("double count not caught"));
        assert_eq!((v.signal, v.expected, v.got), ("drain_access", 1, 2));
    }
}
