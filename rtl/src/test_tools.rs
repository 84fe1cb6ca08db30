//! What the blocks' unit tests share: writing a module's Verilog to a scratch file and
//! running Verilator's lint and yosys on it. A missing tool fails the test with the command
//! that installs it: a skipped check would pass silently on a machine without the tools and
//! the Verilog would go unchecked. `mcmvm lint` / `mcmvm synth` run the full flows on the
//! emitted blocks; these are the quick checks next to each module.

use rust_hdl::prelude::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Write `uut`'s Verilog (top module `top`) to `<tmp>/mcmvm_<tag>_<pid>/<tag>.v`.
pub(crate) fn write_verilog<U: Block>(uut: &mut U, tag: &str) -> PathBuf {
    uut.connect_all();
    let dir = std::env::temp_dir().join(format!("mcmvm_{tag}_{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch directory is writable");
    let path = dir.join(format!("{tag}.v"));
    std::fs::write(&path, generate_verilog(uut)).expect("scratch file is writable");
    path
}

/// Remove the scratch directory of a file from [`write_verilog`].
pub(crate) fn remove_scratch(verilog: &Path) {
    if let Some(dir) = verilog.parent() {
        let _ = std::fs::remove_dir_all(dir);
    }
}

/// Run `tool` (the Debian package has the tool's name: yosys, verilator).
///
/// # Panics
/// When the tool cannot be started, naming the install command.
pub(crate) fn run_tool(tool: &str, args: &[&str]) -> Output {
    match Command::new(tool).args(args).output() {
        Ok(out) => out,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            panic!("{tool} not found on PATH: apt-get install {tool} (or make deps)")
        }
        Err(e) => {
            panic!("{tool} could not be started ({e}): apt-get install {tool} (or make deps)")
        }
    }
}

/// `verilator --lint-only -Wall` on `verilog` (only DECLFILENAME waived: rust-hdl puts one
/// module per flip-flop in one file); panics with the log on any warning.
pub(crate) fn assert_lint_clean(verilog: &Path, what: &str) {
    let file = verilog.to_str().expect("scratch path is UTF-8");
    let args = [
        "--lint-only",
        "-Wall",
        "-Wno-DECLFILENAME",
        "--top-module",
        "top",
        file,
    ];
    let out = run_tool("verilator", &args);
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && !log.contains("%Warning"),
        "{what}: {log}"
    );
}

/// Run a yosys script (`-p`); stdout and stderr together. Always `Some`: the `Option` is
/// only kept so the callers written for the old skip-when-missing behaviour still compile
/// (their `None` branches are now unreachable).
///
/// # Panics
/// When yosys is missing (with the install command) or fails (with its log).
pub(crate) fn yosys(script: &str, quiet: bool, what: &str) -> Option<String> {
    let mut args = vec!["-p", script];
    if quiet {
        args.insert(0, "-q");
    }
    let out = run_tool("yosys", &args);
    let log =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{what}: yosys failed: {log}");
    Some(log)
}
