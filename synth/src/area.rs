//! Area, cell, flip-flop and transistor counts from yosys.

use crate::library::{CellInfo, Library};
use crate::tools::{io_error, run_yosys_script, tail, SynthError, Tools};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The yosys script of a block's cost: one generic synthesis, mapped to the library (area,
/// netlist) and to CMOS gates (transistors). Public so that caches can key on it.
pub const COST_SCRIPT: &str = include_str!("../scripts/cost.ys");

/// What one block costs on one library. Field names are the `--json` keys.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct AreaReport {
    /// Verilog module name of the block.
    pub block: String,
    /// `osu018` (0.18 µm) or `sky130hd` (130 nm).
    pub library: String,
    /// The library's node, nm.
    pub node_nm: f64,
    /// Area on the library, µm².
    pub area_um2: f64,
    /// Area of every cell but the flip-flops, µm².
    pub logic_area_um2: f64,
    /// Area as NAND2-equivalents (area / the library's smallest NAND2's area).
    pub nand2_equivalents: f64,
    /// Minimum clock period from static timing (OpenSTA), ns; for a design without
    /// flip-flops, its worst input-to-output delay (`combinational`).
    pub min_period_ns: f64,
    /// No flip-flop: the design was timed input to output on a virtual clock.
    pub combinational: bool,
    /// 1000 / min period.
    pub max_clock_mhz: f64,
    /// The papers' clock, MHz (CLAP's GPU runs at 1132 MHz), where it applies.
    pub paper_clock_mhz: Option<f64>,
    /// Standard cells after mapping.
    pub cells: u64,
    /// Sequential cells (Liberty `ff` groups).
    pub flip_flops: u64,
    /// `stat -tech cmos` estimate after flip-flop legalisation.
    pub transistors: u64,
    /// Ideal-shrink estimate at 28 nm, mm²: area × (28 / node)², an estimate only.
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
    script_path: &Path,
    input: &Path,
) -> Result<(), SynthError> {
    let out = run_yosys_script(tools, script, script_path, input)?;
    if !out.status.success() {
        return Err(SynthError::ToolFailed {
            tool: "yosys".into(),
            input: input.to_path_buf(),
            detail: tail(&out, 6),
        });
    }
    Ok(())
}

fn read_stat(path: PathBuf) -> Result<String, SynthError> {
    std::fs::read_to_string(&path).map_err(io_error(&path))
}

/// Synthesise module `top` of `verilog` to osu018 and report its cost.
pub fn synthesize(
    tools: &Tools,
    verilog: &Path,
    top: &str,
    work: &Path,
) -> Result<AreaReport, SynthError> {
    synthesize_on(tools, &Library::osu018(tools), verilog, top, work)
}

/// The libraries a block is reported on: osu018 and sky130hd (unpacked into `work`).
pub fn libraries(tools: &Tools, work: &Path) -> Result<Vec<Library>, SynthError> {
    Ok(vec![Library::osu018(tools), Library::sky130hd(work)?])
}

/// The yosys lines that map enable flip-flops to `lib`'s enable-flop cell (empty when the
/// library has none); its blackbox and techmap files are written into `work`.
fn enable_flop_lines(
    lib: &Library,
    cells: &BTreeMap<String, CellInfo>,
    top: &str,
    work: &Path,
) -> Result<String, SynthError> {
    let Some(ef) = &lib.enable_flop else {
        return Ok(String::new());
    };
    if !cells.get(ef.cell).is_some_and(|c| c.sequential) {
        return Err(SynthError::Parse {
            top: top.to_string(),
            detail: format!(
                "{}: no sequential cell `{}` (the library's enable flip-flop)",
                lib.liberty.display(),
                ef.cell
            ),
        });
    }
    let blackbox = work.join(format!("{}_blackbox.v", ef.cell));
    let techmap = work.join(format!("{}_techmap.v", ef.cell));
    for (path, text) in [
        (&blackbox, ef.blackbox_verilog()),
        (&techmap, ef.techmap_verilog()),
    ] {
        std::fs::write(path, text).map_err(|source| SynthError::Io {
            path: path.clone(),
            source,
        })?;
    }
    // Synchronous resets and other flop kinds become $_DFF_P_ / $_DFFE_PP_ plus
    // logic; the enable flops go to the library cell, the rest to `dfflibmap`.
    Ok(format!(
        "read_verilog -lib {}\ndfflegalize -cell $_DFF_P_ 01 -cell $_DFFE_PP_ 01\ntechmap -map {}",
        blackbox.display(),
        techmap.display()
    ))
}

/// A design with edge-triggered logic needs a flip-flop cell (a Liberty `ff` group) to map
/// its registers to. Checked from the Liberty file and the Verilog before yosys runs: the
/// mapping that would fail comes after the generic synthesis, which takes minutes on the
/// Access Time Tracker.
fn require_flip_flops(
    lib: &Library,
    cells: &BTreeMap<String, CellInfo>,
    verilog: &Path,
    top: &str,
) -> Result<(), SynthError> {
    if cells.values().any(|c| c.sequential) {
        return Ok(());
    }
    let text = std::fs::read_to_string(verilog).map_err(io_error(verilog))?;
    if !(text.contains("posedge") || text.contains("negedge")) {
        return Ok(());
    }
    Err(SynthError::UnusableLibrary {
        path: lib.liberty.clone(),
        top: top.to_string(),
        reason: format!(
            "no flip-flop cell (no cell with an `ff` group) among its {} cells, and the design has registers",
            cells.len()
        ),
    })
}

