//! `mcmvm codesign`: a 2-point RT grid end to end at a tiny scale — both points linted,
//! run in lockstep against the twin, synthesised on both libraries, run with their own
//! Verilog serving, powered by OpenSTA — then the same command again served from the
//! cache, the same study as a plan, two shards and a merge (the same bytes), and a bad
//! grid file refused.

use std::path::Path;
use std::process::{Command, Output};

fn mcmvm(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mcmvm"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("mcmvm runs")
}

fn stdout(o: &Output) -> String {
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(
        o.status.success(),
        "{out}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    out
}

/// Two RT points small enough to synthesise in seconds: 1 and 2 rows of 4-bit counters.
const GRID: &str = "entries = [1, 2]\ncounter_bits = [4]\n";

fn codesign(dir: &Path) -> Output {
    codesign_with(dir, &[])
}

fn codesign_with(dir: &Path, extra: &[&str]) -> Output {
    codesign_in(&dir.join("grid.toml"), dir, extra)
}

/// The RT study of `grid` (bfs at scale 0.01) into `out`.
fn codesign_in(grid: &Path, out: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "--quiet",
        "codesign",
        "--block",
        "rt",
        "--grid",
        grid.to_str().unwrap(),
        "--workloads",
        "bfs",
        "--scale",
        "0.01",
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    mcmvm(&args)
}

/// The file or directory in `dir` of the RT point with `entries` rows
/// (`rt-<entries>_<counter bits>_…`).
fn rt_point(dir: &Path, entries: u32) -> std::path::PathBuf {
    let prefix = format!("rt-{entries}_");
    std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with(&prefix)
        })
        .unwrap_or_else(|| panic!("no {prefix}… in {}", dir.display()))
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

