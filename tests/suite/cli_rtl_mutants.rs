//! `mcmvm cosim --mutants`: a mutant of each block's emitted Verilog is caught by the
//! README monitor on the testbench stimulus (check a) and by a `--hw check` system run
//! (check b), each naming the cycle and signal; an unknown mutant is one line, exit 2.
//! The whole catalogue runs under `make rtl-mutants` (docs/verification.md).

use std::process::Command;

fn mcmvm(args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_mcmvm"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("mcmvm runs");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn one_mutant_per_block_is_caught_by_the_monitor_and_by_a_checked_system_run() {
    let mutants = "rt-access-plus-two,coalescer-merge-offset,att-record-old-timer";
    let args = [
        "cosim",
        "--mutants",
        mutants,
        "--cycles",
        "5000",
        "--seed",
        "1",
        "--mutant-scale",
        "0.03",
        "--config",
        "configs/hw.toml",
    ];
    println!("seed 1");
    let (code, text, err) = mcmvm(&args);
    assert_eq!(code, Some(0), "{args:?}:\n{text}\n{err}");
    for m in mutants.split(',') {
        let at = text
            .find(&format!("mutant {m} "))
            .unwrap_or_else(|| panic!("no report of {m}:\n{text}"));
        let mut lines = text[at..].lines().skip(1);
        let a = lines.next().unwrap_or_default();
        let b = lines.next().unwrap_or_default();
        assert!(
            a.starts_with("  (a) README monitor")
                && a.contains(": cycle ")
                && a.contains("README gives"),
            "{m}: check (a) did not catch it:\n{text}"
        );
        assert!(
            b.starts_with("  (b) --hw check system run: ") && b.contains("system cycle"),
            "{m}: check (b) did not catch it:\n{text}"
        );
    }
    assert!(
        text.contains("mutants: 3, caught by (a) 3, by (b) 3, escaped both 0"),
        "{text}"
    );
}

#[test]
fn an_unknown_mutant_is_one_line_with_the_choices() {
    let (code, _, err) = mcmvm(&["cosim", "--mutants", "rt-no-such"]);
    assert_eq!(code, Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("unknown mutant `rt-no-such`") && err.contains("rt-wrong-victim"),
        "{err}"
    );
}
