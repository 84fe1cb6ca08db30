//! The fit: every point of the design runs the targets' baseline policies on the
//! workloads at the calibration scale (each run one [`crate::gpu::sweep::run_job`], the
//! point's values applied as `--set KEY=VALUE` overrides on the config text), and each
//! point gets its figures and residual. The caller runs the jobs (the CLI in parallel with
//! a progress bar); this module plans them and scores what comes back.
//!
//! Residual of a point = Σ over targets of weight × ln(ours / paper)², ours and paper as
//! speed-up ratios (1.247, not +24.7 %): a relative error, symmetric in over- and
//! under-shoot, and defined whatever the sign of the percentage.

use super::design::Point;
use super::params::Param;
use super::targets::{self, Target};
use super::CalibrateError;
use crate::driver::PolicyKind;
use crate::gpu::sweep::{run_job, Job, RunSummary};
use crate::gpu::{GpuConfig, RunReport};
use crate::workload::Scale;
use serde::Serialize;
use std::path::{Path, PathBuf};

/// What a calibration runs: the points, and for each the same workloads × policies.
#[derive(Debug, Clone, Serialize)]
pub struct Plan {
    pub config: PathBuf,
    #[serde(skip)]
    config_text: String,
    pub params: Vec<Param>,
    pub targets: Vec<Target>,
    pub points: Vec<Point>,
    pub workloads: Vec<String>,
    pub policies: Vec<PolicyKind>,
    /// A multiplier, or `paper` (each workload at the CLAP paper's input size class).
    pub scale: Scale,
    /// Seed of the workload generators.
    pub seed: u64,
}

/// One simulation of the plan.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanJob {
    /// Index into `Plan::points`.
    pub point: usize,
    pub job: Job,
}

/// One point's outcome.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PointResult {
    pub point: usize,
    /// Ours per target, as a speed-up ratio (None: a run is missing).
    pub figures: Vec<Option<f64>>,
    /// Each target's residual term.
    pub terms: Vec<Option<f64>>,
    /// Sum of the terms (None if any is missing).
    pub residual: Option<f64>,
}

impl Plan {
    /// A plan over `points` for the config `text` (read from `config`, named in messages).
    /// Each point's config is built and validated here, so a value the model rejects fails
    /// before anything runs. A point that sets every parameter to the config's own value
    /// is dropped: point 0 already is that config.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        config: &Path,
        text: &str,
        params: &[Param],
        targets: &[Target],
        points: Vec<Point>,
        workloads: Vec<String>,
        scale: Scale,
        seed: u64,
    ) -> Result<Plan, CalibrateError> {
        if workloads.is_empty() || points.is_empty() {
            return Err(CalibrateError::Empty);
        }
        if let Scale::Factor(f) = scale {
            if !(f > 0.0 && f.is_finite()) {
                return Err(CalibrateError::BadScale(f));
            }
        }
        let mut plan = Plan {
            config: config.to_path_buf(),
            config_text: text.to_string(),
            params: params.to_vec(),
            targets: targets.to_vec(),
            points: Vec::new(),
            workloads,
            policies: targets::policies(targets),
            scale,
            seed,
        };
        let base = plan.point_config(&Point {
            label: String::new(),
            settings: Vec::new(),
        })?;
        let current = current_values(&base, params);
        for (k, p) in points.into_iter().enumerate() {
            plan.point_config(&p)?;
            let same = p.settings.iter().all(|&(i, v)| current[i] == Some(v));
            if k == 0 || !same {
                plan.points.push(p);
            }
        }
        Ok(plan)
    }

    /// The config of `point`: the config text with its overrides applied and validated
    /// (the same machinery as the CLI's `--set`).
    pub fn point_config(&self, point: &Point) -> Result<GpuConfig, CalibrateError> {
        let overrides = point.overrides(&self.params);
        Ok(GpuConfig::parse_with(
            &self.config_text,
            &self.config,
            &overrides,
        )?)
    }

    /// Every simulation, point-major, then workload, then policy.
    pub fn jobs(&self) -> Vec<PlanJob> {
        (0..self.points.len())
            .flat_map(|point| {
                self.workloads.iter().flat_map(move |w| {
                    self.policies.iter().map(move |&policy| PlanJob {
                        point,
                        job: Job {
                            workload: w.clone(),
                            policy,
                        },
                    })
                })
            })
            .collect()
    }

    /// Run one job with its point's values.
    pub fn run(&self, job: &PlanJob) -> Result<RunSummary, CalibrateError> {
        Ok(RunSummary::of(&self.run_report(job)?))
    }

    /// Run one job with its point's values: its whole report (a sweep's run file).
    pub fn run_report(&self, job: &PlanJob) -> Result<RunReport, CalibrateError> {
        let cfg = self.point_config(&self.points[job.point])?;
        let scale = self.scale.factor(&job.job.workload);
        Ok(run_job(&cfg, &job.job, scale, self.seed)?)
    }

    /// Every point's figures and residual from the finished runs.
    pub fn evaluate(&self, runs: &[(usize, RunSummary)]) -> Vec<PointResult> {
        (0..self.points.len())
            .map(|point| {
                let mine: Vec<RunSummary> = runs
                    .iter()
                    .filter(|(p, _)| *p == point)
                    .map(|(_, r)| r.clone())
                    .collect();
                score(point, &self.targets, &mine, &self.workloads)
            })
            .collect()
    }
}

/// A point's figures, terms and residual from its runs.
pub fn score(
    point: usize,
    targets: &[Target],
    runs: &[RunSummary],
    workloads: &[String],
) -> PointResult {
    let figures: Vec<Option<f64>> = targets.iter().map(|t| t.measure(runs, workloads)).collect();
    let terms: Vec<Option<f64>> = targets
        .iter()
        .zip(&figures)
        .map(|(t, f)| f.map(|f| t.term(f)))
        .collect();
    let residual = terms.iter().copied().sum::<Option<f64>>();
    PointResult {
        point,
        figures,
        terms,
        residual,
    }
}

/// The result with the smallest residual (the first of equals; None if none has one).
pub fn best(results: &[PointResult]) -> Option<&PointResult> {
    results
        .iter()
        .filter(|r| r.residual.is_some_and(f64::is_finite))
        .min_by(|a, b| {
            a.residual
                .partial_cmp(&b.residual)
                .expect("finite residuals")
        })
}

/// The config's value of each parameter (None if the key is absent or not a number).
pub fn current_values(cfg: &GpuConfig, params: &[Param]) -> Vec<Option<f64>> {
    let tree = toml::Value::try_from(cfg).ok();
    params
        .iter()
        .map(|p| {
            let (section, name) = p.section_and_name();
            match tree.as_ref()?.get(section)?.get(name)? {
                toml::Value::Integer(i) => Some(*i as f64),
                toml::Value::Float(f) => Some(*f),
                toml::Value::Boolean(b) => Some(f64::from(u8::from(*b))),
                _ => None,
            }
        })
        .collect()
}
