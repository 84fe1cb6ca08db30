//! Power from the system run's switching: the input ports' activity read from the VCDs the
//! run recorded (`--record-ports`), handed to OpenSTA's `report_power`, which propagates it
//! through the synthesised netlist and sums internal, switching and leakage power at the
//! library's corner (osu018: its one typical corner; sky130hd: tt, 25 °C, 1.8 V).
//!
//! Debian's OpenSTA 2.0.17 reads no VCD or SAIF (`read_vcd`, `read_saif` and
//! `read_power_activities` are absent), so the activity goes in per input bit with
//! `set_power_activity -input_ports`: transitions per clock period and the share of time
//! at one. The VCD holds only the cycles the system stepped; in the cycles it skipped the block
//! was idle with its inputs held, so a bit's activity is its toggles over *all* the block's
//! clock cycles (stepped + skipped) and its duty is taken over the stepped ones. The clock
//! runs every cycle (no clock gating), so the flip-flops' clock power is all there.

use crate::CodesignError;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Toggles and ones of one input bit, over the stepped cycles of every recorded instance.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct BitCount {
    pub toggles: u64,
    pub ones: u64,
}

/// The input switching of one block over one or more recorded runs.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Activity {
    /// `port` or `port[i]` → counts.
    pub bits: BTreeMap<String, BitCount>,
    /// Stepped cycles over every VCD read.
    pub stepped: u64,
}

impl Activity {
    /// Add the input scope of one recorded VCD.
    pub fn add_vcd(&mut self, path: &Path) -> Result<(), CodesignError> {
        let text = std::fs::read_to_string(path).map_err(|source| CodesignError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let parsed = parse_vcd_inputs(&text).map_err(|source| CodesignError::Vcd {
            path: path.to_path_buf(),
            source,
        })?;
        for (name, c) in parsed.bits {
            let e = self.bits.entry(name).or_default();
            e.toggles += c.toggles;
            e.ones += c.ones;
        }
        self.stepped += parsed.stepped;
        Ok(())
    }

    /// (bit, transitions per clock cycle, duty) with `clock_cycles` the block's cycles in
    /// the runs (stepped + skipped).
    pub fn per_cycle(&self, clock_cycles: u64) -> Vec<(String, f64, f64)> {
        let cycles = clock_cycles.max(self.stepped).max(1) as f64;
        let stepped = self.stepped.max(1) as f64;
        self.bits
            .iter()
            .filter(|(name, _)| name.as_str() != "clock")
            .map(|(name, c)| {
                (
                    name.clone(),
                    c.toggles as f64 / cycles,
                    c.ones as f64 / stepped,
                )
            })
            .collect()
    }
}

/// Why a recorded VCD could not be read.
#[derive(Debug, thiserror::Error)]
pub enum VcdError {
    #[error("bad width in `{line}`")]
    Width {
        line: String,
        #[source]
        source: std::num::ParseIntError,
    },
    #[error("no `inputs` scope")]
    NoInputs,
    #[error("bad vector change `{line}`")]
    Vector { line: String },
}

/// The `inputs` scope's variables: id → (name, width).
type InputVars = BTreeMap<String, (String, usize)>;

/// The `inputs` scope of a recorded VCD: per bit, toggles between consecutive stepped
/// cycles and cycles at 1 (`#t` marks a stepped cycle; the first values are not toggles).
pub fn parse_vcd_inputs(text: &str) -> Result<Activity, VcdError> {
    let mut lines = text.lines();
    let vars = input_vars(&mut lines)?;
    let mut counter = Counter {
        vars: &vars,
        value: BTreeMap::new(),
        act: Activity::default(),
    };
    let mut first = true;
    for line in lines {
        let line = line.trim();
        if line.starts_with('#') {
            if !first {
                counter.count_cycle();
            }
            first = false;
            continue;
        }
        if let Some((bits, id)) = value_change(line)? {
            counter.change(bits, id);
        }
    }
    if !first {
        counter.count_cycle();
    }
    let mut act = counter.act;
    // Every input bit appears, toggling or not.
    for (name, w) in vars.values() {
        for i in 0..*w {
            act.bits.entry(bit_name(name, *w, i)).or_default();
        }
    }
    Ok(act)
}

/// The header up to `$enddefinitions`: the variables of the `inputs` scope.
fn input_vars<'a>(lines: &mut impl Iterator<Item = &'a str>) -> Result<InputVars, VcdError> {
    let mut vars = InputVars::new();
    let mut scope: Vec<&str> = Vec::new();
    for line in lines {
        let f: Vec<&str> = line.split_whitespace().collect();
        match f.as_slice() {
            ["$scope", _, name, "$end"] => scope.push(name),
            ["$upscope", "$end"] => {
                scope.pop();
            }
            ["$var", _, width, id, name, "$end"] if scope.last() == Some(&"inputs") => {
                let w = width.parse().map_err(|source| VcdError::Width {
                    line: line.to_string(),
                    source,
                })?;
                vars.insert(id.to_string(), (name.to_string(), w));
            }
            ["$enddefinitions", "$end"] => break,
            _ => {}
        }
    }
    if vars.is_empty() {
        return Err(VcdError::NoInputs);
    }
    Ok(vars)
}

