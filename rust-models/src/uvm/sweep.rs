//! `mcmvm sweep --suite forest`: every Forest-suite workload under TBNp, Forest,
//! SpecForest and the paper's two ablations (Forest's trees with the baseline LRU, TBNp with
//! access-aware eviction) at each oversubscription, with speed-ups over TBNp, far faults,
//! unused prefetches, thrashing, profiling steps and geometric means (with and without each
//! policy's largest outlier); CSV and JSON out ([`super::sweep_out`]).
//!
//! The sweep is a fixed list of jobs ([`forest_jobs`]), each run by [`run_forest_job`];
//! its tables are built from each run's [`RunPart`] ([`rows_of`], [`summaries_of`]), so
//! jobs run as separate processes (`mcmvm sweep --task-id`) merge into the same files.

use std::path::PathBuf;

use serde::Serialize;

use super::config::UvmConfig;
use super::gpu_run::UvmGpu;
use super::metrics::UvmMetrics;
pub use super::sweep_out::{curve_table, paper_table, SweepTables};
use super::sweep_parts::row_of;
pub use super::sweep_parts::{rows_of, PartsError, RunPart};
use super::{UvmError, UvmPolicy};

/// What to sweep.
#[derive(Debug, Clone)]
pub struct SweepOptions {
    pub config: UvmConfig,
    /// Workload names (default: `workload::forest_suite()`).
    pub workloads: Vec<String>,
    /// Oversubscription ratios (default: the config's).
    pub oversubs: Vec<f64>,
    pub scale: f64,
    pub seed: u64,
    /// Where `forest.csv` and `forest.json` go (None: not written).
    pub out_dir: Option<PathBuf>,
    /// Called after each run (the CLI's progress bar).
    pub progress: Progress,
    /// The GPU every run is timed on (the paper's: `configs/gpu-turing.toml`, s4k).
    pub gpu: UvmGpu,
}

/// A callback per finished run, with the job and its wall seconds; none by default.
#[derive(Clone, Default)]
pub struct Progress(pub Option<std::sync::Arc<ProgressFn>>);

/// What [`Progress`] calls.
pub type ProgressFn = dyn Fn(&ForestJob, f64) + Send + Sync;

impl std::fmt::Debug for Progress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "Progress(on)"
        } else {
            "Progress(off)"
        })
    }
}

impl SweepOptions {
    /// The Forest suite at the config's oversubscription, scale 1, seed 1, on `gpu`.
    pub fn new(config: UvmConfig, gpu: UvmGpu) -> SweepOptions {
        SweepOptions {
            oversubs: vec![config.memory.oversubscription],
            config,
            workloads: crate::workload::forest_suite()
                .iter()
                .map(|s| s.to_string())
                .collect(),
            scale: 1.0,
            seed: 1,
            out_dir: None,
            progress: Progress::default(),
            gpu,
        }
    }
}

/// One workload at one oversubscription. The arrays follow [`POLICIES`]: tbnp, forest,
/// specforest, forest-lru, tbnp-aae.
#[derive(Debug, Clone, Serialize)]
pub struct SweepRow {
    pub workload: String,
    pub oversubscription: f64,
    pub tbnp_cycles: u64,
    pub forest_cycles: u64,
    pub specforest_cycles: u64,
    pub forest_lru_cycles: u64,
    pub tbnp_aae_cycles: u64,
    pub forest_speedup: f64,
    pub specforest_speedup: f64,
    pub forest_lru_speedup: f64,
    pub tbnp_aae_speedup: f64,
    pub far_faults: [u64; 5],
    pub unused_prefetch_pct: [f64; 5],
    pub thrash_multiple: [f64; 5],
    pub profiling_steps_forest: u64,
    pub profiling_steps_specforest: u64,
    pub profiling_steps_forest_lru: u64,
    /// Forest's class per object, `name:CLASS`.
    pub classes: String,
}

impl SweepRow {
    /// Speed-ups over TBNp in the order of [`COMPARED`].
    pub fn speedups(&self) -> [f64; 4] {
        [
            self.forest_speedup,
            self.specforest_speedup,
            self.forest_lru_speedup,
            self.tbnp_aae_speedup,
        ]
    }
}

/// A policy's geometric mean without its largest outlier.
#[derive(Debug, Clone, Serialize)]
pub struct WithoutOutlier {
    pub policy: String,
    /// The workload left out: the largest |log speed-up| (none with fewer than 2 rows).
    pub outlier: Option<String>,
    pub geomean_speedup: f64,
}

/// Geometric means at one oversubscription.
#[derive(Debug, Clone, Serialize)]
pub struct SweepSummary {
    pub oversubscription: f64,
    pub forest_geomean_speedup: f64,
    pub specforest_geomean_speedup: f64,
    pub forest_lru_geomean_speedup: f64,
    pub tbnp_aae_geomean_speedup: f64,
    /// Per policy of [`COMPARED`].
    pub without_outlier: Vec<WithoutOutlier>,
    pub mean_profiling_steps_forest: f64,
    pub mean_profiling_steps_specforest: f64,
    pub mean_profiling_steps_forest_lru: f64,
    /// Forest's geomean over TBNp: each workload's share of its log, and the geomean
    /// without the workloads where TBNp thrashes ([`super::means`]).
    pub forest_means: super::means::GeomeanParts,
}

