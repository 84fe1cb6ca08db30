//! `mcmvm cosim`: lockstep co-simulation of one hardware block through the chosen engines.
//!
//! Arguments are taken as text and validated here so that every bad value gives one line
//! naming what was wrong and the valid choices (clap's own errors span several lines).

use anyhow::{bail, Context};
use mcmvm_cosim::lockstep::lockstep_with_reference;
use mcmvm_cosim::{Att, Coalescer, CosimBlock, EngineKind, LockstepOptions, Rt};
use mcmvm_models::config::HwConfig;
use mcmvm_models::protocol::BlockKind;
use std::path::{Path, PathBuf};

/// The seed used when none is given; printed so a run can be repeated.
const DEFAULT_SEED: &str = "1";
/// The configuration read when `--config` is not given.
const DEFAULT_CONFIG: &str = "configs/hw.toml";

#[derive(clap::Args)]
pub struct Args {
    /// Block to simulate: rt, coalescer or att (with --mutants: only that block's mutants).
    #[arg(long)]
    block: Option<String>,
    /// Comma-separated engines: twin, rusthdl, verilator.
    #[arg(long, default_value = "twin,rusthdl,verilator")]
    engines: String,
    /// Cycles to run at most (a directed stimulus may end earlier); at least 1.
    #[arg(long, default_value = "100000")]
    cycles: String,
    /// Seed of the random stimulus.
    #[arg(long, default_value = DEFAULT_SEED)]
    seed: String,
    /// Stimulus: random or directed.
    #[arg(long, default_value = "random")]
    stimulus: String,
    /// Write the inputs and every engine's outputs to this VCD file.
    #[arg(long)]
    vcd: Option<PathBuf>,
    /// Hardware parameters (built-in defaults if the default path does not exist).
    #[arg(long)]
    config: Option<PathBuf>,
    /// Run the block's reference monitor (written from its README) on the first engine and
    /// print its functional-coverage bins; a monitor violation counts as a mismatch.
    #[arg(long)]
    coverage: bool,
    /// Run hand-written mutants of the emitted Verilog (`all`, the default, or names,
    /// comma-separated) under the README monitor on the testbench stimulus and in a short
    /// `--hw check` system run; exit 1 if one escapes both (docs/verification.md).
    #[arg(long, num_args = 0..=1, default_missing_value = "all", value_name = "LIST")]
    mutants: Option<String>,
    /// With --mutants: workload scale of the system runs.
    #[arg(long, default_value = "0.1", value_name = "S")]
    mutant_scale: String,
}

/// Which stimulus generator drives the block.
#[derive(Clone, PartialEq, Eq)]
enum Stimulus {
    /// A recorded VCD (`mcmvm run --record-ports`), played back cycle for cycle.
    File(PathBuf),
    Random,
    Directed,
}

/// `Args` after validation.
struct Plan {
    block: BlockKind,
    stimulus: Stimulus,
    seed: u64,
    options: LockstepOptions,
    /// `--coverage`: monitor the run and print the bins.
    coverage: bool,
}

pub fn run(args: Args) -> anyhow::Result<u8> {
    if let Some(list) = &args.mutants {
        return run_mutants(&args, list);
    }
    let plan = validate(&args)?;
    let cfg = load_config(args.config.as_deref())?;
    let names: Vec<&str> = plan.options.engines.iter().map(|e| e.name()).collect();
    println!(
        "block: {} ({})",
        plan.block.short_name(),
        plan.block.module_name()
    );
    println!("engines: {}", names.join(", "));
    match &plan.stimulus {
        Stimulus::Random => println!("stimulus: random, seed {}", plan.seed),
        Stimulus::Directed => println!("stimulus: directed"),
        Stimulus::File(p) => println!("stimulus: {}", p.display()),
    }
    let report = run_config(&cfg, &plan)?;
    println!("cycles run: {}", report.cycles);
    let code = print_mismatch(&report);
    println!("lockstep: {:.0} cycles/s", report.cycles_per_second());
    for (engine, rate) in report.engine_rates() {
        println!("{engine}: {rate:.0} cycles/s");
    }
    if let Some(path) = &report.vcd {
        println!("vcd: {}", path.display());
    }
    // Last, so `coverage: N of M bins hit` is the final line of the output.
    if !plan.coverage {
        return Ok(code);
    }
    print_coverage(&report, names[0]);
    match narrow(&cfg, plan.block) {
        Some((narrow_cfg, what)) if !matches!(plan.stimulus, Stimulus::File(_)) => {
            // The same stimulus again on a configuration whose counters or timers saturate
            // within a run: bins the given widths cannot reach (2^32 walks of one ID).
            println!("narrow configuration ({what}): the same stimulus again");
            let narrow_report = run_config(&narrow_cfg, &plan)?;
            println!("cycles run: {}", narrow_report.cycles);
            let narrow_code = print_mismatch(&narrow_report);
            print_coverage(&narrow_report, names[0]);
            if let (Some(mut union), Some(n)) = (report.coverage.clone(), &narrow_report.coverage) {
                union.merge(n);
                println!("coverage bins (union of both configurations):");
                println!("{union}");
            }
            Ok(code.max(narrow_code))
        }
        _ => Ok(code),
    }
}

