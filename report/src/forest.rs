//! The Forest study from `forest.csv` (one row per workload × oversubscription, written by
//! `mcmvm_models::uvm::SweepReport::write`): speed-up over TBNp of Forest and SpecForest,
//! and their profiling steps, one panel per oversubscription ratio; the ablations
//! (forest-lru, tbnp-aae) beside them when the CSV has them, and the oversubscription curve
//! ([`crate::forest_curve`]).

use crate::chart::{self, Bars};
use crate::csv::{distinct, Table};
use crate::{Figure, HtmlTable, Outcome, ReportError, Section};
use mcmvm_models::uvm::means::{geomean_parts, share_cell, GeomeanParts};
use std::path::Path;

/// One row of `forest.csv`, the columns the page uses.
#[derive(Debug, Clone)]
pub struct Row {
    pub workload: String,
    /// As written (the panel's name), and as a number.
    pub oversub: String,
    pub forest_speedup: f64,
    pub specforest_speedup: f64,
    /// forest-lru and tbnp-aae over TBNp (None: a CSV written before the ablations).
    pub ablations: [Option<f64>; 2],
    /// [tbnp, forest, specforest]
    pub far_faults: [f64; 3],
    pub unused_pct: [f64; 3],
    pub thrash_x: [f64; 3],
    pub steps_forest: f64,
    pub steps_specforest: f64,
    pub classes: String,
}

pub fn rows(t: &Table) -> Result<Vec<Row>, ReportError> {
    let col = |n: &str| t.column(n);
    let (w, o) = (col("workload")?, col("oversub")?);
    let (fs, ss) = (col("forest_speedup")?, col("specforest_speedup")?);
    let three = |p: &str| -> Result<[usize; 3], ReportError> {
        Ok([
            col(&format!("{p}_tbnp"))?,
            col(&format!("{p}_forest"))?,
            col(&format!("{p}_specforest"))?,
        ])
    };
    let (ff, un, th) = (
        three("far_faults")?,
        three("unused_pct")?,
        three("thrash_x")?,
    );
    let (pf, ps) = (
        col("profiling_steps_forest")?,
        col("profiling_steps_specforest")?,
    );
    let cl = col("classes")?;
    let abl = [
        t.column("forest_lru_speedup").ok(),
        t.column("tbnp_aae_speedup").ok(),
    ];
    t.rows
        .iter()
        .map(|r| {
            let tri = |c: [usize; 3]| -> Result<[f64; 3], ReportError> {
                Ok([t.num(r, c[0])?, t.num(r, c[1])?, t.num(r, c[2])?])
            };
            t.num(r, o)?;
            Ok(Row {
                workload: t.text(r, w).to_string(),
                oversub: t.text(r, o).to_string(),
                forest_speedup: t.num(r, fs)?,
                specforest_speedup: t.num(r, ss)?,
                ablations: [
                    abl[0].map(|c| t.num(r, c)).transpose()?,
                    abl[1].map(|c| t.num(r, c)).transpose()?,
                ],
                far_faults: tri(ff)?,
                unused_pct: tri(un)?,
                thrash_x: tri(th)?,
                steps_forest: t.num(r, pf)?,
                steps_specforest: t.num(r, ps)?,
                classes: t.text(r, cl).to_string(),
            })
        })
        .collect()
}

/// Geometric mean of speed-ups, as the sweep computes it (`mcmvm_models::stats`).
pub fn geomean(xs: &[f64]) -> f64 {
    mcmvm_models::stats::geomean_or_one(xs)
}

/// The two policies drawn, and their colours.
pub fn series() -> Vec<(String, plotters::style::RGBColor)> {
    vec![
        ("Forest".to_string(), chart::color(0)),
        ("SpecForest".to_string(), chart::color(1)),
    ]
}

