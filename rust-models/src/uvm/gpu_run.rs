//! One UVM run on the MCM GPU model: the driver's memory manager under a placement policy,
//! the GPU, and [`UvmGpuService`] as its memory service; the report joins the GPU's
//! [`RunReport`] and the [`UvmMetrics`]. [`UvmGpu`] is the GPU every study's UVM run is
//! timed on (the Forest sweep, its sensitivity study, `mcmvm hil`, `mcmvm run --uvm`).

use serde::Serialize;

use crate::driver::{MemoryManager, PolicyKind};
use crate::gpu::host_clock::Stopwatch;
use crate::gpu::replay::ReplayCounters;
use crate::gpu::{driver_config, Gpu, GpuConfig, RunReport, RunSpec};
use crate::workload::Workload;

use super::config::UvmConfig;
use super::gpu_service::{GpuUvmStats, UvmGpuService};
use super::metrics::UvmMetrics;
use super::{UvmError, UvmPolicy};

/// What `run_on_gpu` measured.
#[derive(Debug, Clone, Serialize)]
pub struct GpuUvmReport {
    /// The GPU model's report (cycles, TLBs, remote accesses, ...).
    pub gpu: RunReport,
    /// The UVM driver's metrics (far faults, batches, migrations, evictions, classes).
    pub uvm: UvmMetrics,
    /// The fault protocol between GPU and driver.
    pub protocol: GpuUvmStats,
    /// Warp memory instructions per wall second with fault handling excluded: the
    /// driver's service and the GPU's fault path (`fault_path_s`, `driver_s`).
    pub gpu_speed: f64,
    /// Host seconds of the GPU model's side of the fault path ([`Gpu::fault_seconds`]:
    /// faulting walks and fault calls, shootdowns, replays that faulted again from their
    /// dequeue, the fresh faults' discovery and the completed replays' re-issue),
    /// estimated from a sample.
    pub fault_path_s: f64,
    /// Three parts of `fault_path_s`, each estimated from the GPU event loop's events
    /// sampled at their start, with how many were timed: the fresh faults' discovery (their
    /// attempts' TLB probes and page-table lookup before the walk that found no mapping),
    /// taking the replays that faulted again off the event loop's ready queue, and the
    /// completed replays' dequeue and re-issue up to their translation.
    pub fault_discovery_s: f64,
    pub fault_discoveries_timed: u64,
    pub replay_dequeue_s: f64,
    pub replay_dequeues_timed: u64,
    pub replay_reissue_s: f64,
    pub replay_reissues_timed: u64,
    /// Fault episodes (fresh faults, replays that faulted again: together every fault
    /// call) and how many of each were timed for `fault_path_s`.
    pub fault_episodes: [u64; 2],
    pub fault_episodes_timed: [u64; 2],
    /// Host seconds of the driver's service (batches, profiling on ATT interrupts),
    /// measured.
    pub driver_s: f64,
    /// The deferred replays: attempts, regressions (an earlier page of the instruction
    /// evicted between attempts) and resumed attempts ([`crate::gpu::replay`]).
    pub replays: ReplayCounters,
}

impl GpuUvmReport {
    /// The GPU table, the UVM table and the protocol counters, for the terminal.
    pub fn table(&self) -> String {
        let p = &self.protocol;
        format!(
            "{}{}  {:<28} {} calls, {} new buffer entries, {} repeat faults\n  {:<28} {} mapped, {} unmapped, {} shootdown ranges, peak {} resident\n  {:<28} {} attempts (whole instructions), {} regressions, {} resumed\n",
            self.gpu.table(),
            self.uvm.table(),
            "fault protocol",
            p.fault_calls,
            p.buffer_entries,
            p.repeat_faults,
            "driver pages",
            p.pages_mapped,
            p.pages_unmapped,
            p.shootdown_ranges,
            p.max_resident_pages,
            "replays",
            self.replays.attempts,
            self.replays.regressions,
            self.replays.resumed
        )
    }
}

/// The GPU a UVM study runs on: a GPU config and the placement policy of its pages. The
/// Forest study's is the paper's GPU (`configs/gpu-turing.toml`: one Turing chiplet) with
/// 4 KB pages; tests take the same GPU with fewer SMs.
#[derive(Debug, Clone)]
pub struct UvmGpu {
    pub gpu: Box<GpuConfig>,
    pub placement: PolicyKind,
}

impl UvmGpu {
    /// `gpu` with 4 KB pages (placement `s4k`), as the Forest paper's GPU.
    pub fn new(gpu: GpuConfig) -> UvmGpu {
        UvmGpu {
            gpu: Box::new(gpu),
            placement: PolicyKind::S4k,
        }
    }

    /// Run `wl` (built at `scale`, `seed`) under `policy` with the UVM parameters of `cfg`
    /// (its oversubscription included). One `--hw` choice, `cfg.engines`, serves the GPU's
    /// blocks and the driver's ATT; the UVM clock is the GPU's (see [`run_on_gpu`]).
    pub fn run(
        &self,
        wl: &dyn Workload,
        cfg: &UvmConfig,
        policy: UvmPolicy,
        scale: f64,
        seed: u64,
    ) -> Result<UvmMetrics, UvmError> {
        Ok(self.run_report(wl, cfg, policy, scale, seed, false)?.uvm)
    }

