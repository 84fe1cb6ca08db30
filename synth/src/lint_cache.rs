//! Lint results cached beside the synthesis reports (`cache.rs`): one JSON entry per block
//! and hash of everything that decides the messages — the Verilog, the yosys check script,
//! the code that runs both linters and reads them, and the versions of yosys, OpenSTA and
//! Verilator. The yosys check repeats a generic synthesis (its latch check), seconds to
//! tens of seconds per block, so a rerun of `mcmvm hw` or `mcmvm lint` on unchanged Verilog
//! skips it. Messages are stored with the Verilog's path as a placeholder and read back
//! naming the file linted now. An entry that does not parse or match its hash is linted
//! again, with one line saying why.

use crate::cache::{read_checked, tool_versions, write_json, CheckedEntry, Source};
use crate::lint::{lint, LintReport, CHECK_SCRIPT};
use crate::tools::{io_error, SynthError, Tools};
use mcmvm_protocol::cache::Fnv;
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::process::Command;
use std::sync::OnceLock;

/// Bump when an entry's layout changes.
const FORMAT: &str = "mcmvm-lint-cache-1";

/// Stands for the linted file's path in stored messages.
const PATH_MARK: &str = "{VERILOG}";

#[derive(Serialize, Deserialize)]
struct LintEntry {
    format: String,
    key: String,
    verilator: Vec<String>,
    yosys: Vec<String>,
    /// Hash of the key and the messages.
    check: String,
}

impl LintEntry {
    fn check_of(&self) -> String {
        let mut h = Fnv::new();
        h.part(&self.key);
        for m in self.verilator.iter().chain(&self.yosys) {
            h.part(m);
        }
        format!("{:016x}", h.value())
    }
}

/// [`lint`] through the cache at `root`: module `top` of `verilog`, scripts in `work`.
pub fn lint_cached(
    root: &Path,
    tools: &Tools,
    verilog: &Path,
    top: &str,
    work: &Path,
) -> Result<(LintReport, Source), SynthError> {
    let text = std::fs::read_to_string(verilog).map_err(io_error(verilog))?;
    let key = key(tools, &text, top);
    let entry_path = root.join(format!("lint-{top}-{key}.json"));
    let shown = verilog.display().to_string();
    let source = match read_checked::<LintEntry>(&entry_path, FORMAT, &key) {
        Ok(Some(e)) => {
            let back = |m: Vec<String>| -> Vec<String> {
                m.into_iter()
                    .map(|s| s.replace(PATH_MARK, &shown))
                    .collect()
            };
            let report = LintReport {
                block: top.to_string(),
                verilator: back(e.verilator),
                yosys: back(e.yosys),
            };
            return Ok((report, Source::Cache));
        }
        Ok(None) => Source::Synthesised,
        Err(why) => {
            eprintln!("lint cache: {}: {why}; linting again", entry_path.display());
            Source::Rebuilt
        }
    };
    let report = lint(tools, verilog, top, work)?;
    let marked =
        |m: &[String]| -> Vec<String> { m.iter().map(|s| s.replace(&shown, PATH_MARK)).collect() };
    let mut entry = LintEntry {
        format: FORMAT.to_string(),
        key,
        verilator: marked(&report.verilator),
        yosys: marked(&report.yosys),
        check: String::new(),
    };
    entry.check = entry.check_of();
    write_json(root, &entry_path, &entry, top)?;
    Ok((report, source))
}

impl CheckedEntry for LintEntry {
    fn format(&self) -> &str {
        &self.format
    }
    fn key(&self) -> &str {
        &self.key
    }
    fn intact(&self) -> bool {
        self.check_of() == self.check
    }
}

/// The entry's key: everything that decides the messages.
fn key(tools: &Tools, verilog: &str, top: &str) -> String {
    let mut h = Fnv::new();
    h.part(FORMAT)
        .part(top)
        .part(verilog)
        .part(CHECK_SCRIPT)
        .part(include_str!("lint.rs"))
        .part(tool_versions(tools))
        .part(verilator_version(tools));
    format!("{:016x}", h.value())
}

/// `verilator --version`, asked once per process (a missing Verilator keys as such; `lint`
/// then says what to install).
fn verilator_version(tools: &Tools) -> &'static str {
    static VERSION: OnceLock<String> = OnceLock::new();
    VERSION.get_or_init(|| {
        let v = tools
            .verilator
            .clone()
            .or_else(|| crate::tools::which("verilator"));
        v.and_then(|v| Command::new(v).arg("--version").output().ok())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
            .unwrap_or_else(|| "no verilator".to_string())
    })
}