/// The speed-up series: Forest, SpecForest and, when every row has them, the ablations.
pub fn speedup_series(rs: &[Row]) -> Vec<(String, plotters::style::RGBColor)> {
    let mut s = series();
    if has_ablations(rs) {
        s.push(("Forest trees + LRU".to_string(), chart::color(2)));
        s.push(("TBNp + access-aware eviction".to_string(), chart::color(3)));
    }
    s
}

/// Whether every row carries the ablation columns.
pub fn has_ablations(rs: &[Row]) -> bool {
    rs.iter().all(|r| r.ablations.iter().all(Option::is_some))
}

impl Row {
    /// Speed-ups over TBNp: Forest, SpecForest, then the ablations when `ablations`.
    pub fn speedups(&self, ablations: bool) -> Vec<f64> {
        let mut v = vec![self.forest_speedup, self.specforest_speedup];
        if ablations {
            v.extend(self.ablations.iter().map(|a| a.unwrap_or(f64::NAN)));
        }
        v
    }
}

/// The oversubscription ratios present, in file order.
pub fn oversubs(rows: &[Row]) -> Vec<String> {
    distinct(rows.iter().map(|r| r.oversub.as_str()))
}

pub fn section(out: &Path, done: &mut Outcome) -> Result<Section, ReportError> {
    section_in(out, "forest", done)
}

/// The same for a sweep written to `out/sub` (`mcmvm sweep --suite forest --out DIR`).
pub fn section_in(out: &Path, sub: &str, done: &mut Outcome) -> Result<Section, ReportError> {
    let mut s = Section {
        title: "Forest: UVM prefetching and eviction under oversubscription".into(),
        ..Section::default()
    };
    let path = out.join(format!("{sub}/forest.csv"));
    let Some(t) = Table::load(&path)? else {
        s.notes.push(crate::missing(
            &format!("{sub}/fig-speedup.svg and {sub}/fig-profiling.svg"),
            &path,
            "mcmvm sweep --suite forest",
        ));
        return Ok(s);
    };
    let rs = rows(&t)?;
    if rs.is_empty() {
        s.notes.push(format!(
            "skipped the Forest figures: {} has no rows",
            path.display()
        ));
        return Ok(s);
    }
    panels(
        out,
        &format!("{sub}/fig-speedup.svg"),
        &rs,
        Kind::Speedup,
        done,
    )?;
    panels(
        out,
        &format!("{sub}/fig-profiling.svg"),
        &rs,
        Kind::Profiling,
        done,
    )?;
    s.figures.push(Figure {
        rel: format!("{sub}/fig-speedup.svg"),
        caption: "Speed-up of Forest and SpecForest (and the ablations: Forest's trees with \
                  the baseline LRU, TBNp with access-aware eviction) over TBNp per workload, \
                  geometric mean at the right; one panel per oversubscription ratio."
            .into(),
    });
    if let Some(f) = crate::forest_curve::figure(out, sub, &rs, done)? {
        s.figures.push(f);
    }
    s.figures.push(Figure {
        rel: format!("{sub}/fig-profiling.svg"),
        caption: "Profiling steps per workload, Forest vs SpecForest (SpecForest speculates \
                  instead of profiling); one panel per oversubscription ratio."
            .into(),
    });
    s.tables.push(table(&rs));
    s.tables.push(crate::clap::raw(
        &t,
        "forest.csv: every workload × oversubscription",
    ));
    Ok(s)
}

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Speedup,
    Profiling,
}

impl Kind {
    /// One row's values, one per series.
    fn pair(self, r: &Row, ablations: bool) -> Vec<f64> {
        match self {
            Kind::Speedup => r.speedups(ablations),
            Kind::Profiling => vec![r.steps_forest, r.steps_specforest],
        }
    }

    /// Every row's values, one per series.
    fn values(self, rows: &[&Row], ablations: bool) -> Vec<Vec<Option<f64>>> {
        rows.iter()
            .map(|r| self.pair(r, ablations).into_iter().map(Some).collect())
            .collect()
    }

