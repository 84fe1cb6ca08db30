//! `mcmvm sweep --suite clap|forest`: a whole study in parallel.
//!
//! `clap`: every workload of the CLAP suite × every policy (rayon over the cores, an
//! indicatif progress bar), then Figure 18 (speed-up over s64k, remote ratio, geometric
//! means; CLAP against s64k and s2m) and Table 4 (page size per structure), with CSV and
//! JSON written to `--out`. `forest`: the UVM study, run by `mcmvm_models::uvm`.

use anyhow::Context;
use indicatif::{ProgressBar, ProgressStyle};
use mcmvm_models::driver::PolicyKind;
use mcmvm_models::gpu::{sweep, RunReport};
use rayon::prelude::*;
use std::path::{Path, PathBuf};

#[derive(clap::Args)]
pub struct Args {
    /// Study: `clap` (MCM page placement), `forest` (UVM oversubscription) or
    /// `forest-sensitivity` (Forest's thresholds, one at a time).
    #[arg(long)]
    pub suite: String,
    /// Configuration (default: configs/mcm-4chiplet.toml for clap, configs/uvm-turing.toml
    /// for forest).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Workload size multiplier.
    #[arg(long, default_value_t = 1.0)]
    pub scale: f64,
    /// Seed of the workload generators.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Output directory (default: out/<suite>).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// clap: comma-separated policies (the first one that is s64k is the baseline).
    #[arg(long, default_value = "s64k,s2m,olp,clap,ideal,s4k")]
    pub policies: String,
    /// clap: only these workloads (comma-separated; default: the whole suite).
    #[arg(long)]
    pub workloads: Option<String>,
    /// forest: oversubscription ratios, comma-separated (default: the config's).
    #[arg(long)]
    pub oversub: Option<String>,
    #[command(flatten)]
    pub hw: super::common::HwArgs,
}

pub fn run(args: Args) -> anyhow::Result<u8> {
    if args.hw.record_ports.is_some() {
        anyhow::bail!(
            "--record-ports goes with `mcmvm run` (a sweep's runs would write the same files)"
        );
    }
    match args.suite.as_str() {
        "clap" => run_clap(args),
        "forest" => run_forest(args),
        "forest-sensitivity" => run_sensitivity(args),
        other => anyhow::bail!("unknown suite `{other}` (valid: clap, forest, forest-sensitivity)"),
    }
}

fn run_clap(args: Args) -> anyhow::Result<u8> {
    let config = args
        .config
        .clone()
        .unwrap_or_else(|| PathBuf::from("configs/mcm-4chiplet.toml"));
    let mut cfg = super::configs::gpu(&config)?;
    cfg.engines = args.hw.hardware(&cfg.hw)?;
    let policies: Vec<PolicyKind> = args
        .policies
        .split(',')
        .map(|p| p.trim().parse::<PolicyKind>())
        .collect::<Result<_, _>>()?;
    if !policies.contains(&PolicyKind::S64k) {
        anyhow::bail!("--policies must include s64k, the baseline of Figure 18");
    }
    let mut jobs = sweep::clap_jobs(&policies);
    if let Some(ws) = &args.workloads {
        let keep: Vec<&str> = ws.split(',').map(str::trim).collect();
        for k in &keep {
            if !mcmvm_models::workload::clap_suite().iter().any(|s| s == k) {
                anyhow::bail!(
                    "--workloads: `{k}` is not in the clap suite ({})",
                    mcmvm_models::workload::clap_suite().join(", ")
                );
            }
        }
        jobs.retain(|j| keep.contains(&j.workload.as_str()));
    }
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from("out/clap"));
    println!(
        "sweep clap: {} runs ({} workloads x {} policies), scale {}, seed {}, config {}, {} threads",
        jobs.len(),
        jobs.len() / policies.len().max(1),
        policies.len(),
        args.scale,
        args.seed,
        config.display(),
        rayon::current_num_threads()
    );
    let bar = ProgressBar::new(jobs.len() as u64);
    bar.set_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} runs {elapsed_precise} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let results: Vec<(sweep::Job, Result<RunReport, String>)> = jobs
        .par_iter()
        .map(|job| {
            let r = sweep::run_job(&cfg, job, args.scale, args.seed).map_err(|e| e.to_string());
            bar.set_message(format!("{} {}", job.workload, job.policy));
            bar.inc(1);
            (job.clone(), r)
        })
        .collect();
    bar.finish_and_clear();
    let mut runs = Vec::new();
    let mut failed = 0;
    for (job, r) in results {
        match r {
            Ok(rep) => runs.push(rep),
            Err(e) => {
                failed += 1;
                eprintln!("run {} {} failed: {e}", job.workload, job.policy);
            }
        }
    }
    print!("{}", sweep::figure18(&runs));
    println!();
    print!("{}", sweep::table4(&runs));
    let speed: f64 = runs.iter().map(|r| r.speed).sum::<f64>() / runs.len().max(1) as f64;
    println!(
        "mean speed: {speed:.0} warp mem-instr/s per run (seed {})",
        args.seed
    );
    write_outputs(&out, &runs)?;
    println!(
        "wrote {}/clap.csv, clap_structures.csv, clap.json",
        out.display()
    );
    Ok(if failed > 0 { 1 } else { 0 })
}

fn write_outputs(dir: &Path, runs: &[RunReport]) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("{}: cannot create", dir.display()))?;
    let write = |name: &str, text: String| {
        let p = dir.join(name);
        std::fs::write(&p, text).with_context(|| format!("{}: cannot write", p.display()))
    };
    write("clap.csv", sweep::csv(runs))?;
    write("clap_structures.csv", sweep::alloc_csv(runs))?;
    write("clap.json", serde_json::to_string_pretty(runs)?)?;
    Ok(())
}

fn run_forest(args: Args) -> anyhow::Result<u8> {
    use mcmvm_models::uvm::{sweep_forest, SweepOptions};
    let config = args
        .config
        .clone()
        .unwrap_or_else(|| PathBuf::from("configs/uvm-turing.toml"));
    let mut cfg = super::configs::uvm(&config, &[])?;
    let mut hw = mcmvm_models::config::HwConfig::default();
    hw.access_time_tracker = cfg.att.clone();
    cfg.engines = args.hw.hardware(&hw)?;
    let mut opts = SweepOptions::new(cfg);
    opts.scale = args.scale;
    opts.seed = args.seed;
    opts.out_dir = Some(
        args.out
            .clone()
            .unwrap_or_else(|| PathBuf::from("out/forest")),
    );
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
    println!(
        "sweep forest: scale {}, seed {}, config {}",
        args.scale,
        args.seed,
        config.display()
    );
    let report = sweep_forest(&opts)?;
    print!("{}", report.table());
    // sweep_forest writes its CSV and JSON into out_dir itself.
    if let Some(dir) = &opts.out_dir {
        println!("wrote {}", dir.display());
    }
    Ok(0)
}

fn run_sensitivity(args: Args) -> anyhow::Result<u8> {
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
    println!(
        "sweep forest-sensitivity: {} thresholds, scale {}, seed {}, config {}",
        mcmvm_models::uvm::sensitivity::KNOBS.len(),
        args.scale,
        args.seed,
        config.display()
    );
    let t0 = std::time::Instant::now();
    let report =
        mcmvm_models::uvm::sensitivity(&config, &overrides, &workloads, args.scale, args.seed)?;
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
