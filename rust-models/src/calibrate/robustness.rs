//! A range on every headline (issue #38 item 4): the mechanisms' figures against their
//! baselines, run over the plausible box of the unknown parameters ([`super::params`]; its
//! corners or a Latin hypercube, [`super::design`]) instead of at the shipped values only.
//! These are *predictions*: measured over the box, never fitted.
//!
//! `mcmvm sweep --robustness` runs the points as an ordinary planned, shardable sweep;
//! this module holds what is independent of how the runs ran: the headlines with the
//! paper's figures, a point's CLAP figures from its runs, and the ranges. The range of a
//! headline is the lowest and highest figure over the points, with the point that gives
//! each; one whose range holds 1 (a gain at one end of the box, a loss at the other) is
//! flagged: its sign is not the model's to tell.

use super::targets::{Target, TARGETS};
use crate::driver::PolicyKind;
use crate::gpu::clap_tables::s64k_mean;
use crate::gpu::sweep::RunSummary;
use crate::uvm::means::tbnp_thrashes;
use crate::uvm::sweep::RunPart;
use crate::uvm::UvmPolicy;
use crate::workload::dl_networks;
use serde::Serialize;

/// CLAP §5.1's headline figures, as speed-ups (clap over ideal = 1 − 0.0578), then ideal
/// over S-64KB, the baseline ratio the fit aims at (so its range sits beside CLAP's).
pub const HEADLINES: [Target; 4] = [
    Target {
        id: "clap_over_s64k",
        figure: "CLAP over S-64KB (geomean speed-up)",
        paper: 1.175,
        derivation: "CLAP +17.5 % over S-64KB",
        section: "§5.1",
        policy: PolicyKind::Clap,
        base: PolicyKind::S64k,
        weight: 1.0,
    },
    Target {
        id: "clap_over_s2m",
        figure: "CLAP over S-2MB (geomean speed-up)",
        paper: 1.192,
        derivation: "CLAP +19.2 % over S-2MB",
        section: "§5.1",
        policy: PolicyKind::Clap,
        base: PolicyKind::S2m,
        weight: 1.0,
    },
    Target {
        id: "clap_over_ideal",
        figure: "CLAP over ideal (geomean speed-up; 1 − the distance from ideal)",
        paper: 1.0 - 0.0578,
        derivation: "CLAP 5.78 % below ideal, read as 1 - clap/ideal",
        section: "§5.1",
        policy: PolicyKind::Clap,
        base: PolicyKind::Ideal,
        weight: 1.0,
    },
    TARGETS[0],
];

/// What a headline's number is, which decides how it reads and whether "its sign flips"
/// means anything.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Unit {
    /// A ratio of cycles (1.175 = +17.5 %): a gain above 1, a loss below.
    Speedup,
    /// A fraction in [0, 1] (0.953 = 95.3 %): a rate, with no sign to flip.
    Share,
    /// A mean count (profiling steps per workload): no sign to flip.
    Count,
}

/// One headline figure: what it is, the paper's value, and its unit.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Headline {
    pub id: &'static str,
    pub figure: &'static str,
    pub paper: f64,
    pub unit: Unit,
}

impl Headline {
    pub const fn of(t: &Target) -> Headline {
        Headline {
            id: t.id,
            figure: t.figure,
            paper: t.paper,
            unit: Unit::Speedup,
        }
    }
}

/// CLAP's mechanism-level figures (§4.3, §3.4), measured as the paper does with every
/// structure in 64 KB pages: the mean over workloads of the RT estimate's similarity to
/// each structure's true remote ratio, and of the chiplet locality of accesses. Each point's
/// values come from its s64k runs ([`clap_share_figures`]).
pub const CLAP_SHARE_HEADLINES: [Headline; 2] = [
    Headline {
        id: "rt_similarity_s64k",
        figure: "RT estimate's similarity to the true remote ratio (s64k, mean)",
        paper: 0.953,
        unit: Unit::Share,
    },
    Headline {
        id: "locality_s64k",
        figure: "chiplet locality of accesses (s64k, mean)",
        paper: 0.935,
        unit: Unit::Share,
    },
];

