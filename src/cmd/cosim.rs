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
    /// Block to simulate: rt, coalescer or att.
    #[arg(long)]
    block: String,
    /// Comma-separated engines: model, rusthdl, verilator.
    #[arg(long, default_value = "model,rusthdl,verilator")]
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
}

/// Which stimulus generator drives the block.
#[derive(Clone, PartialEq, Eq)]
enum Stimulus {
    /// A recorded VCD (`mcmvm run --record-ports`), replayed cycle for cycle.
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
    let report = match plan.block {
        BlockKind::RemoteTracker => {
            use mcmvm_testbenches::remote_tracker as tb;
            run_block::<Rt>(
                &cfg,
                &plan,
                stimulus(&plan, tb::directed(&cfg), || tb::random(&cfg, plan.seed)),
            )
        }
        BlockKind::TlbCoalescer => {
            use mcmvm_testbenches::tlb_coalescer as tb;
            run_block::<Coalescer>(
                &cfg,
                &plan,
                stimulus(&plan, tb::directed(&cfg), || tb::random(&cfg, plan.seed)),
            )
        }
        BlockKind::AccessTimeTracker => {
            use mcmvm_testbenches::access_time_tracker as tb;
            run_block::<Att>(
                &cfg,
                &plan,
                stimulus(&plan, tb::directed(&cfg), || tb::random(&cfg, plan.seed)),
            )
        }
    }?;
    println!("cycles run: {}", report.cycles);
    let code = match &report.mismatch {
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
    };
    println!("lockstep: {:.0} cycles/s", report.cycles_per_second());
    for (engine, rate) in report.engine_rates() {
        println!("{engine}: {rate:.0} cycles/s");
    }
    if let Some(path) = &report.vcd {
        println!("vcd: {}", path.display());
    }
    // Last, so `coverage: N of M bins hit` is the final line of the output.
    if plan.coverage {
        print_coverage(&report, names[0]);
    }
    Ok(code)
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
        // A recording is replayed whole, whatever --cycles says.
        let recorded = mcmvm_cosim::replay::read_stimulus::<B::In>(path)?;
        let mut options = plan.options.clone();
        options.cycles = recorded.len() as u64;
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

/// Every argument checked before anything runs; each error is one line with the choices.
fn validate(args: &Args) -> anyhow::Result<Plan> {
    let block = BlockKind::from_short_name(&args.block).with_context(|| {
        format!(
            "unknown block `{}`: expected one of rt, coalescer, att",
            args.block
        )
    })?;
    let engines = EngineKind::parse_list(&args.engines)?;
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
