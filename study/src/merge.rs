//! `mcmvm sweep merge DIR`: the tables, CSVs and JSON of the in-process sweep, built from
//! the run files `--task-id` wrote into `DIR/runs` (byte for byte the same files, for the
//! same runs). Every job must be there; a missing one is listed with its command, a file
//! that does not parse is named with the parse error.

use crate::runfile::{report_text, RunHead, SweepId};
use crate::{Console, StudyError};
use mcmvm_models::gpu::sweep::RunSummary;
use mcmvm_models::uvm::sweep::{rows_of, summaries_of, RunPart, SweepTables};
use serde::de::DeserializeOwned;
use std::path::{Path, PathBuf};

const SUITES: [&str; 2] = ["clap", "forest"];

/// A run file: (suite, task from the name, path).
pub(crate) type RunFile = (String, usize, PathBuf);

/// Merge the runs in `dir/runs` of `suite` (None: the one suite there) into `out` (None:
/// `dir`).
pub fn merge(
    dir: &Path,
    suite: Option<&str>,
    out: Option<&Path>,
    console: &dyn Console,
) -> Result<(), StudyError> {
    let runs_dir = dir.join("runs");
    let mut files = run_files(&runs_dir)?;
    let mut present: Vec<&str> = files.iter().map(|f| f.0.as_str()).collect();
    present.sort_unstable();
    present.dedup();
    let suite = match (suite, present.as_slice()) {
        (Some(s), _) if !SUITES.contains(&s) => return Err(StudyError::MergeSuite(s.into())),
        (Some(s), _) => s.to_string(),
        (None, [one]) => one.to_string(),
        (None, []) => return Err(StudyError::NoRunFiles { runs: runs_dir }),
        (None, _) => {
            return Err(StudyError::Suites {
                runs: runs_dir,
                suites: present.iter().map(|s| s.to_string()).collect(),
            })
        }
    };
    files.retain(|f| f.0 == suite);
    files.sort_by_key(|f| f.1);
    let out = out.unwrap_or(dir);
    if is_robustness(&files)? {
        console.line(&format!(
            "merge {suite} --robustness: {} run files from {}",
            files.len(),
            runs_dir.display()
        ));
        return crate::robust::outputs(dir, &suite, &files, out, console);
    }
    if suite == "clap" {
        let (id, summaries, reports) = clap_runs(dir, &files, false, console)?;
        console.line(&format!(
            "merge clap: {} runs from {}",
            id.runs,
            runs_dir.display()
        ));
        crate::clap::outputs(out, &summaries, &reports, id.seed, console)?;
        // The extra runs are the in-process sweep's; the tables from these runs print.
        crate::extras::paper(out, &summaries, None, console)
    } else {
        forest_outputs(dir, &files, out, true, console)
    }
}

/// The run files of `suite` in `dir/runs`, in task order.
pub(crate) fn suite_files(dir: &Path, suite: &str) -> Result<Vec<RunFile>, StudyError> {
    let mut files = run_files(&dir.join("runs"))?;
    files.retain(|f| f.0 == suite);
    files.sort_by_key(|f| f.1);
    Ok(files)
}

/// The CLAP runs of `files`: the sweep, each run's summary and report's pretty JSON
/// (`partial`: runs that failed are left out instead of an error).
pub(crate) fn clap_runs(
    dir: &Path,
    files: &[RunFile],
    partial: bool,
    console: &dyn Console,
) -> Result<(SweepId, Vec<RunSummary>, Vec<String>), StudyError> {
    let (id, runs) = load::<RunSummary>(dir, files, partial, console)?;
    let (summaries, reports) = runs.into_iter().unzip();
    Ok((id, summaries, reports))
}

/// The Forest tables of `files`, printed and written into `out` with the figures.
pub(crate) fn forest_outputs(
    dir: &Path,
    files: &[RunFile],
    out: &Path,
    merging: bool,
    console: &dyn Console,
) -> Result<(), StudyError> {
    let runs_dir = dir.join("runs");
    let (id, runs) = load::<RunPart>(dir, files, false, console)?;
    let oversubs = id
        .oversubs
        .iter()
        .map(|o| o.parse::<f64>())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|source| StudyError::SweepOversubs {
            runs: runs_dir.clone(),
            source,
        })?;
    let (parts, reports): (Vec<RunPart>, Vec<String>) = runs.into_iter().unzip();
    let rows = rows_of(&parts).map_err(|source| StudyError::Parts {
        runs: runs_dir.clone(),
        source,
    })?;
    let tables = SweepTables {
        seed: id.seed,
        scale: crate::sweep::forest_scale(&id.scale)?,
        summaries: summaries_of(&oversubs, &rows),
        rows,
    };
    if merging {
        console.line(&format!(
            "merge forest: {} runs from {}",
            id.runs,
            runs_dir.display()
        ));
    }
    console.out(&tables.table());
    tables.write(out, &reports)?;
    console.line(&format!("wrote {}", out.display()));
    crate::sweep::figures(out, "forest", console)
}

