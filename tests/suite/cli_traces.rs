//! `mcmvm run --trace` on the external formats (an Accel-Sim directory, NVBit mem_trace
//! output) and `mcmvm workloads --write-trace … --format accelsim` feeding it back.

use std::process::Command;

fn mcmvm(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_mcmvm"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("mcmvm runs")
}

/// Standard output of a run that must succeed.
fn ok(args: &[&str]) -> String {
    let out = mcmvm(args);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{args:?}:\n{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    text
}

#[test]
fn an_accelsim_directory_runs_under_clap() {
    let text = ok(&[
        "run",
        "--trace",
        "configs/traces/accelsim-tiny",
        "--policy",
        "clap",
    ]);
    assert!(text.contains("accelsim-tiny"), "{text}");
}

#[test]
fn nvbit_mem_trace_output_runs() {
    let text = ok(&[
        "run",
        "--trace",
        "configs/traces/nvbit-tiny.txt",
        "--policy",
        "clap",
    ]);
    assert!(text.contains("nvbit-tiny"), "{text}");
}

#[test]
fn a_written_accelsim_trace_runs_like_the_workload() {
    let dir = std::env::temp_dir().join(format!("mcmvm-cli-accelsim-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let d = dir.to_str().expect("UTF-8 path");
    let out = mcmvm(&[
        "workloads",
        "--write-trace",
        "ls",
        d,
        "--format",
        "accelsim",
        "--scale",
        "0.001",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(dir.join("kernelslist.g").is_file() && dir.join("kernel-1.traceg").is_file());
    // An Accel-Sim trace carries no dependence marks (its accesses are read as dependent),
    // so both runs block every warp at every access: then they must agree exactly.
    let blocking = dir.join("blocking.toml");
    let cfg = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("configs/mcm-4chiplet.toml"),
    )
    .expect("shipped config");
    // Whatever the shipped value (calibrated), one load in flight per warp.
    let key = "loads_in_flight_per_warp =";
    assert!(
        cfg.lines().any(|l| l.starts_with(key)),
        "{key} in the config"
    );
    let cfg: Vec<String> = cfg
        .lines()
        .map(|l| {
            if l.starts_with(key) {
                format!("{key} 1")
            } else {
                l.to_string()
            }
        })
        .collect();
    std::fs::write(&blocking, cfg.join("\n")).unwrap();
    let c = blocking.to_str().expect("UTF-8 path");
    let from_trace = ok(&["run", "--config", c, "--trace", d, "--policy", "s4k"]);
    let built_in = ok(&[
        "run",
        "--config",
        c,
        "--workload",
        "ls",
        "--scale",
        "0.001",
        "--policy",
        "s4k",
    ]);
    // The same warp instructions reach the model, so the whole report agrees but for the
    // lines naming the source and measuring the host.
    let report = |t: &str| -> Vec<String> {
        t.lines()
            .filter(|l| {
                !["seed:", "workload ", "speed:", "host memory:"]
                    .iter()
                    .any(|p| l.starts_with(p))
            })
            .map(str::to_string)
            .collect()
    };
    assert!(
        built_in.contains("warp memory instrs     3168"),
        "{built_in}"
    );
    assert_eq!(report(&from_trace), report(&built_in));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_bad_trace_is_one_line_naming_file_and_line_and_exit_2() {
    let dir = std::env::temp_dir().join(format!("mcmvm-cli-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("kernelslist.g"), "kernel-1.traceg\n").unwrap();
    std::fs::write(
        dir.join("kernel-1.traceg"),
        "-grid dim = (1,1,1)\n-block dim = (32,1,1)\n#BEGIN_TB\nthread block = 0,0,0\nwarp = 0\n#END_TB\n",
    )
    .unwrap();
    let out = mcmvm(&["run", "--trace", dir.to_str().unwrap(), "--policy", "clap"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        err.contains("kernel-1.traceg:6: expected 'insts = N' after 'warp = 0'"),
        "{err}"
    );
    // A directory that is not a trace says what is missing.
    let empty = dir.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let out = mcmvm(&[
        "run",
        "--trace",
        empty.to_str().unwrap(),
        "--policy",
        "clap",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("has no kernelslist.g"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}
