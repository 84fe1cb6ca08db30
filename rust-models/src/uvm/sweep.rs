//! `mcmvm sweep --suite forest`: every Forest-suite workload under TBNp, Forest and
//! SpecForest at each oversubscription, with speed-ups over TBNp, far faults, unused
//! prefetches, thrashing, profiling steps and geometric means; CSV and JSON out.
//!
//! The sweep is a fixed list of jobs ([`forest_jobs`]), each run by [`run_forest_job`];
//! its tables are built from each run's [`RunPart`] ([`rows_of`], [`summaries_of`]), so
//! jobs run as separate processes (`mcmvm sweep --task-id`) merge into the same files.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use super::config::UvmConfig;
use super::metrics::UvmMetrics;
use super::{run_workload, UvmError, UvmPolicy};
use crate::gpu::sweep::exact_f64;

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
}

/// A callback per finished run; none by default.
#[derive(Clone, Default)]
pub struct Progress(pub Option<std::sync::Arc<dyn Fn() + Send + Sync>>);

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
    /// The Forest suite at the config's oversubscription, scale 1, seed 1.
    pub fn new(config: UvmConfig) -> SweepOptions {
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
        }
    }
}

/// One workload at one oversubscription.
#[derive(Debug, Clone, Serialize)]
pub struct SweepRow {
    pub workload: String,
    pub oversubscription: f64,
    pub tbnp_cycles: u64,
    pub forest_cycles: u64,
    pub specforest_cycles: u64,
    pub forest_speedup: f64,
    pub specforest_speedup: f64,
    /// [tbnp, forest, specforest]
    pub far_faults: [u64; 3],
    pub unused_prefetch_pct: [f64; 3],
    pub thrash_multiple: [f64; 3],
    pub profiling_steps_forest: u64,
    pub profiling_steps_specforest: u64,
    /// Forest's class per object, `name:CLASS`.
    pub classes: String,
}

/// Geometric means at one oversubscription.
#[derive(Debug, Clone, Serialize)]
pub struct SweepSummary {
    pub oversubscription: f64,
    pub forest_geomean_speedup: f64,
    pub specforest_geomean_speedup: f64,
    pub mean_profiling_steps_forest: f64,
    pub mean_profiling_steps_specforest: f64,
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

const POLICIES: [UvmPolicy; 3] = [UvmPolicy::Tbnp, UvmPolicy::Forest, UvmPolicy::SpecForest];

/// One run of the sweep: a workload at one oversubscription under one policy.
#[derive(Debug, Clone, PartialEq)]
pub struct ForestJob {
    pub workload: String,
    pub oversubscription: f64,
    pub policy: UvmPolicy,
}

/// Every run of the sweep, in its fixed order: workload-major, then oversubscription, then
/// TBNp, Forest, SpecForest (the rows are built from consecutive triples).
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
    let wl = crate::workload::by_name(&job.workload, opts.scale, opts.seed)
        .map_err(|e| UvmError::Workload(e.to_string()))?;
    let mut cfg = opts.config.clone();
    cfg.memory.oversubscription = job.oversubscription;
    run_workload(wl.as_ref(), &cfg, job.policy, false)
}

/// What the tables need from one run. A sweep run as separate jobs (`--task-id`) stores it
/// next to the run's full metrics, and the merge builds the rows from it alone.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunPart {
    pub workload: String,
    pub policy: String,
    #[serde(with = "exact_f64")]
    pub oversubscription: f64,
    pub cycles: u64,
    pub far_faults: u64,
    #[serde(with = "exact_f64")]
    pub prefetched_unused_pct: f64,
    #[serde(with = "exact_f64")]
    pub thrash_multiple: f64,
    pub profiling_steps: u64,
    /// The class of each object, `name:CLASS` (`-`: unclassified), space-separated.
    pub classes: String,
}

impl RunPart {
    /// The part of a finished run.
    pub fn of(m: &UvmMetrics) -> RunPart {
        RunPart {
            workload: m.workload.clone(),
            policy: m.policy.clone(),
            oversubscription: m.oversubscription,
            cycles: m.cycles,
            far_faults: m.far_faults,
            prefetched_unused_pct: m.prefetched_unused_pct,
            thrash_multiple: m.thrash_multiple,
            profiling_steps: m.profiling_steps,
            classes: m
                .objects
                .iter()
                .map(|o| format!("{}:{}", o.name, o.class.as_deref().unwrap_or("-")))
                .collect::<Vec<_>>()
                .join(" "),
        }
    }
}

