//! The CLAP sweep: every workload of the CLAP suite × every policy (rayon over the cores),
//! then Figure 18 (speed-up over s64k, remote ratio, geometric means; CLAP against s64k and
//! s2m) and Table 4 (page size per structure), with CSV and JSON; then Table 2, the extra
//! runs ([`crate::extras`]) and the paper's figures beside ours.

use crate::resume::{run_all_named, Job};
use crate::sweep::{or_default, workload_filter, Mode, Request, DEFAULT_CLAP_POLICIES};
use crate::task::{self, in_range, run_task, shared_words, sweep_id, Head, Split};
use crate::{absolute, write_in, Console, Inputs, StudyError};
use mcmvm_models::driver::PolicyKind;
use mcmvm_models::gpu::sweep::{self as clap_study, RunSummary};
use mcmvm_models::gpu::GpuConfig;
use std::path::{Path, PathBuf};

/// A CLAP sweep: its configuration and its fixed job list.
pub(crate) struct ClapSweep {
    pub cfg: GpuConfig,
    pub config: PathBuf,
    pub policies: Vec<PolicyKind>,
    pub jobs: Vec<clap_study::Job>,
    pub out: PathBuf,
}

/// `--policies`: a list, or `extended` (the defaults and the other baselines).
fn policies(list: &str) -> Result<Vec<PolicyKind>, StudyError> {
    let parse = |list: &str| -> Result<Vec<PolicyKind>, _> {
        list.split(',')
            .map(|p| p.trim().parse::<PolicyKind>())
            .collect()
    };
    let policies: Vec<PolicyKind> = if list.trim() == "extended" {
        clap_study::extended_policies(&parse(DEFAULT_CLAP_POLICIES)?)
    } else {
        parse(list)?
    };
    if !policies.contains(&PolicyKind::S64k) {
        return Err(StudyError::NoBaseline);
    }
    Ok(policies)
}

fn clap_sweep(req: &Request, inputs: &dyn Inputs) -> Result<ClapSweep, StudyError> {
    let config = or_default(&req.config, "configs/mcm-4chiplet.toml");
    let mut cfg = inputs.gpu(&config, &[])?;
    cfg.engines = inputs.engines()?;
    let policies = policies(&req.policies)?;
    let mut jobs = clap_study::clap_jobs(&policies);
    let suite = mcmvm_models::workload::clap_suite();
    if let Some(keep) = workload_filter(req.workloads.as_deref(), "clap", suite)? {
        jobs.retain(|j| keep.contains(&j.workload));
    }
    Ok(ClapSweep {
        cfg,
        config,
        policies,
        jobs,
        out: or_default(&req.out, "out/clap"),
    })
}

/// The split of a CLAP sweep: its identity and each job's name.
fn split(req: &Request, s: &ClapSweep) -> Result<Split, StudyError> {
    let mut workloads: Vec<&str> = s.jobs.iter().map(|j| j.workload.as_str()).collect();
    workloads.dedup();
    let policies: Vec<&str> = s.policies.iter().map(|p| p.name()).collect();
    let lists = [
        ("--policies", policies.join(",")),
        ("--workloads", workloads.join(",")),
    ];
    let words = shared_words(req, &s.config, &lists)?;
    Ok(Split {
        id: sweep_id(req, "clap", s.jobs.len(), words),
        out: absolute(&s.out)?,
        names: s
            .jobs
            .iter()
            .map(|j| format!("{}-{}", j.workload, j.policy))
            .collect(),
    })
}

/// One CLAP job: its summary and report.
fn run_job(req: &Request, s: &ClapSweep, job: &clap_study::Job) -> task::Outcome<RunSummary> {
    let scale = req.scale.factor(&job.workload);
    let r = clap_study::run_job(&s.cfg, job, scale, req.seed)?;
    Ok((RunSummary::of(&r), serde_json::to_string_pretty(&r)?))
}

/// The CLAP sweep's plan, one job, or all of them; how many runs failed.
pub(crate) fn run(
    req: &Request,
    inputs: &dyn Inputs,
    console: &dyn Console,
) -> Result<usize, StudyError> {
    let s = clap_sweep(req, inputs)?;
    let split = split(req, &s)?;
    let n = match &req.mode {
        Mode::Plan { file, exe } => return task::write_plan(&split, file, exe, console).map(|_| 0),
        Mode::All { resume } => return all(req, inputs, &s, &split, *resume, console),
        Mode::Task(n) => *n,
    };
    let job = in_range(&split, n).map(|i| &s.jobs[i])?;
    let head = Head {
        workload: &job.workload,
        policy: job.policy.name(),
        oversubscription: None,
    };
    run_task(&split, n, head, || run_job(req, &s, job), console)
}

/// Every job here: Figure 18, Table 4, the extra runs and the paper's figures.
fn all(
    req: &Request,
    inputs: &dyn Inputs,
    s: &ClapSweep,
    split: &Split,
    resume: bool,
    console: &dyn Console,
) -> Result<usize, StudyError> {
    console.line(&format!(
        "sweep clap: {} runs ({} workloads x {} policies), scale {}, seed {}, config {}, {} threads",
        s.jobs.len(),
        s.jobs.len() / s.policies.len().max(1),
        s.policies.len(),
        req.scale,
        req.seed,
        s.config.display(),
        rayon::current_num_threads()
    ));
    let jobs: Vec<Job<'_, RunSummary>> = s
        .jobs
        .iter()
        .map(|job| Job {
            workload: job.workload.clone(),
            policy: job.policy.name().to_string(),
            oversubscription: None,
            run: Box::new(move || run_job(req, s, job)),
        })
        .collect();
    let mut failed = run_all_named(split, resume, jobs, console)?;
    let files = crate::merge::suite_files(&s.out, "clap")?;
    let (_, summaries, reports) = crate::merge::clap_runs(&s.out, &files, failed > 0, console)?;
    outputs(&s.out, &summaries, &reports, req.seed, console)?;
    let extras = match &req.extras {
        None => None,
        Some(x) => Some(crate::extras::run(req, x, inputs, s, &summaries, console)?),
    };
    crate::extras::paper(&s.out, &summaries, extras.as_ref(), console)?;
    failed += extras.map_or(0, |e| e.failed);
    Ok(failed)
}

/// Figure 18, Table 4 and the mean speed printed; `clap.csv`, `clap_structures.csv` and
/// `clap.json` (from each run's pretty JSON) in `dir`, then Table 2 and the figures. The
/// in-process sweep and `mcmvm sweep merge` both end here.
pub(crate) fn outputs(
    dir: &Path,
    runs: &[RunSummary],
    reports: &[String],
    seed: u64,
    console: &dyn Console,
) -> Result<(), StudyError> {
    console.out(&clap_study::figure18_of(runs));
    console.line("");
    console.out(&clap_study::table4_of(runs));
    let speed: f64 = runs.iter().map(|r| r.speed).sum::<f64>() / runs.len().max(1) as f64;
    console.line(&format!(
        "mean speed: {speed:.0} warp mem-instr/s per run (seed {seed})"
    ));
    write_in(dir, "clap.csv", &clap_study::csv_of(runs))?;
    write_in(dir, "clap_structures.csv", &clap_study::alloc_csv_of(runs))?;
    write_in(dir, "clap.json", &clap_study::runs_json(reports))?;
    console.line(&format!(
        "wrote {}/clap.csv, clap_structures.csv, clap.json",
        dir.display()
    ));
    crate::extras::table2(dir, runs, console)?;
    crate::sweep::figures(dir, "clap", console)
}
