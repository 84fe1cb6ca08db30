//! The sweep's run files as its checkpoint: every finished run is written into
//! `OUT/runs/` the moment it ends (the layout of `--task-id`, temporary file + rename),
//! so a sweep that dies keeps what it finished.
//!
//! * `--resume` keeps the valid run files of the same sweep and runs only the others; a
//!   file that does not parse (cut short by a full disk, say) is run again, with a note;
//! * without `--resume`, runs of the same sweep already there are all run again (each file
//!   replaced atomically when its run ends), so a rebuilt binary never mixes old results in;
//! * runs of another sweep (other options, seed, scale or suite) are never mixed in: the
//!   sweep stops with an error proposing another `--out` (exit code 2);
//! * Ctrl-C (SIGINT) abandons the runs in flight, keeps the finished ones, and prints the
//!   command that resumes. No half file is left: a file is written under [`WRITING`], which
//!   the interrupt takes before the process exits.

use crate::plan::sh_word;
use crate::runfile::{report_text, run_file_text, RunHead};
use crate::task::{Outcome, Split};
use crate::{Console, StudyError};
use serde::de::IgnoredAny;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

/// Set by the SIGINT handler; read by the watcher of [`run_all`].
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Held while a run file is written and renamed, and by the interrupt until it exits.
static WRITING: Mutex<()> = Mutex::new(());

extern "C" fn on_sigint(_: libc::c_int) {
    // Only an atomic store: nothing else is async-signal-safe here.
    INTERRUPTED.store(true, Ordering::SeqCst);
}

/// The exit code of a sweep stopped by Ctrl-C (128 + SIGINT, as a shell reports it).
const INTERRUPTED_EXIT: i32 = 130;

/// What a run directory holds for a sweep, job by job.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Found {
    Missing,
    /// A valid run file of this sweep.
    Done,
    /// A file that is not a run file (unreadable, cut short): counts as missing.
    Unreadable,
}

/// The run file of job `n`.
pub(crate) fn run_path(split: &Split, n: usize) -> PathBuf {
    split
        .out
        .join("runs")
        .join(format!("{}-{n}-{}.json", split.id.suite, split.names[n]))
}

/// Job `n`'s file: [`Found`], or an error when it belongs to another sweep.
pub(crate) fn check(split: &Split, n: usize) -> Result<Found, StudyError> {
    let path = run_path(split, n);
    let Ok(text) = std::fs::read_to_string(&path) else {
        return Ok(if path.exists() {
            Found::Unreadable
        } else {
            Found::Missing
        });
    };
    let Ok(head) = serde_json::from_str::<RunHead<IgnoredAny>>(&text) else {
        return Ok(Found::Unreadable);
    };
    if report_text(&text).is_none() {
        return Ok(Found::Unreadable);
    }
    if head.sweep != split.id || head.task != n {
        return Err(StudyError::OtherSweep {
            path,
            theirs: head.sweep.args,
            ours: split.id.args.clone(),
        });
    }
    Ok(Found::Done)
}

/// Whether `name` (at `path`) is a run file's name, `<suite>-<n>-...json`, but not one of
/// this sweep's job list.
fn of_another_sweep(split: &Split, path: &Path, name: &str) -> bool {
    let Some(stem) = name.strip_suffix(".json") else {
        return false;
    };
    let mut parts = stem.splitn(3, '-');
    let (Some(suite), Some(n)) = (parts.next(), parts.next().map(str::parse::<usize>)) else {
        return false;
    };
    let mine = suite == split.id.suite
        && n.as_ref()
            .is_ok_and(|&n| n < split.names.len() && path == run_path(split, n));
    !mine
}

