//! `mcmvm sweep` beyond one machine (suites clap and forest): a sweep is a fixed list of
//! jobs, and each can run as its own process.
//!
//! * `--plan FILE` writes one self-contained shell command per job (absolute paths, every
//!   option that matters, `--task-id N`), in job order, for GNU parallel, a Slurm array or
//!   HTCondor;
//! * `--task-id N` (default `$SLURM_ARRAY_TASK_ID`) runs job N alone and writes
//!   `OUT/runs/<suite>-<N>-<workload>-<policy>[-<oversub>].json`: the sweep's identity,
//!   what the tables need of the run (`summary`) and its full report (`report`), written
//!   to a temporary file and renamed, so a killed job leaves no half file; a job whose
//!   whole file of the same sweep exists is skipped (a rerun writes only its own file);
//! * `mcmvm sweep merge OUT` ([`merge`]) builds the in-process sweep's tables and files;
//! * the in-process sweep ([`all`]) writes the same run files as it goes, so `--resume`
//!   after a kill or Ctrl-C runs only what is missing ([`resume`]).

use super::sweep::{clap_sweep, Args};
use super::sweep_forest::forest_sweep;
use anyhow::Context;
use mcmvm_models::gpu::sweep::{self as clap_study, RunSummary};
use mcmvm_models::uvm::sweep::{run_forest_job, RunPart};
use mcmvm_models::workload::Scale;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

mod all;
mod merge;
mod resume;
mod robust;
use all::{all_clap, all_forest};
pub use merge::{merge, MergeArgs};

/// What `mcmvm sweep --suite clap|forest` does with its job list.
#[derive(Debug, Clone, Copy)]
pub enum Mode {
    /// `--plan FILE`: write the commands.
    Plan,
    /// `--task-id N`: run job N alone.
    Task(usize),
    /// Run every job here (`--resume`: only those without a run file).
    All { resume: bool },
}

/// What identifies a sweep: every run file of one sweep carries the same.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepId {
    pub suite: String,
    /// How many jobs the sweep has.
    pub runs: usize,
    /// The options every job shares, as shell words after `--suite S` (without
    /// `--task-id` and `--out`).
    pub args: String,
    pub seed: u64,
    /// `--scale`: a multiplier (its exact text) or `paper`.
    pub scale: Scale,
    /// forest: the oversubscriptions of the tables, in order (exact text).
    pub oversubs: Vec<String>,
    /// `--robustness`: the design over the plausible box (`corners`, `lhs N seed S`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub robustness: Option<String>,
}

/// A run file without its `report` (which follows it, see [`run_file_text`]).
#[derive(Debug, Serialize, Deserialize)]
pub struct RunHead<S> {
    pub sweep: SweepId,
    pub task: usize,
    pub workload: String,
    pub policy: String,
    /// forest: the run's oversubscription (exact text).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oversubscription: Option<String>,
    /// What the tables need of the run.
    pub summary: S,
}

/// How the run files separate the head from the full report: the top-level key, which is
/// the only line with exactly two spaces before a quote and `"report"` (strings hold no
/// raw newlines; nested keys are indented further).
const REPORT_KEY: &str = "\n  \"report\": ";

/// A run file: the head's pretty JSON with the report's pretty JSON as its last member —
/// exactly what serde_json writes for the two together.
fn run_file_text(head: &str, report: &str) -> String {
    let head = head.strip_suffix("\n}").unwrap_or(head);
    format!("{head},{REPORT_KEY}{}\n}}\n", report.replace('\n', "\n  "))
}

/// The report's pretty JSON from a run file's text (None: not in [`run_file_text`]'s
/// layout).
pub fn report_text(file: &str) -> Option<String> {
    let (_, rest) = file.split_once(REPORT_KEY)?;
    let body = rest.trim_end().strip_suffix('}')?.trim_end();
    let mut out = String::with_capacity(body.len());
    for (i, line) in body.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
            out.push_str(line.strip_prefix("  ")?);
        } else {
            out.push_str(line);
        }
    }
    Some(out)
}

/// `--task-id`, else `$SLURM_ARRAY_TASK_ID` if set (a Slurm array's task).
pub fn task_id(flag: Option<&str>) -> anyhow::Result<Option<usize>> {
    let (what, text) = match (flag, std::env::var("SLURM_ARRAY_TASK_ID")) {
        (Some(t), _) => ("--task-id", t.to_string()),
        (None, Ok(t)) => ("$SLURM_ARRAY_TASK_ID", t),
        (None, Err(_)) => return Ok(None),
    };
    let n = text
        .trim()
        .parse::<usize>()
        .map_err(|_| anyhow::anyhow!("{what} `{text}` is not a run number (0, 1, 2, ...)"))?;
    Ok(Some(n))
}

