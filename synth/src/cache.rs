//! The on-disk cache of synthesis results: one JSON file per (block, library, hash), the
//! hash over everything that decides the result — the Verilog, the library's Liberty file,
//! the yosys cost script and the timing constraints, the versions of yosys and OpenSTA, and
//! the source of the code that reads their reports — so a rerun of `mcmvm hw` or `mcmvm
//! synth` on unchanged Verilog skips yosys and OpenSTA, and any change synthesises afresh.
//!
//! An entry holds the report and the mapped netlist (copied back into the work directory,
//! where power analysis reads it) and a hash of both. It is written whole to a temporary
//! file and renamed into place, so a killed process leaves no half entry; nothing is served
//! unchecked: an entry that does not parse, belongs to another key or whose contents do not
//! match its hash (truncated, corrupted) is synthesised again, with one line on stderr
//! saying why. Two processes asking for the same new entry both synthesise it and both get
//! the same result; the later rename wins.

use crate::area::{synthesize_on, AreaReport};
use crate::library::Library;
use crate::tools::{io_error, SynthError, Tools};
use mcmvm_protocol::cache::Fnv;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

/// Environment variable naming the cache root.
pub const CACHE_ENV: &str = "MCMVM_SYNTH_CACHE";

/// Bump when an entry's layout changes.
const FORMAT: &str = "mcmvm-synth-cache-1";

/// The code that turns yosys' and OpenSTA's output into a report: a change to it changes
/// every key, so no report read by older code is served.
const READERS: [&str; 3] = [
    include_str!("area.rs"),
    include_str!("timing.rs"),
    include_str!("library.rs"),
];

/// The cache root: `$MCMVM_SYNTH_CACHE`, else `synth-cache/` in the workspace's target
/// directory.
pub fn cache_root() -> PathBuf {
    match std::env::var_os(CACHE_ENV) {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => mcmvm_protocol::cache::target_dir().join("synth-cache"),
    }
}

/// Where a report came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// Read from a verified cache entry.
    Cache,
    /// Synthesised (or, for a lint result, linted) by this call (no entry yet).
    Synthesised,
    /// Synthesised (linted) again because the entry found was not valid.
    Rebuilt,
}

#[derive(Serialize, Deserialize)]
struct Entry {
    format: String,
    key: String,
    report: AreaReport,
    netlist: String,
    /// Hash of the key, the report as JSON and the netlist.
    check: String,
}

fn check_of(key: &str, report: &AreaReport, netlist: &str) -> String {
    let json = serde_json::to_string(report).unwrap_or_default();
    format!(
        "{:016x}",
        Fnv::new().part(key).part(&json).part(netlist).value()
    )
}

/// `synthesize_on` through the cache at `root`: module `top` of `verilog` on `lib`, its
/// netlist left in `work` as `<top>_<library>_netlist.v` either way.
pub fn synthesize_cached(
    root: &Path,
    tools: &Tools,
    lib: &Library,
    verilog: &Path,
    top: &str,
    work: &Path,
) -> Result<(AreaReport, Source), SynthError> {
    let text = std::fs::read_to_string(verilog).map_err(io_error(verilog))?;
    let key = key(tools, lib, &text, top)?;
    let entry_path = root.join(format!("{top}-{}-{key}.json", lib.name));
    let netlist_path = crate::area::netlist_path(lib, top, work);
    let source = match read_checked::<Entry>(&entry_path, FORMAT, &key) {
        Ok(Some(e)) => {
            crate::tools::create_dir(work)?;
            std::fs::write(&netlist_path, &e.netlist).map_err(io_error(&netlist_path))?;
            return Ok((e.report, Source::Cache));
        }
        Ok(None) => Source::Synthesised,
        Err(why) => {
            eprintln!(
                "synth cache: {}: {why}; synthesising again",
                entry_path.display()
            );
            Source::Rebuilt
        }
    };
    let report = synthesize_on(tools, lib, verilog, top, work)?;
    let netlist = std::fs::read_to_string(&netlist_path).map_err(io_error(&netlist_path))?;
    let entry = Entry {
        format: FORMAT.to_string(),
        check: check_of(&key, &report, &netlist),
        key,
        report,
        netlist,
    };
    write_entry(root, &entry_path, &entry)?;
    Ok((entry.report, source))
}

