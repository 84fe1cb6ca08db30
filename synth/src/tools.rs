//! Finding the external tools and the Liberty file, and running them with errors that say
//! what is missing and how to install it.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Why synthesis or lint could not run or did not pass.
#[derive(Debug, thiserror::Error)]
pub enum SynthError {
    #[error(
        "{tool} not found on PATH: install it with `apt-get install {package}` (or `make deps`)"
    )]
    ToolMissing { tool: String, package: String },
    #[error("Liberty file not found (looked at {looked}): run `make deps`, which unpacks Debian's qflow-tech-osu018, or set MCMVM_LIBERTY")]
    LibertyMissing { looked: String },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{tool} failed on {input}: {detail}")]
    ToolFailed {
        tool: String,
        input: PathBuf,
        detail: String,
    },
    /// The Liberty file lacks cells the design needs; found before yosys spends minutes
    /// on the generic synthesis that precedes the mapping.
    #[error("{path}: unusable Liberty file for {top}: {reason}")]
    UnusableLibrary {
        path: PathBuf,
        top: String,
        reason: String,
    },
    #[error("cannot read yosys statistics for {top}: {detail}")]
    Parse { top: String, detail: String },
}

/// Locations of yosys, verilator and the osu018 Liberty file.
#[derive(Debug, Clone)]
pub struct Tools {
    pub yosys: PathBuf,
    pub verilator: Option<PathBuf>,
    pub liberty: PathBuf,
}

/// Find an executable on PATH.
pub fn which(tool: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(tool))
        .find(|p| p.is_file())
}

/// Find a tool or say which Debian package provides it.
pub fn require(tool: &str, package: &str) -> Result<PathBuf, SynthError> {
    which(tool).ok_or_else(|| SynthError::ToolMissing {
        tool: tool.to_string(),
        package: package.to_string(),
    })
}

/// The Liberty file: `$MCMVM_LIBERTY`, the project-local copy `make deps` unpacks, or the
/// path a full qflow install uses.
pub fn find_liberty() -> Result<PathBuf, SynthError> {
    let mut candidates: Vec<PathBuf> = Vec::new();
    if let Some(p) = std::env::var_os("MCMVM_LIBERTY") {
        candidates.push(PathBuf::from(p));
    }
    candidates.push(PathBuf::from("tools/osu018/osu018_stdcells.lib"));
    candidates
        .push(Path::new(env!("CARGO_MANIFEST_DIR")).join("../tools/osu018/osu018_stdcells.lib"));
    candidates.push(PathBuf::from(
        "/usr/share/qflow/tech/osu018/osu018_stdcells.lib",
    ));
    candidates
        .iter()
        .find(|p| p.is_file())
        .cloned()
        .ok_or_else(|| SynthError::LibertyMissing {
            looked: candidates
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", "),
        })
}

impl Tools {
    /// yosys and the Liberty file are required; Verilator only for lint.
    pub fn discover() -> Result<Tools, SynthError> {
        Ok(Tools {
            yosys: require("yosys", "yosys")?,
            verilator: which("verilator"),
            liberty: find_liberty()?,
        })
    }
}

/// An I/O failure on `path`, for `map_err`.
pub(crate) fn io_error(path: &Path) -> impl FnOnce(std::io::Error) -> SynthError {
    let path = path.to_path_buf();
    move |source| SynthError::Io { path, source }
}

/// Create the work directory `work` (and its parents).
pub(crate) fn create_dir(work: &Path) -> Result<(), SynthError> {
    std::fs::create_dir_all(work).map_err(io_error(work))
}

/// Run a command, mapping a launch failure to a clear error.
pub(crate) fn run(cmd: &mut Command, tool: &str, input: &Path) -> Result<Output, SynthError> {
    cmd.output().map_err(|e| SynthError::ToolFailed {
        tool: tool.to_string(),
        input: input.to_path_buf(),
        detail: format!("could not start: {e}"),
    })
}

/// Write a yosys script to `script_path` and run it quietly; the caller reads the output.
pub(crate) fn run_yosys_script(
    tools: &Tools,
    script: &str,
    script_path: &Path,
    input: &Path,
) -> Result<Output, SynthError> {
    std::fs::write(script_path, script).map_err(|source| SynthError::Io {
        path: script_path.to_path_buf(),
        source,
    })?;
    run(
        Command::new(&tools.yosys)
            .arg("-q")
            .arg("-s")
            .arg(script_path),
        "yosys",
        input,
    )
}

/// Last lines of a tool's output, for error messages.
pub(crate) fn tail(out: &Output, lines: usize) -> String {
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    v[v.len().saturating_sub(lines)..].join(" | ")
}
