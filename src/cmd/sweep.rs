//! `mcmvm sweep --suite clap|forest|forest-sensitivity`: a whole study in parallel. This
//! file parses the flags into a `mcmvm_study::sweep::Request` and hands it to the study
//! library (`study/`), which runs the jobs, prints the tables and writes the files.
//!
//! `clap`: every workload of the CLAP suite × every policy, then Figure 18, Table 4,
//! Table 2, the extra runs and the paper's figures beside ours. `forest`: the UVM study on
//! the GPU timing model, then its oversubscription curve. Beyond one machine (clap and
//! forest): `--plan FILE` writes one shell command per run, `--task-id N` runs one job of
//! the fixed job list into `OUT/runs/`, `mcmvm sweep merge OUT` builds the same tables and
//! files from those runs, and `--resume` continues a killed or interrupted sweep.
//! `--robustness` runs the suite's headline figures over the plausible box of the unknown
//! timing parameters instead, through the same machinery.

use super::study::{CliInputs, Terminal};
use anyhow::Context;
use mcmvm_models::uvm::UvmGpu;
use mcmvm_models::workload::Scale;
use mcmvm_study::forest::SensitivityRequest;
use mcmvm_study::sweep::{
    self as study, ExtrasOptions, Mode, Request, Robustness, Suite, DEFAULT_CLAP_POLICIES,
    FOREST_TIMING_SCALE, TIMING_CURVE_SCALE,
};
use std::path::{Path, PathBuf};

impl Args {
    /// `--scale`, else the suite's default.
    pub fn scale_spec(&self) -> Scale {
        self.scale.unwrap_or(Scale::Factor(if self.forest() {
            FOREST_TIMING_SCALE
        } else {
            1.0
        }))
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
    Merge(MergeArgs),
}

#[derive(clap::Args)]
pub struct MergeArgs {
    /// The sweep's output directory (`--out` of its runs); the run files are in DIR/runs.
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
    /// clap or forest (default: the one suite DIR/runs holds).
    #[arg(long)]
    pub suite: Option<String>,
    /// Where the tables go (default: DIR).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

pub fn run(args: Args) -> anyhow::Result<u8> {
    if let Some(Merge::Merge(m)) = args.merge {
        let (suite, out) = (m.suite.as_deref(), m.out.as_deref());
        mcmvm_study::merge::merge(&m.dir, suite, out, &Terminal)?;
        return Ok(0);
    }
    check_flags(&args)?;
    let inputs = CliInputs { hw: Some(&args.hw) };
    let suite = match args.suite.as_deref().unwrap_or_default() {
        "clap" => Suite::Clap,
        "forest" => Suite::Forest,
        "forest-sensitivity" => {
            mcmvm_study::forest::sensitivity(&sensitivity_request(&args), &inputs, &Terminal)?;
            return Ok(0);
        }
        other => anyhow::bail!("unknown suite `{other}` (valid: clap, forest, forest-sensitivity)"),
    };
    let req = request(&args, suite)?;
    let failed = study::run(&req, &inputs, &Terminal)?;
    Ok(if failed > 0 { 1 } else { 0 })
}

/// The flags that go only with some suites or with each other.
fn check_flags(args: &Args) -> anyhow::Result<()> {
    if args.hw.record_ports.is_some() {
        anyhow::bail!(
            "--record-ports goes with `mcmvm run` (a sweep's runs would write the same files)"
        );
    }
    let split = matches!(args.suite.as_deref(), Some("clap" | "forest"));
    // A bad task number first (`mode` takes it); a plan lists every job, even inside a
    // Slurm array task.
    if split && args.plan.is_none() {
        mcmvm_study::plan::task_id(args.task_id.as_deref())?;
    }
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
    Ok(())
}

/// What to do with the job list: `--task-id` (or a Slurm array's task), `--plan`, or all.
fn mode(args: &Args) -> anyhow::Result<Mode> {
    if let Some(file) = &args.plan {
        let exe = std::env::current_exe().context("the mcmvm binary's path")?;
        return Ok(Mode::Plan {
            file: file.clone(),
            exe,
        });
    }
    Ok(match mcmvm_study::plan::task_id(args.task_id.as_deref())? {
        Some(n) => Mode::Task(n),
        None => Mode::All {
            resume: args.resume,
        },
    })
}

/// The `--hw` words every job of a plan repeats.
fn hw_words(args: &Args) -> anyhow::Result<Vec<String>> {
    let hw = &args.hw;
    let mut words = vec!["--hw".to_string(), hw.hw.clone()];
    if hw.hw_every_cycle {
        words.push("--hw-every-cycle".into());
    }
    if hw.hw_unpredicted {
        words.push("--hw-unpredicted".into());
    }
    if hw.hw == "check" {
        let dir = &hw.hw_check_dir;
        let dir = std::path::absolute(dir)
            .with_context(|| format!("{}: no absolute path", dir.display()))?;
        words.extend(["--hw-check-dir".to_string(), dir.display().to_string()]);
    }
    Ok(words)
}

/// The sweep's request from its flags.
fn request(args: &Args, suite: Suite) -> anyhow::Result<Request> {
    let curve = args.oversub.is_none() && !args.no_curve;
    Ok(Request {
        suite,
        mode: mode(args)?,
        config: args.config.clone(),
        gpu_config: args.gpu_config.clone(),
        scale: args.scale_spec(),
        seed: args.seed,
        out: args.out.clone(),
        policies: args.policies.clone(),
        workloads: args.workloads.clone(),
        oversub: args.oversub.clone(),
        curve_scale: curve.then(|| args.curve_scale.unwrap_or(TIMING_CURVE_SCALE)),
        extras: (!args.no_extras).then(|| ExtrasOptions {
            workloads: args.extras_workloads.clone(),
            scale: args.extras_scale,
        }),
        hw_words: hw_words(args)?,
        robustness: args.robustness.then(|| Robustness {
            points: args.points.clone(),
            design_seed: args.design_seed,
        }),
    })
}

fn sensitivity_request(args: &Args) -> SensitivityRequest {
    SensitivityRequest {
        config: args.config.clone(),
        gpu_config: args.gpu_config.clone(),
        oversub: args.oversub.clone(),
        out: args.out.clone(),
        scale: args.scale_spec(),
        seed: args.seed,
    }
}

/// The GPU of `path` with 4 KB pages, the GPU every UVM run of the CLI is timed on
/// (`mcmvm sweep`, `hil`, `soak`, `cosim --mutants`, `run --uvm` without `--policy`).
pub fn uvm_gpu(path: &Path) -> anyhow::Result<UvmGpu> {
    Ok(UvmGpu::new(super::configs::gpu(path)?))
}
