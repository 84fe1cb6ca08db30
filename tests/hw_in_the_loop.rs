//! Hardware in the loop: the emitted Verilog (and rust-hdl's simulator) serve inside
//! full-system runs and give the twins' answers exactly; `--hw check` compares every output
//! every cycle (wrong engines: `hw_faults.rs`).
//!
//! Small scales (printed per test) keep this in the test budget; the models are built once
//! per parameter set and cached (first use prints a line on stderr).

mod hw_support;

use hw_support::{clap_run, gpu_cfg, mode, simulated, uvm_cfg, SEED};
use mcmvm_cosim::system::{hardware, HwMode, HwOptions};
use mcmvm_models::config::{AttConfig, RtConfig};
use mcmvm_models::driver::PolicyKind;
use mcmvm_models::gpu::{simulate, RunSpec};
use mcmvm_models::uvm::{self, UvmPolicy};
use mcmvm_models::workload;
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
    let scale = 0.05;
    println!("scale {scale}, seed {SEED}");
    let twin = uvm_cfg();
    let mut rtl = twin.clone();
    rtl.engines = hardware(HwOptions::new(HwMode::Verilator));
    for &w in workload::forest_suite() {
        for policy in [UvmPolicy::Forest, UvmPolicy::SpecForest] {
            let wl = workload::by_name(w, scale, SEED).expect("built-in workload");
            let a = uvm::run_workload(wl.as_ref(), &twin, policy, false).expect("twin run");
            let b = uvm::run_workload(wl.as_ref(), &rtl, policy, false).expect("verilator run");
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
    let wl = workload::by_name("bfs", scale, SEED).expect("bfs");
    let spec = RunSpec {
        policy: PolicyKind::Clap,
        scale,
        seed: SEED,
    };
    let r = simulate(&cfg, wl.as_ref(), spec).expect("check run");
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
    let wl = workload::by_name("ls", 0.05, SEED).expect("ls");
    let m = uvm::run_workload(wl.as_ref(), &ucfg, UvmPolicy::Forest, false).expect("ATT check");
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
    let scale = 0.05;
    println!("bfs / clap at scale {scale}, seed {SEED}");
    clap_run(&cfg, "bfs", PolicyKind::Clap, scale).unwrap_or_else(|e| panic!("{e}"));
    let mut ucfg = uvm_cfg();
    ucfg.engines = hardware(o);
    let wl = workload::by_name("ls", 0.05, SEED).expect("ls");
    let m = uvm::run_workload(wl.as_ref(), &ucfg, UvmPolicy::Forest, false)
        .unwrap_or_else(|e| panic!("{e}"));
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
    let got = clap_run(&cfg, "ste", PolicyKind::Clap, scale).expect("every cycle stepped");
    assert_eq!(want, got);
}
