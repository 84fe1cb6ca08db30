//! Each headline over the timing model's plausible box (`mcmvm sweep --suite clap|forest
//! --robustness`, written to `robustness-<suite>/robustness.json`): a table of value at the
//! shipped config, [low, high] over the box and the paper's figure, and a range figure per
//! suite, `robustness-<suite>/fig-range.svg`.
//!
//! Speed-ups are drawn as gains over their baseline (1.05× → +5 %) and rates (the RT's
//! similarity, chiplet locality) as they are, each on its own panel so that neither axis
//! squeezes the other. A range that holds 1 for a speed-up is a conclusion whose sign flips
//! inside the box; the table says so.

use crate::chart::{self, err, FONT};
use crate::{Figure, HtmlTable, Outcome, ReportError, Section};
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use serde::Deserialize;
use std::path::Path;

/// The suites whose box the page shows, in order.
pub const SUITES: [&str; 2] = ["clap", "forest"];

/// One headline's range, as `robustness.json` holds it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Range {
    pub id: String,
    pub figure: String,
    /// None where the paper gives no figure.
    pub paper: Option<f64>,
    /// `speedup`, `share` or `count`.
    pub unit: String,
    pub config: Option<f64>,
    pub low: Option<f64>,
    pub low_point: Option<String>,
    pub high: Option<f64>,
    pub high_point: Option<String>,
    pub sign_flips: bool,
}

/// The top of `robustness.json`.
#[derive(Debug, Clone, Deserialize)]
pub struct Robustness {
    pub suite: String,
    pub scale: serde_json::Value,
    pub design: Option<String>,
    pub headlines: Vec<Range>,
    pub points: Vec<serde_json::Value>,
}

impl Range {
    fn is_share(&self) -> bool {
        self.unit == "share"
    }

    fn is_count(&self) -> bool {
        self.unit == "count"
    }

    /// A figure in the unit the page shows: a speed-up's gain or a rate, in per cent.
    fn pct(&self, x: f64) -> f64 {
        if self.is_share() {
            x * 100.0
        } else {
            (x - 1.0) * 100.0
        }
    }

    fn fmt(&self, x: Option<f64>) -> String {
        match x {
            None => "-".into(),
            Some(x) if self.is_count() => format!("{x:.1}"),
            Some(x) if self.is_share() => format!("{:.1} %", self.pct(x)),
            Some(x) => format!("{:+.1} %", self.pct(x)),
        }
    }
}

/// `robustness-<suite>/robustness.json` under `out`, `None` when the box was not run.
pub fn load(out: &Path, suite: &str) -> Result<Option<Robustness>, ReportError> {
    let path = out
        .join(format!("robustness-{suite}"))
        .join("robustness.json");
    let Some(text) = crate::read_optional(&path)? else {
        return Ok(None);
    };
    serde_json::from_str(&text).map(Some).map_err(|e| {
        let msg = e.to_string();
        let msg = msg.split(" at line ").next().unwrap_or(&msg).to_string();
        ReportError::parse(&path, e.line().max(1), msg)
    })
}

/// The page's section: a table and a figure per suite whose box was run, a note for each
/// that was not.
pub fn section(out: &Path, done: &mut Outcome) -> Result<Section, ReportError> {
    let mut s = Section {
        title: "Robustness: each headline over the timing model's plausible box".into(),
        ..Section::default()
    };
    for suite in SUITES {
        let input = out.join(format!("robustness-{suite}/robustness.json"));
        let Some(b) = load(out, suite)? else {
            let how = format!("mcmvm sweep --suite {suite} --robustness");
            s.notes
                .push(crate::missing("the box's ranges", &input, &how));
            continue;
        };
        let rel = write_ranges(out, &b, done)?;
        s.figures.push(Figure {
            rel,
            caption: format!(
                "{suite}: each headline at the shipped config (dot) and over the box's {} points \
                 (bar, low to high), the paper's figure as a cross; speed-ups as gains over \
                 their baseline, rates as they are. Scale {}, design {}.",
                b.points.len(),
                b.scale,
                b.design.as_deref().unwrap_or("-")
            ),
        });
        s.tables.push(table(&b));
    }
    Ok(s)
}

fn table(b: &Robustness) -> HtmlTable {
    HtmlTable {
        caption: format!("{}: headlines over {} points", b.suite, b.points.len()),
        header: [
            "headline", "paper", "config", "low", "high", "low at", "high at", "sign",
        ]
        .map(String::from)
        .to_vec(),
        rows: b
            .headlines
            .iter()
            .map(|r| {
                vec![
                    r.figure.clone(),
                    r.paper.map_or("—".into(), |p| r.fmt(Some(p))),
                    r.fmt(r.config),
                    r.fmt(r.low),
                    r.fmt(r.high),
                    r.low_point.clone().unwrap_or_default(),
                    r.high_point.clone().unwrap_or_default(),
                    if r.sign_flips { "flips" } else { "" }.into(),
                ]
            })
            .collect(),
        folded: false,
    }
}

