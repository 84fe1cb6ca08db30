//! Bounded model check of the Remote Tracker's port properties.
//!
//! The harness `formal/rt_props.sv` (written from `rtl/src/remote_tracker.md` alone) wraps
//! the emitted `remote_tracker` module; yosys turns both into one AIGER model (assertions →
//! bad-state outputs, assumptions → invariant constraints) and Debian's `yosys-abc` (part of
//! the `yosys` package) runs `bmc3` on it: bit-level SAT, one frame per clock cycle.
//!
//! Why not yosys-smtbmc: with yosys 0.23's `write_smt2` output, z3 4.8.12 does not even
//! finish *reading* the model (its define-fun expansion of the transition relation runs for
//! minutes on a 2-entry RT, before any `check-sat`), and Debian's boolector 1.5 has no
//! SMT-LIB2 `set-option` / incremental mode. The AIGER path needs no extra package.
//!
//! A failing check returns the counterexample's inputs cycle by cycle (from the ABC witness
//! and the yosys map file), so a mutant's failure says what stimulus broke it.

use crate::tools::{require, run, tail, SynthError};
use mcmvm_protocol::config::HwConfig;
use mcmvm_protocol::protocol::BlockKind;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// The property harness (module `rt_formal`, parameters `ENTRIES`, `CBITS`).
pub const RT_HARNESS: &str = include_str!("../formal/rt_props.sv");

/// Largest table for which ABC's `scorr` runs before `bmc3`. Measured (2-entry, 2-bit,
/// free power-up, 12 cycles): 4.0 s of bmc3 with it, 8.5 s without; on the 32-entry RT
/// scorr alone did not finish in 5 minutes, while bmc3 without it reaches 8 cycles in 19 s.
pub const SCORR_MAX_ENTRIES: usize = 4;

/// One check of the Remote Tracker (bounded unless `unbounded`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RtBmc {
    /// Table entries of the emitted RT.
    pub entries: usize,
    /// Counter width (saturation at `2^counter_bits - 1`).
    pub counter_bits: u32,
    /// Cycles checked: frames 0..depth (cycle 0 is the reset cycle).
    pub depth: u32,
    /// Every DUT flip-flop starts from a free value (the `initial` values rust-hdl emits
    /// are deleted), so the reset properties hold from any power-up state. `false` starts
    /// from rust-hdl's all-zero initial state (shallower state space, deeper runs).
    pub free_power_up: bool,
    /// ABC's time limit for the whole run, seconds.
    pub timeout_s: u32,
    /// Run ABC's `pdr` (IC3) instead of `bmc3`: a proof for every depth (`depth` is then
    /// ignored) or a counterexample.
    pub unbounded: bool,
}

/// What the check found.
#[derive(Debug, Clone, PartialEq)]
pub enum BmcOutcome {
    /// No assertion fails in `depth` cycles.
    Pass { depth: u32, seconds: f64 },
    /// `pdr` found an inductive invariant: no assertion fails in any cycle.
    Proved { seconds: f64 },
    /// An assertion fails in cycle `cycle`; `trace` has the inputs of each cycle.
    Fail {
        cycle: u32,
        seconds: f64,
        trace: Vec<String>,
    },
}

impl BmcOutcome {
    pub fn passed(&self) -> bool {
        matches!(self, BmcOutcome::Pass { .. } | BmcOutcome::Proved { .. })
    }
}

/// The Verilog of the Remote Tracker with `entries` rows and `counter_bits`-bit counters
/// (other parameters at their defaults), from the current RTL source.
pub fn rt_verilog(entries: usize, counter_bits: u32) -> Result<String, SynthError> {
    let mut cfg = HwConfig::default();
    cfg.remote_tracker.entries = entries;
    cfg.remote_tracker.counter_bits = counter_bits;
    mcmvm_rtl::emit::verilog(BlockKind::RemoteTracker, &cfg).map_err(|e| SynthError::ToolFailed {
        tool: "mcmvm-rtl emit".into(),
        input: PathBuf::from("rtl/src/remote_tracker.rs"),
        detail: e.to_string(),
    })
}

/// yosys script: harness + DUT → flattened AIGER with bad-state and constraint outputs.
fn yosys_script(dut: &Path, harness: &Path, check: &RtBmc, aig: &Path, map: &Path) -> String {
    let free = if check.free_power_up {
        // Delete the DUT's `initial` values: write_aiger -zinit then gives each such
        // flip-flop a free initial value (an extra input).
        "setattr -unset init rt_formal/w:dut.*\n"
    } else {
        ""
    };
    format!(
        "read_verilog {dut}\n\
         read_verilog -formal {harness}\n\
         chparam -set ENTRIES {e} -set CBITS {c} rt_formal\n\
         hierarchy -check -top rt_formal\n\
         proc\n\
         flatten\n\
         {free}\
         opt_clean\n\
         async2sync\n\
         dffunmap\n\
         setundef -anyseq\n\
         opt -keepdc -fast\n\
         check -assert\n\
         setattr -unset keep\n\
         delete -output\n\
         opt -full\n\
         techmap\n\
         opt -fast\n\
         dffunmap\n\
         abc -g AND -fast\n\
         opt_clean\n\
         write_aiger -I -B -zinit -map {map} {aig}\n",
        dut = dut.display(),
        harness = harness.display(),
        e = check.entries,
        c = check.counter_bits,
        map = map.display(),
        aig = aig.display(),
    )
}

