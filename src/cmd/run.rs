//! `mcmvm run`: simulate one workload (built-in or trace) under one placement policy and
//! print what the model measured, the seed and the simulation speed.

use anyhow::Context;
use mcmvm_models::driver::PolicyKind;
use mcmvm_models::gpu::{simulate, GpuConfig, RunSpec};
use mcmvm_models::workload::{self, TraceWorkload, Workload};
use std::path::PathBuf;

#[derive(clap::Args)]
#[command(group = clap::ArgGroup::new("source").required(true).args(["workload", "trace"]))]
pub struct Args {
    /// GPU configuration (TOML).
    #[arg(long, default_value = "configs/mcm-4chiplet.toml")]
    pub config: PathBuf,
    /// Built-in workload (see `mcmvm workloads`).
    #[arg(long)]
    pub workload: Option<String>,
    /// Trace file instead of a built-in workload.
    #[arg(long)]
    pub trace: Option<PathBuf>,
    /// Placement policy: s4k, s64k, s2m, olp, clap, ideal.
    #[arg(long)]
    pub policy: String,
    /// Workload size multiplier (built-in workloads).
    #[arg(long, default_value_t = 1.0)]
    pub scale: f64,
    /// Seed of the workload generator.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Also write the full report as JSON.
    #[arg(long)]
    pub json: Option<PathBuf>,
}

pub fn run(args: Args) -> anyhow::Result<u8> {
    let cfg = GpuConfig::load(&args.config)?;
    let policy: PolicyKind = args.policy.parse()?;
    let trace = args.trace.as_deref().map(TraceWorkload::open).transpose()?;
    let built = match &args.workload {
        Some(name) => Some(workload::by_name(name, args.scale, args.seed)?),
        None => None,
    };
    let w: &dyn Workload = match (&built, &trace) {
        (Some(b), _) => b.as_ref(),
        (None, Some(t)) => t,
        (None, None) => anyhow::bail!("give --workload NAME or --trace FILE"),
    };
    println!(
        "seed: {}  config: {}  workload: {}",
        args.seed,
        args.config.display(),
        w.name()
    );
    let spec = RunSpec {
        policy,
        scale: args.scale,
        seed: args.seed,
    };
    let report = simulate(&cfg, w, spec)?;
    if let Some(t) = &trace {
        // A trace that changed under us ends its streams early; say so instead of
        // reporting a truncated run as if it were whole.
        if let Some(e) = t.stream_error() {
            anyhow::bail!("{}: {e}", t.path().display());
        }
    }
    print!("{}", report.table());
    println!(
        "speed: {:.0} warp mem-instr/s ({:.2} s)",
        report.speed, report.sim_seconds
    );
    if let Some(path) = &args.json {
        let text = serde_json::to_string_pretty(&report)?;
        std::fs::write(path, text).with_context(|| format!("{}: cannot write", path.display()))?;
        println!("json: {}", path.display());
    }
    Ok(0)
}
