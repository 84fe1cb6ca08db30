//! The Forest (UVM) sweep on the GPU timing model of `--gpu-config`: its options, its fixed
//! job list (the per-workload table's runs, through run files like the CLAP sweep's), the
//! oversubscription curve after the table, and the sensitivity study of Forest's
//! thresholds (`--suite forest-sensitivity`).

use crate::resume::{run_all, Job};
use crate::sweep::{forest_scale, or_default, workload_filter, Mode, Request, CURVE_OVERSUBS};
use crate::task::{self, in_range, run_task, shared_words, sweep_id, Head, Split};
use crate::{absolute, Bar, Console, Inputs, StudyError};
use mcmvm_models::uvm::sweep::{
    curve_table, forest_jobs, paper_table, run_forest_job, ForestJob, Progress, RunPart, POLICIES,
};
use mcmvm_models::uvm::{sweep_forest, SweepOptions, UvmGpu};
use mcmvm_models::workload::{forest_suite, Scale};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// A Forest sweep: its options and its fixed job list.
pub(crate) struct ForestSweep {
    pub opts: SweepOptions,
    pub config: PathBuf,
    /// The GPU the runs are timed on.
    pub gpu_config: PathBuf,
    pub jobs: Vec<ForestJob>,
    pub out: PathBuf,
}

/// The one multiplier the lines print for a Forest study (its workloads have no paper
/// class, so `paper` is 1 there).
fn printed_scale(scale: &Scale) -> f64 {
    scale.uniform(forest_suite()).unwrap_or(1.0)
}

/// `--oversub`: ratios, comma-separated.
fn oversubs(list: &str) -> Result<Vec<f64>, StudyError> {
    list.split(',')
        .map(|s| {
            s.trim()
                .parse::<f64>()
                .map_err(|source| StudyError::Oversub {
                    text: s.to_string(),
                    source,
                })
        })
        .collect()
}

fn forest_sweep(req: &Request, inputs: &dyn Inputs) -> Result<ForestSweep, StudyError> {
    let config = or_default(&req.config, "configs/uvm-turing.toml");
    let mut cfg = inputs.uvm(&config, &[])?;
    cfg.engines = inputs.engines()?;
    let gpu_config = or_default(&req.gpu_config, "configs/gpu-turing.toml");
    let mut opts = SweepOptions::new(cfg, UvmGpu::new(inputs.gpu(&gpu_config, &[])?));
    opts.scale = forest_scale(&req.scale)?;
    opts.seed = req.seed;
    if let Some(keep) = workload_filter(req.workloads.as_deref(), "forest", forest_suite())? {
        opts.workloads.retain(|w| keep.contains(w));
    }
    if let Some(list) = &req.oversub {
        opts.oversubs = oversubs(list)?;
    }
    let jobs = forest_jobs(&opts)?;
    Ok(ForestSweep {
        opts,
        config,
        gpu_config,
        jobs,
        out: or_default(&req.out, "out/forest"),
    })
}

/// The split of a Forest sweep: its identity and each job's name.
fn split(req: &Request, s: &ForestSweep) -> Result<Split, StudyError> {
    let oversubs: Vec<String> = s.opts.oversubs.iter().map(|o| o.to_string()).collect();
    let gpu = if s.gpu_config.is_file() {
        absolute(&s.gpu_config)?
    } else {
        s.gpu_config.clone()
    };
    let lists = [
        ("--workloads", s.opts.workloads.join(",")),
        ("--oversub", oversubs.join(",")),
        ("--gpu-config", gpu.display().to_string()),
    ];
    let words = shared_words(req, &s.config, &lists)?;
    let mut id = sweep_id(req, "forest", s.jobs.len(), words);
    id.oversubs = s.opts.oversubs.iter().map(|o| format!("{o:?}")).collect();
    Ok(Split {
        id,
        out: absolute(&s.out)?,
        names: s
            .jobs
            .iter()
            .map(|j| format!("{}-{}-{}", j.workload, j.policy.name(), j.oversubscription))
            .collect(),
    })
}

