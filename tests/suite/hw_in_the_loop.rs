//! Hardware in the loop: the emitted Verilog (and rust-hdl's simulator) serve inside
//! full-system runs and give the twins' answers exactly; `--hw check` compares every output
//! every cycle (wrong engines: `hw_faults.rs`).
//!
//! Small scales (printed per test) keep this in the test budget; the models are built once
//! per parameter set and cached (first use prints a line on stderr).

use crate::hw_support;

use hw_support::{clap_report, clap_run, forest_run, gpu_cfg, mode, simulated, uvm_cfg, SEED};
use mcmvm_cosim::system::{hardware, HwMode, HwOptions};
use mcmvm_models::config::{AttConfig, RtConfig};
use mcmvm_models::driver::PolicyKind;
use mcmvm_models::uvm::UvmPolicy;
use mcmvm_models::workload;
use std::path::{Path, PathBuf};
use std::process::Command;

#[test]
fn verilator_gives_the_twins_answers_on_every_clap_workload() {
    let scale = 0.03;
    println!("scale {scale}, seed {SEED}");
    let twin = gpu_cfg("mcm-4chiplet.toml");
    let mut rtl = twin.clone();
    rtl.engines = mode(HwMode::Verilator);
    for &w in workload::clap_suite() {
        let a = clap_run(&twin, w, PolicyKind::Clap, scale).expect("twin run");
        let b = clap_run(&rtl, w, PolicyKind::Clap, scale).expect("verilator run");
        assert_eq!(
            a, b,
            "{w} under clap: --hw verilator differs from --hw twin"
        );
    }
}

#[test]
fn verilator_gives_the_twins_answers_on_every_forest_workload() {
    // Every workload and both policies; 0.02 keeps each run's ATT traffic (asserted below)
    // at a third of 0.05's wall time.
    let scale = 0.02;
    println!("scale {scale}, seed {SEED}");
    let twin = uvm_cfg();
    let mut rtl = twin.clone();
    rtl.engines = hardware(HwOptions::new(HwMode::Verilator));
    for &w in workload::forest_suite() {
        for policy in [UvmPolicy::Forest, UvmPolicy::SpecForest] {
            let a = forest_run(&twin, w, policy, scale).expect("twin run");
            let b = forest_run(&rtl, w, policy, scale).expect("verilator run");
            assert!(
                b.hardware.blocks[0].block_cycles > 0,
                "{w}: the ATT was clocked"
            );
            assert_eq!(simulated(&a), simulated(&b), "{w} under {}", policy.name());
        }
    }
}

#[test]
fn rusthdl_and_check_serve_a_small_clap_run_and_an_8_chiplet_one() {
    let scale = 0.02;
    println!("scale {scale}, seed {SEED}");
    for cfg_name in ["mcm-4chiplet.toml", "mcm-8chiplet.toml"] {
        let twin = gpu_cfg(cfg_name);
        let want = clap_run(&twin, "bfs", PolicyKind::Clap, scale).expect("twin run");
        for m in [HwMode::RustHdl, HwMode::Check] {
            let mut cfg = twin.clone();
            cfg.engines = mode(m);
            let got = clap_run(&cfg, "bfs", PolicyKind::Clap, scale).expect("RTL run");
            assert_eq!(want, got, "{cfg_name}, --hw {}", m.name());
        }
        // The Verilog serving on the system's thread, no twin predicting it.
        let mut o = HwOptions::new(HwMode::Verilator);
        o.predict = false;
        let mut cfg = twin.clone();
        cfg.engines = hardware(o);
        let got = clap_run(&cfg, "bfs", PolicyKind::Clap, scale).expect("unpredicted run");
        assert_eq!(want, got, "{cfg_name}, --hw verilator --hw-unpredicted");
    }
}

#[test]
fn check_runs_non_default_block_parameters_on_the_emitted_verilog() {
    let scale = 0.03;
    let mut cfg = gpu_cfg("mcm-4chiplet.toml");
    cfg.hw.remote_tracker = RtConfig {
        counter_bits: 8,
        report_evictions: true,
        entries: 8,
        ..cfg.hw.remote_tracker.clone()
    };
    let twin = clap_run(&cfg, "bfs", PolicyKind::Clap, scale).expect("twin run");
    cfg.engines = mode(HwMode::Check);
    let r = clap_report(&cfg, "bfs", PolicyKind::Clap, scale).expect("check run");
    assert!(r.hardware.compared() > 0);
    assert_eq!(twin, simulated(&r));
    // The checker thread has compared every block cycle by the end of the run.
    for b in &r.hardware.blocks {
        assert_eq!(
            b.engine.compared, b.block_cycles,
            "{} on {}",
            b.block, b.unit
        );
    }

    let mut ucfg = uvm_cfg();
    ucfg.att = AttConfig {
        objects: 16,
        ..ucfg.att.clone()
    };
    ucfg.engines = hardware(HwOptions::new(HwMode::Check));
    let m = forest_run(&ucfg, "ls", UvmPolicy::Forest, 0.05).expect("ATT check");
    assert!(m.hardware.compared() > 0);
    let att = &m.hardware.blocks[0];
    assert_eq!(
        att.engine.compared, att.block_cycles,
        "every ATT cycle compared"
    );
}