/// A point's [`CLAP_SHARE_HEADLINES`] from its runs (None where no s64k run has one).
pub fn clap_share_figures(runs: &[RunSummary]) -> Vec<Option<f64>> {
    vec![
        s64k_mean(runs, |r| r.rt_similarity),
        s64k_mean(runs, |r| r.chiplet_locality),
    ]
}

/// The Forest paper's headline figures at 150 % oversubscription (geomean speed-ups over
/// TBNp): predictions, never fitted.
pub const FOREST_HEADLINES: [Headline; 2] = [
    Headline {
        id: "forest_over_tbnp",
        figure: "Forest over TBNp at 150 % (geomean speed-up)",
        paper: 1.72,
        unit: Unit::Speedup,
    },
    Headline {
        id: "specforest_over_tbnp",
        figure: "SpecForest over TBNp at 150 % (geomean speed-up)",
        paper: 1.86,
        unit: Unit::Speedup,
    },
];

/// What else the Forest table reports at 150 %, each over the box too: the mean without
/// the workloads where TBNp thrashes (no paper figure: NaN, printed `—`), SpecForest on the
/// DL networks (the paper's 1.51×), and the mean profiling steps of Forest and SpecForest
/// (the paper's 223 and 10). Each point's values: [`forest_extra_figures`].
pub const FOREST_EXTRA_HEADLINES: [Headline; 4] = [
    Headline {
        id: "forest_no_thrash",
        figure: "Forest over TBNp at 150 % where TBNp does not thrash (geomean speed-up)",
        paper: f64::NAN,
        unit: Unit::Speedup,
    },
    Headline {
        id: "specforest_dl",
        figure: "SpecForest over TBNp on the DL networks at 150 % (geomean speed-up)",
        paper: 1.51,
        unit: Unit::Speedup,
    },
    Headline {
        id: "forest_steps",
        figure: "Forest's profiling steps (mean over workloads)",
        paper: 223.0,
        unit: Unit::Count,
    },
    Headline {
        id: "specforest_steps",
        figure: "SpecForest's profiling steps (mean over workloads)",
        paper: 10.0,
        unit: Unit::Count,
    },
];

/// A point's [`FOREST_HEADLINES`] then [`FOREST_EXTRA_HEADLINES`] from its runs at 150 %
/// (None where a run they need is missing or no workload qualifies).
pub fn forest_figures(runs: &[&RunPart]) -> Vec<Option<f64>> {
    // In order of first appearance, as the geomeans have always summed them.
    let mut workloads: Vec<&str> = Vec::new();
    for r in runs {
        if !workloads.contains(&r.workload.as_str()) {
            workloads.push(&r.workload);
        }
    }
    let run = |w: &str, p: UvmPolicy| {
        runs.iter()
            .find(|r| r.workload == w && r.policy == p.name())
    };
    let speedup = |w: &str, p: UvmPolicy| {
        Some(run(w, UvmPolicy::Tbnp)?.cycles as f64 / run(w, p)?.cycles as f64)
    };
    // The geomean of `p` over TBNp on the workloads `keep` admits (None if a run is missing).
    let mean_over = |p: UvmPolicy, keep: &dyn Fn(&str) -> Option<bool>| -> Option<f64> {
        let mut xs = Vec::new();
        for w in &workloads {
            if keep(w)? {
                xs.push(speedup(w, p)?);
            }
        }
        crate::stats::geomean(&xs)
    };
    let no_thrash = |w: &str| Some(!tbnp_thrashes(run(w, UvmPolicy::Tbnp)?.thrash_multiple));
    let dl = |w: &str| Some(dl_networks().contains(&w));
    let steps = |p: UvmPolicy| -> Option<f64> {
        let xs: Option<Vec<f64>> = workloads
            .iter()
            .map(|w| Some(run(w, p)?.profiling_steps as f64))
            .collect();
        let xs = xs?;
        (!xs.is_empty()).then(|| xs.iter().sum::<f64>() / xs.len() as f64)
    };
    let all = |_: &str| Some(true);
    vec![
        mean_over(UvmPolicy::Forest, &all),
        mean_over(UvmPolicy::SpecForest, &all),
        mean_over(UvmPolicy::Forest, &no_thrash),
        mean_over(UvmPolicy::SpecForest, &dl),
        steps(UvmPolicy::Forest),
        steps(UvmPolicy::SpecForest),
    ]
}

