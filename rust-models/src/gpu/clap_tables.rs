//! Tables of the CLAP study beyond Figure 18 and Table 4: the workloads' Table 2 (from
//! the main sweep's s4k, s64k and s2m runs), the 8-chiplet comparison (Fig. 22) and the
//! paper's headline figures beside ours. Each has a text form, a CSV and serde JSON.

use super::clap_extras::{ExtraRun, Sensitivity, Variant};
use super::sweep::{geomean, RunSummary};
use crate::driver::PolicyKind;
use serde::Serialize;
use std::fmt::Write;

/// The page-size policies of Table 2's columns.
pub const TABLE2_POLICIES: [&str; 3] = ["s4k", "s64k", "s2m"];

/// `num * 1000 / den` (None when `den` is 0).
pub fn per_kilo(num: u64, den: u64) -> Option<f64> {
    (den > 0).then(|| num as f64 * 1000.0 / den as f64)
}

/// One workload of Table 2.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Table2Row {
    pub workload: String,
    /// Bytes of all its data structures.
    pub footprint_bytes: u64,
    /// The kernel that ran longest under s64k and its thread blocks.
    pub dominant_kernel: Option<(String, u32)>,
    /// L2 cache misses per 1000 warp instructions under s4k, s64k, s2m.
    pub l2_cache_mpki: [Option<f64>; 3],
    /// L2 TLB misses (every page-size class) per 1000 warp instructions.
    pub l2_tlb_mpki: [Option<f64>; 3],
    /// Remote-access ratio of line accesses.
    pub remote_ratio: [Option<f64>; 3],
    /// Under s64k: the Remote Tracker's similarity to the true remote ratio and the
    /// chiplet locality of the structures (CLAP §4.3 and §3.4; not in the paper's Table 2).
    pub rt_similarity: Option<f64>,
    pub chiplet_locality: Option<f64>,
}

fn find<'a>(runs: &'a [RunSummary], w: &str, p: &str) -> Option<&'a RunSummary> {
    runs.iter().find(|r| r.workload == w && r.policy == p)
}

fn workloads(runs: &[RunSummary]) -> Vec<String> {
    let mut ws: Vec<String> = Vec::new();
    for r in runs {
        if !ws.contains(&r.workload) {
            ws.push(r.workload.clone());
        }
    }
    ws
}

/// Table 2 from the main sweep's runs (a policy the sweep did not run gives `-`).
pub fn table2(runs: &[RunSummary]) -> Vec<Table2Row> {
    workloads(runs)
        .into_iter()
        .map(|w| {
            let per = |f: &dyn Fn(&RunSummary) -> Option<f64>| {
                TABLE2_POLICIES.map(|p| find(runs, &w, p).and_then(f))
            };
            let any = runs.iter().find(|r| r.workload == w);
            let kernel_run = find(runs, &w, "s64k").or(any);
            Table2Row {
                footprint_bytes: any.map_or(0, |r| r.allocs.iter().map(|a| a.bytes).sum()),
                dominant_kernel: kernel_run.and_then(|r| r.dominant_kernel.clone()),
                l2_cache_mpki: per(&|r| per_kilo(r.l2_cache_misses, r.warp_instrs)),
                l2_tlb_mpki: per(&|r| per_kilo(r.l2_tlb_misses, r.warp_instrs)),
                remote_ratio: per(&|r| Some(r.remote_ratio)),
                rt_similarity: find(runs, &w, "s64k").and_then(|r| r.rt_similarity),
                chiplet_locality: find(runs, &w, "s64k").and_then(|r| r.chiplet_locality),
                workload: w,
            }
        })
        .collect()
}

fn cells(xs: &[Option<f64>; 3], f: impl Fn(f64) -> String) -> String {
    xs.iter()
        .map(|x| x.map_or("-".into(), &f))
        .collect::<Vec<_>>()
        .join(" / ")
}

