//! `mcmvm calibrate`: fit the timing model's unknowns to what the CLAP paper measured of
//! its *baselines* only (issue #38 item 3; docs/calibration.md).
//!
//! 1. [`params`]: the one table of every timing parameter neither paper gives, with its
//!    plausible range and source ([`params::plausible_box`] is `sweep --robustness`'s box).
//! 2. [`targets`]: the baseline figures the fit aims at, and those it cannot use.
//! 3. [`design`]: the points visited (two-level factorial or seeded Latin hypercube).
//! 4. [`fit`]: each point runs the targets' baseline policies on the workloads; its
//!    residual is Σ weight × ln(ours / paper)².
//! 5. [`report`]: every point's figures and residual as text, CSV and JSON.
//! 6. [`rewrite`]: the best point written into a config file, every other byte kept, each
//!    fitted key with a provenance comment.
//!
//! CLAP against its baselines and Forest / SpecForest against TBNp never enter the fit:
//! they are what the calibrated model predicts.

pub mod design;
pub mod fit;
pub mod params;
pub mod report;
pub mod rewrite;
pub mod robustness;
pub mod targets;

use crate::config::ConfigError;
use crate::gpu::GpuError;

/// Why a calibration cannot run or cannot write its result.
#[derive(Debug, thiserror::Error)]
pub enum CalibrateError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Gpu(#[from] GpuError),
    #[error("a calibration needs at least one workload and one point")]
    Empty,
    #[error("scale {0}: expected a positive number (e.g. 0.25)")]
    BadScale(f64),
    #[error("{points} points: expected 1 to {max} (use --points N for a Latin hypercube)")]
    TooManyPoints { points: u128, max: usize },
    #[error("{path}: no [{section}] section to write `{key}` into")]
    NoSection {
        path: std::path::PathBuf,
        section: String,
        key: String,
    },
    #[error("{path}: after writing, `{key}` reads back as {found}, expected {expected}")]
    ReadBack {
        path: std::path::PathBuf,
        key: String,
        found: String,
        expected: String,
    },
}
