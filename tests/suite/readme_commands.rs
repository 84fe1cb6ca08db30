//! Every example command of the README runs: as written from the checkout under `make
//! test-exhaustive`, with smaller sizes in `make test`; and the first one also from an empty
//! directory (the built-in configurations are in the binary).

use std::path::{Path, PathBuf};
use std::process::Command;

fn mcmvm(args: &[&str], dir: &Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_mcmvm"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("mcmvm runs")
}

/// The lines of the README's "Commands, one example each" block, comments removed.
fn readme_commands() -> Vec<String> {
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md"))
        .expect("README.md readable");
    let section = readme
        .split("## Commands, one example each")
        .nth(1)
        .expect("the README has the commands section");
    let block = section
        .split("```")
        .nth(1)
        .expect("the section has a code block");
    block
        .lines()
        .map(|l| l.split(" # ").next().unwrap_or("").trim().to_string())
        .filter(|l| !l.is_empty())
        .collect()
}

/// Runs each README command (each part of an `a && b` line) in `dir` after `adapt` has
/// rewritten its words; panics naming the command unless it exits 0. Then checks that each
/// sweep drew its own figures beside its CSV.
fn run_readme_commands(dir: &Path, adapt: impl Fn(Vec<String>) -> Vec<String>) {
    let commands = readme_commands();
    assert!(commands.len() >= 10, "{commands:?}");
    for line in &commands {
        for cmd in line.split(" && ") {
            let words: Vec<String> = cmd.split_whitespace().map(str::to_string).collect();
            assert_eq!(words[0], "mcmvm", "{cmd}");
            let args = adapt(words[1..].to_vec());
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let out = mcmvm(&args, dir);
            assert!(
                out.status.success(),
                "`{cmd}` (run as {args:?}) failed:\n{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
    for fig in [
        "out/clap-quick/fig-speedup.svg",
        "out/forest-quick/fig-profiling.svg",
    ] {
        let text = std::fs::read_to_string(dir.join(fig)).unwrap_or_else(|e| panic!("{fig}: {e}"));
        assert!(text.contains("<svg"), "{fig} is not an SVG");
    }
}

/// `--flag value` set to `value`, appended when absent.
fn set_option(args: &mut Vec<String>, flag: &str, value: &str) {
    match args.iter().position(|a| a == flag) {
        Some(i) => args[i + 1] = value.to_string(),
        None => args.extend([flag.to_string(), value.to_string()]),
    }
}

/// The README's examples at their written sizes (default scale, 100,000 cosim cycles, the
/// whole characterization): minutes on 2 cores. `make test` runs the same commands smaller.
#[test]
#[ignore = "slow: every README example at its written size; the fast case \
            every_readme_example_runs_smaller runs each one shrunk; run by make test-exhaustive"]
fn every_readme_example_runs_as_written() {
    run_readme_commands(Path::new(env!("CARGO_MANIFEST_DIR")), |args| args);
}

/// Each README example with its options as written but a smaller size: workloads at scale
/// 0.01, cosim for 2,000 cycles, calibrate on two workloads. `characterize`, `lint`, `synth`
/// and `codesign` (whose grid synthesises every point) take minutes on a loaded 2-core host
/// whatever their size: their options are checked against their `--help`, and what they
/// compute is tested in their crates (`rust-models/tests/suite/characterize.rs`, the
/// `*lint_clean` tests of `rtl/`, `synth/tests/suite/`) and in `cli_codesign.rs`.
/// Runs in a directory of its own (with `configs/` linked in), so its `out/` cannot meet
/// the written-size run's.
#[test]
fn every_readme_example_runs_smaller() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("readme-smaller-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    std::os::unix::fs::symlink(root.join("configs"), dir.join("configs")).expect("link configs");
    let scale = "0.01";
    let cycles = "2000";
    println!("scale {scale}, cosim cycles {cycles}");
    run_readme_commands(&dir, |mut args| {
        let sized = args.iter().any(|a| a == "--workload" || a == "--workloads");
        match args[0].as_str() {
            "run" | "sweep" if sized => set_option(&mut args, "--scale", scale),
            "cosim" => set_option(&mut args, "--cycles", cycles),
            // The fit's design as written, on two workloads at the small scale.
            "calibrate" => {
                set_option(&mut args, "--scale", scale);
                set_option(&mut args, "--workloads", "lud,bfs");
            }
            "characterize" | "lint" | "synth" | "codesign" => {
                let sub = args[0].clone();
                let out = mcmvm(&[&sub, "--help"], &dir);
                let help = String::from_utf8_lossy(&out.stdout);
                for flag in args.iter().filter(|a| a.starts_with("--")) {
                    assert!(help.contains(flag.as_str()), "{sub} has no {flag}");
                }
                return vec![sub, "--help".to_string()];
            }
            _ => {}
        }
        args
    });
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_run_works_in_an_empty_directory() {
    let dir = std::env::temp_dir().join(format!("mcmvm-empty-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let out = mcmvm(
        &[
            "run",
            "--workload",
            "bfs",
            "--policy",
            "clap",
            "--scale",
            "0.05",
        ],
        &dir,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = mcmvm(&["config", "show", "uvm-turing"], &dir);
    assert!(String::from_utf8_lossy(&out.stdout).contains("[host_link]"));
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn quiet_runs_write_nothing_to_stderr_and_json_goes_to_its_file() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let json = std::env::temp_dir().join(format!("mcmvm-quiet-{}.json", std::process::id()));
    let json_arg = json.to_string_lossy().into_owned();
    let args = [
        "--quiet",
        "run",
        "--workload",
        "bfs",
        "--policy",
        "clap",
        "--scale",
        "0.05",
        "--hw",
        "verilator",
        "--json",
        &json_arg,
    ];
    let out = mcmvm(&args, root);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("hardware (--hw verilator)"));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).expect("json written")).expect("json");
    assert_eq!(v["hardware"]["engine"], "verilator");
    let _ = std::fs::remove_file(json);
}
