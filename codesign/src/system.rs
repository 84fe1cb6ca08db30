//! A point's effect on the system, measured with its own Verilog serving (`--hw verilator`,
//! each instance elaborated for the point's parameters) and its ports recorded:
//!
//! - RT: CLAP's speed-up over S-64KB on the MCM GPU, and how far the RT's remote-ratio
//!   estimate per data structure lies from the true one (lines-weighted mean absolute
//!   error), with MMA's page-size choices;
//! - coalescer: S-64KB with CLAP's coalescing hardware (`s64k-coal`) over S-64KB, with its
//!   merged TLB entries and L2 TLB MPKI;
//! - ATT: Forest's speed-up over TBNp under UVM on the GPU timing model (as `sweep --suite
//!   forest` runs it), with Forest's profiling steps.
//!
//! The runs are the library calls `mcmvm run` and `mcmvm sweep` make
//! (`gpu::sweep::run_job`, `uvm::run_on_gpu`), never the CLI.

use crate::CodesignError;
use mcmvm_cosim::system::{hardware, HwMode, HwOptions};
use mcmvm_models::config::HwConfig;
use mcmvm_models::driver::PolicyKind;
use mcmvm_models::gpu::{sweep::Job, GpuConfig, RunSpec};
use mcmvm_models::stats;
use mcmvm_models::uvm::{run_on_gpu, UvmConfig, UvmPolicy};
use mcmvm_protocol::protocol::BlockKind;
use mcmvm_protocol::system::HardwareReport;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The system configurations the runs use.
#[derive(Debug, Clone)]
pub struct Systems {
    /// The MCM GPU of the CLAP study (RT, coalescer).
    pub clap_gpu: GpuConfig,
    /// The GPU of the Forest study on the timing model, and its UVM parameters (ATT).
    pub forest_gpu: GpuConfig,
    pub uvm: UvmConfig,
}

/// What to run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunPlan {
    pub workloads: Vec<String>,
    pub scale: f64,
    pub seed: u64,
}

/// The default workloads: two of the study's each, chosen to exercise the block (graph
/// kernels with 7 data structures for the RT, more than a small table holds).
pub fn default_workloads(block: BlockKind) -> Vec<String> {
    let w: &[&str] = match block {
        BlockKind::RemoteTracker => &["bfs", "sssp"],
        BlockKind::TlbCoalescer => &["bfs", "ste"],
        BlockKind::AccessTimeTracker => &["ls", "mixed"],
    };
    w.iter().map(|s| s.to_string()).collect()
}

/// The default scale: CLAP's workloads at 0.1, Forest's (on the timing model) at 0.05.
pub fn default_scale(block: BlockKind) -> f64 {
    match block {
        BlockKind::AccessTimeTracker => 0.05,
        _ => 0.1,
    }
}

/// One system run of a point.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Run {
    pub workload: String,
    pub policy: String,
    pub cycles: u64,
    /// The block's instances in this run: who served each and the cycles stepped.
    pub served: Vec<Served>,
}

/// One block instance of a run's hardware report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Served {
    pub block: String,
    pub unit: String,
    /// `verilator (twin-predicted)`, … (`HardwareReport`'s engine).
    pub engine: String,
    pub block_cycles: u64,
    pub skipped_idle: u64,
    /// Cycles each underlying engine stepped: `verilator:121`.
    pub stepped: Vec<String>,
}

/// One workload's figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkloadEffect {
    pub workload: String,
    /// Baseline cycles over the design's cycles.
    pub speedup: f64,
    /// RT: lines-weighted mean |RT estimate − true remote ratio| over the structures.
    pub rt_error: Option<f64>,
    /// RT: MMA's page size per structure, `name:size`.
    pub page_sizes: Option<String>,
    /// Coalescer: merged TLB entries and L2 TLB misses per kilo-instruction.
    pub merged_entries: Option<u64>,
    pub l2_tlb_mpki: Option<f64>,
    /// ATT: Forest's profiling steps.
    pub profiling_steps: Option<u64>,
}

/// A point's effect: the geometric-mean speed-up (the Pareto figure's y) and per workload.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Effect {
    /// What the speed-up is of: `clap / s64k`, `s64k-coal / s64k`, `forest / tbnp`.
    pub metric: String,
    pub geomean_speedup: f64,
    pub workloads: Vec<WorkloadEffect>,
    pub runs: Vec<Run>,
    /// The block's clock cycles over the recorded runs (stepped + skipped), for power.
    pub block_clock_cycles: u64,
    /// The GPU clock of those runs, MHz (power is reported at it).
    pub clock_mhz: f64,
    /// VCDs of the design runs, the block's instances (`--record-ports`).
    pub vcds: Vec<PathBuf>,
}

