//! The CLAP study's further figures: the 8-chiplet MCM GPU (§5.2, Fig. 22), the PMM
//! threshold's sensitivity (§4.2), MMA's fully-mapped-block count (§4.5; not a number in
//! the paper), the workloads' Table 2 and the paper's headline figures beside ours.
//!
//! Table 2 and the paper comparison come from the main sweep's runs; the other three need
//! runs of their own, which [`extra_jobs`] lists and [`run_extra`] runs (the CLI runs them
//! in parallel). A job whose configuration is the main sweep's is not run again when the
//! main sweep has it at the same scale ([`ExtraJob::main_equivalent`]). Every figure is
//! measured: the tables only divide cycles.

use super::sweep::{geomean, run_job, Job, RunSummary};
use super::{GpuConfig, GpuError, RunReport};
use crate::driver::PolicyKind;
use serde::Serialize;
use std::fmt::Write;

/// PMM thresholds of the sensitivity table (CLAP §4.2 uses 20 %, tried 15 % and 30 %).
pub const PMM_FRACTIONS: [f64; 6] = [0.05, 0.10, 0.15, 0.20, 0.30, 0.40];
/// `mma_min_full_blocks` values of its sensitivity table.
pub const MIN_FULL_BLOCKS: [u32; 3] = [1, 2, 4];
/// The policies of the 8-chiplet table (Fig. 22's S-64KB, S-2MB, CLAP, and Ideal).
pub const CHIPLETS8_POLICIES: [PolicyKind; 4] = [
    PolicyKind::S64k,
    PolicyKind::S2m,
    PolicyKind::Clap,
    PolicyKind::Ideal,
];

/// The configuration an extra run uses.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(tag = "config", rename_all = "snake_case")]
pub enum Variant {
    /// The main sweep's configuration.
    Main,
    /// The main configuration with `driver.pmm_fraction` set.
    Pmm { fraction: f64 },
    /// The main configuration with `driver.mma_min_full_blocks` set.
    MinBlocks { blocks: u32 },
    /// The 8-chiplet configuration.
    Chiplets8,
}

impl Variant {
    /// Short name for progress messages and CSV.
    pub fn label(self) -> String {
        match self {
            Variant::Main => "main".into(),
            Variant::Pmm { fraction } => format!("pmm={:.0}%", 100.0 * fraction),
            Variant::MinBlocks { blocks } => format!("min-blocks={blocks}"),
            Variant::Chiplets8 => "8-chiplet".into(),
        }
    }
}

/// One extra run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExtraJob {
    pub variant: Variant,
    pub workload: String,
    pub policy: PolicyKind,
}

impl ExtraJob {
    /// The main sweep's job this one repeats, if it is run under the main configuration.
    pub fn main_equivalent(&self) -> Option<Job> {
        (self.variant == Variant::Main).then(|| Job {
            workload: self.workload.clone(),
            policy: self.policy,
        })
    }
}

/// Every extra run on `workloads`, without duplicates: the s64k baseline and clap at each
/// PMM threshold and block count (the main configuration's own values become
/// [`Variant::Main`]), and the 8-chiplet policies.
pub fn extra_jobs(main: &GpuConfig, workloads: &[String]) -> Vec<ExtraJob> {
    let mut variants = vec![];
    for &fraction in &PMM_FRACTIONS {
        variants.push(if fraction == main.driver.pmm_fraction {
            Variant::Main
        } else {
            Variant::Pmm { fraction }
        });
    }
    for &blocks in &MIN_FULL_BLOCKS {
        variants.push(if blocks == main.driver.mma_min_full_blocks {
            Variant::Main
        } else {
            Variant::MinBlocks { blocks }
        });
    }
    let mut jobs: Vec<ExtraJob> = Vec::new();
    let mut push = |variant, workload: &String, policy| {
        let j = ExtraJob {
            variant,
            workload: workload.clone(),
            policy,
        };
        if !jobs.contains(&j) {
            jobs.push(j);
        }
    };
    for w in workloads {
        push(Variant::Main, w, PolicyKind::S64k);
        for &v in &variants {
            push(v, w, PolicyKind::Clap);
        }
        for p in CHIPLETS8_POLICIES {
            push(Variant::Chiplets8, w, p);
        }
    }
    jobs
}

