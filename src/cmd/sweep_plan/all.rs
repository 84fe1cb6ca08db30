//! The in-process sweep (neither `--plan` nor `--task-id`): every job on this machine,
//! each run file written when its run ends ([`super::resume`]), then the tables and files
//! built from the run files as `mcmvm sweep merge` builds them, so a resumed sweep's
//! tables are byte for byte those of an uninterrupted one.

use super::resume::{run_all, run_all_named, Job};
use super::{merge, Split};
use crate::cmd::sweep::{Args, ClapSweep};
use crate::cmd::sweep_forest::{forest_curve, forest_progress, ForestSweep};
use mcmvm_models::gpu::sweep::{self as clap_study, RunSummary};
use mcmvm_models::uvm::sweep::{run_forest_job, RunPart};

/// The CLAP sweep: Figure 18, Table 4, the extra runs and the paper's figures.
pub(super) fn all_clap(
    args: &Args,
    s: &ClapSweep,
    split: &Split,
    resume: bool,
) -> anyhow::Result<u8> {
    println!(
        "sweep clap: {} runs ({} workloads x {} policies), scale {}, seed {}, config {}, {} threads",
        s.jobs.len(),
        s.jobs.len() / s.policies.len().max(1),
        s.policies.len(),
        args.scale_spec(),
        args.seed,
        s.config.display(),
        rayon::current_num_threads()
    );
    let jobs: Vec<Job<'_, RunSummary>> = s
        .jobs
        .iter()
        .map(|job| Job {
            workload: job.workload.clone(),
            policy: job.policy.name().to_string(),
            oversubscription: None,
            run: Box::new(move || {
                let scale = args.scale_spec().factor(&job.workload);
                let r = clap_study::run_job(&s.cfg, job, scale, args.seed)?;
                Ok((RunSummary::of(&r), serde_json::to_string_pretty(&r)?))
            }),
        })
        .collect();
    let failed = run_all_named(split, resume, jobs);
    let mut failed = failed?;
    let files = merge::suite_files(&s.out, "clap")?;
    let (_, summaries, reports) = merge::clap_runs(&s.out, &files, failed > 0)?;
    crate::cmd::sweep::clap_outputs(&s.out, &summaries, &reports, args.seed)?;
    let extras = if args.no_extras {
        None
    } else {
        Some(crate::cmd::sweep_extras::run(args, s, &summaries)?)
    };
    crate::cmd::sweep_extras::paper(&s.out, &summaries, extras.as_ref())?;
    failed += extras.map_or(0, |e| e.failed);
    Ok(if failed > 0 { 1 } else { 0 })
}

/// The Forest sweep: the per-workload table, then (without `--oversub`) the curve.
pub(super) fn all_forest(
    args: &Args,
    s: ForestSweep,
    split: &Split,
    resume: bool,
) -> anyhow::Result<u8> {
    let mut opts = s.opts.clone();
    opts.out_dir = Some(s.out.clone());
    crate::cmd::sweep_forest::banner(args, &s);
    let jobs: Vec<Job<'_, RunPart>> = s
        .jobs
        .iter()
        .map(|job| Job {
            workload: job.workload.clone(),
            policy: job.policy.name().to_string(),
            oversubscription: Some(format!("{:?}", job.oversubscription)),
            run: Box::new(|| {
                let m = run_forest_job(&s.opts, job)?;
                Ok((RunPart::of(&m), serde_json::to_string_pretty(&m)?))
            }),
        })
        .collect();
    let bar = crate::cmd::progress::bar(jobs.len() as u64, "runs");
    let progress = forest_progress(&bar);
    let tick = |n: usize, secs: Option<f64>| match (secs, &progress.0) {
        (Some(secs), Some(p)) => p(&s.jobs[n], secs),
        // A resumed run: done, without a line of its own.
        _ => bar.inc(1),
    };
    let t0 = std::time::Instant::now();
    let failed = run_all(split, resume, jobs, &tick);
    bar.finish_and_clear();
    if failed? > 0 {
        anyhow::bail!("some Forest runs failed (above); rerun with --resume to run only them");
    }
    let files = merge::suite_files(&s.out, "forest")?;
    merge::forest_outputs(&s.out, &files, &s.out, false)?;
    println!("({:.0} s)", t0.elapsed().as_secs_f64());
    if args.oversub.is_none() && !args.no_curve {
        forest_curve(args, &opts)?;
    }
    Ok(0)
}
