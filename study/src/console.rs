//! Where a study's output goes: result lines on the caller's stdout, lines on its stderr,
//! and progress bars. The CLI implements these with indicatif (hidden by `--quiet` and when
//! stderr is no terminal); [`Silent`] drops them (tests).

use std::sync::Arc;

/// A study's output.
pub trait Console: Sync {
    /// Result text, exactly as given (stdout).
    fn out(&self, text: &str);
    /// One result line (stdout).
    fn line(&self, line: &str) {
        self.out(&format!("{line}\n"));
    }
    /// One line on stderr, always (a failed run, what is missing, an interrupt).
    fn err(&self, line: &str);
    /// A progress bar over `len` items called `what`.
    fn bar(&self, len: u64, what: &str) -> Arc<dyn Bar>;
}

/// A progress bar.
pub trait Bar: Send + Sync {
    /// One more item done.
    fn inc(&self);
    /// What the bar names beside its count.
    fn set_message(&self, message: String);
    /// A line per finished item, shown on stderr only where the bar itself is not (stderr
    /// is no terminal: a log) and not quiet, so a long study still shows progress.
    fn log(&self, line: &str);
    /// Done: the bar goes away.
    fn finish(&self);
}

/// A console that drops everything.
#[derive(Debug, Default, Clone, Copy)]
pub struct Silent;

impl Console for Silent {
    fn out(&self, _: &str) {}
    fn err(&self, _: &str) {}
    fn bar(&self, _: u64, _: &str) -> Arc<dyn Bar> {
        Arc::new(Silent)
    }
}

impl Bar for Silent {
    fn inc(&self) {}
    fn set_message(&self, _: String) {}
    fn log(&self, _: &str) {}
    fn finish(&self) {}
}