/// What the netlist's cell counts mean in `cells`' terms: flip-flops, their area, and the
/// area of the library's smallest two-input NAND (the gate-equivalent unit; infinite when
/// the library has none).
struct CellFigures {
    flip_flops: u64,
    ff_area: f64,
    nand2: f64,
}

fn cell_figures(parsed: &LibertyStat, cells: &BTreeMap<String, CellInfo>) -> CellFigures {
    let info = |c: &str| cells.get(c).copied().unwrap_or_default();
    let flip_flops = parsed
        .cell_counts
        .iter()
        .filter(|(c, _)| info(c).sequential)
        .map(|(_, n)| n)
        .sum();
    let ff_area: f64 = parsed
        .cell_counts
        .iter()
        .filter(|(c, _)| info(c).sequential)
        .map(|(c, &n)| info(c).area * n as f64)
        .sum();
    let nand2 = cells
        .iter()
        .filter(|(name, c)| {
            name.to_ascii_lowercase().contains("nand2") && !c.sequential && c.area > 0.0
        })
        .map(|(_, c)| c.area)
        .fold(f64::INFINITY, f64::min);
    CellFigures {
        flip_flops,
        ff_area,
        nand2,
    }
}

/// The mapped netlist of module `top` on `lib` that a cost run leaves in `work` (timing and
/// power read it; the synthesis cache puts it back there).
pub fn netlist_path(lib: &Library, top: &str, work: &Path) -> PathBuf {
    work.join(format!("{top}_{}_netlist.v", lib.name))
}

/// Where one cost run of module `top` on `lib` writes into `work`.
struct CostFiles {
    script: PathBuf,
    area_stat: PathBuf,
    cmos_stat: PathBuf,
    netlist: PathBuf,
}

impl CostFiles {
    fn new(lib: &Library, top: &str, work: &Path) -> CostFiles {
        let tag = format!("{top}_{}", lib.name);
        CostFiles {
            script: work.join(format!("{tag}_cost.ys")),
            area_stat: work.join(format!("{tag}_area.stat")),
            cmos_stat: work.join(format!("{tag}_cmos.stat")),
            netlist: netlist_path(lib, top, work),
        }
    }

    /// The cost script for module `top` of `verilog` on `lib`.
    fn script(&self, lib: &Library, verilog: &Path, top: &str, enable_flops: &str) -> String {
        fill(
            COST_SCRIPT,
            &[
                ("{VERILOG}", verilog),
                ("{TOP}", Path::new(top)),
                ("{LIBERTY}", &lib.liberty),
                ("{STAT}", &self.area_stat),
                ("{CMOS_STAT}", &self.cmos_stat),
                ("{NETLIST}", &self.netlist),
            ],
        )
        .replace("{ENABLE_FLOPS}", enable_flops)
    }
}

/// Synthesise module `top` of `verilog` to `lib`, time it, and report its cost.
/// Intermediate scripts, statistics and the netlist go to `work`.
pub fn synthesize_on(
    tools: &Tools,
    lib: &Library,
    verilog: &Path,
    top: &str,
    work: &Path,
) -> Result<AreaReport, SynthError> {
    crate::tools::create_dir(work)?;
    let verilog = verilog.canonicalize().map_err(|source| SynthError::Io {
        path: verilog.to_path_buf(),
        source,
    })?;
    let files = CostFiles::new(lib, top, work);
    let cells = lib.cells()?;
    require_flip_flops(lib, &cells, &verilog, top)?;
    let enable_flops = enable_flop_lines(lib, &cells, top, work)?;
    let script = files.script(lib, &verilog, top, &enable_flops);
    run_yosys(tools, &script, &files.script, &verilog)?;
    let parsed = parse_liberty_stat(&read_stat(files.area_stat)?, top)?;
    let transistors = parse_transistors(&read_stat(files.cmos_stat)?, top)?;
    let netlist = files.netlist;
    let figures = cell_figures(&parsed, &cells);
    let combinational = figures.flip_flops == 0;
    let timing = crate::timing::analyse(&lib.liberty, &netlist, top, !combinational, work)?;
    Ok(AreaReport {
        block: top.to_string(),
        library: lib.name.to_string(),
        node_nm: lib.node_nm,
        area_um2: parsed.area_um2,
        logic_area_um2: parsed.area_um2 - figures.ff_area,
        nand2_equivalents: if figures.nand2.is_finite() {
            parsed.area_um2 / figures.nand2
        } else {
            0.0
        },
        min_period_ns: timing.min_period_ns,
        combinational,
        max_clock_mhz: timing.max_clock_mhz,
        paper_clock_mhz: paper_mm2(top).map(|_| 1132.0),
        cells: parsed.cells,
        flip_flops: figures.flip_flops,
        transistors,
        area_mm2_28nm: parsed.area_um2 * lib.shrink_to_28nm() * 1e-6,
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