/// Every run file in `OUT/runs` of another sweep or suite is an error; leftover temporary
/// files of a killed sweep are removed (no other process writes into an in-process
/// sweep's directory).
fn refuse_others(split: &Split) -> Result<(), StudyError> {
    let dir = split.out.join("runs");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Ok(());
    };
    for e in entries {
        let path = e
            .map_err(|source| StudyError::List {
                path: dir.clone(),
                source,
            })?
            .path();
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        if name.starts_with('.') && name.contains(".tmp-") {
            let _ = std::fs::remove_file(&path);
            continue;
        }
        if of_another_sweep(split, &path, name) {
            return Err(StudyError::OtherJobList { path });
        }
    }
    Ok(())
}

/// Write job `n`'s run file: a temporary file in the same directory, renamed over it.
pub(crate) fn write_run<S: Serialize>(
    split: &Split,
    n: usize,
    head: &RunHead<S>,
    report: &str,
) -> Result<PathBuf, StudyError> {
    let path = run_path(split, n);
    let dir = split.out.join("runs");
    crate::create_dir(&dir)?;
    let text = run_file_text(&serde_json::to_string_pretty(head)?, report);
    let name = path.file_name().and_then(|s| s.to_str()).unwrap_or("run");
    let tmp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
    let _writing = WRITING.lock().unwrap_or_else(|e| e.into_inner());
    let write = || -> std::io::Result<()> {
        use std::io::Write;
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(text.as_bytes())?;
        f.sync_all()?;
        std::fs::rename(&tmp, &path)
    };
    if let Err(source) = write() {
        let _ = std::fs::remove_file(&tmp);
        return Err(StudyError::Write { path, source });
    }
    Ok(path)
}

/// One job of [`run_all`]: its head fields and how to run it.
pub(crate) struct Job<'a, S> {
    pub workload: String,
    pub policy: String,
    pub oversubscription: Option<String>,
    pub run: Box<dyn Fn() -> Outcome<S> + Send + Sync + 'a>,
}

/// What is called per job done: first each resumed one (`None`), then each run with its
/// wall seconds.
pub(crate) type Tick<'a> = &'a (dyn Fn(usize, Option<f64>) + Sync);

/// [`run_all`] under a progress bar that names each run as it finishes.
pub(crate) fn run_all_named<S: Serialize + Send>(
    split: &Split,
    resume: bool,
    jobs: Vec<Job<'_, S>>,
    console: &dyn Console,
) -> Result<usize, StudyError> {
    let bar = console.bar(jobs.len() as u64, "runs");
    let tick = |n: usize, _: Option<f64>| {
        bar.set_message(split.names[n].clone());
        bar.inc();
    };
    let failed = run_all(split, resume, jobs, &tick, console);
    bar.finish();
    failed
}

/// Run every job of `split` that `--resume` does not find done, on rayon's threads, each
/// file written when its run ends; `tick` per job done. Returns how many runs failed (they
/// leave no file).
pub(crate) fn run_all<S: Serialize + Send>(
    split: &Split,
    resume: bool,
    jobs: Vec<Job<'_, S>>,
    tick: Tick<'_>,
    console: &dyn Console,
) -> Result<usize, StudyError> {
    use rayon::prelude::*;
    let todo = to_run(split, resume, jobs.len(), console)?;
    for n in (0..jobs.len()).filter(|n| !todo.contains(n)) {
        tick(n, None);
    }
    INTERRUPTED.store(false, Ordering::SeqCst);
    // SAFETY: installs a handler that only stores to an atomic (async-signal-safe).
    unsafe {
        libc::signal(
            libc::SIGINT,
            on_sigint as extern "C" fn(libc::c_int) as libc::sighandler_t,
        );
    }
    let finished = AtomicBool::new(false);
    let failed = std::thread::scope(|s| {
        s.spawn(|| watch(split, &finished, console));
        let failed = todo
            .par_iter()
            .map(|&n| run_one(split, n, &jobs[n], tick, console))
            .collect::<Result<Vec<usize>, StudyError>>();
        finished.store(true, Ordering::SeqCst);
        failed.map(|f| f.iter().sum())
    });
    // Past the runs (tables, extra runs, the curve), Ctrl-C stops the process at once again.
    // SAFETY: restores the default disposition; no handler runs Rust code afterwards.
    unsafe {
        libc::signal(libc::SIGINT, libc::SIG_DFL);
    }
    if INTERRUPTED.load(Ordering::SeqCst) {
        stop(split, console);
    }
    failed
}