/// A value-change line as (bits MSB first, id); None for any other line.
fn value_change(line: &str) -> Result<Option<(&str, &str)>, VcdError> {
    Ok(match line.as_bytes().first() {
        Some(b'b') => match line[1..].split_once(' ') {
            Some((v, id)) => Some((v, id.trim())),
            None => {
                return Err(VcdError::Vector {
                    line: line.to_string(),
                })
            }
        },
        Some(b'0' | b'1' | b'x' | b'z') => Some((&line[..1], &line[1..])),
        _ => None,
    })
}

/// Each input's current value, and the counts so far.
struct Counter<'v> {
    vars: &'v InputVars,
    value: BTreeMap<&'v str, Vec<bool>>,
    act: Activity,
}

impl<'v> Counter<'v> {
    /// A stepped cycle ends: count the bits at 1.
    fn count_cycle(&mut self) {
        for (id, bits) in &self.value {
            let (name, w) = &self.vars[*id];
            for (i, &b) in bits.iter().enumerate() {
                if b {
                    self.act.bits.entry(bit_name(name, *w, i)).or_default().ones += 1;
                }
            }
        }
        self.act.stepped += 1;
    }

    /// Input `id` takes `bits`: count the bits that toggle (not on its first value).
    fn change(&mut self, bits: &str, id: &str) {
        let Some((key, (name, w))) = self.vars.get_key_value(id) else {
            return;
        };
        // Vectors are MSB first and may be shorter than the width (left-extended with 0).
        let mut new = vec![false; *w];
        for (i, c) in bits.chars().rev().enumerate().take(*w) {
            new[i] = c == '1';
        }
        if let Some(old) = self.value.get(key.as_str()) {
            for i in 0..*w {
                if old[i] != new[i] {
                    self.act
                        .bits
                        .entry(bit_name(name, *w, i))
                        .or_default()
                        .toggles += 1;
                }
            }
        }
        self.value.insert(key.as_str(), new);
    }
}

fn bit_name(port: &str, width: usize, i: usize) -> String {
    if width == 1 {
        port.to_string()
    } else {
        format!("{port}[{i}]")
    }
}

/// What OpenSTA reported, W.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Power {
    pub internal_w: f64,
    pub switching_w: f64,
    pub leakage_w: f64,
    pub total_w: f64,
}

impl Power {
    /// Internal plus switching power.
    pub fn dynamic_w(&self) -> f64 {
        self.internal_w + self.switching_w
    }
}

/// The Tcl script that sets the activities on `netlist` at `clock_mhz` and reports power.
/// `registers`: the clock is on port `clock`; without flip-flops (the combinational
/// coalescer) it is a virtual clock the activities are counted against.
pub fn script(
    liberty: &Path,
    netlist: &Path,
    top: &str,
    clock_mhz: f64,
    registers: bool,
    activity: &[(String, f64, f64)],
) -> String {
    let mut s = format!(
        "read_liberty {}\nread_verilog {}\nlink_design {top}\n\
         create_clock -name clk -period {:.6}{}\n",
        liberty.display(),
        netlist.display(),
        1000.0 / clock_mhz,
        if registers { " [get_ports clock]" } else { "" }
    );
    for (bit, a, d) in activity {
        s.push_str(&format!(
            "set_power_activity -input_ports [get_ports {{{bit}}}] -activity {a:.9} -duty {:.6}\n",
            d.clamp(0.0, 1.0)
        ));
    }
    s.push_str("report_power -digits 9\nexit\n");
    s
}

