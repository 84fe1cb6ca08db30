//! `--robustness`: the suite's headline figures over the plausible box of the unknown
//! timing parameters (`mcmvm_models::calibrate::params`; `--points corners`: the primary
//! parameters at both ends, `--points N`: N Latin-hypercube points over all of them),
//! planned and sharded like any sweep. The job list is point × workload × policy; each
//! job's run file carries its point ([`PointRun`]), so `sweep merge` needs nothing but the
//! run files. The outputs, `robustness.txt`, `.csv` and `.json`, come from the run files
//! alone, whether one process ran them or many.
//!
//! CLAP: CLAP over S-64KB and S-2MB, CLAP against ideal, ideal over S-64KB, and the RT
//! similarity and chiplet locality under s64k (rates, not speed-ups), on `--config`
//! (default the 4-chiplet MCM GPU). Forest: Forest and SpecForest over TBNp at 150 %, on the
//! GPU of `--gpu-config` with the UVM parameters of `--config`; its box is
//! `params::forest_box`.

use crate::merge::RunFile;
use crate::resume::{run_all_named, Job};
use crate::sweep::{forest_scale, or_default, workload_filter, Mode, Request, Robustness, Suite};
use crate::task::{self, in_range, run_task, shared_words, sweep_id, Head, Outcome, Split};
use crate::{absolute, write_in, Console, Inputs, StudyError};
use mcmvm_models::calibrate::design::{self, Design, Point};
use mcmvm_models::calibrate::fit::{self, Plan};
use mcmvm_models::calibrate::params::{forest_box, is_uvm_key, Param, PARAMS};
use mcmvm_models::calibrate::robustness::{
    self as rb, Headline, PointFigures, CLAP_SHARE_HEADLINES, FOREST_EXTRA_HEADLINES,
    FOREST_HEADLINES, FOREST_OVERSUB, HEADLINES,
};
use mcmvm_models::gpu::sweep::RunSummary;
use mcmvm_models::uvm::sweep::{run_forest_job, ForestJob, RunPart};
use mcmvm_models::uvm::{SweepOptions, UvmGpu, UvmPolicy};
use mcmvm_models::workload::{clap_suite, forest_suite};
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
fn design_of(r: &Robustness) -> Result<Design, StudyError> {
    match r.points.as_deref().map(str::trim) {
        None | Some("corners") => Ok(Design::Small),
        Some(n) => {
            let points = n
                .parse::<usize>()
                .ok()
                .filter(|&p| p > 0)
                .ok_or_else(|| StudyError::Points(n.to_string()))?;
            Ok(Design::Latin {
                points,
                seed: r.design_seed,
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
    req: &Request,
    r: &Robustness,
    config: &Path,
    mut lists: Vec<(&str, String)>,
    names: Vec<String>,
    out: &Path,
) -> Result<Split, StudyError> {
    let design = design_of(r)?;
    lists.push(("--points", r.points.clone().unwrap_or("corners".into())));
    lists.push(("--design-seed", r.design_seed.to_string()));
    let words = shared_words(req, config, &lists)? + " --robustness";
    let mut id = sweep_id(req, req.suite.name(), names.len(), words);
    id.robustness = Some(design_label(design));
    Ok(Split {
        id,
        out: absolute(out)?,
        names,
    })
}

/// `--robustness` (`r`) for the request's suite: its plan, one job, or all of them; how
/// many runs failed.
pub(crate) fn run(
    req: &Request,
    r: &Robustness,
    inputs: &dyn Inputs,
    console: &dyn Console,
) -> Result<usize, StudyError> {
    match req.suite {
        Suite::Clap => clap(req, r, inputs, console),
        Suite::Forest => forest(req, r, inputs, console),
    }
}

/// The CLAP box's plan: every point of the design on `--config` (default the 4-chiplet
/// MCM GPU), each checked to build here; and the config's path.
fn clap_plan(
    req: &Request,
    r: &Robustness,
    inputs: &dyn Inputs,
) -> Result<(Plan, PathBuf), StudyError> {
    let config = or_default(&req.config, "configs/mcm-4chiplet.toml");
    let (text, name) = inputs.config_text(&config)?;
    let suite = clap_suite();
    let workloads = workload_filter(req.workloads.as_deref(), "clap", suite)?
        .unwrap_or_else(|| suite.iter().map(|w| w.to_string()).collect());
    let points = design::points(design_of(r)?, &PARAMS)?;
    let plan = Plan::new(
        &name, &text, &PARAMS, &HEADLINES, points, workloads, req.scale, req.seed,
    )?;
    Ok((plan, config))
}

/// One CLAP job of the box: its point and summary, and its report.
fn clap_job(plan: &Plan, j: &fit::PlanJob) -> Outcome<PointRun<RunSummary>> {
    let r = plan.run_report(j)?;
    let p = &plan.points[j.point];
    let run = point_run(p, j.point, &PARAMS, RunSummary::of(&r));
    Ok((run, serde_json::to_string_pretty(&r)?))
}

fn clap(
    req: &Request,
    r: &Robustness,
    inputs: &dyn Inputs,
    console: &dyn Console,
) -> Result<usize, StudyError> {
    let (plan, config) = clap_plan(req, r, inputs)?;
    let jobs = plan.jobs();
    let names = jobs
        .iter()
        .map(|j| {
            let label = &plan.points[j.point].label;
            format!("{label}-{}-{}", j.job.workload, j.job.policy)
        })
        .collect();
    let out = out_dir(req);
    let lists = vec![("--workloads", plan.workloads.join(","))];
    let split = split_of(req, r, &config, lists, names, &out)?;
    let plan = &plan;
    let n = match &req.mode {
        Mode::Plan { file, exe } => return task::write_plan(&split, file, exe, console).map(|_| 0),
        Mode::Task(n) => in_range(&split, *n)?,
        Mode::All { resume } => {
            let jobs: Vec<Job<'_, PointRun<RunSummary>>> = jobs
                .iter()
                .map(|j| Job {
                    workload: j.job.workload.clone(),
                    policy: j.job.policy.name().to_string(),
                    oversubscription: None,
                    run: Box::new(move || clap_job(plan, j)),
                })
                .collect();
            return all(req, &split, *resume, jobs, console);
        }
    };
    let j = &jobs[n];
    let head = Head {
        workload: &j.job.workload,
        policy: j.job.policy.name(),
        oversubscription: None,
    };
    run_task(&split, n, head, || clap_job(plan, j), console)
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
fn out_dir(req: &Request) -> PathBuf {
    or_default(&req.out, &format!("out/robustness-{}", req.suite.name()))
}

/// A Forest robustness study: each point's options, and the jobs (point, run).
struct ForestBox {
    params: Vec<Param>,
    points: Vec<Point>,
    opts: Vec<SweepOptions>,
    jobs: Vec<(usize, ForestJob)>,
}

/// The options of one point of the Forest box: its UVM and GPU configs built (and so
/// checked) here.
fn point_options(
    req: &Request,
    inputs: &dyn Inputs,
    (config, gpu_config): (&Path, &Path),
    settings: Vec<String>,
    workloads: &[String],
) -> Result<SweepOptions, StudyError> {
    let (uvm, gpu): (Vec<String>, Vec<String>) = settings
        .into_iter()
        .partition(|s| is_uvm_key(s.split('=').next().unwrap_or_default()));
    let mut cfg = inputs.uvm(config, &uvm)?;
    cfg.engines = inputs.engines()?;
    let gpu = UvmGpu::new(inputs.gpu(gpu_config, &gpu)?);
    let mut o = SweepOptions::new(cfg, gpu);
    o.scale = forest_scale(&req.scale)?;
    o.seed = req.seed;
    o.workloads = workloads.to_vec();
    o.oversubs = vec![FOREST_OVERSUB];
    Ok(o)
}

/// The Forest box's points and jobs.
fn forest_box_of(
    req: &Request,
    r: &Robustness,
    inputs: &dyn Inputs,
    configs: (&Path, &Path),
) -> Result<ForestBox, StudyError> {
    if req.oversub.is_some() {
        return Err(StudyError::RobustnessOversub(FOREST_OVERSUB));
    }
    let params = forest_box();
    let points = design::points(design_of(r)?, &params)?;
    let suite = forest_suite();
    let workloads = workload_filter(req.workloads.as_deref(), "forest", suite)?
        .unwrap_or_else(|| suite.iter().map(|w| w.to_string()).collect());
    let mut opts = Vec::new();
    let mut jobs = Vec::new();
    for (k, p) in points.iter().enumerate() {
        let settings = p.overrides(&params);
        opts.push(point_options(req, inputs, configs, settings, &workloads)?);
        for w in &workloads {
            for policy in FOREST_POLICIES {
                let job = ForestJob {
                    workload: w.clone(),
                    oversubscription: FOREST_OVERSUB,
                    policy,
                };
                jobs.push((k, job));
            }
        }
    }
    Ok(ForestBox {
        params,
        points,
        opts,
        jobs,
    })
}

/// Job `n` of the Forest box: its point and part of the tables, and its metrics.
fn forest_job(b: &ForestBox, n: usize) -> Outcome<PointRun<RunPart>> {
    let (k, job) = &b.jobs[n];
    let m = run_forest_job(&b.opts[*k], job)?;
    let run = point_run(&b.points[*k], *k, &b.params, RunPart::of(&m));
    Ok((run, serde_json::to_string_pretty(&m)?))
}

fn forest(
    req: &Request,
    r: &Robustness,
    inputs: &dyn Inputs,
    console: &dyn Console,
) -> Result<usize, StudyError> {
    let config = or_default(&req.config, "configs/uvm-turing.toml");
    let gpu_config = or_default(&req.gpu_config, "configs/gpu-turing.toml");
    let b = forest_box_of(req, r, inputs, (&config, &gpu_config))?;
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
    let split = split_of(req, r, &config, lists, names, &out_dir(req))?;
    let over = Some(format!("{FOREST_OVERSUB:?}"));
    let b = &b;
    let n = match &req.mode {
        Mode::Plan { file, exe } => return task::write_plan(&split, file, exe, console).map(|_| 0),
        Mode::Task(n) => in_range(&split, *n)?,
        Mode::All { resume } => {
            let jobs: Vec<Job<'_, PointRun<RunPart>>> = (0..b.jobs.len())
                .map(|n| Job {
                    workload: b.jobs[n].1.workload.clone(),
                    policy: b.jobs[n].1.policy.name().to_string(),
                    oversubscription: over.clone(),
                    run: Box::new(move || forest_job(b, n)),
                })
                .collect();
            return all(req, &split, *resume, jobs, console);
        }
    };
    let job = &b.jobs[n].1;
    let head = Head {
        workload: &job.workload,
        policy: job.policy.name(),
        oversubscription: over,
    };
    run_task(&split, n, head, || forest_job(b, n), console)
}

/// Every job here (`--resume`: only the missing ones), then the outputs from the run files.
fn all<S: Serialize + Send>(
    req: &Request,
    split: &Split,
    resume: bool,
    jobs: Vec<Job<'_, S>>,
    console: &dyn Console,
) -> Result<usize, StudyError> {
    console.line(&format!(
        "sweep {} --robustness ({}): {} runs, scale {}, seed {}, {} threads",
        split.id.suite,
        split.id.robustness.as_deref().unwrap_or_default(),
        jobs.len(),
        req.scale,
        req.seed,
        rayon::current_num_threads()
    ));
    if run_all_named(split, resume, jobs, console)? > 0 {
        return Err(StudyError::RunsFailed("runs"));
    }
    let files = crate::merge::suite_files(&split.out, &split.id.suite)?;
    outputs(&split.out, &split.id.suite, &files, &split.out, console)?;
    Ok(0)
}

/// The headlines and each point's figures from the run files of `suite`.
fn figures(
    dir: &Path,
    suite: &str,
    files: &[RunFile],
    console: &dyn Console,
) -> Result<(crate::runfile::SweepId, Vec<Headline>, Vec<PointFigures>), StudyError> {
    if suite == "clap" {
        let (id, runs) = crate::merge::load::<PointRun<RunSummary>>(dir, files, false, console)?;
        let runs: Vec<_> = runs.into_iter().map(|r| r.0).collect();
        let heads: Vec<Headline> = HEADLINES
            .iter()
            .map(Headline::of)
            .chain(CLAP_SHARE_HEADLINES)
            .collect();
        Ok((id, heads, by_point(&runs, clap_figures)))
    } else {
        let (id, runs) = crate::merge::load::<PointRun<RunPart>>(dir, files, false, console)?;
        let runs: Vec<_> = runs.into_iter().map(|r| r.0).collect();
        let points = by_point(&runs, rb::forest_figures);
        let heads = FOREST_HEADLINES.iter().chain(&FOREST_EXTRA_HEADLINES);
        Ok((id, heads.copied().collect(), points))
    }
}

/// The robustness outputs of the run files `files` of `dir`, into `out`: `robustness.txt`
/// (also printed), `.csv` and `.json`. The in-process sweep and `sweep merge` end here.
pub(crate) fn outputs(
    dir: &Path,
    suite: &str,
    files: &[RunFile],
    out: &Path,
    console: &dyn Console,
) -> Result<(), StudyError> {
    let (id, heads, points) = figures(dir, suite, files, console)?;
    let ranges = rb::ranges(&heads, &points);
    let text = format!(
        "{suite} at scale {}, seed {}, design {}\n{}",
        id.scale,
        id.seed,
        id.robustness.as_deref().unwrap_or_default(),
        rb::text(&ranges, &points)
    );
    console.out(&text);
    let json = serde_json::json!({
        "suite": suite,
        "scale": id.scale,
        "seed": id.seed,
        "design": id.robustness,
        "headlines": ranges,
        "points": points,
    });
    write_in(out, "robustness.txt", &text)?;
    write_in(out, "robustness.csv", &rb::csv(&ranges))?;
    write_in(
        out,
        "robustness.json",
        &(serde_json::to_string_pretty(&json)? + "\n"),
    )?;
    console.line(&format!(
        "wrote {}/robustness.txt, .csv, .json",
        out.display()
    ));
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
