//! `mcmvm calibrate`: fit the timing model's unknowns (`mcmvm_models::calibrate::params`)
//! to the CLAP paper's baseline figures (`calibrate::targets`) over a grid or a Latin
//! hypercube, every run in parallel with a progress bar; print every point and the best,
//! write CSV and JSON, and with `--write` put the best values into the config file.
//! docs/calibration.md has the split (fitted / predicted) and the last fit.

use anyhow::Context;
use mcmvm_models::calibrate::design::{self, Design};
use mcmvm_models::calibrate::fit::{self, Plan};
use mcmvm_models::calibrate::params::PARAMS;
use mcmvm_models::calibrate::{report, rewrite, targets};
use mcmvm_models::workload::Scale;
use rayon::prelude::*;
use std::path::{Path, PathBuf};

#[derive(clap::Args)]
pub struct Args {
    /// GPU configuration to calibrate (TOML or a built-in name; --write needs a file).
    #[arg(long, default_value = "configs/mcm-4chiplet.toml")]
    pub config: PathBuf,
    /// Workload size of the calibration runs: a multiplier, or `paper` (each workload at
    /// the CLAP paper's input size class; hours on a small machine).
    #[arg(long, default_value = "0.25")]
    pub scale: Scale,
    /// A Latin hypercube of N points over every parameter (instead of --grid).
    #[arg(long, value_name = "N", conflicts_with = "grid")]
    pub points: Option<usize>,
    /// Two-level factorial: `small` (the primary parameters) or `full` (every parameter).
    #[arg(long, value_parser = ["small", "full"])]
    pub grid: Option<String>,
    /// Seed of the Latin hypercube (printed).
    #[arg(long, default_value_t = 38)]
    pub design_seed: u64,
    /// Seed of the workload generators.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Only these workloads (comma-separated; default: the CLAP suite).
    #[arg(long)]
    pub workloads: Option<String>,
    /// Directory for calibrate.csv and calibrate.json.
    #[arg(long, default_value = "out/calibrate")]
    pub out: PathBuf,
    /// Write the best point's values into --config, with provenance comments.
    #[arg(long)]
    pub write: bool,
    /// Instead of fitting: `mcmvm sweep --suite clap --robustness` with these options
    /// (`--grid small`: its corners; `--points N`: its Latin hypercube) into --out: CLAP's
    /// headline figures over the box as config value [low, high] (predictions, never fitted).
    #[arg(long, conflicts_with = "write")]
    pub robustness: bool,
}

impl Args {
    fn design(&self) -> Design {
        match (self.points, self.grid.as_deref()) {
            (Some(points), _) => Design::Latin {
                points,
                seed: self.design_seed,
            },
            (None, Some("full")) => Design::Full,
            _ => Design::Small,
        }
    }

    fn workloads(&self) -> anyhow::Result<Vec<String>> {
        let suite = mcmvm_models::workload::clap_suite();
        let Some(list) = &self.workloads else {
            return Ok(suite.iter().map(|w| w.to_string()).collect());
        };
        list.split(',')
            .map(|w| {
                let w = w.trim();
                anyhow::ensure!(
                    suite.contains(&w),
                    "--workloads: `{w}` is not a CLAP workload (valid: {})",
                    suite.join(", ")
                );
                Ok(w.to_string())
            })
            .collect()
    }
}

pub fn run(args: Args) -> anyhow::Result<u8> {
    if args.robustness {
        return robustness(&args);
    }
    // Before an hour of runs, not after.
    anyhow::ensure!(
        !args.write || args.config.is_file(),
        "--write: {} is not a file (a built-in config cannot be rewritten; copy it with \
         `mcmvm config show` first)",
        args.config.display()
    );
    let (text, config) = super::configs::text(&args.config)?;
    let design = args.design();
    let points = design::points(design, &PARAMS)?;
    let plan = Plan::new(
        &config,
        &text,
        &PARAMS,
        &targets::TARGETS,
        points,
        args.workloads()?,
        args.scale,
        args.seed,
    )?;
    let runs = run_jobs(&plan, design)?;
    let by_point: Vec<_> = runs.iter().map(|(j, r)| (j.point, r.clone())).collect();
    let results = plan.evaluate(&by_point);
    print!("{}", report::text(&plan, &results)?);
    write_outputs(&args.out, &plan, design, &results, &runs)?;
    let best = fit::best(&results).context("no point has a residual (a run is missing)")?;
    if args.write {
        write_config(&args.config, &text, &plan, best)?;
    }
    Ok(0)
}