/// A percentage with one decimal, `-` when not measured.
fn one(x: Option<f64>) -> String {
    x.map_or("-".into(), |x| format!("{:.1}", 100.0 * x))
}

/// Table 2 as text.
pub fn table2_text(rows: &[Table2Row]) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "Table 2: workloads; MPKI = misses per 1000 warp instructions, each under s4k / s64k / s2m"
    );
    let _ = writeln!(
        s,
        "{:<15} {:>10} {:>24} {:>26} {:>26} {:>22} {:>9} {:>10}",
        "workload",
        "footprint",
        "dominant kernel (TBs)",
        "L2 cache MPKI",
        "L2 TLB MPKI",
        "remote %",
        "RT sim %",
        "locality %"
    );
    for r in rows {
        let kernel = r
            .dominant_kernel
            .as_ref()
            .map_or("-".into(), |(k, tbs)| format!("{k} ({tbs})"));
        let _ = writeln!(
            s,
            "{:<15} {:>7.1} MB {:>24} {:>26} {:>26} {:>22} {:>9} {:>10}",
            r.workload,
            r.footprint_bytes as f64 / 1048576.0,
            kernel,
            cells(&r.l2_cache_mpki, |x| format!("{x:.2}")),
            cells(&r.l2_tlb_mpki, |x| format!("{x:.2}")),
            cells(&r.remote_ratio, |x| format!("{:.1}", 100.0 * x)),
            one(r.rt_similarity),
            one(r.chiplet_locality),
        );
    }
    s
}

/// Table 2 as CSV.
pub fn table2_csv(rows: &[Table2Row]) -> String {
    let mut s = String::from("workload,footprint_bytes,dominant_kernel,dominant_kernel_tbs");
    for what in ["l2_cache_mpki", "l2_tlb_mpki", "remote_ratio"] {
        for p in TABLE2_POLICIES {
            let _ = write!(s, ",{what}_{}", &p[1..]);
        }
    }
    s.push_str(",rt_similarity_64k,chiplet_locality_64k\n");
    let num = |x: &Option<f64>| x.map_or(String::new(), |x| format!("{x:.6}"));
    for r in rows {
        let (k, tbs) = r
            .dominant_kernel
            .as_ref()
            .map_or((String::new(), String::new()), |(k, t)| {
                (k.clone(), t.to_string())
            });
        let _ = write!(s, "{},{},{k},{tbs}", r.workload, r.footprint_bytes);
        for xs in [&r.l2_cache_mpki, &r.l2_tlb_mpki, &r.remote_ratio] {
            for x in xs {
                let _ = write!(s, ",{}", num(x));
            }
        }
        let _ = write!(s, ",{},{}", num(&r.rt_similarity), num(&r.chiplet_locality));
        s.push('\n');
    }
    s
}

/// One workload's row of the 8-chiplet table: per policy (speed-up over s64k, remote
/// ratio), `None` where that run is missing.
pub type Chiplets8Row = (String, Vec<Option<(f64, f64)>>);

/// The 8-chiplet runs: per workload each policy's speed-up over s64k and remote ratio.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Chiplets8 {
    pub policies: Vec<String>,
    /// Per workload and policy: (speed-up over s64k, remote ratio).
    pub rows: Vec<Chiplets8Row>,
    /// Per policy: geometric-mean speed-up over s64k.
    pub geomeans: Vec<Option<f64>>,
    /// CLAP's geometric-mean speed-up over s64k and over s2m, minus 1.
    pub clap_over_s64k: Option<f64>,
    pub clap_over_s2m: Option<f64>,
}

