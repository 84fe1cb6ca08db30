//! The input switching of a block in the system runs, read from the VCDs the runs recorded
//! (`--record-ports`): per input bit, its toggles and its cycles at 1. The VCD holds only
//! the cycles the system stepped; in the cycles it skipped the block was idle with its
//! inputs held, so a bit's activity is its toggles over *all* the block's clock cycles
//! (stepped + skipped) and its duty is taken over the stepped ones.

use crate::CodesignError;
use std::collections::BTreeMap;
use std::path::Path;

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
}