/// Print what the calibration runs, then run every job in parallel with a progress bar.
fn run_jobs(
    plan: &Plan,
    design: Design,
) -> anyhow::Result<Vec<(fit::PlanJob, mcmvm_models::gpu::sweep::RunSummary)>> {
    let jobs = plan.jobs();
    println!(
        "config: {}  design: {}  points: {}  workloads: {}  policies: {}  scale: {}  seed: {}  runs: {}",
        plan.config.display(),
        match design {
            Design::Small => "grid small".to_string(),
            Design::Full => "grid full".to_string(),
            Design::Latin { points, seed } => format!("latin hypercube {points}, design seed {seed}"),
        },
        plan.points.len(),
        plan.workloads.len(),
        plan.policies
            .iter()
            .map(|p| p.name())
            .collect::<Vec<_>>()
            .join(","),
        plan.scale,
        plan.seed,
        jobs.len()
    );
    let bar = super::progress::bar(jobs.len() as u64, "runs");
    let runs: Result<Vec<_>, _> = jobs
        .par_iter()
        .map(|j| {
            let r = plan.run(j).with_context(|| {
                format!(
                    "point {} ({} {})",
                    plan.points[j.point].label, j.job.workload, j.job.policy
                )
            });
            bar.inc(1);
            r.map(|r| (j.clone(), r))
        })
        .collect();
    bar.finish_and_clear();
    runs
}

fn write_outputs(
    out: &Path,
    plan: &Plan,
    design: Design,
    results: &[fit::PointResult],
    runs: &[(fit::PlanJob, mcmvm_models::gpu::sweep::RunSummary)],
) -> anyhow::Result<()> {
    std::fs::create_dir_all(out).with_context(|| format!("{}: cannot create", out.display()))?;
    for (name, body) in [
        ("calibrate.csv", report::csv(plan, results)?),
        ("calibrate.json", report::json(plan, design, results, runs)?),
    ] {
        let path = out.join(name);
        std::fs::write(&path, body).with_context(|| format!("{}: cannot write", path.display()))?;
        println!("wrote {}", path.display());
    }
    Ok(())
}

/// Rewrite the fitted keys of `--config` in place (`run` checked it is a file).
fn write_config(
    path: &Path,
    text: &str,
    plan: &Plan,
    best: &fit::PointResult,
) -> anyhow::Result<()> {
    let cfg = plan.point_config(&plan.points[best.point])?;
    let values = fit::current_values(&cfg, &plan.params);
    // The fitted keys are those the design varied, whichever point won (point 0 sets none).
    let fitted: Vec<_> = (0..plan.params.len())
        .filter(|&i| plan.points.iter().any(|p| p.value(i).is_some()))
        .filter_map(|i| Some((plan.params[i], values[i]?)))
        .collect();
    let ids: Vec<&str> = plan.targets.iter().map(|t| t.id).collect();
    let on = format!(
        "{} at scale {} (residual {:.5}, docs/calibration.md)",
        ids.join(" + "),
        plan.scale,
        best.residual.unwrap_or(f64::NAN)
    );
    let new = rewrite::rewrite(text, path, &fitted, &on)?;
    rewrite::write_atomic(path, &new)
        .with_context(|| format!("{}: cannot write", path.display()))?;
    println!("wrote {} fitted keys into {}", fitted.len(), path.display());
    Ok(())
}

/// `--robustness`: the same as `mcmvm sweep --suite clap --robustness` with this command's
/// config, scale, seeds, workloads and design (one implementation: the sweep's).
fn robustness(args: &Args) -> anyhow::Result<u8> {
    #[derive(clap::Parser)]
    struct Sweep {
        #[command(flatten)]
        args: super::sweep::Args,
    }
    let points = match (args.points, args.grid.as_deref()) {
        (Some(n), _) => n.to_string(),
        (None, Some("full")) => {
            anyhow::bail!("--robustness --grid full: use --points N (a Latin hypercube)")
        }
        _ => "corners".to_string(),
    };
    let mut words: Vec<String> = ["mcmvm", "--suite", "clap", "--robustness", "--points"]
        .map(String::from)
        .to_vec();
    words.push(points);
    for (flag, value) in [
        ("--config", args.config.display().to_string()),
        ("--scale", args.scale.to_string()),
        ("--seed", args.seed.to_string()),
        ("--design-seed", args.design_seed.to_string()),
        ("--out", args.out.display().to_string()),
    ] {
        words.extend([flag.to_string(), value]);
    }
    if let Some(w) = &args.workloads {
        words.extend(["--workloads".to_string(), w.clone()]);
    }
    let sweep = <Sweep as clap::Parser>::try_parse_from(words)?;
    super::sweep::run(sweep.args)
}