/// Why run parts do not make the rows of a sweep.
#[derive(Debug, thiserror::Error)]
pub enum PartsError {
    #[error("{0} runs are not whole (tbnp, forest, specforest) triples")]
    Incomplete(usize),
    #[error("run {index} is {found}, where the sweep's order has {expected}")]
    OutOfOrder {
        index: usize,
        expected: String,
        found: String,
    },
}

fn row_of(t: &RunPart, f: &RunPart, s: &RunPart) -> SweepRow {
    SweepRow {
        workload: t.workload.clone(),
        oversubscription: t.oversubscription,
        tbnp_cycles: t.cycles,
        forest_cycles: f.cycles,
        specforest_cycles: s.cycles,
        forest_speedup: t.cycles as f64 / f.cycles.max(1) as f64,
        specforest_speedup: t.cycles as f64 / s.cycles.max(1) as f64,
        far_faults: [t.far_faults, f.far_faults, s.far_faults],
        unused_prefetch_pct: [
            t.prefetched_unused_pct,
            f.prefetched_unused_pct,
            s.prefetched_unused_pct,
        ],
        thrash_multiple: [t.thrash_multiple, f.thrash_multiple, s.thrash_multiple],
        profiling_steps_forest: f.profiling_steps,
        profiling_steps_specforest: s.profiling_steps,
        classes: f.classes.clone(),
    }
}

/// The rows of a sweep from its runs' parts in job order (see [`forest_jobs`]).
pub fn rows_of(parts: &[RunPart]) -> Result<Vec<SweepRow>, PartsError> {
    if !parts.len().is_multiple_of(3) {
        return Err(PartsError::Incomplete(parts.len()));
    }
    let name = |w: &str, o: f64, p: &str| format!("{w} at {o} under {p}");
    let mut rows = Vec::new();
    for (k, c) in parts.chunks(3).enumerate() {
        for (i, (part, policy)) in c.iter().zip(POLICIES).enumerate() {
            let (w, o) = (&c[0].workload, c[0].oversubscription);
            if part.policy != policy.name()
                || part.workload != *w
                || part.oversubscription.to_bits() != o.to_bits()
            {
                let found = name(&part.workload, part.oversubscription, &part.policy);
                let expected = name(w, o, policy.name());
                let index = 3 * k + i;
                return Err(PartsError::OutOfOrder {
                    index,
                    expected,
                    found,
                });
            }
        }
        rows.push(row_of(&c[0], &c[1], &c[2]));
    }
    Ok(rows)
}

/// The geometric means at each oversubscription of `oversubs`.
pub fn summaries_of(oversubs: &[f64], rows: &[SweepRow]) -> Vec<SweepSummary> {
    oversubs
        .iter()
        .map(|&o| {
            let rs: Vec<&SweepRow> = rows.iter().filter(|r| r.oversubscription == o).collect();
            let n = rs.len().max(1) as f64;
            let geo = |f: &dyn Fn(&SweepRow) -> f64| geomean_speedup(rs.iter().map(|r| f(r)));
            SweepSummary {
                oversubscription: o,
                forest_geomean_speedup: geo(&|r| r.forest_speedup),
                specforest_geomean_speedup: geo(&|r| r.specforest_speedup),
                mean_profiling_steps_forest: rs
                    .iter()
                    .map(|r| r.profiling_steps_forest as f64)
                    .sum::<f64>()
                    / n,
                mean_profiling_steps_specforest: rs
                    .iter()
                    .map(|r| r.profiling_steps_specforest as f64)
                    .sum::<f64>()
                    / n,
            }
        })
        .collect()
}

