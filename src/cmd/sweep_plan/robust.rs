//! `mcmvm sweep --suite clap|forest --robustness`: the suite's headline figures over the
//! plausible box of the unknown timing parameters (`mcmvm_models::calibrate::params`;
//! `--points corners`: the primary parameters at both ends, `--points N`: N Latin-hypercube
//! points over all of them), planned and sharded like any sweep. The job list is point ×
//! workload × policy; each job's run file carries its point ([`PointRun`]), so `sweep
//! merge` needs nothing but the run files. The outputs, `robustness.txt`, `.csv` and
//! `.json`, come from the run files alone, whether one process ran them or many.
//!
//! CLAP: CLAP over S-64KB and S-2MB, CLAP against ideal, ideal over S-64KB, and the RT
//! similarity and chiplet locality under s64k (rates, not speed-ups), on
//! `--config` (default the 4-chiplet MCM GPU). Forest: Forest and SpecForest over TBNp at
//! 150 %, on the GPU of `--gpu-config` with the UVM parameters of `--config`; its box is
//! `params::forest_box`.

use super::resume::{run_all_named, Job};
use super::{absolute, in_range, run_task, shared_words, sweep_id, write_plan, Mode, Split};
use crate::cmd::sweep::{forest_scale, workload_filter, Args};
use anyhow::Context;
use mcmvm_models::calibrate::design::{self, Design, Point};
use mcmvm_models::calibrate::fit::{self, Plan};
use mcmvm_models::calibrate::params::{forest_box, is_uvm_key, Param, PARAMS};
use mcmvm_models::calibrate::robustness::{
    self as rb, Headline, PointFigures, CLAP_SHARE_HEADLINES, FOREST_HEADLINES, FOREST_OVERSUB,
    HEADLINES,
};
use mcmvm_models::gpu::sweep::{geomean, RunSummary};
use mcmvm_models::uvm::sweep::{run_forest_job, ForestJob, RunPart};
use mcmvm_models::uvm::{SweepOptions, UvmGpu, UvmPolicy};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// A robustness run's summary: the point it ran at, and what the tables need of the run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PointRun<S> {
    pub point: usize,
    pub label: String,
    /// The point's `--set KEY=VALUE` overrides.
    pub settings: Vec<String>,
    pub run: S,
}

/// The policies of Forest's headlines, in a point's job order.
const FOREST_POLICIES: [UvmPolicy; 3] = [UvmPolicy::Tbnp, UvmPolicy::Forest, UvmPolicy::SpecForest];

/// `--points`: `corners` (default) or a Latin hypercube of N points.
fn design_of(args: &Args) -> anyhow::Result<Design> {
    match args.points.as_deref().map(str::trim) {
        None | Some("corners") => Ok(Design::Small),
        Some(n) => {
            let points = n
                .parse::<usize>()
                .ok()
                .filter(|&p| p > 0)
                .with_context(|| format!("--points `{n}`: expected `corners` or a count"))?;
            Ok(Design::Latin {
                points,
                seed: args.design_seed,
            })
        }
    }
}

/// The design as the run files record it (`corners`, `lhs 16 seed 38`).
fn design_label(d: Design) -> String {
    match d {
        Design::Latin { points, seed } => format!("lhs {points} seed {seed}"),
        _ => "corners".into(),
    }
}

/// The split sweep of a robustness study: `lists` are its options beyond the shared ones.
fn split_of(
    args: &Args,
    suite: &str,
    config: &Path,
    mut lists: Vec<(&str, String)>,
    names: Vec<String>,
    out: &Path,
) -> anyhow::Result<Split> {
    let design = design_of(args)?;
    lists.push(("--points", args.points.clone().unwrap_or("corners".into())));
    lists.push(("--design-seed", args.design_seed.to_string()));
    let words = shared_words(args, config, &lists)? + " --robustness";
    let mut id = sweep_id(args, suite, names.len(), words);
    id.robustness = Some(design_label(design));
    Ok(Split {
        id,
        out: absolute(out)?,
        names,
    })
}

/// `--robustness` for `suite` (clap or forest): its plan, one job, or all of them.
pub fn run(args: &Args, suite: &str, mode: Mode) -> anyhow::Result<u8> {
    if suite == "clap" {
        clap(args, mode)
    } else {
        forest(args, mode)
    }
}

