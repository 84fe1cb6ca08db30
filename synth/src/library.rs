//! The standard-cell libraries a block is synthesised to: osu018 (0.18 µm, from Debian's
//! `qflow-tech-osu018`, unpacked by `make deps`) and SkyWater sky130_fd_sc_hd (130 nm,
//! typical corner, vendored gzip-compressed in `synth/liberty/` under Apache-2.0).

use crate::tools::{SynthError, Tools};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

/// The vendored sky130 high-density library (typical, 25 °C, 1.8 V).
const SKY130_HD_GZ: &[u8] = include_bytes!("../liberty/sky130_fd_sc_hd__tt_025C_1v80.lib.gz");

/// One Liberty library and its process node.
#[derive(Debug, Clone, PartialEq)]
pub struct Library {
    /// `osu018` or `sky130hd`.
    pub name: &'static str,
    pub liberty: PathBuf,
    /// Drawn feature size in nm: the node the 28 nm estimate scales from.
    pub node_nm: f64,
    /// The library's enable flip-flop, if it has one. yosys 0.23's `dfflibmap` maps no
    /// enable flip-flops, so without this every held register bit costs a hold mux.
    pub enable_flop: Option<EnableFlop>,
}

/// A positive-edge flip-flop with a data enable (`Q <= DE ? D : Q`), its pin names.
/// The area flow maps yosys' `$_DFFE_PP_` onto it with a techmap (the cell read as a
/// blackbox); its area counts as flip-flop area (the cell's Liberty group is an `ff`), so
/// the hold mux it absorbs leaves the logic area.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EnableFlop {
    pub cell: &'static str,
    pub clock: &'static str,
    pub d: &'static str,
    pub enable: &'static str,
    pub q: &'static str,
}

impl EnableFlop {
    /// The blackbox declaration and the techmap module for `$_DFFE_PP_`.
    pub fn blackbox_verilog(&self) -> String {
        format!(
            "(* blackbox *)\nmodule {cell}(input {c}, input {d}, input {e}, output {q});\nendmodule\n",
            cell = self.cell,
            c = self.clock,
            d = self.d,
            e = self.enable,
            q = self.q
        )
    }

    pub fn techmap_verilog(&self) -> String {
        format!(
            "module \\$_DFFE_PP_ (input D, input C, input E, output Q);\n  {cell} _TECHMAP_REPLACE_ (.{c}(C), .{d}(D), .{e}(E), .{q}(Q));\nendmodule\n",
            cell = self.cell,
            c = self.clock,
            d = self.d,
            e = self.enable,
            q = self.q
        )
    }
}

/// sky130_fd_sc_hd's enable flip-flop: 30.03 µm², against 20.02 µm² for `dfxtp_1` plus
/// 11.26 µm² for a `mux2_1` hold mux.
pub const SKY130_HD_ENABLE_FLOP: EnableFlop = EnableFlop {
    cell: "sky130_fd_sc_hd__edfxtp_1",
    clock: "CLK",
    d: "D",
    enable: "DE",
    q: "Q",
};

impl Library {
    /// osu018 at the path `Tools::discover` found.
    pub fn osu018(tools: &Tools) -> Library {
        Library {
            name: "osu018",
            liberty: tools.liberty.clone(),
            node_nm: 180.0,
            // osu018 has DFFPOSX1, DFFNEGX1, DFFSR, LATCH: no enable flip-flop.
            enable_flop: None,
        }
    }

    /// sky130_fd_sc_hd, unpacked into `work` on first use.
    pub fn sky130hd(work: &Path) -> Result<Library, SynthError> {
        let path = work.join("sky130_fd_sc_hd__tt_025C_1v80.lib");
        if !path.is_file() {
            crate::tools::create_dir(work)?;
            let mut text = Vec::new();
            flate2::read::GzDecoder::new(SKY130_HD_GZ)
                .read_to_end(&mut text)
                .map_err(|source| SynthError::Io {
                    path: PathBuf::from("synth/liberty/sky130_fd_sc_hd__tt_025C_1v80.lib.gz"),
                    source,
                })?;
            // Written whole, then renamed: parallel tests may unpack it at once.
            let tmp = work.join(format!("sky130.{}.tmp", std::process::id()));
            std::fs::write(&tmp, text).map_err(|source| SynthError::Io {
                path: tmp.clone(),
                source,
            })?;
            std::fs::rename(&tmp, &path).map_err(|source| SynthError::Io {
                path: path.clone(),
                source,
            })?;
        }
        Ok(Library {
            name: "sky130hd",
            liberty: path,
            node_nm: 130.0,
            enable_flop: Some(SKY130_HD_ENABLE_FLOP),
        })
    }

    /// Ideal-shrink factor of an area to 28 nm: (28 / node)².
    pub fn shrink_to_28nm(&self) -> f64 {
        (crate::TARGET_NM / self.node_nm).powi(2)
    }

    /// Per cell: its area and whether it holds a flip-flop (a Liberty `ff` group).
    pub fn cells(&self) -> Result<BTreeMap<String, CellInfo>, SynthError> {
        let text = std::fs::read_to_string(&self.liberty).map_err(|source| SynthError::Io {
            path: self.liberty.clone(),
            source,
        })?;
        Ok(parse_cells(&text))
    }
}

/// The operating corner a Liberty file is characterised at: its default operating
/// conditions' name and its nominal voltage and temperature (the values OpenSTA's power
/// and timing use when the script names no corner).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Corner {
    /// `typical` (osu018), `tt_025C_1v80` (sky130hd).
    pub name: String,
    pub voltage_v: f64,
    pub temperature_c: f64,
}

