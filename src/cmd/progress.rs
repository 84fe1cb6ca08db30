//! Progress on stderr for anything that takes more than a few seconds (sweeps, synthesis,
//! long runs), hidden by `--quiet` and whenever stderr is not a terminal (indicatif's own
//! rule), so scripts and `--json` output stay clean. Results go to stdout either way.

use indicatif::{ProgressBar, ProgressStyle};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

static QUIET: AtomicBool = AtomicBool::new(false);

/// `--quiet`: no progress and no informational stderr lines (the Verilator model builds
/// included).
pub fn set_quiet(quiet: bool) {
    QUIET.store(quiet, Ordering::Relaxed);
    if quiet {
        // The cosim library reads this before it announces a model build.
        std::env::set_var("MCMVM_QUIET", "1");
    }
}

pub fn quiet() -> bool {
    QUIET.load(Ordering::Relaxed)
}

/// A bar over `len` items.
pub fn bar(len: u64, what: &str) -> ProgressBar {
    if quiet() {
        return ProgressBar::hidden();
    }
    let b = ProgressBar::new(len);
    let template = format!("{{bar:40}} {{pos}}/{{len}} {what} {{elapsed_precise}} {{msg}}");
    b.set_style(
        ProgressStyle::with_template(&template).unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    b
}

/// A spinner with the elapsed time, for work whose length is not known in advance.
pub fn spinner(message: String) -> ProgressBar {
    if quiet() {
        return ProgressBar::hidden();
    }
    let s = ProgressBar::new_spinner();
    s.set_style(
        ProgressStyle::with_template("{spinner} {msg} {elapsed}")
            .unwrap_or_else(|_| ProgressStyle::default_spinner()),
    );
    s.set_message(message);
    s.enable_steady_tick(Duration::from_millis(200));
    s
}

/// One informational line on stderr (not with `--quiet`).
pub fn note(line: &str) {
    if !quiet() {
        eprintln!("{line}");
    }
}