/// The CLAP box's plan: every point of the design on `--config` (default the 4-chiplet
/// MCM GPU), each checked to build here; and the config's path.
fn clap_plan(args: &Args) -> anyhow::Result<(Plan, PathBuf)> {
    let config = args
        .config
        .clone()
        .unwrap_or_else(|| PathBuf::from("configs/mcm-4chiplet.toml"));
    let (text, name) = crate::cmd::configs::text(&config)?;
    let suite = mcmvm_models::workload::clap_suite();
    let workloads = workload_filter(args, suite)?
        .unwrap_or_else(|| suite.iter().map(|w| w.to_string()).collect());
    let points = design::points(design_of(args)?, &PARAMS)?;
    let plan = Plan::new(
        &name,
        &text,
        &PARAMS,
        &HEADLINES,
        points,
        workloads,
        args.scale_spec(),
        args.seed,
    )?;
    Ok((plan, config))
}

fn clap(args: &Args, mode: Mode) -> anyhow::Result<u8> {
    let (plan, config) = clap_plan(args)?;
    let jobs = plan.jobs();
    let names = jobs
        .iter()
        .map(|j| {
            let label = &plan.points[j.point].label;
            format!("{label}-{}-{}", j.job.workload, j.job.policy)
        })
        .collect();
    let out = out_dir(args, "clap");
    let lists = vec![("--workloads", plan.workloads.join(","))];
    let split = split_of(args, "clap", &config, lists, names, &out)?;
    let plan = &plan;
    let tag = |j: &fit::PlanJob,
               r: &mcmvm_models::gpu::RunReport|
     -> super::Outcome<PointRun<RunSummary>> {
        let p = &plan.points[j.point];
        let run = point_run(p, j.point, &PARAMS, RunSummary::of(r));
        Ok((run, serde_json::to_string_pretty(r)?))
    };
    let n = match mode {
        Mode::Plan => return write_plan(args, &split),
        Mode::Task(n) => in_range(&split, n)?,
        Mode::All { resume } => {
            let tag = &tag;
            let jobs: Vec<Job<'_, PointRun<RunSummary>>> = jobs
                .iter()
                .map(|j| Job {
                    workload: j.job.workload.clone(),
                    policy: j.job.policy.name().to_string(),
                    oversubscription: None,
                    run: Box::new(move || tag(j, &plan.run_report(j)?)),
                })
                .collect();
            return all(args, &split, resume, jobs);
        }
    };
    let j = &jobs[n];
    run_task(
        &split,
        n,
        &j.job.workload,
        j.job.policy.name(),
        None,
        || tag(j, &plan.run_report(j)?),
    )
}

fn point_run<S>(p: &Point, point: usize, params: &[Param], run: S) -> PointRun<S> {
    PointRun {
        point,
        label: p.label.clone(),
        settings: p.overrides(params),
        run,
    }
}

/// `--out`, else out/robustness-<suite>.
fn out_dir(args: &Args, suite: &str) -> PathBuf {
    args.out
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("out/robustness-{suite}")))
}

/// A Forest robustness study: each point's options, and the jobs (point, run).
struct ForestBox {
    params: Vec<Param>,
    points: Vec<Point>,
    opts: Vec<SweepOptions>,
    jobs: Vec<(usize, ForestJob)>,
}

/// The Forest box's points, each point's UVM and GPU configs built (and so checked) here.
fn forest_box_of(args: &Args, config: &Path, gpu_config: &Path) -> anyhow::Result<ForestBox> {
    anyhow::ensure!(
        args.oversub.is_none(),
        "--oversub: the Forest headlines are at {FOREST_OVERSUB} (the paper's 150 %)"
    );
    let params = forest_box();
    let points = design::points(design_of(args)?, &params)?;
    let suite = mcmvm_models::workload::forest_suite();
    let workloads = workload_filter(args, suite)?
        .unwrap_or_else(|| suite.iter().map(|w| w.to_string()).collect());
    let mut opts = Vec::new();
    let mut jobs = Vec::new();
    for (k, p) in points.iter().enumerate() {
        let (uvm, gpu): (Vec<String>, Vec<String>) = p
            .overrides(&params)
            .into_iter()
            .partition(|s| is_uvm_key(s.split('=').next().unwrap_or_default()));
        let mut cfg = crate::cmd::configs::uvm(config, &uvm)?;
        cfg.engines = args.hw.hardware()?;
        let gpu = UvmGpu::new(crate::cmd::configs::gpu_with(gpu_config, &gpu)?);
        let mut o = SweepOptions::new(cfg, gpu);
        o.scale = forest_scale(&args.scale_spec())?;
        o.seed = args.seed;
        o.workloads = workloads.clone();
        o.oversubs = vec![FOREST_OVERSUB];
        for w in &workloads {
            for policy in FOREST_POLICIES {
                let oversubscription = FOREST_OVERSUB;
                let workload = w.clone();
                jobs.push((
                    k,
                    ForestJob {
                        workload,
                        oversubscription,
                        policy,
                    },
                ));
            }
        }
        opts.push(o);
    }
    Ok(ForestBox {
        params,
        points,
        opts,
        jobs,
    })
}

