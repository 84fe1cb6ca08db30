//! The Forest sweep's outputs: `forest.csv`, `forest.json` and the terminal tables (one
//! row per workload × oversubscription; the oversubscription curve of geometric means, with
//! and without each policy's largest outlier).

use super::sweep::{SweepReport, SweepRow, SweepSummary, COMPARED};
use super::UvmError;
use serde::Serialize;

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
            .map_err(|source| UvmError::Json {
                what: "a run's metrics",
                source,
            })?;
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
        let io = |source| UvmError::Io {
            path: dir.to_path_buf(),
            source,
        };
        std::fs::create_dir_all(dir).map_err(io)?;
        std::fs::write(dir.join("forest.csv"), self.csv()).map_err(io)?;
        std::fs::write(dir.join("forest.json"), self.json(runs)?).map_err(io)?;
        Ok(())
    }

    /// `forest.json`: byte for byte what serde_json writes for the [`SweepReport`] whose
    /// `runs` have the pretty JSON texts `runs`.
    pub fn json(&self, runs: &[String]) -> Result<String, UvmError> {
        let head = serde_json::to_string_pretty(self).map_err(|source| UvmError::Json {
            what: "the Forest sweep's tables",
            source,
        })?;
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
thrash_x_tbnp,thrash_x_forest,thrash_x_specforest,profiling_steps_forest,profiling_steps_specforest,\
forest_lru_cycles,tbnp_aae_cycles,forest_lru_speedup,tbnp_aae_speedup,far_faults_forest_lru,far_faults_tbnp_aae,\
unused_pct_forest_lru,unused_pct_tbnp_aae,thrash_x_forest_lru,thrash_x_tbnp_aae,profiling_steps_forest_lru,classes,\
forest_log_share,tbnp_thrashes\n",
        );
        for r in &self.rows {
            let (f, u, t) = (&r.far_faults, &r.unused_prefetch_pct, &r.thrash_multiple);
            csv.push_str(&format!(
                "{},{},{},{},{},{:.4},{:.4},{},{},{},{:.2},{:.2},{:.2},{:.4},{:.4},{:.4},{},{},\
{},{},{:.4},{:.4},{},{},{:.2},{:.2},{:.4},{:.4},{},{},{},{}\n",
                r.workload,
                r.oversubscription,
                r.tbnp_cycles,
                r.forest_cycles,
                r.specforest_cycles,
                r.forest_speedup,
                r.specforest_speedup,
                f[0],
                f[1],
                f[2],
                u[0],
                u[1],
                u[2],
                t[0],
                t[1],
                t[2],
                r.profiling_steps_forest,
                r.profiling_steps_specforest,
                r.forest_lru_cycles,
                r.tbnp_aae_cycles,
                r.forest_lru_speedup,
                r.tbnp_aae_speedup,
                f[3],
                f[4],
                u[3],
                u[4],
                t[3],
                t[4],
                r.profiling_steps_forest_lru,
                r.classes,
                self.forest_log_share(r)
                    .map_or_else(String::new, |s| format!("{s:.6}")),
                super::means::tbnp_thrashes(t[0]),
            ));
        }
        csv
    }

    /// The terminal tables: one row per workload × oversubscription, then the curve.
    pub fn table(&self) -> String {
        let mut s = format!(
            "{:<10} {:>6} {:>8} {:>8} {:>8} {:>8} | {:>9} {:>9} {:>9} {:>9} {:>9} | {:>6} {:>6} {:>6} {:>6} {:>6} | {:>6} {:>5}  classes (forest)\n",
            "workload", "oversub", "forest", "spec", "f-lru", "t-aae", "faults:T", "F", "S", "L", "A",
            "thr×T", "F", "S", "L", "A", "steps", "specS"
        );
        for r in &self.rows {
            let (f, t) = (&r.far_faults, &r.thrash_multiple);
            s.push_str(&format!(
                "{:<10} {:>6.2} {:>7.2}x {:>7.2}x {:>7.2}x {:>7.2}x | {:>9} {:>9} {:>9} {:>9} {:>9} | {:>6.2} {:>6.2} {:>6.2} {:>6.2} {:>6.2} | {:>6} {:>5}  {}\n",
                r.workload, r.oversubscription, r.forest_speedup, r.specforest_speedup,
                r.forest_lru_speedup, r.tbnp_aae_speedup, f[0], f[1], f[2], f[3], f[4],
                t[0], t[1], t[2], t[3], t[4],
                r.profiling_steps_forest, r.profiling_steps_specforest, short_classes(&r.classes)
            ));
        }
        s.push_str(
            "(L = forest-lru: Forest's trees, the baseline's fault-order LRU; A = tbnp-aae: \
TBNp's trees, Forest's access-aware eviction)\n",
        );
        s.push_str(&curve_table(&self.summaries));
        s.push_str(&means_table(&self.summaries));
        s.push_str(&paper_table(&self.summaries, &self.rows));
        s
    }

    /// Row `r`'s share of Forest's log-geomean at its oversubscription.
    fn forest_log_share(&self, r: &SweepRow) -> Option<f64> {
        let m = self
            .summaries
            .iter()
            .find(|m| m.oversubscription == r.oversubscription)?;
        m.forest_means
            .shares
            .iter()
            .find(|(w, _)| *w == r.workload)
            .and_then(|s| s.1)
    }
}

