//! Sweeps that survive: the in-process sweep writes each run file as its run ends, so a
//! sweep killed (SIGKILL) or interrupted (Ctrl-C) and rerun with `--resume` runs only the
//! missing runs and writes the same tables as an uninterrupted sweep (byte for byte, but
//! for the wall-time columns and keys, which no two runs share). A cut-short run file is
//! run again; another sweep's runs are never mixed in (exit code 2).

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::SystemTime;

/// A small Forest sweep on the Forest study's GPU: 3 workloads x 5 policies, seconds in
/// all.
const FOREST: [&str; 10] = [
    "sweep",
    "--suite",
    "forest",
    "--scale",
    "0.02",
    "--workloads",
    "ls,hcli,spmv",
    "--no-curve",
    "--seed",
    "2",
];

/// A small CLAP sweep: 2 workloads x 2 policies, without the extra runs.
const CLAP: [&str; 11] = [
    "sweep",
    "--suite",
    "clap",
    "--scale",
    "0.01",
    "--workloads",
    "bfs,ste",
    "--policies",
    "s64k,clap",
    "--seed=3",
    "--no-extras",
];

/// Columns and JSON keys that hold wall-clock time (CLAP's, then Forest's).
const WALL: [&str; 5] = [
    "sim_seconds",
    "speed",
    "wall_s",
    "service_wall_s",
    "instr_per_s",
];

fn command(base: &[&str], out: &Path, extra: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_mcmvm"));
    c.args(base)
        .arg("--out")
        .arg(out)
        .args(extra)
        .arg("--quiet")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_remove("SLURM_ARRAY_TASK_ID");
    c
}

