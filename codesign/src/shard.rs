//! A study in separate processes, as `mcmvm sweep` runs one (docs/cluster.md): a study is
//! a fixed list of points, numbered from 0 in grid order, and each can run alone.
//!
//! * `--plan FILE` writes one self-contained shell command per point ([`task_line`],
//!   through the studies' one plan writer, `mcmvm_study::plan::write_plan`);
//! * `--task-id N` runs point N and writes `<out>/codesign/runs/<block>-<name>.json`,
//!   named by the point's parameters ([`crate::grid::point_name`], [`write_point`]): the
//!   study's identity, the task number and the point's result, written whole and renamed.
//!   A rerun of task N overwrites only its own file (the cache makes it quick);
//! * `mcmvm codesign merge DIR` ([`load`]) reads every point file of a block and builds
//!   the one-process run's table, CSV, JSON and SVG from them. Studies of other grids
//!   with the same options (workloads, scale, seed, base parameters, directory) share
//!   one table, so two one-point grids run into one `<out>` both stay listed;
//! * the one-process run writes the same files as it goes and builds its outputs by the
//!   same [`load`], so both paths give the same bytes. The files keep every float as its
//!   shortest round-trip text, read back exactly (see [`floats_as_text`]).

use crate::study::{write_json, PointResult};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// What identifies a study: every point file of one study carries the same.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StudyId {
    /// `rt`, `coalescer` or `att`.
    pub block: String,
    /// How many points the grid has.
    pub points: usize,
    /// The options every point shares, as shell words after `--block B` (without
    /// `--task-id` and `--out`).
    pub args: String,
    /// The directory the commands run in (the system configurations are read from its
    /// `configs/`).
    pub dir: PathBuf,
    /// Each task's [`crate::grid::point_name`], in task order (absent in files written
    /// before points were named: their tasks are found by number).
    #[serde(default)]
    pub point_names: Vec<String>,
}

impl StudyId {
    /// Whether `other`'s points can share a table with this study's: the same block,
    /// directory and options, whatever the grid.
    pub fn comparable(&self, other: &StudyId) -> bool {
        self.block == other.block
            && self.dir == other.dir
            && options_without_grid(&self.args) == options_without_grid(&other.args)
    }
}

/// The shell words of `args` without `--grid FILE`.
fn options_without_grid(args: &str) -> Option<Vec<String>> {
    let mut words = shlex::split(args)?;
    if let Some(i) = words.iter().position(|w| w == "--grid") {
        words.drain(i..(i + 2).min(words.len()));
    }
    Some(words)
}

/// One point's result file.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PointFile {
    pub study: StudyId,
    pub task: usize,
    pub result: PointResult,
}

/// Why the point files could not be written or merged.
#[derive(Debug, thiserror::Error)]
pub enum ShardError {
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}: not a point file ({source}); delete it and run its task again", path.display())]
    Parse {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    #[error("{}: no point files (<block>-<point>.json)", dir.display())]
    NoFiles { dir: PathBuf },
    #[error("{} holds points of {}: choose one with --block", dir.display(), blocks.join(" and "))]
    Blocks { dir: PathBuf, blocks: Vec<String> },
    #[error(
        "{} is a point of another {block} study than {} (other options or directory); \
         delete the stale files or run the study with another --out",
        path.display(), first.display()
    )]
    Mixed {
        block: String,
        path: PathBuf,
        first: PathBuf,
    },
    #[error("{}: {} of {points} points missing (tasks {}), nothing merged", dir.display(),
        missing.len(), list(missing))]
    Missing {
        dir: PathBuf,
        points: usize,
        missing: Vec<usize>,
        /// The study the present files belong to (to print the missing tasks' commands).
        study: Box<StudyId>,
    },
    #[error("a word of the plan cannot be quoted for sh: {0}")]
    Quote(#[from] shlex::QuoteError),
}

