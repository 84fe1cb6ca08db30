//! The Remote Tracker's RTL: it matches its twin on a short random run, its Verilog is
//! lint-clean (Verilator `-Wall`, yosys `check`), and it synthesises.

use super::*;
use crate::test_tools::{assert_lint_clean, remove_scratch, write_verilog, yosys};
use mcmvm_models::blocks::remote_tracker::RemoteTracker;
use mcmvm_models::protocol::{CycleModel, RtIn};
use std::path::PathBuf;

fn small_cfg() -> RtConfig {
    RtConfig {
        entries: 4,
        alloc_id_bits: 8,
        counter_bits: 4,
        report_evictions: true,
    }
}

/// Verilog of the module for `cfg`, written to a fresh scratch directory.
fn verilog_file(cfg: &RtConfig, tag: &str) -> PathBuf {
    write_verilog(&mut RemoteTrackerRtl::new(cfg), &format!("rt_{tag}"))
}

#[test]
fn rejects_parameters_the_ports_cannot_carry() {
    let mut cfg = small_cfg();
    cfg.entries = 33;
    assert_eq!(
        RemoteTrackerRtl::try_new(&cfg).err(),
        Some(RtParamError::Entries(33))
    );
    let mut cfg = small_cfg();
    cfg.counter_bits = 33;
    assert!(RemoteTrackerRtl::try_new(&cfg).is_err());
}

#[test]
fn hdl_sim_matches_twin_on_a_short_random_run() {
    let cfg = small_cfg();
    let mut twin = RemoteTracker::new(&cfg);
    let mut hdl = RemoteTrackerHdlSim::new(&cfg);
    for (cycle, input) in stimulus(3000, 6).enumerate() {
        let want = twin.step(&input);
        let got = hdl.step(&input);
        assert_eq!(got, want, "cycle {cycle}, input {input:?}");
    }
}

/// Random inputs over a few IDs (xorshift; no dependency on the testbench crate).
fn stimulus(cycles: u64, ids: u64) -> impl Iterator<Item = RtIn> {
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    (0..cycles).map(move |cycle| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        if cycle == 0 || x.is_multiple_of(500) {
            return RtIn::reset();
        }
        RtIn {
            walk_valid: x & 1,
            walk_alloc_id: (x >> 8) % ids,
            walk_remote: (x >> 16) & 1,
            drain_valid: u64::from((x >> 20).is_multiple_of(5)),
            drain_alloc_id: (x >> 24) % ids,
            ..RtIn::default()
        }
    })
}

/// On-CPU time of this thread in seconds (Linux `schedstat`), so the rate does not depend
/// on how busy the machine is; falls back to wall time elsewhere.
fn cpu_seconds(wall: std::time::Instant) -> f64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<f64>().ok())
        .map(|ns| ns * 1e-9)
        .unwrap_or_else(|| wall.elapsed().as_secs_f64())
}

/// Cycles per CPU-second of `step` over `inputs`, `repeat` times.
fn rate<M: CycleModel<In = RtIn>>(model: &mut M, inputs: &[RtIn], repeat: usize) -> f64 {
    let wall = std::time::Instant::now();
    let t0 = cpu_seconds(wall);
    for _ in 0..repeat {
        for i in inputs {
            std::hint::black_box(model.step(i));
        }
    }
    (repeat * inputs.len()) as f64 / (cpu_seconds(wall) - t0)
}

#[test]
#[ignore = "speed measurement; run with --ignored --nocapture"]
fn hdl_sim_speed() {
    let cfg = RtConfig::default();
    let inputs: Vec<RtIn> = stimulus(100_000, 48).collect();
    let hdl = rate(&mut RemoteTrackerHdlSim::new(&cfg), &inputs, 1);
    let twin = rate(&mut RemoteTracker::new(&cfg), &inputs, 50);
    println!("per CPU-second: rusthdl {hdl:.0} cycles/s, twin {twin:.0} cycles/s");
}

#[test]
fn verilog_is_lint_clean() {
    for (tag, cfg) in [("small", small_cfg()), ("paper", RtConfig::default())] {
        let v = verilog_file(&cfg, tag);
        assert_lint_clean(&v, tag);
        remove_scratch(&v);
    }
}

#[test]
fn verilog_passes_yosys_check_and_synthesises() {
    // Four rows: the same logic as 32, synthesised in a fraction of the time; `mcmvm synth`
    // maps the paper's 32-row table to the standard cells.
    let v = verilog_file(&small_cfg(), "synth");
    let script = format!(
        "read_verilog {}; hierarchy -top top; proc; check -assert; synth -flatten -top top; stat",
        v.display()
    );
    if let Some(log) = yosys(&script, true, "remote_tracker") {
        assert!(
            !log.to_lowercase().contains("latch"),
            "latch inferred: {log}"
        );
    }
    remove_scratch(&v);
}
