//! `mcmvm codesign`: a 2-point RT grid end to end at a tiny scale — both points linted,
//! synthesised on both libraries, run with their own Verilog serving, powered by OpenSTA —
//! then the same command again served from the cache, and a bad grid file refused.

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
    mcmvm(&[
        "--quiet",
        "codesign",
        "--block",
        "rt",
        "--grid",
        dir.join("grid.toml").to_str().unwrap(),
        "--workloads",
        "bfs",
        "--scale",
        "0.01",
        "--out",
        dir.to_str().unwrap(),
    ])
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
    assert!(out.contains("power: OpenSTA report_power"), "{out}");
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
        }
    }
    // A second row costs area and flip-flops on both libraries.
    for l in ["osu018", "sky130hd"] {
        assert!(lib(&points[1], l, "area_um2") > lib(&points[0], l, "area_um2"));
        assert!(lib(&points[1], l, "flip_flops") > lib(&points[0], l, "flip_flops"));
    }
    let csv = std::fs::read_to_string(dir.join("codesign/rt.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + 2 * 2, "{csv}");
    let svg = std::fs::read_to_string(dir.join("codesign/fig-pareto-rt.svg")).unwrap();
    assert!(svg.contains("entries=2 counter_bits=4"), "{svg}");

    // The same grid again: every point from the cache, the same figures.
    let again = stdout(&codesign(&dir));
    assert_eq!(again.matches("(cached)").count(), 2, "{again}");
    let json2: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("codesign/rt.json")).unwrap())
            .unwrap();
    assert_eq!(json["study"], json2["study"]);
    let _ = std::fs::remove_dir_all(&dir);
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