/// Run the sweep, runs spread over the machine's cores (`MCMVM_THREADS` caps them).
pub fn sweep_forest(opts: &SweepOptions) -> Result<SweepReport, UvmError> {
    let jobs = forest_jobs(opts)?;
    let runs = run_parallel(&jobs, |job| {
        let r = run_forest_job(opts, job);
        if let Some(p) = &opts.progress.0 {
            p();
        }
        r
    })?;
    let parts: Vec<RunPart> = runs.iter().map(RunPart::of).collect();
    let rows: Vec<SweepRow> = parts
        .chunks(3)
        .filter_map(|c| match c {
            [t, f, s] => Some(row_of(t, f, s)),
            _ => None,
        })
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

/// Run `f` over `jobs` on a few threads; results in job order, first error wins.
pub(super) fn run_parallel<J: Sync, R: Send>(
    jobs: &[J],
    f: impl Fn(&J) -> Result<R, UvmError> + Sync,
) -> Result<Vec<R>, UvmError> {
    let threads = std::env::var("MCMVM_THREADS")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .unwrap_or_else(|| {
            std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1)
        })
        .clamp(1, jobs.len().max(1));
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<Result<R, UvmError>>>> =
        Mutex::new((0..jobs.len()).map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= jobs.len() {
                    break;
                }
                let r = f(&jobs[i]);
                if let Ok(mut v) = results.lock() {
                    v[i] = Some(r);
                }
            });
        }
    });
    let results = results
        .into_inner()
        .map_err(|_| UvmError::Io("a sweep worker panicked".into()))?;
    results
        .into_iter()
        .map(|r| r.unwrap_or_else(|| Err(UvmError::Io("a sweep run did not finish".into()))))
        .collect()
}

/// A sweep's tables without its runs' full metrics: what a merge of separate jobs
/// rebuilds from their [`RunPart`]s.
#[derive(Debug, Clone, Serialize)]
pub struct SweepTables {
    pub seed: u64,
    pub scale: f64,
    pub rows: Vec<SweepRow>,
    pub summaries: Vec<SweepSummary>,
}

impl SweepReport {
    /// The report's tables (a copy, without the runs).
    pub fn tables(&self) -> SweepTables {
        SweepTables {
            seed: self.seed,
            scale: self.scale,
            rows: self.rows.clone(),
            summaries: self.summaries.clone(),
        }
    }

    /// `forest.csv` (one row per workload × oversubscription) and `forest.json` (all).
    pub fn write(&self, dir: &std::path::Path) -> Result<(), UvmError> {
        let runs = self
            .runs
            .iter()
            .map(serde_json::to_string_pretty)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| UvmError::Io(e.to_string()))?;
        self.tables().write(dir, &runs)
    }

    /// The terminal table.
    pub fn table(&self) -> String {
        self.tables().table()
    }
}

impl SweepTables {
    /// `forest.csv` and `forest.json`, the latter with `runs`: each run's metrics as pretty
    /// JSON, in job order.
    pub fn write(&self, dir: &std::path::Path, runs: &[String]) -> Result<(), UvmError> {
        let io = |e: std::io::Error| UvmError::Io(format!("{}: {e}", dir.display()));
        std::fs::create_dir_all(dir).map_err(io)?;
        std::fs::write(dir.join("forest.csv"), self.csv()).map_err(io)?;
        std::fs::write(dir.join("forest.json"), self.json(runs)?).map_err(io)?;
        Ok(())
    }

    /// `forest.json`: byte for byte what serde_json writes for the [`SweepReport`] whose
    /// `runs` have the pretty JSON texts `runs`.
    pub fn json(&self, runs: &[String]) -> Result<String, UvmError> {
        let head = serde_json::to_string_pretty(self).map_err(|e| UvmError::Io(e.to_string()))?;
        let head = head.strip_suffix("\n}").unwrap_or(&head);
        Ok(format!(
            "{head},\n  \"runs\": {}\n}}",
            crate::gpu::sweep::pretty_array(runs, 1)
        ))
    }

    /// `forest.csv`: one row per workload × oversubscription.
    pub fn csv(&self) -> String {
        let mut csv = String::from(
            "workload,oversub,tbnp_cycles,forest_cycles,specforest_cycles,forest_speedup,specforest_speedup,\
far_faults_tbnp,far_faults_forest,far_faults_specforest,unused_pct_tbnp,unused_pct_forest,unused_pct_specforest,\
thrash_x_tbnp,thrash_x_forest,thrash_x_specforest,profiling_steps_forest,profiling_steps_specforest,classes\n",
        );
        for r in &self.rows {
            csv.push_str(&format!(
                "{},{},{},{},{},{:.4},{:.4},{},{},{},{:.2},{:.2},{:.2},{:.4},{:.4},{:.4},{},{},{}\n",
                r.workload, r.oversubscription, r.tbnp_cycles, r.forest_cycles, r.specforest_cycles,
                r.forest_speedup, r.specforest_speedup, r.far_faults[0], r.far_faults[1], r.far_faults[2],
                r.unused_prefetch_pct[0], r.unused_prefetch_pct[1], r.unused_prefetch_pct[2],
                r.thrash_multiple[0], r.thrash_multiple[1], r.thrash_multiple[2],
                r.profiling_steps_forest, r.profiling_steps_specforest, r.classes
            ));
        }
        csv
    }

