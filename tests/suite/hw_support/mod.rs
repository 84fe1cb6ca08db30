//! Shared by the hardware-in-the-loop tests: configs, engine modes and comparable reports.
#![allow(dead_code)]

use mcmvm_cosim::system::{hardware, HwMode, HwOptions};
use mcmvm_models::blocks::Hardware;
use mcmvm_models::driver::PolicyKind;
use mcmvm_models::gpu::{simulate, GpuConfig, GpuError, RunReport, RunSpec};
use mcmvm_models::uvm::{UvmConfig, UvmError, UvmGpu, UvmMetrics, UvmPolicy};
use mcmvm_models::workload;
use std::path::Path;

pub const SEED: u64 = 1;

pub fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

pub fn gpu_cfg(name: &str) -> GpuConfig {
    GpuConfig::load(&root().join("configs").join(name)).expect("built-in GPU config loads")
}

pub fn uvm_cfg() -> UvmConfig {
    UvmConfig::load(&root().join("configs/uvm-turing.toml"), &[]).expect("UVM config loads")
}

/// The Forest study's GPU (`configs/gpu-turing.toml`, 4 KB pages) with 8 of its 68 SMs,
/// so the UVM runs of these tests take seconds.
pub fn small_turing() -> UvmGpu {
    let mut gpu = gpu_cfg("gpu-turing.toml");
    gpu.gpu.sms_per_chiplet = 8;
    UvmGpu::new(gpu)
}

/// `w` under `policy` on [`small_turing`], its blocks (the ATT) served by `ucfg.engines`.
pub fn forest_run(
    ucfg: &UvmConfig,
    w: &str,
    policy: UvmPolicy,
    scale: f64,
) -> Result<UvmMetrics, UvmError> {
    let wl = workload::by_name(w, scale, SEED).expect("built-in workload");
    small_turing().run(wl.as_ref(), ucfg, policy, scale, SEED)
}

pub fn mode(m: HwMode) -> Hardware {
    let mut o = HwOptions::new(m);
    o.mismatch_dir = std::env::temp_dir().join("mcmvm-hw-check");
    hardware(o)
}

/// A report as JSON without what may differ between engines: host timing and engine names.
pub fn simulated(v: &impl serde::Serialize) -> serde_json::Value {
    mcmvm_models::figures::simulated_figures(v)
}

/// Built-in workload `w` under `policy` at `scale` (seed [`SEED`]) on `cfg`: the whole
/// report, hardware section included.
pub fn clap_report(
    cfg: &GpuConfig,
    w: &str,
    policy: PolicyKind,
    scale: f64,
) -> Result<RunReport, GpuError> {
    let wl = workload::by_name(w, scale, SEED).expect("built-in workload");
    let spec = RunSpec {
        policy,
        scale,
        seed: SEED,
    };
    simulate(cfg, wl.as_ref(), spec)
}

/// [`clap_report`]'s simulated figures, every block but the coalescer having stepped.
pub fn clap_run(
    cfg: &GpuConfig,
    w: &str,
    policy: PolicyKind,
    scale: f64,
) -> Result<serde_json::Value, GpuError> {
    clap_report(cfg, w, policy, scale).map(|r| {
        assert!(r
            .hardware
            .blocks
            .iter()
            .all(|b| b.block_cycles > 0 || b.block == "tlb_coalescer"));
        simulated(&r)
    })
}
