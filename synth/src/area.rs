//! Area, cell, flip-flop and transistor counts from yosys.

use crate::tools::{run_yosys_script, tail, SynthError, Tools};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const AREA_SCRIPT: &str = include_str!("../scripts/area.ys");
const TRANSISTOR_SCRIPT: &str = include_str!("../scripts/transistors.ys");

/// What one block costs. Field names are the `--json` keys.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct AreaReport {
    /// Verilog module name of the block.
    pub block: String,
    /// Area at 0.18 µm (osu018), µm².
    pub area_um2: f64,
    /// Standard cells after mapping.
    pub cells: u64,
    /// Sequential cells (Liberty `ff` groups).
    pub flip_flops: u64,
    /// `stat -tech cmos` estimate after flip-flop legalisation.
    pub transistors: u64,
    /// Ideal-shrink estimate at 28 nm, mm² (see the crate docs for the formula).
    pub area_mm2_28nm: f64,
    /// The paper's figure at 28 nm, mm², where it gives one.
    pub paper_mm2: Option<f64>,
    /// Cell name → count.
    pub cell_counts: BTreeMap<String, u64>,
}

/// The papers' 28 nm area figures: CLAP's RT 0.0124 mm², coalescing logic 0.0024 mm²
/// (UMC 28 nm). Forest gives no area for the ATT.
pub fn paper_mm2(module: &str) -> Option<f64> {
    match module {
        "remote_tracker" => Some(0.0124),
        "tlb_coalescer" => Some(0.0024),
        _ => None,
    }
}

fn fill(template: &str, pairs: &[(&str, &Path)]) -> String {
    let mut s = template.to_string();
    for (k, v) in pairs {
        s = s.replace(k, &v.display().to_string());
    }
    s
}

fn run_yosys(
    tools: &Tools,
    script: &str,
    work: &Path,
    name: &str,
    input: &Path,
) -> Result<String, SynthError> {
    let out = run_yosys_script(tools, script, &work.join(format!("{name}.ys")), input)?;
    if !out.status.success() {
        return Err(SynthError::ToolFailed {
            tool: "yosys".into(),
            input: input.to_path_buf(),
            detail: tail(&out, 6),
        });
    }
    let stat = work.join(format!("{name}.stat"));
    std::fs::read_to_string(&stat).map_err(|source| SynthError::Io { path: stat, source })
}

/// Synthesise module `top` of `verilog` and report its cost. Intermediate scripts and
/// statistics go to `work`.
pub fn synthesize(
    tools: &Tools,
    verilog: &Path,
    top: &str,
    work: &Path,
) -> Result<AreaReport, SynthError> {
    std::fs::create_dir_all(work).map_err(|source| SynthError::Io {
        path: work.to_path_buf(),
        source,
    })?;
    let verilog = verilog.canonicalize().map_err(|source| SynthError::Io {
        path: verilog.to_path_buf(),
        source,
    })?;
    let top_path = PathBuf::from(top);
    let area_stat = work.join(format!("{top}_area.stat"));
    let cmos_stat = work.join(format!("{top}_cmos.stat"));
    let area_script = fill(
        AREA_SCRIPT,
        &[
            ("{VERILOG}", &verilog),
            ("{TOP}", &top_path),
            ("{LIBERTY}", &tools.liberty),
            ("{STAT}", &area_stat),
        ],
    );
    let cmos_script = fill(
        TRANSISTOR_SCRIPT,
        &[
            ("{VERILOG}", &verilog),
            ("{TOP}", &top_path),
            ("{STAT}", &cmos_stat),
        ],
    );
    let area_text = run_yosys(tools, &area_script, work, &format!("{top}_area"), &verilog)?;
    let cmos_text = run_yosys(tools, &cmos_script, work, &format!("{top}_cmos"), &verilog)?;
    let sequential = sequential_cells(&tools.liberty)?;
    let parsed = parse_liberty_stat(&area_text, top)?;
    let transistors = parse_transistors(&cmos_text, top)?;
    let flip_flops = parsed
        .cell_counts
        .iter()
        .filter(|(c, _)| sequential.contains(*c))
        .map(|(_, n)| n)
        .sum();
    Ok(AreaReport {
        block: top.to_string(),
        area_um2: parsed.area_um2,
        cells: parsed.cells,
        flip_flops,
        transistors,
        area_mm2_28nm: crate::scale_to_28nm_mm2(parsed.area_um2),
        paper_mm2: paper_mm2(top),
        cell_counts: parsed.cell_counts,
    })
}