/// The oversubscription Forest's headlines are at.
pub const FOREST_OVERSUB: f64 = 1.5;

/// One point of the box and its figure of each headline (None: a run is missing).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PointFigures {
    pub point: usize,
    pub label: String,
    /// The point's `--set KEY=VALUE` overrides (none: the config as given).
    pub settings: Vec<String>,
    pub figures: Vec<Option<f64>>,
}

/// One headline over the box.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Range {
    pub id: &'static str,
    pub figure: &'static str,
    pub paper: f64,
    pub unit: Unit,
    /// At the config as given (point 0).
    pub config: Option<f64>,
    pub low: Option<f64>,
    /// The label of the point that gives `low` (the first, of equals).
    pub low_point: Option<String>,
    pub high: Option<f64>,
    pub high_point: Option<String>,
    /// The range holds 1: a gain at one end of the box, a loss at the other.
    pub sign_flips: bool,
}

/// Each headline's range over `points` (whose `figures` follow `headlines`' order).
pub fn ranges(headlines: &[Headline], points: &[PointFigures]) -> Vec<Range> {
    headlines
        .iter()
        .enumerate()
        .map(|(k, h)| {
            let at = |p: &PointFigures| p.figures.get(k).copied().flatten();
            let xs: Vec<(f64, &str)> = points
                .iter()
                .filter_map(|p| at(p).map(|x| (x, p.label.as_str())))
                .collect();
            let low = xs
                .iter()
                .copied()
                .reduce(|a, b| if b.0 < a.0 { b } else { a });
            let high = xs
                .iter()
                .copied()
                .reduce(|a, b| if b.0 > a.0 { b } else { a });
            Range {
                id: h.id,
                figure: h.figure,
                paper: h.paper,
                unit: h.unit,
                config: points.iter().find(|p| p.point == 0).and_then(at),
                low: low.map(|l| l.0),
                low_point: low.map(|l| l.1.to_string()),
                high: high.map(|h| h.0),
                high_point: high.map(|h| h.1.to_string()),
                sign_flips: h.unit == Unit::Speedup
                    && matches!((low, high), (Some(l), Some(h)) if l.0 < 1.0 && h.0 > 1.0),
            }
        })
        .collect()
}

/// A figure as a percentage (`-`: missing): a speed-up signed, relative to 1; a share as is.
fn pct(unit: Unit, x: Option<f64>) -> String {
    match (unit, x) {
        (_, None) => "-".to_string(),
        // A figure the paper does not give.
        (_, Some(x)) if !x.is_finite() => "—".to_string(),
        (Unit::Speedup, Some(x)) => format!("{:+.1}%", 100.0 * (x - 1.0)),
        (Unit::Share, Some(x)) => format!("{:.1}%", 100.0 * x),
        (Unit::Count, Some(x)) => format!("{x:.1}"),
    }
}

