//! The co-design studies (`mcmvm codesign --block B`): `codesign/<block>.json` each, drawn
//! as a Pareto figure `codesign/fig-pareto-<block>.svg` (area on x, the system effect on
//! y, the critical path as colour; the paper's point and our default marked) with a table.
//!
//! [`Study`] is the part of that JSON the page reads; `mcmvm-codesign` writes it, and
//! draws the same figure with [`write_pareto`] when a study ends.

use crate::chart::{self, err, FONT};
use crate::{Figure, HtmlTable, Outcome, ReportError, Section};
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The summary of one block's study.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Study {
    /// `rt`, `coalescer`, `att`.
    pub block: String,
    /// What the y axis is: `geomean speed-up, clap / s64k`.
    pub effect: String,
    /// The library whose area and critical path are plotted.
    pub library: String,
    pub points: Vec<StudyPoint>,
    /// The recommendation, in words.
    pub recommendation: String,
}

/// One point as the figure shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StudyPoint {
    pub label: String,
    pub paper: bool,
    pub default: bool,
    pub area_um2: f64,
    pub critical_path_ns: f64,
    pub effect: f64,
    /// On the Pareto front (no other point is at most as large and at least as good, and
    /// strictly one of the two).
    pub pareto: bool,
}

/// The top of `codesign/<block>.json`.
#[derive(Deserialize)]
struct File {
    study: Study,
}

/// Every `codesign/*.json` under `out`, by file name.
pub fn load(out: &Path) -> Result<Vec<Study>, ReportError> {
    let dir = out.join("codesign");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Ok(Vec::new());
    };
    let mut paths: Vec<_> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    paths.sort();
    let mut studies = Vec::new();
    for p in paths {
        let Some(text) = crate::read_optional(&p)? else {
            continue;
        };
        let f: File = serde_json::from_str(&text).map_err(|e| {
            let msg = e.to_string();
            let msg = msg.split(" at line ").next().unwrap_or(&msg).to_string();
            ReportError::parse(&p, e.line().max(1), msg)
        })?;
        studies.push(f.study);
    }
    Ok(studies)
}

/// The page's section; empty (no figure) when no study was run, and then left off the page.
pub fn section(out: &Path, done: &mut Outcome) -> Result<Section, ReportError> {
    let mut s = Section {
        title: "Co-design: each block's parameters against area, timing and system effect".into(),
        ..Section::default()
    };
    // Optional (not part of `make run`): no study, no section and no note.
    let studies = load(out)?;
    for st in &studies {
        let rel = write_pareto(out, st, done)?;
        s.figures.push(Figure {
            rel,
            caption: format!(
                "{}: area on {} against {}; colour = critical path; ring = the paper's point, \
                 square = our default. {}",
                st.block, st.library, st.effect, st.recommendation
            ),
        });
        s.tables.push(table(st));
    }
    Ok(s)
}

fn table(st: &Study) -> HtmlTable {
    HtmlTable {
        caption: format!("{} points ({} area and path)", st.block, st.library),
        header: ["point", "mark", "area µm²", "path ns", "effect", "Pareto"]
            .map(String::from)
            .to_vec(),
        rows: st
            .points
            .iter()
            .map(|p| {
                vec![
                    p.label.clone(),
                    mark(p).into(),
                    format!("{:.0}", p.area_um2),
                    format!("{:.3}", p.critical_path_ns),
                    format!("{:.4}", p.effect),
                    if p.pareto { "yes" } else { "" }.into(),
                ]
            })
            .collect(),
        folded: false,
    }
}

fn mark(p: &StudyPoint) -> &'static str {
    match (p.paper, p.default) {
        (true, true) => "paper, default",
        (true, false) => "paper",
        (false, true) => "default",
        _ => "",
    }
}

/// The critical path as a colour: blue (shortest) to red (longest) over `lo..hi`.
fn path_colour(ns: f64, lo: f64, hi: f64) -> RGBColor {
    let t = if hi > lo {
        ((ns - lo) / (hi - lo)).clamp(0.0, 1.0)
    } else {
        0.5
    };
    let mix = |a: u8, b: u8| (a as f64 + (b as f64 - a as f64) * t).round() as u8;
    RGBColor(mix(0x4E, 0xE1), mix(0x79, 0x57), mix(0xA7, 0x59))
}