impl std::fmt::Display for Corner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}, {} V, {} °C",
            self.name, self.voltage_v, self.temperature_c
        )
    }
}

impl Library {
    /// The corner of this library's Liberty file ([`parse_corner`] on its header).
    pub fn corner(&self) -> Result<Corner, SynthError> {
        let io = |source| SynthError::Io {
            path: self.liberty.clone(),
            source,
        };
        let file = std::fs::File::open(&self.liberty).map_err(io)?;
        // The library-level attributes come before the first cell group.
        let mut header = String::new();
        for line in std::io::BufRead::lines(std::io::BufReader::new(file)).take(CORNER_LINES) {
            header.push_str(&line.map_err(io)?);
            header.push('\n');
        }
        parse_corner(&header).ok_or_else(|| SynthError::Parse {
            top: self.name.to_string(),
            detail: format!(
                "{}: no default_operating_conditions, nom_voltage and nom_temperature in its first {CORNER_LINES} lines",
                self.liberty.display()
            ),
        })
    }
}

/// How far into a Liberty file its library-level attributes are looked for.
const CORNER_LINES: usize = 400;

/// `default_operating_conditions`, `nom_voltage` and `nom_temperature` of a Liberty text.
pub fn parse_corner(text: &str) -> Option<Corner> {
    let value = |key: &str| {
        text.lines().find_map(|l| {
            let rest = l
                .trim_start()
                .strip_prefix(key)?
                .trim_start()
                .strip_prefix(':')?;
            Some(
                rest.trim()
                    .trim_end_matches(';')
                    .trim()
                    .trim_matches('"')
                    .to_string(),
            )
        })
    };
    Some(Corner {
        name: value("default_operating_conditions")?,
        voltage_v: value("nom_voltage")?.parse().ok()?,
        temperature_c: value("nom_temperature")?.parse().ok()?,
    })
}

/// What the report needs of a Liberty cell.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct CellInfo {
    pub area: f64,
    pub sequential: bool,
}

/// Cell groups of a Liberty text: `cell (NAME) { area : A; ... ff (...) ... }`.
pub fn parse_cells(text: &str) -> BTreeMap<String, CellInfo> {
    let mut out = BTreeMap::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        let t = line.trim_start();
        if let Some(rest) = t.strip_prefix("cell") {
            let rest = rest.trim_start();
            if let Some(name) = rest.strip_prefix('(').and_then(|r| r.split(')').next()) {
                let name = name.trim().trim_matches('"').to_string();
                out.insert(name.clone(), CellInfo::default());
                current = Some(name);
            }
            continue;
        }
        let Some(c) = current.as_ref().and_then(|c| out.get_mut(c)) else {
            continue;
        };
        if let Some(rest) = t.strip_prefix("area") {
            let v = rest.trim_start().trim_start_matches(':').trim();
            if let Ok(a) = v.trim_end_matches(';').trim().parse::<f64>() {
                if c.area == 0.0 {
                    c.area = a;
                }
            }
        } else if t.starts_with("ff ") || t.starts_with("ff(") {
            c.sequential = true;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_give_area_and_flip_flops() {
        let lib = "library (x) {\n cell (NAND2X1) {\n  area : 32;\n }\n cell (\"DFFPOSX1\") {\n  area : 192.5 ;\n  ff (DS0000,P0000) {\n  }\n }\n}\n";
        let c = parse_cells(lib);
        assert_eq!(
            c["NAND2X1"],
            CellInfo {
                area: 32.0,
                sequential: false
            }
        );
        assert_eq!(
            c["DFFPOSX1"],
            CellInfo {
                area: 192.5,
                sequential: true
            }
        );
    }

    #[test]
    fn the_corner_is_read_from_the_liberty_header() {
        let lib = "library (x) {\n  nom_process : 1;\n  nom_voltage : 1.8;\n  nom_temperature : 25;\n  default_operating_conditions : \"tt_025C_1v80\";\n cell (A) {\n }\n}\n";
        let c = parse_corner(lib).unwrap();
        assert_eq!(c.name, "tt_025C_1v80");
        assert_eq!((c.voltage_v, c.temperature_c), (1.8, 25.0));
        assert_eq!(c.to_string(), "tt_025C_1v80, 1.8 V, 25 °C");
        assert_eq!(parse_corner("library (x) {\n}\n"), None);
    }

    #[test]
    fn the_vendored_sky130_library_unpacks_and_has_its_flip_flops() {
        let dir = std::env::temp_dir().join(format!("mcmvm-sky130-{}", std::process::id()));
        let lib = Library::sky130hd(&dir).unwrap();
        let cells = lib.cells().unwrap();
        let dff = &cells["sky130_fd_sc_hd__dfxtp_1"];
        assert!(dff.sequential && dff.area > 15.0, "{dff:?}");
        assert!(!cells["sky130_fd_sc_hd__nand2_1"].sequential);
        let edff = &cells[SKY130_HD_ENABLE_FLOP.cell];
        assert!(edff.sequential && edff.area > dff.area, "{edff:?}");
        assert_eq!(lib.enable_flop, Some(SKY130_HD_ENABLE_FLOP));
        let corner = lib.corner().unwrap();
        assert_eq!(corner.name, "tt_025C_1v80");
        assert_eq!((corner.voltage_v, corner.temperature_c), (1.8, 25.0));
        assert!((lib.shrink_to_28nm() - (28.0f64 / 130.0).powi(2)).abs() < 1e-12);
        let _ = std::fs::remove_dir_all(dir);
    }
}
