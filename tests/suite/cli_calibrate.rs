//! `mcmvm calibrate` end to end at a tiny scale: it prints every point and the best, writes
//! its CSV and JSON, and `--write` rewrites a config copy that `mcmvm run` still loads;
//! bad input (an unknown workload, `--write` on a built-in) is a one-line error, exit 2.

use std::path::Path;
use std::process::{Command, Output};

fn mcmvm(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mcmvm"))
        .arg("--quiet")
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("mcmvm runs")
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

#[test]
fn calibrate_write_rewrites_a_config_that_still_runs() {
    let dir = std::env::temp_dir().join(format!("mcmvm-cli-calibrate-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cfg = dir.join("mcm.toml");
    let shipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("configs/mcm-4chiplet.toml");
    std::fs::copy(&shipped, &cfg).unwrap();
    let (cfg_s, out_s) = (cfg.to_str().unwrap(), dir.join("out"));
    let o = mcmvm(&[
        "calibrate",
        "--config",
        cfg_s,
        "--scale",
        "0.02",
        "--workloads",
        "lud",
        "--points",
        "1",
        "--design-seed",
        "5",
        "--out",
        out_s.to_str().unwrap(),
        "--write",
    ]);
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(t.contains("design seed 5") && t.contains("best: "), "{t}");
    assert!(out_s.join("calibrate.csv").is_file() && out_s.join("calibrate.json").is_file());
    let csv = std::fs::read_to_string(out_s.join("calibrate.csv")).unwrap();
    assert_eq!(
        csv.lines().count(),
        3,
        "header, the config's point, one LHS point:\n{csv}"
    );
    let written = std::fs::read_to_string(&cfg).unwrap();
    // An LHS point varies every parameter of the table, so all eleven are fitted keys.
    assert_eq!(
        written.matches("# calibrated by `mcmvm calibrate`").count(),
        11
    );
    let run = mcmvm(&[
        "run",
        "--config",
        cfg_s,
        "--workload",
        "lud",
        "--policy",
        "s64k",
        "--scale",
        "0.02",
    ]);
    assert!(run.status.success(), "{}", text(&run));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn calibrate_bad_input_is_a_one_line_usage_error() {
    let o = mcmvm(&["calibrate", "--workloads", "nope", "--points", "1"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("`nope` is not a CLAP workload"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    let o = mcmvm(&[
        "calibrate",
        "--config",
        "mcm-4chiplet",
        "--scale",
        "0.02",
        "--workloads",
        "lud",
        "--points",
        "1",
        "--out",
        std::env::temp_dir()
            .join("mcmvm-cal-builtin")
            .to_str()
            .unwrap(),
        "--write",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("not a file"), "{}", text(&o));
}

#[test]
fn robustness_prints_each_headline_with_its_range_and_refuses_write() {
    let out = std::env::temp_dir().join(format!("mcmvm-cli-robustness-{}", std::process::id()));
    let out_s = out.to_str().unwrap();
    let o = mcmvm(&[
        "calibrate",
        "--robustness",
        "--scale",
        "0.02",
        "--workloads",
        "lud",
        "--out",
        out_s,
    ]);
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    for id in ["clap_over_s64k", "clap_over_s2m", "clap_over_ideal"] {
        let line = t
            .lines()
            .find(|l| l.starts_with(id))
            .unwrap_or_else(|| panic!("{id} in {t}"));
        assert!(line.contains('[') && line.contains(", "), "{line}");
    }
    let saved = std::fs::read_to_string(out.join("robustness.txt")).expect("robustness.txt");
    assert!(saved.contains("clap_over_s64k"));
    let refused = mcmvm(&["calibrate", "--robustness", "--write"]);
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused));
    let _ = std::fs::remove_dir_all(&out);
}
