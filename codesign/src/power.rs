//! Power from the system run's switching: the input ports' activity ([`crate::activity`])
//! handed to OpenSTA, which propagates it through the synthesised netlist, with the timing
//! constraints at the GPU clock of the runs; the script sums internal, switching and
//! leakage power per cell at the library's corner (osu018: its one typical corner;
//! sky130hd: tt, 25 °C, 1.8 V).
//!
//! Debian's OpenSTA 2.0.17 reads no VCD or SAIF (`read_vcd`, `read_saif` and
//! `read_power_activities` are absent), so the activity goes in per input bit with
//! `set_power_activity -input_ports`: transitions per clock period and the share of time
//! at one. The clock runs every cycle (no clock gating), so the flip-flops' clock power is
//! all there.

use crate::CodesignError;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The design's power as the script sums it, W, and how many cells it left out.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Power {
    pub internal_w: f64,
    pub switching_w: f64,
    pub leakage_w: f64,
    /// Leaf cells of the netlist.
    pub cells: u64,
    /// Cells whose power OpenSTA gave as NaN or infinite, left out of the sums.
    pub undefined_cells: u64,
}

impl Power {
    /// Internal plus switching power.
    pub fn dynamic_w(&self) -> f64 {
        self.internal_w + self.switching_w
    }
}

/// The Tcl that sums `sta::instance_power` over the leaf cells and prints one line,
/// `mcmvm_power <internal> <switching> <leakage> <cells> <undefined cells>`.
///
/// Why not `report_power`: OpenSTA 2.0.17 keeps activities in single precision. For an
/// output's internal power it weights each input by (input activity ÷ output activity) ×
/// the probability that the input decides the output. On a gate whose other input is
/// almost never at its non-controlling value, the output barely toggles: in the 16-object
/// ATT a sky130hd `nand2_1` has input A at 2.8e5 transitions/s, input B at duty 0 and
/// 9e-30/s, output Y at 5e-34/s. The ratio (5e38) overflows the float to infinity, times
/// B's duty 0 gives NaN, and NaN makes `report_power`'s totals `-nan` and stops its
/// percentage column in Tcl ("can't use non-numeric floating-point value"). Summing per
/// cell keeps each cell's finite components (that NAND's switching and leakage power) and
/// counts the cells with a component that is not finite.
const SUM_POWER_TCL: &str = r#"proc mcmvm_finite {v} {
  if {[catch {expr {double($v)}} d]} { return 0 }
  return [expr {abs($d) <= 1.7976931348623157e308}]
}
set mcmvm_corner [sta::cmd_corner]
set mcmvm_sum {0.0 0.0 0.0}
set mcmvm_cells 0
set mcmvm_undefined 0
foreach inst [sta::network_leaf_instances] {
  incr mcmvm_cells
  set defined 1
  set sum {}
  foreach s $mcmvm_sum v [lrange [sta::instance_power $inst $mcmvm_corner] 0 2] {
    if {[mcmvm_finite $v]} { lappend sum [expr {$s + $v}] } else { lappend sum $s; set defined 0 }
  }
  set mcmvm_sum $sum
  if {!$defined} { incr mcmvm_undefined }
}
puts "mcmvm_power [join $mcmvm_sum { }] $mcmvm_cells $mcmvm_undefined"
"#;

/// The Tcl script that constrains `netlist` as timing does at `clock_mhz`
/// ([`mcmvm_synth::timing::constraints_at`]: the clock on port `clock` with `registers`,
/// else a virtual one, and every input launched by it), sets the activities and sums the
/// power ([`SUM_POWER_TCL`]).
pub fn script(
    liberty: &Path,
    netlist: &Path,
    top: &str,
    clock_mhz: f64,
    registers: bool,
    activity: &[(String, f64, f64)],
) -> String {
    let mut s = format!(
        "read_liberty {}\nread_verilog {}\nlink_design {top}\n{}",
        liberty.display(),
        netlist.display(),
        mcmvm_synth::timing::constraints_at(registers, 1000.0 / clock_mhz),
    );
    for (bit, a, d) in activity {
        s.push_str(&format!(
            "set_power_activity -input_ports [get_ports {{{bit}}}] -activity {a:e} -duty {:.6}\n",
            d.clamp(0.0, 1.0)
        ));
    }
    s.push_str(SUM_POWER_TCL);
    s.push_str("exit\n");
    s
}

/// How the power of a point whose runs recorded `vcds` VCDs was computed, as the output
/// names it. This OpenSTA reads no VCD or SAIF itself, so the activity is counted here.
pub fn method(vcds: usize) -> String {
    let activity = if vcds == 0 {
        "OpenSTA's default input activity (the runs recorded no port traffic)".to_string()
    } else {
        format!(
            "input-port activity counted from the system runs' {vcds} recorded VCD{}",
            if vcds == 1 { "" } else { "s" }
        )
    };
    format!("OpenSTA instance_power summed per cell, {activity}, propagated by OpenSTA")
}

