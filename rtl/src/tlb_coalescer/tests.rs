//! Unit tests of the TLB coalescing RTL against its behavioural twin.

use super::*;
use crate::test_tools::{assert_lint_clean, remove_scratch, write_verilog, yosys};
use mcmvm_models::blocks::tlb_coalescer::TlbCoalescer;

#[test]
fn emitted_verilog_is_lint_clean() {
    let v = write_verilog(
        &mut TlbCoalescerRtl::new(&CoalescerConfig::default()),
        "coal_lint",
    );
    assert_lint_clean(&v, "tlb_coalescer");
    remove_scratch(&v);
}

#[test]
fn block_synthesises_with_yosys() {
    let v = write_verilog(
        &mut TlbCoalescerRtl::new(&CoalescerConfig::default()),
        "coal_synth",
    );
    let script = format!(
        "read_verilog {}; hierarchy -check -top top; proc; check -assert; synth -flatten -top top; stat",
        v.display()
    );
    yosys(&script, true, "tlb_coalescer");
    remove_scratch(&v);
}

/// A line mapping PPN `first + i` in slot `i` with readable+writeable permissions.
fn contiguous_line(first: u64) -> [u64; SLOTS] {
    core::array::from_fn(|i| PTE_VALID | 0x60 | (((first + i as u64) & 0xFFFF_FFFF) << 16))
}

#[test]
fn rust_hdl_simulation_matches_the_twin_cycle_by_cycle() {
    let cfg = CoalescerConfig::default();
    let mut twin = TlbCoalescer::new(&cfg);
    let mut sim = TlbCoalescerHdlSim::new(&cfg);
    let mut line = contiguous_line(0xFFFF_FFFB); // base PPN wraps
    line[4] = 0;
    line[9] |= 1 << 4;
    let mut stimulus = vec![CoalIn {
        reset: 1,
        ..Default::default()
    }];
    let mut merge = CoalIn {
        merge_valid: 1,
        merge_vpn: 0x1237,
        ..Default::default()
    };
    merge.set_ptes(&line);
    stimulus.push(merge);
    for vpn in [0x1230u64, 0x1234, 0x1239, 0x123F, 0x1240, 0x122F] {
        stimulus.push(CoalIn {
            lookup_valid: 1,
            lookup_vpn: vpn,
            entry_base_vpn: 0x1230,
            entry_base_ppn: 0xFFFF_FFFB,
            entry_mask: 0xFDEF,
            ..Default::default()
        });
    }
    stimulus.push(CoalIn {
        merge_valid: 1,
        merge_vpn: 0x1234,
        ..merge
    });
    stimulus.push(CoalIn {
        reset: 1,
        merge_valid: 1,
        ..merge
    });
    stimulus.push(CoalIn::default());
    for (cycle, input) in stimulus.iter().enumerate() {
        assert_eq!(twin.step(input), sim.step(input), "cycle {cycle}");
    }
}
