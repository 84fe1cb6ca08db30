//! Every example command of the README runs as written (from the checkout), and the first
//! one also from an empty directory (the built-in configurations are in the binary).

use std::path::Path;
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

#[test]
fn every_readme_example_runs_as_written() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let commands = readme_commands();
    assert!(commands.len() >= 10, "{commands:?}");
    for line in &commands {
        for cmd in line.split(" && ") {
            let words: Vec<&str> = cmd.split_whitespace().collect();
            assert_eq!(words[0], "mcmvm", "{cmd}");
            let out = mcmvm(&words[1..], root);
            assert!(
                out.status.success(),
                "`{cmd}` failed:\n{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
    // Each sweep draws its own figures beside its CSV.
    for fig in [
        "out/clap-quick/fig-speedup.svg",
        "out/forest-quick/fig-profiling.svg",
    ] {
        let text = std::fs::read_to_string(root.join(fig)).unwrap_or_else(|e| panic!("{fig}: {e}"));
        assert!(text.contains("<svg"), "{fig} is not an SVG");
    }
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
