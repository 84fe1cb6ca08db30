//! The CLI's side of `mcmvm-study`: its [`Inputs`] (configurations from `configs.rs`,
//! built-ins included, and the engines of `--hw`) and its [`Console`] (stdout, stderr and
//! indicatif bars, quiet under `--quiet`).

use super::common::HwArgs;
use mcmvm_models::blocks::Hardware;
use mcmvm_models::gpu::GpuConfig;
use mcmvm_models::uvm::UvmConfig;
use mcmvm_study::{Bar, BoxError, Console, Inputs};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Configurations by path, and the engines of `--hw` (none: the twins).
pub struct CliInputs<'a> {
    pub hw: Option<&'a HwArgs>,
}

impl Inputs for CliInputs<'_> {
    fn config_text(&self, path: &Path) -> Result<(String, PathBuf), BoxError> {
        Ok(super::configs::text(path)?)
    }

    fn gpu(&self, path: &Path, overrides: &[String]) -> Result<GpuConfig, BoxError> {
        Ok(super::configs::gpu_with(path, overrides)?)
    }

    fn uvm(&self, path: &Path, overrides: &[String]) -> Result<UvmConfig, BoxError> {
        Ok(super::configs::uvm(path, overrides)?)
    }

    fn engines(&self) -> Result<Hardware, BoxError> {
        match self.hw {
            Some(hw) => Ok(hw.hardware()?),
            None => Ok(Hardware::default()),
        }
    }
}

/// Results on stdout, lines on stderr, bars from `progress`.
pub struct Terminal;

impl Console for Terminal {
    fn out(&self, text: &str) {
        print!("{text}");
    }

    fn err(&self, line: &str) {
        eprintln!("{line}");
    }

    fn bar(&self, len: u64, what: &str) -> Arc<dyn Bar> {
        Arc::new(TerminalBar(super::progress::bar(len, what)))
    }
}

/// An indicatif bar.
struct TerminalBar(indicatif::ProgressBar);

impl Bar for TerminalBar {
    fn inc(&self) {
        self.0.inc(1);
    }

    fn set_message(&self, message: String) {
        self.0.set_message(message);
    }

    fn log(&self, line: &str) {
        // Where the bar shows, it is the progress; where it does not (a log), a line.
        if self.0.is_hidden() && !super::progress::quiet() {
            eprintln!("{line}");
        }
    }

    fn finish(&self) {
        self.0.finish_and_clear();
    }
}