/// The 8-chiplet table from the extra runs.
pub fn chiplets8(runs: &[ExtraRun], policies: &[PolicyKind]) -> Chiplets8 {
    let mine: Vec<RunSummary> = runs
        .iter()
        .filter(|(j, _)| j.variant == Variant::Chiplets8)
        .map(|(_, r)| r.clone())
        .collect();
    let ws = workloads(&mine);
    let sp = |w: &str, p: &str, base: &str| {
        let (b, r) = (find(&mine, w, base)?, find(&mine, w, p)?);
        (r.cycles > 0).then(|| b.cycles as f64 / r.cycles as f64)
    };
    let gm = |p: &str, base: &str| {
        let xs: Vec<f64> = ws.iter().filter_map(|w| sp(w, p, base)).collect();
        geomean(&xs)
    };
    let names: Vec<String> = policies.iter().map(|p| p.name().to_string()).collect();
    Chiplets8 {
        rows: ws
            .iter()
            .map(|w| {
                let cells = names
                    .iter()
                    .map(|p| Some((sp(w, p, "s64k")?, find(&mine, w, p)?.remote_ratio)))
                    .collect();
                (w.clone(), cells)
            })
            .collect(),
        geomeans: names.iter().map(|p| gm(p, "s64k")).collect(),
        clap_over_s64k: gm("clap", "s64k").map(|g| g - 1.0),
        clap_over_s2m: gm("clap", "s2m").map(|g| g - 1.0),
        policies: names,
    }
}

fn signed(x: Option<f64>) -> String {
    x.map_or("-".into(), |x| format!("{:+.1}%", 100.0 * x))
}

impl Chiplets8 {
    /// As text, with the paper's Fig. 22 figures.
    pub fn text(&self) -> String {
        let mut s = String::new();
        let _ = write!(s, "{:<15}", "workload");
        for p in &self.policies {
            let _ = write!(s, " {:>16}", p);
        }
        s.push('\n');
        for (w, cells) in &self.rows {
            let _ = write!(s, "{w:<15}");
            for c in cells {
                let cell = c.map_or("-".into(), |(x, r)| format!("{x:.3} ({:>5.1}%)", 100.0 * r));
                let _ = write!(s, " {cell:>16}");
            }
            s.push('\n');
        }
        let _ = write!(s, "{:<15}", "geomean");
        for g in &self.geomeans {
            let _ = write!(s, " {:>16}", g.map_or("-".into(), |g| format!("{g:.3}")));
        }
        s.push('\n');
        let _ = writeln!(
            s,
            "CLAP vs s64k {} (paper +13.3%), vs s2m {} (paper +21.5%) on 8 chiplets",
            signed(self.clap_over_s64k),
            signed(self.clap_over_s2m)
        );
        s
    }

    /// `workload,policy,speedup_over_s64k,remote_ratio`, then the geomean rows.
    pub fn csv(&self) -> String {
        let mut s = String::from("workload,policy,speedup_over_s64k,remote_ratio\n");
        for (w, cells) in &self.rows {
            for (p, c) in self.policies.iter().zip(cells) {
                let (x, r) = c.map_or((String::new(), String::new()), |(x, r)| {
                    (format!("{x:.6}"), format!("{r:.6}"))
                });
                let _ = writeln!(s, "{w},{p},{x},{r}");
            }
        }
        for (p, g) in self.policies.iter().zip(&self.geomeans) {
            let g = g.map_or(String::new(), |g| format!("{g:.6}"));
            let _ = writeln!(s, "geomean,{p},{g},");
        }
        s
    }
}

/// One of the paper's figures beside ours.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PaperFigure {
    pub figure: &'static str,
    /// As a fraction (0.175 = 17.5 %).
    pub paper: f64,
    pub ours: Option<f64>,
    /// Ours minus the paper's, in fractions.
    pub difference: Option<f64>,
}

/// The geometric mean over `ws` of `policy`'s speed-up over `base` (base cycles / its
/// cycles), over the workloads that ran both.
fn geomean_over(runs: &[RunSummary], ws: &[String], policy: &str, base: &str) -> Option<f64> {
    let xs: Vec<f64> = ws
        .iter()
        .filter_map(|w| {
            let (b, r) = (find(runs, w, base)?, find(runs, w, policy)?);
            (r.cycles > 0).then(|| b.cycles as f64 / r.cycles as f64)
        })
        .collect();
    geomean(&xs)
}