/// Run OpenSTA on a [`script`] (written to `work/<tag>_power.tcl`) and read its sums.
pub fn report(text: String, work: &Path, tag: &str) -> Result<Power, CodesignError> {
    let sta = mcmvm_synth::tools::require("sta", "opensta")?;
    let path: PathBuf = work.join(format!("{tag}_power.tcl"));
    std::fs::write(&path, text).map_err(|source| CodesignError::Io {
        path: path.clone(),
        source,
    })?;
    let out = Command::new(&sta)
        .args(["-no_init", "-exit"])
        .arg(&path)
        .output()
        .map_err(|source| CodesignError::Io {
            path: sta.clone(),
            source,
        })?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    parse_sums(&stdout).ok_or_else(|| CodesignError::Tool {
        tool: "sta".into(),
        input: path,
        detail: format!(
            "no `mcmvm_power` line: {}{}",
            stdout.lines().rev().take(4).collect::<Vec<_>>().join(" | "),
            String::from_utf8_lossy(&out.stderr).trim()
        ),
    })
}

/// The `mcmvm_power internal switching leakage cells undefined` line of [`SUM_POWER_TCL`].
pub fn parse_sums(output: &str) -> Option<Power> {
    let line = output
        .lines()
        .find_map(|l| l.trim_start().strip_prefix("mcmvm_power "))?;
    let f: Vec<&str> = line.split_whitespace().collect();
    let [i, s, l, cells, undefined] = f.as_slice() else {
        return None;
    };
    Some(Power {
        internal_w: i.parse().ok()?,
        switching_w: s.parse().ok()?,
        leakage_w: l.parse().ok()?,
        cells: cells.parse().ok()?,
        undefined_cells: undefined.parse().ok()?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One sky130hd NAND2 from two input ports to an output port.
    const NAND: &str = "module t(a, b, y);\n  input a;\n  input b;\n  output y;\n  \
                        sky130_fd_sc_hd__nand2_1 g (.A(a), .B(b), .Y(y));\nendmodule\n";

    /// OpenSTA's sums for [`NAND`] with A toggling twice a cycle at duty 0.5 and B at duty
    /// 0 toggling `b_per_cycle`, at `clock_mhz`.
    fn nand_power(b_per_cycle: f64, clock_mhz: f64) -> Power {
        let dir = tempfile::tempdir().unwrap();
        let lib = mcmvm_synth::library::Library::sky130hd(dir.path()).unwrap();
        let netlist = dir.path().join("t.v");
        std::fs::write(&netlist, NAND).unwrap();
        let activity = [("a".into(), 2.0, 0.5), ("b".into(), b_per_cycle, 0.0)];
        let text = script(&lib.liberty, &netlist, "t", clock_mhz, false, &activity);
        report(text, dir.path(), "t").unwrap()
    }

    #[test]
    fn a_combinational_cell_has_dynamic_power_at_the_clock_and_nan_is_counted() {
        // Timed at the clock, the inputs' activity reaches the cell: dynamic power, which
        // halves with the clock (the same toggles per cycle, half as many per second).
        let fast = nand_power(0.5, 1000.0);
        assert_eq!((fast.cells, fast.undefined_cells), (1, 0), "{fast:?}");
        assert!(fast.internal_w > 1e-7 && fast.switching_w > 0.0, "{fast:?}");
        let slow = nand_power(0.5, 500.0);
        assert!(
            (slow.dynamic_w() / fast.dynamic_w() - 0.5).abs() < 1e-6,
            "{slow:?} against {fast:?}"
        );
        assert_eq!(slow.leakage_w, fast.leakage_w);
        // B almost never toggles and is never 1: Y switches 5e-31 times a second against
        // A's 2e9, OpenSTA's float weight A/Y overflows, times B's duty 0 is NaN. The cell
        // is counted; its finite leakage and switching stay in the sums.
        let nan = nand_power(1e-39, 1000.0);
        assert_eq!((nan.cells, nan.undefined_cells), (1, 1), "{nan:?}");
        assert_eq!(nan.internal_w, 0.0, "{nan:?}");
        assert_eq!(nan.leakage_w, fast.leakage_w);
        assert!(nan.switching_w.is_finite(), "{nan:?}");
    }

    #[test]
    fn the_sums_line_is_read() {
        let out = "OpenSTA 2.0.17\nmcmvm_power 3.6e-6 1.4e-6 5.98e-9 3112 1\n";
        let p = parse_sums(out).unwrap();
        assert_eq!((p.cells, p.undefined_cells), (3112, 1));
        assert_eq!(p.leakage_w, 5.98e-9);
        assert!((p.dynamic_w() - 5.0e-6).abs() < 1e-18);
        assert_eq!(parse_sums("mcmvm_power 1 2 3\n"), None);
        assert_eq!(parse_sums("nothing"), None);
    }

    #[test]
    fn the_script_constrains_the_inputs_at_the_clock_and_sets_each_bit() {
        let s = script(
            Path::new("l.lib"),
            Path::new("n.v"),
            "rt",
            1000.0,
            true,
            &[("id[1]".into(), 0.25, 0.5)],
        );
        assert!(s.contains("-period 1 [get_ports clock]"), "{s}");
        assert!(s.contains("set_input_delay 0 -clock clk"), "{s}");
        let virt = script(Path::new("l"), Path::new("n"), "c", 500.0, false, &[]);
        assert!(
            virt.contains("create_clock -name clk -period 2\n"),
            "{virt}"
        );
        assert!(
            virt.contains("set_input_delay 0 -clock clk [all_inputs]"),
            "{virt}"
        );
        assert!(
            s.contains("[get_ports {id[1]}] -activity 2.5e-1 -duty 0.500000"),
            "{s}"
        );
        assert!(s.contains("sta::instance_power"), "{s}");
    }
}