/// (design policy, baseline policy) of a block's study.
pub fn metric(block: BlockKind) -> &'static str {
    match block {
        BlockKind::RemoteTracker => "clap / s64k",
        BlockKind::TlbCoalescer => "s64k-coal / s64k",
        BlockKind::AccessTimeTracker => "forest / tbnp",
    }
}

fn engines(record: Option<&Path>) -> mcmvm_models::blocks::Hardware {
    let mut o = HwOptions::new(HwMode::Verilator);
    o.record_dir = record.map(Path::to_path_buf);
    hardware(o)
}

fn served(block: BlockKind, hw: &HardwareReport) -> Vec<Served> {
    hw.blocks
        .iter()
        .filter(|b| b.block == block.module_name())
        .map(|b| Served {
            block: b.block.to_string(),
            unit: b.unit.clone(),
            engine: b.engine.engine.clone(),
            block_cycles: b.block_cycles,
            skipped_idle: b.skipped_idle,
            stepped: b
                .engine
                .stepped
                .iter()
                .map(|e| format!("{}:{}", e.engine, e.cycles))
                .collect(),
        })
        .collect()
}

/// Run the block's study for the point `hw`; ports recorded under `dir/ports/`.
pub fn measure(
    block: BlockKind,
    hw: &HwConfig,
    sys: &Systems,
    plan: &RunPlan,
    dir: &Path,
) -> Result<Effect, CodesignError> {
    let mut effect = Effect {
        metric: metric(block).into(),
        geomean_speedup: 0.0,
        workloads: Vec::new(),
        runs: Vec::new(),
        block_clock_cycles: 0,
        clock_mhz: 0.0,
        vcds: Vec::new(),
    };
    for w in &plan.workloads {
        let ports = dir.join("ports").join(w);
        let _ = std::fs::remove_dir_all(&ports);
        std::fs::create_dir_all(&ports).map_err(|source| CodesignError::Io {
            path: ports.clone(),
            source,
        })?;
        let one = match block {
            BlockKind::AccessTimeTracker => forest(hw, sys, plan, w, &ports, &mut effect)?,
            _ => clap(block, hw, sys, plan, w, &ports, &mut effect)?,
        };
        effect.workloads.push(one);
        effect.vcds.extend(recorded(block, &ports)?);
    }
    effect.geomean_speedup = stats::geomean_or_one(
        &effect
            .workloads
            .iter()
            .map(|w| w.speedup)
            .collect::<Vec<_>>(),
    );
    Ok(effect)
}

/// The block's VCDs in `ports` (`rt-chiplet0.vcd`, …).
fn recorded(block: BlockKind, ports: &Path) -> Result<Vec<PathBuf>, CodesignError> {
    let io = |source| CodesignError::Io {
        path: ports.to_path_buf(),
        source,
    };
    let mut v: Vec<PathBuf> = std::fs::read_dir(ports)
        .map_err(io)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
                n.starts_with(&format!("{}-", block.short_name())) && n.ends_with(".vcd")
            })
        })
        .collect();
    v.sort();
    Ok(v)
}

/// What the effect needs of a finished system run of either study.
trait SystemRun {
    fn cycles(&self) -> u64;
    fn hardware(&self) -> &HardwareReport;
}

impl SystemRun for mcmvm_models::gpu::metrics::RunReport {
    fn cycles(&self) -> u64 {
        self.cycles
    }
    fn hardware(&self) -> &HardwareReport {
        &self.hardware
    }
}

impl SystemRun for mcmvm_models::uvm::metrics::UvmMetrics {
    fn cycles(&self) -> u64 {
        self.cycles
    }
    fn hardware(&self) -> &HardwareReport {
        &self.hardware
    }
}

/// The two runs of one workload: the design policy with the block's ports recorded into
/// `ports`, then the baseline without. `run(record)` runs the design when `record` is
/// set. Both are added to `effect.runs`, the design's block cycles to the power count;
/// returns the design run and the speed-up (baseline cycles over the design's).
fn design_and_baseline<R: SystemRun, E: std::fmt::Display>(
    block: BlockKind,
    w: &str,
    [design, baseline]: [&str; 2],
    ports: &Path,
    effect: &mut Effect,
    mut run: impl FnMut(Option<&Path>) -> Result<R, E>,
) -> Result<(R, f64), CodesignError> {
    let mut one = |policy: &str, record: Option<&Path>| {
        let r = run(record).map_err(|e| CodesignError::Run {
            what: format!("{w} under {policy}"),
            detail: e.to_string(),
        })?;
        effect.runs.push(Run {
            workload: w.into(),
            policy: policy.into(),
            cycles: r.cycles(),
            served: served(block, r.hardware()),
        });
        Ok::<_, CodesignError>(r)
    };
    let d = one(design, Some(ports))?;
    let base = one(baseline, None)?;
    effect.block_clock_cycles += served(block, d.hardware())
        .iter()
        .map(|s| s.block_cycles + s.skipped_idle)
        .sum::<u64>();
    let speedup = base.cycles() as f64 / d.cycles().max(1) as f64;
    Ok((d, speedup))
}

