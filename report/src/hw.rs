//! The hardware blocks' area: from `synth.json` (the list `mcmvm synth --json` prints) or
//! else `hw-summary.json` (`mcmvm hw`, whose rows carry the same report under `area`).

use crate::chart::{self, Bars};
use crate::csv::distinct;
use crate::{Figure, HtmlTable, Outcome, ReportError, Section};
use plotters::style::RGBColor;
use serde::Deserialize;
use std::path::Path;

/// The fields of `mcmvm_synth::AreaReport` the page shows (`library` and `node_nm` are
/// absent from reports older than the multi-library synthesis: osu018 at 180 nm).
#[derive(Debug, Clone, Deserialize)]
pub struct Area {
    pub block: String,
    #[serde(default = "osu018")]
    pub library: String,
    #[serde(default = "nm180")]
    pub node_nm: f64,
    pub area_um2: f64,
    pub cells: u64,
    pub flip_flops: u64,
    pub transistors: u64,
    pub area_mm2_28nm: f64,
    pub paper_mm2: Option<f64>,
}

fn osu018() -> String {
    "osu018".into()
}

fn nm180() -> f64 {
    180.0
}

/// A row of `hw-summary.json`: one area report per block, or one per library.
#[derive(Deserialize)]
struct HwRow {
    area: Option<OneOrMany>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum OneOrMany {
    One(Area),
    Many(Vec<Area>),
}

fn json<T: serde::de::DeserializeOwned>(path: &Path, text: &str) -> Result<T, ReportError> {
    serde_json::from_str(text).map_err(|e| {
        let msg = e.to_string();
        let msg = msg.split(" at line ").next().unwrap_or(&msg).to_string();
        ReportError::parse(path, e.line().max(1), msg)
    })
}

/// The area reports and the file they came from (None: neither file exists).
pub fn load(out: &Path) -> Result<Option<(Vec<Area>, String)>, ReportError> {
    let synth = out.join("synth.json");
    if let Some(text) = crate::read_optional(&synth)? {
        return Ok(Some((json(&synth, &text)?, "synth.json".into())));
    }
    let hw = out.join("hw-summary.json");
    if let Some(text) = crate::read_optional(&hw)? {
        let rows: Vec<HwRow> = json(&hw, &text)?;
        let areas = rows
            .into_iter()
            .flat_map(|r| match r.area {
                Some(OneOrMany::One(a)) => vec![a],
                Some(OneOrMany::Many(v)) => v,
                None => vec![],
            })
            .collect();
        return Ok(Some((areas, "hw-summary.json".into())));
    }
    Ok(None)
}

pub fn section(out: &Path, done: &mut Outcome) -> Result<Section, ReportError> {
    let mut s = Section {
        title: "Hardware: area of the three blocks".into(),
        ..Section::default()
    };
    let Some((areas, from)) = load(out)? else {
        s.notes.push(crate::missing(
            "fig-area.svg",
            &out.join("hw-summary.json"),
            "mcmvm hw",
        ));
        return Ok(s);
    };
    if areas.is_empty() {
        s.notes.push(format!(
            "skipped fig-area.svg: {from} has no synthesised block (yosys failed?)"
        ));
        return Ok(s);
    }
    figure(out, &areas, done)?;
    s.figures.push(Figure {
        rel: "fig-area.svg".into(),
        caption: format!(
            "Area per block from {from}: on each standard-cell library synthesised, and the \
             ideal-shrink 28 nm estimate beside the paper's figure (UMC 28 nm; Forest gives \
             none for the ATT)."
        ),
    });
    s.tables.push(table(&areas));
    Ok(s)
}

fn figure(out: &Path, areas: &[Area], done: &mut Outcome) -> Result<(), ReportError> {
    let groups = distinct(areas.iter().map(|a| a.block.as_str()));
    let libs = distinct(areas.iter().map(|a| a.library.as_str()));
    // One colour per library in both panels, the paper's figure in the next one.
    let lib_series = library_series(areas, &libs);
    let mut right_series = lib_series.clone();
    right_series.push(("paper (UMC 28 nm)".to_string(), chart::color(libs.len())));
    let (left, right) = panel_values(areas, &groups, &libs);
    let all: Vec<usize> = (0..groups.len()).collect();
    let width = (300 + 130 * (libs.len() as u32 + 1) * groups.len() as u32).max(1000);
    let panel = |title, y_desc, series, values, fmt| Bars {
        title,
        y_desc,
        groups: &groups,
        series,
        values,
        reference: None,
        y_max: None,
        log: false,
        value_labels: &all,
        fmt,
    };
    crate::write_svg(
        out,
        "fig-area.svg",
        (width, 500),
        |root| {
            let rest = chart::title_and_legend(root, "Hardware blocks: area", &right_series)?;
            let (w, _) = rest.dim_in_pixel();
            let (l, r) = rest.split_horizontally(w * 47 / 100);
            chart::bars(
                &l,
                &panel(
                    "synthesised area on each library",
                    "area, µm²",
                    &lib_series,
                    &left,
                    |v| format!("{v:.0}"),
                ),
            )?;
            chart::bars(
                &r,
                &panel(
                    "at 28 nm: ideal-shrink estimate vs the paper",
                    "area, mm²",
                    &right_series,
                    &right,
                    |v| format!("{v:.4}"),
                ),
            )
        },
        done,
    )
}

/// Each library with its node, in one colour per library.
fn library_series(areas: &[Area], libs: &[String]) -> Vec<(String, RGBColor)> {
    libs.iter()
        .enumerate()
        .map(|(i, l)| {
            let nm = areas
                .iter()
                .find(|a| &a.library == l)
                .map_or(0.0, |a| a.node_nm);
            (format!("{l} ({nm:.0} nm)"), chart::color(i))
        })
        .collect()
}

/// `values[block][library]` of both panels: the synthesised µm², and the 28 nm mm² with
/// the paper's figure last.
type PanelValues = Vec<Vec<Option<f64>>>;

fn panel_values(areas: &[Area], groups: &[String], libs: &[String]) -> (PanelValues, PanelValues) {
    let find = |b: &str, l: &str| areas.iter().find(|a| a.block == b && a.library == l);
    let left = groups
        .iter()
        .map(|b| {
            libs.iter()
                .map(|l| find(b, l).map(|a| a.area_um2))
                .collect()
        })
        .collect();
    let right = groups
        .iter()
        .map(|b| {
            let mut v: Vec<Option<f64>> = libs
                .iter()
                .map(|l| find(b, l).map(|a| a.area_mm2_28nm))
                .collect();
            v.push(
                areas
                    .iter()
                    .find(|a| &a.block == b)
                    .and_then(|a| a.paper_mm2),
            );
            v
        })
        .collect();
    (left, right)
}

fn table(areas: &[Area]) -> HtmlTable {
    HtmlTable {
        caption: "Synthesis (yosys); 28 nm estimate = area × (28 / node)², an ideal shrink".into(),
        header: [
            "block",
            "library",
            "area µm²",
            "cells",
            "FFs",
            "transistors",
            "28 nm mm²",
            "paper mm²",
        ]
        .map(String::from)
        .to_vec(),
        rows: areas
            .iter()
            .map(|a| {
                vec![
                    a.block.clone(),
                    a.library.clone(),
                    format!("{:.0}", a.area_um2),
                    a.cells.to_string(),
                    a.flip_flops.to_string(),
                    a.transistors.to_string(),
                    format!("{:.5}", a.area_mm2_28nm),
                    a.paper_mm2.map_or("—".into(), |p| format!("{p:.4}")),
                ]
            })
            .collect(),
        folded: false,
    }
}
