//! A sweep beyond one machine, on this one: `mcmvm sweep --plan` writes one command per
//! run; the lines, run one by one with `sh -c` from another directory, write their run
//! files; `mcmvm sweep merge` builds the same CSVs, JSON and tables as the in-process
//! sweep (wall-time columns aside). A re-run skips a finished job; a bad task id, a
//! missing run and a malformed run file are one-line errors with exit code 2.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const SWEEP: [&str; 10] = [
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
];

/// Columns and JSON keys that hold wall-clock time, which no two runs share.
const WALL: [&str; 2] = ["sim_seconds", "speed"];

fn mcmvm(args: &[&str], envs: &[(&str, &str)]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_mcmvm"));
    c.args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_remove("SLURM_ARRAY_TASK_ID");
    for (k, v) in envs {
        c.env(k, v);
    }
    c.output().expect("mcmvm runs")
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

/// A failure with exit code 2 and one line on stderr; that line.
fn one_line_error(o: Output) -> String {
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let last = err.lines().last().unwrap_or_default().to_string();
    assert!(last.starts_with("error: "), "{err}");
    last
}

fn with(extra: &[&str]) -> Vec<String> {
    SWEEP.iter().chain(extra).map(|s| s.to_string()).collect()
}

fn run_with(extra: &[&str], envs: &[(&str, &str)]) -> Output {
    let args = with(extra);
    mcmvm(&args.iter().map(String::as_str).collect::<Vec<_>>(), envs)
}

/// A CSV without the wall-time columns.
fn strip_csv(text: &str) -> String {
    let header: Vec<&str> = text.lines().next().unwrap_or_default().split(',').collect();
    let keep: Vec<bool> = header.iter().map(|h| !WALL.contains(h)).collect();
    text.lines()
        .map(|l| {
            let cells: Vec<&str> = l.split(',').collect();
            let kept: Vec<&str> = cells
                .iter()
                .zip(&keep)
                .filter(|(_, k)| **k)
                .map(|(c, _)| *c)
                .collect();
            kept.join(",") + "\n"
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

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Figure 18 and Table 4 as the sweep printed them.
fn tables(stdout: &str) -> String {
    let from = stdout.find("Figure 18").expect("Figure 18 printed");
    let to = stdout.find("mean speed").expect("mean speed printed");
    stdout[from..to].to_string()
}

fn run_files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir.join("runs"))
        .expect("runs dir")
        .map(|e| e.expect("entry").path())
        .collect();
    v.sort();
    v
}

#[test]
fn plan_lines_run_one_by_one_merge_into_the_in_process_sweep() {
    let tmp = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cli_sweep_plan");
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).expect("temp dir");
    let (inproc, split) = (tmp.join("inproc"), tmp.join("split"));
    let (inproc_s, split_s) = (inproc.to_str().unwrap(), split.to_str().unwrap());
    let reference = ok(run_with(&["--out", inproc_s], &[]));

    // The plan: 2 workloads x 2 policies, one self-contained line each (also when
    // written from inside a Slurm array task).
    let plan = tmp.join("plan.txt");
    let out = ok(run_with(
        &["--out", split_s, "--plan", plan.to_str().unwrap()],
        &[("SLURM_ARRAY_TASK_ID", "2")],
    ));
    assert!(out.contains("4 runs"), "{out}");
    let lines: Vec<String> = read(&plan).lines().map(String::from).collect();
    assert_eq!(lines.len(), 4, "{lines:?}");
    for (n, l) in lines.iter().enumerate() {
        assert!(l.starts_with(env!("CARGO_BIN_EXE_mcmvm")), "{l}");
        assert!(l.contains(&format!("--suite clap --task-id {n} ")), "{l}");
        assert!(l.contains("--scale 0.01") && l.contains("--seed 3"), "{l}");
    }
    // A merge before the runs are there: every run missing, listed.
    let early = mcmvm(&["sweep", "merge", split_s], &[]);
    assert_eq!(early.status.code(), Some(2), "{}", text(&early));

    // One by one, from a directory without configs/.
    for l in &lines {
        let o = Command::new("sh")
            .args(["-c", l])
            .current_dir(&tmp)
            .env_remove("SLURM_ARRAY_TASK_ID")
            .output()
            .expect("sh runs");
        assert!(o.status.success(), "{l}\n{}", text(&o));
    }
    let files = run_files(&split);
    let names: Vec<String> = files
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names,
        [
            "clap-0-bfs-s64k.json",
            "clap-1-bfs-clap.json",
            "clap-2-ste-s64k.json",
            "clap-3-ste-clap.json"
        ]
    );

    // Re-runs skip a finished job: by its line, and by $SLURM_ARRAY_TASK_ID.
    let before = read(&files[1]);
    let again = Command::new("sh")
        .args(["-c", &lines[1]])
        .output()
        .expect("sh runs");
    assert!(
        again.status.success() && text(&again).contains("skipped"),
        "{}",
        text(&again)
    );
    let env = ok(run_with(
        &["--out", split_s],
        &[("SLURM_ARRAY_TASK_ID", "1")],
    ));
    assert!(env.contains("task 1/4") && env.contains("skipped"), "{env}");
    assert_eq!(read(&files[1]), before);

    // The merge: the in-process sweep's files and tables.
    let merged = ok(mcmvm(&["sweep", "merge", split_s], &[]));
    assert!(merged.contains("merge clap: 4 runs"), "{merged}");
    assert_eq!(tables(&merged), tables(&reference));
    for (f, strip) in [
        ("clap.csv", strip_csv as fn(&str) -> String),
        ("clap_structures.csv", |s: &str| s.to_string()),
        ("clap.json", strip_json),
    ] {
        let (a, b) = (read(&split.join(f)), read(&inproc.join(f)));
        assert_eq!(strip(&a), strip(&b), "{f} differs");
        assert!(a.len() > 100, "{f}: {a}");
    }

    let json: serde_json::Value =
        serde_json::from_str(&read(&split.join("clap.json"))).expect("clap.json parses");
    assert_eq!(json.as_array().map(Vec::len), Some(4));

    // A missing run: listed, exit 2; a malformed one: its name and the parse error.
    let kept = read(&files[2]);
    std::fs::remove_file(&files[2]).expect("remove");
    let o = mcmvm(&["sweep", "merge", split_s], &[]);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--task-id 2 ") && err.contains("(tasks 2)"),
        "{err}"
    );
    std::fs::write(&files[2], &kept[..kept.len() / 2]).expect("write");
    let line = one_line_error(mcmvm(&["sweep", "merge", split_s], &[]));
    assert!(
        line.contains("clap-2-ste-s64k.json") && line.contains("line"),
        "{line}"
    );
}