/// A word for `sh`: as is when it is plain, else in single quotes.
fn sh_word(w: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "-_./,=:+@%".contains(c);
    if !w.is_empty() && w.chars().all(plain) {
        w.to_string()
    } else {
        format!("'{}'", w.replace('\'', "'\\''"))
    }
}

/// A path that works from any directory.
fn absolute(p: &Path) -> anyhow::Result<PathBuf> {
    std::path::absolute(p).with_context(|| format!("{}: no absolute path", p.display()))
}

/// The options every job shares (after `--suite S`): the config (absolute when it is a
/// file; a built-in's name works anywhere), scale, seed, the suite's lists, `--hw`.
fn shared_words(args: &Args, config: &Path, lists: &[(&str, String)]) -> anyhow::Result<String> {
    let config = if config.is_file() {
        absolute(config)?
    } else {
        config.to_path_buf()
    };
    let mut words = vec![
        "--config".to_string(),
        config.display().to_string(),
        "--scale".into(),
        args.scale_spec().to_string(),
        "--seed".into(),
        args.seed.to_string(),
    ];
    for (flag, value) in lists {
        words.extend([flag.to_string(), value.clone()]);
    }
    words.extend(["--hw".to_string(), args.hw.hw.clone()]);
    if args.hw.hw_every_cycle {
        words.push("--hw-every-cycle".into());
    }
    if args.hw.hw_unpredicted {
        words.push("--hw-unpredicted".into());
    }
    if args.hw.hw == "check" {
        let dir = absolute(&args.hw.hw_check_dir)?;
        words.extend(["--hw-check-dir".to_string(), dir.display().to_string()]);
    }
    Ok(words
        .iter()
        .map(|w| sh_word(w))
        .collect::<Vec<_>>()
        .join(" "))
}

/// One job's result: what the tables need of it, and its report's pretty JSON.
type Outcome<S> = anyhow::Result<(S, String)>;

/// A split sweep: its identity, where it writes, and each job's file-name part.
struct Split {
    id: SweepId,
    out: PathBuf,
    names: Vec<String>,
}

/// The sweep of `suite` (clap or forest): its plan, one job, or all of them.
pub fn run(args: &Args, suite: &str, mode: Mode) -> anyhow::Result<u8> {
    if args.robustness {
        robust::run(args, suite, mode)
    } else if suite == "clap" {
        run_clap(args, mode)
    } else {
        run_forest(args, mode)
    }
}

/// The CLAP sweep's plan, one job, or all of them.
fn run_clap(args: &Args, mode: Mode) -> anyhow::Result<u8> {
    let suite = "clap";
    let s = clap_sweep(args)?;
    let mut workloads: Vec<&str> = s.jobs.iter().map(|j| j.workload.as_str()).collect();
    workloads.dedup();
    let policies: Vec<&str> = s.policies.iter().map(|p| p.name()).collect();
    let lists = [
        ("--policies", policies.join(",")),
        ("--workloads", workloads.join(",")),
    ];
    let split = Split {
        id: sweep_id(
            args,
            suite,
            s.jobs.len(),
            shared_words(args, &s.config, &lists)?,
        ),
        out: absolute(&s.out)?,
        names: s
            .jobs
            .iter()
            .map(|j| format!("{}-{}", j.workload, j.policy))
            .collect(),
    };
    let n = match mode {
        Mode::Plan => return write_plan(args, &split),
        Mode::All { resume } => return all_clap(args, &s, &split, resume),
        Mode::Task(n) => n,
    };
    let job = in_range(&split, n).map(|i| &s.jobs[i])?;
    run_task(&split, n, &job.workload, job.policy.name(), None, || {
        let scale = args.scale_spec().factor(&job.workload);
        let r = clap_study::run_job(&s.cfg, job, scale, args.seed)?;
        Ok((RunSummary::of(&r), serde_json::to_string_pretty(&r)?))
    })
}

/// The Forest sweep's plan, one job, or all of them.
fn run_forest(args: &Args, mode: Mode) -> anyhow::Result<u8> {
    let suite = "forest";
    let s = forest_sweep(args)?;
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
    let mut id = sweep_id(
        args,
        suite,
        s.jobs.len(),
        shared_words(args, &s.config, &lists)?,
    );
    id.oversubs = s.opts.oversubs.iter().map(|o| format!("{o:?}")).collect();
    let split = Split {
        id,
        out: absolute(&s.out)?,
        names: s
            .jobs
            .iter()
            .map(|j| format!("{}-{}-{}", j.workload, j.policy.name(), j.oversubscription))
            .collect(),
    };
    let n = match mode {
        Mode::Plan => return write_plan(args, &split),
        Mode::All { resume } => return all_forest(args, s, &split, resume),
        Mode::Task(n) => n,
    };
    let job = in_range(&split, n).map(|i| &s.jobs[i])?;
    let over = Some(format!("{:?}", job.oversubscription));
    run_task(&split, n, &job.workload, job.policy.name(), over, || {
        let m = run_forest_job(&s.opts, job)?;
        Ok((RunPart::of(&m), serde_json::to_string_pretty(&m)?))
    })
}

