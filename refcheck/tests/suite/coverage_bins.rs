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

/// One merge per mask shape, exclusion and PPN wrap, each named by the bins it must count and no
/// other: a line of slot `i` → PPN `first + i` where `keep(i)`, invalid elsewhere (an invalid
/// PTE still carries the permissions, so only the valid bit keeps it out).
#[test]
fn merge_bins_count_exactly_the_merges_of_their_shape() {
    use mcmvm_protocol::config::HwConfig;
    use mcmvm_testbenches::tlb_coalescer::{contiguous_line, merge, pte, PERM_RO, PERM_RW};
    let hw = HwConfig::default();
    let cfg = hw.tlb_coalescer.clone();
    let line = |first: u64, keep: &dyn Fn(usize) -> bool| -> [u64; 16] {
        core::array::from_fn(|i| {
            let p = pte(&hw, first + i as u64, PERM_RW);
            if keep(i) {
                p
            } else {
                p & !1
            }
        })
    };
    let all = line(100, &|_| true);
    let mut perms = line(400, &|_| true);
    perms[7] = pte(&hw, 407, PERM_RO);
    let mut offset = line(500, &|i| i < 8);
    offset[8] = pte(&hw, 900, PERM_RW);
    let mut misaligned = line(600, &|i| i < 4);
    misaligned[9] = pte(&hw, 609, PERM_RW) | (1 << 12);
    // Slot 3 alone valid; the invalid rest share its permissions, not its offset (an
    // invalid slot is no offset mismatch).
    let mut alone = line(50, &|i| i == 3);
    for (i, p) in alone.iter_mut().enumerate().filter(|&(i, _)| i != 3) {
        *p = pte(&hw, 700 + 2 * i as u64, PERM_RW) & !1;
    }
    // Invalid PTEs whose PFN bits would be misaligned: not a misaligned frame.
    let empty: [u64; 16] = core::array::from_fn(|i| (0x123 + i as u64) << 12);
    let seq = [
        CoalIn {
            reset: 1,
            ..CoalIn::default()
        },
        merge(0x10, &all),                                       // all 16
        merge(0x23, &empty),                                     // empty
        merge(0x33, &alone),                                     // only the requested slot
        merge(0x43, &line(200, &|i| (2..6).contains(&i))),       // contiguous partial
        merge(0x50, &line(300, &|i| [0, 1, 4, 5].contains(&i))), // holes
        merge(0x60, &perms),                                     // holes: slot 7's permissions
        merge(0x70, &offset),                                    // partial: slot 8's offset
        merge(0x80, &misaligned),                                // partial, and a misaligned frame
        merge(0x82, &misaligned),                                // again: two merges with one
        // PPNs 0xFFFF_FFF0..=0xFFFF_FFFF: the top one is 2^32 - 1, no wrap.
        merge(0x90, &contiguous_line(&hw, 0xFFFF_FFF0, PERM_RW)),
        // PPNs from 0xFFFF_FFF6 on, 0 at slot 10: the merged base + 15 wraps (twice).
        merge(0xA0, &contiguous_line(&hw, 0xFFFF_FFF6, PERM_RW)),
        merge(0xB5, &contiguous_line(&hw, 0xFFFF_FFF6, PERM_RW)),
        CoalIn::default(),
    ];
    let mut m = CoalescerMonitor::new(&cfg);
    assert_agrees(
        "coalescer merges",
        &mut m,
        &mut TlbCoalescer::new(&cfg),
        &seq,
    );
    for (bin, n) in [
        ("mask_all_16", 4),
        ("mask_empty", 1),
        ("mask_only_requested_slot", 1),
        ("mask_contiguous_partial", 4),
        ("mask_with_holes", 2),
        ("permission_mismatch_excluded", 1),
        ("offset_mismatch_excluded", 1),
        ("misaligned_frame", 2),
        ("merge_ppn_wrap", 2),
    ] {
        assert_eq!(count(m.coverage(), bin), n, "bin {bin}");
    }
}
