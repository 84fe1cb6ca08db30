//! `mcmvm hil --all`: issue #41's speed goal, workload by workload. Every CLAP workload
//! under clap on the 4-chiplet MCM GPU and every Forest workload under forest on the
//! Forest sweep's GPU (`--gpu-config`), each suite at its sweep's default scale unless
//! `--scale` sets both (CLAP 1, Forest [`FOREST_TIMING_SCALE`]), each with the twins serving and with the emitted Verilog serving
//! (`--hw verilator`: the twin predicts, the Verilator model confirms every block cycle on
//! a thread of its own). The two runs of a workload alternate in this one process, round
//! after round; the ratio is of their medians (the host is shared: never compare seconds
//! across processes). A workload passes when the ratio is at most [`GOAL`] and the
//! simulated figures are the twin's.

use super::hil::{median, Outcome, Scales, Systems};
use mcmvm_cosim::system::{hardware, HwMode, HwOptions};
use mcmvm_models::workload;
use mcmvm_study::sweep::FOREST_TIMING_SCALE;

/// Issue #41: `--hw verilator` at most this many times the twin's wall time.
pub const GOAL: f64 = 1.5;

/// A workload's twin runs are repeated (alternating with the Verilog's) until they add up
/// to this many seconds, after `--rounds` and up to [`MAX_ROUNDS`].
const MIN_SECONDS_PER_MODE: f64 = 2.0;
/// The most rounds a short workload gets.
const MAX_ROUNDS: usize = 15;

/// The suite a workload belongs to, which decides how it runs.
#[derive(Clone, Copy)]
enum Suite {
    Clap,
    Forest,
}

impl Suite {
    fn policy(self) -> &'static str {
        match self {
            Suite::Clap => "clap",
            Suite::Forest => "forest",
        }
    }
}

/// `names`: only these workloads (empty: both suites whole).
pub fn run(args: &super::hil::Args, names: &[String]) -> anyhow::Result<u8> {
    let scales = match args.scale {
        Some(s) => Scales::both(s),
        None => Scales {
            clap: 1.0,
            forest: FOREST_TIMING_SCALE,
        },
    };
    let systems = Systems::load(args, scales)?;
    let list = workload_list(names)?;
    let one = |name: &str, suite: Suite, mode: HwMode| -> anyhow::Result<Outcome> {
        let scale = match suite {
            Suite::Clap => scales.clap,
            Suite::Forest => scales.forest,
        };
        let w = workload::by_name(name, scale, args.seed)?;
        let engines = hardware(HwOptions::new(mode));
        match suite {
            Suite::Clap => systems.clap(w.as_ref(), engines),
            Suite::Forest => systems.forest(w.as_ref(), engines),
        }
    };
    println!(
        "hardware in the loop, every workload: scale {} (CLAP) / {} (Forest), seed {}, at least {} alternating rounds of twin / verilator (up to {MAX_ROUNDS} until the twin's runs add up to {MIN_SECONDS_PER_MODE} s)",
        scales.clap, scales.forest, args.seed, args.rounds
    );
    super::progress::note("hil --all: loading (or building) the Verilator models");
    one("bfs", Suite::Clap, HwMode::Verilator)?;
    one("ls", Suite::Forest, HwMode::Verilator)?;
    println!(
        "{:<14} {:<7} {:>8} {:>8} {:>8} {:>6} {:>12} {:>9}",
        "workload", "policy", "twin s", "rtl s", "÷ twin", "≤ 1.5", "block cyc", "figures"
    );
    let (mut within, mut same) = (0, true);
    for &(name, suite) in &list {
        let run = |mode| one(name, suite, mode);
        let ((twin, rtl), (t, r)) = alternate(args.rounds, &run)?;
        let identical = t.figures == r.figures;
        same &= identical;
        within += usize::from(rtl / twin <= GOAL);
        print_row(name, suite, (twin, rtl), identical, &r);
    }
    println!(
        "{within} of {} workloads within {GOAL}x of the twin's wall time",
        list.len()
    );
    if !same {
        println!("simulated figures differ between engines");
        return Ok(1);
    }
    Ok(0)
}

/// The median seconds of the twin's and the Verilog's runs, and the last outcome of each.
type Alternated = ((f64, f64), (Outcome, Outcome));

/// Twin and Verilog runs of one workload alternating, at least `rounds` of each (and at
/// least one); short runs (a Forest workload at 0.05 takes ~0.1 s) get more rounds, so that
/// a scheduler hiccup is one sample of many rather than half the median. The median seconds
/// of each mode and the last outcome of each.
fn alternate(
    rounds: usize,
    run: &dyn Fn(HwMode) -> anyhow::Result<Outcome>,
) -> anyhow::Result<Alternated> {
    let (mut twin, mut rtl) = (Vec::new(), Vec::new());
    loop {
        let t = run(HwMode::Twin)?;
        twin.push(t.seconds);
        let r = run(HwMode::Verilator)?;
        rtl.push(r.seconds);
        let more = twin.len() < rounds
            || (twin.len() < MAX_ROUNDS && twin.iter().sum::<f64>() < MIN_SECONDS_PER_MODE);
        if !more {
            return Ok(((median(&twin), median(&rtl)), (t, r)));
        }
    }
}

/// Both suites' workloads in order, or only `names` (each checked to be one of them).
fn workload_list(names: &[String]) -> anyhow::Result<Vec<(&'static str, Suite)>> {
    let mut list: Vec<(&str, Suite)> = workload::clap_suite()
        .iter()
        .map(|w| (*w, Suite::Clap))
        .chain(workload::forest_suite().iter().map(|w| (*w, Suite::Forest)))
        .collect();
    if let Some(bad) = names.iter().find(|n| !list.iter().any(|(w, _)| w == n)) {
        anyhow::bail!("--workloads: unknown workload `{bad}` (see `mcmvm workloads`)");
    }
    if !names.is_empty() {
        list.retain(|(w, _)| names.iter().any(|n| n == w));
    }
    Ok(list)
}

/// One workload's row: median seconds `(twin, rtl)`, their ratio against [`GOAL`], block
/// cycles stepped and whether the figures are the twin's.
fn print_row(name: &str, suite: Suite, (twin, rtl): (f64, f64), identical: bool, r: &Outcome) {
    let ratio = rtl / twin;
    let stepped: u64 = r.hardware.blocks.iter().map(|b| b.block_cycles).sum();
    println!(
        "{:<14} {:<7} {:>8.2} {:>8.2} {:>8.2} {:>6} {:>12} {:>9}{}",
        name,
        suite.policy(),
        twin,
        rtl,
        ratio,
        if ratio <= GOAL { "yes" } else { "NO" },
        stepped,
        if identical { "= twin" } else { "DIFFER" },
        r.hardware
            .repeated_after
            .as_deref()
            .map(|why| format!("  (repeated unpredicted: {why})"))
            .unwrap_or_default()
    );
}