/// One Forest job: its part of the tables and its metrics.
fn run_job(s: &ForestSweep, job: &ForestJob) -> task::Outcome<RunPart> {
    let m = run_forest_job(&s.opts, job)?;
    Ok((RunPart::of(&m), serde_json::to_string_pretty(&m)?))
}

/// The Forest sweep's plan, one job, or all of them; how many runs failed.
pub(crate) fn run(
    req: &Request,
    inputs: &dyn Inputs,
    console: &dyn Console,
) -> Result<usize, StudyError> {
    let s = forest_sweep(req, inputs)?;
    let split = split(req, &s)?;
    let n = match &req.mode {
        Mode::Plan { file, exe } => return task::write_plan(&split, file, exe, console).map(|_| 0),
        Mode::All { resume } => return all(req, &s, &split, *resume, console).map(|_| 0),
        Mode::Task(n) => *n,
    };
    let job = in_range(&split, n).map(|i| &s.jobs[i])?;
    let head = Head {
        workload: &job.workload,
        policy: job.policy.name(),
        oversubscription: Some(format!("{:?}", job.oversubscription)),
    };
    run_task(&split, n, head, || run_job(&s, job), console)
}

/// The line that opens a Forest sweep.
fn banner(req: &Request, s: &ForestSweep) -> String {
    format!(
        "sweep forest on the GPU timing model ({}, {}): scale {}, seed {}, config {}, policies {}",
        s.gpu_config.display(),
        s.opts.gpu.placement,
        printed_scale(&req.scale),
        req.seed,
        s.config.display(),
        POLICIES.map(|p| p.name()).join(", ")
    )
}

/// Every job here: the per-workload table, then (`curve_scale`) the curve.
fn all(
    req: &Request,
    s: &ForestSweep,
    split: &Split,
    resume: bool,
    console: &dyn Console,
) -> Result<(), StudyError> {
    let mut opts = s.opts.clone();
    opts.out_dir = Some(s.out.clone());
    console.line(&banner(req, s));
    let jobs: Vec<Job<'_, RunPart>> = s
        .jobs
        .iter()
        .map(|job| Job {
            workload: job.workload.clone(),
            policy: job.policy.name().to_string(),
            oversubscription: Some(format!("{:?}", job.oversubscription)),
            run: Box::new(|| run_job(s, job)),
        })
        .collect();
    let bar = console.bar(jobs.len() as u64, "runs");
    let progress = progress(&bar, jobs.len());
    let tick = |n: usize, secs: Option<f64>| match (secs, &progress.0) {
        (Some(secs), Some(p)) => p(&s.jobs[n], secs),
        // A resumed run: done, without a line of its own.
        _ => bar.inc(),
    };
    let t0 = std::time::Instant::now();
    let failed = run_all(split, resume, jobs, &tick, console);
    bar.finish();
    if failed? > 0 {
        return Err(StudyError::RunsFailed("Forest runs"));
    }
    let files = crate::merge::suite_files(&s.out, "forest")?;
    crate::merge::forest_outputs(&s.out, &files, &s.out, false, console)?;
    console.line(&format!("({:.0} s)", t0.elapsed().as_secs_f64()));
    match req.curve_scale {
        Some(scale) => curve(scale, &opts, console),
        None => Ok(()),
    }
}

