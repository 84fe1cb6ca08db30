//! `mcmvm calibrate`'s runner: fit the timing model's unknowns
//! (`mcmvm_models::calibrate::params`) to the CLAP paper's baseline figures
//! (`calibrate::targets`) over a design, every run in parallel with a progress bar; print
//! every point and the best, write CSV and JSON, and with `write` put the best values into
//! the config file. docs/calibration.md has the split (fitted / predicted) and the last fit.

use crate::{write_in, Console, Inputs, StudyError};
use mcmvm_models::calibrate::design::{self, Design};
use mcmvm_models::calibrate::fit::{self, Plan};
use mcmvm_models::calibrate::params::PARAMS;
use mcmvm_models::calibrate::{report, rewrite, targets};
use mcmvm_models::gpu::sweep::RunSummary;
use mcmvm_models::workload::Scale;
use rayon::prelude::*;
use std::path::{Path, PathBuf};

/// A calibration's options.
#[derive(Debug, Clone)]
pub struct Request {
    /// The GPU configuration (a file or a built-in's name; `write` needs a file).
    pub config: PathBuf,
    pub scale: Scale,
    pub design: Design,
    pub seed: u64,
    /// The CLAP workloads to run.
    pub workloads: Vec<String>,
    /// Where calibrate.csv and calibrate.json go.
    pub out: PathBuf,
    /// Write the best point's values into `config`, with provenance comments.
    pub write: bool,
}

/// Run the calibration of `req`.
pub fn run(req: &Request, inputs: &dyn Inputs, console: &dyn Console) -> Result<(), StudyError> {
    let (text, config) = inputs.config_text(&req.config)?;
    let points = design::points(req.design, &PARAMS)?;
    let plan = Plan::new(
        &config,
        &text,
        &PARAMS,
        &targets::TARGETS,
        points,
        req.workloads.clone(),
        req.scale,
        req.seed,
    )?;
    let runs = run_jobs(&plan, req.design, console)?;
    let by_point: Vec<_> = runs.iter().map(|(j, r)| (j.point, r.clone())).collect();
    let results = plan.evaluate(&by_point);
    console.out(&report::text(&plan, &results)?);
    for (name, body) in [
        ("calibrate.csv", report::csv(&plan, &results)?),
        (
            "calibrate.json",
            report::json(&plan, req.design, &results, &runs)?,
        ),
    ] {
        write_in(&req.out, name, &body)?;
        console.line(&format!("wrote {}", req.out.join(name).display()));
    }
    let best = fit::best(&results).ok_or(StudyError::NoResidual)?;
    if req.write {
        write_config(&req.config, &text, &plan, best, console)?;
    }
    Ok(())
}

/// The design as the opening line names it.
fn design_text(design: Design) -> String {
    match design {
        Design::Small => "grid small".to_string(),
        Design::Full => "grid full".to_string(),
        Design::Latin { points, seed } => format!("latin hypercube {points}, design seed {seed}"),
    }
}

/// Print what the calibration runs, then run every job in parallel with a progress bar.
fn run_jobs(
    plan: &Plan,
    design: Design,
    console: &dyn Console,
) -> Result<Vec<(fit::PlanJob, RunSummary)>, StudyError> {
    let jobs = plan.jobs();
    let policies: Vec<&str> = plan.policies.iter().map(|p| p.name()).collect();
    console.line(&format!(
        "config: {}  design: {}  points: {}  workloads: {}  policies: {}  scale: {}  seed: {}  runs: {}",
        plan.config.display(),
        design_text(design),
        plan.points.len(),
        plan.workloads.len(),
        policies.join(","),
        plan.scale,
        plan.seed,
        jobs.len()
    ));
    let bar = console.bar(jobs.len() as u64, "runs");
    let runs: Result<Vec<_>, _> = jobs
        .par_iter()
        .map(|j| {
            let r = plan.run(j).map_err(|source| StudyError::CalibrationRun {
                label: plan.points[j.point].label.clone(),
                workload: j.job.workload.clone(),
                policy: j.job.policy.to_string(),
                source: Box::new(source),
            });
            bar.inc();
            r.map(|r| (j.clone(), r))
        })
        .collect();
    bar.finish();
    runs
}

/// Rewrite the fitted keys of `path` in place (the caller checked it is a file).
fn write_config(
    path: &Path,
    text: &str,
    plan: &Plan,
    best: &fit::PointResult,
    console: &dyn Console,
) -> Result<(), StudyError> {
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
    rewrite::write_atomic(path, &new).map_err(|source| StudyError::Write {
        path: path.to_path_buf(),
        source,
    })?;
    console.line(&format!(
        "wrote {} fitted keys into {}",
        fitted.len(),
        path.display()
    ));
    Ok(())
}
