//! The Remote Tracker monitor's walk-hit and reset bins, counted exactly on directed
//! sequences, and the rule text of its violations.

use crate::common;

use common::assert_agrees;
use mcmvm_models::blocks::remote_tracker::RemoteTracker;
use mcmvm_protocol::config::{RtConfig, RtReplacement};
use mcmvm_protocol::protocol::{RtIn, RtOut};
use mcmvm_refcheck::{Covered, RtMonitor};

/// Two rows, 2-bit counters (saturating at 3), evictions reported.
fn small() -> RtConfig {
    RtConfig {
        entries: 2,
        alloc_id_bits: 8,
        counter_bits: 2,
        report_evictions: true,
        replacement: RtReplacement::Ranks,
    }
}

fn counts(seq: &[RtIn], bins: &[&str]) -> Vec<u64> {
    let cfg = small();
    let mut m = RtMonitor::new(&cfg);
    assert_agrees("rt directed", &mut m, &mut RemoteTracker::new(&cfg), seq);
    bins.iter()
        .map(|b| {
            m.coverage()
                .count(b)
                .unwrap_or_else(|| panic!("no bin {b}"))
        })
        .collect()
}

/// ID 1 walks remotely four times (its counters reach 3 on the third), then locally twice:
/// hits on a saturated access counter 3, on a saturated remote counter by a remote walk 1,
/// and one hit right behind the walk that allocated the row.
#[test]
fn walk_hit_bins_count_exactly_their_walks() {
    let (remote, local) = (RtIn::walk(1, true), RtIn::walk(1, false));
    let mut seq = vec![RtIn::reset()];
    seq.extend([remote, remote, remote, remote, local, local]);
    seq.extend([RtIn::idle(), RtIn::idle()]);
    let bins = [
        "access_counter_saturated",
        "remote_counter_saturated",
        "back_to_back_new_id",
    ];
    assert_eq!(counts(&seq, &bins), [3, 1, 1]);
}

/// `table_full` counts only cycles whose table has no free row: one walk into the 2-row
/// table leaves a row free throughout; a second fills it.
#[test]
fn table_full_counts_no_cycle_while_a_row_is_free() {
    let walks = |n: u8| {
        let mut seq = vec![RtIn::reset()];
        seq.extend((1..=n).map(|id| RtIn::walk(id, true)));
        seq.extend([RtIn::idle(); 3]);
        counts(&seq, &["table_full"])[0]
    };
    assert_eq!(walks(1), 0);
    assert!(walks(2) > 0);
}

/// A reset with only a walk in flight counts; one with nothing in flight does not.
#[test]
fn reset_in_flight_counts_a_walk_alone() {
    let seq = [
        RtIn::reset(),
        RtIn::walk(1, true),
        RtIn::reset(),
        RtIn::reset(),
        RtIn::idle(),
    ];
    assert_eq!(counts(&seq, &["reset_with_ops_in_flight"]), [1]);
}

/// A wrong eviction report is explained by the walk that replaced the victim; a wrong drain
/// answer when none was issued, by the missing drain.
#[test]
fn an_rt_violation_names_the_walk_or_drain_behind_it() {
    let cfg = small();
    let seq = [
        RtIn::reset(),
        RtIn::walk(1, true),
        RtIn::walk(2, true),
        RtIn::walk(3, true),
        RtIn::idle(),
        RtIn::idle(),
    ];
    let violation = |corrupt: fn(&mut RtOut)| {
        let twin = RemoteTracker::new(&cfg);
        common::first_violation(&mut RtMonitor::new(&cfg), twin, &seq, |_, out| {
            if out.evict_valid == 1 {
                corrupt(out)
            }
        })
    };
    let v = violation(|o| {
        o.evict_access ^= 1;
        o.drain_access ^= 1;
    });
    assert_eq!(v.signal, "drain_access", "{v}");
    assert_eq!(
        v.rule,
        "no drain was issued the cycle before: drain_* read 0"
    );
    let v = violation(|o| o.evict_access ^= 1);
    assert_eq!(v.signal, "evict_access", "{v}");
    assert!(
        v.rule
            .starts_with("walk of ID 3 issued in cycle 3 missed a full table and replaced ID 1"),
        "{v}"
    );
}

/// One row under `nru`: its used bit is always set, so the README's "every bit set: row 0"
/// names the victim of every miss.
#[test]
fn a_one_row_nru_table_replaces_its_row() {
    let cfg = RtConfig {
        entries: 1,
        replacement: RtReplacement::Nru,
        ..small()
    };
    let seq = [
        RtIn::reset(),
        RtIn::walk(1, true),
        RtIn::walk(2, true),
        RtIn::idle(),
        RtIn::idle(),
    ];
    let mut m = RtMonitor::new(&cfg);
    let outs = assert_agrees("rt one row", &mut m, &mut RemoteTracker::new(&cfg), &seq);
    assert!(
        outs.iter()
            .any(|o| o.evict_valid == 1 && o.evict_alloc_id == 1),
        "{outs:?}"
    );
}