impl SweepSummary {
    /// Geometric means over TBNp in the order of [`COMPARED`].
    pub fn geomeans(&self) -> [f64; 4] {
        [
            self.forest_geomean_speedup,
            self.specforest_geomean_speedup,
            self.forest_lru_geomean_speedup,
            self.tbnp_aae_geomean_speedup,
        ]
    }
}

/// The whole sweep.
#[derive(Debug, Clone, Serialize)]
pub struct SweepReport {
    pub seed: u64,
    pub scale: f64,
    pub rows: Vec<SweepRow>,
    pub summaries: Vec<SweepSummary>,
    pub runs: Vec<UvmMetrics>,
}

/// The policies of every row, in job order: the baseline, Forest, SpecForest, then the
/// ablations (Forest's trees with the baseline LRU; TBNp with access-aware eviction).
pub const POLICIES: [UvmPolicy; 5] = [
    UvmPolicy::Tbnp,
    UvmPolicy::Forest,
    UvmPolicy::SpecForest,
    UvmPolicy::ForestLru,
    UvmPolicy::TbnpAae,
];

/// The policies compared with TBNp (every one of [`POLICIES`] but the first).
pub const COMPARED: [UvmPolicy; 4] = [
    UvmPolicy::Forest,
    UvmPolicy::SpecForest,
    UvmPolicy::ForestLru,
    UvmPolicy::TbnpAae,
];

/// One run of the sweep: a workload at one oversubscription under one policy.
#[derive(Debug, Clone, PartialEq)]
pub struct ForestJob {
    pub workload: String,
    pub oversubscription: f64,
    pub policy: UvmPolicy,
}

/// Every run of the sweep, in its fixed order: workload-major, then oversubscription, then
/// [`POLICIES`] (the rows are built from consecutive groups of five).
pub fn forest_jobs(opts: &SweepOptions) -> Result<Vec<ForestJob>, UvmError> {
    for &o in &opts.oversubs {
        if o.is_nan() || o < 1.0 {
            return Err(UvmError::Oversubscription(o));
        }
    }
    let mut jobs = Vec::new();
    for w in &opts.workloads {
        for &o in &opts.oversubs {
            for p in POLICIES {
                jobs.push(ForestJob {
                    workload: w.clone(),
                    oversubscription: o,
                    policy: p,
                });
            }
        }
    }
    Ok(jobs)
}

/// Build the job's workload and run it.
pub fn run_forest_job(opts: &SweepOptions, job: &ForestJob) -> Result<UvmMetrics, UvmError> {
    let wl = crate::workload::by_name(&job.workload, opts.scale, opts.seed)?;
    let mut cfg = opts.config.clone();
    cfg.memory.oversubscription = job.oversubscription;
    opts.gpu
        .run(wl.as_ref(), &cfg, job.policy, opts.scale, opts.seed)
}

/// The geometric mean of `speedups` (one per workload) without the largest outlier, the
/// speed-up farthest from 1 in log terms, and that workload ([`crate::stats`]).
pub fn geomean_without_outlier(speedups: &[(&str, f64)]) -> (Option<String>, f64) {
    let xs: Vec<f64> = speedups.iter().map(|x| x.1).collect();
    let (worst, g) = crate::stats::geomean_without_outlier(&xs);
    (worst.map(|i| speedups[i].0.to_string()), g)
}

/// The geometric means at each oversubscription of `oversubs`.
pub fn summaries_of(oversubs: &[f64], rows: &[SweepRow]) -> Vec<SweepSummary> {
    oversubs
        .iter()
        .map(|&o| {
            let rs: Vec<&SweepRow> = rows.iter().filter(|r| r.oversubscription == o).collect();
            let n = rs.len().max(1) as f64;
            let geo = |i: usize| geomean_speedup(rs.iter().map(|r| r.speedups()[i]));
            let mean =
                |f: &dyn Fn(&SweepRow) -> u64| rs.iter().map(|r| f(r) as f64).sum::<f64>() / n;
            let without_outlier = COMPARED
                .iter()
                .enumerate()
                .map(|(i, p)| {
                    let xs: Vec<(&str, f64)> = rs
                        .iter()
                        .map(|r| (r.workload.as_str(), r.speedups()[i]))
                        .collect();
                    let (outlier, geomean_speedup) = geomean_without_outlier(&xs);
                    WithoutOutlier {
                        policy: p.name().to_string(),
                        outlier,
                        geomean_speedup,
                    }
                })
                .collect();
            SweepSummary {
                oversubscription: o,
                forest_geomean_speedup: geo(0),
                specforest_geomean_speedup: geo(1),
                forest_lru_geomean_speedup: geo(2),
                tbnp_aae_geomean_speedup: geo(3),
                without_outlier,
                mean_profiling_steps_forest: mean(&|r| r.profiling_steps_forest),
                mean_profiling_steps_specforest: mean(&|r| r.profiling_steps_specforest),
                mean_profiling_steps_forest_lru: mean(&|r| r.profiling_steps_forest_lru),
                forest_means: forest_means(&rs),
            }
        })
        .collect()
}

