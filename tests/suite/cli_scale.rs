//! `--scale paper` on the command line: a sweep's plan carries it to every run, each run
//! records the factor its workload was built with, and a scale that is neither a number
//! nor `paper` is a usage error (exit code 2) naming the option and both forms.

use std::process::{Command, Output};

fn mcmvm(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mcmvm"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_remove("SLURM_ARRAY_TASK_ID")
        .output()
        .expect("mcmvm runs")
}

#[test]
fn a_bad_scale_names_the_option_and_both_forms() {
    for cmd in [
        vec!["run", "--workload", "blk", "--policy", "s64k"],
        vec!["sweep", "--suite", "clap"],
        vec!["workloads"],
    ] {
        for bad in ["big", "0", "-2"] {
            // `--scale=V`: clap reads a separate `-2` as an option, not a value.
            let opt = format!("--scale={bad}");
            let mut args = cmd.clone();
            args.push(&opt);
            let o = mcmvm(&args);
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
            assert!(
                err.contains("--scale") && err.contains("`paper`") && err.contains(bad),
                "{args:?}: {err}"
            );
        }
    }
}

#[test]
fn a_paper_scale_plan_passes_paper_to_every_run() {
    let dir = std::env::temp_dir().join(format!("mcmvm-cli-scale-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let plan = dir.join("clap.plan");
    let o = mcmvm(&[
        "sweep",
        "--suite",
        "clap",
        "--scale",
        "paper",
        "--workloads",
        "blk,lbm",
        "--policies",
        "s64k,clap",
        "--plan",
        plan.to_str().unwrap(),
        "--out",
        dir.join("out").to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = std::fs::read_to_string(&plan).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 4, "{text}");
    assert!(lines.iter().all(|l| l.contains("--scale paper")), "{text}");
    std::fs::remove_dir_all(&dir).unwrap();
}