/// Figures read from `stat -liberty`.
#[derive(Debug, PartialEq)]
pub struct LibertyStat {
    pub area_um2: f64,
    pub cells: u64,
    pub cell_counts: BTreeMap<String, u64>,
}

/// Parse yosys' `stat -liberty` output.
pub fn parse_liberty_stat(text: &str, top: &str) -> Result<LibertyStat, SynthError> {
    let err = |detail: &str| SynthError::Parse {
        top: top.to_string(),
        detail: detail.to_string(),
    };
    let mut cells = None;
    let mut area = None;
    let mut cell_counts = BTreeMap::new();
    let mut in_cells = false;
    for line in text.lines() {
        let t = line.trim();
        if let Some(rest) = t.strip_prefix("Number of cells:") {
            cells = rest.trim().parse::<u64>().ok();
            in_cells = true;
            continue;
        }
        if let Some(rest) = t.strip_prefix("Chip area for module") {
            area = rest
                .rsplit(':')
                .next()
                .and_then(|a| a.trim().parse::<f64>().ok());
            in_cells = false;
            continue;
        }
        if in_cells {
            let mut parts = t.split_whitespace();
            match (parts.next(), parts.next(), parts.next()) {
                (Some(name), Some(n), None) => {
                    if let Ok(n) = n.parse::<u64>() {
                        cell_counts.insert(name.to_string(), n);
                    }
                }
                _ => {
                    // A blank line ends the per-cell list.
                    if t.is_empty() {
                        in_cells = false;
                    }
                }
            }
        }
    }
    Ok(LibertyStat {
        area_um2: area.ok_or_else(|| err("no `Chip area` line"))?,
        cells: cells.ok_or_else(|| err("no `Number of cells` line"))?,
        cell_counts,
    })
}

/// Parse `Estimated number of transistors: N` (a trailing `+` means yosys left cells out,
/// which the legalisation step prevents; it is an error here so it cannot go unnoticed).
pub fn parse_transistors(text: &str, top: &str) -> Result<u64, SynthError> {
    let line = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("Estimated number of transistors:"))
        .ok_or_else(|| SynthError::Parse {
            top: top.to_string(),
            detail: "no transistor estimate".into(),
        })?;
    let v = line.trim();
    if v.ends_with('+') {
        return Err(SynthError::Parse {
            top: top.to_string(),
            detail: format!("transistor estimate `{v}` leaves cells out"),
        });
    }
    v.parse().map_err(|_| SynthError::Parse {
        top: top.to_string(),
        detail: format!("bad transistor count `{v}`"),
    })
}

/// Names of the Liberty cells that hold a flip-flop (`ff (...)` group).
pub fn sequential_cells(liberty: &Path) -> Result<Vec<String>, SynthError> {
    let text = std::fs::read_to_string(liberty).map_err(|source| SynthError::Io {
        path: liberty.to_path_buf(),
        source,
    })?;
    let mut out = Vec::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        let t = line.trim_start();
        if let Some(rest) = t.strip_prefix("cell") {
            let rest = rest.trim_start();
            if let Some(name) = rest.strip_prefix('(').and_then(|r| r.split(')').next()) {
                current = Some(name.trim().trim_matches('"').to_string());
            }
        } else if t.starts_with("ff ") || t.starts_with("ff(") {
            if let Some(c) = current.take() {
                out.push(c);
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const STAT: &str = "
=== t ===

   Number of wires:                 48
   Number of cells:                 52
     AND2X1                          4
     DFFPOSX1                        8
     OAI21X1                        40

   Chip area for module '\\t': 2068.000000
";

    #[test]
    fn liberty_stat_gives_area_cells_and_per_cell_counts() {
        let s = parse_liberty_stat(STAT, "t").unwrap();
        assert_eq!(s.cells, 52);
        assert_eq!(s.area_um2, 2068.0);
        assert_eq!(s.cell_counts.get("DFFPOSX1"), Some(&8));
        assert_eq!(s.cell_counts.values().sum::<u64>(), 52);
    }

    #[test]
    fn incomplete_transistor_estimate_is_refused() {
        assert_eq!(
            parse_transistors("Estimated number of transistors: 374", "t").unwrap(),
            374
        );
        assert!(parse_transistors("Estimated number of transistors: 300+", "t").is_err());
        assert!(parse_transistors("nothing", "t").is_err());
    }
}
