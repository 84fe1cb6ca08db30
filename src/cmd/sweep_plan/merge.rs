//! `mcmvm sweep merge DIR`: the tables, CSVs and JSON of the in-process sweep, built from
//! the run files `--task-id` wrote into `DIR/runs` (byte for byte the same files, for the
//! same runs). Every job must be there; a missing one is listed with its command, a file
//! that does not parse is named with the parse error (exit code 2 for both).

use super::{report_text, RunHead, SweepId};
use anyhow::Context;
use mcmvm_models::gpu::sweep::RunSummary;
use mcmvm_models::uvm::sweep::{rows_of, summaries_of, RunPart, SweepTables};
use serde::de::DeserializeOwned;
use std::path::{Path, PathBuf};

#[derive(clap::Args)]
pub struct MergeArgs {
    /// The sweep's output directory (`--out` of its runs); the run files are in DIR/runs.
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
    /// clap or forest (default: the one suite DIR/runs holds).
    #[arg(long)]
    pub suite: Option<String>,
    /// Where the tables go (default: DIR).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

const SUITES: [&str; 2] = ["clap", "forest"];

pub fn merge(m: MergeArgs) -> anyhow::Result<u8> {
    let runs_dir = m.dir.join("runs");
    let mut files = run_files(&runs_dir)?;
    let mut present: Vec<&str> = files.iter().map(|f| f.0.as_str()).collect();
    present.sort_unstable();
    present.dedup();
    let suite = match (&m.suite, present.as_slice()) {
        (Some(s), _) if !SUITES.contains(&s.as_str()) => {
            anyhow::bail!("--suite `{s}`: merge knows clap and forest")
        }
        (Some(s), _) => s.clone(),
        (None, [one]) => one.to_string(),
        (None, []) => anyhow::bail!("{}: no run files (<suite>-<N>-*.json)", runs_dir.display()),
        (None, _) => anyhow::bail!(
            "{} holds runs of {}: choose one with --suite",
            runs_dir.display(),
            present.join(" and ")
        ),
    };
    files.retain(|f| f.0 == suite);
    files.sort_by_key(|f| f.1);
    let out = m.out.clone().unwrap_or_else(|| m.dir.clone());
    if is_robustness(&files)? {
        println!(
            "merge {suite} --robustness: {} run files from {}",
            files.len(),
            runs_dir.display()
        );
        super::robust::outputs(&m.dir, &suite, &files, &out)?;
        return Ok(0);
    }
    if suite == "clap" {
        let (id, summaries, reports) = clap_runs(&m.dir, &files, false)?;
        println!("merge clap: {} runs from {}", id.runs, runs_dir.display());
        super::super::sweep::clap_outputs(&out, &summaries, &reports, id.seed)?;
        // The extra runs are the in-process sweep's; the tables from these runs print.
        super::super::sweep_extras::paper(&out, &summaries, None)?;
    } else {
        forest_outputs(&m.dir, &files, &out, true)?;
    }
    Ok(0)
}

/// The run files of `suite` in `dir/runs`, in task order.
pub(super) fn suite_files(
    dir: &Path,
    suite: &str,
) -> anyhow::Result<Vec<(String, usize, PathBuf)>> {
    let mut files = run_files(&dir.join("runs"))?;
    files.retain(|f| f.0 == suite);
    files.sort_by_key(|f| f.1);
    Ok(files)
}

/// The CLAP runs of `files`: the sweep, each run's summary and report's pretty JSON
/// (`partial`: runs that failed are left out instead of an error).
pub(super) fn clap_runs(
    dir: &Path,
    files: &[(String, usize, PathBuf)],
    partial: bool,
) -> anyhow::Result<(SweepId, Vec<RunSummary>, Vec<String>)> {
    let (id, runs) = load::<RunSummary>(dir, files, partial)?;
    let (summaries, reports) = runs.into_iter().unzip();
    Ok((id, summaries, reports))
}

/// The Forest tables of `files`, printed and written into `out` with the figures.
pub(super) fn forest_outputs(
    dir: &Path,
    files: &[(String, usize, PathBuf)],
    out: &Path,
    merging: bool,
) -> anyhow::Result<()> {
    let runs_dir = dir.join("runs");
    let (id, runs) = load::<RunPart>(dir, files, false)?;
    let oversubs = id
        .oversubs
        .iter()
        .map(|o| o.parse::<f64>())
        .collect::<Result<Vec<_>, _>>()
        .with_context(|| format!("{}: the sweep's oversubs", runs_dir.display()))?;
    let (parts, reports): (Vec<RunPart>, Vec<String>) = runs.into_iter().unzip();
    let rows = rows_of(&parts).with_context(|| format!("{}", runs_dir.display()))?;
    let tables = SweepTables {
        seed: id.seed,
        scale: super::super::sweep::forest_scale(&id.scale)?,
        summaries: summaries_of(&oversubs, &rows),
        rows,
    };
    if merging {
        println!("merge forest: {} runs from {}", id.runs, runs_dir.display());
    }
    print!("{}", tables.table());
    tables.write(out, &reports)?;
    println!("wrote {}", out.display());
    super::super::sweep::sweep_figures(out, "forest")
}

/// (suite, task from the name, path) of every `<suite>-<N>-....json` in `runs_dir`.
fn run_files(runs_dir: &Path) -> anyhow::Result<Vec<(String, usize, PathBuf)>> {
    let entries = std::fs::read_dir(runs_dir)
        .with_context(|| format!("{}: cannot read (no runs here?)", runs_dir.display()))?;
    // (suite, task from the name, path) of every `<suite>-<N>-....json`.
    let mut files: Vec<(String, usize, PathBuf)> = Vec::new();
    for e in entries {
        let path = e
            .with_context(|| format!("{}: cannot list", runs_dir.display()))?
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

/// Whether the first of `files` is a run of a `--robustness` sweep (`load` checks that
/// every other is of the same sweep).
fn is_robustness(files: &[(String, usize, PathBuf)]) -> anyhow::Result<bool> {
    #[derive(serde::Deserialize)]
    struct Sweep {
        sweep: SweepId,
    }
    let Some((_, _, path)) = files.first() else {
        return Ok(false);
    };
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("{}: cannot read", path.display()))?;
    let head: Sweep = serde_json::from_str(&text)
        .with_context(|| format!("{}: not a run file", path.display()))?;
    Ok(head.sweep.robustness.is_some())
}

/// One run file: its head and its report's pretty JSON, checked to hold task `n`.
fn read_run<S: DeserializeOwned>(path: &Path, n: usize) -> anyhow::Result<(RunHead<S>, String)> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("{}: cannot read", path.display()))?;
    let head: RunHead<S> = serde_json::from_str(&text)
        .with_context(|| format!("{}: not a run file", path.display()))?;
    let report = report_text(&text).with_context(|| {
        format!(
            "{}: its `report` is not laid out as --task-id writes it",
            path.display()
        )
    })?;
    if head.task != n {
        anyhow::bail!("{}: holds task {}, not {n}", path.display(), head.task);
    }
    Ok((head, report))
}

