//! `mcmvm soak` (`make soak`): `--hw check` over every CLAP and Forest workload at one scale
//! (the default, 1), the emitted Verilog under Verilator beside the twins and the README
//! references watching, every output compared every block cycle. Prints each run's block
//! cycles compared and the totals; exit 1 on any mismatch or when fewer cycles than
//! `--min-cycles` were compared (a soak that compared little proves little).
//!
//! CLAP workloads run under the `clap` policy on the 4-chiplet MCM GPU (each chiplet's
//! Remote Tracker and TLB coalescer); Forest workloads under `forest` on the Forest study's
//! GPU (the driver's Access Time Tracker), as `mcmvm run --workload W --uvm forest` does.

use super::hil::Systems;
use anyhow::Context;
use mcmvm_cosim::system::{hardware, HwMode, HwOptions};
use mcmvm_models::workload::{self, clap_suite, forest_suite};
use mcmvm_protocol::system::HardwareReport;
use std::path::PathBuf;
use std::time::Instant;

#[derive(clap::Args)]
pub struct Args {
    /// GPU configuration of the CLAP runs.
    #[arg(long, default_value = "configs/mcm-4chiplet.toml")]
    pub config: PathBuf,
    /// GPU configuration of the Forest runs (placement s4k, as the Forest sweep).
    #[arg(long, default_value = "configs/gpu-turing.toml")]
    pub gpu_config: PathBuf,
    /// UVM configuration of the Forest runs.
    #[arg(long, default_value = "configs/uvm-turing.toml")]
    pub uvm_config: PathBuf,
    /// Workload size multiplier of every run (1 = the default size).
    #[arg(long, default_value_t = 1.0, value_parser = super::hil::positive_scale)]
    pub scale: f64,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Only these workloads (comma-separated, from either suite; default: both suites).
    #[arg(long)]
    pub workloads: Option<String>,
    /// Fail (exit 1) when fewer block cycles than this were compared in all.
    #[arg(long, default_value_t = 0)]
    pub min_cycles: u64,
    /// Where a mismatching block's VCD goes.
    #[arg(long, value_name = "DIR", default_value = "out/soak")]
    pub hw_check_dir: PathBuf,
}

/// One run of the soak: which, and what its checked blocks reported.
struct Outcome {
    compared: u64,
    reference_checked: u64,
    /// The `--hw check` fault that stopped the run, if any.
    mismatch: Option<String>,
    seconds: f64,
}

/// Runs, block cycles compared and checked, and mismatches, over the whole soak.
#[derive(Default)]
struct Totals {
    runs: u64,
    compared: u64,
    checked: u64,
    mismatches: u64,
}

pub fn run(args: Args) -> anyhow::Result<u8> {
    let keep = selected(args.workloads.as_deref())?;
    let systems = Systems::from_paths(
        [&args.config, &args.gpu_config, &args.uvm_config],
        super::hil::Scales::both(args.scale),
        args.seed,
    )?;
    let mut opts = HwOptions::new(HwMode::Check);
    opts.mismatch_dir = args.hw_check_dir.clone();
    let engines = hardware(opts);
    print_header(&args);
    let start = Instant::now();
    let mut totals = Totals::default();
    let clap = clap_suite().iter().map(|w| (*w, true));
    let forest = forest_suite().iter().map(|w| (*w, false));
    for (name, is_clap) in clap.chain(forest) {
        if keep.as_ref().is_some_and(|k| !k.iter().any(|w| w == name)) {
            continue;
        }
        let w = workload::by_name(name, args.scale, args.seed)?;
        let t = Instant::now();
        let outcome = if is_clap {
            let r = systems.clap_report(w.as_ref(), engines.clone());
            outcome(r.map(|r| r.hardware), &format!("{name} under clap"))?
        } else {
            let m = systems.forest_metrics(w.as_ref(), engines.clone());
            outcome(m.map(|m| m.hardware), &format!("{name} under forest"))?
        };
        let outcome = Outcome {
            seconds: t.elapsed().as_secs_f64(),
            ..outcome
        };
        totals.runs += 1;
        totals.compared += outcome.compared;
        totals.checked += outcome.reference_checked;
        totals.mismatches += u64::from(outcome.mismatch.is_some());
        print_row(name, is_clap, &outcome);
    }
    verdict(&totals, start.elapsed().as_secs_f64(), args.min_cycles)
}

