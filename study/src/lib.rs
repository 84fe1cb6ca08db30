//! The studies of mcmvm, as a library: `mcmvm sweep --suite clap|forest|forest-sensitivity`
//! (their runs, the CLAP extras, tables and figures), the sweeps beyond one machine
//! (`--plan`, `--task-id`, `sweep merge`, `--resume`), `--robustness` over the plausible box
//! of the unknown timing parameters, and `mcmvm calibrate`'s runner.
//!
//! The CLI parses the flags into a [`sweep::Request`] (or a [`calibrate::Request`]) and
//! hands over two things the library does not own: [`Inputs`] (configurations by path, the
//! built-ins included, and the engines of `--hw`) and a [`Console`] (result lines,
//! progress bars, notes), so the library has no terminal dependency and runs under test
//! with [`console::Silent`].
//!
//! Layout:
//! * [`sweep`]: the request, the suites' dispatch, the options every job shares;
//! * [`clap`], [`extras`], [`forest`]: the suites' runs, tables and files;
//! * [`plan`]: plan files (one writer, also `mcmvm codesign`'s) and `--task-id`;
//! * [`runfile`], [`resume`], [`merge`]: the run files, the in-process sweep's checkpoint
//!   and Ctrl-C, and `sweep merge`;
//! * [`robust`]: `--robustness`; [`calibrate`]: `mcmvm calibrate`.

pub mod calibrate;
pub mod clap;
pub mod console;
mod error;
pub mod extras;
pub mod forest;
pub mod merge;
pub mod plan;
pub mod resume;
pub mod robust;
pub mod runfile;
pub mod sweep;
mod task;

pub use console::{Bar, Console};
pub use error::{BoxError, StudyError};

use mcmvm_models::blocks::Hardware;
use mcmvm_models::gpu::GpuConfig;
use mcmvm_models::uvm::UvmConfig;
use std::path::{Path, PathBuf};

/// What the studies take from their caller: configurations by path (a file, or a built-in
/// the CLI compiles in) and the engines serving the hardware blocks. Each is asked for
/// where the study needs it, so a bad input is reported at the same step as ever.
pub trait Inputs: Sync {
    /// A configuration's text and the name messages give it.
    fn config_text(&self, path: &Path) -> Result<(String, PathBuf), BoxError>;
    /// A GPU configuration with `key=value` overrides.
    fn gpu(&self, path: &Path, overrides: &[String]) -> Result<GpuConfig, BoxError>;
    /// A UVM configuration with `key=value` overrides.
    fn uvm(&self, path: &Path, overrides: &[String]) -> Result<UvmConfig, BoxError>;
    /// The engines of `--hw` for one run's blocks.
    fn engines(&self) -> Result<Hardware, BoxError>;
}

/// Create `dir` (and its parents).
pub(crate) fn create_dir(dir: &Path) -> Result<(), StudyError> {
    std::fs::create_dir_all(dir).map_err(|source| StudyError::Create {
        path: dir.to_path_buf(),
        source,
    })
}

/// Write `text` into `dir/name`, creating `dir`.
pub(crate) fn write_in(dir: &Path, name: &str, text: &str) -> Result<(), StudyError> {
    create_dir(dir)?;
    let path = dir.join(name);
    std::fs::write(&path, text).map_err(|source| StudyError::Write { path, source })
}

/// A path that works from any directory.
pub(crate) fn absolute(p: &Path) -> Result<PathBuf, StudyError> {
    std::path::absolute(p).map_err(|source| StudyError::Absolute {
        path: p.to_path_buf(),
        source,
    })
}

/// An error and its causes joined by `: ` (anyhow's `{:#}`), for the line of a failed run.
pub(crate) fn chain_text(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        text.push_str(": ");
        text.push_str(&c.to_string());
        cause = c.source();
    }
    text
}
