//! `mcmvm sweep --suite clap|forest`: a whole study in parallel.
//!
//! `clap`: every workload of the CLAP suite × every policy (rayon over the cores, an
//! indicatif progress bar), then Figure 18 (speed-up over s64k, remote ratio, geometric
//! means; CLAP against s64k and s2m) and Table 4 (page size per structure), with CSV and
//! JSON written to `--out`; then Table 2, the extra runs (`sweep_extras`) and the paper's
//! figures beside ours. `forest`: the UVM study, run by `mcmvm_models::uvm`.
//!
//! Beyond one machine (clap and forest; `sweep_plan`): `--plan FILE` writes one shell
//! command per run, `--task-id N` runs one job of the fixed job list into `OUT/runs/`, and
//! `mcmvm sweep merge OUT` builds the same tables and files from those runs. The
//! in-process sweep writes the same run files as its runs end, so `--resume` continues a
//! killed or interrupted sweep. `--robustness` (clap and forest; `sweep_plan::robust`)
//! runs the suite's headline figures over the plausible box of the unknown timing
//! parameters instead, through the same plan / task / merge / resume machinery.

use anyhow::Context;
use mcmvm_models::driver::PolicyKind;
use mcmvm_models::gpu::{sweep, GpuConfig};
use mcmvm_models::workload::Scale;
use std::path::{Path, PathBuf};

use super::sweep_forest::run_sensitivity;
use super::sweep_plan::Mode;

/// The CLAP sweep's default `--policies`, Figure 18's columns in order.
const DEFAULT_CLAP_POLICIES: &str = "s64k,s2m,olp,clap,ideal,s4k,s64k-coal";

/// The oversubscription curve of the default Forest sweep (issue #21: 110-200 %).
pub const CURVE_OVERSUBS: [f64; 5] = [1.1, 1.25, 1.5, 1.75, 2.0];

/// The Forest studies' default scale (the sweep's table and the sensitivity study), and the
/// sweep's curve's: a thrashing gather's far faults replay whole warp instructions on the
/// GPU timing model, so `hchi` at scale 1 takes ~8 minutes a run on this 2-core host
/// (tbnp; 25-45 s at 0.1, 17-33 s at 0.05). These keep the default sweep (`make run`)
/// within minutes; `make paper` runs the curve larger, sharded.
pub const FOREST_TIMING_SCALE: f64 = 0.05;
pub const TIMING_CURVE_SCALE: f64 = 0.02;

impl Args {
    /// `--scale`, else the suite's default.
    pub fn scale_spec(&self) -> Scale {
        self.scale.unwrap_or(Scale::Factor(if self.forest() {
            FOREST_TIMING_SCALE
        } else {
            1.0
        }))
    }

    /// The one multiplier of the Forest suite (its workloads have no paper class, so
    /// `paper` is 1 there), for the lines that print the Forest sweep's scale.
    pub fn scale(&self) -> f64 {
        self.scale_spec()
            .uniform(mcmvm_models::workload::forest_suite())
            .unwrap_or(1.0)
    }

    /// `--curve-scale`, else [`TIMING_CURVE_SCALE`].
    pub fn curve_scale(&self) -> f64 {
        self.curve_scale.unwrap_or(TIMING_CURVE_SCALE)
    }

    /// A Forest study (the sweep or its sensitivity study): both run on the GPU timing
    /// model of `--gpu-config`.
    fn forest(&self) -> bool {
        matches!(
            self.suite.as_deref(),
            Some("forest") | Some("forest-sensitivity")
        )
    }
}