    /// One panel's groups (a workload each, then the summary) and their values.
    fn panel(
        self,
        mine: &[&Row],
        ablations: bool,
        n_series: usize,
    ) -> (Vec<String>, Vec<Vec<Option<f64>>>) {
        let mut groups: Vec<String> = mine.iter().map(|r| r.workload.clone()).collect();
        let mut values = self.values(mine, ablations);
        let mut summary = vec![];
        for i in 0..n_series {
            let xs: Vec<f64> = mine.iter().map(|r| self.pair(r, ablations)[i]).collect();
            let (label, v) = self.summary(&xs);
            summary.push(Some(v));
            if i == 0 {
                groups.push(label.to_string());
            }
        }
        values.push(summary);
        (groups, values)
    }

    /// The summary group: geometric mean of speed-ups, mean of steps.
    fn summary(self, xs: &[f64]) -> (&'static str, f64) {
        match self {
            Kind::Speedup => ("geomean", geomean(xs)),
            Kind::Profiling => ("mean", xs.iter().sum::<f64>() / xs.len().max(1) as f64),
        }
    }

    fn title(self) -> &'static str {
        match self {
            Kind::Speedup => "Forest study: speed-up over TBNp (higher is better)",
            Kind::Profiling => "Forest study: profiling steps (fewer is cheaper)",
        }
    }

    fn y_desc(self) -> &'static str {
        match self {
            Kind::Speedup => "speed-up over TBNp",
            Kind::Profiling => "profiling steps",
        }
    }

    fn fmt(self) -> fn(f64) -> String {
        match self {
            Kind::Speedup => |v| format!("{v:.2}"),
            Kind::Profiling => |v| {
                let s = format!("{v:.1}");
                s.strip_suffix(".0").map_or(s.clone(), str::to_string)
            },
        }
    }
}

/// One panel per oversubscription: a group per workload and the summary group.
fn panels(
    out: &Path,
    rel: &str,
    rs: &[Row],
    kind: Kind,
    done: &mut Outcome,
) -> Result<(), ReportError> {
    let os = oversubs(rs);
    let abl = kind == Kind::Speedup && has_ablations(rs);
    let series = if kind == Kind::Speedup {
        speedup_series(rs)
    } else {
        series()
    };
    let ws = distinct(rs.iter().map(|r| r.workload.as_str()));
    let panel_h = 380u32;
    let width = (220 + 50 * series.len().max(2) as u32 * (ws.len() as u32 + 1)).max(900);
    let height = 60 + panel_h * os.len() as u32;
    // One scale for every panel: log if the speed-ups span more than 20×.
    let log = kind == Kind::Speedup
        && chart::wide_spread(&kind.values(&rs.iter().collect::<Vec<_>>(), abl));
    crate::write_svg(
        out,
        rel,
        (width, height),
        |root| {
            let mut rest = chart::title_and_legend(root, kind.title(), &series)?;
            for o in &os {
                let (panel, below) = rest.split_vertically(panel_h);
                rest = below;
                let mine: Vec<&Row> = rs.iter().filter(|r| &r.oversub == o).collect();
                let (groups, values) = kind.panel(&mine, abl, series.len());
                let all: Vec<usize> = (0..groups.len()).collect();
                chart::bars(
                    &panel,
                    &Bars {
                        title: &format!("oversubscription {o}"),
                        y_desc: kind.y_desc(),
                        groups: &groups,
                        series: &series,
                        values: &values,
                        reference: (kind == Kind::Speedup).then_some(1.0),
                        y_max: None,
                        log,
                        // Speed-ups: the geomean's value; steps: every bar's.
                        value_labels: if kind == Kind::Speedup {
                            &all[all.len() - 1..]
                        } else {
                            &all
                        },
                        fmt: kind.fmt(),
                    },
                )?;
            }
            Ok(())
        },
        done,
    )
}