fn forest(args: &Args, mode: Mode) -> anyhow::Result<u8> {
    let config = args
        .config
        .clone()
        .unwrap_or_else(|| PathBuf::from("configs/uvm-turing.toml"));
    let gpu_config = args
        .gpu_config
        .clone()
        .unwrap_or_else(|| PathBuf::from("configs/gpu-turing.toml"));
    let b = forest_box_of(args, &config, &gpu_config)?;
    let names = b
        .jobs
        .iter()
        .map(|(k, j)| format!("{}-{}-{}", b.points[*k].label, j.workload, j.policy.name()))
        .collect();
    let gpu = if gpu_config.is_file() {
        absolute(&gpu_config)?
    } else {
        gpu_config.clone()
    };
    let lists = vec![
        ("--workloads", b.opts[0].workloads.join(",")),
        ("--gpu-config", gpu.display().to_string()),
    ];
    let out = out_dir(args, "forest");
    let split = split_of(args, "forest", &config, lists, names, &out)?;
    let over = Some(format!("{FOREST_OVERSUB:?}"));
    let run = |n: usize| -> super::Outcome<PointRun<RunPart>> {
        let (k, job) = &b.jobs[n];
        let m = run_forest_job(&b.opts[*k], job)?;
        let run = point_run(&b.points[*k], *k, &b.params, RunPart::of(&m));
        Ok((run, serde_json::to_string_pretty(&m)?))
    };
    let n = match mode {
        Mode::Plan => return write_plan(args, &split),
        Mode::Task(n) => in_range(&split, n)?,
        Mode::All { resume } => {
            let run = &run;
            let jobs: Vec<Job<'_, PointRun<RunPart>>> = (0..b.jobs.len())
                .map(|n| Job {
                    workload: b.jobs[n].1.workload.clone(),
                    policy: b.jobs[n].1.policy.name().to_string(),
                    oversubscription: over.clone(),
                    run: Box::new(move || run(n)),
                })
                .collect();
            return all(args, &split, resume, jobs);
        }
    };
    let job = &b.jobs[n].1;
    run_task(&split, n, &job.workload, job.policy.name(), over, || run(n))
}

/// Every job here (`--resume`: only the missing ones), then the outputs from the run files.
fn all<S: Serialize + Send>(
    args: &Args,
    split: &Split,
    resume: bool,
    jobs: Vec<Job<'_, S>>,
) -> anyhow::Result<u8> {
    println!(
        "sweep {} --robustness ({}): {} runs, scale {}, seed {}, {} threads",
        split.id.suite,
        split.id.robustness.as_deref().unwrap_or_default(),
        jobs.len(),
        args.scale_spec(),
        args.seed,
        rayon::current_num_threads()
    );
    let failed = run_all_named(split, resume, jobs);
    if failed? > 0 {
        anyhow::bail!("some runs failed (above); rerun with --resume to run only them");
    }
    let files = super::merge::suite_files(&split.out, &split.id.suite)?;
    outputs(&split.out, &split.id.suite, &files, &split.out)?;
    Ok(0)
}

