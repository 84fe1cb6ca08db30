//! `mcmvm sweep --suite clap --robustness` planned and sharded: the plan's lines, run as
//! two shards (two shell processes, each a half of the lines) from another directory, then
//! `mcmvm sweep merge`, give byte for byte the `robustness.txt`, `.csv` and `.json` of a
//! one-process run; a rerun of a shard skips its finished runs, and a deleted run file
//! comes back alone, the other shard's untouched.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// 2 points (the config and one Latin-hypercube point) x 2 workloads x 4 policies.
const SWEEP: [&str; 13] = [
    "sweep",
    "--suite",
    "clap",
    "--robustness",
    "--points",
    "1",
    "--scale",
    "0.01",
    "--workloads",
    "bfs,ste",
    "--seed=3",
    "--design-seed",
    "5",
];

fn mcmvm(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mcmvm"))
        .arg("--quiet")
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_remove("SLURM_ARRAY_TASK_ID")
        .output()
        .expect("mcmvm runs")
}

fn ok(o: Output) -> String {
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(o.status.success(), "{all}");
    all
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Run `lines` as one shell process (a shard), from `dir`.
fn shard(lines: &[String], dir: &Path) -> String {
    ok(Command::new("sh")
        .args(["-c", &lines.join(" && ")])
        .current_dir(dir)
        .env_remove("SLURM_ARRAY_TASK_ID")
        .output()
        .expect("sh runs"))
}

#[test]
fn a_sharded_robustness_sweep_merges_into_the_one_process_files() {
    let tmp = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cli_robustness");
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).expect("temp dir");
    let (one, split) = (tmp.join("one"), tmp.join("split"));
    let with = |extra: &[&str]| -> Vec<String> {
        SWEEP.iter().chain(extra).map(|s| s.to_string()).collect()
    };
    let run = |extra: &[&str]| {
        let args = with(extra);
        mcmvm(&args.iter().map(String::as_str).collect::<Vec<_>>())
    };
    let printed = ok(run(&["--out", one.to_str().unwrap()]));
    assert!(printed.contains("16 runs"), "{printed}");

    let plan = tmp.join("plan.txt");
    ok(run(&[
        "--out",
        split.to_str().unwrap(),
        "--plan",
        plan.to_str().unwrap(),
    ]));
    let lines: Vec<String> = read(&plan).lines().map(String::from).collect();
    assert_eq!(lines.len(), 16, "{lines:?}");
    for (n, l) in lines.iter().enumerate() {
        assert!(l.contains(&format!("--suite clap --task-id {n} ")), "{l}");
        assert!(
            l.contains("--points 1") && l.contains("--robustness"),
            "{l}"
        );
    }
    let (first, second) = lines.split_at(8);
    shard(first, &tmp);
    shard(second, &tmp);
    let runs = split.join("runs");
    let file = |n: usize, name: &str| runs.join(format!("clap-{n}-{name}.json"));
    // Point-major, then workload, then policy (each baseline before the policy over it).
    assert!(file(0, "config-bfs-s64k").is_file());
    assert!(file(15, "lhs-0-ste-ideal").is_file());

    // A shard rerun skips what it finished; a deleted result comes back alone.
    let kept = read(&file(13, "lhs-0-ste-clap"));
    std::fs::remove_file(file(3, "config-bfs-ideal")).expect("delete a run");
    let again = shard(first, &tmp);
    assert_eq!(again.matches("skipped").count(), 7, "{again}");
    assert!(file(3, "config-bfs-ideal").is_file());
    assert_eq!(read(&file(13, "lhs-0-ste-clap")), kept);

    let merged = ok(mcmvm(&["sweep", "merge", split.to_str().unwrap()]));
    assert!(merged.contains("--robustness"), "{merged}");
    for f in ["robustness.txt", "robustness.csv", "robustness.json"] {
        let (a, b) = (read(&split.join(f)), read(&one.join(f)));
        assert_eq!(a, b, "{f} differs");
    }
    let txt = read(&one.join("robustness.txt"));
    for id in [
        "clap_over_s64k",
        "clap_over_s2m",
        "clap_over_ideal",
        "ideal_over_s64k",
        "rt_similarity_s64k",
        "locality_s64k",
    ] {
        let line = txt.lines().find(|l| l.starts_with(id)).expect(id);
        assert!(line.contains('[') && line.contains(" / "), "{line}");
    }
    // The RT similarity and chiplet locality are rates: the paper's figure unsigned.
    let rt = txt.lines().find(|l| l.starts_with("rt_similarity_s64k"));
    assert!(
        rt.is_some_and(|l| l.contains(" 95.3%") && l.contains("(a rate)")),
        "{txt}"
    );
    assert!(txt.contains("+17.5%") && txt.contains("lhs-0 "), "{txt}");
    let json: serde_json::Value =
        serde_json::from_str(&read(&one.join("robustness.json"))).expect("robustness.json parses");
    assert_eq!(json["points"].as_array().map(Vec::len), Some(2));
    assert_eq!(json["headlines"][0]["paper"], 1.175);
    assert_eq!(json["headlines"][4]["unit"], "share");
    let _ = std::fs::remove_dir_all(&tmp);
}