/// Draw `robustness-<suite>/fig-range.svg`; returns its path relative to `out`.
pub fn write_ranges(out: &Path, b: &Robustness, done: &mut Outcome) -> Result<String, ReportError> {
    let rel = format!("robustness-{}/fig-range.svg", b.suite);
    let panels: Vec<(&str, Vec<&Range>)> = [
        ("speed-up: gain over the baseline, %", false),
        ("rate, %", true),
    ]
    .into_iter()
    .map(|(desc, share)| {
        // Counts have no per-cent axis: the table shows them.
        let rs = b
            .headlines
            .iter()
            .filter(|r| !r.is_count() && r.is_share() == share);
        (desc, rs.collect::<Vec<_>>())
    })
    .filter(|(_, rs)| !rs.is_empty())
    .collect();
    let rows: u32 = panels.iter().map(|(_, rs)| rs.len() as u32).sum();
    let height = 70 + 90 * panels.len() as u32 + 46 * rows;
    let title = format!("{}: headlines over the plausible box", b.suite);
    let legend = vec![
        ("box, low to high".to_string(), chart::color(0)),
        ("shipped config".to_string(), BLACK),
        ("paper".to_string(), chart::color(2)),
    ];
    crate::write_svg(
        out,
        &rel,
        (1100, height),
        |root| {
            let mut rest = chart::title_and_legend(root, &title, &legend)?;
            for (desc, rs) in &panels {
                let (panel, below) = rest.split_vertically(90 + 46 * rs.len() as u32);
                rest = below;
                panel_of(&panel, desc, rs)?;
            }
            Ok(())
        },
        done,
    )?;
    Ok(rel)
}

/// The per-cent axis of a panel: every value it draws, 8 % wider each side (at least
/// half a point).
fn x_range(rs: &[&Range]) -> std::ops::Range<f64> {
    let xs = rs.iter().flat_map(|r| {
        [r.low, r.high, r.config, r.paper]
            .into_iter()
            .flatten()
            .map(|x| r.pct(x))
    });
    let (lo, hi) = xs.fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), x| {
        (l.min(x), h.max(x))
    });
    let (lo, hi) = if lo.is_finite() { (lo, hi) } else { (0.0, 1.0) };
    let pad = ((hi - lo) * 0.08).max(0.5);
    (lo - pad)..(hi + pad)
}

/// One panel: a row per headline, its box as a bar, the config as a dot, the paper as a
/// cross, on a shared per-cent axis.
fn panel_of(area: &chart::Area, desc: &str, rs: &[&Range]) -> chart::DrawResult {
    let xr = x_range(rs);
    let n = rs.len() as f64;
    // The figure's name without its parenthesised detail (the table has it whole).
    let names: Vec<String> = rs
        .iter()
        .map(|r| r.figure.split(" (").next().unwrap_or(&r.figure).to_string())
        .collect();
    let mut c = ChartBuilder::on(area)
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(320)
        .build_cartesian_2d(xr.clone(), -0.5..(n - 0.5))
        .map_err(err)?;
    c.configure_mesh()
        .x_desc(desc)
        .y_labels(rs.len())
        .y_label_formatter(&|y| {
            let i = y.round();
            let ok = (y - i).abs() < 0.01 && i >= 0.0 && (i as usize) < names.len();
            if ok {
                names[names.len() - 1 - i as usize].clone()
            } else {
                String::new()
            }
        })
        .disable_y_mesh()
        .label_style((FONT, 12))
        .axis_desc_style((FONT, 13))
        .draw()
        .map_err(err)?;
    for (k, r) in rs.iter().enumerate() {
        draw_row(&mut c, r, n - 1.0 - k as f64)?;
    }
    // Gains cross zero: a line there shows which side of "no gain" each box lies.
    if !rs.iter().any(|r| r.is_share()) && xr.start < 0.0 && xr.end > 0.0 {
        let zero = [(0.0, -0.5), (0.0, n - 0.5)];
        c.draw_series(LineSeries::new(zero, BLACK.mix(0.5)))
            .map_err(err)?;
    }
    Ok(())
}