/// The robustness outputs of the run files `files` of `dir`, into `out`: `robustness.txt`
/// (also printed), `.csv` and `.json`. The in-process sweep and `sweep merge` end here.
pub(super) fn outputs(
    dir: &Path,
    suite: &str,
    files: &[(String, usize, PathBuf)],
    out: &Path,
) -> anyhow::Result<()> {
    let (id, heads, points) = if suite == "clap" {
        let (id, runs) = super::merge::load::<PointRun<RunSummary>>(dir, files, false)?;
        let runs: Vec<_> = runs.into_iter().map(|r| r.0).collect();
        let heads: Vec<Headline> = HEADLINES
            .iter()
            .map(Headline::of)
            .chain(CLAP_SHARE_HEADLINES)
            .collect();
        (id, heads, by_point(&runs, clap_figures))
    } else {
        let (id, runs) = super::merge::load::<PointRun<RunPart>>(dir, files, false)?;
        let runs: Vec<_> = runs.into_iter().map(|r| r.0).collect();
        (
            id,
            FOREST_HEADLINES.to_vec(),
            by_point(&runs, forest_figures),
        )
    };
    let ranges = rb::ranges(&heads, &points);
    let text = format!(
        "{suite} at scale {}, seed {}, design {}\n{}",
        id.scale,
        id.seed,
        id.robustness.as_deref().unwrap_or_default(),
        rb::text(&ranges, &points)
    );
    print!("{text}");
    let json = serde_json::json!({
        "suite": suite,
        "scale": id.scale,
        "seed": id.seed,
        "design": id.robustness,
        "headlines": ranges,
        "points": points,
    });
    std::fs::create_dir_all(out).with_context(|| format!("{}: cannot create", out.display()))?;
    for (name, body) in [
        ("robustness.txt", text),
        ("robustness.csv", rb::csv(&ranges)),
        (
            "robustness.json",
            serde_json::to_string_pretty(&json)? + "\n",
        ),
    ] {
        let p = out.join(name);
        std::fs::write(&p, body).with_context(|| format!("{}: cannot write", p.display()))?;
    }
    println!("wrote {}/robustness.txt, .csv, .json", out.display());
    Ok(())
}

/// The runs grouped by point (in point order), each point's figures from its runs.
fn by_point<S>(runs: &[PointRun<S>], figures: fn(&[&S]) -> Vec<Option<f64>>) -> Vec<PointFigures> {
    let mut ids: Vec<usize> = runs.iter().map(|r| r.point).collect();
    ids.sort_unstable();
    ids.dedup();
    ids.into_iter()
        .map(|point| {
            let mine: Vec<&PointRun<S>> = runs.iter().filter(|r| r.point == point).collect();
            let of: Vec<&S> = mine.iter().map(|r| &r.run).collect();
            PointFigures {
                point,
                label: mine[0].label.clone(),
                settings: mine[0].settings.clone(),
                figures: figures(&of),
            }
        })
        .collect()
}

/// The workloads of `names`, each once, in order.
fn distinct<'a>(names: impl Iterator<Item = &'a str>) -> Vec<String> {
    let mut ws: Vec<String> = Vec::new();
    for w in names {
        if !ws.iter().any(|x| x == w) {
            ws.push(w.to_string());
        }
    }
    ws
}

/// CLAP's headlines at one point: the speed-ups, each a geomean over the point's
/// workloads, then the RT similarity and chiplet locality, means of its s64k runs.
fn clap_figures(runs: &[&RunSummary]) -> Vec<Option<f64>> {
    let runs: Vec<RunSummary> = runs.iter().map(|r| (*r).clone()).collect();
    let workloads = distinct(runs.iter().map(|r| r.workload.as_str()));
    let mut figures = fit::score(0, &HEADLINES, &runs, &workloads).figures;
    figures.extend(rb::clap_share_figures(&runs));
    figures
}

/// Forest's headlines at one point: Forest's and SpecForest's geomean speed-up over TBNp.
fn forest_figures(runs: &[&RunPart]) -> Vec<Option<f64>> {
    let workloads = distinct(runs.iter().map(|r| r.workload.as_str()));
    let cycles = |w: &str, p: UvmPolicy| {
        runs.iter()
            .find(|r| r.workload == w && r.policy == p.name())
            .map(|r| r.cycles as f64)
    };
    [UvmPolicy::Forest, UvmPolicy::SpecForest]
        .iter()
        .map(|&p| {
            let xs: Option<Vec<f64>> = workloads
                .iter()
                .map(|w| Some(cycles(w, UvmPolicy::Tbnp)? / cycles(w, p)?))
                .collect();
            geomean(&xs?)
        })
        .collect()
}
