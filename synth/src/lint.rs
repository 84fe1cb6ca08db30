//! Lint of the emitted Verilog: `verilator --lint-only -Wall` (only DECLFILENAME waived:
//! rust-hdl writes one module per flip-flop instance into one file) and the yosys
//! structural checks of `scripts/check.ys` (no undriven wire, no latch).

use crate::tools::{require, run, run_yosys_script, tail, SynthError, Tools};
use std::path::Path;
use std::process::Command;

pub(crate) const CHECK_SCRIPT: &str = include_str!("../scripts/check.ys");

/// Outcome of linting one block.
#[derive(Debug, Clone)]
pub struct LintReport {
    pub block: String,
    /// Verilator warnings and errors, one per entry (`%Warning-WIDTH: ...`).
    pub verilator: Vec<String>,
    /// yosys check failures.
    pub yosys: Vec<String>,
}

impl LintReport {
    pub fn clean(&self) -> bool {
        self.verilator.is_empty() && self.yosys.is_empty()
    }
}

/// Lint module `top` in `verilog`; scripts go to `work`.
pub fn lint(
    tools: &Tools,
    verilog: &Path,
    top: &str,
    work: &Path,
) -> Result<LintReport, SynthError> {
    Ok(LintReport {
        block: top.to_string(),
        verilator: verilator_lint(tools, verilog, top)?,
        yosys: yosys_check(tools, verilog, top, work)?,
    })
}

/// `verilator --lint-only -Wall`'s warnings and errors, one per entry.
fn verilator_lint(tools: &Tools, verilog: &Path, top: &str) -> Result<Vec<String>, SynthError> {
    let verilator = match &tools.verilator {
        Some(v) => v.clone(),
        None => require("verilator", "verilator")?,
    };
    let out = run(
        Command::new(verilator)
            .args([
                "--lint-only",
                "-Wall",
                "-Wno-DECLFILENAME",
                "--top-module",
                top,
            ])
            .arg(verilog),
        "verilator",
        verilog,
    )?;
    let text = String::from_utf8_lossy(&out.stderr);
    let mut msgs: Vec<String> = text
        .lines()
        .filter(|l| l.starts_with("%Warning") || l.starts_with("%Error"))
        .map(|l| l.to_string())
        .collect();
    if !out.status.success() && msgs.is_empty() {
        msgs.push(format!(
            "verilator exited with {}: {}",
            out.status,
            tail(&out, 4)
        ));
    }
    Ok(msgs)
}

/// The failures of `scripts/check.ys` (undriven wires, latches); its script goes to `work`.
fn yosys_check(
    tools: &Tools,
    verilog: &Path,
    top: &str,
    work: &Path,
) -> Result<Vec<String>, SynthError> {
    crate::tools::create_dir(work)?;
    let script = CHECK_SCRIPT
        .replace("{VERILOG}", &verilog.display().to_string())
        .replace("{TOP}", top);
    let out = run_yosys_script(
        tools,
        &script,
        &work.join(format!("{top}_check.ys")),
        verilog,
    )?;
    let mut msgs: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .chain(String::from_utf8_lossy(&out.stderr).lines())
        .filter(|l| l.contains("Warning") || l.contains("ERROR"))
        .map(|l| l.trim().to_string())
        .collect();
    if !out.status.success() && msgs.is_empty() {
        msgs.push(format!("yosys check failed: {}", tail(&out, 4)));
    }
    Ok(msgs)
}