type Chart<'a, 'b> = ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// One headline at height `y`: the box as a bar (another colour where its sign flips),
/// the config as a dot, the paper as a cross.
fn draw_row(c: &mut Chart, r: &Range, y: f64) -> chart::DrawResult {
    if let (Some(l), Some(h)) = (r.low, r.high) {
        let bar = [(r.pct(l), y - 0.18), (r.pct(h), y + 0.18)];
        let col = chart::color(if r.sign_flips { 3 } else { 0 });
        c.draw_series(std::iter::once(Rectangle::new(bar, col.mix(0.6).filled())))
            .map_err(err)?;
    }
    if let Some(x) = r.config {
        let dot = Circle::new((r.pct(x), y), 5, BLACK.filled());
        c.draw_series(std::iter::once(dot)).map_err(err)?;
    }
    if let Some(p) = r.paper {
        let cross = Cross::new((r.pct(p), y), 6, chart::color(2).stroke_width(2));
        c.draw_series(std::iter::once(cross)).map_err(err)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcmvm_models::calibrate::robustness as rb;

    /// `robustness.json` as `mcmvm sweep --robustness` writes it, from the models' own
    /// types, so the page and the sweep cannot drift apart.
    fn written(out: &Path) {
        let mut heads = rb::FOREST_HEADLINES.to_vec();
        heads.extend(rb::CLAP_SHARE_HEADLINES);
        heads.push(rb::FOREST_EXTRA_HEADLINES[0]);
        heads.push(rb::FOREST_EXTRA_HEADLINES[2]);
        let point = |point: usize, label: &str, f: [f64; 6]| rb::PointFigures {
            point,
            label: label.into(),
            settings: vec![],
            figures: f.into_iter().map(Some).collect(),
        };
        let points = vec![
            point(0, "config", [1.8, 1.7, 0.9, 0.95, 1.1, 140.0]),
            point(1, "lo", [0.9, 1.5, 0.85, 0.97, 1.0, 120.0]),
            point(2, "hi", [2.2, 1.9, 0.93, 0.99, 1.2, 150.0]),
        ];
        let json = serde_json::json!({
            "suite": "forest", "scale": 0.02, "seed": 1, "design": "corners",
            "headlines": rb::ranges(&heads, &points), "points": points,
        });
        let dir = out.join("robustness-forest");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("robustness.json"), json.to_string()).unwrap();
    }

    #[test]
    fn the_box_becomes_a_range_table_and_figure_and_a_flip_is_named() {
        let dir = tempfile::tempdir().unwrap();
        written(dir.path());
        let mut done = Outcome::default();
        let s = section(dir.path(), &mut done).unwrap();
        // CLAP's box was not run: a note that says how to run it.
        assert_eq!(s.notes.len(), 1, "{:?}", s.notes);
        assert!(s.notes[0].contains("--suite clap --robustness"));
        assert_eq!(s.figures[0].rel, "robustness-forest/fig-range.svg");
        let rows = &s.tables[0].rows;
        // Forest over TBNp: +80 % at the config, −10 % to +120 % over the box: a flip.
        assert_eq!(rows[0][1..5], ["+72.0 %", "+80.0 %", "-10.0 %", "+120.0 %"]);
        assert_eq!((rows[0][5].as_str(), rows[0][7].as_str()), ("lo", "flips"));
        // A rate reads as a rate and never flips.
        assert_eq!(rows[2][2..5], ["90.0 %", "85.0 %", "93.0 %"]);
        assert_eq!(rows[2][7], "");
        // No paper figure reads as a dash; a count as a number.
        assert_eq!(rows[4][1..5], ["—", "+10.0 %", "+0.0 %", "+20.0 %"]);
        assert_eq!(rows[5][1..5], ["223.0", "140.0", "120.0", "150.0"]);
        let svg = std::fs::read_to_string(dir.path().join(&s.figures[0].rel)).unwrap();
        let doc = roxmltree::Document::parse(&svg).unwrap();
        let texts: Vec<_> = doc.descendants().filter_map(|n| n.text()).collect();
        for want in ["speed-up: gain over the baseline, %", "rate, %", "paper"] {
            assert!(texts.iter().any(|t| t.contains(want)), "{want}: {texts:?}");
        }
    }

    #[test]
    fn a_malformed_box_names_its_file() {
        let dir = tempfile::tempdir().unwrap();
        let sub = dir.path().join("robustness-clap");
        std::fs::create_dir_all(&sub).unwrap();
        std::fs::write(sub.join("robustness.json"), "{\"suite\": 3}").unwrap();
        let e = load(dir.path(), "clap").unwrap_err().to_string();
        assert!(e.contains("robustness-clap/robustness.json:1:"), "{e}");
    }
}