fn print_header(args: &Args) {
    println!(
        "soak: --hw check, scale {}, seed {}; CLAP workloads under clap ({}), Forest workloads \
         under forest ({}, {})",
        args.scale,
        args.seed,
        args.config.display(),
        args.gpu_config.display(),
        args.uvm_config.display()
    );
    println!(
        "{:<16} {:<7} {:>14} {:>14} {:>8}  result",
        "workload", "policy", "compared", "ref-checked", "wall s"
    );
}

fn print_row(name: &str, is_clap: bool, outcome: &Outcome) {
    println!(
        "{:<16} {:<7} {:>14} {:>14} {:>8.1}  {}",
        name,
        if is_clap { "clap" } else { "forest" },
        outcome.compared,
        outcome.reference_checked,
        outcome.seconds,
        outcome.mismatch.as_deref().unwrap_or("ok")
    );
}

/// The totals line and the exit code: 1 on a mismatch or fewer than `min_cycles` compared.
fn verdict(t: &Totals, wall: f64, min_cycles: u64) -> anyhow::Result<u8> {
    println!(
        "soak: {} runs, {} block cycles compared, {} checked by the README \
         references, {} mismatches, wall {wall:.0} s",
        t.runs, t.compared, t.checked, t.mismatches
    );
    if t.runs == 0 {
        anyhow::bail!("--workloads: no workload of the CLAP or Forest suite selected");
    }
    if t.mismatches > 0 {
        return Ok(1);
    }
    if t.compared < min_cycles {
        println!("soak: fewer than --min-cycles {min_cycles} block cycles compared");
        return Ok(1);
    }
    Ok(0)
}

/// `--workloads`, each name checked against both suites.
fn selected(list: Option<&str>) -> anyhow::Result<Option<Vec<String>>> {
    let Some(list) = list else { return Ok(None) };
    let names: Vec<String> = list.split(',').map(|w| w.trim().to_string()).collect();
    for n in &names {
        if !clap_suite().contains(&n.as_str()) && !forest_suite().contains(&n.as_str()) {
            anyhow::bail!(
                "--workloads: `{n}` is in neither suite (CLAP: {}; Forest: {})",
                clap_suite().join(", "),
                forest_suite().join(", ")
            );
        }
    }
    Ok(Some(names))
}

/// A run's hardware report, or its `--hw check` fault as the finding (other errors end the
/// soak: they are not the blocks' doing).
fn outcome<E>(result: Result<HardwareReport, E>, what: &str) -> anyhow::Result<Outcome>
where
    E: std::error::Error + Send + Sync + 'static,
{
    match result {
        Ok(h) => Ok(Outcome {
            compared: h.compared(),
            reference_checked: h.reference_checked(),
            mismatch: None,
            seconds: 0.0,
        }),
        Err(e) => {
            let e = anyhow::Error::new(e);
            if super::common::is_block_mismatch(&e) || is_reference_fault(&e) {
                Ok(Outcome {
                    compared: 0,
                    reference_checked: 0,
                    mismatch: Some(format!("MISMATCH: {e:#}")),
                    seconds: 0.0,
                })
            } else {
                Err(e).with_context(|| what.to_string())
            }
        }
    }
}

/// Whether `e` is a README reference violation or a state-invariant fault of `--hw check`
/// (findings like a mismatch).
fn is_reference_fault(e: &anyhow::Error) -> bool {
    use mcmvm_models::gpu::GpuError;
    use mcmvm_models::uvm::UvmError;
    use mcmvm_protocol::system::BlockFault;
    let m = |f: &BlockFault| {
        matches!(
            f,
            BlockFault::Reference { .. } | BlockFault::Invariant { .. }
        )
    };
    e.chain().any(|c| {
        c.downcast_ref::<BlockFault>().is_some_and(m)
            || matches!(c.downcast_ref::<GpuError>(), Some(GpuError::Block(f)) if m(f))
            || matches!(c.downcast_ref::<UvmError>(), Some(UvmError::Block(f)) if m(f))
    })
}
