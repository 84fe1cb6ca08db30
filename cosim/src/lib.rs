//! # mcmvm-cosim — lockstep co-simulation of the hardware blocks
//!
//! A block is proven to behave like its behavioural twin by running up to three engines on
//! the same inputs, cycle by cycle, and comparing every output on every cycle:
//! the twin (`twin`), rust-hdl's simulator on the RustHDL module (`rusthdl`), and the
//! *emitted Verilog* compiled by Verilator (`verilator`). The last closes the loop on the
//! Verilog generator itself: rust-hdl and Verilog disagree on expression widths in places
//! (literals are emitted as 32-bit constants), and only the Verilator engine sees that.
//!
//! The roles are the testbench ones: the stimulus iterator is the driver, each engine's
//! outputs are monitored every cycle, the [`Scoreboard`] compares them, and the
//! [`WaveRecorder`] streams everything to a VCD file.
//!
//! The Verilator bridge is built at run time for the parameters in use (`verilator_build`,
//! `verilator_cache`): `verilator --cc` on the block's emitted Verilog, a generated C++ shim
//! with one `extern "C"` step, g++ into a shared library loaded with `libloading`, cached
//! under `target/verilator-models/` (or `$MCMVM_VERILATOR_CACHE`) by a hash of everything
//! that goes into it. Without Verilator the crate still builds and that engine reports what
//! to install. [`system`] puts these engines inside full-system runs (`--hw`).

pub mod engine;
pub mod error;
pub mod lockstep;
pub mod rtl_mutants;
pub mod scoreboard;
pub mod stimulus;
pub mod system;
pub mod verilator;
mod verilator_build;
mod verilator_cache;
pub mod verilator_invariants;
mod verilator_manifest;
mod verilator_memo;
mod verilator_shim;
pub mod wave;

pub use engine::{Att, BoxedEngine, Coalescer, CosimBlock, EngineKind, Rt};
pub use error::CosimError;
pub use lockstep::{
    lockstep, run_lockstep, EngineTime, LockstepOptions, LockstepReport, StateViolation,
    STATE_INVARIANT,
};
pub use scoreboard::{Mismatch, Scoreboard};
pub use stimulus::{read_stimulus, Stimulus, StimulusError};
pub use wave::WaveRecorder;