fn list(tasks: &[usize]) -> String {
    tasks
        .iter()
        .map(usize::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// `<out>/codesign/runs`.
pub fn runs_dir(out: &Path) -> PathBuf {
    out.join("codesign").join("runs")
}

/// `<out>/codesign/runs/<block>-<point name>.json`.
pub fn point_path(out: &Path, block: &str, name: &str) -> PathBuf {
    runs_dir(out).join(format!("{block}-{name}.json"))
}

/// Write task `n`'s file, named by its point (whole, then renamed over any earlier one of
/// the same point, whichever grid wrote it: the same options give the same figures).
pub fn write_point(
    out: &Path,
    study: &StudyId,
    n: usize,
    result: &PointResult,
) -> Result<PathBuf, crate::CodesignError> {
    let path = point_path(out, &study.block, &result.name());
    let file = PointFile {
        study: study.clone(),
        task: n,
        result: result.clone(),
    };
    let value = serde_json::to_value(&file).map_err(|e| crate::CodesignError::Json {
        path: path.clone(),
        detail: e.to_string(),
    })?;
    write_json(&path, &floats_as_text(value))?;
    Ok(path)
}

/// The key of a float kept as text in a point file: `{"f64": "0.22483775621666774"}`.
const FLOAT: &str = "f64";

/// Every float of `v` as Rust's shortest round-trip text. serde_json reads some 17-digit
/// floats one unit in the last place off (its exact reader is the `float_roundtrip`
/// feature, which would change every crate's parsing); a point file's figures must come
/// back bit for bit, so the merge writes what the one-process run writes.
fn floats_as_text(v: Value) -> Value {
    match v {
        Value::Number(n) if n.is_f64() => match n.as_f64() {
            Some(f) => serde_json::json!({ FLOAT: format!("{f:?}") }),
            None => Value::Number(n),
        },
        Value::Array(a) => Value::Array(a.into_iter().map(floats_as_text).collect()),
        Value::Object(o) => {
            Value::Object(o.into_iter().map(|(k, v)| (k, floats_as_text(v))).collect())
        }
        v => v,
    }
}

/// [`floats_as_text`] undone: each `{"f64": text}` back to its exact float.
fn floats_from_text(v: Value) -> Value {
    match v {
        Value::Object(o) if o.len() == 1 && o.get(FLOAT).is_some_and(Value::is_string) => {
            let text = o[FLOAT].as_str().unwrap_or_default();
            text.parse::<f64>()
                .ok()
                .and_then(serde_json::Number::from_f64)
                .map_or(Value::Object(o.clone()), Value::Number)
        }
        Value::Array(a) => Value::Array(a.into_iter().map(floats_from_text).collect()),
        Value::Object(o) => Value::Object(
            o.into_iter()
                .map(|(k, v)| (k, floats_from_text(v)))
                .collect(),
        ),
        v => v,
    }
}

/// The point files in `runs_dir(out)`: (block, path), in block then name order.
fn point_files(out: &Path) -> Result<Vec<(String, PathBuf)>, ShardError> {
    let dir = runs_dir(out);
    let entries = match std::fs::read_dir(&dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => return Err(ShardError::Io { path: dir, source }),
    };
    let mut files = Vec::new();
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        // `<block>-<point>.json`; a temporary file (`….tmp<pid>`) is not one.
        if let Some((block, _)) = name
            .strip_suffix(".json")
            .and_then(|stem| stem.split_once('-'))
        {
            files.push((block.to_string(), e.path()));
        }
    }
    files.sort();
    Ok(files)
}

/// Before a one-process run of `study`: remove its block's point files but those of
/// comparable studies of other grids, which stay in its table (every result is also in
/// the cache, so nothing measured is lost).
pub fn clear(out: &Path, study: &StudyId) -> Result<(), ShardError> {
    for (b, path) in point_files(out)? {
        let other_grid = || {
            read_point(&path).is_ok_and(|f| f.study.comparable(study) && f.study.args != study.args)
        };
        if b == study.block && !other_grid() {
            std::fs::remove_file(&path).map_err(|source| ShardError::Io { path, source })?;
        }
    }
    Ok(())
}

/// Every point of a block's studies in `runs_dir(out)` (`block`: which, when several are
/// there): each study's points in task order, studies in the order of their options, a
/// point two grids share once. Every study must be comparable with the first and have all
/// its points; returns the first study's identity.
pub fn load(out: &Path, block: Option<&str>) -> Result<(StudyId, Vec<PointResult>), ShardError> {
    let dir = runs_dir(out);
    let mut files = point_files(out)?;
    let mut blocks: Vec<String> = files.iter().map(|f| f.0.clone()).collect();
    blocks.dedup();
    let block = match (block, blocks.as_slice()) {
        (Some(b), _) => b.to_string(),
        (None, [one]) => one.clone(),
        (None, []) => return Err(ShardError::NoFiles { dir }),
        (None, _) => return Err(ShardError::Blocks { dir, blocks }),
    };
    files.retain(|f| f.0 == block);
    let read = read_comparable(&block, files)?;
    let mut studies: Vec<&StudyId> = read.iter().map(|f| &f.study).collect();
    studies.sort_by(|a, b| {
        (&a.args, a.points, &a.point_names).cmp(&(&b.args, b.points, &b.point_names))
    });
    studies.dedup();
    let Some(&first) = studies.first() else {
        return Err(ShardError::NoFiles { dir });
    };
    let mut taken = vec![false; read.len()];
    let mut results = Vec::new();
    for study in &studies {
        let mut missing = Vec::new();
        for n in 0..study.points {
            match find_task(&read, study, n) {
                None => missing.push(n),
                Some(i) if !taken[i] => {
                    taken[i] = true;
                    results.push(read[i].result.clone());
                }
                Some(_) => {}
            }
        }
        if !missing.is_empty() {
            return Err(ShardError::Missing {
                dir,
                points: study.points,
                missing,
                study: Box::new((*study).clone()),
            });
        }
    }
    Ok((first.clone(), results))
}

/// The point files of `block`, each checked to be of a study comparable with the first.
fn read_comparable(
    block: &str,
    files: Vec<(String, PathBuf)>,
) -> Result<Vec<PointFile>, ShardError> {
    let mut read: Vec<PointFile> = Vec::new();
    let mut first_path: Option<PathBuf> = None;
    for (_, path) in files {
        let f = read_point(&path)?;
        let first = first_path.get_or_insert_with(|| path.clone());
        let fits = read.first().is_none_or(|r| r.study.comparable(&f.study));
        if !fits || f.task >= f.study.points {
            return Err(ShardError::Mixed {
                block: block.to_string(),
                path,
                first: first.clone(),
            });
        }
        read.push(f);
    }
    Ok(read)
}

/// Which file holds task `n` of `study`: the file of its point, by name (whichever
/// comparable study wrote it); for a study written before points were named, its file of
/// task `n`.
fn find_task(read: &[PointFile], study: &StudyId, n: usize) -> Option<usize> {
    match study.point_names.get(n) {
        Some(name) => read.iter().position(|f| f.result.name() == *name),
        None => read.iter().position(|f| f.study == *study && f.task == n),
    }
}

fn read_point(path: &Path) -> Result<PointFile, ShardError> {
    let text = std::fs::read_to_string(path).map_err(|source| ShardError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let parse = |source| ShardError::Parse {
        path: path.to_path_buf(),
        source,
    };
    let value: Value = serde_json::from_str(&text).map_err(parse)?;
    serde_json::from_value(floats_from_text(value)).map_err(parse)
}

/// The command of task `n` (`exe` and `out` absolute), run from the study's directory.
pub fn task_line(exe: &Path, study: &StudyId, n: usize, out: &Path) -> Result<String, ShardError> {
    let word = |p: &Path| -> Result<String, ShardError> {
        Ok(shlex::try_quote(&p.to_string_lossy())?.into_owned())
    };
    Ok(format!(
        "cd {} && {} codesign --block {} --task-id {n} {} --out {}",
        word(&study.dir)?,
        word(exe)?,
        study.block,
        study.args,
        word(out)?,
    ))
}

/// Shell words for `sh`, each quoted when it needs to be.
pub fn shell_words(words: &[String]) -> Result<String, ShardError> {
    Ok(shlex::try_join(words.iter().map(String::as_str))?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_come_back_bit_for_bit_through_the_file_text() {
        // 0.22483775621666774: an RT estimate error serde_json alone read one ulp off.
        let v = serde_json::json!({
            "a": [0.22483775621666774, 1, "x", 1e-300],
            "b": {"f": 0.1 + 0.2, "n": null, "u": 18446744073709551615u64},
        });
        let text = serde_json::to_string_pretty(&floats_as_text(v.clone())).unwrap();
        assert!(text.contains(r#""f64": "0.22483775621666774""#), "{text}");
        let back = floats_from_text(serde_json::from_str(&text).unwrap());
        assert_eq!(back, v);
        let a = back["a"][0].as_f64().unwrap();
        assert_eq!(a.to_bits(), 0.22483775621666774f64.to_bits());
    }

    #[test]
    fn studies_of_other_grids_with_the_same_options_share_a_table() {
        let study = |args: &[&str]| StudyId {
            block: "rt".into(),
            points: 1,
            args: shell_words(&args.iter().map(|w| w.to_string()).collect::<Vec<_>>()).unwrap(),
            dir: PathBuf::from("/w"),
            point_names: vec![],
        };
        let a = study(&[
            "--grid",
            "/w/a.toml",
            "--workloads",
            "bfs",
            "--scale",
            "0.1",
        ]);
        let b = study(&[
            "--grid",
            "/w/b.toml",
            "--workloads",
            "bfs",
            "--scale",
            "0.1",
        ]);
        let default_grid = study(&["--workloads", "bfs", "--scale", "0.1"]);
        let other_scale = study(&["--grid", "/w/b.toml", "--workloads", "bfs", "--scale", "1"]);
        assert!(a.comparable(&b) && b.comparable(&default_grid));
        assert!(!a.comparable(&other_scale));
        let elsewhere = StudyId {
            dir: PathBuf::from("/v"),
            ..b.clone()
        };
        assert!(!a.comparable(&elsewhere));
    }

    #[test]
    fn a_plan_line_runs_from_the_study_directory_with_its_task() {
        let id = StudyId {
            block: "rt".into(),
            points: 2,
            args: shell_words(&["--workloads".into(), "bfs,sssp".into()]).unwrap(),
            dir: PathBuf::from("/w/my dir"),
            point_names: vec!["1_4_8_nru".into(), "2_4_8_nru".into()],
        };
        let line = |n| task_line(Path::new("/b/mcmvm"), &id, n, Path::new("/o")).unwrap() + "\n";
        assert_eq!(
            line(0) + &line(1),
            "cd '/w/my dir' && /b/mcmvm codesign --block rt --task-id 0 --workloads 'bfs,sssp' --out /o\n\
             cd '/w/my dir' && /b/mcmvm codesign --block rt --task-id 1 --workloads 'bfs,sssp' --out /o\n"
        );
    }
}