/// The figure's chart: area on x, the system effect on y.
type Chart<'a, 'b> = ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// Draw `codesign/fig-pareto-<block>.svg` under `out`; returns its path relative to `out`.
pub fn write_pareto(out: &Path, st: &Study, done: &mut Outcome) -> Result<String, ReportError> {
    let rel = format!("codesign/fig-pareto-{}.svg", st.block);
    let (x_lo, x_hi) = span(st.points.iter().map(|p| p.area_um2));
    let (y_lo, y_hi) = span(st.points.iter().map(|p| p.effect));
    let paths = span(st.points.iter().map(|p| p.critical_path_ns));
    let title = format!("{}: area against system effect", st.block);
    let (p_lo, p_hi) = paths;
    let legend = vec![
        (
            format!("critical path {p_lo:.2} ns"),
            path_colour(p_lo, p_lo, p_hi),
        ),
        (format!("{p_hi:.2} ns"), path_colour(p_hi, p_lo, p_hi)),
    ];
    crate::write_svg(
        out,
        &rel,
        (900, 560),
        |root| {
            let rest = chart::title_and_legend(root, &title, &legend)?;
            let mut c = ChartBuilder::on(&rest)
                .margin(16)
                .x_label_area_size(44)
                .y_label_area_size(70)
                .build_cartesian_2d(pad(x_lo, x_hi), pad(y_lo, y_hi))
                .map_err(err)?;
            c.configure_mesh()
                .x_desc(format!("area on {}, µm²", st.library))
                .y_desc(st.effect.clone())
                .label_style((FONT, 13))
                .axis_desc_style((FONT, 14))
                .draw()
                .map_err(err)?;
            draw_front(&mut c, st)?;
            for p in &st.points {
                draw_point(&mut c, p, paths)?;
            }
            Ok(())
        },
        done,
    )?;
    Ok(rel)
}

/// The Pareto front as a line through its points, smallest area first.
fn draw_front(c: &mut Chart, st: &Study) -> chart::DrawResult {
    let mut front: Vec<&StudyPoint> = st.points.iter().filter(|p| p.pareto).collect();
    front.sort_by(|a, b| a.area_um2.total_cmp(&b.area_um2));
    c.draw_series(LineSeries::new(
        front.iter().map(|p| (p.area_um2, p.effect)),
        BLACK.mix(0.4).stroke_width(1),
    ))
    .map_err(err)?;
    Ok(())
}

/// One point coloured by its critical path within `(lo, hi)`: a ring marks the paper's
/// point, a square our default, and its label follows.
fn draw_point(c: &mut Chart, p: &StudyPoint, (lo, hi): (f64, f64)) -> chart::DrawResult {
    let at = (p.area_um2, p.effect);
    let col = path_colour(p.critical_path_ns, lo, hi);
    c.draw_series(std::iter::once(Circle::new(at, 6, col.filled())))
        .map_err(err)?;
    if p.paper {
        c.draw_series(std::iter::once(Circle::new(at, 11, BLACK.stroke_width(2))))
            .map_err(err)?;
    }
    if p.default {
        c.draw_series(std::iter::once(
            EmptyElement::at(at) + Rectangle::new([(-9, -9), (9, 9)], BLACK.stroke_width(2)),
        ))
        .map_err(err)?;
    }
    c.draw_series(std::iter::once(Text::new(
        format!("{} {}", mark(p), p.label).trim().to_string(),
        at,
        (FONT, 11).into_font(),
    )))
    .map_err(err)?;
    Ok(())
}

fn span(v: impl Iterator<Item = f64>) -> (f64, f64) {
    v.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), x| {
        (lo.min(x), hi.max(x))
    })
}

/// The axis range around `lo..hi`, 8 % wider each side (a flat range gets ±1 %).
fn pad(lo: f64, hi: f64) -> std::ops::Range<f64> {
    if !lo.is_finite() || !hi.is_finite() {
        return 0.0..1.0;
    }
    let d = if hi > lo {
        (hi - lo) * 0.08
    } else {
        lo.abs().max(1e-9) * 0.01
    };
    (lo - d)..(hi + d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_study_json_becomes_a_pareto_figure_with_its_marks() {
        let dir = tempfile::tempdir().unwrap();
        let st = Study {
            block: "rt".into(),
            effect: "geomean speed-up, clap / s64k".into(),
            library: "sky130hd".into(),
            points: vec![
                StudyPoint {
                    label: "entries=32".into(),
                    paper: true,
                    default: false,
                    area_um2: 100.0,
                    critical_path_ns: 2.0,
                    effect: 1.2,
                    pareto: true,
                },
                StudyPoint {
                    label: "entries=8".into(),
                    paper: false,
                    default: true,
                    area_um2: 40.0,
                    critical_path_ns: 1.0,
                    effect: 1.1,
                    pareto: true,
                },
            ],
            recommendation: "entries=8".into(),
        };
        let cd = dir.path().join("codesign");
        std::fs::create_dir_all(&cd).unwrap();
        let text = serde_json::json!({ "study": st, "points": [] }).to_string();
        std::fs::write(cd.join("rt.json"), text).unwrap();
        let mut done = Outcome::default();
        let s = section(dir.path(), &mut done).unwrap();
        assert_eq!(s.figures[0].rel, "codesign/fig-pareto-rt.svg");
        assert_eq!(s.tables[0].rows[0][1], "paper");
        let svg = std::fs::read_to_string(cd.join("fig-pareto-rt.svg")).unwrap();
        let doc = roxmltree::Document::parse(&svg).unwrap();
        let texts: Vec<_> = doc.descendants().filter_map(|n| n.text()).collect();
        assert!(
            texts.iter().any(|t| t.contains("paper entries=32")),
            "{texts:?}"
        );
        assert!(
            texts.iter().any(|t| t.contains("default entries=8")),
            "{texts:?}"
        );
        std::fs::write(cd.join("att.json"), "{\"study\": 3}").unwrap();
        let e = load(dir.path()).unwrap_err().to_string();
        assert!(e.contains("att.json:1:"), "{e}");
    }
}
