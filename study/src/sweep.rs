//! `mcmvm sweep --suite clap|forest`, as a [`Request`]: the options of the command line as
//! values, with what to do with the suite's fixed job list ([`Mode`]): write its plan, run
//! one job, or run them all here (`--resume`: only those without a run file). The suites
//! are [`crate::clap`] and [`crate::forest`]; `--robustness` is [`crate::robust`].

use crate::{Console, Inputs, StudyError};
use mcmvm_models::workload::Scale;
use std::path::{Path, PathBuf};

/// The sweeps that split into jobs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Suite {
    Clap,
    Forest,
}

impl Suite {
    pub fn name(self) -> &'static str {
        match self {
            Suite::Clap => "clap",
            Suite::Forest => "forest",
        }
    }
}

/// What a sweep does with its job list.
#[derive(Debug, Clone)]
pub enum Mode {
    /// `--plan FILE`: write one command per job; `exe` is the binary the lines run.
    Plan { file: PathBuf, exe: PathBuf },
    /// `--task-id N`: run job N alone.
    Task(usize),
    /// Run every job here (`--resume`: only those without a run file).
    All { resume: bool },
}

/// `--robustness`: the design over the plausible box.
#[derive(Debug, Clone)]
pub struct Robustness {
    /// `--points`: `corners` (None too) or a count.
    pub points: Option<String>,
    pub design_seed: u64,
}

/// The options of the CLAP sweep's extra runs (absent under `--no-extras`).
#[derive(Debug, Clone, Default)]
pub struct ExtrasOptions {
    /// `--extras-workloads`: a list, or `all`.
    pub workloads: Option<String>,
    /// `--extras-scale`.
    pub scale: Option<f64>,
}

/// A sweep's options.
#[derive(Debug, Clone)]
pub struct Request {
    pub suite: Suite,
    pub mode: Mode,
    /// `--config` (default: the suite's).
    pub config: Option<PathBuf>,
    /// forest: `--gpu-config` (default: the paper's Turing GPU).
    pub gpu_config: Option<PathBuf>,
    /// `--scale`, the suite's default filled in.
    pub scale: Scale,
    pub seed: u64,
    /// `--out` (default: the suite's).
    pub out: Option<PathBuf>,
    /// clap: `--policies` (a list, or `extended`).
    pub policies: String,
    /// `--workloads`, comma-separated.
    pub workloads: Option<String>,
    /// forest: `--oversub`, comma-separated.
    pub oversub: Option<String>,
    /// forest: the scale of the oversubscription curve after the table (None: no curve).
    pub curve_scale: Option<f64>,
    /// clap: the extra runs (None: `--no-extras`).
    pub extras: Option<ExtrasOptions>,
    /// `--hw` and its companions as the plan's command lines repeat them (unquoted words).
    pub hw_words: Vec<String>,
    pub robustness: Option<Robustness>,
}

/// The CLAP sweep's default `--policies`, Figure 18's columns in order.
pub const DEFAULT_CLAP_POLICIES: &str = "s64k,s2m,olp,clap,ideal,s4k,s64k-coal";

/// The oversubscription curve of the default Forest sweep (issue #21: 110-200 %).
pub const CURVE_OVERSUBS: [f64; 5] = [1.1, 1.25, 1.5, 1.75, 2.0];

/// The Forest studies' default scale (the sweep's table and the sensitivity study), and the
/// sweep's curve's: a thrashing gather's far faults replay whole warp instructions on the
/// GPU timing model, so `hchi` at scale 1 takes ~8 minutes a run on this 2-core host
/// (tbnp; 25-45 s at 0.1, 17-33 s at 0.05). These keep the default sweep (`make run`)
/// within minutes; `make paper` runs the curve larger, sharded.
pub const FOREST_TIMING_SCALE: f64 = 0.05;
pub const TIMING_CURVE_SCALE: f64 = 0.02;

/// Run the sweep of `req`: its plan, one job, or all of them. Returns how many runs
/// failed (each said on stderr).
pub fn run(req: &Request, inputs: &dyn Inputs, console: &dyn Console) -> Result<usize, StudyError> {
    match (&req.robustness, req.suite) {
        (Some(r), _) => crate::robust::run(req, r, inputs, console),
        (None, Suite::Clap) => crate::clap::run(req, inputs, console),
        (None, Suite::Forest) => crate::forest::run(req, inputs, console),
    }
}

/// The one multiplier of the Forest suite's workloads (its sweeps record a single scale).
pub fn forest_scale(scale: &Scale) -> Result<f64, StudyError> {
    scale
        .uniform(mcmvm_models::workload::forest_suite())
        .ok_or(StudyError::ForestScale(*scale))
}

/// `--workloads`, checked against the suite `name` (None: not given).
pub(crate) fn workload_filter(
    list: Option<&str>,
    name: &str,
    suite: &[&'static str],
) -> Result<Option<Vec<String>>, StudyError> {
    let Some(ws) = list else {
        return Ok(None);
    };
    let keep: Vec<String> = ws.split(',').map(|w| w.trim().to_string()).collect();
    for k in &keep {
        if !suite.contains(&k.as_str()) {
            return Err(StudyError::Workload {
                workload: k.clone(),
                suite: name.to_string(),
                valid: suite.to_vec(),
            });
        }
    }
    Ok(Some(keep))
}

/// `path`, else `default`.
pub(crate) fn or_default(path: &Option<PathBuf>, default: &str) -> PathBuf {
    path.clone().unwrap_or_else(|| PathBuf::from(default))
}

/// The suite's SVG figures beside its CSV in `dir` (the same as `mcmvm report` draws).
pub(crate) fn figures(dir: &Path, suite: &str, console: &dyn Console) -> Result<(), StudyError> {
    let dir = if dir.is_absolute() {
        dir.to_path_buf()
    } else {
        std::env::current_dir()?.join(dir)
    };
    let (Some(root), Some(sub)) = (dir.parent(), dir.file_name().and_then(|s| s.to_str())) else {
        return Ok(());
    };
    let mut done = mcmvm_report::Outcome::default();
    let section = match suite {
        "clap" => mcmvm_report::clap::section_in(root, sub, &mut done)?,
        _ => mcmvm_report::forest::section_in(root, sub, &mut done)?,
    };
    for n in &section.notes {
        console.line(&format!("note: {n}"));
    }
    for f in &done.written {
        console.line(&format!("wrote {}", f.display()));
    }
    Ok(())
}