#[derive(clap::Args)]
#[command(
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true,
    disable_help_subcommand = true
)]
pub struct Args {
    #[command(subcommand)]
    pub merge: Option<Merge>,
    /// Study: `clap` (MCM page placement), `forest` (UVM oversubscription) or
    /// `forest-sensitivity` (Forest's thresholds, one at a time).
    #[arg(long, required = true)]
    pub suite: Option<String>,
    /// Configuration (default: configs/mcm-4chiplet.toml for clap, configs/uvm-turing.toml
    /// for forest).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Workload size: a multiplier (1 = the quick default) or `paper`, each CLAP
    /// workload at the CLAP paper's input size class (docs/workloads.md; the Forest suite
    /// has no paper class and runs at 1). Default: 1 for clap, FOREST_TIMING_SCALE for
    /// forest and forest-sensitivity (see `Args::scale_spec`).
    #[arg(long)]
    pub scale: Option<Scale>,
    /// Seed of the workload generators.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Output directory (default: out/<suite>).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// clap: comma-separated policies (the first one that is s64k is the baseline), or
    /// `extended`: these and the other baselines (s128k, s256k, s512k, s1m, mgvm, cnuma).
    #[arg(long, default_value = DEFAULT_CLAP_POLICIES)]
    pub policies: String,
    /// clap, forest: only these workloads (comma-separated; default: the whole suite).
    #[arg(long)]
    pub workloads: Option<String>,
    /// forest: oversubscription ratios, comma-separated (default: the config's, then the
    /// oversubscription curve at --curve-scale).
    #[arg(long)]
    pub oversub: Option<String>,
    /// forest without --oversub: the scale of the oversubscription curve (110-200 %, every
    /// policy), run after the per-workload table; smaller than --scale to keep the default
    /// sweep quick.
    /// Default: TIMING_CURVE_SCALE.
    #[arg(long)]
    pub curve_scale: Option<f64>,
    /// forest: no oversubscription curve after the per-workload table.
    #[arg(long)]
    pub no_curve: bool,
    /// forest, forest-sensitivity: the GPU the runs are timed on (default:
    /// configs/gpu-turing.toml, the paper's one-chiplet Turing GPU, with 4 KB pages); the
    /// UVM parameters stay in --config.
    #[arg(long, value_name = "FILE")]
    pub gpu_config: Option<PathBuf>,
    /// clap: skip the extra runs after Table 4 (8 chiplets, PMM-threshold and MMA
    /// block-count sensitivity); Table 2 and the paper comparison still print.
    #[arg(long)]
    pub no_extras: bool,
    /// clap: the extra runs' workloads, comma-separated, or `all` (the sweep's); default:
    /// bfs, ste, paf and gemm-vit where the sweep runs them.
    #[arg(long, value_name = "LIST")]
    pub extras_workloads: Option<String>,
    /// clap: the extra runs' scale (default: --scale).
    #[arg(long, value_name = "S")]
    pub extras_scale: Option<f64>,
    #[command(flatten)]
    pub hw: super::common::HwArgs,
    /// clap, forest: write one shell command per run into FILE instead of running (GNU
    /// parallel, a Slurm array or HTCondor can run the lines), then `mcmvm sweep merge OUT`.
    #[arg(long, value_name = "FILE", conflicts_with = "task_id")]
    pub plan: Option<PathBuf>,
    /// clap, forest: run only job N (0-based) of the sweep's fixed job list, into
    /// OUT/runs/; a result already there is kept. Default: $SLURM_ARRAY_TASK_ID, if set.
    #[arg(long, value_name = "N")]
    pub task_id: Option<String>,
    /// clap, forest: keep the runs a killed or interrupted sweep with the same options
    /// already wrote into OUT/runs/ and run only the missing ones (without it, they are
    /// all run again).
    #[arg(long, conflicts_with = "plan")]
    pub resume: bool,
    /// clap, forest: instead of the study, its headline figures over the plausible box of
    /// the timing parameters neither paper gives (docs/calibration.md), each as config
    /// value [low, high] with the points that give them and a flag where the sign flips;
    /// planned and sharded like any sweep. Writes robustness.txt, .csv, .json.
    #[arg(long)]
    pub robustness: bool,
    /// --robustness: `corners` (the primary parameters at both ends; default) or N
    /// Latin-hypercube points over every parameter of the box (16 or more).
    #[arg(long, value_name = "N|corners")]
    pub points: Option<String>,
    /// --robustness --points N: the Latin hypercube's seed.
    #[arg(long, default_value_t = 38)]
    pub design_seed: u64,
}

#[derive(clap::Subcommand)]
pub enum Merge {
    /// Build a sweep's tables, CSVs and JSON from the runs `--task-id` wrote into DIR/runs.
    Merge(super::sweep_plan::MergeArgs),
}

pub fn run(args: Args) -> anyhow::Result<u8> {
    if let Some(Merge::Merge(m)) = args.merge {
        return super::sweep_plan::merge(m);
    }
    if args.hw.record_ports.is_some() {
        anyhow::bail!(
            "--record-ports goes with `mcmvm run` (a sweep's runs would write the same files)"
        );
    }
    let suite = args.suite.clone().unwrap_or_default();
    let split = matches!(suite.as_str(), "clap" | "forest");
    // A plan lists every job, even inside a Slurm array task.
    let task = if split && args.plan.is_none() {
        super::sweep_plan::task_id(args.task_id.as_deref())?
    } else {
        None
    };
    if !split && (args.plan.is_some() || args.task_id.is_some() || args.resume) {
        anyhow::bail!("--plan, --task-id and --resume go with --suite clap or forest");
    }
    if args.points.is_some() && !args.robustness {
        anyhow::bail!("--points goes with --robustness");
    }
    if args.robustness && !split {
        anyhow::bail!("--robustness goes with --suite clap or forest");
    }
    if !args.forest() && args.gpu_config.is_some() {
        anyhow::bail!("--gpu-config goes with --suite forest or forest-sensitivity");
    }
    match suite.as_str() {
        "clap" | "forest" => {
            let mode = match (task, &args.plan) {
                (Some(n), _) => Mode::Task(n),
                (None, Some(_)) => Mode::Plan,
                (None, None) => Mode::All {
                    resume: args.resume,
                },
            };
            super::sweep_plan::run(&args, &suite, mode)
        }
        "forest-sensitivity" => run_sensitivity(args),
        other => anyhow::bail!("unknown suite `{other}` (valid: clap, forest, forest-sensitivity)"),
    }
}