#[test]
fn a_two_point_rt_grid_runs_end_to_end_and_reruns_from_the_cache() {
    let dir = std::env::temp_dir().join(format!("mcmvm-cli-codesign-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("grid.toml"), GRID).unwrap();
    let out = stdout(&codesign(&dir));
    assert!(
        out.contains("== co-design of remote_tracker: 2 points"),
        "{out}"
    );
    assert!(
        out.contains("the paper's point is not in this grid"),
        "{out}"
    );
    assert!(
        out.contains("power: OpenSTA instance_power summed per cell, input-port activity counted from the system runs' "),
        "{out}"
    );
    assert!(
        out.contains("osu018 (typical, 1.8 V, 25 °C) and sky130hd (tt_025C_1v80, 1.8 V, 25 °C)"),
        "{out}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("codesign/rt.json")).unwrap())
            .unwrap();
    let points = json["points"].as_array().unwrap();
    assert_eq!(points.len(), 2);
    let lib = |p: &serde_json::Value, l: &str, k: &str| {
        p["libraries"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["library"] == l)
            .unwrap_or_else(|| panic!("no {l} in {p}"))[k]
            .as_f64()
            .unwrap()
    };
    for p in points {
        assert_eq!(p["lint"], "clean", "{p}");
        // The point's Verilog agreed with the twin on every cycle of its lockstep run.
        assert_eq!(p["lockstep"]["engines"], "twin,verilator", "{p}");
        assert_eq!(p["lockstep"]["cycles"], 4000, "{p}");
        assert_eq!(p["lockstep"]["mismatches"], 0, "{p}");
        // Each point's design run (clap) was served by its own Verilog, which stepped.
        let clap = p["effect"]["runs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["policy"] == "clap")
            .unwrap();
        let served = clap["served"].as_array().unwrap();
        assert_eq!(served.len(), 4, "one RT per chiplet: {clap}");
        assert!(served
            .iter()
            .all(|s| s["engine"].as_str().unwrap().starts_with("verilator")));
        assert!(
            served
                .iter()
                .map(|s| s["block_cycles"].as_u64().unwrap())
                .sum::<u64>()
                > 0
        );
        assert!(p["effect"]["geomean_speedup"].as_f64().unwrap() > 0.0);
        for l in ["osu018", "sky130hd"] {
            assert!(
                lib(p, l, "dynamic_w") > 0.0 && lib(p, l, "leakage_w") > 0.0,
                "{p}"
            );
            assert_eq!(lib(p, l, "power_undefined_cells"), 0.0, "{p}");
        }
    }
    // A second row costs area and flip-flops on both libraries.
    for l in ["osu018", "sky130hd"] {
        assert!(lib(&points[1], l, "area_um2") > lib(&points[0], l, "area_um2"));
        assert!(lib(&points[1], l, "flip_flops") > lib(&points[0], l, "flip_flops"));
    }
    let csv = std::fs::read_to_string(dir.join("codesign/rt.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + 2 * 2, "{csv}");
    assert!(
        csv.lines().skip(1).all(|l| l.contains(",clean,4000,0,")),
        "{csv}"
    );
    assert_eq!(out.matches(" 4000 ok ").count(), 2, "{out}");
    let svg = std::fs::read_to_string(dir.join("codesign/fig-pareto-rt.svg")).unwrap();
    assert!(svg.contains("entries=2 counter_bits=4"), "{svg}");

    // The same grid again: every point from the cache, the same figures.
    let again = stdout(&codesign(&dir));
    assert_eq!(again.matches("(cached)").count(), 2, "{again}");
    let json2: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("codesign/rt.json")).unwrap())
            .unwrap();
    assert_eq!(json["study"], json2["study"]);
    sharded_study_merges_to_the_same_files(&dir);
    two_one_point_grids_into_one_out_both_stay(&dir);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The study of `dir` (already in its cache) as `--plan`, one process per point and
/// `merge`: the CSV and JSON of the one-process run, byte for byte; a missing point is
/// named with its command, and rerunning one task rewrites its own file only.
fn sharded_study_merges_to_the_same_files(dir: &Path) {
    let files = ["codesign/rt.csv", "codesign/rt.json"];
    let one_process: Vec<String> = files.iter().map(|f| read(&dir.join(f))).collect();
    for f in files {
        std::fs::remove_file(dir.join(f)).unwrap();
    }
    let plan = dir.join("plan.txt");
    let out = stdout(&codesign_with(dir, &["--plan", plan.to_str().unwrap()]));
    assert!(out.contains("2 points of the rt co-design"), "{out}");
    let lines: Vec<String> = read(&plan).lines().map(String::from).collect();
    assert_eq!(lines.len(), 2, "{lines:?}");
    for (n, line) in lines.iter().enumerate() {
        assert!(line.contains(&format!(" --task-id {n} ")), "{line}");
        let o = Command::new("sh").args(["-c", line]).output().unwrap();
        let text = stdout(&o);
        assert!(text.contains(&format!("task {n}/2: wrote ")), "{text}");
    }
    let merge = || mcmvm(&["--quiet", "codesign", "merge", dir.to_str().unwrap()]);
    let merged = stdout(&merge());
    assert!(merged.contains("merge rt: 2 points from"), "{merged}");
    assert!(merged.contains("recommended: "), "{merged}");
    for (f, whole) in files.iter().zip(&one_process) {
        assert!(read(&dir.join(f)) == *whole, "{f} differs after the merge");
    }

    // Point 1 gone: the merge names it with its command and writes nothing.
    let runs = dir.join("codesign/runs");
    let first = read(&rt_point(&runs, 1));
    std::fs::remove_file(rt_point(&runs, 2)).unwrap();
    let o = merge();
    assert_eq!(o.status.code(), Some(2));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains(&format!("missing point 1: {}", lines[1])),
        "{text}"
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("1 of 2 points missing (tasks 1), nothing merged"),
        "{err}"
    );
    // Task 1 again: its file back, task 0's untouched, the same merge.
    stdout(&Command::new("sh").args(["-c", &lines[1]]).output().unwrap());
    assert_eq!(read(&rt_point(&runs, 1)), first);
    stdout(&merge());
    for (f, whole) in files.iter().zip(&one_process) {
        assert!(
            read(&dir.join(f)) == *whole,
            "{f} differs after the second merge"
        );
    }
    let o = codesign_with(dir, &["--task-id", "2"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr)
        .contains("--task-id 2 is out of range: this rt co-design has 2 points (0..=1)"));
}

/// Two one-point grids (the points of `dir`'s study, from a copy of its cache) run one
/// after the other into one `--out`: each point keeps its work directory and result file,
/// and the second run's table, its JSON and a merge list both.
fn two_one_point_grids_into_one_out_both_stay(dir: &Path) {
    let out = dir.join("two-grids");
    let cache = out.join("codesign/cache");
    std::fs::create_dir_all(&cache).unwrap();
    for e in std::fs::read_dir(dir.join("codesign/cache")).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), cache.join(e.file_name())).unwrap();
    }
    let mut last = String::new();
    for entries in [1, 2] {
        let grid = dir.join(format!("grid-{entries}.toml"));
        std::fs::write(
            &grid,
            format!("entries = [{entries}]\ncounter_bits = [4]\n"),
        )
        .unwrap();
        last = stdout(&codesign_in(&grid, &out, &[]));
        assert!(last.contains("remote_tracker: 1 points"), "{last}");
    }
    assert!(
        last.contains("with 1 points of other grids measured into"),
        "{last}"
    );
    let rows: Vec<&str> = last.lines().filter(|l| l.contains(" 4000 ok ")).collect();
    assert_eq!(rows.len(), 2, "{last}");
    for (row, label) in rows
        .iter()
        .zip(["entries=1 counter_bits=4", "entries=2 counter_bits=4"])
    {
        assert!(row.contains(label), "{label} in {last}");
    }
    let listed = |out: &Path| -> Vec<String> {
        let json: serde_json::Value =
            serde_json::from_str(&read(&out.join("codesign/rt.json"))).unwrap();
        json["points"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["label"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(listed(&out).len(), 2, "{:?}", listed(&out));
    for entries in [1, 2] {
        assert!(rt_point(&out.join("codesign/points"), entries)
            .join("remote_tracker.v")
            .is_file());
        rt_point(&out.join("codesign/runs"), entries);
    }
    let merged = stdout(&mcmvm(&[
        "--quiet",
        "codesign",
        "merge",
        out.to_str().unwrap(),
    ]));
    assert!(merged.contains("merge rt: 2 points from"), "{merged}");
    assert_eq!(listed(&out).len(), 2);
}

#[test]
fn a_bad_grid_file_is_one_line_naming_the_file_and_key() {
    let dir = std::env::temp_dir().join(format!("mcmvm-cli-codesign-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let grid = dir.join("grid.toml");
    std::fs::write(&grid, "entries = [64]\n").unwrap();
    let o = codesign(&dir);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.contains(&format!(
            "{}: key `remote_tracker.entries`: expected 1..=32, got 64",
            grid.display()
        )),
        "{err}"
    );
    std::fs::write(&grid, "objects = [8]\n").unwrap();
    let err = String::from_utf8_lossy(&codesign(&dir).stderr).to_string();
    assert!(
        err.contains("key `objects`: not a key of --block rt"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
