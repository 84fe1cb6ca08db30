//! The one plan writer and the task number.

use mcmvm_study::plan::{task_id, write_plan};
use mcmvm_study::StudyError;

#[test]
fn a_plan_has_one_line_per_task_in_task_order_in_a_new_directory() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sub/plan.txt");
    write_plan(&path, 3, |n| Ok::<_, std::io::Error>(format!("run {n}"))).unwrap();
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "run 0\nrun 1\nrun 2\n"
    );
    // Nothing else is left beside it.
    assert_eq!(
        std::fs::read_dir(path.parent().unwrap()).unwrap().count(),
        1
    );
}

#[test]
fn a_line_that_cannot_be_made_is_the_error_and_no_plan_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("plan.txt");
    let e = write_plan(&path, 2, |n| {
        if n == 1 {
            Err(std::io::Error::other("cannot quote"))
        } else {
            Ok(String::new())
        }
    })
    .unwrap_err();
    assert!(matches!(e, StudyError::PlanLine(_)), "{e:?}");
    assert_eq!(e.to_string(), "cannot quote");
    assert!(!path.exists());
}

#[test]
fn a_task_id_must_be_a_run_number() {
    assert_eq!(task_id(Some("7")).unwrap(), Some(7));
    let e = task_id(Some("x")).unwrap_err();
    assert_eq!(
        e.to_string(),
        "--task-id `x` is not a run number (0, 1, 2, ...)"
    );
}
