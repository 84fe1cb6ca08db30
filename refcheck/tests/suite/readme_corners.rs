//! README corners the testbench stimulus does not reach (or reaches only by chance),
//! written as short sequences from the READMEs: the monitor and the twin must agree on
//! each.

use crate::common;

use common::assert_agrees;
use mcmvm_models::blocks::access_time_tracker::AccessTimeTracker;
use mcmvm_models::blocks::remote_tracker::RemoteTracker;
use mcmvm_models::blocks::tlb_coalescer::TlbCoalescer;
use mcmvm_protocol::config::{AttConfig, CoalescerConfig, RtConfig, RtReplacement};
use mcmvm_protocol::protocol::{AttIn, CoalIn, CoalOut, RtIn, RtOut};
use mcmvm_refcheck::{AttMonitor, CoalescerMonitor, RtMonitor};

fn rt_cfg(entries: usize, counter_bits: u32) -> RtConfig {
    RtConfig {
        entries,
        alloc_id_bits: 8,
        counter_bits,
        report_evictions: true,
        replacement: RtReplacement::Ranks,
    }
}

fn rt(what: &str, cfg: &RtConfig, seq: &[RtIn]) -> Vec<RtOut> {
    let mut twin = RemoteTracker::new(cfg);
    assert_agrees(what, &mut RtMonitor::new(cfg), &mut twin, seq)
}

#[test]
fn rt_remote_hit_on_a_saturated_counter_still_refreshes_the_rank() {
    // 2 rows, counters saturate at 3. A's remote counter saturates, B is written after it,
    // then a remote walk of A: per the README the row moves to rank 0 (remote hit), so the
    // next new ID replaces B, not A.
    let cfg = rt_cfg(2, 2);
    let mut s = vec![RtIn::reset()];
    s.extend(std::iter::repeat_n(RtIn::walk(1, true), 4));
    s.extend([
        RtIn::walk(2, true),
        RtIn::walk(1, true),
        RtIn::walk(3, false),
    ]);
    s.extend([RtIn::idle(), RtIn::drain(1), RtIn::drain(2), RtIn::idle()]);
    let outs = rt("rt saturated remote hit", &cfg, &s);
    // Not vacuous: B (ID 2) is the row replaced.
    assert!(outs
        .iter()
        .any(|o| o.evict_valid == 1 && o.evict_alloc_id == 2));
}

#[test]
fn rt_drain_frees_the_row_a_walk_of_a_new_id_takes_without_eviction() {
    let cfg = rt_cfg(2, 32);
    let s = [
        RtIn::reset(),
        RtIn::walk(1, true),
        RtIn::walk(2, true),
        RtIn::walk(3, false).with_drain(1),
        RtIn::walk(4, true).with_drain(4),
        RtIn::idle(),
        RtIn::drain(2),
        RtIn::drain(3),
        RtIn::drain(4),
        RtIn::idle(),
    ];
    rt("rt drain frees a row", &cfg, &s);
}

#[test]
fn rt_walk_and_reset_in_one_cycle_and_power_on_without_reset() {
    let cfg = rt_cfg(4, 32);
    let s = [
        // No reset first: the README gives no power-on state; the monitor assumes empty.
        RtIn::walk(9, true),
        RtIn::drain(9),
        RtIn::walk(9, true).with_drain(9),
        RtIn {
            reset: 1,
            ..RtIn::walk(9, true).with_drain(9)
        },
        RtIn::drain(9),
        RtIn::idle(),
    ];
    rt("rt power-on and reset with ops", &cfg, &s);
}

#[test]
fn rt_local_walks_saturate_access_only() {
    let cfg = rt_cfg(1, 2);
    let mut s = vec![RtIn::reset()];
    s.extend(std::iter::repeat_n(RtIn::walk(7, false), 6));
    s.extend([RtIn::walk(7, true), RtIn::drain(7), RtIn::idle()]);
    rt("rt access saturates", &cfg, &s);
}

fn coal(what: &str, cfg: &CoalescerConfig, seq: &[CoalIn]) -> Vec<CoalOut> {
    let mut twin = TlbCoalescer::new(cfg);
    assert_agrees(what, &mut CoalescerMonitor::new(cfg), &mut twin, seq)
}

/// A valid read-write PTE for coalesced page `ppn` with 2^`log2` frames per page.
fn pte(ppn: u64, log2: u32) -> u64 {
    1 | 0b110_0000 | (ppn << log2 << 12)
}

fn merge(vpn: u64, line: &[u64; 16]) -> CoalIn {
    let mut c = CoalIn {
        merge_valid: 1,
        merge_vpn: vpn,
        ..CoalIn::default()
    };
    c.set_ptes(line);
    c
}

#[test]
fn coalescer_bits_57_to_63_are_outside_every_field() {
    // The README's PTE table stops at bit 56; the monitor reads bits 57..=63 as ignored.
    let cfg = CoalescerConfig::default();
    let mut line: [u64; 16] = core::array::from_fn(|i| pte(0x900 + i as u64, 4));
    line[3] |= 1 << 57;
    line[4] |= 1 << 63;
    line[5] |= 0x7F << 57;
    let mut requested_high = line;
    requested_high[0] |= 1 << 60;
    let s = [
        CoalIn {
            reset: 1,
            ..CoalIn::default()
        },
        merge(0x40, &line),
        merge(0x40, &requested_high),
        CoalIn::default(),
    ];
    let outs = coal("coalescer bits 57..63", &cfg, &s);
    assert_eq!((outs[2].merge_mask, outs[3].merge_mask), (0xFFFF, 0xFFFF));
}

