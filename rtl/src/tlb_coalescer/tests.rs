//! Unit tests of the TLB coalescing RTL: lint and synthesis of both variants.

use super::*;
use crate::test_tools::{assert_lint_clean, remove_scratch, write_verilog, yosys};

fn config(output_registers: bool) -> CoalescerConfig {
    CoalescerConfig {
        output_registers,
        ..CoalescerConfig::default()
    }
}

#[test]
fn emitted_verilog_is_lint_clean() {
    for registered in [true, false] {
        let tag = format!("coal_lint_{registered}");
        let v = write_verilog(&mut TlbCoalescerRtl::new(&config(registered)), &tag);
        assert_lint_clean(&v, &format!("tlb_coalescer output_registers={registered}"));
        remove_scratch(&v);
    }
}

/// Flip-flop cells (`$_DFF*`, `$_SDFF*`, `$_DFFE*`, ...) in the `stat` that yosys' `synth`
/// prints at its end (the only one in the log).
fn synthesised_flip_flops(registered: bool) -> u64 {
    let tag = format!("coal_synth_{registered}");
    let v = write_verilog(&mut TlbCoalescerRtl::new(&config(registered)), &tag);
    let script = format!(
        "read_verilog {}; hierarchy -check -top top; proc; check -assert; synth -flatten -top top",
        v.display()
    );
    let log = yosys(&script, false, "tlb_coalescer").unwrap_or_default();
    remove_scratch(&v);
    // Lines like `     $_SDFFE_PP0P_   32`.
    log.lines()
        .filter_map(|l| {
            let mut parts = l.split_whitespace();
            let (cell, n) = (parts.next()?, parts.next()?);
            let flop = cell.starts_with("$_") && cell.contains("DFF");
            flop.then(|| n.parse::<u64>().ok()).flatten()
        })
        .sum()
}

#[test]
fn block_synthesises_with_yosys_and_the_combinational_variant_keeps_no_flip_flop() {
    // The seven output registers, 1 + 32 + 32 + 16 + 1 + 1 + 32 bits, less merge_base_vpn's
    // low four bits (always 0, so yosys drops them).
    assert_eq!(synthesised_flip_flops(true), 111);
    assert_eq!(synthesised_flip_flops(false), 0);
}