/// The files one check reads and writes, all under its work directory.
struct CheckFiles {
    dut: PathBuf,
    script: PathBuf,
    aig: PathBuf,
    map: PathBuf,
    cex: PathBuf,
}

/// Write the DUT, the harness and the yosys script into `work` (a stale counterexample
/// is removed so an old one is never read back as this run's).
fn write_check_files(
    dut_verilog: &str,
    check: &RtBmc,
    work: &Path,
) -> Result<CheckFiles, SynthError> {
    crate::tools::create_dir(work)?;
    let write = |name: &str, text: &str| -> Result<PathBuf, SynthError> {
        let p = work.join(name);
        std::fs::write(&p, text).map_err(|source| SynthError::Io {
            path: p.clone(),
            source,
        })?;
        Ok(p)
    };
    let dut = write("remote_tracker.v", dut_verilog)?;
    let harness = write("rt_props.sv", RT_HARNESS)?;
    let aig = work.join("rt_formal.aig");
    let map = work.join("rt_formal.aim");
    let cex = work.join("rt_formal.cex");
    let _ = std::fs::remove_file(&cex);
    let script = write(
        "rt_formal.ys",
        &yosys_script(&dut, &harness, check, &aig, &map),
    )?;
    Ok(CheckFiles {
        dut,
        script,
        aig,
        map,
        cex,
    })
}

/// ABC's command line: read the AIGER model, simplify, run `bmc3` (or `pdr`), write the
/// counterexample.
fn abc_command(check: &RtBmc, aig: &Path, cex: &Path) -> String {
    // fold: constraints (the harness's assumptions) must hold in every frame up to the
    // failure; dc2: combinational simplification; scorr: sequential (induction-proved
    // equivalences and constants) for small tables only, see SCORR_MAX_ENTRIES.
    let scorr = if check.entries <= SCORR_MAX_ENTRIES {
        "scorr; "
    } else {
        ""
    };
    let prover = if check.unbounded {
        format!("pdr -T {}", check.timeout_s)
    } else {
        format!("bmc3 -F {} -T {}", check.depth, check.timeout_s)
    };
    format!(
        "read_aiger {aig}; fold; strash; {scorr}dc2; {prover}; write_cex -a {cex}",
        aig = aig.display(),
        cex = cex.display(),
    )
}

/// Run the check on `dut_verilog` (the text of module `remote_tracker`, possibly a
/// mutant); files go to `work`.
pub fn check_rt(dut_verilog: &str, check: &RtBmc, work: &Path) -> Result<BmcOutcome, SynthError> {
    let yosys = require("yosys", "yosys")?;
    let abc = require("yosys-abc", "yosys")?;
    let files = write_check_files(dut_verilog, check, work)?;

    let start = Instant::now();
    let out = run(
        Command::new(&yosys).arg("-q").arg("-s").arg(&files.script),
        "yosys",
        &files.dut,
    )?;
    if !out.status.success() {
        return Err(SynthError::ToolFailed {
            tool: "yosys".into(),
            input: files.dut,
            detail: tail(&out, 6),
        });
    }
    let abc_cmd = abc_command(check, &files.aig, &files.cex);
    let out = run(
        Command::new(&abc).arg("-c").arg(&abc_cmd),
        "yosys-abc",
        &files.aig,
    )?;
    let seconds = start.elapsed().as_secs_f64();
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    parse_abc(&text, check.depth, seconds, &files.map, &files.cex).ok_or_else(|| {
        SynthError::ToolFailed {
            tool: "yosys-abc".into(),
            input: files.aig.clone(),
            detail: format!(
                "no verdict for depth {} within {} s: {}",
                check.depth,
                check.timeout_s,
                tail(&out, 4)
            ),
        }
    })
}

/// The verdict in ABC's `bmc3` output; `None` when it stopped early (time limit) or said
/// nothing recognisable.
fn parse_abc(text: &str, depth: u32, seconds: f64, map: &Path, cex: &Path) -> Option<BmcOutcome> {
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with("Property proved.") {
            return Some(BmcOutcome::Proved { seconds });
        }
        // "No output asserted in 16 frames. Resource limit reached ..."
        if let Some(rest) = line.strip_prefix("No output asserted in ") {
            let frames: u32 = rest.split_whitespace().next()?.parse().ok()?;
            return (frames >= depth).then_some(BmcOutcome::Pass {
                depth: frames,
                seconds,
            });
        }
        // `Output 1 of miter "rt_formal" was asserted in frame 5. Time = ...`
        if line.starts_with("Output ") && line.contains("was asserted in frame") {
            let cycle: u32 = line
                .split("was asserted in frame")
                .nth(1)?
                .trim()
                .trim_end_matches(|c: char| !c.is_ascii_digit())
                .split(|c: char| !c.is_ascii_digit())
                .next()?
                .parse()
                .ok()?;
            let trace = decode_trace(map, cex).unwrap_or_else(|e| vec![e]);
            return Some(BmcOutcome::Fail {
                cycle,
                seconds,
                trace,
            });
        }
    }
    None
}