#[test]
fn coalescer_ppn_must_fit_32_bits_with_4k_pages() {
    let cfg = CoalescerConfig {
        page_frames_log2: 0,
        ..CoalescerConfig::default()
    };
    let mut line: [u64; 16] = core::array::from_fn(|i| pte(0xFFFF_FFF8 + i as u64, 0));
    // Slots 8.. map PPN 2^32 + k: the same offset, but no longer expressible on the ports.
    let requested_over = merge(0xA, &line);
    line[1] |= 1 << 11; // FRAG bit: ignored
    let s = [
        CoalIn {
            reset: 1,
            ..CoalIn::default()
        },
        merge(0x3, &line),
        requested_over,
        CoalIn::default(),
    ];
    let outs = coal("coalescer 36-bit PPN", &cfg, &s);
    assert_eq!(
        (outs[2].merge_mask, outs[2].merge_base_ppn),
        (0x00FF, 0xFFFF_FFF8)
    );
    assert_eq!((outs[3].merge_mask, outs[3].merge_base_ppn), (0, 0));
}

#[test]
fn combinational_coalescer_answers_in_the_request_cycle_and_reset_reaches_no_other_cycle() {
    // README, "Reset" without output registers: reset in cycle t zeroes cycle t's outputs
    // only; there is no power-on state, so cycle 0 answers its own request without a reset.
    let cfg = CoalescerConfig {
        output_registers: false,
        ..CoalescerConfig::default()
    };
    let line: [u64; 16] = core::array::from_fn(|i| pte(0x900 + i as u64, 4));
    let probe = CoalIn {
        lookup_valid: 1,
        lookup_vpn: 0x4F,
        entry_base_vpn: 0x40,
        entry_base_ppn: 0xFFFF_FFF8,
        entry_mask: 0x8000,
        ..merge(0x43, &line)
    };
    let s = [
        merge(0x43, &line),
        CoalIn { reset: 1, ..probe },
        probe,
        CoalIn::default(),
        // Valid bits beyond bit 0 are not the port's: bit 0 alone decides.
        CoalIn {
            merge_valid: 2,
            lookup_valid: 2,
            ..probe
        },
    ];
    let outs = coal("coalescer combinational reset", &cfg, &s);
    let merged = CoalOut {
        merge_done: 1,
        merge_base_vpn: 0x40,
        merge_base_ppn: 0x900,
        merge_mask: 0xFFFF,
        ..CoalOut::default()
    };
    assert_eq!(outs[0], merged, "power-on: cycle 0 answers cycle 0");
    assert_eq!(outs[1], CoalOut::default(), "reset zeroes its own cycle");
    assert_eq!(
        outs[2],
        CoalOut {
            lookup_done: 1,
            lookup_hit: 1,
            lookup_ppn: 0x7, // 0xFFFF_FFF8 + 15 wraps
            ..merged
        },
        "the cycle after reset answers its own requests"
    );
    assert_eq!(outs[3], CoalOut::default(), "idle: nothing holds");
    assert_eq!(outs[4], CoalOut::default(), "valid bit 0 clear: no request");
}

fn att(what: &str, cfg: &AttConfig, seq: &[AttIn]) {
    let mut twin = AccessTimeTracker::new(cfg);
    assert_agrees(what, &mut AttMonitor::new(cfg), &mut twin, seq);
}

fn reg(obj: u64, start: u64, end: u64) -> AttIn {
    AttIn {
        reg_valid: 1,
        reg_obj: obj,
        reg_start_vpn: start,
        reg_end_vpn: end,
        ..AttIn::default()
    }
}

fn acc(vpn: u64) -> AttIn {
    AttIn {
        acc_valid: 1,
        acc_vpn: vpn,
        ..AttIn::default()
    }
}

#[test]
fn att_threshold_1_and_a_threshold_that_does_not_divide_the_timer() {
    for threshold in [1, 4, 15] {
        let cfg = AttConfig {
            objects: 2,
            timer_bits: 4,
            profiling_threshold: threshold,
            ..AttConfig::default()
        };
        let mut s = vec![AttIn {
            reset: 1,
            ..AttIn::default()
        }];
        s.push(reg(1, 100, 100));
        s.extend(std::iter::repeat_n(acc(100), 20));
        s.push(AttIn::default());
        att(&format!("att threshold {threshold}"), &cfg, &s);
    }
}

#[test]
fn att_power_on_without_reset_and_writes_to_missing_slots() {
    let cfg = AttConfig {
        objects: 3,
        timer_bits: 8,
        profiling_threshold: 2,
        ..AttConfig::default()
    };
    let s = [
        acc(5),
        reg(2, 0, 10),
        acc(5),
        AttIn {
            cease_valid: 1,
            cease_obj: 3, // beyond the table: ignored
            rm_valid: 1,
            rm_obj: 7,
            ..acc(5)
        },
        AttIn {
            cease_valid: 1,
            cease_obj: 2,
            rm_valid: 1,
            rm_obj: 2,
            ..reg(2, 0, 10)
        },
        acc(5),
        AttIn {
            rm_valid: 1,
            rm_obj: 2,
            ..acc(5)
        },
        acc(5),
        AttIn::default(),
    ];
    att("att power-on and missing slots", &cfg, &s);
}
