//! The coalescer monitor's request bins (resets, idles, merge and lookup together, the
//! lookup classes), counted exactly on one directed sequence, and the rule text it prints
//! with a violation, registered and combinational.

use crate::common;

use common::assert_agrees;
use mcmvm_models::blocks::tlb_coalescer::TlbCoalescer;
use mcmvm_protocol::config::{CoalescerConfig, HwConfig};
use mcmvm_protocol::protocol::CoalIn;
use mcmvm_refcheck::{CoalescerMonitor, Covered, Violation};
use mcmvm_testbenches::tlb_coalescer::{contiguous_line, lookup, merge, PERM_RW};

fn reset(with: CoalIn) -> CoalIn {
    CoalIn { reset: 1, ..with }
}

/// `a`'s merge fields with `b`'s lookup fields: both requests in one cycle.
fn both(a: CoalIn, b: CoalIn) -> CoalIn {
    CoalIn {
        lookup_valid: b.lookup_valid,
        lookup_vpn: b.lookup_vpn,
        entry_base_vpn: b.entry_base_vpn,
        entry_base_ppn: b.entry_base_ppn,
        entry_mask: b.entry_mask,
        ..a
    }
}

fn line() -> [u64; 16] {
    contiguous_line(&HwConfig::default(), 0x100, PERM_RW)
}

#[test]
fn request_bins_count_exactly_their_cycles() {
    let cfg = CoalescerConfig::default();
    let idle = CoalIn::default();
    let seq = [
        reset(idle),
        reset(merge(0x10, &line())), // a reset with a (merge) request
        lookup(0x123, 0x120, 0x40, 0xFFFF), // a hit right after a reset
        idle,                        // idle after a request
        idle,
        lookup(0x223, 0x120, 0x40, 0xFFFF),        // tag miss
        lookup(0x11F, 0x120, 0x40, 0xFFFF),        // tag miss
        lookup(0x12A, 0x120, 0xFFFF_FFF8, 0xFFFF), // a hit whose PPN wraps
        lookup(0x123, 0x120, 0x40, 0xFFF7),        // mask miss (slot 3's bit clear)
        idle,                                      // idle after a request
        both(
            merge(0x10, &line()),
            lookup(0x12F, 0x120, 0xFFFF_FFF8, 0xFFFF), // a hit whose PPN wraps
        ),
        idle, // idle after a request
        reset(idle),
        idle,
        merge(0x10, &line()),
        idle, // idle after a request
    ];
    let mut m = CoalescerMonitor::new(&cfg);
    assert_agrees(
        "coalescer requests",
        &mut m,
        &mut TlbCoalescer::new(&cfg),
        &seq,
    );
    let c = m.coverage();
    for (bin, n) in [
        ("reset_with_request", 1),
        ("request_right_after_reset", 1),
        ("idle_cycle_after_request", 4),
        ("merge_and_lookup_same_cycle", 1),
        ("lookup_hit", 3),
        ("lookup_miss_tag", 2),
        ("lookup_miss_mask_bit", 1),
        ("lookup_ppn_wrap", 2),
    ] {
        assert_eq!(c.count(bin), Some(n), "bin {bin}");
    }
}

/// The monitor's violation on the last cycle of `seq`, the twin's `signal` there XORed with
/// 1 (every earlier cycle agrees).
fn violation_at_end(cfg: &CoalescerConfig, seq: &[CoalIn], signal: &str) -> Violation {
    let last = seq.len() as u64 - 1;
    let twin = TlbCoalescer::new(cfg);
    let v = common::first_violation(&mut CoalescerMonitor::new(cfg), twin, seq, |c, out| {
        if c != last {
            return;
        }
        match signal {
            "merge_done" => out.merge_done ^= 1,
            "merge_mask" => out.merge_mask ^= 1,
            "lookup_hit" => out.lookup_hit ^= 1,
            "lookup_done" => out.lookup_done ^= 1,
            "lookup_ppn" => out.lookup_ppn ^= 1,
            _ => panic!("no corruption for {signal}"),
        }
    });
    assert_eq!(v.cycle, last, "every earlier cycle agrees: {v}");
    assert_eq!(v.signal, signal, "{v}");
    v
}

fn starts(v: &Violation, head: &str) {
    assert!(v.rule.starts_with(head), "expected `{head}…`, got: {v}");
}

/// Registered outputs: a fresh merge, held data, no merge the cycle before, and the same
/// for a lookup; each names the cycle of the request it comes from.
#[test]
fn a_registered_violation_names_the_request_it_comes_from() {
    let cfg = CoalescerConfig::default();
    let idle = CoalIn::default();
    let m = merge(0x13, &line());
    let fresh = violation_at_end(&cfg, &[reset(idle), m, idle], "merge_mask");
    starts(
        &fresh,
        "merge issued in cycle 1 (registered one cycle later); requested slot 3 of vpn 0x13;",
    );
    let held = [reset(idle), m, idle, idle];
    starts(
        &violation_at_end(&cfg, &held, "merge_mask"),
        "data registers hold the merge of cycle 1; requested slot 3",
    );
    starts(
        &violation_at_end(&cfg, &held, "merge_done"),
        "no merge the cycle before: merge_done reads 0; requested slot 3",
    );
    let l = lookup(0x123, 0x120, 0x40, 0xFFFF);
    let held = [reset(idle), l, idle, idle];
    starts(
        &violation_at_end(&cfg, &held, "lookup_ppn"),
        "lookup_ppn holds the lookup of cycle 1: vpn 0x123",
    );
    starts(
        &violation_at_end(&cfg, &held, "lookup_hit"),
        "no lookup the cycle before: lookup_done and lookup_hit read 0: vpn 0x123",
    );
    starts(
        &violation_at_end(&cfg, &[reset(idle), l, reset(idle), idle], "lookup_ppn"),
        "reset in cycle 2: all seven output registers read 0 after it",
    );
}

/// The combinational unit: this cycle's request, or none.
#[test]
fn a_combinational_violation_names_this_cycles_request() {
    let cfg = CoalescerConfig {
        output_registers: false,
        ..CoalescerConfig::default()
    };
    let idle = CoalIn::default();
    let head = "output_registers = false: outputs are this cycle's results, 0 without the \
                request or under reset (no hold); ";
    let m = merge(0x13, &line());
    let l = lookup(0x123, 0x120, 0x40, 0xFFFF);
    for (seq, signal, tail) in [
        (
            vec![idle, m],
            "merge_mask",
            "merge this cycle: requested slot 3 of vpn 0x13;",
        ),
        (
            vec![idle, idle],
            "merge_done",
            "no merge_valid this cycle: merge outputs read 0",
        ),
        (
            vec![idle, l],
            "lookup_ppn",
            "lookup this cycle: vpn 0x123, entry base vpn 0x120",
        ),
        (
            vec![idle, idle],
            "lookup_done",
            "no lookup_valid this cycle: lookup outputs read 0",
        ),
        (
            vec![idle, reset(l)],
            "lookup_done",
            "reset is high this cycle: every output reads 0",
        ),
    ] {
        starts(
            &violation_at_end(&cfg, &seq, signal),
            &format!("{head}{tail}"),
        );
    }
}