/// The jobs to run of `split`'s `n` (all of them, or with `resume` those without a valid
/// run file), after refusing another sweep's files and saying what was found.
fn to_run(
    split: &Split,
    resume: bool,
    n: usize,
    console: &dyn Console,
) -> Result<Vec<usize>, StudyError> {
    refuse_others(split)?;
    let found = (0..n)
        .map(|k| check(split, k))
        .collect::<Result<Vec<Found>, StudyError>>()?;
    for (k, f) in found.iter().enumerate() {
        if *f == Found::Unreadable {
            console.line(&format!(
                "note: {} is not a whole run file; it runs again",
                run_path(split, k).display()
            ));
        }
    }
    let done = found.iter().filter(|f| **f == Found::Done).count();
    let dir = split.out.join("runs");
    if resume {
        console.line(&format!(
            "resume: {done} of {n} runs already in {}, {} to run",
            dir.display(),
            n - done
        ));
    } else if done > 0 {
        console.line(&format!(
            "note: {} holds {done} runs of this sweep: all run again (--resume keeps them)",
            dir.display()
        ));
    }
    Ok((0..n)
        .filter(|&k| !resume || found[k] != Found::Done)
        .collect())
}

/// Run job `n` and write its file; 1 if the run failed (said on stderr), else 0.
fn run_one<S: Serialize>(
    split: &Split,
    n: usize,
    job: &Job<'_, S>,
    tick: Tick<'_>,
    console: &dyn Console,
) -> Result<usize, StudyError> {
    let t0 = std::time::Instant::now();
    let (summary, report) = match (job.run)() {
        Ok(r) => r,
        Err(e) => {
            let name = &split.names[n];
            console.err(&format!(
                "run {n} ({name}) failed: {}",
                crate::chain_text(&e)
            ));
            return Ok(1);
        }
    };
    let head = RunHead {
        sweep: split.id.clone(),
        task: n,
        workload: job.workload.clone(),
        policy: job.policy.clone(),
        oversubscription: job.oversubscription.clone(),
        summary,
    };
    write_run(split, n, &head, &report)?;
    tick(n, Some(t0.elapsed().as_secs_f64()));
    Ok(0)
}

/// Until `finished`: on Ctrl-C, wait for a file being written, say how to resume, exit.
fn watch(split: &Split, finished: &AtomicBool, console: &dyn Console) {
    while !finished.load(Ordering::SeqCst) {
        if INTERRUPTED.load(Ordering::SeqCst) {
            stop(split, console);
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// Wait for a file being written, say how to resume, and exit: the runs in flight are
/// abandoned (they have written nothing yet).
fn stop(split: &Split, console: &dyn Console) -> ! {
    let _writing = WRITING.lock().unwrap_or_else(|e| e.into_inner());
    let kept = (0..split.names.len())
        .filter(|&n| run_path(split, n).exists())
        .count();
    console.err(&format!(
        "interrupted: {kept} of {} runs kept in {}; resume with: {}",
        split.names.len(),
        split.out.join("runs").display(),
        resume_command()
    ));
    std::process::exit(INTERRUPTED_EXIT);
}

/// This process's command line with `--resume` (once).
fn resume_command() -> String {
    let mut words: Vec<String> = std::env::args().collect();
    if !words.iter().any(|w| w == "--resume") {
        words.push("--resume".into());
    }
    words
        .iter()
        .map(|w| sh_word(w))
        .collect::<Vec<_>>()
        .join(" ")
}