/// Run one extra job: `main` or `chiplets8` with the variant's driver parameter.
pub fn run_extra(
    main: &GpuConfig,
    chiplets8: &GpuConfig,
    job: &ExtraJob,
    scale: f64,
    seed: u64,
) -> Result<RunReport, GpuError> {
    let mut cfg = match job.variant {
        Variant::Chiplets8 => chiplets8.clone(),
        _ => main.clone(),
    };
    match job.variant {
        Variant::Pmm { fraction } => cfg.driver.pmm_fraction = fraction,
        Variant::MinBlocks { blocks } => cfg.driver.mma_min_full_blocks = blocks,
        Variant::Main | Variant::Chiplets8 => {}
    }
    let plain = Job {
        workload: job.workload.clone(),
        policy: job.policy,
    };
    run_job(&cfg, &plain, scale, seed)
}

/// An extra run's result: the job and its summary.
pub type ExtraRun = (ExtraJob, RunSummary);

fn find<'a>(runs: &'a [ExtraRun], v: Variant, w: &str, p: PolicyKind) -> Option<&'a RunSummary> {
    runs.iter()
        .find(|(j, _)| j.variant == v && j.workload == w && j.policy == p)
        .map(|(_, r)| r)
}

/// `base` cycles / `r` cycles.
fn speedup(base: &RunSummary, r: &RunSummary) -> Option<f64> {
    (r.cycles > 0).then(|| base.cycles as f64 / r.cycles as f64)
}

/// Workloads in first-seen order.
pub fn workloads_of(runs: &[ExtraRun]) -> Vec<String> {
    let mut ws: Vec<String> = Vec::new();
    for (j, _) in runs {
        if !ws.contains(&j.workload) {
            ws.push(j.workload.clone());
        }
    }
    ws
}

/// One row of a clap-sensitivity table: a parameter value and clap's geometric-mean
/// speed-up over s64k at it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SensitivityRow {
    /// The parameter's value (a PMM fraction or a block count).
    pub value: f64,
    pub default: bool,
    /// Geometric mean over the workloads of s64k cycles / clap cycles.
    pub geomean: Option<f64>,
    /// That geomean over the default's, minus 1 (the paper's "30 % costs 1.3 %").
    pub vs_default: Option<f64>,
    /// Structures of the workloads (every one) that MMA sent to OLP's fallback.
    pub fallbacks: usize,
    /// Workloads in the geomean.
    pub workloads: usize,
    /// Per workload: clap's speed-up over s64k.
    pub per_workload: Vec<(String, Option<f64>)>,
}

/// A sensitivity table over one driver parameter.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Sensitivity {
    pub parameter: &'static str,
    pub rows: Vec<SensitivityRow>,
}

fn sensitivity(
    runs: &[ExtraRun],
    parameter: &'static str,
    values: &[(f64, Variant)],
) -> Sensitivity {
    let ws = workloads_of(runs);
    let mut rows: Vec<SensitivityRow> = values
        .iter()
        .map(|&(value, v)| {
            let per_workload: Vec<(String, Option<f64>)> = ws
                .iter()
                .map(|w| {
                    let base = find(runs, Variant::Main, w, PolicyKind::S64k);
                    let clap = find(runs, v, w, PolicyKind::Clap);
                    (w.clone(), base.zip(clap).and_then(|(b, c)| speedup(b, c)))
                })
                .collect();
            let xs: Vec<f64> = per_workload.iter().filter_map(|(_, x)| *x).collect();
            let fallbacks = ws
                .iter()
                .filter_map(|w| find(runs, v, w, PolicyKind::Clap))
                .flat_map(|r| &r.allocs)
                .filter(|a| a.table4.contains("fallback"))
                .count();
            SensitivityRow {
                value,
                default: v == Variant::Main,
                geomean: geomean(&xs),
                vs_default: None,
                fallbacks,
                workloads: xs.len(),
                per_workload,
            }
        })
        .collect();
    let default = rows.iter().find(|r| r.default).and_then(|r| r.geomean);
    for r in &mut rows {
        r.vs_default = r.geomean.zip(default).map(|(g, d)| g / d - 1.0);
    }
    Sensitivity { parameter, rows }
}

