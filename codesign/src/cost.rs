//! What a point costs in silicon: its Verilog emitted, linted, synthesised on both libraries
//! through `mcmvm-synth` (area, logic area, flip-flops, critical path, max clock), and its
//! power from the system run's switching ([`crate::power`]).

use crate::activity::Activity;
use crate::power::{self, Power};
use crate::CodesignError;
use mcmvm_models::config::HwConfig;
use mcmvm_protocol::protocol::BlockKind;
use mcmvm_synth::area::{libraries, netlist_path};
use mcmvm_synth::cache::synthesize_cached;
use mcmvm_synth::library::Library;
use mcmvm_synth::Tools;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// One library's figures for one point (a subset of `mcmvm_synth::AreaReport`, plus power).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LibraryCost {
    pub library: String,
    pub node_nm: f64,
    pub area_um2: f64,
    pub logic_area_um2: f64,
    pub cells: u64,
    pub flip_flops: u64,
    /// Critical path, ns (for a block without flip-flops, its input-to-output delay).
    pub critical_path_ns: f64,
    pub max_clock_mhz: f64,
    pub combinational: bool,
    /// Power at the clock of the system run, W: internal + switching.
    pub dynamic_w: f64,
    pub leakage_w: f64,
    /// The clock the power is reported at, MHz.
    pub power_clock_mhz: f64,
    /// Cells whose power OpenSTA gave as NaN or infinite: left out of `dynamic_w` and
    /// `leakage_w` ([`crate::power`] says why).
    #[serde(default)]
    pub power_undefined_cells: u64,
    /// The Liberty corner the timing and power are at: `typical, 1.8 V, 25 °C`.
    #[serde(default)]
    pub corner: String,
}

/// The Verilog of a point, written to `dir/<module>.v`.
pub struct Emitted {
    pub path: PathBuf,
    pub text: String,
}

/// Emit `block`'s Verilog for `hw` into `dir`.
pub fn emit(block: BlockKind, hw: &HwConfig, dir: &Path) -> Result<Emitted, CodesignError> {
    let text = mcmvm_rtl::emit::verilog(block, hw).map_err(|e| CodesignError::Emit {
        module: block.module_name(),
        detail: e.to_string(),
    })?;
    std::fs::create_dir_all(dir).map_err(|source| CodesignError::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    let path = dir.join(format!("{}.v", block.module_name()));
    std::fs::write(&path, &text).map_err(|source| CodesignError::Io {
        path: path.clone(),
        source,
    })?;
    Ok(Emitted { path, text })
}

/// `clean`, or how many messages Verilator -Wall and yosys `check` gave.
pub fn lint(
    tools: &Tools,
    v: &Emitted,
    block: BlockKind,
    work: &Path,
) -> Result<String, CodesignError> {
    let root = mcmvm_synth::cache::cache_root();
    let (r, _) =
        mcmvm_synth::lint_cache::lint_cached(&root, tools, &v.path, block.module_name(), work)?;
    Ok(if r.clean() {
        "clean".into()
    } else {
        format!("{} msg", r.verilator.len() + r.yosys.len())
    })
}

/// Synthesised netlists of a point, one per library, before power is known.
pub struct Synthesised {
    pub lib: Library,
    pub netlist: PathBuf,
    pub report: mcmvm_synth::AreaReport,
}

/// Synthesise on osu018 and sky130hd, one yosys at a time per library, both at once.
pub fn synthesise(
    tools: &Tools,
    v: &Emitted,
    block: BlockKind,
    work: &Path,
) -> Result<Vec<Synthesised>, CodesignError> {
    let libs = libraries(tools, work)?;
    let top = block.module_name();
    let root = &mcmvm_synth::cache::cache_root();
    let results: Vec<Result<Synthesised, CodesignError>> = std::thread::scope(|s| {
        let handles: Vec<_> = libs
            .iter()
            .map(|lib| {
                s.spawn(move || -> Result<Synthesised, CodesignError> {
                    let (report, _) = synthesize_cached(root, tools, lib, &v.path, top, work)?;
                    Ok(Synthesised {
                        lib: lib.clone(),
                        netlist: netlist_path(lib, top, work),
                        report,
                    })
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or(Err(CodesignError::Panicked("synthesis")))
            })
            .collect()
    });
    results.into_iter().collect()
}

/// The figures of each library, with power from `activity` over `clock_cycles` block
/// cycles at `clock_mhz`.
pub fn with_power(
    synthesised: &[Synthesised],
    block: BlockKind,
    activity: &Activity,
    clock_cycles: u64,
    clock_mhz: f64,
    work: &Path,
) -> Result<Vec<LibraryCost>, CodesignError> {
    let per_cycle = activity.per_cycle(clock_cycles);
    synthesised
        .iter()
        .map(|s| {
            let top = block.module_name();
            let text = power::script(
                &s.lib.liberty,
                &s.netlist,
                top,
                clock_mhz,
                !s.report.combinational,
                &per_cycle,
            );
            let p: Power = power::report(text, work, &format!("{top}_{}", s.lib.name))?;
            let r = &s.report;
            Ok(LibraryCost {
                library: r.library.clone(),
                node_nm: r.node_nm,
                area_um2: r.area_um2,
                logic_area_um2: r.logic_area_um2,
                cells: r.cells,
                flip_flops: r.flip_flops,
                critical_path_ns: r.min_period_ns,
                max_clock_mhz: r.max_clock_mhz,
                combinational: r.combinational,
                dynamic_w: p.dynamic_w(),
                leakage_w: p.leakage_w,
                power_clock_mhz: clock_mhz,
                power_undefined_cells: p.undefined_cells,
                corner: s.lib.corner()?.to_string(),
            })
        })
        .collect()
}
