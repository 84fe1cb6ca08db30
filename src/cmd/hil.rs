//! `mcmvm hil`: the hardware-in-the-loop section of `make run`. One CLAP run (bfs under
//! clap on the 4-chiplet MCM GPU) and one Forest run (ls under Forest on the Forest study's
//! GPU, `configs/gpu-turing.toml` with 4 KB pages) with the blocks served by the twins, by the emitted Verilog under Verilator and
//! by both in `check` mode; prints block cycles compared, mismatches, and each engine's
//! wall time as a ratio to the twins' measured in alternating rounds in this one process
//! (the host is noisy: ratios, not absolute seconds, are the figure).

use anyhow::Context;
use mcmvm_cosim::system::{hardware, HwMode, HwOptions};
use mcmvm_models::blocks::Hardware;
use mcmvm_models::driver::PolicyKind;
use mcmvm_models::gpu::{simulate, GpuConfig, GpuError, RunReport, RunSpec};
use mcmvm_models::uvm::{UvmConfig, UvmError, UvmGpu, UvmMetrics, UvmPolicy};
use mcmvm_models::workload::{self, Workload};
use mcmvm_protocol::system::HardwareReport;
use std::path::{Path, PathBuf};
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
    /// Workload size multiplier of both runs. Default: 1; with --all, each suite at its
    /// sweep's default (CLAP 1, Forest 0.05, as `mcmvm sweep` runs them).
    #[arg(long, value_parser = positive_scale)]
    pub scale: Option<f64>,
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

fn engines(mode: HwMode, predict: bool) -> Hardware {
    let mut o = HwOptions::new(mode);
    o.predict = predict;
    hardware(o)
}

/// One run's outcome: wall seconds, the simulated figures (JSON, timing removed), and
/// which engines served the blocks and what they compared.
pub(super) struct Outcome {
    pub(super) seconds: f64,
    pub(super) figures: String,
    pub(super) hardware: HardwareReport,
}

/// The two systems the HIL runs drive: placement under clap on the MCM GPU (`--config`),
/// and UVM under Forest on the Forest study's GPU (`--gpu-config`, `--uvm-config`).
pub(super) struct Systems {
    gpu: GpuConfig,
    ucfg: UvmConfig,
    uvm_gpu: UvmGpu,
    /// Workload size of the CLAP runs and of the Forest runs.
    scales: Scales,
    seed: u64,
}

/// `--scale` of `hil` and `soak`: a workload size multiplier, positive and finite.
pub(super) fn positive_scale(s: &str) -> anyhow::Result<f64> {
    match s.parse::<f64>() {
        Ok(x) if x > 0.0 && x.is_finite() => Ok(x),
        _ => anyhow::bail!("expected a positive number"),
    }
}

/// The workload size multiplier of each suite's runs.
#[derive(Clone, Copy)]
pub(super) struct Scales {
    pub(super) clap: f64,
    pub(super) forest: f64,
}

impl Scales {
    /// Both suites at one size.
    pub(super) fn both(scale: f64) -> Self {
        Scales {
            clap: scale,
            forest: scale,
        }
    }
}

impl Systems {
    pub(super) fn load(args: &Args, scales: Scales) -> anyhow::Result<Self> {
        Self::from_paths(
            [&args.config, &args.gpu_config, &args.uvm_config],
            scales,
            args.seed,
        )
    }

    /// From the `[--config, --gpu-config, --uvm-config]` files.
    pub(super) fn from_paths(
        [config, gpu_config, uvm_config]: [&Path; 3],
        scales: Scales,
        seed: u64,
    ) -> anyhow::Result<Self> {
        Ok(Systems {
            gpu: super::configs::gpu(config)?,
            ucfg: super::configs::uvm(uvm_config, &[])?,
            uvm_gpu: super::sweep::uvm_gpu(gpu_config)?,
            scales,
            seed,
        })
    }

    /// The GPU report of `w` under clap, its blocks served by `engines`.
    pub(super) fn clap_report(
        &self,
        w: &dyn Workload,
        engines: Hardware,
    ) -> Result<RunReport, GpuError> {
        let mut cfg = self.gpu.clone();
        cfg.engines = engines;
        let spec = RunSpec {
            policy: PolicyKind::Clap,
            scale: self.scales.clap,
            seed: self.seed,
        };
        simulate(&cfg, w, spec)
    }