/// The default sweep's oversubscription curve: every policy at [`CURVE_OVERSUBS`] on the
/// same workloads at `scale`, into OUT/curve/.
fn curve(scale: f64, main: &SweepOptions, console: &dyn Console) -> Result<(), StudyError> {
    let mut opts = main.clone();
    opts.oversubs = CURVE_OVERSUBS.to_vec();
    opts.scale = scale;
    opts.out_dir = main.out_dir.as_ref().map(|d| d.join("curve"));
    console.line("");
    console.line(&format!(
        "oversubscription curve at scale {} (the table above runs at scale {}; the curve runs \
         smaller to keep the default sweep quick, --curve-scale sets it): geometric mean \
         speed-up over tbnp of {} workloads",
        opts.scale,
        main.scale,
        opts.workloads.len()
    ));
    let n = opts.workloads.len() * opts.oversubs.len() * POLICIES.len();
    let bar = console.bar(n as u64, "runs");
    opts.progress = progress(&bar, n);
    let t0 = std::time::Instant::now();
    let report = sweep_forest(&opts);
    bar.finish();
    let report = report?;
    console.out(&format!(
        "{}{}",
        curve_table(&report.summaries),
        paper_table(&report.summaries, &report.rows)
    ));
    console.line(&format!("({:.0} s)", t0.elapsed().as_secs_f64()));
    if let Some(dir) = &opts.out_dir {
        console.line(&format!("wrote {}", dir.display()));
        crate::sweep::figures(dir, "forest", console)?;
    }
    Ok(())
}

/// Each finished run of `total` advances `bar` and names itself; where the bar does not
/// show (a log), a line per run instead.
fn progress(bar: &Arc<dyn Bar>, total: usize) -> Progress {
    let bar = Arc::clone(bar);
    let done = AtomicU64::new(0);
    Progress(Some(Arc::new(move |job, secs| {
        bar.inc();
        let what = format!(
            "{} {} at {}",
            job.workload,
            job.policy.name(),
            job.oversubscription
        );
        bar.set_message(what.clone());
        let n = done.fetch_add(1, Ordering::Relaxed) + 1;
        bar.log(&format!("forest run {n}/{total}: {what} ({secs:.1} s)"));
    })))
}

/// `--suite forest-sensitivity`'s options.
#[derive(Debug, Clone)]
pub struct SensitivityRequest {
    /// `--config` (default: configs/uvm-turing.toml).
    pub config: Option<PathBuf>,
    /// `--gpu-config` (default: configs/gpu-turing.toml).
    pub gpu_config: Option<PathBuf>,
    /// `--oversub`: one number (default: the config's).
    pub oversub: Option<String>,
    /// `--out` (default: out/forest-sensitivity).
    pub out: Option<PathBuf>,
    pub scale: Scale,
    pub seed: u64,
}

/// `--suite forest-sensitivity`: Forest's thresholds one at a time.
pub fn sensitivity(
    req: &SensitivityRequest,
    inputs: &dyn Inputs,
    console: &dyn Console,
) -> Result<(), StudyError> {
    let config = or_default(&req.config, "configs/uvm-turing.toml");
    let mut overrides = Vec::new();
    if let Some(list) = &req.oversub {
        let o: f64 = list
            .trim()
            .parse()
            .map_err(|source| StudyError::OversubOne {
                text: list.clone(),
                source,
            })?;
        overrides.push(format!("memory.oversubscription={o}"));
    }
    let workloads: Vec<String> = forest_suite().iter().map(|s| s.to_string()).collect();
    let out = or_default(&req.out, "out/forest-sensitivity");
    let gpu_config = or_default(&req.gpu_config, "configs/gpu-turing.toml");
    let gpu = UvmGpu::new(inputs.gpu(&gpu_config, &[])?);
    console.line(&format!(
        "sweep forest-sensitivity on the GPU timing model ({}, {}): {} thresholds, scale {}, seed {}, config {}",
        gpu_config.display(),
        gpu.placement,
        mcmvm_models::uvm::sensitivity::KNOBS.len(),
        printed_scale(&req.scale),
        req.seed,
        config.display()
    ));
    let t0 = std::time::Instant::now();
    let scale = forest_scale(&req.scale)?;
    let report =
        mcmvm_models::uvm::sensitivity(&gpu, &config, &overrides, &workloads, scale, req.seed)?;
    console.line(&format!(
        "Forest speed-up over TBNp at oversubscription {} (one threshold changed at a time):",
        report.oversubscription
    ));
    console.out(&report.table());
    report.write(&out)?;
    console.line(&format!(
        "wrote {}/sensitivity.csv, sensitivity.json ({:.0} s)",
        out.display(),
        t0.elapsed().as_secs_f64()
    ));
    Ok(())
}
