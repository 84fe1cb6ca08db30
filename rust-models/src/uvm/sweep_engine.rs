//! Which engine the Forest sweep runs each job on.
//!
//! * the GPU timing model ([`super::run_on_gpu`]) configured as the paper's GPU
//!   (`configs/gpu-turing.toml`: one chiplet, Turing SMs and caches, 4 KB pages): every
//!   warp keeps its own timing, compute and caches, and a far fault's replay re-executes
//!   the whole instruction ([`crate::gpu::replay`]) — the study's figures;
//! * the replay engine ([`super::run_workload`]): warps replayed against a fixed memory
//!   latency with no caches, several times faster; a fast approximate mode, and every
//!   output of a sweep on it says so ([`REPLAY_LABEL`]).
//!
//! Both run the same driver state and batch service (`uvm::core`, `uvm::service`), so the
//! prefetchers, eviction, ATT and APD are one implementation.

use crate::driver::PolicyKind;
use crate::gpu::{GpuConfig, RunSpec};
use crate::workload::Workload;

use super::config::UvmConfig;
use super::metrics::UvmMetrics;
use super::{run_on_gpu, run_workload, UvmError, UvmPolicy};

/// How outputs name a sweep on the GPU timing model.
pub const TIMING_LABEL: &str = "GPU timing model";
/// How outputs name a sweep on the replay engine.
pub const REPLAY_LABEL: &str = "replay engine (fast approximate)";

/// The engine of a Forest sweep.
#[derive(Debug, Clone)]
pub enum SweepEngine {
    /// The GPU timing model of `gpu` with placement policy `placement` (the paper's GPU:
    /// `configs/gpu-turing.toml`, s4k).
    Timing {
        gpu: Box<GpuConfig>,
        placement: PolicyKind,
    },
    /// The UVM replay engine (fast, approximate).
    Replay,
}

impl SweepEngine {
    /// The paper's GPU: `gpu` (e.g. `configs/gpu-turing.toml`) with 4 KB pages.
    pub fn timing(gpu: GpuConfig) -> SweepEngine {
        SweepEngine::Timing {
            gpu: Box::new(gpu),
            placement: PolicyKind::S4k,
        }
    }

    /// `timing` or `replay` (the CLI's `--engine`).
    pub fn name(&self) -> &'static str {
        match self {
            SweepEngine::Timing { .. } => "timing",
            SweepEngine::Replay => "replay",
        }
    }

    /// How every output names the engine ([`TIMING_LABEL`], [`REPLAY_LABEL`]).
    pub fn label(&self) -> &'static str {
        label_of(self.name())
    }

    /// Run `wl` under `policy` with the UVM parameters of `cfg` (its oversubscription
    /// included). On the timing model the UVM clock is the GPU's (see `run_on_gpu`).
    pub fn run(
        &self,
        wl: &dyn Workload,
        cfg: &UvmConfig,
        policy: UvmPolicy,
        scale: f64,
        seed: u64,
    ) -> Result<UvmMetrics, UvmError> {
        match self {
            SweepEngine::Timing { gpu, placement } => {
                let mut gpu = gpu.as_ref().clone();
                // One `--hw` choice serves the GPU's blocks and the driver's ATT.
                gpu.engines = cfg.engines.clone();
                let spec = RunSpec {
                    policy: *placement,
                    scale,
                    seed,
                };
                Ok(run_on_gpu(&gpu, cfg, wl, spec, policy, false)?.uvm)
            }
            SweepEngine::Replay => run_workload(wl, cfg, policy, false),
        }
    }
}

/// The label of engine `name` (`timing`, `replay`; anything else is named as given).
pub fn label_of(name: &str) -> &'static str {
    match name {
        "replay" => REPLAY_LABEL,
        _ => TIMING_LABEL,
    }
}

/// Whether `gpu` and the replay engine's `[gpu]` section of `ucfg` describe the same GPU
/// (SMs, warps per SM, clock): the two configs of the paper's GPU must agree. The error
/// names the first key that differs.
pub fn check_same_gpu(gpu: &GpuConfig, ucfg: &UvmConfig) -> Result<(), String> {
    let sms = gpu.gpu.chiplets * gpu.gpu.sms_per_chiplet;
    if sms as usize != ucfg.gpu.sms as usize {
        return Err(format!("gpu.sms: {} vs {sms} SMs", ucfg.gpu.sms));
    }
    if gpu.gpu.warps_per_sm as usize != ucfg.gpu.warps_per_sm as usize {
        return Err(format!(
            "gpu.warps_per_sm: {} vs {}",
            ucfg.gpu.warps_per_sm, gpu.gpu.warps_per_sm
        ));
    }
    if gpu.gpu.clock_mhz != ucfg.gpu.clock_mhz {
        return Err(format!(
            "gpu.clock_mhz: {} vs {}",
            ucfg.gpu.clock_mhz, gpu.gpu.clock_mhz
        ));
    }
    Ok(())
}