#[test]
fn a_bad_task_id_is_one_line_and_exit_2() {
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cli_sweep_plan_bad");
    let out = out.to_str().unwrap();
    let line = one_line_error(run_with(&["--out", out, "--task-id", "4"], &[]));
    assert!(
        line.contains("out of range") && line.contains("4 runs"),
        "{line}"
    );
    let line = one_line_error(run_with(&["--out", out, "--task-id", "x"], &[]));
    assert!(line.contains("not a run number"), "{line}");
    let line = one_line_error(run_with(&["--out", out], &[("SLURM_ARRAY_TASK_ID", "-1")]));
    assert!(line.contains("SLURM_ARRAY_TASK_ID"), "{line}");
    assert!(!Path::new(out).join("runs").exists());
}

/// `clap.json` is composed from each run's pretty JSON (the in-process sweep and the merge
/// alike): byte for byte serde_json's text of the reports themselves, and the tables from
/// summaries are the tables from the reports.
#[test]
fn clap_json_and_tables_from_summaries_are_the_reports_own() {
    use mcmvm_models::gpu::{sweep, GpuConfig};
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let cfg = GpuConfig::load(&root.join("configs/mcm-4chiplet.toml")).expect("config loads");
    let mut jobs = sweep::clap_jobs(&sweep::CLAP_POLICIES);
    jobs.retain(|j| j.workload == "bfs" && j.policy.name() != "ideal");
    let runs: Vec<_> = jobs
        .iter()
        .map(|j| sweep::run_job(&cfg, j, 0.01, 1).expect("tiny CLAP run"))
        .collect();
    let texts: Vec<String> = runs
        .iter()
        .map(|r| serde_json::to_string_pretty(r).expect("json"))
        .collect();
    let whole = serde_json::to_string_pretty(&runs).expect("json");
    assert_eq!(sweep::runs_json(&texts), whole);
    // Through the summaries' JSON and back (what a run file carries).
    let back: Vec<sweep::RunSummary> = sweep::summaries(&runs)
        .iter()
        .map(|s| serde_json::from_str(&serde_json::to_string(s).expect("json")).expect("back"))
        .collect();
    assert_eq!(back, sweep::summaries(&runs));
    assert_eq!(sweep::figure18_of(&back), sweep::figure18(&runs));
    assert_eq!(sweep::table4_of(&back), sweep::table4(&runs));
    assert_eq!(sweep::alloc_csv_of(&back), sweep::alloc_csv(&runs));
}
