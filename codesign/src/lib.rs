//! # mcmvm-codesign — each hardware block's parameters against its cost and its effect
//!
//! A study (`mcmvm codesign --block rt|coalescer|att`) walks a grid of one block's
//! parameters ([`grid`]). At each point it:
//!
//! 1. emits the point's Verilog and lints it (Verilator -Wall, yosys `check`), then runs it
//!    in lockstep against the twin ([`lockstep`]); a mismatch marks the point failed;
//! 2. synthesises it on osu018 and sky130hd through `mcmvm-synth`: area, logic area,
//!    flip-flops, critical path and maximum clock ([`cost`]);
//! 3. runs the study's workloads with that Verilog serving every instance of the block
//!    (`--hw verilator`) and its ports recorded ([`system`]);
//! 4. computes power with OpenSTA from the recorded switching ([`activity`], [`power`]);
//!
//! and caches the point by the hash of its Verilog and everything else it depends on
//! ([`study`]). [`output`] finds the Pareto front and the smallest point within 1 % of the
//! best system effect, and writes the table, CSV, JSON and the Pareto SVG. [`shard`] keeps
//! one result file per point, so the points can run as separate processes (`--plan`,
//! `--task-id`) and be merged into the same files.

pub mod activity;
pub mod cost;
pub mod grid;
pub mod lockstep;
pub mod output;
pub mod power;
pub mod shard;
pub mod study;
pub mod system;

use std::path::PathBuf;

/// Why a study could not finish; every variant names its file, key or run.
#[derive(Debug, thiserror::Error)]
pub enum CodesignError {
    #[error("{}: key `{key}`: {message}", path.display())]
    Grid {
        path: PathBuf,
        key: String,
        message: String,
    },
    /// A grid point that `hw.toml`'s validation refuses (its message names the key).
    #[error("{source}")]
    GridValue {
        path: PathBuf,
        #[source]
        source: mcmvm_models::config::ConfigError,
    },
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}: {source}", path.display())]
    Vcd {
        path: PathBuf,
        #[source]
        source: activity::VcdError,
    },
    #[error("{}: {detail}", path.display())]
    Json { path: PathBuf, detail: String },
    #[error("emitting {module}: {detail}")]
    Emit {
        module: &'static str,
        detail: String,
    },
    #[error("{tool} failed on {}: {detail}", input.display())]
    Tool {
        tool: String,
        input: PathBuf,
        detail: String,
    },
    #[error("lockstep of {module} against the twin: {source}")]
    Lockstep {
        module: &'static str,
        #[source]
        source: mcmvm_cosim::CosimError,
    },
    #[error(transparent)]
    Shard(#[from] shard::ShardError),
    #[error("system run {what}: {detail}")]
    Run { what: String, detail: String },
    #[error(transparent)]
    Synth(#[from] mcmvm_synth::SynthError),
    #[error(transparent)]
    Report(#[from] mcmvm_report::ReportError),
    #[error("a {0} thread panicked")]
    Panicked(&'static str),
}
