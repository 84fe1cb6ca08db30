//! `mcmvm sweep --suite forest|forest-sensitivity`: the UVM study's options, its fixed job
//! list and the oversubscription curve (run by `mcmvm_models::uvm` on the GPU timing model
//! of `--gpu-config`); the per-workload table's runs go through `sweep_plan` (run files,
//! `--resume`), beside the CLAP sweep.

use super::sweep::{forest_scale, sweep_figures, workload_filter, Args, CURVE_OVERSUBS};
use anyhow::Context;
use mcmvm_models::uvm::sweep::{curve_table, forest_jobs, paper_table, ForestJob};
use mcmvm_models::uvm::{sweep_forest, SweepOptions, UvmGpu};
use std::path::{Path, PathBuf};

/// A Forest sweep: its options and its fixed job list.
pub(super) struct ForestSweep {
    pub opts: SweepOptions,
    pub config: PathBuf,
    /// The GPU the runs are timed on.
    pub gpu_config: PathBuf,
    pub jobs: Vec<ForestJob>,
    pub out: PathBuf,
}

pub(super) fn forest_sweep(args: &Args) -> anyhow::Result<ForestSweep> {
    let config = args
        .config
        .clone()
        .unwrap_or_else(|| PathBuf::from("configs/uvm-turing.toml"));
    let mut cfg = super::configs::uvm(&config, &[])?;
    cfg.engines = args.hw.hardware()?;
    let gpu_config = forest_gpu_config(args);
    let mut opts = SweepOptions::new(cfg, uvm_gpu(&gpu_config)?);
    opts.scale = forest_scale(&args.scale_spec())?;
    opts.seed = args.seed;
    if let Some(keep) = workload_filter(args, mcmvm_models::workload::forest_suite())? {
        opts.workloads.retain(|w| keep.contains(w));
    }
    if let Some(list) = &args.oversub {
        opts.oversubs = list
            .split(',')
            .map(|s| {
                s.trim()
                    .parse::<f64>()
                    .with_context(|| format!("--oversub: `{s}` is not a number"))
            })
            .collect::<Result<_, _>>()?;
    }
    let jobs = forest_jobs(&opts)?;
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from("out/forest"));
    Ok(ForestSweep {
        opts,
        config,
        gpu_config,
        jobs,
        out,
    })
}

/// `--gpu-config`, default the paper's GPU.
fn forest_gpu_config(args: &Args) -> PathBuf {
    args.gpu_config
        .clone()
        .unwrap_or_else(|| PathBuf::from("configs/gpu-turing.toml"))
}

/// The GPU of `path` with 4 KB pages, the GPU every UVM run of the CLI is timed on
/// (`mcmvm sweep`, `hil`, `soak`, `cosim --mutants`, `run --uvm` without `--policy`).
pub(super) fn uvm_gpu(path: &Path) -> anyhow::Result<UvmGpu> {
    Ok(UvmGpu::new(super::configs::gpu(path)?))
}

/// The line that opens a Forest sweep.
pub(super) fn banner(args: &Args, s: &ForestSweep) {
    let opts = &s.opts;
    println!(
        "sweep forest on the GPU timing model ({}, {}): scale {}, seed {}, config {}, policies {}",
        s.gpu_config.display(),
        opts.gpu.placement,
        args.scale(),
        args.seed,
        s.config.display(),
        mcmvm_models::uvm::sweep::POLICIES
            .map(|p| p.name())
            .join(", ")
    );
}

/// The default sweep's oversubscription curve: every policy at [`CURVE_OVERSUBS`] on the
/// same workloads at `--curve-scale`, into OUT/curve/.
pub(super) fn forest_curve(args: &Args, main: &SweepOptions) -> anyhow::Result<()> {
    let mut opts = main.clone();
    opts.oversubs = CURVE_OVERSUBS.to_vec();
    opts.scale = args.curve_scale();
    opts.out_dir = main.out_dir.as_ref().map(|d| d.join("curve"));
    println!();
    println!(
        "oversubscription curve at scale {} (the table above runs at scale {}; the curve runs \
         smaller to keep the default sweep quick, --curve-scale sets it): geometric mean \
         speed-up over tbnp of {} workloads",
        opts.scale,
        main.scale,
        opts.workloads.len()
    );
    let n = opts.workloads.len() * opts.oversubs.len() * mcmvm_models::uvm::sweep::POLICIES.len();
    let bar = super::progress::bar(n as u64, "runs");
    opts.progress = forest_progress(&bar);
    let t0 = std::time::Instant::now();
    let report = sweep_forest(&opts);
    bar.finish_and_clear();
    let report = report?;
    print!(
        "{}{}",
        curve_table(&report.summaries),
        paper_table(&report.summaries, &report.rows)
    );
    println!("({:.0} s)", t0.elapsed().as_secs_f64());
    if let Some(dir) = &opts.out_dir {
        println!("wrote {}", dir.display());
        sweep_figures(dir, "forest")?;
    }
    Ok(())
}

/// Each finished run advances `bar`; when stderr is no terminal (a log, `make run` piped)
/// and not `--quiet`, a line per run on stderr instead, so a long sweep shows progress.
pub(super) fn forest_progress(bar: &indicatif::ProgressBar) -> mcmvm_models::uvm::sweep::Progress {
    let (tick, lines) = (bar.clone(), bar.is_hidden() && !super::progress::quiet());
    let total = bar.length().unwrap_or(0);
    let done = std::sync::atomic::AtomicU64::new(0);
    mcmvm_models::uvm::sweep::Progress(Some(std::sync::Arc::new(move |job, secs| {
        tick.inc(1);
        let what = format!(
            "{} {} at {}",
            job.workload,
            job.policy.name(),
            job.oversubscription
        );
        tick.set_message(what.clone());
        if lines {
            let n = done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
            eprintln!("forest run {n}/{total}: {what} ({secs:.1} s)");
        }
    })))
}

pub(super) fn run_sensitivity(args: Args) -> anyhow::Result<u8> {
    let config = args
        .config
        .clone()
        .unwrap_or_else(|| PathBuf::from("configs/uvm-turing.toml"));
    let mut overrides = Vec::new();
    if let Some(list) = &args.oversub {
        let o: f64 = list
            .trim()
            .parse()
            .with_context(|| format!("--oversub: `{list}` is not one number"))?;
        overrides.push(format!("memory.oversubscription={o}"));
    }
    let workloads: Vec<String> = mcmvm_models::workload::forest_suite()
        .iter()
        .map(|s| s.to_string())
        .collect();
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from("out/forest-sensitivity"));
    let gpu_config = forest_gpu_config(&args);
    let gpu = uvm_gpu(&gpu_config)?;
    println!(
        "sweep forest-sensitivity on the GPU timing model ({}, {}): {} thresholds, scale {}, seed {}, config {}",
        gpu_config.display(),
        gpu.placement,
        mcmvm_models::uvm::sensitivity::KNOBS.len(),
        args.scale(),
        args.seed,
        config.display()
    );
    let t0 = std::time::Instant::now();
    let scale = forest_scale(&args.scale_spec())?;
    let report =
        mcmvm_models::uvm::sensitivity(&gpu, &config, &overrides, &workloads, scale, args.seed)?;
    println!(
        "Forest speed-up over TBNp at oversubscription {} (one threshold changed at a time):",
        report.oversubscription
    );
    print!("{}", report.table());
    report.write(&out)?;
    println!(
        "wrote {}/sensitivity.csv, sensitivity.json ({:.0} s)",
        out.display(),
        t0.elapsed().as_secs_f64()
    );
    Ok(0)
}
