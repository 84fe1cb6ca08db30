//! Tests of the ATT RTL: lint and synthesis (against the twin: `testbenches/`).
use super::*;
use crate::test_tools::{assert_lint_clean, remove_scratch, write_verilog, yosys};
use std::path::PathBuf;

fn small() -> AttConfig {
    AttConfig {
        objects: 4,
        timer_bits: 4,
        profiling_threshold: 3,
    }
}

/// The emitted Verilog of `cfg`, written to a per-process temporary directory.
fn verilog_file(cfg: &AttConfig, tag: &str) -> PathBuf {
    write_verilog(&mut AccessTimeTrackerRtl::new(cfg), &format!("att_{tag}"))
}

#[test]
fn verilator_lint_is_clean_and_yosys_check_passes() {
    for (tag, cfg) in [("default", AttConfig::default()), ("small", small())] {
        let path = verilog_file(&cfg, tag);
        assert_lint_clean(&path, tag);
        let script = format!(
            "read_verilog {}; hierarchy -top top; proc; check -assert",
            path.display()
        );
        yosys(&script, true, tag);
        remove_scratch(&path);
    }
}

#[test]
fn block_synthesises_and_drops_unused_flip_flops() {
    let path = verilog_file(&small(), "synth");
    let file = path.to_str().expect("temp path is UTF-8");
    // `synth` ends with its own `stat`; that report is the one counted.
    let script = format!("read_verilog {file}; synth -flatten -top top");
    let Some(log) = yosys(&script, false, "access_time_tracker") else {
        return;
    };
    let report = log.rsplit("Printing statistics").next().unwrap_or_default();
    let flops: u64 = report
        .lines()
        .filter(|l| {
            let cell = l.trim_start();
            cell.starts_with("$_DFF") || cell.starts_with("$_SDFF")
        })
        .filter_map(|l| l.split_whitespace().last()?.parse::<u64>().ok())
        .sum();
    // 4 slots: valid + cease 8, ranges 256, timers 4x4, intervals 4x2 (threshold 3),
    // age matrix 4x3, outputs at most 76: 376 when every mask removes its bits
    // (yosys finds a few more constant output bits: 343 measured). Without the masks
    // the timers, intervals and matrix alone would be 384.
    assert!(
        (264..=376).contains(&flops),
        "flip-flops: {flops}\n{report}"
    );
}
