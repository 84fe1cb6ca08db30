//! mcmvm — hardware/software co-simulation of GPU virtual memory.
//!
//! `main` is thin: parse → validated config → dispatch → exit code. Each subcommand lives in
//! its own module under `cmd/`; errors print on one line and exit with code 2.

use clap::{Parser, Subcommand};
use std::process::ExitCode;

mod cmd;
mod host_pages;

#[derive(Parser)]
#[command(
    name = "mcmvm",
    version,
    about = "GPU virtual-memory co-simulation: CLAP, Forest, amdgpu fragments"
)]
struct Cli {
    /// No progress bars or informational lines on stderr (results and errors only).
    #[arg(long, global = true)]
    quiet: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Emit the Verilog of the three hardware blocks.
    Verilog(cmd::verilog::Args),
    /// Lint the emitted Verilog with Verilator -Wall and yosys check.
    Lint(cmd::lint::Args),
    /// Synthesise the blocks with yosys to osu018 standard cells and report area.
    Synth(cmd::synth::Args),
    /// Lockstep co-simulation of a block: twin, rust-hdl, Verilator.
    Cosim(cmd::cosim::Args),
    /// Hardware summary: Verilog, lint, synthesis and co-simulation of all blocks.
    Hw(cmd::hw::Args),
    /// Show the page-table writes of mapping one range, amdgpu style.
    Pagetable(cmd::pagetable::Args),
    /// List the built-in workloads and their allocations.
    Workloads(cmd::workloads::Args),
    /// Simulate one workload under one policy.
    Run(cmd::run::Args),
    /// Run a whole study (every workload × policy) in parallel.
    Sweep(cmd::sweep::Args),
    /// Hardware in the loop: a CLAP and a Forest run with the blocks as twins, as the
    /// emitted Verilog and checked side by side; wall-time ratios.
    Hil(cmd::hil::Args),
    /// `--hw check` over every CLAP and Forest workload: block cycles compared, mismatches.
    Soak(cmd::soak::Args),
    /// The built-in configurations: list them, or print one to start your own.
    Config(cmd::configs::Args),
    /// Explain one prefetch decision of a UVM prefetcher on a 2 MB block.
    Prefetch(cmd::prefetch::Args),
    /// SVG figures and out/report.html from the files the studies wrote.
    Report(cmd::report::Args),
    /// Microbenchmarks through the GPU model: latency staircases and throughputs.
    Characterize(cmd::characterize::Args),
    /// Fit the timing model's unknown parameters to the CLAP paper's baseline figures.
    Calibrate(cmd::calibrate::Args),
    /// One block's parameter grid: area, timing, power and system effect per point, the
    /// Pareto front and a recommendation.
    Codesign(cmd::codesign::Args),
}

fn main() -> ExitCode {
    // Behave like a Unix filter when the reader goes away (`mcmvm ... | head`): die quietly
    // on SIGPIPE instead of panicking inside println!.
    // SAFETY: resetting a signal disposition to its default before any thread is started.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let cli = Cli::parse();
    cmd::progress::set_quiet(cli.quiet);
    let result = match cli.command {
        Command::Verilog(a) => cmd::verilog::run(a),
        Command::Lint(a) => cmd::lint::run(a),
        Command::Synth(a) => cmd::synth::run(a),
        Command::Cosim(a) => cmd::cosim::run(a),
        Command::Hw(a) => cmd::hw::run(a),
        Command::Pagetable(a) => cmd::pagetable::run(a),
        Command::Workloads(a) => cmd::workloads::run(a),
        Command::Run(a) => cmd::run::run(a),
        Command::Sweep(a) => cmd::sweep::run(a),
        Command::Hil(a) => cmd::hil::run(a),
        Command::Soak(a) => cmd::soak::run(a),
        Command::Config(a) => cmd::configs::run(a),
        Command::Prefetch(a) => cmd::prefetch::run(a),
        Command::Report(a) => cmd::report::run(a),
        Command::Characterize(a) => cmd::characterize::run(a),
        Command::Calibrate(a) => cmd::calibrate::run(a),
        Command::Codesign(a) => cmd::codesign::run(a),
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            // One line: the error and its causes, joined — minus causes the message above
            // them already quotes (library errors often print their source themselves).
            let mut line = e.to_string();
            for cause in e.chain().skip(1) {
                let cause = cause.to_string();
                if !line.contains(&cause) {
                    line.push_str(": ");
                    line.push_str(&cause);
                }
            }
            eprintln!("error: {line}");
            // A `--hw check` mismatch is the run's finding, not bad input.
            ExitCode::from(if cmd::common::is_block_mismatch(&e) {
                1
            } else {
                2
            })
        }
    }
}