/// Forest's geomean parts over `rows` (one oversubscription).
fn forest_means(rows: &[&SweepRow]) -> super::means::GeomeanParts {
    let parts: Vec<(&str, f64, f64)> = rows
        .iter()
        .map(|r| (r.workload.as_str(), r.forest_speedup, r.thrash_multiple[0]))
        .collect();
    super::means::geomean_parts(&parts)
}

/// Run the sweep, runs spread over the machine's cores ([`run_parallel`]).
pub fn sweep_forest(opts: &SweepOptions) -> Result<SweepReport, UvmError> {
    let jobs = forest_jobs(opts)?;
    let runs = run_parallel(&jobs, |job| {
        let t0 = std::time::Instant::now();
        let r = run_forest_job(opts, job);
        if let Some(p) = &opts.progress.0 {
            p(job, t0.elapsed().as_secs_f64());
        }
        r
    })?;
    let parts: Vec<RunPart> = runs.iter().map(RunPart::of).collect();
    let rows: Vec<SweepRow> = parts
        .chunks(POLICIES.len())
        .filter(|c| c.len() == POLICIES.len())
        .map(row_of)
        .collect();
    let summaries = summaries_of(&opts.oversubs, &rows);
    let report = SweepReport {
        seed: opts.seed,
        scale: opts.scale,
        rows,
        summaries,
        runs,
    };
    if let Some(dir) = &opts.out_dir {
        report.write(dir)?;
    }
    Ok(report)
}

/// Run `f` over `jobs` on rayon's threads (the studies' one runner; `RAYON_NUM_THREADS`
/// caps them): results in job order, or an error of a failed job.
pub(super) fn run_parallel<J: Sync, R: Send>(
    jobs: &[J],
    f: impl Fn(&J) -> Result<R, UvmError> + Sync,
) -> Result<Vec<R>, UvmError> {
    use rayon::prelude::*;
    jobs.par_iter().map(&f).collect()
}

/// Geometric mean of speed-ups, 1 when none counts ([`crate::stats`]'s rule: a speed-up
/// of 0, a run with no cycles, is left out).
pub fn geomean_speedup(speedups: impl Iterator<Item = f64>) -> f64 {
    crate::stats::geomean_or_one(&speedups.collect::<Vec<_>>())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn part(workload: &str, policy: &str, cycles: u64) -> RunPart {
        let (workload, policy) = (workload.into(), policy.into());
        let m = UvmMetrics {
            workload,
            policy,
            cycles,
            oversubscription: 1.5,
            ..Default::default()
        };
        RunPart {
            prefetched_unused_pct: 100.0 / 3.0,
            thrash_multiple: 0.1 + 0.2,
            ..RunPart::of(&m)
        }
    }

    #[test]
    fn merged_json_is_what_the_report_writes() {
        let ps = [
            part("bfs", "tbnp", 90),
            part("bfs", "forest", 45),
            part("bfs", "specforest", 30),
            part("bfs", "forest-lru", 60),
            part("bfs", "tbnp-aae", 90),
        ];
        let rows = rows_of(&ps).unwrap();
        assert_eq!(rows[0].forest_speedup, 2.0);
        let summaries = summaries_of(&[1.5], &rows);
        let runs = vec![UvmMetrics::default(); 5];
        let report = SweepReport {
            seed: 7,
            scale: 0.02,
            rows,
            summaries,
            runs,
        };
        let texts = vec![serde_json::to_string_pretty(&report.runs[0]).unwrap(); 5];
        let expected = serde_json::to_string_pretty(&report).unwrap();
        assert_eq!(report.tables().json(&texts).unwrap(), expected);
    }

    #[test]
    fn rows_need_whole_groups_in_job_order() {
        let names = POLICIES.map(|p| p.name());
        let [t, f, s, l, a] = names.map(|p| part("bfs", p, 9));
        let e = rows_of(&[t.clone(), f.clone()]);
        assert!(matches!(e, Err(PartsError::Incomplete(2))));
        let e = rows_of(&[t, s, f, l, a]).unwrap_err().to_string();
        assert!(e.contains("run 1 is bfs at 1.5 under specforest"), "{e}");
    }

    #[test]
    fn outlier_is_the_largest_log_speedup_either_way() {
        let xs = [("a", 2.0), ("b", 0.1), ("c", 4.0)];
        let (o, g) = geomean_without_outlier(&xs);
        assert_eq!(o.as_deref(), Some("b"));
        assert!((g - 8f64.sqrt()).abs() < 1e-12);
        let (o, g) = geomean_without_outlier(&[("a", 3.0)]);
        assert!(o.is_none() && (g - 3.0).abs() < 1e-12);
    }
}
