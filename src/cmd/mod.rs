//! One module per subcommand. Each exposes `Args` (clap) and `run(Args) -> anyhow::Result<u8>`
//! returning the process exit code; an `Err` is printed on one line and exits with 2.

pub mod calibrate;
pub mod characterize;
pub mod codesign;
pub mod common;
pub mod configs;
pub mod cosim;
pub mod cosim_mutants;
pub mod hil;
mod hil_all;
pub mod hw;
pub mod lint;
pub mod pagetable;
pub mod prefetch;
pub mod progress;
pub mod report;
pub mod run;
pub mod soak;
pub mod study;
pub mod sweep;
pub mod synth;
pub mod verilog;
pub mod workloads;
