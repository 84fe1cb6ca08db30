//! Figures and one HTML page from the files the studies already wrote — nothing here runs a
//! simulation.
//!
//! Inputs, under the output directory `out/`:
//! - `clap/clap.csv`, `clap/clap_structures.csv` (`mcmvm sweep --suite clap`);
//! - `forest/forest.csv` (`mcmvm sweep --suite forest`);
//! - `synth.json` (the list `mcmvm synth --json` prints) or else `hw-summary.json`
//!   (`mcmvm hw`, whose rows carry the same area report under `area`);
//! - `codesign/*.json` (`mcmvm codesign --block B`, one per block; optional, no note when absent);
//! - `robustness-<suite>/robustness.json` (`mcmvm sweep --suite clap|forest --robustness`;
//!   optional, a note when absent);
//! - the configuration files named in [`Options::configs`], shown verbatim.
//!
//! Outputs: `clap/fig-speedup.svg`, `clap/fig-page-sizes.svg`, `forest/fig-speedup.svg`,
//! `forest/fig-profiling.svg`, `fig-area.svg`, `codesign/fig-pareto-<block>.svg`,
//! `robustness-<suite>/fig-range.svg` and
//! `report.html`, which links the figures
//! by relative path. A missing input skips its figures with a note; a malformed one is a
//! [`ReportError::Parse`] naming the file and line.

pub mod chart;
pub mod clap;
pub mod codesign;
pub mod csv;
pub mod forest;
pub mod forest_curve;
pub mod html;
pub mod hw;
pub mod robustness;

use std::path::{Path, PathBuf};

/// What went wrong; every variant names the file.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error("{}:{line}: {detail}", path.display())]
    Parse {
        path: PathBuf,
        line: usize,
        detail: String,
    },
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}: drawing failed: {source}", path.display())]
    Plot {
        path: PathBuf,
        #[source]
        source: chart::DrawError,
    },
}

impl ReportError {
    pub fn parse(path: &Path, line: usize, detail: impl Into<String>) -> ReportError {
        ReportError::Parse {
            path: path.to_path_buf(),
            line,
            detail: detail.into(),
        }
    }
}

/// What to read and where to write.
#[derive(Debug, Clone)]
pub struct Options {
    /// The studies' output directory, where the report goes too.
    pub out: PathBuf,
    /// Configuration files to show on the page (missing ones get a note).
    pub configs: Vec<PathBuf>,
}

/// What [`build`] did.
#[derive(Debug, Clone, Default)]
pub struct Outcome {
    /// Every file written, in order; `report.html` last.
    pub written: Vec<PathBuf>,
    /// One line per figure or table skipped for want of its input.
    pub notes: Vec<String>,
}

/// A figure on the page: its path relative to `out/` and a caption.
#[derive(Debug, Clone)]
pub struct Figure {
    pub rel: String,
    pub caption: String,
}

/// A table on the page.
#[derive(Debug, Clone)]
pub struct HtmlTable {
    pub caption: String,
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
    /// Shown folded (`<details>`): the raw CSVs.
    pub folded: bool,
}

/// One study's part of the page.
#[derive(Debug, Clone, Default)]
pub struct Section {
    pub title: String,
    pub figures: Vec<Figure>,
    pub tables: Vec<HtmlTable>,
    pub notes: Vec<String>,
}

/// Read a file, `Ok(None)` if it does not exist.
pub fn read_optional(path: &Path) -> Result<Option<String>, ReportError> {
    match std::fs::read_to_string(path) {
        Ok(s) => Ok(Some(s)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(ReportError::Io {
            path: path.to_path_buf(),
            source,
        }),
    }
}

/// Write `text` to `out/rel`, creating directories, and record it.
pub(crate) fn write(
    out: &Path,
    rel: &str,
    text: &str,
    done: &mut Outcome,
) -> Result<(), ReportError> {
    let path = out.join(rel);
    let io = |source| ReportError::Io {
        path: path.clone(),
        source,
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(io)?;
    }
    std::fs::write(&path, text).map_err(io)?;
    done.written.push(path);
    Ok(())
}

/// Draw a figure with [`chart::svg`] and write it to `out/rel`.
pub(crate) fn write_svg(
    out: &Path,
    rel: &str,
    size: (u32, u32),
    draw: impl FnOnce(&chart::Area) -> chart::DrawResult,
    done: &mut Outcome,
) -> Result<(), ReportError> {
    let text = chart::svg(size.0, size.1, draw).map_err(|source| ReportError::Plot {
        path: out.join(rel),
        source,
    })?;
    write(out, rel, &text, done)
}

/// A note for a figure skipped because `input` is missing.
pub(crate) fn missing(what: &str, input: &Path, how: &str) -> String {
    format!(
        "skipped {what}: {} not found (run `{how}`)",
        input.display()
    )
}

/// Read every input present, write every figure it allows, then `report.html`.
pub fn build(opts: &Options) -> Result<Outcome, ReportError> {
    let mut done = Outcome::default();
    let mut sections = vec![
        clap::section(&opts.out, &mut done)?,
        forest::section(&opts.out, &mut done)?,
        hw::section(&opts.out, &mut done)?,
    ];
    let codesign = codesign::section(&opts.out, &mut done)?;
    if !codesign.figures.is_empty() {
        sections.push(codesign);
    }
    // Not part of `make run` (hundreds of runs): its notes say how to add it.
    let robustness = robustness::section(&opts.out, &mut done)?;
    for s in &sections {
        done.notes.extend(s.notes.iter().cloned());
    }
    done.notes.extend(clap::extras_note(&opts.out, "clap"));
    done.notes.extend(robustness.notes.iter().cloned());
    if !robustness.figures.is_empty() {
        sections.push(robustness);
    }
    let mut configs = Vec::new();
    for c in &opts.configs {
        match read_optional(c)? {
            Some(text) => configs.push((c.display().to_string(), text)),
            None => done
                .notes
                .push(format!("config {} not found: not shown", c.display())),
        }
    }
    let page = html::page(&sections, &configs, &html::today_utc());
    write(&opts.out, "report.html", &page, &mut done)?;
    Ok(done)
}
