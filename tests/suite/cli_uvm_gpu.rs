//! `mcmvm run --uvm` on an MCM config: the GPU model runs with the UVM driver as its
//! memory service and prints both reports; bad input is one line and exit code 2.

use std::process::Command;

fn mcmvm(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_mcmvm"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("mcmvm runs")
}

const RUN: [&str; 12] = [
    "run",
    "--config",
    "configs/mcm-4chiplet.toml",
    "--workload",
    "ls",
    "--scale",
    "0.03",
    "--policy",
    "s64k",
    "--uvm",
    "tbnp",
    "--oversub",
];

/// [`RUN`] at oversubscription 1.5, which must succeed; its standard output.
fn run_oversubscribed() -> String {
    let mut args = RUN.to_vec();
    args.push("1.5");
    let out = mcmvm(&args);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    text
}

#[test]
fn uvm_on_an_mcm_config_prints_gpu_and_uvm_reports() {
    let text = run_oversubscribed();
    for needle in [
        "remote-access ratio",
        "far faults",
        "fault batches",
        "host link bytes",
        "fault protocol",
        "speed:",
    ] {
        assert!(text.contains(needle), "`{needle}` missing in:\n{text}");
    }
    let faults: u64 = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("far faults"))
        .and_then(|v| v.trim().parse().ok())
        .expect("far faults row");
    assert!(faults > 0, "oversubscribed stream without far faults");
}

#[test]
fn oversubscription_below_one_is_one_line_and_exit_2() {
    let mut args = RUN.to_vec();
    args.push("0.5");
    let out = mcmvm(&args);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains("--oversub"), "{err}");
}

/// Run from another directory with an absolute `--config`: the UVM config beside it is
/// found without `--uvm-config`.
#[test]
fn the_uvm_config_beside_the_gpu_config_is_the_default() {
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let config = repo.join("configs/mcm-4chiplet.toml");
    let mut args = RUN.to_vec();
    args[2] = config.to_str().expect("UTF-8 path");
    args.push("1.5");
    let out = Command::new(env!("CARGO_BIN_EXE_mcmvm"))
        .args(&args)
        .current_dir(std::env::temp_dir())
        .output()
        .expect("mcmvm runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("uvm-turing.toml"), "{text}");
}

/// The UVM config without `--uvm` (the default `none`) names what is missing instead of
/// failing on the file's first key as a GPU config.
#[test]
fn a_uvm_config_without_a_uvm_policy_says_so_in_one_line() {
    let out = mcmvm(&[
        "run",
        "--config",
        "configs/uvm-turing.toml",
        "--workload",
        "ls",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        err.contains("is a UVM configuration") && err.contains("--uvm"),
        "{err}"
    );
}

/// The run says how much of it sits on 2 MB host pages; where the kernel honours
/// `madvise` for transparent huge pages, mimalloc's regions (advised so) have some.
#[test]
fn the_run_reports_its_heap_on_huge_pages() {
    let text = run_oversubscribed();
    let Ok(rollup) = std::fs::read_to_string("/proc/self/smaps_rollup") else {
        return; // No per-process memory summary on this kernel: nothing is printed.
    };
    assert!(rollup.contains("AnonHugePages:"), "{rollup}");
    let mb: f64 = text
        .lines()
        .find_map(|l| l.strip_prefix("host memory: "))
        .and_then(|l| l.strip_suffix(" MB on 2 MB pages"))
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no `host memory:` line in:\n{text}"));
    let thp =
        std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled").unwrap_or_default();
    if cfg!(target_env = "gnu") && (thp.contains("[always]") || thp.contains("[madvise]")) {
        assert!(
            mb >= 2.0,
            "THP is {thp:?} but the run had {mb} MB on huge pages"
        );
    }
}