/// The PMM-threshold table: clap at each of [`PMM_FRACTIONS`].
pub fn pmm_sensitivity(main: &GpuConfig, runs: &[ExtraRun]) -> Sensitivity {
    let values: Vec<(f64, Variant)> = PMM_FRACTIONS
        .iter()
        .map(|&f| {
            let v = if f == main.driver.pmm_fraction {
                Variant::Main
            } else {
                Variant::Pmm { fraction: f }
            };
            (f, v)
        })
        .collect();
    sensitivity(runs, "pmm_fraction", &values)
}

/// The MMA block-count table: clap at each of [`MIN_FULL_BLOCKS`].
pub fn min_blocks_sensitivity(main: &GpuConfig, runs: &[ExtraRun]) -> Sensitivity {
    let values: Vec<(f64, Variant)> = MIN_FULL_BLOCKS
        .iter()
        .map(|&b| {
            let v = if b == main.driver.mma_min_full_blocks {
                Variant::Main
            } else {
                Variant::MinBlocks { blocks: b }
            };
            (b as f64, v)
        })
        .collect();
    sensitivity(runs, "mma_min_full_blocks", &values)
}

fn pct(x: Option<f64>) -> String {
    x.map_or("-".into(), |x| format!("{:+.1}%", 100.0 * x))
}

impl Sensitivity {
    /// The table as text, with the paper's statements beside the rows they concern.
    pub fn text(&self) -> String {
        let pmm = self.parameter == "pmm_fraction";
        let mut s = String::new();
        let _ = writeln!(
            s,
            "{:<10} {:>16} {:>12} {:>10}   paper",
            if pmm { "PMM" } else { "min blocks" },
            "clap over s64k",
            "vs default",
            "fallbacks"
        );
        for r in &self.rows {
            let value = if pmm {
                format!("{:.0}%", 100.0 * r.value)
            } else {
                format!("{}", r.value)
            };
            let paper = match (pmm, (100.0 * r.value).round() as u32) {
                (true, 20) => "the default",
                (true, 15) => "\"15 % was enough\"",
                (true, 30) => "-1.3 % on average",
                _ => "",
            };
            let _ = writeln!(
                s,
                "{:<10} {:>16} {:>12} {:>10}   {}{}",
                format!("{value}{}", if r.default { "*" } else { "" }),
                r.geomean
                    .map_or("-".into(), |g| format!("{g:.3} ({})", pct(Some(g - 1.0)))),
                pct(r.vs_default),
                r.fallbacks,
                paper,
                if r.workloads == 0 { "(no runs)" } else { "" }
            );
        }
        let _ = writeln!(
            s,
            "(* the configuration's value; geometric mean over {} workloads; fallbacks: \
             structures MMA left to OLP)",
            self.rows.first().map_or(0, |r| r.workloads)
        );
        s
    }

    /// `value,default,geomean,vs_default,fallbacks,workloads` and one column per workload.
    pub fn csv(&self) -> String {
        let ws: Vec<&str> = self.rows.first().map_or(vec![], |r| {
            r.per_workload.iter().map(|(w, _)| w.as_str()).collect()
        });
        let mut s = format!(
            "{},default,geomean,vs_default,fallbacks,workloads",
            self.parameter
        );
        for w in &ws {
            let _ = write!(s, ",{w}");
        }
        s.push('\n');
        let num = |x: Option<f64>| x.map_or(String::new(), |x| format!("{x:.6}"));
        for r in &self.rows {
            let _ = write!(
                s,
                "{},{},{},{},{},{}",
                r.value,
                r.default,
                num(r.geomean),
                num(r.vs_default),
                r.fallbacks,
                r.workloads
            );
            for (_, x) in &r.per_workload {
                let _ = write!(s, ",{}", num(*x));
            }
            s.push('\n');
        }
        s
    }
}