/// (suite, task from the name, path) of every `<suite>-<N>-....json` in `runs_dir`.
fn run_files(runs_dir: &Path) -> Result<Vec<RunFile>, StudyError> {
    let entries = std::fs::read_dir(runs_dir).map_err(|source| StudyError::ReadRuns {
        path: runs_dir.to_path_buf(),
        source,
    })?;
    let mut files: Vec<RunFile> = Vec::new();
    for e in entries {
        let path = e
            .map_err(|source| StudyError::List {
                path: runs_dir.to_path_buf(),
                source,
            })?
            .path();
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        let Some(stem) = name.strip_suffix(".json") else {
            continue;
        };
        let mut parts = stem.splitn(3, '-');
        let (Some(suite), Some(n)) = (parts.next(), parts.next()) else {
            continue;
        };
        if let (true, Ok(n)) = (SUITES.contains(&suite), n.parse::<usize>()) {
            files.push((suite.to_string(), n, path));
        }
    }
    Ok(files)
}

fn read(path: &Path) -> Result<String, StudyError> {
    std::fs::read_to_string(path).map_err(|source| StudyError::Read {
        path: path.to_path_buf(),
        source,
    })
}

fn not_run_file(path: &Path) -> impl FnOnce(serde_json::Error) -> StudyError + '_ {
    move |source| StudyError::NotRunFile {
        path: path.to_path_buf(),
        source,
    }
}

/// Whether the first of `files` is a run of a `--robustness` sweep (`load` checks that
/// every other is of the same sweep).
fn is_robustness(files: &[RunFile]) -> Result<bool, StudyError> {
    #[derive(serde::Deserialize)]
    struct Sweep {
        sweep: SweepId,
    }
    let Some((_, _, path)) = files.first() else {
        return Ok(false);
    };
    let head: Sweep = serde_json::from_str(&read(path)?).map_err(not_run_file(path))?;
    Ok(head.sweep.robustness.is_some())
}

/// One run file: its head and its report's pretty JSON, checked to hold task `n`.
fn read_run<S: DeserializeOwned>(
    path: &Path,
    n: usize,
) -> Result<(RunHead<S>, String), StudyError> {
    let text = read(path)?;
    let head: RunHead<S> = serde_json::from_str(&text).map_err(not_run_file(path))?;
    let report = report_text(&text).ok_or_else(|| StudyError::ReportLayout {
        path: path.to_path_buf(),
    })?;
    if head.task != n {
        return Err(StudyError::WrongTask {
            path: path.to_path_buf(),
            holds: head.task,
            n,
        });
    }
    Ok((head, report))
}

/// Every run of one sweep, in job order: (summary, report's pretty JSON).
pub(crate) fn load<S: DeserializeOwned>(
    dir: &Path,
    files: &[RunFile],
    partial: bool,
    console: &dyn Console,
) -> Result<(SweepId, Vec<(S, String)>), StudyError> {
    let mut id: Option<(SweepId, &Path)> = None;
    let mut runs: Vec<Option<(S, String)>> = Vec::new();
    for (_, n, path) in files {
        let (head, report) = read_run::<S>(path, *n)?;
        match &id {
            None => {
                runs.resize_with(head.sweep.runs, || None);
                id = Some((head.sweep.clone(), path));
            }
            Some((first, at)) if *first != head.sweep => {
                return Err(StudyError::MixedSweeps {
                    path: path.clone(),
                    first: at.to_path_buf(),
                    theirs: head.sweep.args,
                    ours: first.args.clone(),
                })
            }
            Some(_) => {}
        }
        let Some(slot) = runs.get_mut(*n) else {
            return Err(StudyError::BeyondRuns {
                path: path.clone(),
                n: *n,
            });
        };
        if slot.is_some() {
            return Err(StudyError::SecondFile {
                path: path.clone(),
                n: *n,
            });
        }
        *slot = Some((head.summary, report));
    }
    let Some((id, _)) = id else {
        return Err(StudyError::NoRuns {
            dir: dir.to_path_buf(),
        });
    };
    let missing: Vec<usize> = (0..runs.len()).filter(|&i| runs[i].is_none()).collect();
    if !missing.is_empty() && !partial {
        return Err(missing_runs(dir, &id, missing, console));
    }
    Ok((id, runs.into_iter().flatten().collect()))
}

/// The error of a merge with runs missing, each listed on stderr with its command.
fn missing_runs(
    dir: &Path,
    id: &SweepId,
    missing: Vec<usize>,
    console: &dyn Console,
) -> StudyError {
    console.err(&format!(
        "missing {} of {} runs in {}/runs; run them again:",
        missing.len(),
        id.runs,
        dir.display()
    ));
    for &n in &missing {
        console.err(&format!(
            "  mcmvm sweep --suite {} --task-id {n} {} --out {}",
            id.suite,
            id.args,
            dir.display()
        ));
    }
    StudyError::Missing {
        dir: dir.to_path_buf(),
        runs: id.runs,
        missing,
    }
}
