//! Unit tests of the Remote Tracker twin (both replacement orders).

use super::*;

fn rt(entries: usize, counter_bits: u32, report: bool) -> RemoteTracker {
    rt_with(entries, counter_bits, report, RtReplacement::Ranks)
}

fn rt_with(
    entries: usize,
    counter_bits: u32,
    report: bool,
    replacement: RtReplacement,
) -> RemoteTracker {
    RemoteTracker::new(&RtConfig {
        entries,
        alloc_id_bits: 8,
        counter_bits,
        report_evictions: report,
        replacement,
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

/// Rows 2, 1, 0 hold IDs 1, 2, 3; then remote hits 1, 2, 3, 1, 3, 1, 2 and a miss.
fn nru_versus_ranks_sequence() -> Vec<RtIn> {
    let mut seq = vec![
        RtIn::reset(),
        RtIn::walk(1, false),
        RtIn::walk(2, true),
        RtIn::walk(3, false),
    ];
    seq.extend([1, 2, 3, 1, 3, 1, 2].map(|id| RtIn::walk(id, true)));
    seq.extend([RtIn::walk(4, false), RtIn::idle()]);
    seq
}

#[test]
fn ranks_replace_the_least_recent_remote_update() {
    let mut t = rt_with(3, 32, true, RtReplacement::Ranks);
    let out = run(&mut t, &nru_versus_ranks_sequence());
    // Remote-update order, newest first: 2, 1, 3.
    assert_eq!((out[12].evict_valid, out[12].evict_alloc_id), (1, 3));
    assert_eq!((out[12].evict_access, out[12].evict_remote), (3, 2));
}

#[test]
fn nru_replaces_the_highest_row_whose_bit_is_clear() {
    let mut t = rt_with(3, 32, true, RtReplacement::Nru);
    let seq = nru_versus_ranks_sequence();
    let out = run(&mut t, &seq[..12]);
    // The remote hit on 2 (row 1) found rows 0 and 2 set and cleared them: only row 1's
    // bit is set, and the highest clear row, 2, holds ID 1 (not the exact LRU, 3).
    let used: Vec<(usize, bool)> = t
        .snapshot()
        .iter()
        .map(|v| (v.slot, v.remote_used))
        .collect();
    assert_eq!(used, vec![(0, false), (1, true), (2, false)]);
    assert!(out.iter().all(|o| o.evict_valid == 0));
    let last = t.step(&seq[12]);
    assert_eq!((last.evict_valid, last.evict_alloc_id), (1, 1));
    assert_eq!((last.evict_access, last.evict_remote), (4, 3));
    t.check_invariants().unwrap();
    // The new row is set; the rows the miss did not touch keep their bits.
    let used: Vec<(u8, bool)> = t
        .snapshot()
        .iter()
        .map(|v| (v.alloc_id, v.remote_used))
        .collect();
    assert_eq!(used, vec![(3, false), (2, true), (4, true)]);
}

#[test]
fn nru_with_one_row_replaces_row_zero() {
    let mut t = rt_with(1, 32, true, RtReplacement::Nru);
    let out = run(
        &mut t,
        &[
            RtIn::reset(),
            RtIn::walk(1, true),
            RtIn::walk(2, false),
            RtIn::idle(),
        ],
    );
    assert_eq!((out[3].evict_valid, out[3].evict_alloc_id), (1, 1));
    assert_eq!(t.snapshot()[0].alloc_id, 2);
}

#[test]
fn tree_plru_replaces_the_row_the_tree_bits_lead_to() {
    // Three rows: inner node 32 covers rows 0, 1; node 33 rows 2, 3 (row 3 missing); node
    // 48 both. The last touches are rows 2 (ID 1), 0 (ID 3), 2, 1 (ID 2): node 48 then
    // points to node 33's side (row 1 was touched last, on node 32's side), and node 33
    // can only lead to row 2. So ID 1 goes, although the exact order (newest first
    // 2, 1, 3) would replace ID 3.
    let mut t = rt_with(3, 32, true, RtReplacement::TreePlru);
    let out = run(&mut t, &nru_versus_ranks_sequence());
    assert!(out[..12].iter().all(|o| o.evict_valid == 0));
    assert_eq!((out[12].evict_valid, out[12].evict_alloc_id), (1, 1));
    assert_eq!((out[12].evict_access, out[12].evict_remote), (4, 3));
    t.check_invariants().unwrap();
    // ID 4 took row 2; the next miss goes to node 32's side, where row 1 was touched
    // after row 0: row 0 (ID 3).
    let slots: Vec<(usize, u8)> = t.snapshot().iter().map(|v| (v.slot, v.alloc_id)).collect();
    assert_eq!(slots, vec![(0, 3), (1, 2), (2, 4)]);
    let out = run(&mut t, &[RtIn::walk(5, false), RtIn::idle()]);
    assert_eq!((out[1].evict_valid, out[1].evict_alloc_id), (1, 3));
}

/// A table of `entries` rows, two of which hold IDs 1 and 2.
fn two_rows(entries: usize, replacement: RtReplacement) -> RemoteTracker {
    let mut t = rt_with(entries, 32, false, replacement);
    run(
        &mut t,
        &[
            RtIn::reset(),
            RtIn::walk(1, true),
            RtIn::walk(2, true),
            RtIn::idle(),
            RtIn::idle(),
        ],
    );
    assert_eq!(t.table.valid.count_ones(), 2, "two rows valid");
    t
}

#[test]
fn each_corrupted_table_invariant_is_named_by_its_error() {
    // A consistent table with two valid rows, `lo` below `hi`.
    let mut t = two_rows(4, RtReplacement::Ranks);
    let lo = t.table.valid.trailing_zeros() as usize;
    let hi = 31 - t.table.valid.leading_zeros() as usize;
    let good = t.clone();

    t.table.valid |= 1 << 4;
    assert_eq!(
        t.check_invariants(),
        Err(RtInvariantError::RowBeyondTable { entries: 4 })
    );
    t = good.clone();
    t.table.rank[hi] = t.table.rank[lo];
    assert_eq!(
        t.check_invariants(),
        Err(RtInvariantError::BadRank {
            slot: hi,
            rank: t.table.rank[lo] as usize,
            valid: 2
        })
    );
    t = good;
    t.table.alloc_id[hi] = t.table.alloc_id[lo];
    assert_eq!(
        t.check_invariants(),
        Err(RtInvariantError::IdHeldTwice {
            slot: hi,
            id: t.table.alloc_id[lo] as usize
        })
    );
    // Nru: a full two-row table with both rows' bits set.
    let mut n = two_rows(2, RtReplacement::Nru);
    n.table.used = 0b11;
    assert_eq!(
        n.check_invariants(),
        Err(RtInvariantError::EveryRowRecentlyUsed)
    );
}
