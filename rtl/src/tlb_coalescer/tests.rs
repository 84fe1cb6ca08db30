//! Unit tests of the TLB coalescing RTL against its behavioural twin.

use super::*;
use crate::test_tools::{assert_lint_clean, remove_scratch, write_verilog, yosys};

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
