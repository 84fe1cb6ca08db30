//! A small CLAP sweep through the library: in process, resumed, as a plan and as tasks.

use crate::fixtures::{small_clap, Recorder, RepoConfigs};
use mcmvm_study::sweep::{self, Mode};
use mcmvm_study::StudyError;

#[test]
fn the_in_process_sweep_writes_its_tables_and_a_resume_runs_nothing_again() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("clap");
    let rec = Recorder::default();
    let req = small_clap(&out, Mode::All { resume: false });
    assert_eq!(sweep::run(&req, &RepoConfigs, &rec).unwrap(), 0);
    assert!(rec
        .out()
        .starts_with("sweep clap: 2 runs (1 workloads x 2 policies), scale 0.01"));
    assert_eq!(*rec.ticks.lock().unwrap(), 2);
    let csv = std::fs::read_to_string(out.join("clap.csv")).unwrap();
    assert_eq!(csv.lines().count(), 3, "{csv}");
    for name in [
        "clap_structures.csv",
        "clap.json",
        "clap_table2.csv",
        "clap_paper.csv",
    ] {
        assert!(out.join(name).is_file(), "{name}");
    }

    let again = Recorder::default();
    let req = small_clap(&out, Mode::All { resume: true });
    assert_eq!(sweep::run(&req, &RepoConfigs, &again).unwrap(), 0);
    assert!(
        again.out().contains("resume: 2 of 2 runs already in"),
        "{}",
        again.out()
    );
    assert_eq!(std::fs::read_to_string(out.join("clap.csv")).unwrap(), csv);
}

#[test]
fn a_plan_names_every_task_and_each_task_runs_alone_then_is_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("clap");
    let file = dir.path().join("clap.plan");
    let exe = std::path::PathBuf::from("/bin/mcmvm");
    let rec = Recorder::default();
    let plan = Mode::Plan {
        file: file.clone(),
        exe,
    };
    sweep::run(&small_clap(&out, plan), &RepoConfigs, &rec).unwrap();
    let lines: Vec<String> = std::fs::read_to_string(&file)
        .unwrap()
        .lines()
        .map(String::from)
        .collect();
    assert_eq!(lines.len(), 2);
    assert!(lines[1].starts_with("/bin/mcmvm sweep --suite clap --task-id 1 --config "));
    assert!(lines[1].contains(" --policies s64k,clap --workloads bfs --hw twin --out "));

    let e = sweep::run(&small_clap(&out, Mode::Task(2)), &RepoConfigs, &rec).unwrap_err();
    assert!(
        matches!(e, StudyError::TaskOutOfRange { n: 2, runs: 2, .. }),
        "{e:?}"
    );
    sweep::run(&small_clap(&out, Mode::Task(1)), &RepoConfigs, &rec).unwrap();
    assert!(out.join("runs/clap-1-bfs-clap.json").is_file());
    let skip = Recorder::default();
    sweep::run(&small_clap(&out, Mode::Task(1)), &RepoConfigs, &skip).unwrap();
    assert!(skip.out().contains("exists, skipped"), "{}", skip.out());
}

#[test]
fn bad_options_are_typed_errors_before_any_run() {
    let dir = tempfile::tempdir().unwrap();
    let mut req = small_clap(dir.path(), Mode::All { resume: false });
    req.policies = "s2m".into();
    let e = sweep::run(&req, &RepoConfigs, &Recorder::default()).unwrap_err();
    assert!(matches!(e, StudyError::NoBaseline), "{e:?}");
    req.policies = "s64k".into();
    req.workloads = Some("nope".into());
    let e = sweep::run(&req, &RepoConfigs, &Recorder::default()).unwrap_err();
    assert!(e
        .to_string()
        .starts_with("--workloads: `nope` is not in the clap suite (bfs, "));
    assert!(!dir.path().join("runs").exists());
}
