//! `mcmvm hil`: the hardware-in-the-loop section of `make run`. One CLAP run (bfs under
//! clap on the 4-chiplet MCM GPU) and one Forest run (ls under Forest on the Forest study's
//! GPU, `configs/gpu-turing.toml` with 4 KB pages) with the blocks served by the twins, by the emitted Verilog under Verilator and
//! by both in `check` mode; prints block cycles compared, mismatches, and each engine's
//! wall time as a ratio to the twins' measured in alternating rounds in this one process
//! (the host is noisy: ratios, not absolute seconds, are the figure).

use anyhow::Context;
use mcmvm_cosim::system::{hardware, HwMode, HwOptions};
use mcmvm_models::driver::PolicyKind;
use mcmvm_models::gpu::{simulate, RunSpec};
use mcmvm_models::uvm::UvmPolicy;
use mcmvm_models::workload;
use std::path::PathBuf;
use std::time::Instant;

#[derive(clap::Args)]
pub struct Args {
    /// GPU configuration of the CLAP run.
    #[arg(long, default_value = "configs/mcm-4chiplet.toml")]
    pub config: PathBuf,
    /// GPU configuration of the Forest run (placement s4k, as the Forest sweep).
    #[arg(long, default_value = "configs/gpu-turing.toml")]
    pub gpu_config: PathBuf,
    /// UVM configuration of the Forest run.
    #[arg(long, default_value = "configs/uvm-turing.toml")]
    pub uvm_config: PathBuf,
    /// Workload size multiplier of both runs.
    #[arg(long, default_value_t = 1.0)]
    pub scale: f64,
    /// Alternating rounds of twin / verilator / check (the ratio is of medians).
    #[arg(long, default_value_t = 3)]
    pub rounds: usize,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Every CLAP and Forest workload, twin against `--hw verilator` only, with the ratio
    /// per workload and whether it meets issue #41's goal (`hil_all.rs`).
    #[arg(long)]
    pub all: bool,
    /// With --all: only these workloads (comma-separated).
    #[arg(long, value_delimiter = ',', requires = "all")]
    pub workloads: Vec<String>,
}

/// (label, mode, the twin predicts the RTL): `verilator` runs the Verilog on a thread of
/// its own behind the twin's prediction; `--hw-unpredicted` serves it on the system's.
const MODES: [(&str, HwMode, bool); 4] = [
    ("twin", HwMode::Twin, true),
    ("verilator", HwMode::Verilator, true),
    ("verilator unpredicted", HwMode::Verilator, false),
    ("check", HwMode::Check, true),
];

fn engines(mode: HwMode, predict: bool) -> mcmvm_models::blocks::Hardware {
    let mut o = HwOptions::new(mode);
    o.predict = predict;
    hardware(o)
}

/// One run's outcome: wall seconds, the simulated figures (JSON, timing removed), cycles
/// compared.
struct Outcome {
    seconds: f64,
    figures: String,
    compared: u64,
    checked: u64,
}

pub fn run(args: Args) -> anyhow::Result<u8> {
    if args.rounds == 0 {
        anyhow::bail!("--rounds 0: expected at least 1");
    }
    if args.all {
        return super::hil_all::run(&args, &args.workloads);
    }
    let gpu = super::configs::gpu(&args.config)?;
    let ucfg = super::configs::uvm(&args.uvm_config, &[])?;
    let uvm_gpu = super::sweep_forest::uvm_gpu(&args.gpu_config)?;
    let bfs = workload::by_name("bfs", args.scale, args.seed)?;
    let ls = workload::by_name("ls", args.scale, args.seed)?;
    let clap_run = |(mode, predict): (HwMode, bool)| -> anyhow::Result<Outcome> {
        let mut cfg = gpu.clone();
        cfg.engines = engines(mode, predict);
        let spec = RunSpec {
            policy: PolicyKind::Clap,
            scale: args.scale,
            seed: args.seed,
        };
        let t = Instant::now();
        let r = simulate(&cfg, bfs.as_ref(), spec).context("bfs under clap")?;
        let seconds = t.elapsed().as_secs_f64();
        Ok(Outcome {
            seconds,
            figures: figures(&r),
            compared: r.hardware.compared(),
            checked: r.hardware.reference_checked(),
        })
    };
    let forest_run = |(mode, predict): (HwMode, bool)| -> anyhow::Result<Outcome> {
        let mut cfg = ucfg.clone();
        cfg.engines = engines(mode, predict);
        let t = Instant::now();
        let m = uvm_gpu
            .run(ls.as_ref(), &cfg, UvmPolicy::Forest, args.scale, args.seed)
            .context("ls under forest")?;
        let seconds = t.elapsed().as_secs_f64();
        Ok(Outcome {
            seconds,
            figures: figures(&m),
            compared: m.hardware.compared(),
            checked: m.hardware.reference_checked(),
        })
    };
    println!(
        "hardware in the loop: scale {}, seed {}, {} alternating rounds of twin / verilator / check",
        args.scale, args.seed, args.rounds
    );
    // Build (or load) every Verilator model before timing anything.
    super::progress::note("hil: loading (or building) the Verilator models, one untimed run each");
    clap_run((HwMode::Verilator, true))?;
    forest_run((HwMode::Verilator, true))?;
    println!(
        "{:<22} {:<22} {:>8} {:>8} {:>12} {:>12} {:>9}",
        "run", "--hw", "wall s", "÷ twin", "compared", "ref-checked", "figures"
    );
    let mut same = true;
    let bar = super::progress::bar((2 * args.rounds * MODES.len()) as u64, "runs");
    for (name, run) in [
        (
            "bfs / clap (MCM GPU)",
            &clap_run as &dyn Fn((HwMode, bool)) -> anyhow::Result<Outcome>,
        ),
        ("ls / forest (UVM)", &forest_run),
    ] {
        let mut times: Vec<Vec<f64>> = vec![Vec::new(); MODES.len()];
        let mut last: Vec<Option<Outcome>> = (0..MODES.len()).map(|_| None).collect();
        for _ in 0..args.rounds {
            for (i, &(label, m, predict)) in MODES.iter().enumerate() {
                bar.set_message(format!("{name}, --hw {label}"));
                let o = run((m, predict))?;
                bar.inc(1);
                times[i].push(o.seconds);
                last[i] = Some(o);
            }
        }
        let twin_s = median(&times[0]);
        let twin_figures = last[0]
            .as_ref()
            .map(|o| o.figures.clone())
            .unwrap_or_default();
        for (i, &(label, _, _)) in MODES.iter().enumerate() {
            let Some(o) = &last[i] else { continue };
            let s = median(&times[i]);
            let identical = o.figures == twin_figures;
            same &= identical;
            println!(
                "{:<22} {:<22} {:>8.2} {:>8.2} {:>12} {:>12} {:>9}",
                name,
                label,
                s,
                s / twin_s,
                o.compared,
                o.checked,
                if identical { "= twin" } else { "DIFFER" }
            );
        }
    }
    println!("mismatches: 0 (a mismatch stops the run with exit code 1)");
    if !same {
        println!("simulated figures differ between engines");
        return Ok(1);
    }
    Ok(0)
}

pub(super) fn median(xs: &[f64]) -> f64 {
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// The simulated figures of a report (host timing and engine names removed).
pub(super) fn figures(v: &impl serde::Serialize) -> String {
    mcmvm_models::figures::simulated_figures(v).to_string()
}