/// Run OpenSTA on a [`script`] (written to `work/<tag>_power.tcl`) and read its total.
pub fn report(text: String, work: &Path, tag: &str) -> Result<Power, CodesignError> {
    let sta = mcmvm_synth::tools::require("sta", "opensta")?;
    let path: PathBuf = work.join(format!("{tag}_power.tcl"));
    std::fs::write(&path, text).map_err(|source| CodesignError::Io {
        path: path.clone(),
        source,
    })?;
    let run = || {
        Command::new(&sta)
            .args(["-no_init", "-exit"])
            .arg(&path)
            .output()
            .map_err(|source| CodesignError::Io {
                path: sta.clone(),
                source,
            })
    };
    let mut stdout = String::from_utf8_lossy(&run()?.stdout).to_string();
    // OpenSTA 2.0.17 has once stopped inside report_power's percentage column ("can't use
    // non-numeric floating-point value") on a script that reported whole when run again;
    // one more try tells that apart from a script that never reports.
    if parse_total(&stdout).is_none() {
        stdout = String::from_utf8_lossy(&run()?.stdout).to_string();
    }
    parse_total(&stdout).ok_or_else(|| CodesignError::Tool {
        tool: "sta".into(),
        input: path,
        detail: format!(
            "no `Total` line in report_power: {}",
            stdout.lines().rev().take(4).collect::<Vec<_>>().join(" | ")
        ),
    })
}

/// The `Total  internal switching leakage total  100.0%` line of `report_power`.
pub fn parse_total(report: &str) -> Option<Power> {
    let line = report
        .lines()
        .find(|l| l.trim_start().starts_with("Total "))?;
    let v: Vec<f64> = line
        .split_whitespace()
        .skip(1)
        .take(4)
        .map(|x| x.parse().ok())
        .collect::<Option<_>>()?;
    (v.len() == 4).then(|| Power {
        internal_w: v[0],
        switching_w: v[1],
        leakage_w: v[2],
        total_w: v[3],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const VCD: &str = "$timescale 1 ns $end
$scope module inputs $end
$var wire 1 ! reset $end
$var wire 3 \" id $end
$upscope $end
$scope module verilator $end
$var wire 1 # done $end
$upscope $end
$enddefinitions $end
#0
1!
b101 \"
0#
#1
0!
b1 \"
1#
#2
b11 \"
";

    #[test]
    fn vcd_inputs_give_toggles_and_ones_per_bit() {
        let a = parse_vcd_inputs(VCD).unwrap();
        assert_eq!(a.stepped, 3);
        // reset: 1, 0, 0 → one toggle, one cycle at 1.
        assert_eq!(
            a.bits["reset"],
            BitCount {
                toggles: 1,
                ones: 1
            }
        );
        // id: 101, 001, 011 → bit 2 toggles once, bit 1 once, bit 0 never (always 1).
        assert_eq!(
            a.bits["id[0]"],
            BitCount {
                toggles: 0,
                ones: 3
            }
        );
        assert_eq!(
            a.bits["id[1]"],
            BitCount {
                toggles: 1,
                ones: 1
            }
        );
        assert_eq!(
            a.bits["id[2]"],
            BitCount {
                toggles: 1,
                ones: 1
            }
        );
        assert!(!a.bits.contains_key("done"), "outputs are not inputs");
        // Over 6 clock cycles (3 stepped, 3 skipped), one toggle is 1/6 a cycle.
        let pc = a.per_cycle(6);
        let reset = pc.iter().find(|x| x.0 == "reset").unwrap();
        assert!((reset.1 - 1.0 / 6.0).abs() < 1e-12 && (reset.2 - 1.0 / 3.0).abs() < 1e-12);
        assert!(parse_vcd_inputs("$enddefinitions $end\n").is_err());
    }

    #[test]
    fn report_power_total_line_is_read() {
        let r = "Group  Internal Switching Leakage Total\n\
                 Sequential 2.7e-01 4.1e-03 2.3e-08 2.8e-01 87.5%\n\
                 Total                3.062175e-01 1.721124e-02 3.183520e-08 3.234288e-01 100.0%\n";
        let p = parse_total(r).unwrap();
        assert_eq!(p.leakage_w, 3.18352e-08);
        assert!((p.dynamic_w() - 0.32342874).abs() < 1e-9);
        assert_eq!(parse_total("nothing"), None);
    }

    #[test]
    fn the_script_sets_each_bit_and_the_clock() {
        let s = script(
            Path::new("l.lib"),
            Path::new("n.v"),
            "rt",
            1000.0,
            true,
            &[("id[1]".into(), 0.25, 0.5)],
        );
        assert!(s.contains("-period 1.000000 [get_ports clock]"), "{s}");
        let virt = script(Path::new("l"), Path::new("n"), "c", 500.0, false, &[]);
        assert!(
            virt.contains("create_clock -name clk -period 2.000000\n"),
            "{virt}"
        );
        assert!(
            s.contains("[get_ports {id[1]}] -activity 0.250000000 -duty 0.500000"),
            "{s}"
        );
    }
}
