//! Why a study stopped. Each message names the file, flag or task and what was expected;
//! the causes (io, JSON, the models' errors) stay attached as sources, so the CLI's one
//! error line ends with the root cause.

use mcmvm_models::calibrate::CalibrateError;
use mcmvm_models::driver::DriverError;
use mcmvm_models::gpu::GpuError;
use mcmvm_models::uvm::sweep::PartsError;
use mcmvm_models::uvm::UvmError;
use std::path::PathBuf;

/// An error from the caller's side of [`crate::Inputs`] (configurations, engines).
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

#[derive(Debug, thiserror::Error)]
pub enum StudyError {
    #[error("{}: cannot create", path.display())]
    Create {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}: cannot write", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}: cannot read", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}: cannot read (no runs here?)", path.display())]
    ReadRuns {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}: cannot list", path.display())]
    List {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}: no absolute path", path.display())]
    Absolute {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("the mcmvm binary's path")]
    Exe(#[source] std::io::Error),
    #[error(transparent)]
    Io(#[from] std::io::Error),
    #[error(transparent)]
    Json(#[from] serde_json::Error),
    #[error(transparent)]
    Inputs(#[from] BoxError),
    /// A plan's line that could not be made.
    #[error(transparent)]
    PlanLine(BoxError),
    #[error(transparent)]
    Gpu(#[from] GpuError),
    #[error(transparent)]
    Uvm(#[from] UvmError),
    #[error(transparent)]
    Policy(#[from] DriverError),
    /// Boxed: the calibration's errors are large, and every study result carries this type.
    #[error(transparent)]
    Calibrate(Box<CalibrateError>),
    #[error(transparent)]
    Report(#[from] mcmvm_report::ReportError),

    // Flags.
    #[error("{what} `{text}` is not a run number (0, 1, 2, ...)")]
    TaskId { what: &'static str, text: String },
    #[error("--task-id {n} is out of range: this {suite} sweep has {runs} runs (0..={})",
        runs.saturating_sub(1))]
    TaskOutOfRange {
        n: usize,
        suite: String,
        runs: usize,
    },
    #[error("--scale {0}: the Forest workloads do not share one size")]
    ForestScale(mcmvm_models::workload::Scale),
    #[error("--workloads: `{workload}` is not in the {suite} suite ({})", valid.join(", "))]
    Workload {
        workload: String,
        suite: String,
        valid: Vec<&'static str>,
    },
    #[error("--extras-workloads: `{workload}` is not in the clap suite ({}), nor `all`",
        mcmvm_models::workload::clap_suite().join(", "))]
    ExtrasWorkload { workload: String },
    #[error("--extras-scale: expected a positive number, got {0}")]
    ExtrasScale(f64),
    #[error("--policies must include s64k, the baseline of Figure 18")]
    NoBaseline,
    #[error("--oversub: `{text}` is not a number")]
    Oversub {
        text: String,
        #[source]
        source: std::num::ParseFloatError,
    },
    #[error("--oversub: `{text}` is not one number")]
    OversubOne {
        text: String,
        #[source]
        source: std::num::ParseFloatError,
    },
    #[error("--oversub: the Forest headlines are at {0} (the paper's 150 %)")]
    RobustnessOversub(f64),
    #[error("--points `{0}`: expected `corners` or a count")]
    Points(String),

    // Run files and merge.
    #[error("{}: not a run file", path.display())]
    NotRunFile {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    #[error("{}: its `report` is not laid out as --task-id writes it", path.display())]
    ReportLayout { path: PathBuf },
    #[error("{}: holds task {holds}, not {n}", path.display())]
    WrongTask {
        path: PathBuf,
        holds: usize,
        n: usize,
    },
    #[error("{} is a run of another sweep than {} (options `{theirs}` vs `{ours}`)",
        path.display(), first.display())]
    MixedSweeps {
        path: PathBuf,
        first: PathBuf,
        theirs: String,
        ours: String,
    },
    #[error("{}: task {n} is beyond the sweep's runs", path.display())]
    BeyondRuns { path: PathBuf, n: usize },
    #[error("{}: a second file for task {n}", path.display())]
    SecondFile { path: PathBuf, n: usize },
    #[error("{}/runs: no run files", dir.display())]
    NoRuns { dir: PathBuf },
    #[error("{}: no run files (<suite>-<N>-*.json)", runs.display())]
    NoRunFiles { runs: PathBuf },
    #[error("{}/runs: {} of {runs} runs missing (tasks {}), nothing merged", dir.display(),
        missing.len(), missing.iter().map(usize::to_string).collect::<Vec<_>>().join(", "))]
    Missing {
        dir: PathBuf,
        runs: usize,
        missing: Vec<usize>,
    },
    #[error("--suite `{0}`: merge knows clap and forest")]
    MergeSuite(String),
    #[error("{} holds runs of {}: choose one with --suite", runs.display(), suites.join(" and "))]
    Suites { runs: PathBuf, suites: Vec<String> },
    #[error("{}: the sweep's oversubs", runs.display())]
    SweepOversubs {
        runs: PathBuf,
        #[source]
        source: std::num::ParseFloatError,
    },
    #[error("{}", runs.display())]
    Parts {
        runs: PathBuf,
        #[source]
        source: PartsError,
    },

    // The in-process sweep's checkpoint.
    #[error("{} holds a run of another sweep (options `{theirs}`, not `{ours}`): give this \
             sweep another --out, or rerun that sweep's own command with --resume", path.display())]
    OtherSweep {
        path: PathBuf,
        theirs: String,
        ours: String,
    },
    #[error("{} is not a run of this sweep's job list (another suite, workloads or policies): \
             give this sweep another --out, or rerun that sweep's own command with --resume",
        path.display())]
    OtherJobList { path: PathBuf },
    #[error("some {0} failed (above); rerun with --resume to run only them")]
    RunsFailed(&'static str),

    // Calibration.
    #[error("point {label} ({workload} {policy})")]
    CalibrationRun {
        label: String,
        workload: String,
        policy: String,
        #[source]
        source: Box<CalibrateError>,
    },
    #[error("no point has a residual (a run is missing)")]
    NoResidual,
}

impl From<CalibrateError> for StudyError {
    fn from(e: CalibrateError) -> StudyError {
        StudyError::Calibrate(Box::new(e))
    }
}