/// The one multiplier of the Forest suite's workloads (its sweeps record a single scale).
pub(super) fn forest_scale(scale: &Scale) -> anyhow::Result<f64> {
    scale
        .uniform(mcmvm_models::workload::forest_suite())
        .with_context(|| format!("--scale {scale}: the Forest workloads do not share one size"))
}

/// `--workloads`, checked against a suite (None: not given).
pub(super) fn workload_filter(args: &Args, suite: &[&str]) -> anyhow::Result<Option<Vec<String>>> {
    let Some(ws) = &args.workloads else {
        return Ok(None);
    };
    let keep: Vec<String> = ws.split(',').map(|w| w.trim().to_string()).collect();
    for k in &keep {
        if !suite.contains(&k.as_str()) {
            anyhow::bail!(
                "--workloads: `{k}` is not in the {} suite ({})",
                args.suite.as_deref().unwrap_or_default(),
                suite.join(", ")
            );
        }
    }
    Ok(Some(keep))
}

/// A CLAP sweep: its configuration and its fixed job list.
pub(super) struct ClapSweep {
    pub cfg: GpuConfig,
    pub config: PathBuf,
    pub policies: Vec<PolicyKind>,
    pub jobs: Vec<sweep::Job>,
    pub out: PathBuf,
}

pub(super) fn clap_sweep(args: &Args) -> anyhow::Result<ClapSweep> {
    let config = args
        .config
        .clone()
        .unwrap_or_else(|| PathBuf::from("configs/mcm-4chiplet.toml"));
    let mut cfg = super::configs::gpu(&config)?;
    cfg.engines = args.hw.hardware()?;
    let parse = |list: &str| -> Result<Vec<PolicyKind>, _> {
        list.split(',')
            .map(|p| p.trim().parse::<PolicyKind>())
            .collect()
    };
    let policies: Vec<PolicyKind> = if args.policies.trim() == "extended" {
        sweep::extended_policies(&parse(DEFAULT_CLAP_POLICIES)?)
    } else {
        parse(&args.policies)?
    };
    if !policies.contains(&PolicyKind::S64k) {
        anyhow::bail!("--policies must include s64k, the baseline of Figure 18");
    }
    let mut jobs = sweep::clap_jobs(&policies);
    if let Some(keep) = workload_filter(args, mcmvm_models::workload::clap_suite())? {
        jobs.retain(|j| keep.contains(&j.workload));
    }
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from("out/clap"));
    Ok(ClapSweep {
        cfg,
        config,
        policies,
        jobs,
        out,
    })
}

/// Figure 18, Table 4 and the mean speed on the terminal; `clap.csv`,
/// `clap_structures.csv` and `clap.json` (from each run's pretty JSON) in `dir`. The
/// in-process sweep and `mcmvm sweep merge` both end here.
pub(super) fn clap_outputs(
    dir: &Path,
    runs: &[sweep::RunSummary],
    reports: &[String],
    seed: u64,
) -> anyhow::Result<()> {
    print!("{}", sweep::figure18_of(runs));
    println!();
    print!("{}", sweep::table4_of(runs));
    let speed: f64 = runs.iter().map(|r| r.speed).sum::<f64>() / runs.len().max(1) as f64;
    println!("mean speed: {speed:.0} warp mem-instr/s per run (seed {seed})");
    std::fs::create_dir_all(dir).with_context(|| format!("{}: cannot create", dir.display()))?;
    let write = |name: &str, text: String| {
        let p = dir.join(name);
        std::fs::write(&p, text).with_context(|| format!("{}: cannot write", p.display()))
    };
    write("clap.csv", sweep::csv_of(runs))?;
    write("clap_structures.csv", sweep::alloc_csv_of(runs))?;
    write("clap.json", sweep::runs_json(reports))?;
    println!(
        "wrote {}/clap.csv, clap_structures.csv, clap.json",
        dir.display()
    );
    super::sweep_extras::table2(dir, runs)?;
    sweep_figures(dir, "clap")
}

/// The suite's SVG figures beside its CSV in `dir` (the same as `mcmvm report` draws).
pub(super) fn sweep_figures(dir: &Path, suite: &str) -> anyhow::Result<()> {
    let dir = if dir.is_absolute() {
        dir.to_path_buf()
    } else {
        std::env::current_dir()?.join(dir)
    };
    let (Some(root), Some(sub)) = (dir.parent(), dir.file_name().and_then(|s| s.to_str())) else {
        return Ok(());
    };
    let mut done = mcmvm_report::Outcome::default();
    let section = match suite {
        "clap" => mcmvm_report::clap::section_in(root, sub, &mut done)?,
        _ => mcmvm_report::forest::section_in(root, sub, &mut done)?,
    };
    for n in &section.notes {
        println!("note: {n}");
    }
    for f in &done.written {
        println!("wrote {}", f.display());
    }
    Ok(())
}