/// A configuration of `block` whose counters (RT) or timers (ATT) saturate within a
/// test-sized run, with fewer rows (the table fills) and, for the ATT, object numbers
/// beyond the table; None when `cfg` already is that narrow, or the block has no such bin
/// (the coalescer's bins do not depend on a width).
fn narrow(cfg: &HwConfig, block: BlockKind) -> Option<(HwConfig, &'static str)> {
    let mut n = cfg.clone();
    match block {
        BlockKind::RemoteTracker if cfg.remote_tracker.counter_bits > NARROW_BITS => {
            n.remote_tracker.entries = cfg.remote_tracker.entries.min(8);
            n.remote_tracker.counter_bits = NARROW_BITS;
            n.remote_tracker.report_evictions = true;
            Some((
                n,
                "rt: at most 8 entries, 4-bit counters, evictions reported",
            ))
        }
        BlockKind::AccessTimeTracker
            if cfg.access_time_tracker.timer_bits > NARROW_BITS
                || cfg.access_time_tracker.objects >= 32 =>
        {
            n.access_time_tracker.objects = cfg.access_time_tracker.objects.min(4);
            n.access_time_tracker.timer_bits = NARROW_BITS;
            n.access_time_tracker.profiling_threshold = 5;
            Some((n, "att: at most 4 objects, 4-bit timers, threshold 5"))
        }
        _ => None,
    }
}

/// Counter and timer width of the narrow configuration: saturates after 15 steps.
const NARROW_BITS: u32 = 4;

/// `mismatches: N` and the first mismatch; the exit code it gives.
fn print_mismatch(report: &mcmvm_cosim::LockstepReport) -> u8 {
    match &report.mismatch {
        None => {
            println!("mismatches: 0");
            0
        }
        Some(m) => {
            println!("mismatches: 1 (the run stops at the first)");
            println!("first mismatch: cycle {}, signal {}", m.cycle, m.signal);
            if let Some(v) = &report.invariant {
                println!("  {v}");
            }
            for (engine, value) in &m.values {
                println!("  {engine}: {value} ({value:#x})");
            }
            1
        }
    }
}

/// Run the plan's block and stimulus on the engines for parameters `cfg`.
fn run_config(cfg: &HwConfig, plan: &Plan) -> anyhow::Result<mcmvm_cosim::LockstepReport> {
    match plan.block {
        BlockKind::RemoteTracker => {
            use mcmvm_testbenches::remote_tracker as tb;
            run_block::<Rt>(
                cfg,
                plan,
                stimulus(plan, tb::directed(cfg), || tb::random(cfg, plan.seed)),
            )
        }
        BlockKind::TlbCoalescer => {
            use mcmvm_testbenches::tlb_coalescer as tb;
            run_block::<Coalescer>(
                cfg,
                plan,
                stimulus(plan, tb::directed(cfg), || tb::random(cfg, plan.seed)),
            )
        }
        BlockKind::AccessTimeTracker => {
            use mcmvm_testbenches::access_time_tracker as tb;
            run_block::<Att>(
                cfg,
                plan,
                stimulus(plan, tb::directed(cfg), || tb::random(cfg, plan.seed)),
            )
        }
    }
}

/// `--coverage`: the monitor's violation (its README rule), every bin with its count, the
/// bins never hit and the `coverage: N of M bins hit` line.
fn print_coverage(report: &mcmvm_cosim::LockstepReport, first_engine: &str) {
    if let Some(v) = &report.violation {
        println!("reference violation: {v}");
    }
    match &report.coverage {
        Some(c) => {
            println!("coverage bins (reference monitor on {first_engine}, hit count):");
            println!("{c}");
        }
        // `run_block` always asks for the monitor with --coverage; say so if it did not run.
        None => println!("coverage: no reference monitor ran"),
    }
}