/// The Verilator models' own registers keep the blocks' invariants under system traffic:
/// bfs under clap on 4 chiplets (RT and coalescer) and ls under Forest (the ATT, where the
/// driver's objects must also occupy disjoint ranges).
#[test]
fn system_traffic_keeps_the_blocks_state_invariants() {
    let mut o = HwOptions::new(HwMode::Check);
    o.invariants = true;
    o.mismatch_dir = std::env::temp_dir().join("mcmvm-hw-check");
    let mut cfg = gpu_cfg("mcm-4chiplet.toml");
    cfg.engines = hardware(o.clone());
    let scale = 0.02;
    println!("bfs / clap and ls / forest at scale {scale}, seed {SEED}");
    clap_run(&cfg, "bfs", PolicyKind::Clap, scale).unwrap_or_else(|e| panic!("{e}"));
    let mut ucfg = uvm_cfg();
    ucfg.engines = hardware(o);
    let m = forest_run(&ucfg, "ls", UvmPolicy::Forest, scale).unwrap_or_else(|e| panic!("{e}"));
    assert!(m.hardware.compared() > 0);
}

#[test]
fn skipped_idle_cycles_change_no_output_when_stepped() {
    let scale = 0.02;
    let mut cfg = gpu_cfg("mcm-4chiplet.toml");
    let want = clap_run(&cfg, "ste", PolicyKind::Clap, scale).expect("twin run");
    let mut o = HwOptions::new(HwMode::Check);
    o.every_cycle = true;
    cfg.engines = hardware(o);
    let r = clap_report(&cfg, "ste", PolicyKind::Clap, scale).expect("every cycle stepped");
    assert_eq!(want, simulated(&r));
    // And the skipped cycles were stepped and compared: every instance's compared cycles are
    // its stepped ones plus its skipped ones.
    let skipped: u64 = r.hardware.blocks.iter().map(|b| b.skipped_idle).sum();
    assert!(skipped > 0, "the run skips idle cycles");
    for b in &r.hardware.blocks {
        assert!(b.block_cycles > 0 || b.block == "tlb_coalescer");
        assert_eq!(
            b.engine.compared,
            b.block_cycles + b.skipped_idle,
            "{} {}: every stepped and skipped cycle compared",
            b.block,
            b.unit
        );
    }
}

/// `mcmvm run` of bfs under clap with `--config config --hw hw`, its report as JSON
/// (`--json`) and its standard output; panics with both streams unless it exits 0.
fn cli_run(config: &Path, hw: &str, scale: &str, dir: &Path) -> (serde_json::Value, String) {
    let json = dir.join(format!("bfs-{hw}.json"));
    let out = Command::new(env!("CARGO_BIN_EXE_mcmvm"))
        .args([
            "run",
            "--workload",
            "bfs",
            "--policy",
            "clap",
            "--scale",
            scale,
        ])
        .arg("--config")
        .arg(config)
        .args(["--hw", hw, "--hw-check-dir"])
        .arg(dir.join("hw-check"))
        .arg("--json")
        .arg(&json)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("mcmvm runs");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(
        out.status.code(),
        Some(0),
        "--hw {hw}:\n{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&json).expect("the JSON report is written");
    let report: serde_json::Value = serde_json::from_str(&text).expect("the report is JSON");
    (report, stdout)
}

/// The paper's combinational coalescer (`tlb_coalescer.output_registers = false`, set in
/// the GPU config's `[hw.tlb_coalescer]`) in a system run: `--hw check` compares twin and
/// Verilog every cycle with 0 mismatches, and `--hw verilator` gives `--hw twin`'s figures.
#[test]
fn the_combinational_coalescer_serves_a_clap_run_checked_and_as_verilog() {
    let scale = "0.02";
    println!("bfs / clap at scale {scale}, seed {SEED}, tlb_coalescer.output_registers = false");
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("hil-combinational-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let base = std::fs::read_to_string(hw_support::root().join("configs/mcm-4chiplet.toml"))
        .expect("the built-in GPU config");
    let config = dir.join("mcm-4chiplet-combinational.toml");
    std::fs::write(
        &config,
        format!("{base}\n[hw.tlb_coalescer]\noutput_registers = false\n"),
    )
    .expect("write the config");

    let (checked, stdout) = cli_run(&config, "check", scale, &dir);
    assert!(stdout.contains(", mismatches: 0"), "{stdout}");
    let coalescers: Vec<&serde_json::Value> = checked["hardware"]["blocks"]
        .as_array()
        .expect("hardware blocks")
        .iter()
        .filter(|b| b["block"] == "tlb_coalescer")
        .collect();
    assert_eq!(coalescers.len(), 4, "one coalescer per chiplet");
    let cycles: u64 = coalescers
        .iter()
        .map(|b| b["block_cycles"].as_u64().expect("block cycles"))
        .sum();
    assert!(cycles > 0, "the coalescers were clocked");
    for b in &coalescers {
        assert_eq!(
            b["engine"]["compared"], b["block_cycles"],
            "every block cycle compared: {b}"
        );
        assert_eq!(b["engine"]["reference_checked"], b["block_cycles"], "{b}");
    }
    let (twin, _) = cli_run(&config, "twin", scale, &dir);
    let (verilog, _) = cli_run(&config, "verilator", scale, &dir);
    assert_eq!(
        simulated(&twin),
        simulated(&verilog),
        "--hw verilator vs twin"
    );
    assert_eq!(simulated(&twin), simulated(&checked), "--hw check vs twin");
    let _ = std::fs::remove_dir_all(&dir);
}
