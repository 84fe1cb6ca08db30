//! Tests of the ATT RTL: lint, synthesis, and rust-hdl simulation against the twin.
use super::*;
use crate::test_tools::{assert_lint_clean, remove_scratch, write_verilog, yosys};
use mcmvm_models::blocks::access_time_tracker::AccessTimeTracker;
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

#[test]
fn rust_hdl_simulation_matches_the_twin_on_seeded_traffic() {
    for cfg in [small(), AttConfig::default()] {
        let mut twin = AccessTimeTracker::new(&cfg);
        let mut rtl = AccessTimeTrackerHdlSim::new(&cfg);
        // A small xorshift keeps this crate free of a rand dependency; seed printed.
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        println!("seed {x:#x}");
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for cycle in 0..3000 {
            let r = next();
            let slot = (r >> 8) % 6;
            let input = AttIn {
                reset: u64::from(cycle == 0 || r % 997 == 0),
                acc_valid: u64::from(r % 4 != 0),
                acc_vpn: (r >> 20) % 64,
                reg_valid: u64::from(r % 17 == 0),
                reg_obj: slot,
                reg_start_vpn: (r >> 32) % 48,
                reg_end_vpn: (r >> 40) % 64,
                rm_valid: u64::from(r % 53 == 0),
                rm_obj: (r >> 48) % 5,
                cease_valid: u64::from(r % 41 == 0),
                cease_obj: (r >> 52) % 5,
            };
            let want = twin.step(&input);
            let got = rtl.step(&input);
            assert_eq!(got, want, "cycle {cycle}, input {input:?}");
        }
    }
}