    /// The UVM metrics of `w` under Forest, its blocks served by `engines`.
    pub(super) fn forest_metrics(
        &self,
        w: &dyn Workload,
        engines: Hardware,
    ) -> Result<UvmMetrics, UvmError> {
        let mut cfg = self.ucfg.clone();
        cfg.engines = engines;
        self.uvm_gpu
            .run(w, &cfg, UvmPolicy::Forest, self.scales.forest, self.seed)
    }

    /// `w` under clap on the MCM GPU, its blocks served by `engines`.
    pub(super) fn clap(&self, w: &dyn Workload, engines: Hardware) -> anyhow::Result<Outcome> {
        let t = Instant::now();
        let r = self
            .clap_report(w, engines)
            .with_context(|| format!("{} under clap", w.name()))?;
        Ok(Outcome {
            seconds: t.elapsed().as_secs_f64(),
            figures: figures(&r),
            hardware: r.hardware,
        })
    }

    /// `w` under UVM with Forest on the Forest study's GPU, its blocks served by `engines`.
    pub(super) fn forest(&self, w: &dyn Workload, engines: Hardware) -> anyhow::Result<Outcome> {
        let t = Instant::now();
        let m = self
            .forest_metrics(w, engines)
            .with_context(|| format!("{} under forest", w.name()))?;
        Ok(Outcome {
            seconds: t.elapsed().as_secs_f64(),
            figures: figures(&m),
            hardware: m.hardware,
        })
    }
}

/// One HIL run of a workload under a `(mode, predict)` pair of [`MODES`].
type ModeRun<'a> = dyn Fn((HwMode, bool)) -> anyhow::Result<Outcome> + 'a;

pub fn run(args: Args) -> anyhow::Result<u8> {
    if args.rounds == 0 {
        anyhow::bail!("--rounds 0: expected at least 1");
    }
    if args.all {
        return super::hil_all::run(&args, &args.workloads);
    }
    let scale = args.scale.unwrap_or(1.0);
    let systems = Systems::load(&args, Scales::both(scale))?;
    let bfs = workload::by_name("bfs", scale, args.seed)?;
    let ls = workload::by_name("ls", scale, args.seed)?;
    let clap_run = |(m, p): (HwMode, bool)| systems.clap(bfs.as_ref(), engines(m, p));
    let forest_run = |(m, p): (HwMode, bool)| systems.forest(ls.as_ref(), engines(m, p));
    println!(
        "hardware in the loop: scale {}, seed {}, {} alternating rounds of twin / verilator / check",
        scale, args.seed, args.rounds
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
    let systems: [(&str, &ModeRun<'_>); 2] = [
        ("bfs / clap (MCM GPU)", &clap_run),
        ("ls / forest (UVM)", &forest_run),
    ];
    for (name, run) in systems {
        let (times, last) = alternate_modes(name, run, args.rounds, &bar)?;
        same &= print_modes(name, &times, &last);
    }
    println!("mismatches: 0 (a mismatch stops the run with exit code 1)");
    if !same {
        println!("simulated figures differ between engines");
        return Ok(1);
    }
    Ok(0)
}

/// Each mode's wall times (in [`MODES`] order) and its last outcome.
type ModeRounds = (Vec<Vec<f64>>, Vec<Option<Outcome>>);

/// Wall times of every mode, one run each round in [`MODES`] order, and each mode's last
/// outcome.
fn alternate_modes(
    name: &str,
    run: &ModeRun<'_>,
    rounds: usize,
    bar: &indicatif::ProgressBar,
) -> anyhow::Result<ModeRounds> {
    let mut times: Vec<Vec<f64>> = vec![Vec::new(); MODES.len()];
    let mut last: Vec<Option<Outcome>> = (0..MODES.len()).map(|_| None).collect();
    for _ in 0..rounds {
        for (i, &(label, m, predict)) in MODES.iter().enumerate() {
            bar.set_message(format!("{name}, --hw {label}"));
            let o = run((m, predict))?;
            bar.inc(1);
            times[i].push(o.seconds);
            last[i] = Some(o);
        }
    }
    Ok((times, last))
}

/// One row per mode: median wall time, its ratio to the twin's, cycles compared and
/// checked; whether every mode's figures are the twin's.
fn print_modes(name: &str, times: &[Vec<f64>], last: &[Option<Outcome>]) -> bool {
    let twin_s = median(&times[0]);
    let twin_figures = last[0]
        .as_ref()
        .map(|o| o.figures.clone())
        .unwrap_or_default();
    let mut same = true;
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
            o.hardware.compared(),
            o.hardware.reference_checked(),
            if identical { "= twin" } else { "DIFFER" }
        );
    }
    same
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