fn run(base: &[&str], out: &Path, extra: &[&str]) -> Output {
    command(base, out, extra).output().expect("mcmvm runs")
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn ok(o: Output) -> String {
    assert!(o.status.success(), "{}", text(&o));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn fresh(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Every entry of `out/runs` (temporary files included), sorted.
fn entries(out: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = match std::fs::read_dir(out.join("runs")) {
        Ok(d) => d.map(|e| e.expect("entry").path()).collect(),
        Err(_) => Vec::new(),
    };
    v.sort();
    v
}

fn mtime(p: &Path) -> SystemTime {
    std::fs::metadata(p)
        .and_then(|m| m.modified())
        .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// A CSV without the wall-time columns.
fn strip_csv(text: &str) -> String {
    let header: Vec<&str> = text.lines().next().unwrap_or_default().split(',').collect();
    let keep: Vec<bool> = header.iter().map(|h| !WALL.contains(h)).collect();
    text.lines()
        .map(|l| {
            let cells = l.split(',').zip(&keep).filter(|(_, k)| **k);
            cells.map(|(c, _)| c).collect::<Vec<_>>().join(",") + "\n"
        })
        .collect()
}

/// Pretty JSON without the lines of the wall-time keys.
fn strip_json(text: &str) -> String {
    text.lines()
        .filter(|l| {
            !WALL
                .iter()
                .any(|k| l.trim_start().starts_with(&format!("\"{k}\":")))
        })
        .map(|l| l.to_string() + "\n")
        .collect()
}

/// Start `base` into `out`, and once at least one run file is there, stop it with
/// `signal`; its output. `None` when the sweep finished before the signal landed.
fn stop_after_first_run(base: &[&str], out: &Path, signal: &str) -> Option<Output> {
    let mut child = command(base, out, &[])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("mcmvm starts");
    while !entries(out)
        .iter()
        .any(|p| p.extension().is_some_and(|e| e == "json"))
    {
        if child.try_wait().expect("child status").is_some() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let pid = child.id().to_string();
    let sent = Command::new("kill")
        .args([signal, &pid])
        .status()
        .expect("kill runs");
    let o = child.wait_with_output().expect("mcmvm ends");
    (sent.success() && !o.status.success()).then_some(o)
}

#[test]
fn sweep_resume_after_sigkill_redoes_only_missing_runs() {
    let tmp = fresh("cli_sweep_resume_kill");
    let (a, b) = (tmp.join("a"), tmp.join("b"));
    ok(run(&FOREST, &a, &[]));
    assert_eq!(entries(&a).len(), 15);

    let killed = stop_after_first_run(&FOREST, &b, "-KILL").is_some();
    if !killed {
        // It finished first: simulate the kill by dropping the last runs.
        for p in entries(&b).iter().skip(5) {
            std::fs::remove_file(p).expect("remove");
        }
    }
    // A killed sweep leaves whole run files (and perhaps a temporary one) only.
    let kept: Vec<PathBuf> = entries(&b)
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    assert!(!kept.is_empty() && kept.len() < 15, "{kept:?}");
    for p in &kept {
        serde_json::from_str::<serde_json::Value>(&read(p)).expect("a whole run file");
    }
    eprintln!(
        "{} with {} of 15 run files",
        if killed { "killed" } else { "finished; cut" },
        kept.len()
    );
    let before: Vec<SystemTime> = kept.iter().map(|p| mtime(p)).collect();

    let resumed = ok(run(&FOREST, &b, &["--resume"]));
    let line = format!("resume: {} of 15 runs already in", kept.len());
    assert!(resumed.contains(&line), "{line}\n{resumed}");
    let after: Vec<SystemTime> = kept.iter().map(|p| mtime(p)).collect();
    assert_eq!(before, after, "a finished run was run again");
    assert_eq!(entries(&b).len(), 15, "{:?}", entries(&b));
    // forest.csv holds no wall time: byte for byte.
    assert!(
        read(&b.join("forest.csv")) == read(&a.join("forest.csv")),
        "forest.csv differs"
    );
    assert!(
        strip_json(&read(&b.join("forest.json"))) == strip_json(&read(&a.join("forest.json"))),
        "forest.json differs beyond wall time"
    );
}

#[test]
fn sweep_resume_after_ctrl_c_keeps_whole_files_and_says_how() {
    let tmp = fresh("cli_sweep_resume_int");
    let b = tmp.join("b");
    let Some(o) = stop_after_first_run(&FOREST, &b, "-INT") else {
        // Finished before Ctrl-C: nothing was interrupted, nothing to check.
        return;
    };
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(130), "{}", text(&o));
    let line = err
        .lines()
        .find(|l| l.starts_with("interrupted: "))
        .unwrap_or_else(|| panic!("no resume line: {err}"));
    assert!(
        line.contains("resume with: ") && line.ends_with(" --resume"),
        "{line}"
    );
    for p in entries(&b) {
        assert!(
            p.extension().is_some_and(|e| e == "json"),
            "left behind: {}",
            p.display()
        );
        serde_json::from_str::<serde_json::Value>(&read(&p)).expect("a whole run file");
    }
    let kept = entries(&b).len();
    let resumed = ok(run(&FOREST, &b, &["--resume"]));
    assert!(
        resumed.contains(&format!("resume: {kept} of 15 runs")),
        "{resumed}"
    );
}

#[test]
fn sweep_resume_reruns_a_cut_short_file_and_refuses_another_sweep() {
    let tmp = fresh("cli_sweep_resume_clap");
    let (a, b) = (tmp.join("a"), tmp.join("b"));
    ok(run(&CLAP, &a, &[]));
    ok(run(&CLAP, &b, &[]));
    let files = entries(&b);
    assert_eq!(files.len(), 4);
    let whole = read(&files[2]);
    std::fs::write(&files[2], &whole[..whole.len() / 2]).expect("cut short");
    let others: Vec<SystemTime> = [0, 1, 3].iter().map(|&i| mtime(&files[i])).collect();

    let resumed = ok(run(&CLAP, &b, &["--resume"]));
    assert!(
        resumed.contains("resume: 3 of 4 runs already in")
            && resumed.contains("clap-2-ste-s64k.json is not a whole run file"),
        "{resumed}"
    );
    assert_eq!(
        others,
        [0, 1, 3]
            .iter()
            .map(|&i| mtime(&files[i]))
            .collect::<Vec<_>>()
    );
    serde_json::from_str::<serde_json::Value>(&read(&files[2])).expect("run again, whole");
    assert_eq!(
        read(&b.join("clap_structures.csv")),
        read(&a.join("clap_structures.csv"))
    );
    assert_eq!(
        strip_csv(&read(&b.join("clap.csv"))),
        strip_csv(&read(&a.join("clap.csv")))
    );

    // Another seed is another sweep: refused, with or without --resume.
    for extra in [&["--seed", "4"][..], &["--seed", "4", "--resume"]] {
        let mut args: Vec<&str> = CLAP.iter().copied().filter(|a| *a != "--seed=3").collect();
        args.extend(extra);
        let o = run(&args, &b, &[]);
        let err = String::from_utf8_lossy(&o.stderr).into_owned();
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        let last = err.lines().last().unwrap_or_default();
        assert!(
            last.starts_with("error: ")
                && last.contains("another sweep")
                && last.contains("--out")
                && last.contains("--resume"),
            "{last}"
        );
    }
    assert_eq!(entries(&b).len(), 4);
}