    /// The terminal table.
    pub fn table(&self) -> String {
        let mut s = format!(
            "{:<10} {:>6} {:>8} {:>8} | {:>9} {:>9} {:>9} | {:>6} {:>6} {:>6} | {:>6} {:>6} {:>6} | {:>6} {:>5}  classes (forest)\n",
            "workload", "oversub", "forest", "spec", "faults:T", "F", "S", "unus%T", "F", "S", "thr×T", "F", "S", "steps", "specS"
        );
        for r in &self.rows {
            s.push_str(&format!(
                "{:<10} {:>6.2} {:>7.2}x {:>7.2}x | {:>9} {:>9} {:>9} | {:>6.1} {:>6.1} {:>6.1} | {:>6.2} {:>6.2} {:>6.2} | {:>6} {:>5}  {}\n",
                r.workload, r.oversubscription, r.forest_speedup, r.specforest_speedup,
                r.far_faults[0], r.far_faults[1], r.far_faults[2],
                r.unused_prefetch_pct[0], r.unused_prefetch_pct[1], r.unused_prefetch_pct[2],
                r.thrash_multiple[0], r.thrash_multiple[1], r.thrash_multiple[2],
                r.profiling_steps_forest, r.profiling_steps_specforest, short_classes(&r.classes)
            ));
        }
        for m in &self.summaries {
            s.push_str(&format!(
                "geomean at oversub {:.2}: forest {:.3}x, specforest {:.3}x over tbnp; mean profiling steps forest {:.1}, specforest {:.1}\n",
                m.oversubscription, m.forest_geomean_speedup, m.specforest_geomean_speedup,
                m.mean_profiling_steps_forest, m.mean_profiling_steps_specforest
            ));
        }
        s
    }
}

/// The classes column of the terminal table: every classified object, and only a count of
/// the objects the detector never classified (a DL network has hundreds, mostly beyond the
/// ATT's table). The CSV and JSON keep the full list.
fn short_classes(classes: &str) -> String {
    let (named, unclassified): (Vec<&str>, Vec<&str>) =
        classes.split(' ').partition(|c| !c.ends_with(":-"));
    let mut out = named.join(" ");
    if !unclassified.is_empty() && !classes.is_empty() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(&format!("+{} unclassified", unclassified.len()));
    }
    out
}

/// Geometric mean of speed-ups (1 when there are none); a speed-up of 0 (a run with no
/// cycles) counts as 1e-12 rather than sending the mean to 0.
pub(super) fn geomean_speedup(speedups: impl ExactSizeIterator<Item = f64>) -> f64 {
    let n = speedups.len().max(1) as f64;
    (speedups.map(|s| s.max(1e-12).ln()).sum::<f64>() / n).exp()
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
        ];
        let rows = rows_of(&ps).unwrap();
        assert_eq!(rows[0].forest_speedup, 2.0);
        let summaries = summaries_of(&[1.5], &rows);
        let runs = vec![UvmMetrics::default(); 3];
        let report = SweepReport {
            seed: 7,
            scale: 0.02,
            rows,
            summaries,
            runs,
        };
        let texts = vec![serde_json::to_string_pretty(&report.runs[0]).unwrap(); 3];
        let expected = serde_json::to_string_pretty(&report).unwrap();
        assert_eq!(report.tables().json(&texts).unwrap(), expected);
    }

    #[test]
    fn rows_need_whole_triples_in_job_order() {
        let [t, f, s] = ["tbnp", "forest", "specforest"].map(|p| part("bfs", p, 9));
        let e = rows_of(&[t.clone(), f.clone()]);
        assert!(matches!(e, Err(PartsError::Incomplete(2))));
        let e = rows_of(&[t, s, f]).unwrap_err().to_string();
        assert!(e.contains("run 1 is bfs at 1.5 under specforest"), "{e}");
    }

    #[test]
    fn table_lists_classified_objects_and_counts_the_rest() {
        assert_eq!(short_classes("a:LC b:HCLI"), "a:LC b:HCLI");
        assert_eq!(short_classes("a:- b:HCHI c:-"), "b:HCHI +2 unclassified");
        assert_eq!(short_classes("a:- b:-"), "+2 unclassified");
        assert_eq!(short_classes(""), "");
    }
}