/// The columns of [`table`].
const HEADER: [&str; 17] = [
    "workload",
    "oversub",
    "Forest",
    "share of Forest's log-geomean",
    "SpecForest",
    "far faults T",
    "F",
    "S",
    "unused % T",
    "F",
    "S",
    "thrash × T",
    "F",
    "S",
    "steps F",
    "steps S",
    "classes (Forest)",
];

/// The terminal table of `mcmvm sweep --suite forest`, as HTML, with a geomean row per
/// oversubscription.
fn table(rs: &[Row]) -> HtmlTable {
    let tri = |v: [f64; 3], p: usize| v.map(|x| format!("{x:.p$}")).to_vec();
    let mut rows = Vec::new();
    for o in oversubs(rs) {
        let mine: Vec<&Row> = rs.iter().filter(|r| r.oversub == o).collect();
        let means = forest_means(&mine);
        for (r, (_, share)) in mine.iter().zip(&means.shares) {
            let mut row = vec![r.workload.clone(), r.oversub.clone()];
            row.push(format!("{:.2}×", r.forest_speedup));
            row.push(share_cell(*share));
            row.push(format!("{:.2}×", r.specforest_speedup));
            row.extend(tri(r.far_faults, 0));
            row.extend(tri(r.unused_pct, 1));
            row.extend(tri(r.thrash_x, 2));
            row.push(format!("{:.0}", r.steps_forest));
            row.push(format!("{:.0}", r.steps_specforest));
            row.push(short_classes(&r.classes));
            rows.push(row);
        }
        let f: Vec<f64> = mine.iter().map(|r| r.forest_speedup).collect();
        let s: Vec<f64> = mine.iter().map(|r| r.specforest_speedup).collect();
        let mut g = vec!["geomean".to_string(), o.clone()];
        g.push(format!("{:.3}×", geomean(&f)));
        g.push(String::new());
        g.push(format!("{:.3}×", geomean(&s)));
        g.resize(17, String::new());
        rows.push(g);
        rows.push(without_thrashing_row(&o, &means));
    }
    HtmlTable {
        caption: format!(
            "Speed-up over TBNp, each workload's share of Forest's log-geomean (ln speed-up / \
             Σ ln speed-up), far faults, unused prefetches, thrashing and profiling steps (T = \
             TBNp, F = Forest, S = SpecForest); below each geomean, Forest's geomean without \
             the workloads where TBNp thrashes (re-migrates more than {}× the footprint)",
            mcmvm_models::uvm::means::THRASH_LIMIT
        ),
        header: HEADER.map(String::from).to_vec(),
        rows,
        folded: false,
    }
}

/// Forest's geomean parts over one oversubscription's rows (the sweep's rule,
/// [`mcmvm_models::uvm::means`]).
fn forest_means(mine: &[&Row]) -> GeomeanParts {
    let parts: Vec<(&str, f64, f64)> = mine
        .iter()
        .map(|r| (r.workload.as_str(), r.forest_speedup, r.thrash_x[0]))
        .collect();
    geomean_parts(&parts)
}

/// The row under a geomean: Forest's geomean without the workloads where TBNp thrashes.
fn without_thrashing_row(oversub: &str, means: &GeomeanParts) -> Vec<String> {
    let left_out = if means.tbnp_thrashing.is_empty() {
        "none left out".to_string()
    } else {
        format!("without {}", means.tbnp_thrashing.join(", "))
    };
    let mut g = vec![
        "geomean, TBNp not thrashing".to_string(),
        oversub.to_string(),
        format!("{:.3}×", means.geomean_without_thrashing),
        left_out,
    ];
    g.resize(17, String::new());
    g
}

/// Classified objects, and only a count of the rest (a DL network has hundreds).
fn short_classes(classes: &str) -> String {
    let (named, rest): (Vec<&str>, Vec<&str>) = classes
        .split(' ')
        .filter(|c| !c.is_empty())
        .partition(|c| !c.ends_with(":-"));
    let mut out = named.join(" ");
    if !rest.is_empty() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(&format!("+{} unclassified", rest.len()));
    }
    out
}
