//! A split sweep — a fixed list of jobs, each of which can run as its own process — and
//! what every suite does with it: its identity and shared options, `--plan`, and one job
//! alone (`--task-id N`).

use crate::plan::sh_word;
use crate::resume::{self, Found};
use crate::runfile::{RunHead, SweepId};
use crate::sweep::Request;
use crate::{absolute, Console, StudyError};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// One job's result: what the tables need of it, and its report's pretty JSON.
pub(crate) type Outcome<S> = Result<(S, String), StudyError>;

/// A split sweep: its identity, where it writes, and each job's file-name part.
pub(crate) struct Split {
    pub id: SweepId,
    pub out: PathBuf,
    pub names: Vec<String>,
}

/// The options every job shares (after `--suite S`): the config (absolute when it is a
/// file; a built-in's name works anywhere), scale, seed, the suite's lists, `--hw`.
pub(crate) fn shared_words(
    req: &Request,
    config: &Path,
    lists: &[(&str, String)],
) -> Result<String, StudyError> {
    let config = if config.is_file() {
        absolute(config)?
    } else {
        config.to_path_buf()
    };
    let mut words = vec![
        "--config".to_string(),
        config.display().to_string(),
        "--scale".into(),
        req.scale.to_string(),
        "--seed".into(),
        req.seed.to_string(),
    ];
    for (flag, value) in lists {
        words.extend([flag.to_string(), value.clone()]);
    }
    words.extend(req.hw_words.iter().cloned());
    Ok(words
        .iter()
        .map(|w| sh_word(w))
        .collect::<Vec<_>>()
        .join(" "))
}

pub(crate) fn sweep_id(req: &Request, suite: &str, runs: usize, words: String) -> SweepId {
    SweepId {
        suite: suite.to_string(),
        runs,
        args: words,
        seed: req.seed,
        scale: req.scale,
        oversubs: Vec::new(),
        robustness: None,
    }
}

/// `n`, if the sweep has a job `n`.
pub(crate) fn in_range(split: &Split, n: usize) -> Result<usize, StudyError> {
    if n >= split.id.runs {
        return Err(StudyError::TaskOutOfRange {
            n,
            suite: split.id.suite.clone(),
            runs: split.id.runs,
        });
    }
    Ok(n)
}

/// `--plan FILE`: one command a line (binary and out dir absolute), job N on line N+1.
pub(crate) fn write_plan(
    split: &Split,
    file: &Path,
    exe: &Path,
    console: &dyn Console,
) -> Result<(), StudyError> {
    let exe = sh_word(&exe.display().to_string());
    let (id, out) = (&split.id, sh_word(&split.out.display().to_string()));
    crate::plan::write_plan(file, id.runs, |n| {
        Ok::<_, std::convert::Infallible>(format!(
            "{exe} sweep --suite {} --task-id {n} {} --out {out}",
            id.suite, id.args
        ))
    })?;
    console.line(&format!(
        "plan {}: {} runs of the {} sweep, one command a line (task ids 0..={})",
        file.display(),
        id.runs,
        id.suite,
        id.runs.saturating_sub(1)
    ));
    console.line(&format!(
        "each writes {}/runs/; when all are done: mcmvm sweep merge {}",
        split.out.display(),
        split.out.display()
    ));
    Ok(())
}

/// A job's head fields beside its summary.
pub(crate) struct Head<'a> {
    pub workload: &'a str,
    pub policy: &'a str,
    pub oversubscription: Option<String>,
}

/// Run job `n` unless its file of this sweep is there and whole (a rerun of a cluster
/// shard); write the file atomically. Another sweep's file is an error. Returns 1 if the
/// run failed (said on stderr), else 0.
pub(crate) fn run_task<S: Serialize>(
    split: &Split,
    n: usize,
    head: Head<'_>,
    job: impl FnOnce() -> Outcome<S>,
    console: &dyn Console,
) -> Result<usize, StudyError> {
    let (suite, runs) = (&split.id.suite, split.id.runs);
    let path = resume::run_path(split, n);
    match resume::check(split, n)? {
        Found::Done => {
            console.line(&format!(
                "task {n}/{runs}: {} exists, skipped (delete it to run the job again)",
                path.display()
            ));
            return Ok(0);
        }
        Found::Unreadable => console.line(&format!(
            "note: {} is not a whole run file; it runs again",
            path.display()
        )),
        Found::Missing => {}
    }
    console.line(&format!("task {n}/{runs}: {suite} {}", split.names[n]));
    let t0 = std::time::Instant::now();
    let (summary, report) = match job() {
        Ok(r) => r,
        Err(e) => {
            let name = &split.names[n];
            console.err(&format!(
                "task {n}/{runs} ({name}) failed: {}",
                crate::chain_text(&e)
            ));
            return Ok(1);
        }
    };
    let head = RunHead {
        sweep: split.id.clone(),
        task: n,
        workload: head.workload.to_string(),
        policy: head.policy.to_string(),
        oversubscription: head.oversubscription,
        summary,
    };
    resume::write_run(split, n, &head, &report)?;
    console.line(&format!(
        "task {n}/{runs}: wrote {} ({:.1} s)",
        path.display(),
        t0.elapsed().as_secs_f64()
    ));
    Ok(0)
}