/// Every run of one sweep, in job order: (summary, report's pretty JSON).
pub(super) fn load<S: DeserializeOwned>(
    dir: &Path,
    files: &[(String, usize, PathBuf)],
    partial: bool,
) -> anyhow::Result<(SweepId, Vec<(S, String)>)> {
    let mut id: Option<(SweepId, &Path)> = None;
    let mut runs: Vec<Option<(S, String)>> = Vec::new();
    for (_, n, path) in files {
        let (head, report) = read_run::<S>(path, *n)?;
        match &id {
            None => {
                runs.resize_with(head.sweep.runs, || None);
                id = Some((head.sweep.clone(), path));
            }
            Some((first, at)) if *first != head.sweep => anyhow::bail!(
                "{} is a run of another sweep than {} (options `{}` vs `{}`)",
                path.display(),
                at.display(),
                head.sweep.args,
                first.args
            ),
            Some(_) => {}
        }
        let slot = runs
            .get_mut(*n)
            .with_context(|| format!("{}: task {n} is beyond the sweep's runs", path.display()))?;
        if slot.is_some() {
            anyhow::bail!("{}: a second file for task {n}", path.display());
        }
        *slot = Some((head.summary, report));
    }
    let Some((id, _)) = id else {
        anyhow::bail!("{}/runs: no run files", dir.display());
    };
    let missing: Vec<usize> = (0..runs.len()).filter(|&i| runs[i].is_none()).collect();
    if !missing.is_empty() && !partial {
        return Err(missing_runs(dir, &id, &missing));
    }
    Ok((id, runs.into_iter().flatten().collect()))
}

/// The error of a merge with runs missing, each listed on stderr with its command.
fn missing_runs(dir: &Path, id: &SweepId, missing: &[usize]) -> anyhow::Error {
    eprintln!(
        "missing {} of {} runs in {}/runs; run them again:",
        missing.len(),
        id.runs,
        dir.display()
    );
    for &n in missing {
        eprintln!(
            "  mcmvm sweep --suite {} --task-id {n} {} --out {}",
            id.suite,
            id.args,
            dir.display()
        );
    }
    let list: Vec<String> = missing.iter().map(|n| n.to_string()).collect();
    anyhow::anyhow!(
        "{}/runs: {} of {} runs missing (tasks {}), nothing merged",
        dir.display(),
        missing.len(),
        id.runs,
        list.join(", ")
    )
}