/// RT or coalescer: the design policy (ports recorded) and S-64KB on the MCM GPU.
fn clap(
    block: BlockKind,
    hw: &HwConfig,
    sys: &Systems,
    plan: &RunPlan,
    w: &str,
    ports: &Path,
    effect: &mut Effect,
) -> Result<WorkloadEffect, CodesignError> {
    let design = if block == BlockKind::RemoteTracker {
        PolicyKind::Clap
    } else {
        PolicyKind::S64kCoal
    };
    let names = [design.name(), PolicyKind::S64k.name()];
    let (d, speedup) = design_and_baseline(block, w, names, ports, effect, |record| {
        let mut cfg = sys.clap_gpu.clone();
        cfg.hw = hw.clone();
        cfg.engines = engines(record);
        let policy = if record.is_some() {
            design
        } else {
            PolicyKind::S64k
        };
        let job = Job {
            workload: w.to_string(),
            policy,
        };
        mcmvm_models::gpu::sweep::run_job(&cfg, &job, plan.scale, plan.seed)
    })?;
    effect.clock_mhz = sys.clap_gpu.gpu.clock_mhz;
    let rt = block == BlockKind::RemoteTracker;
    Ok(WorkloadEffect {
        workload: w.into(),
        speedup,
        rt_error: rt.then(|| rt_error(&d.allocs)),
        page_sizes: rt.then(|| {
            d.allocs
                .iter()
                .map(|a| format!("{}:{}", a.name, a.page_size))
                .collect::<Vec<_>>()
                .join(" ")
        }),
        merged_entries: (!rt).then_some(d.merged_tlb_entries),
        l2_tlb_mpki: (!rt).then_some(d.l2_tlb_mpki),
        profiling_steps: None,
    })
}

/// Lines-weighted mean |RT estimate − true remote ratio| over the structures the RT saw.
pub fn rt_error(allocs: &[mcmvm_models::gpu::metrics::AllocReport]) -> f64 {
    let (mut num, mut den) = (0.0, 0.0);
    for a in allocs {
        if let Some(est) = a.rt_remote_ratio {
            num += a.lines as f64 * (est - a.remote_ratio).abs();
            den += a.lines as f64;
        }
    }
    if den == 0.0 {
        0.0
    } else {
        num / den
    }
}

/// ATT: Forest (ports recorded) and TBNp under UVM on the GPU timing model.
fn forest(
    hw: &HwConfig,
    sys: &Systems,
    plan: &RunPlan,
    w: &str,
    ports: &Path,
    effect: &mut Effect,
) -> Result<WorkloadEffect, CodesignError> {
    let wl = mcmvm_models::workload::by_name(w, plan.scale, plan.seed).map_err(|e| {
        CodesignError::Run {
            what: w.into(),
            detail: e.to_string(),
        }
    })?;
    let block = BlockKind::AccessTimeTracker;
    let names = [UvmPolicy::Forest.name(), UvmPolicy::Tbnp.name()];
    let (d, speedup) = design_and_baseline(block, w, names, ports, effect, |record| {
        let mut ucfg = sys.uvm.clone();
        ucfg.att = hw.access_time_tracker.clone();
        ucfg.engines = engines(record);
        let mut gpu = sys.forest_gpu.clone();
        gpu.engines = ucfg.engines.clone();
        let spec = RunSpec {
            policy: PolicyKind::S4k,
            scale: plan.scale,
            seed: plan.seed,
        };
        let policy = if record.is_some() {
            UvmPolicy::Forest
        } else {
            UvmPolicy::Tbnp
        };
        run_on_gpu(&gpu, &ucfg, wl.as_ref(), spec, policy, false).map(|r| r.uvm)
    })?;
    effect.clock_mhz = sys.forest_gpu.gpu.clock_mhz;
    Ok(WorkloadEffect {
        workload: w.into(),
        speedup,
        rt_error: None,
        page_sizes: None,
        merged_entries: None,
        l2_tlb_mpki: None,
        profiling_steps: Some(d.profiling_steps),
    })
}