    /// As [`UvmGpu::run`], with the GPU's report and the fault protocol; with `check`,
    /// residency and page-table invariants are audited (slow; tests).
    pub fn run_report(
        &self,
        wl: &dyn Workload,
        cfg: &UvmConfig,
        policy: UvmPolicy,
        scale: f64,
        seed: u64,
        check: bool,
    ) -> Result<GpuUvmReport, UvmError> {
        let mut gpu = self.gpu.as_ref().clone();
        gpu.engines = cfg.engines.clone();
        let spec = RunSpec {
            policy: self.placement,
            scale,
            seed,
        };
        run_on_gpu(&gpu, cfg, wl, spec, policy, check)
    }
}

/// Run `workload` on the GPU model of `gpu_cfg` under placement policy `spec.policy` with
/// UVM management `policy` (tbnp, forest, specforest, forest-lru or tbnp-aae). The UVM parameters come from
/// `ucfg`; its clock is replaced by the GPU's, so fault-service µs become GPU cycles.
/// With `check`, residency and page-table invariants are audited (slow; tests).
pub fn run_on_gpu(
    gpu_cfg: &GpuConfig,
    ucfg: &UvmConfig,
    workload: &dyn Workload,
    spec: RunSpec,
    policy: UvmPolicy,
    check: bool,
) -> Result<GpuUvmReport, UvmError> {
    // A misprediction of any block repeats the run with every block unpredicted.
    let (mut r, repeated) = gpu_cfg.engines.serve(
        |repeat| match repeat {
            None => run_on_gpu_once(gpu_cfg, ucfg, workload, spec, policy, check),
            Some(engines) => {
                let g = GpuConfig {
                    engines,
                    ..gpu_cfg.clone()
                };
                let u = UvmConfig {
                    engines: ucfg
                        .engines
                        .unpredicted()
                        .unwrap_or_else(|| ucfg.engines.clone()),
                    ..ucfg.clone()
                };
                run_on_gpu_once(&g, &u, workload, spec, policy, check)
            }
        },
        UvmError::block_fault,
    )?;
    r.gpu.hardware.repeated_after = repeated.clone();
    r.uvm.hardware.repeated_after = repeated;
    Ok(r)
}

/// The UVM run's preconditions: a UVM policy, oversubscription ≥ 1, some allocations.
fn check_run(ucfg: &UvmConfig, workload: &dyn Workload, policy: UvmPolicy) -> Result<(), UvmError> {
    if policy == UvmPolicy::None {
        return Err(UvmError::NoneOnGpu);
    }
    if ucfg.memory.oversubscription.is_nan() || ucfg.memory.oversubscription < 1.0 {
        return Err(UvmError::Oversubscription(ucfg.memory.oversubscription));
    }
    if workload.allocations().is_empty() {
        return Err(UvmError::NoAllocations(workload.name().to_string()));
    }
    Ok(())
}

fn run_on_gpu_once(
    gpu_cfg: &GpuConfig,
    ucfg: &UvmConfig,
    workload: &dyn Workload,
    spec: RunSpec,
    policy: UvmPolicy,
    check: bool,
) -> Result<GpuUvmReport, UvmError> {
    check_run(ucfg, workload, policy)?;
    let mut ucfg = ucfg.clone();
    ucfg.gpu.clock_mhz = gpu_cfg.gpu.clock_mhz;
    let mm = MemoryManager::new(driver_config(gpu_cfg), spec.policy, workload.allocations())?;
    let mut svc = UvmGpuService::new(workload, &ucfg, policy, check, &mm)?;
    // A block fault keeps its type (the CLI exits 1 on a `--hw check` mismatch).
    let run_err = |e: crate::gpu::GpuError| match e {
        crate::gpu::GpuError::Block(f) => UvmError::Block(f),
        e => UvmError::Gpu(Box::new(e)),
    };
    let mut gpu = Gpu::new(gpu_cfg, workload, mm, Box::new(&mut svc)).map_err(run_err)?;
    // Timed like `simulate`: the run, not building the GPU's structures.
    let watch = Stopwatch::start();
    gpu.run_all().map_err(run_err)?;
    let (secs, rate) = watch.stop();
    let estimate = gpu.fault_seconds(&rate);
    let [(fault_discovery_s, fault_discoveries_timed), (replay_dequeue_s, replay_dequeues_timed), (replay_reissue_s, replay_reissues_timed)] =
        gpu.fault_prelude_seconds(&rate);
    let (fault_episodes, fault_episodes_timed) = gpu.fault_episodes();
    let replays = gpu.replay_counters();
    let report = gpu.finish(spec, secs).map_err(run_err)?;
    let (mut uvm, protocol) = svc.finish(report.cycles, report.warp_mem_instrs);
    let driver_s = uvm.service_wall_s.min(secs);
    // A sampled estimate: on a short run one timed episode the OS preempted, scaled by
    // eight, could claim more than the wall time left.
    let fault_path_s = estimate.min(secs - driver_s);
    uvm.wall_s = secs;
    // All the host time fault handling took: the GPU's side and the driver's.
    uvm.service_wall_s = fault_path_s + driver_s;
    uvm.finish();
    let gpu_speed = uvm.instr_per_s;
    Ok(GpuUvmReport {
        gpu: report,
        uvm,
        protocol,
        gpu_speed,
        fault_path_s,
        fault_discovery_s: fault_discovery_s.min(fault_path_s),
        fault_discoveries_timed,
        replay_dequeue_s: replay_dequeue_s.min(fault_path_s),
        replay_dequeues_timed,
        replay_reissue_s: replay_reissue_s.min(fault_path_s),
        replay_reissues_timed,
        fault_episodes,
        fault_episodes_timed,
        driver_s,
        replays,
    })
}