/// The chosen stimulus as one boxed iterator.
fn stimulus<'a, I: 'a, R: Iterator<Item = I> + 'a>(
    plan: &Plan,
    directed: Vec<I>,
    random: impl FnOnce() -> R,
) -> Box<dyn Iterator<Item = I> + 'a> {
    match plan.stimulus {
        Stimulus::Directed => Box::new(directed.into_iter()),
        Stimulus::Random => Box::new(random()),
        // Read before the lockstep starts (`recorded`).
        Stimulus::File(_) => Box::new(std::iter::empty()),
    }
}

fn run_block<B: CosimBlock>(
    cfg: &HwConfig,
    plan: &Plan,
    stimulus: Box<dyn Iterator<Item = B::In> + '_>,
) -> anyhow::Result<mcmvm_cosim::LockstepReport> {
    if let Stimulus::File(path) = &plan.stimulus {
        // A recording is played back whole, whatever --cycles says.
        let recorded = mcmvm_cosim::stimulus::read_stimulus::<B::In>(path)?;
        let mut options = plan.options.clone();
        options.cycles = recorded.len();
        println!("recorded cycles: {}", recorded.len());
        return Ok(lockstep_with_reference::<B>(
            cfg,
            &options,
            plan.coverage,
            recorded.into_iter(),
        )?);
    }
    Ok(lockstep_with_reference::<B>(
        cfg,
        &plan.options,
        plan.coverage,
        stimulus,
    )?)
}

/// `--mutants LIST`: the mutants of `mcmvm_cosim::rtl_mutants` through checks (a) and (b).
fn run_mutants(args: &Args, list: &str) -> anyhow::Result<u8> {
    let block = args.block.as_deref().map(parse_block).transpose()?;
    let plan = validate_common(args)?;
    let system_scale: f64 = args
        .mutant_scale
        .parse()
        .ok()
        .filter(|s: &f64| *s > 0.0 && s.is_finite())
        .with_context(|| {
            format!(
                "--mutant-scale `{}`: expected a positive number",
                args.mutant_scale
            )
        })?;
    let cfg = load_config(args.config.as_deref())?;
    let mutants = super::cosim_mutants::MutantPlan {
        mutants: super::cosim_mutants::select(list, block)?,
        cycles: plan.1,
        seed: plan.2,
        system_scale,
    };
    super::cosim_mutants::run(&cfg, |b| narrow(&cfg, b).map(|n| n.0), &mutants)
}

fn parse_block(name: &str) -> anyhow::Result<BlockKind> {
    BlockKind::from_short_name(name)
        .with_context(|| format!("unknown block `{name}`: expected one of rt, coalescer, att"))
}

/// --engines, --cycles and --seed, checked.
fn validate_common(args: &Args) -> anyhow::Result<(Vec<EngineKind>, u64, u64)> {
    let engines = EngineKind::parse_list(&args.engines)?;
    let cycles: u64 = args.cycles.parse().ok().with_context(|| {
        format!(
            "--cycles `{}`: expected a whole number of cycles, at least 1",
            args.cycles
        )
    })?;
    if cycles == 0 {
        bail!("--cycles 0: expected a whole number of cycles, at least 1");
    }
    let seed: u64 = args.seed.parse().ok().with_context(|| {
        format!(
            "--seed `{}`: expected a whole number 0..=18446744073709551615",
            args.seed
        )
    })?;
    Ok((engines, cycles, seed))
}

/// Every argument checked before anything runs; each error is one line with the choices.
fn validate(args: &Args) -> anyhow::Result<Plan> {
    let block = parse_block(
        args.block
            .as_deref()
            .context("--block is required: one of rt, coalescer, att")?,
    )?;
    let (engines, cycles, seed) = validate_common(args)?;
    let stimulus = match args.stimulus.as_str() {
        "random" => Stimulus::Random,
        "directed" => Stimulus::Directed,
        other
            if other.ends_with(".vcd")
                || other.ends_with(".vcd.gz")
                || Path::new(other).is_file() =>
        {
            Stimulus::File(PathBuf::from(other))
        }
        other => bail!(
            "unknown stimulus `{other}`: expected one of random, directed, or a recorded .vcd file"
        ),
    };
    Ok(Plan {
        block,
        stimulus,
        seed,
        options: LockstepOptions {
            engines,
            cycles,
            vcd: args.vcd.clone(),
        },
        coverage: args.coverage,
    })
}

/// `--config PATH` must exist; the default path falls back to the built-in defaults.
fn load_config(given: Option<&Path>) -> anyhow::Result<HwConfig> {
    let path = given.unwrap_or(Path::new(DEFAULT_CONFIG));
    if given.is_none() && !path.exists() {
        println!("config: {DEFAULT_CONFIG} not found, using built-in defaults");
        return Ok(HwConfig::default());
    }
    let cfg = super::configs::hw(path)?;
    println!("config: {}", path.display());
    Ok(cfg)
}
