//! One UVM run on the MCM GPU model: the driver's memory manager under a placement policy,
//! the GPU, and [`UvmGpuService`] as its memory service; the report joins the GPU's
//! [`RunReport`] and the [`UvmMetrics`].

use std::time::Instant;

use serde::Serialize;

use crate::driver::MemoryManager;
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
    /// Warp memory instructions per wall second with fault service excluded.
    pub gpu_speed: f64,
}

impl GpuUvmReport {
    /// The GPU table, the UVM table and the protocol counters, for the terminal.
    pub fn table(&self) -> String {
        let p = &self.protocol;
        format!(
            "{}{}  {:<28} {} calls, {} new buffer entries, {} repeat faults\n  {:<28} {} mapped, {} unmapped, {} shootdown ranges, peak {} resident\n",
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
            p.max_resident_pages
        )
    }
}

/// Run `workload` on the GPU model of `gpu_cfg` under placement policy `spec.policy` with
/// UVM management `policy` (tbnp, forest or specforest). The UVM parameters come from
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
    if policy == UvmPolicy::None {
        return Err(UvmError::NoneOnGpu);
    }
    if ucfg.memory.oversubscription.is_nan() || ucfg.memory.oversubscription < 1.0 {
        return Err(UvmError::Oversubscription(ucfg.memory.oversubscription));
    }
    if workload.allocations().is_empty() {
        return Err(UvmError::NoAllocations(workload.name().to_string()));
    }
    let gpu_err = |e: &dyn std::fmt::Display| UvmError::Gpu(e.to_string());
    let mut ucfg = ucfg.clone();
    ucfg.gpu.clock_mhz = gpu_cfg.gpu.clock_mhz;
    let mm = MemoryManager::new(driver_config(gpu_cfg), spec.policy, workload.allocations())
        .map_err(|e| gpu_err(&e))?;
    let mut svc = UvmGpuService::new(workload, &ucfg, policy, check, &mm);
    let mut gpu = Gpu::new(gpu_cfg, workload, mm, Box::new(&mut svc)).map_err(|e| gpu_err(&e))?;
    // Timed like `simulate`: the run, not building the GPU's structures.
    let wall = Instant::now();
    gpu.run_all().map_err(|e| gpu_err(&e))?;
    let secs = wall.elapsed().as_secs_f64();
    let report = gpu.finish(spec, secs);
    let (mut uvm, protocol) = svc.finish(report.cycles, report.warp_mem_instrs);
    uvm.wall_s = secs;
    uvm.finish();
    let gpu_speed = uvm.instr_per_s;
    Ok(GpuUvmReport {
        gpu: report,
        uvm,
        protocol,
        gpu_speed,
    })
}
