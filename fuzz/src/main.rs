//! `mcmvm-fuzz`: every parser of a user's file under generated and mutated inputs
//! (`make fuzz`). Prints, per target, inputs tried, panics, hangs, peak memory; exits 1 on
//! any failure, saving each failing input under `target/fuzz-crashes/`.

use anyhow::{bail, Context};
use clap::Parser;
use mcmvm_fuzz::runner::{default_crash_dir, run_target, Plan, Stats};
use mcmvm_fuzz::targets::{by_name, TARGETS};
use std::time::{Duration, Instant};

#[derive(Parser)]
#[command(about = "Fuzz every mcmvm parser")]
struct Args {
    /// Inputs in all, shared equally by the targets.
    #[arg(long, default_value_t = 1_000_000)]
    inputs: u64,
    /// PRNG seed (input i of target t is made from (seed, t, i) alone).
    #[arg(long, default_value_t = 40)]
    seed: u64,
    /// Worker threads.
    #[arg(long, default_value_t = 2)]
    workers: usize,
    /// Seconds one input may run before it counts as a hang.
    #[arg(long, default_value_t = 20)]
    hang_secs: u64,
    /// Only these targets (comma-separated).
    #[arg(long)]
    target: Option<String>,
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let chosen = chosen_targets(&args)?;
    if args.workers == 0 {
        bail!("--workers must be at least 1");
    }
    let per_target = args.inputs.div_ceil(chosen.len() as u64);
    let crash_dir = default_crash_dir();
    print_header(&args, per_target, &crash_dir);
    let mut failed = 0;
    let mut total = 0;
    let started = Instant::now();
    for t in chosen {
        let plan = Plan {
            seed: args.seed,
            inputs: per_target,
            workers: args.workers,
            hang_limit: Duration::from_secs(args.hang_secs),
            crash_dir: crash_dir.clone(),
        };
        let t0 = Instant::now();
        let s = run_target(t, &plan);
        total += s.inputs;
        failed += s.failed();
        print_target(t, &s, t0.elapsed().as_secs_f64());
    }
    println!(
        "total: {total} inputs in {:.0} s, {failed} failures, 0 hangs (a hang ends the run)",
        started.elapsed().as_secs_f64()
    );
    if failed > 0 {
        std::process::exit(1);
    }
    Ok(())
}

/// The targets `--target` names (all without it), as indices into `TARGETS`.
fn chosen_targets(args: &Args) -> anyhow::Result<Vec<usize>> {
    match &args.target {
        Some(list) => list
            .split(',')
            .map(|n| {
                by_name(n.trim()).map(|(i, _)| i).with_context(|| {
                    let names: Vec<_> = TARGETS.iter().map(|t| t.name()).collect();
                    format!("unknown target `{n}`: expected one of {}", names.join(", "))
                })
            })
            .collect(),
        None => Ok((0..TARGETS.len()).collect()),
    }
}

/// The run's settings and the table's column names.
fn print_header(args: &Args, per_target: u64, crash_dir: &std::path::Path) {
    println!(
        "mcmvm-fuzz: seed {}, {} inputs per target, {} workers, hang limit {} s, failures saved under {}",
        args.seed,
        per_target,
        args.workers,
        args.hang_secs,
        crash_dir.display()
    );
    println!(
        "{:<12} {:>9} {:>9} {:>9} {:>7} {:>6} {:>7} {:>9} {:>9} {:>12} {:>7}",
        "target",
        "inputs",
        "accepted",
        "rejected",
        "panics",
        "hangs",
        "memory",
        "messages",
        "readback",
        "peak memory",
        "secs"
    );
}

/// One target's row, its peak-memory line and its failures.
fn print_target(t: usize, s: &Stats, secs: f64) {
    println!(
        "{:<12} {:>9} {:>9} {:>9} {:>7} {:>6} {:>7} {:>9} {:>9} {:>9} KB {:>7.1}",
        TARGETS[t].name(),
        s.inputs,
        s.accepted,
        s.rejected,
        s.panics,
        0,
        s.memory,
        s.messages,
        s.readbacks,
        s.peak_bytes.div_ceil(1024),
        secs
    );
    println!(
        "{:<12} peak memory for a {} KB input; largest input {} KB",
        "",
        s.peak_input_bytes.div_ceil(1024),
        s.max_input_bytes.div_ceil(1024)
    );
    for f in &s.failures {
        println!(
            "  FAIL {:?} input {}: {} (saved to {})",
            f.kind,
            f.index,
            f.detail,
            f.saved.display()
        );
    }
}