/// CLAP's headline figures (§5.1, §5.2, §4.2) beside ours: the main runs' geometric
/// means, the 8-chiplet table, the PMM table's 30 % row (None where not run).
pub fn paper_figures(
    runs: &[RunSummary],
    chiplets8: Option<&Chiplets8>,
    pmm: Option<&Sensitivity>,
) -> Vec<PaperFigure> {
    let ws = workloads(runs);
    let gm = |p: &str| geomean_over(runs, &ws, p, "s64k");
    let over = |base: &str| geomean_over(runs, &ws, "clap", base).map(|g| g - 1.0);
    let from_ideal = gm("clap").zip(gm("ideal")).map(|(c, i)| 1.0 - c / i);
    let pmm30 = pmm.and_then(|t| {
        t.rows
            .iter()
            .find(|r| (r.value - 0.30).abs() < 1e-9)
            .and_then(|r| r.vs_default)
    });
    let fig = |figure, paper, ours: Option<f64>| PaperFigure {
        figure,
        paper,
        ours,
        difference: ours.map(|o| o - paper),
    };
    vec![
        fig("CLAP over s64k (geomean)", 0.175, over("s64k")),
        fig("CLAP over s2m (geomean)", 0.192, over("s2m")),
        fig("CLAP below ideal (1 - clap/ideal)", 0.0578, from_ideal),
        fig(
            "8 chiplets: CLAP over s64k",
            0.133,
            chiplets8.and_then(|c| c.clap_over_s64k),
        ),
        fig(
            "8 chiplets: CLAP over s2m",
            0.215,
            chiplets8.and_then(|c| c.clap_over_s2m),
        ),
        fig("PMM 30 % vs 20 %", -0.013, pmm30),
        fig(
            "RT similarity to true ratio (s64k)",
            0.953,
            s64k_mean(runs, |r| r.rt_similarity),
        ),
        fig(
            "chiplet locality (s64k)",
            0.935,
            s64k_mean(runs, |r| r.chiplet_locality),
        ),
    ]
}

/// The mean over workloads of a figure of their s64k runs (CLAP measures RT accuracy
/// and chiplet locality with every structure in 64 KB pages).
pub(crate) fn s64k_mean(runs: &[RunSummary], f: fn(&RunSummary) -> Option<f64>) -> Option<f64> {
    let xs: Vec<f64> = workloads(runs)
        .iter()
        .filter_map(|w| f(find(runs, w, "s64k")?))
        .collect();
    (!xs.is_empty()).then(|| xs.iter().sum::<f64>() / xs.len() as f64)
}

/// The paper comparison as text.
pub fn paper_text(figs: &[PaperFigure]) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{:<36} {:>9} {:>9} {:>12}",
        "figure", "paper", "mcmvm", "difference"
    );
    for f in figs {
        let _ = writeln!(
            s,
            "{:<36} {:>9} {:>9} {:>12}",
            f.figure,
            format!("{:+.2}%", 100.0 * f.paper),
            f.ours.map_or("-".into(), |o| format!("{:+.2}%", 100.0 * o)),
            f.difference
                .map_or("-".into(), |d| format!("{:+.2} pts", 100.0 * d)),
        );
    }
    s
}

/// The paper comparison as CSV.
pub fn paper_csv(figs: &[PaperFigure]) -> String {
    let mut s = String::from("figure,paper,mcmvm,difference\n");
    let num = |x: Option<f64>| x.map_or(String::new(), |x| format!("{x:.6}"));
    for f in figs {
        let _ = writeln!(
            s,
            "{},{:.6},{},{}",
            f.figure,
            f.paper,
            num(f.ours),
            num(f.difference)
        );
    }
    s
}

/// `ideal` is S-64KB's placement with 2 MB translation reach: cheaper translation and
/// nothing else, so s64k should never finish before it. The sweep reports every workload
/// where it does by more than this (as a fraction of ideal's cycles).
pub const IDEAL_TOLERANCE: f64 = 0.005;