/// The ranges as text: each headline as value [low, high] beside the paper's, the points
/// that give low and high, the sign flag; then each point's settings.
pub fn text(ranges: &[Range], points: &[PointFigures]) -> String {
    let mut s = format!(
        "headlines over the plausible box ({} points; predictions, never fitted)\n\
         {:<21} {:>7} {:>7}  {:<18} {:<22} sign\n",
        points.len(),
        "figure",
        "paper",
        "config",
        "[low, high]",
        "low at / high at"
    );
    for r in ranges {
        let at = format!(
            "{} / {}",
            r.low_point.as_deref().unwrap_or("-"),
            r.high_point.as_deref().unwrap_or("-")
        );
        s.push_str(&format!(
            "{:<21} {:>7} {:>7}  {:<18} {:<22} {}\n",
            r.id,
            pct(r.unit, Some(r.paper)),
            pct(r.unit, r.config),
            format!("[{}, {}]", pct(r.unit, r.low), pct(r.unit, r.high)),
            at,
            match (r.unit, r.sign_flips) {
                (Unit::Share, _) => "(a rate)",
                (Unit::Count, _) => "(a count)",
                (Unit::Speedup, true) => "FLIPS inside the box",
                (Unit::Speedup, false) => "holds",
            }
        ));
    }
    s.push_str("points:\n");
    for p in points {
        let set = if p.settings.is_empty() {
            "(the config as given)".to_string()
        } else {
            p.settings.join(" ")
        };
        s.push_str(&format!("  {:<10} {set}\n", p.label));
    }
    s
}

