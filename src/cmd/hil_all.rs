//! `mcmvm hil --all`: issue #41's speed goal, workload by workload. Every CLAP workload
//! under clap on the 4-chiplet MCM GPU and every Forest workload under forest on the
//! Forest sweep's GPU (`--gpu-config`), each with the twins serving and with the emitted Verilog serving
//! (`--hw verilator`: the twin predicts, the Verilator model confirms every block cycle on
//! a thread of its own). The two runs of a workload alternate in this one process, round
//! after round; the ratio is of their medians (the host is shared: never compare seconds
//! across processes). A workload passes when the ratio is at most [`GOAL`] and the
//! simulated figures are the twin's.

use super::hil::{median, Outcome, Systems};
use mcmvm_cosim::system::{hardware, HwMode, HwOptions};
use mcmvm_models::workload;

/// Issue #41: `--hw verilator` at most this many times the twin's wall time.
pub const GOAL: f64 = 1.5;

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
    let systems = Systems::load(args)?;
    let list = workload_list(names)?;
    let one = |name: &str, suite: Suite, mode: HwMode| -> anyhow::Result<Outcome> {
        let w = workload::by_name(name, args.scale, args.seed)?;
        let engines = hardware(HwOptions::new(mode));
        match suite {
            Suite::Clap => systems.clap(w.as_ref(), engines),
            Suite::Forest => systems.forest(w.as_ref(), engines),
        }
    };
    println!(
        "hardware in the loop, every workload: scale {}, seed {}, {} alternating rounds of twin / verilator",
        args.scale, args.seed, args.rounds
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
        let (mut twin, mut rtl) = (Vec::new(), Vec::new());
        let (mut t_last, mut r_last) = (None, None);
        for _ in 0..args.rounds {
            let t = one(name, suite, HwMode::Twin)?;
            twin.push(t.seconds);
            t_last = Some(t);
            let r = one(name, suite, HwMode::Verilator)?;
            rtl.push(r.seconds);
            r_last = Some(r);
        }
        let (Some(t), Some(r)) = (t_last, r_last) else {
            continue;
        };
        let ratio = median(&rtl) / median(&twin);
        let identical = t.figures == r.figures;
        same &= identical;
        within += usize::from(ratio <= GOAL);
        print_row(name, suite, (median(&twin), median(&rtl)), identical, &r);
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