/// Workloads where s64k beats its own placement under `ideal` by more than
/// [`IDEAL_TOLERANCE`]: (workload, ideal's cycles over s64k's minus 1).
pub fn ideal_violations(runs: &[RunSummary]) -> Vec<(String, f64)> {
    workloads(runs)
        .into_iter()
        .filter_map(|w| {
            let (base, ideal) = (find(runs, &w, "s64k")?, find(runs, &w, "ideal")?);
            let loss = ideal.cycles as f64 / base.cycles.max(1) as f64 - 1.0;
            (loss > IDEAL_TOLERANCE).then_some((w, loss))
        })
        .collect()
}

/// The check as text: one line when it holds, one line per workload when not.
pub fn ideal_check_text(runs: &[RunSummary]) -> String {
    let bad = ideal_violations(runs);
    if bad.is_empty() {
        return format!(
            "check: no workload runs slower under ideal than under s64k by more than {:.1}%\n",
            100.0 * IDEAL_TOLERANCE
        );
    }
    let mut s = String::new();
    for (w, loss) in bad {
        let _ = writeln!(
            s,
            "check FAILED: {w} is {:.2}% slower under ideal than under s64k (its own placement with cheaper translation; tolerance {:.1}%: see docs/results.md, \"ideal slower than s64k\")",
            100.0 * loss,
            100.0 * IDEAL_TOLERANCE
        );
    }
    s
}

#[cfg(test)]
mod ideal_check_tests {
    use super::*;

    fn run(w: &str, p: &str, cycles: u64) -> RunSummary {
        RunSummary {
            workload: w.into(),
            policy: p.into(),
            cycles,
            ..Default::default()
        }
    }

    #[test]
    fn rt_similarity_and_locality_are_means_of_the_s64k_runs_only() {
        let with = |w: &str, p: &str, sim: Option<f64>, loc: Option<f64>| RunSummary {
            rt_similarity: sim,
            chiplet_locality: loc,
            ..run(w, p, 100)
        };
        let runs = vec![
            with("a", "s64k", Some(0.9), Some(1.0)),
            with("a", "clap", Some(0.1), Some(0.1)),
            with("b", "s64k", Some(0.7), None),
            with("c", "s2m", Some(0.5), Some(0.5)),
        ];
        let figs = paper_figures(&runs, None, None);
        let sim = figs.iter().find(|f| f.figure.starts_with("RT similarity"));
        let loc = figs
            .iter()
            .find(|f| f.figure.starts_with("chiplet locality"));
        assert_eq!(sim.and_then(|f| f.ours), Some((0.9 + 0.7) / 2.0));
        assert_eq!(loc.and_then(|f| f.ours), Some(1.0));
        assert_eq!(loc.map(|f| f.paper), Some(0.935));
        let t2 = table2(&runs);
        assert_eq!(
            (t2[0].rt_similarity, t2[0].chiplet_locality),
            (Some(0.9), Some(1.0))
        );
        assert_eq!(t2[2].rt_similarity, None, "c has no s64k run");
    }

    #[test]
    fn ideal_slower_than_s64k_beyond_the_tolerance_is_reported() {
        let runs = [
            run("a", "s64k", 1000),
            run("a", "ideal", 1004), // 0.4 %: inside
            run("b", "s64k", 1000),
            run("b", "ideal", 1010), // 1 %: reported
            run("c", "s64k", 1000),
            run("c", "ideal", 900),
        ];
        let bad = ideal_violations(&runs);
        assert_eq!(bad.len(), 1);
        assert_eq!(bad[0].0, "b");
        assert!((bad[0].1 - 0.01).abs() < 1e-12);
        assert!(ideal_check_text(&runs).contains("check FAILED: b is 1.00% slower"));
        assert!(ideal_check_text(&runs[..2]).starts_with("check: no workload"));
    }
}
