//! `mcmvm codesign --block rt|coalescer|att [--grid FILE]`: each point of a block's
//! parameter grid through lint, synthesis on both libraries, system runs with its own
//! Verilog serving, and power from their switching; the table, the recommendation, and
//! `<out>/codesign/<block>.{json,csv}` with a Pareto SVG. The study is `mcmvm-codesign`.

use super::common::load_hw_config;
use anyhow::Context;
use mcmvm_codesign::grid;
use mcmvm_codesign::study::{run_points, StudyOptions};
use mcmvm_codesign::system::{default_scale, default_workloads, RunPlan, Systems};
use mcmvm_protocol::protocol::BlockKind;
use std::path::PathBuf;

/// `--block`: one block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Block {
    Rt,
    Coalescer,
    Att,
}

impl Block {
    fn kind(self) -> BlockKind {
        match self {
            Block::Rt => BlockKind::RemoteTracker,
            Block::Coalescer => BlockKind::TlbCoalescer,
            Block::Att => BlockKind::AccessTimeTracker,
        }
    }
}

#[derive(clap::Args)]
pub struct Args {
    /// The block whose parameters are varied.
    #[arg(long, value_enum)]
    pub block: Block,
    /// A TOML file with a list of values per key (every combination is a point); default:
    /// the paper's point, our default and two smaller points (docs/codesign.md).
    #[arg(long)]
    pub grid: Option<PathBuf>,
    /// Results go to OUT/codesign/ (JSON, CSV, SVG, per-point work files, the cache).
    #[arg(long, default_value = "out")]
    pub out: PathBuf,
    /// Comma-separated workloads (default: rt bfs,sssp; coalescer bfs,ste; att ls,mixed).
    #[arg(long)]
    pub workloads: Option<String>,
    /// Workload size multiplier (default: 0.1; att 0.05, on the GPU timing model).
    #[arg(long)]
    pub scale: Option<f64>,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Base hardware parameters: the keys the grid does not vary (default: configs/hw.toml
    /// if present, else the built-in values).
    #[arg(long)]
    pub config: Option<PathBuf>,
}

pub fn run(args: Args) -> anyhow::Result<u8> {
    let block = args.block.kind();
    let (base, from) = load_hw_config(args.config.as_deref())?;
    let points = match &args.grid {
        Some(path) => grid::load_grid(path, block, &base)?,
        None => grid::default_grid(block, &base),
    };
    let scale = args.scale.unwrap_or_else(|| default_scale(block));
    if !(scale.is_finite() && scale > 0.0) {
        anyhow::bail!("--scale {scale}: expected a positive multiplier");
    }
    let workloads: Vec<String> = match &args.workloads {
        Some(w) => w
            .split(',')
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect(),
        None => default_workloads(block),
    };
    if workloads.is_empty() {
        anyhow::bail!("--workloads: expected at least one workload name");
    }
    for w in &workloads {
        mcmvm_models::workload::by_name(w, scale, args.seed)
            .with_context(|| format!("--workloads {w}"))?;
    }
    let systems = Systems {
        clap_gpu: super::configs::gpu(&PathBuf::from("configs/mcm-4chiplet.toml"))?,
        forest_gpu: super::configs::gpu(&PathBuf::from("configs/gpu-turing.toml"))?,
        uvm: super::configs::uvm(&PathBuf::from("configs/uvm-turing.toml"), &[])?,
    };
    let opts = StudyOptions {
        block,
        base,
        plan: RunPlan {
            workloads,
            scale,
            seed: args.seed,
        },
        systems,
        out: args.out.clone(),
    };
    println!(
        "== co-design of {}: {} points, base parameters from {from}; workloads {} at scale {}, seed {} ==",
        block.module_name(),
        points.len(),
        opts.plan.workloads.join(","),
        scale,
        args.seed
    );
    let bar = super::progress::bar(points.len() as u64, "points");
    let results = run_points(&opts, &points, |_, p| {
        bar.set_message(p.label.clone());
        bar.inc(1);
    })?;
    bar.finish_and_clear();
    let (_, recommendation) = mcmvm_codesign::output::recommend(&results);
    print!("{}", mcmvm_codesign::output::table(block, &results));
    print!("{}", mcmvm_codesign::output::served_lines(&results));
    println!(
        "power: {} at the GPU clock of the runs",
        mcmvm_codesign::study::POWER_TOOL
    );
    println!("{recommendation}");
    let files = mcmvm_codesign::output::write(&args.out, block, &results, &recommendation)?;
    for f in files {
        println!("wrote {}", f.display());
    }
    Ok(0)
}