/// Per oversubscription: each workload's share of Forest's log-geomean over TBNp, and the
/// geomean without the workloads where TBNp thrashes beyond 10× the footprint.
pub fn means_table(summaries: &[SweepSummary]) -> String {
    let mut s = String::new();
    for m in summaries {
        let f = &m.forest_means;
        let shares: Vec<String> = f
            .shares
            .iter()
            .map(|(w, x)| format!("{w} {}", super::means::share_cell(*x)))
            .collect();
        s.push_str(&format!(
            "forest's share of its log-geomean at oversub {:.2}: {}\n",
            m.oversubscription,
            shares.join(", ")
        ));
        let left_out = if f.tbnp_thrashing.is_empty() {
            "none".to_string()
        } else {
            f.tbnp_thrashing.join(", ")
        };
        s.push_str(&format!(
            "forest geomean at oversub {:.2}: {:.3}x; without the workloads where tbnp \
             thrashes > {}x the footprint ({left_out}): {:.3}x\n",
            m.oversubscription,
            f.geomean,
            super::means::THRASH_LIMIT,
            f.geomean_without_thrashing
        ));
    }
    s
}

/// Geometric means over TBNp per oversubscription × policy, over every workload and
/// without each policy's largest outlier (the speed-up farthest from 1, named), then the
/// mean profiling steps.
pub fn curve_table(summaries: &[SweepSummary]) -> String {
    let mut s = format!("{:<8}", "oversub");
    for p in COMPARED {
        s.push_str(&format!(" {:>11}", p.name()));
    }
    s.push_str(" | without the largest outlier:");
    for p in COMPARED {
        s.push_str(&format!(" {:>18}", p.name()));
    }
    s.push('\n');
    for m in summaries {
        s.push_str(&format!("{:<8.2}", m.oversubscription));
        for g in m.geomeans() {
            s.push_str(&format!(" {:>10.3}x", g));
        }
        s.push_str(&format!(" | {:29}", ""));
        for w in &m.without_outlier {
            let cell = match &w.outlier {
                Some(o) => format!("{:.3}x -{o}", w.geomean_speedup),
                None => format!("{:.3}x", w.geomean_speedup),
            };
            s.push_str(&format!(" {cell:>18}"));
        }
        s.push('\n');
    }
    for m in summaries {
        s.push_str(&format!(
            "geomean at oversub {:.2}: forest {:.3}x, specforest {:.3}x, forest-lru {:.3}x, tbnp-aae {:.3}x over tbnp; mean profiling steps forest {:.1}, specforest {:.1}, forest-lru {:.1}\n",
            m.oversubscription, m.forest_geomean_speedup, m.specforest_geomean_speedup,
            m.forest_lru_geomean_speedup, m.tbnp_aae_geomean_speedup,
            m.mean_profiling_steps_forest, m.mean_profiling_steps_specforest,
            m.mean_profiling_steps_forest_lru
        ));
    }
    s
}

/// The Forest paper's figures (ISCA 2025, on its Turing GPU): geometric-mean speed-ups over
/// TBNp of Forest and SpecForest at 150 % (1.72x, 1.86x), SpecForest at 125 % and 200 %
/// (1.57x, 1.95x), and the mean profiling steps of Forest and SpecForest (223, 10).
const PAPER: [(f64, &str, f64); 4] = [
    (1.5, "forest", 1.72),
    (1.5, "specforest", 1.86),
    (1.25, "specforest", 1.57),
    (2.0, "specforest", 1.95),
];

/// The paper's figures beside ours, for the oversubscriptions `summaries` has (none: an
/// empty string). The ablations have no figure in the paper.
pub fn paper_table(summaries: &[SweepSummary], rows: &[SweepRow]) -> String {
    let at = |o: f64| summaries.iter().find(|m| m.oversubscription == o);
    let mut s = String::new();
    for (o, policy, paper) in PAPER {
        let Some(m) = at(o) else { continue };
        let ours = if policy == "forest" {
            m.forest_geomean_speedup
        } else {
            m.specforest_geomean_speedup
        };
        s.push_str(&format!(
            "{:<44} {:>9.2}x {:>13.3}x\n",
            format!("{policy} over tbnp at {:.0} % (geomean)", o * 100.0),
            paper,
            ours
        ));
    }
    // The paper's SpecForest-on-DL figure (1.51x on average over its networks) beside the
    // geometric mean over the DL networks this sweep ran at 150 %.
    let dl: Vec<f64> = rows
        .iter()
        .filter(|r| r.oversubscription == 1.5)
        .filter(|r| crate::workload::dl_networks().contains(&r.workload.as_str()))
        .map(|r| r.specforest_speedup)
        .collect();
    if !dl.is_empty() {
        let g = crate::stats::geomean_or_one(&dl);
        s.push_str(&format!(
            "{:<44} {:>9.2}x {:>13.3}x\n",
            format!("specforest over tbnp on {} DL networks", dl.len()),
            1.51,
            g
        ));
    }
    if let Some(m) = at(1.5) {
        s.push_str(&format!(
            "{:<44} {:>10} {:>14}\n",
            "mean profiling steps, forest -> specforest",
            "223 -> 10",
            format!(
                "{:.1} -> {:.1}",
                m.mean_profiling_steps_forest, m.mean_profiling_steps_specforest
            )
        ));
    }
    if s.is_empty() {
        return s;
    }
    format!(
        "the paper's figures beside ours:\n{:<44} {:>10} {:>14}\n{s}",
        "figure", "paper", "mcmvm"
    )
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

#[cfg(test)]
mod tests {
    use super::short_classes;

    #[test]
    fn table_lists_classified_objects_and_counts_the_rest() {
        assert_eq!(short_classes("a:LC b:HCLI"), "a:LC b:HCLI");
        assert_eq!(short_classes("a:- b:HCHI c:-"), "b:HCHI +2 unclassified");
        assert_eq!(short_classes("a:- b:-"), "+2 unclassified");
        assert_eq!(short_classes(""), "");
    }
}
