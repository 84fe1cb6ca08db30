//! Static timing of a synthesised netlist with OpenSTA (Debian's `opensta`, binary `sta`):
//! one ideal clock on `clock`, inputs arriving and outputs required at the clock edge, the
//! worst register-to-register / input-to-register / register-to-output path. The minimum
//! period is the path's arrival time plus the capturing flip-flop's setup time.
//!
//! A netlist without flip-flops (the combinational coalescer) has no clock to put on its
//! `clock` port, and no register path: it is timed against a *virtual* clock, inputs
//! launched and outputs captured at its edge, so the worst path is input to output and the
//! "period" is that delay (no setup: the registers around the unit belong to its user).

use crate::tools::{require, SynthError};
use std::path::Path;
use std::process::Command;

/// The worst path of a design.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Timing {
    /// Minimum clock period, ns.
    pub min_period_ns: f64,
    /// 1000 / min period.
    pub max_clock_mhz: f64,
}

/// Period the check is run at; the slack then gives the minimum period exactly.
const PROBE_PERIOD_NS: f64 = 1.0;

/// The timing constraints of a design at the probe period ([`constraints_at`]).
pub fn constraints(registers: bool) -> String {
    constraints_at(registers, PROBE_PERIOD_NS)
}

/// The timing constraints of a design with a clock of `period_ns`: with `registers`, the
/// clock on port `clock`; without, a virtual clock that only times the input-to-output
/// paths. Every input is launched by the clock: OpenSTA's power analysis scales a pin's
/// activity by the period of the clock whose paths reach it, so an input without an input
/// delay has no clock and its logic no dynamic power.
pub fn constraints_at(registers: bool, period_ns: f64) -> String {
    if registers {
        format!(
            "create_clock -name clk -period {period_ns} [get_ports clock]\n\
             set_input_delay 0 -clock clk [delete_from_list [all_inputs] [get_ports clock]]\n\
             set_output_delay 0 -clock clk [all_outputs]\n"
        )
    } else {
        format!(
            "create_clock -name clk -period {period_ns}\n\
             set_input_delay 0 -clock clk [all_inputs]\n\
             set_output_delay 0 -clock clk [all_outputs]\n"
        )
    }
}

/// Time `netlist` (module `top`) on `liberty`; `registers` says whether it has flip-flops
/// ([`constraints`]).
pub fn analyse(
    liberty: &Path,
    netlist: &Path,
    top: &str,
    registers: bool,
    work: &Path,
) -> Result<Timing, SynthError> {
    let sta = require("sta", "opensta")?;
    // Named by library too: codesign times one block on two libraries at once in one `work`.
    let lib = liberty.file_stem().unwrap_or_default().to_string_lossy();
    let script = work.join(format!("{top}_{lib}_sta.tcl"));
    let text = format!(
        "read_liberty {lib}\nread_verilog {net}\nlink_design {top}\n{constraints}\
         report_checks -path_delay max -digits 4\nexit\n",
        lib = liberty.display(),
        net = netlist.display(),
        constraints = constraints(registers)
    );
    std::fs::write(&script, text).map_err(|source| SynthError::Io {
        path: script.clone(),
        source,
    })?;
    let out = Command::new(&sta)
        .arg("-no_init")
        .arg("-exit")
        .arg(&script)
        .output()
        .map_err(|source| SynthError::Io {
            path: sta.clone(),
            source,
        })?;
    let report = String::from_utf8_lossy(&out.stdout);
    let slack = parse_slack(&report).ok_or_else(|| SynthError::ToolFailed {
        tool: "sta".into(),
        input: netlist.to_path_buf(),
        detail: format!(
            "no slack in the report: {}{}",
            report.lines().rev().take(6).collect::<Vec<_>>().join(" | "),
            String::from_utf8_lossy(&out.stderr).trim()
        ),
    })?;
    let min_period_ns = PROBE_PERIOD_NS - slack;
    Ok(Timing {
        min_period_ns,
        max_clock_mhz: 1000.0 / min_period_ns,
    })
}

/// The slack of the first (worst) path: `  -10.1340   slack (VIOLATED)`.
pub fn parse_slack(report: &str) -> Option<f64> {
    report
        .lines()
        .find(|l| l.contains("slack (VIOLATED)") || l.contains("slack (MET)"))
        .and_then(|l| l.split_whitespace().next())
        .and_then(|v| v.parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_design_without_registers_is_timed_on_a_virtual_clock() {
        assert!(constraints(true).contains("[get_ports clock]"));
        let virt = constraints(false);
        assert!(
            virt.starts_with("create_clock -name clk -period 1\n"),
            "{virt}"
        );
        assert!(!virt.contains("get_ports clock"), "{virt}");
    }

    #[test]
    fn constraints_at_a_clock_launch_every_input_at_its_period() {
        let reg = constraints_at(true, 0.8834);
        assert!(
            reg.starts_with("create_clock -name clk -period 0.8834 [get_ports clock]\n"),
            "{reg}"
        );
        assert!(reg.contains("set_input_delay 0 -clock clk"), "{reg}");
        let virt = constraints_at(false, 0.5);
        assert!(
            virt.starts_with("create_clock -name clk -period 0.5\n"),
            "{virt}"
        );
        assert!(
            virt.contains("set_input_delay 0 -clock clk [all_inputs]"),
            "{virt}"
        );
        assert_eq!(constraints(true), constraints_at(true, PROBE_PERIOD_NS));
    }

    #[test]
    fn slack_is_read_from_the_worst_path() {
        let r = "  0.9290   data required time\n-----\n -10.1340   slack (VIOLATED)\n\n 0.5 slack (MET)\n";
        assert_eq!(parse_slack(r), Some(-10.134));
        assert_eq!(parse_slack("  0.2500   slack (MET)"), Some(0.25));
        assert_eq!(parse_slack("nothing"), None);
    }
}
