//! `sweep merge`: the same tables from task files, and what it says when runs are missing.

use crate::fixtures::{small_clap, Recorder, RepoConfigs};
use mcmvm_study::sweep::{self, Mode};
use mcmvm_study::StudyError;

#[test]
fn merged_tasks_give_the_in_process_sweeps_files_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let (here, split) = (dir.path().join("here"), dir.path().join("split"));
    let rec = Recorder::default();
    sweep::run(
        &small_clap(&here, Mode::All { resume: false }),
        &RepoConfigs,
        &rec,
    )
    .unwrap();
    sweep::run(&small_clap(&split, Mode::Task(0)), &RepoConfigs, &rec).unwrap();

    let e = mcmvm_study::merge::merge(&split, None, None, &rec).unwrap_err();
    assert!(
        matches!(&e, StudyError::Missing { missing, .. } if missing == &[1]),
        "{e:?}"
    );
    assert!(rec.err.lock().unwrap()[1].contains("--task-id 1 "));

    sweep::run(&small_clap(&split, Mode::Task(1)), &RepoConfigs, &rec).unwrap();
    mcmvm_study::merge::merge(&split, None, None, &rec).unwrap();
    // Every figure but the wall time and speed (clap.csv's last two columns).
    let figures = |dir: &std::path::Path, name: &str| -> Vec<String> {
        let text = std::fs::read_to_string(dir.join(name)).unwrap();
        let cut = |l: &str| l.rsplitn(3, ',').last().unwrap_or_default().to_string();
        let wall = name == "clap.csv";
        text.lines()
            .map(|l| if wall { cut(l) } else { l.into() })
            .collect()
    };
    for name in [
        "clap.csv",
        "clap_structures.csv",
        "clap_table2.csv",
        "clap_paper.csv",
    ] {
        assert_eq!(figures(&here, name), figures(&split, name), "{name}");
    }
}

#[test]
fn a_merge_names_what_it_cannot_read() {
    let dir = tempfile::tempdir().unwrap();
    let rec = Recorder::default();
    let e = mcmvm_study::merge::merge(&dir.path().join("none"), None, None, &rec).unwrap_err();
    assert!(matches!(e, StudyError::ReadRuns { .. }), "{e:?}");
    let runs = dir.path().join("runs");
    std::fs::create_dir_all(&runs).unwrap();
    std::fs::write(runs.join("clap-0-bfs-s64k.json"), "not json").unwrap();
    let e = mcmvm_study::merge::merge(dir.path(), None, None, &rec).unwrap_err();
    assert!(matches!(e, StudyError::NotRunFile { .. }), "{e:?}");
    assert!(e
        .to_string()
        .ends_with("clap-0-bfs-s64k.json: not a run file"));
    let e = mcmvm_study::merge::merge(dir.path(), Some("bogus"), None, &rec).unwrap_err();
    assert_eq!(
        e.to_string(),
        "--suite `bogus`: merge knows clap and forest"
    );
}