#[test]
fn a_planned_forest_robustness_sweep_merges_into_the_one_process_files() {
    let tmp = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cli_robustness_forest");
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).expect("temp dir");
    let (one, split, plan) = (tmp.join("one"), tmp.join("split"), tmp.join("plan.txt"));
    let args = |extra: [&str; 2], more: &[&str]| -> Vec<String> {
        [
            "sweep",
            "--suite",
            "forest",
            "--robustness",
            "--points",
            "1",
            "--scale",
            "0.005",
            "--workloads",
            "ls,hchi",
        ]
        .iter()
        .chain(&extra)
        .chain(more)
        .map(|s| s.to_string())
        .collect()
    };
    let run = |a: Vec<String>| mcmvm(&a.iter().map(String::as_str).collect::<Vec<_>>());
    let printed = ok(run(args(["--out", one.to_str().unwrap()], &[])));
    // 2 points x 2 workloads x tbnp, forest, specforest.
    assert!(printed.contains("12 runs"), "{printed}");
    let plan_s = plan.to_str().unwrap();
    ok(run(args(
        ["--out", split.to_str().unwrap()],
        &["--plan", plan_s],
    )));
    let lines: Vec<String> = read(&plan).lines().map(String::from).collect();
    assert_eq!(lines.len(), 12, "{lines:?}");
    assert!(lines[0].contains("--gpu-config") && lines[0].contains("--robustness"));
    shard(&lines, &tmp);
    ok(mcmvm(&["sweep", "merge", split.to_str().unwrap()]));
    for f in ["robustness.txt", "robustness.csv", "robustness.json"] {
        assert_eq!(read(&split.join(f)), read(&one.join(f)), "{f} differs");
    }
    let csv = read(&one.join("robustness.csv"));
    assert!(csv.contains("\nforest_over_tbnp,1.72,"), "{csv}");
    assert!(csv.contains("\nspecforest_over_tbnp,1.86,"), "{csv}");
    // The table's other figures: no paper figure for the no-thrash mean; counts for steps.
    assert!(csv.contains("\nforest_no_thrash,,"), "{csv}");
    assert!(csv.contains("\nforest_steps,223,"), "{csv}");
    let txt = read(&one.join("robustness.txt"));
    assert!(txt.contains("(a count)"), "{txt}");
    let refused = mcmvm(&[
        "sweep",
        "--suite",
        "forest",
        "--robustness",
        "--oversub",
        "2",
    ]);
    assert_eq!(refused.status.code(), Some(2));
    let _ = std::fs::remove_dir_all(&tmp);
}