/// The ranges as CSV, one headline a row (ratios, full precision).
pub fn csv(ranges: &[Range]) -> String {
    let num = |x: Option<f64>| x.map_or(String::new(), |x| format!("{x}"));
    let mut s = String::from("id,paper,config,low,low_point,high,high_point,sign_flips\n");
    for r in ranges {
        s.push_str(&format!(
            "{},{},{},{},{},{},{},{}\n",
            r.id,
            num(Some(r.paper).filter(|p| p.is_finite())),
            num(r.config),
            num(r.low),
            r.low_point.as_deref().unwrap_or(""),
            num(r.high),
            r.high_point.as_deref().unwrap_or(""),
            r.sign_flips
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(point: usize, figures: &[f64]) -> PointFigures {
        PointFigures {
            point,
            label: if point == 0 {
                "config".into()
            } else {
                format!("corner-{}", point - 1)
            },
            settings: Vec::new(),
            figures: figures.iter().map(|&x| Some(x)).collect(),
        }
    }

    #[test]
    fn a_range_holding_one_is_flagged_with_the_points_at_its_ends() {
        let heads: Vec<Headline> = HEADLINES.iter().map(Headline::of).collect();
        let points = [
            point(0, &[1.02, 1.30, 0.95, 1.10]),
            point(1, &[0.97, 1.10, 0.90, 1.05]),
            point(2, &[1.05, 1.40, 0.99, 1.00]),
        ];
        let r = ranges(&heads, &points);
        assert_eq!(r[0].config, Some(1.02));
        assert_eq!((r[0].low, r[0].high), (Some(0.97), Some(1.05)));
        assert_eq!(r[0].low_point.as_deref(), Some("corner-0"));
        assert_eq!(r[0].high_point.as_deref(), Some("corner-1"));
        assert!(r[0].sign_flips, "a loss at one end, a gain at the other");
        assert!(!r[1].sign_flips && !r[2].sign_flips);
        // A range that touches 1 without crossing it keeps its sign.
        assert!(!r[3].sign_flips);
        assert_eq!(r[3].low_point.as_deref(), Some("corner-1"));
        let t = text(&r, &points);
        assert!(t.contains("[-3.0%, +5.0%]") && t.contains("FLIPS"), "{t}");
        let c = csv(&r);
        assert!(c.contains("\nclap_over_s64k,1.175,1.02,0.97,corner-0,1.05,corner-1,true\n"));
    }

    #[test]
    fn a_missing_figure_is_left_out_of_the_range() {
        let heads = FOREST_HEADLINES;
        let mut p1 = point(1, &[0.9, 1.2]);
        p1.figures[0] = None;
        let r = ranges(&heads, &[point(0, &[1.5, 1.6]), p1]);
        assert_eq!((r[0].low, r[0].high), (Some(1.5), Some(1.5)));
        assert_eq!((r[1].low, r[1].high), (Some(1.2), Some(1.6)));
        assert!(!r[0].sign_flips && !r[1].sign_flips);
    }

    #[test]
    fn a_share_reads_as_a_rate_and_never_flips() {
        let points = [point(0, &[0.90, 0.98]), point(1, &[1.0, 0.5])];
        let r = ranges(&CLAP_SHARE_HEADLINES, &points);
        assert_eq!((r[0].low, r[0].high), (Some(0.90), Some(1.0)));
        assert!(!r[0].sign_flips && !r[1].sign_flips, "a rate has no sign");
        let t = text(&r, &points);
        assert!(t.contains("95.3%") && t.contains("[90.0%, 100.0%]"), "{t}");
        assert!(t.contains("(a rate)") && !t.contains("FLIPS"), "{t}");
    }

    #[test]
    fn the_share_figures_are_means_of_the_s64k_runs() {
        let run = |w: &str, p: &str, sim: f64, loc: f64| RunSummary {
            workload: w.into(),
            policy: p.into(),
            rt_similarity: Some(sim),
            chiplet_locality: Some(loc),
            ..RunSummary::default()
        };
        let runs = [
            run("a", "s64k", 0.8, 0.9),
            run("a", "clap", 0.1, 0.1),
            run("b", "s64k", 1.0, 0.7),
        ];
        let f = clap_share_figures(&runs);
        assert!((f[0].unwrap() - 0.9).abs() < 1e-12, "{f:?}");
        assert!((f[1].unwrap() - 0.8).abs() < 1e-12, "{f:?}");
        assert_eq!(clap_share_figures(&runs[1..2]), vec![None, None]);
    }

    #[test]
    fn the_forest_extras_leave_out_thrashing_and_average_the_dl_networks() {
        let run = |w: &str, p: UvmPolicy, cycles: u64, thrash: f64, steps: u64| RunPart {
            workload: w.into(),
            policy: p.name().into(),
            oversubscription: 1.5,
            cycles,
            far_faults: 0,
            prefetched_unused_pct: 0.0,
            thrash_multiple: thrash,
            profiling_steps: steps,
            classes: String::new(),
        };
        let (t, f, s) = (UvmPolicy::Tbnp, UvmPolicy::Forest, UvmPolicy::SpecForest);
        let runs = [
            // `mvt`: TBNp thrashes (50x the footprint), Forest 10x faster: left out.
            run("mvt", t, 1000, 50.0, 0),
            run("mvt", f, 100, 0.0, 300),
            run("mvt", s, 100, 0.0, 20),
            // `alexnet`, a DL network: Forest 2x, SpecForest 4x.
            run("alexnet", t, 800, 1.0, 0),
            run("alexnet", f, 400, 0.0, 100),
            run("alexnet", s, 200, 0.0, 10),
        ];
        let refs: Vec<&RunPart> = runs.iter().collect();
        let x = forest_figures(&refs);
        assert!((x[0].unwrap() - 20f64.sqrt()).abs() < 1e-12, "{x:?}");
        assert!((x[1].unwrap() - 40f64.sqrt()).abs() < 1e-12, "{x:?}");
        assert_eq!(x[2..], [Some(2.0), Some(4.0), Some(200.0), Some(15.0)]);
        // A missing TBNp run: no figure rather than a wrong one.
        assert_eq!(forest_figures(&refs[1..3])[2], None);
        let r = ranges(
            &FOREST_EXTRA_HEADLINES,
            &[point(0, &[2.0, 4.0, 200.0, 15.0])],
        );
        let t = text(&r, &[]);
        assert!(t.contains("forest_no_thrash") && t.contains("—"), "{t}");
        assert!(t.contains("223.0") && t.contains("(a count)"), "{t}");
        assert!(csv(&r).contains("forest_no_thrash,,"), "{}", csv(&r));
    }
}