/// The harness's port inputs of each cycle of an ABC witness (`write_cex -a`: one line of
/// initial latch values, then one line of input bits per frame), named by the yosys map.
fn decode_trace(map: &Path, cex: &Path) -> Result<Vec<String>, String> {
    let map_text = std::fs::read_to_string(map).map_err(|e| format!("{}: {e}", map.display()))?;
    let cex_text = std::fs::read_to_string(cex).map_err(|e| format!("{}: {e}", cex.display()))?;
    // input <index> <bit> <name>
    let mut inputs: Vec<(usize, u32, String)> = Vec::new();
    for l in map_text.lines() {
        let p: Vec<&str> = l.split_whitespace().collect();
        if p.len() == 4 && p[0] == "input" && p[3] != "clock" {
            if let (Ok(i), Ok(b)) = (p[1].parse(), p[2].parse()) {
                inputs.push((i, b, p[3].to_string()));
            }
        }
    }
    let lines: Vec<&str> = cex_text
        .lines()
        // The last frame's line ends in "# DONE".
        .map(|l| l.split('#').next().unwrap_or("").trim())
        .filter(|l| !l.is_empty() && l.chars().all(|c| c == '0' || c == '1'))
        .collect();
    let frames = lines.get(1..).unwrap_or(&[]);
    let mut names: Vec<String> = inputs.iter().map(|(_, _, n)| n.clone()).collect();
    names.dedup();
    Ok(frames
        .iter()
        .enumerate()
        .map(|(t, f)| {
            let bits = f.as_bytes();
            let fields: Vec<String> = names
                .iter()
                .map(|n| {
                    let v: u64 = inputs
                        .iter()
                        .filter(|(i, _, m)| m == n && bits.get(*i) == Some(&b'1'))
                        .map(|(_, b, _)| 1u64 << b)
                        .sum();
                    format!("{n}={v}")
                })
                .collect();
            format!("cycle {t}: {}", fields.join(" "))
        })
        .collect())
}

/// A mutant of the emitted RT: the first occurrence of `from` replaced by `to`; `None`
/// when the text has no such occurrence (the RTL changed shape: update the mutant).
pub fn mutate(verilog: &str, from: &str, to: &str) -> Option<String> {
    verilog.find(from).map(|_| verilog.replacen(from, to, 1))
}

/// Mutant: the walk lane forgets that the walk was remote, so no remote walk is counted.
pub fn mutant_drop_remote(verilog: &str) -> Option<String> {
    mutate(
        verilog,
        "walk_stage_remote$d = walk_remote;",
        "walk_stage_remote$d = 1'b0;",
    )
}

/// Mutant: reset leaves row `row`'s valid bit alone (the first `valid$<row>$d = 1'b0;`
/// after `if (reset) begin` is deleted).
pub fn mutant_reset_keeps_row(verilog: &str, row: usize) -> Option<String> {
    let at = verilog.find("if (reset) begin")?;
    let target = format!("valid${row}$d = 1'b0;");
    let rel = verilog[at..].find(&target)?;
    let mut out = verilog.to_string();
    out.replace_range(at + rel..at + rel + target.len(), "");
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn abc_verdicts_parse() {
        let nowhere = Path::new("/nonexistent");
        let pass = "No output asserted in 16 frames. Resource limit reached (conf limit 0). Time =     2.33 sec";
        assert_eq!(
            parse_abc(pass, 16, 1.0, nowhere, nowhere),
            Some(BmcOutcome::Pass {
                depth: 16,
                seconds: 1.0
            })
        );
        // Stopped by the time limit before the requested depth: no verdict.
        assert_eq!(parse_abc(pass, 20, 1.0, nowhere, nowhere), None);
        let proved = "Property proved.  Time =     8.87 sec";
        assert_eq!(
            parse_abc(proved, 0, 2.0, nowhere, nowhere),
            Some(BmcOutcome::Proved { seconds: 2.0 })
        );
        let fail = "Output 0 of miter \"rt\" was asserted in frame 3. Time =     0.03 sec";
        match parse_abc(fail, 16, 1.0, nowhere, nowhere) {
            Some(BmcOutcome::Fail { cycle: 3, .. }) => {}
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn mutants_edit_the_text_they_name() {
        let v = "if (reset) begin\n valid$1$d = 1'b0;\n end\n walk_stage_remote$d = walk_remote;\n";
        assert!(mutant_drop_remote(v)
            .unwrap()
            .contains("walk_stage_remote$d = 1'b0;"));
        assert!(!mutant_reset_keeps_row(v, 1).unwrap().contains("valid$1$d"));
        assert_eq!(mutant_reset_keeps_row(v, 0), None);
    }
}