fn sweep_id(args: &Args, suite: &str, runs: usize, words: String) -> SweepId {
    SweepId {
        suite: suite.to_string(),
        runs,
        args: words,
        seed: args.seed,
        scale: args.scale_spec(),
        oversubs: Vec::new(),
        robustness: None,
    }
}

fn in_range(split: &Split, n: usize) -> anyhow::Result<usize> {
    let runs = split.id.runs;
    if n >= runs {
        anyhow::bail!(
            "--task-id {n} is out of range: this {} sweep has {runs} runs (0..={})",
            split.id.suite,
            runs.saturating_sub(1)
        );
    }
    Ok(n)
}

/// The command line of job `n` (binary and out dir absolute).
fn task_line(exe: &str, split: &Split, n: usize) -> String {
    let id = &split.id;
    let out = sh_word(&split.out.display().to_string());
    format!(
        "{exe} sweep --suite {} --task-id {n} {} --out {out}",
        id.suite, id.args
    )
}

fn write_plan(args: &Args, split: &Split) -> anyhow::Result<u8> {
    let Some(plan) = &args.plan else {
        anyhow::bail!("--plan FILE or --task-id N");
    };
    let exe = std::env::current_exe().context("the mcmvm binary's path")?;
    let exe = sh_word(&exe.display().to_string());
    let text: String = (0..split.id.runs)
        .map(|n| task_line(&exe, split, n) + "\n")
        .collect();
    if let Some(dir) = plan.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("{}: cannot create", dir.display()))?;
    }
    std::fs::write(plan, text).with_context(|| format!("{}: cannot write", plan.display()))?;
    println!(
        "plan {}: {} runs of the {} sweep, one command a line (task ids 0..={})",
        plan.display(),
        split.id.runs,
        split.id.suite,
        split.id.runs.saturating_sub(1)
    );
    println!(
        "each writes {}/runs/; when all are done: mcmvm sweep merge {}",
        split.out.display(),
        split.out.display()
    );
    Ok(0)
}

/// Run job `n` unless its file of this sweep is there and whole (a rerun of a cluster
/// shard); write the file atomically. Another sweep's file is an error.
fn run_task<S: Serialize>(
    split: &Split,
    n: usize,
    workload: &str,
    policy: &str,
    oversubscription: Option<String>,
    job: impl FnOnce() -> Outcome<S>,
) -> anyhow::Result<u8> {
    let (suite, runs) = (&split.id.suite, split.id.runs);
    let path = resume::run_path(split, n);
    match resume::check(split, n)? {
        resume::Found::Done => {
            println!(
                "task {n}/{runs}: {} exists, skipped (delete it to run the job again)",
                path.display()
            );
            return Ok(0);
        }
        resume::Found::Unreadable => println!(
            "note: {} is not a whole run file; it runs again",
            path.display()
        ),
        resume::Found::Missing => {}
    }
    println!("task {n}/{runs}: {suite} {}", split.names[n]);
    let t0 = std::time::Instant::now();
    let (summary, report) = match job() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("task {n}/{runs} ({}) failed: {e:#}", split.names[n]);
            return Ok(1);
        }
    };
    let head = RunHead {
        sweep: split.id.clone(),
        task: n,
        workload: workload.to_string(),
        policy: policy.to_string(),
        oversubscription,
        summary,
    };
    resume::write_run(split, n, &head, &report)?;
    println!(
        "task {n}/{runs}: wrote {} ({:.1} s)",
        path.display(),
        t0.elapsed().as_secs_f64()
    );
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_report_comes_back_byte_for_byte() {
        let head = serde_json::to_string_pretty(&serde_json::json!({"a": [1, {"b": "x"}]}));
        let report = "{\n  \"x\": [\n    1,\n    2\n  ],\n  \"report\": {}\n}";
        let text = run_file_text(&head.unwrap(), report);
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["report"]["x"][1], 2);
        assert_eq!(report_text(&text).as_deref(), Some(report));
        assert_eq!(report_text("{\n  \"a\": 1\n}"), None);
    }

    #[test]
    fn shell_words_are_quoted_when_needed() {
        assert_eq!(sh_word("/a/b-c_d.toml"), "/a/b-c_d.toml");
        assert_eq!(sh_word("a b"), "'a b'");
        assert_eq!(sh_word("it's"), "'it'\\''s'");
        assert_eq!(sh_word(""), "''");
    }
}
