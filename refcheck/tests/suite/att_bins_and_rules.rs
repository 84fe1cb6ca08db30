//! The ATT monitor's interrupt and driver-write bins, counted exactly on one directed
//! sequence (each bin is the README condition of its name, no more), its saturation bin,
//! and the rule text it prints with a violation: the exact recency order under `ranks` and
//! `tree-plru`, and the access that produced a record.

use crate::common;

use common::assert_agrees;
use mcmvm_models::blocks::access_time_tracker::AccessTimeTracker;
use mcmvm_protocol::config::{AttConfig, AttRecency};
use mcmvm_protocol::protocol::{AttIn, AttOut};
use mcmvm_refcheck::{AttMonitor, Covered, Violation};

fn reset() -> AttIn {
    AttIn {
        reset: 1,
        ..AttIn::default()
    }
}

/// Register object `obj` over vpns `obj * 100 ..= obj * 100 + 9`.
fn reg(obj: u64) -> AttIn {
    mcmvm_testbenches::access_time_tracker::register(obj, obj * 100, obj * 100 + 9)
}

/// An access to object `obj`'s range, alone or beside `with`'s driver writes.
fn acc(obj: u64, with: AttIn) -> AttIn {
    AttIn {
        acc_valid: 1,
        acc_vpn: obj * 100 + 5,
        ..with
    }
}

fn cease(obj: u64) -> AttIn {
    AttIn {
        cease_valid: 1,
        cease_obj: obj,
        ..AttIn::default()
    }
}

fn rm(obj: u64) -> AttIn {
    AttIn {
        rm_valid: 1,
        rm_obj: obj,
        ..AttIn::default()
    }
}

fn att(objects: usize, timer_bits: u32, threshold: u64) -> AttConfig {
    AttConfig {
        objects,
        timer_bits,
        profiling_threshold: threshold,
        ..AttConfig::default()
    }
}

fn count(m: &AttMonitor, bin: &str) -> u64 {
    m.coverage()
        .count(bin)
        .unwrap_or_else(|| panic!("no bin {bin}"))
}

/// Threshold 2: every second access to a slot wraps its interval. The cycle of each bin's
/// one (or two) hits is in the comment beside its step.
#[test]
fn interrupt_and_driver_write_bins_count_exactly_their_cycles() {
    let cfg = att(4, 32, 2);
    let none = AttIn::default();
    let seq = [
        reset(),
        reg(0),
        acc(0, none),
        acc(0, none),     // wraps: interrupt 1
        acc(0, cease(0)), // access and cease, same slot
        acc(0, none),     // wraps, ceased: no interrupt
        reg(1),
        acc(1, none),
        acc(1, reg(2)), // wraps: interrupt 2; a register of another slot
        acc(1, reg(3)), // a register of another slot
        acc(1, rm(1)),  // wraps, the slot removed: no interrupt; access and remove
        acc(2, reg(2)), // access and register, same slot
        AttIn {
            rm_valid: 1,
            rm_obj: 3,
            ..reg(3)
        }, // register and remove, same slot
        AttIn {
            rm_obj: 7,
            cease_obj: 9,
            ..rm(7)
        }, // a write beyond the table (the cease is not valid)
        none,
    ];
    let mut m = AttMonitor::new(&cfg);
    assert_agrees("att bins", &mut m, &mut AccessTimeTracker::new(&cfg), &seq);
    for (bin, n) in [
        ("irq_at_threshold", 2),
        ("cease_then_no_irq", 1),
        ("driver_write_suppresses_irq", 1),
        ("access_and_cease_same_slot", 1),
        ("access_and_remove_same_slot", 1),
        ("access_and_register_same_slot", 1),
        ("register_newer_than_access", 2),
        ("register_and_remove_same_slot", 1),
        ("object_beyond_table", 1),
    ] {
        assert_eq!(count(&m, bin), n, "bin {bin}");
    }
}

/// 4-bit timers saturate at 15: of 17 accesses the 16th and 17th find the timer full.
#[test]
fn timer_saturated_counts_only_accesses_to_a_full_timer() {
    let cfg = att(4, 4, 15);
    let mut seq = vec![reset(), reg(0)];
    seq.extend(std::iter::repeat_n(acc(0, AttIn::default()), 17));
    seq.push(AttIn::default());
    let mut m = AttMonitor::new(&cfg);
    let outs = assert_agrees(
        "att saturation",
        &mut m,
        &mut AccessTimeTracker::new(&cfg),
        &seq,
    );
    assert_eq!(outs.iter().filter(|o| o.rec_timer == 15).count(), 3);
    assert_eq!(count(&m, "timer_saturated"), 2);
}

/// The monitor's violation on the last cycle of `seq`, the twin's output there corrupted by
/// `corrupt` (every earlier cycle agrees).
fn violation_at_end(cfg: &AttConfig, seq: &[AttIn], corrupt: fn(&mut AttOut)) -> Violation {
    let last = seq.len() as u64 - 1;
    let twin = AccessTimeTracker::new(cfg);
    let v = common::first_violation(&mut AttMonitor::new(cfg), twin, seq, |c, o| {
        if c == last {
            corrupt(o)
        }
    });
    assert_eq!(v.cycle, last, "every earlier cycle agrees: {v}");
    v
}

/// Three objects registered, then object 1 accessed: least recently touched first, the
/// valid slots are 0, 2, 1. Under `ranks` and `tree-plru` a wrong `oldest_obj` is explained
/// with that order and the rule of the configured structure.
#[test]
fn an_oldest_violation_names_the_recency_order_and_the_configured_rule() {
    let seq = [
        reset(),
        reg(0),
        reg(1),
        reg(2),
        acc(1, AttIn::default()),
        AttIn::default(),
    ];
    let wrong_oldest: fn(&mut AttOut) = |o| o.oldest_obj ^= 1;
    let mut cfg = att(4, 32, 256);
    cfg.recency = AttRecency::Ranks;
    let v = violation_at_end(&cfg, &seq, wrong_oldest);
    assert_eq!((v.signal, v.expected), ("oldest_obj", 0), "{v}");
    assert!(
        v.rule
            .starts_with("oldest_* = the valid slot touched longest ago"),
        "{v}"
    );
    assert!(
        v.rule.ends_with("valid slots oldest first: [0, 2, 1]"),
        "{v}"
    );
    cfg.recency = AttRecency::TreePlru;
    let v = violation_at_end(&cfg, &seq, wrong_oldest);
    assert!(
        v.rule
            .starts_with("oldest_* = where the tree-plru walk leads"),
        "{v}"
    );
    assert!(
        v.rule.ends_with("least recently touched first: [0, 2, 1]"),
        "{v}"
    );
}

/// A wrong record is explained by the access of the cycle before (the output registers
/// hold what that edge computed): its vpn, cycle and slot.
#[test]
fn a_record_violation_names_the_access_cycle_and_slot() {
    let seq = [
        reset(),
        reg(0),
        reg(1),
        acc(1, AttIn::default()),
        AttIn::default(),
    ];
    let v = violation_at_end(&att(4, 32, 256), &seq, |o| o.rec_timer += 1);
    assert_eq!((v.signal, v.expected), ("rec_timer", 1), "{v}");
    assert!(
        v.rule
            .starts_with("access to vpn 0x69 in cycle 3 hit slot 1 "),
        "{v}"
    );
}
