//! # mcmvm-rtl — the hardware blocks as RustHDL modules
//!
//! One module per block, each a `#[derive(LogicBlock)]` struct whose public ports carry
//! the names of `mcmvm_protocol::protocol` (plus `clock`), a synchronous `reset` that blocks
//! every other update, and a `CycleModel` adapter that drives rust-hdl's `simulate()`
//! directly (its threaded harness is far slower). `emit` writes the Verilog with the top
//! module renamed to the block's name.

// Declared first: `macro_rules!` are visible only in the modules after them.
#[macro_use]
mod fill_fields;

pub mod access_time_tracker;
pub mod emit;
pub mod params;
pub mod remote_tracker;
pub mod tlb_coalescer;

#[cfg(test)]
mod test_tools;
