//! The Remote Tracker monitor's table under each replacement order of the README
//! (`rtl/src/remote_tracker.md`, "Replacement orders").
//!
//! * `ranks`: the valid rows in rank order (index = rank, 0 = touched most recently). Row
//!   numbers are not modelled: nothing at the ports depends on them under this order.
//! * `nru`: the rows by number, each with its not-recently-used bit, because the victim
//!   ("highest-numbered row whose bit is clear") and the free row a miss takes
//!   ("highest-numbered free row") are named by row number.
//!
//! * `tree-plru`: the rows by number, and one bit per inner node of the complete binary
//!   tree over the row numbers 0..32, keyed here by the node's row range `(lo, size)`.
//!
//! A row is addressed by a `Key`: its rank under `ranks`, its row number otherwise.

use mcmvm_protocol::config::RtReplacement;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Row {
    pub id: u8,
    pub access: u64,
    pub remote: u64,
}

/// Rank (`ranks`) or row number (`nru`).
pub(crate) type Key = usize;

/// What a touch did to the other rows' bits (`nru` only; for the coverage bins).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Touch {
    /// `ranks`, `tree-plru`: not applicable (no bin).
    Ranked,
    /// Another valid row kept its bit clear: the others are left alone.
    KeptOthers,
    /// No other valid row had its bit clear: the others were cleared.
    ClearedOthers,
}

#[derive(Debug, Clone)]
pub(crate) enum Table {
    Ranks {
        rows: Vec<Row>,
    },
    Nru {
        rows: Vec<Option<Row>>,
        used: Vec<bool>,
    },
    TreePlru {
        rows: Vec<Option<Row>>,
        /// Node (lo, size) -> its bit: set = the victim search takes the upper half.
        points_up: std::collections::HashMap<(usize, usize), bool>,
    },
}

/// The tree spans row numbers 0..32 whatever the table size (README).
const TREE_ROWS: usize = 32;

impl Table {
    pub fn new(order: RtReplacement, entries: usize) -> Table {
        match order {
            RtReplacement::Ranks => Table::Ranks {
                rows: Vec::with_capacity(entries),
            },
            RtReplacement::Nru => Table::Nru {
                rows: vec![None; entries],
                used: vec![false; entries],
            },
            RtReplacement::TreePlru => Table::TreePlru {
                rows: vec![None; entries],
                points_up: Default::default(),
            },
        }
    }

    pub fn clear(&mut self) {
        match self {
            Table::Ranks { rows } => rows.clear(),
            Table::Nru { rows, .. } => rows.iter_mut().for_each(|r| *r = None),
            // Reset clears the tree bits too.
            Table::TreePlru { rows, points_up } => {
                rows.iter_mut().for_each(|r| *r = None);
                points_up.clear();
            }
        }
    }

    /// Valid rows.
    pub fn len(&self) -> usize {
        match self {
            Table::Ranks { rows } => rows.len(),
            Table::Nru { rows, .. } | Table::TreePlru { rows, .. } => rows.iter().flatten().count(),
        }
    }

    pub fn find(&self, id: u8) -> Option<Key> {
        match self {
            Table::Ranks { rows } => rows.iter().position(|r| r.id == id),
            Table::Nru { rows, .. } | Table::TreePlru { rows, .. } => {
                rows.iter().position(|r| r.is_some_and(|r| r.id == id))
            }
        }
    }

    pub fn get(&self, key: Key) -> Option<Row> {
        match self {
            Table::Ranks { rows } => rows.get(key).copied(),
            Table::Nru { rows, .. } | Table::TreePlru { rows, .. } => {
                rows.get(key).copied().flatten()
            }
        }
    }

    /// Replace the row's counters in place (a local hit: no order change).
    pub fn set(&mut self, key: Key, row: Row) {
        match self {
            Table::Ranks { rows } => rows[key] = row,
            Table::Nru { rows, .. } | Table::TreePlru { rows, .. } => rows[key] = Some(row),
        }
    }

    /// Clear a row (drain or eviction): under `ranks` the rows after it move up one.
    pub fn remove(&mut self, key: Key) -> Option<Row> {
        match self {
            Table::Ranks { rows } => (key < rows.len()).then(|| rows.remove(key)),
            Table::Nru { rows, .. } | Table::TreePlru { rows, .. } => {
                rows.get_mut(key).and_then(Option::take)
            }
        }
    }

    /// The row a miss replaces in a full table.
    pub fn victim(&self) -> Option<Key> {
        match self {
            Table::Ranks { rows } => rows.len().checked_sub(1),
            Table::Nru { rows, used } => {
                let clear = (0..rows.len()).rev().find(|&i| !used[i]);
                // Every bit set: row 0 (README: only one row can get there).
                clear.or((!rows.is_empty()).then_some(0))
            }
            Table::TreePlru { rows, points_up } => {
                // From the root, follow the bits; never into a half without rows.
                let (mut lo, mut size) = (0, TREE_ROWS);
                while size > 1 {
                    let half = size / 2;
                    let up = points_up.get(&(lo, size)).copied().unwrap_or(false);
                    if up && lo + half < rows.len() {
                        lo += half;
                    }
                    size = half;
                }
                (lo < rows.len()).then_some(lo)
            }
        }
    }

    /// Touch a valid row (a remote hit): it becomes the most recent.
    pub fn touch(&mut self, key: Key) -> Touch {
        match self {
            Table::Ranks { rows } => {
                let row = rows.remove(key);
                rows.insert(0, row);
                Touch::Ranked
            }
            Table::Nru { rows, used } => {
                let other_clear =
                    (0..rows.len()).any(|i| i != key && rows[i].is_some() && !used[i]);
                if !other_clear {
                    for (i, u) in used.iter_mut().enumerate() {
                        if i != key {
                            *u = false;
                        }
                    }
                }
                used[key] = true;
                if other_clear {
                    Touch::KeptOthers
                } else {
                    Touch::ClearedOthers
                }
            }
            Table::TreePlru { points_up, .. } => {
                // Every node above the row points to the half without it.
                let (mut lo, mut size) = (0, TREE_ROWS);
                while size > 1 {
                    let half = size / 2;
                    let in_upper = key >= lo + half;
                    points_up.insert((lo, size), !in_upper);
                    if in_upper {
                        lo += half;
                    }
                    size = half;
                }
                Touch::Ranked
            }
        }
    }

    /// Write a fresh row and touch it: under `nru` into row `restart` (a walk restarting
    /// the row its ID's drain just cleared keeps that row) or else the highest-numbered
    /// free row. The caller has made room.
    pub fn insert(&mut self, row: Row, restart: Option<Key>) -> Touch {
        match self {
            Table::Ranks { rows } => {
                rows.insert(0, row);
                Touch::Ranked
            }
            Table::Nru { rows, .. } | Table::TreePlru { rows, .. } => {
                let free = restart
                    .filter(|&k| rows.get(k).is_some_and(Option::is_none))
                    .or_else(|| (0..rows.len()).rev().find(|&i| rows[i].is_none()));
                let Some(key) = free else {
                    return Touch::Ranked;
                };
                rows[key] = Some(row);
                self.touch(key)
            }
        }
    }
}
