//! `--set` and `--gpu-set` on `mcmvm run`: a GPU key reaches the GPU model (the cycle count
//! moves with it), on a run with `--uvm` as well as without, and a bad key or value is a
//! usage error (exit code 2) naming the key; the table names the service order the config
//! sets.

use std::process::{Command, Output};

fn mcmvm(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mcmvm"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("mcmvm runs")
}

/// The `cycles` figure of a run's table.
fn cycles(o: &Output) -> u64 {
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{out}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    out.lines()
        .find_map(|l| {
            let mut f = l.split_whitespace();
            (f.next() == Some("cycles")).then(|| f.next()?.replace(',', "").parse().ok())?
        })
        .unwrap_or_else(|| panic!("no cycles line in\n{out}"))
}

const RUN: [&str; 7] = [
    "run",
    "--workload",
    "ste",
    "--policy",
    "s64k",
    "--scale",
    "0.05",
];

#[test]
fn set_without_uvm_changes_the_gpu_model() {
    let base = cycles(&mcmvm(&RUN));
    let one = |flag: &str| {
        let mut a = RUN.to_vec();
        a.extend([flag, "gpu.loads_in_flight_per_warp=1"]);
        cycles(&mcmvm(&a))
    };
    let (set, gpu_set) = (one("--set"), one("--gpu-set"));
    assert_eq!(set, gpu_set, "both flags reach the same key");
    assert!(
        set > base,
        "1 load in flight per warp is slower: {set} vs {base}"
    );
}

/// The out-of-order line of a run's table.
fn order_line(o: &Output) -> String {
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{out}");
    out.lines()
        .find(|l| l.starts_with("out-of-order requests"))
        .unwrap_or_else(|| panic!("no out-of-order line in\n{out}"))
        .to_string()
}

#[test]
fn the_table_names_the_service_order_the_config_sets() {
    let shipped = order_line(&mcmvm(&RUN));
    assert!(shipped.contains("(served in arrival order;"), "{shipped}");
    let mut a = RUN.to_vec();
    a.extend(["--set", "memory.serve_in_arrival_order=false"]);
    let processing = order_line(&mcmvm(&a));
    assert!(
        processing.starts_with("out-of-order requests  0  (served in processing order;"),
        "{processing}"
    );
}

#[test]
fn gpu_set_with_uvm_changes_the_gpu_model() {
    // UVM on the GPU model: `--set` addresses the UVM config, `--gpu-set` the GPU's.
    let uvm = |extra: &[&str]| {
        let mut a = RUN.to_vec();
        a.extend(["--uvm", "tbnp", "--oversub", "1.5"]);
        a.extend(extra);
        cycles(&mcmvm(&a))
    };
    let base = uvm(&[]);
    let one = uvm(&["--gpu-set", "gpu.loads_in_flight_per_warp=1"]);
    // The key reaches the GPU model. Not "slower": under thrashing fewer loads in flight
    // can fault less (2,257,225 against 2,314,953 cycles at scale 0.02).
    assert_ne!(
        one, base,
        "1 load in flight per warp changes the run: {one} vs {base}"
    );
}

#[test]
fn a_bad_gpu_key_or_value_is_a_usage_error_naming_it() {
    for bad in [
        "gpu.loads_in_flight_per_warp=0",
        "gpu.no_such_key=1",
        "gpu.sms_per_chiplet=x",
    ] {
        let mut a = RUN.to_vec();
        a.extend(["--set", bad]);
        let o = mcmvm(&a);
        let err = String::from_utf8_lossy(&o.stderr);
        let key = bad.split('=').next().unwrap().rsplit('.').next().unwrap();
        assert_eq!(o.status.code(), Some(2), "{bad}: {err}");
        assert!(err.contains(key), "{bad}: {err}");
    }
}

/// `--uvm` without `--policy` runs on the Forest study's GPU (`configs/gpu-turing.toml`,
/// s4k), and `--gpu-set` reaches it; a UVM config given as `--config` is refused with the
/// flag it belongs to.
#[test]
fn uvm_without_a_policy_runs_on_the_papers_gpu_and_gpu_set_reaches_it() {
    let run = |extra: &[&str]| {
        let mut a = vec![
            "run",
            "--workload",
            "ls",
            "--uvm",
            "forest",
            "--scale",
            "0.02",
        ];
        a.extend(extra);
        mcmvm(&a)
    };
    let base = run(&[]);
    let out = String::from_utf8_lossy(&base.stdout).to_string();
    assert!(
        out.contains("config: configs/gpu-turing.toml") && out.contains("policy: s4k"),
        "{out}"
    );
    let fewer = run(&["--gpu-set", "gpu.sms_per_chiplet=8"]);
    assert_ne!(cycles(&fewer), cycles(&base), "8 SMs instead of 68");
    let o = run(&["--config", "configs/uvm-turing.toml"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("--uvm-config"), "{err}");
}

#[test]
fn enumerated_flags_name_their_values_on_a_bad_one() {
    for (flag, bad, listed) in [
        ("--policy", "s65k", "s64k-coal"),
        ("--uvm", "forrest", "tbnp-aae"),
        ("--hw", "icarus", "verilator"),
    ] {
        let o = mcmvm(&["run", "--workload", "bfs", flag, bad]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{flag} {bad}: {err}");
        assert!(
            err.contains(bad) && err.contains("possible values") && err.contains(listed),
            "{flag} {bad}: {err}"
        );
    }
}
