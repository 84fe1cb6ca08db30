//! Exact counts of coverage bins on short directed sequences: a bin counts the cycles its
//! README condition holds, no more (the every-bin tests in `coverage.rs` only ask for at
//! least one hit, so a bin that also fires on cycles outside its condition passes there).

use crate::common;

use common::assert_agrees;
use mcmvm_models::blocks::access_time_tracker::AccessTimeTracker;
use mcmvm_models::blocks::remote_tracker::RemoteTracker;
use mcmvm_models::blocks::tlb_coalescer::TlbCoalescer;
use mcmvm_protocol::config::{AttConfig, CoalescerConfig, RtConfig, RtReplacement};
use mcmvm_protocol::protocol::{AttIn, CoalIn, RtIn};
use mcmvm_refcheck::{AttMonitor, CoalescerMonitor, Coverage, Covered, RtMonitor};

fn count(c: &Coverage, bin: &str) -> u64 {
    c.count(bin).unwrap_or_else(|| panic!("no bin {bin}"))
}

/// Two rows under `ranks`, both written by remote walks (1, then 2: row of 1 is the
/// victim), then `last` and two idle cycles for it to reach the update stage.
fn rt_full_then(last: RtIn) -> Coverage {
    let cfg = RtConfig {
        entries: 2,
        alloc_id_bits: 8,
        counter_bits: 8,
        report_evictions: true,
        replacement: RtReplacement::Ranks,
    };
    let seq = [
        RtIn::reset(),
        RtIn::walk(1, true),
        RtIn::walk(2, true),
        RtIn::idle(),
        last,
        RtIn::idle(),
        RtIn::idle(),
    ];
    let mut m = RtMonitor::new(&cfg);
    assert_agrees("rt directed", &mut m, &mut RemoteTracker::new(&cfg), &seq);
    m.coverage().clone()
}

/// The victim row drained in the cycle a walk of another, new ID needs a row: counted once.
/// The same ID's walk beside its own drain restarts the row (another bin), not this one.
#[test]
fn drain_of_victim_row_counts_only_a_drain_of_another_id() {
    let c = rt_full_then(RtIn::walk(3, true).with_drain(1));
    assert_eq!(count(&c, "drain_of_victim_row"), 1);
    assert_eq!(count(&c, "walk_restarts_drained_row"), 0);
    let c = rt_full_then(RtIn::walk(1, true).with_drain(1));
    assert_eq!(count(&c, "drain_of_victim_row"), 0);
    assert_eq!(count(&c, "walk_restarts_drained_row"), 1);
}

/// Only the cycle that registers and removes the same slot counts; a register alone, a
/// remove alone and idle cycles do not.
#[test]
fn register_and_remove_same_slot_counts_only_that_cycle() {
    let cfg = AttConfig {
        objects: 4,
        ..AttConfig::default()
    };
    let reg = |obj: u64| AttIn {
        reg_valid: 1,
        reg_obj: obj,
        reg_start_vpn: obj * 100,
        reg_end_vpn: obj * 100 + 9,
        ..AttIn::default()
    };
    let rm = |obj: u64| AttIn {
        rm_valid: 1,
        rm_obj: obj,
        ..AttIn::default()
    };
    let seq = [
        AttIn {
            reset: 1,
            ..AttIn::default()
        },
        reg(0),
        reg(1),
        AttIn::default(),
        rm(1),
        AttIn {
            rm_valid: 1,
            rm_obj: 2,
            ..reg(2)
        },
        AttIn::default(),
    ];
    let mut m = AttMonitor::new(&cfg);
    assert_agrees(
        "att directed",
        &mut m,
        &mut AccessTimeTracker::new(&cfg),
        &seq,
    );
    assert_eq!(count(m.coverage(), "register_and_remove_same_slot"), 1);
}

/// A lookup hit wraps the 32-bit PPN only when base + slot passes 2^32 - 1: base
/// 0xFFFF_FFF1 at slot 0 does not, at slot 15 it does.
#[test]
fn lookup_ppn_wrap_counts_only_a_sum_past_32_bits() {
    let cfg = CoalescerConfig::default();
    let lookup = |slot: u64| CoalIn {
        lookup_valid: 1,
        lookup_vpn: 0x1230 + slot,
        entry_base_vpn: 0x1230,
        entry_base_ppn: 0xFFFF_FFF1,
        entry_mask: 0xFFFF,
        ..CoalIn::default()
    };
    let seq = [
        CoalIn {
            reset: 1,
            ..CoalIn::default()
        },
        lookup(0),
        lookup(14),
        lookup(15),
        CoalIn::default(),
        CoalIn::default(),
    ];
    let mut m = CoalescerMonitor::new(&cfg);
    let outs = assert_agrees(
        "coalescer directed",
        &mut m,
        &mut TlbCoalescer::new(&cfg),
        &seq,
    );
    assert!(outs.iter().any(|o| o.lookup_hit == 1 && o.lookup_ppn == 0));
    assert_eq!(count(m.coverage(), "lookup_hit"), 3);
    assert_eq!(count(m.coverage(), "lookup_ppn_wrap"), 1);
}