/// What [`read_checked`] needs of a cache entry: its layout, its key, and whether its
/// contents match the hash stored with them.
pub(crate) trait CheckedEntry: serde::de::DeserializeOwned {
    fn format(&self) -> &str;
    fn key(&self) -> &str;
    fn intact(&self) -> bool;
}

impl CheckedEntry for Entry {
    fn format(&self) -> &str {
        &self.format
    }
    fn key(&self) -> &str {
        &self.key
    }
    fn intact(&self) -> bool {
        check_of(&self.key, &self.report, &self.netlist) == self.check
    }
}

/// The entry at `path` if it is there and valid (layout `format`, key `key`, contents
/// matching their hash), `None` if there is none; `Err` says why one that is there is not.
pub(crate) fn read_checked<T: CheckedEntry>(
    path: &Path,
    format: &str,
    key: &str,
) -> Result<Option<T>, String> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("unreadable ({e})")),
    };
    let e: T = serde_json::from_str(&text)
        .map_err(|e| format!("not a cache entry (truncated or corrupted: {e})"))?;
    if e.format() != format || e.key() != key {
        return Err(format!(
            "belongs to another key or layout ({} {})",
            e.format(),
            e.key()
        ));
    }
    if !e.intact() {
        return Err("its contents do not match their hash (corrupted)".to_string());
    }
    Ok(Some(e))
}

/// Write `entry` to `path`: whole, to a temporary file in `root`, then renamed.
fn write_entry(root: &Path, path: &Path, entry: &Entry) -> Result<(), SynthError> {
    write_json(root, path, entry, &entry.report.block)
}

/// Write `value` as JSON to `path` (an entry of block `top`): whole, to a temporary file in
/// `root`, then renamed.
pub(crate) fn write_json<T: Serialize>(
    root: &Path,
    path: &Path,
    value: &T,
    top: &str,
) -> Result<(), SynthError> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    crate::tools::create_dir(root)?;
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let tmp = root.join(format!(".tmp-{}-{n}.json", std::process::id()));
    let text = serde_json::to_string(value).map_err(|e| SynthError::Parse {
        top: top.to_string(),
        detail: format!("cannot write the cache entry: {e}"),
    })?;
    std::fs::write(&tmp, text).map_err(io_error(&tmp))?;
    std::fs::rename(&tmp, path).map_err(io_error(path))
}

/// The entry's key: everything that decides the report.
fn key(tools: &Tools, lib: &Library, verilog: &str, top: &str) -> Result<String, SynthError> {
    let liberty = std::fs::read(&lib.liberty).map_err(io_error(&lib.liberty))?;
    let mut h = Fnv::new();
    h.part(FORMAT).part(top).part(lib.name).part(verilog);
    h.bytes(&(liberty.len() as u64).to_le_bytes())
        .bytes(&liberty);
    h.part(crate::area::COST_SCRIPT)
        .part(&crate::timing::constraints(true))
        .part(&crate::timing::constraints(false))
        .parts(&READERS)
        .part(tool_versions(tools));
    if let Some(ef) = &lib.enable_flop {
        h.part(&ef.blackbox_verilog()).part(&ef.techmap_verilog());
    }
    Ok(format!("{:016x}", h.value()))
}

/// `yosys -V` and `sta -version`, asked once per process.
pub(crate) fn tool_versions(tools: &Tools) -> &'static str {
    static VERSIONS: OnceLock<String> = OnceLock::new();
    VERSIONS.get_or_init(|| {
        let version = |tool: &Path, flag: &str| {
            Command::new(tool)
                .arg(flag)
                .output()
                .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
                .unwrap_or_else(|e| format!("{}: {e}", tool.display()))
        };
        let sta = crate::tools::which("sta").unwrap_or_else(|| PathBuf::from("sta"));
        format!(
            "{}\n{}",
            version(&tools.yosys, "-V"),
            version(&sta, "-version")
        )
    })
}
