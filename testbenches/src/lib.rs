//! # mcmvm-testbenches — stimulus for the hardware blocks
//!
//! Per block: directed sequences for every documented behaviour and a seeded random
//! generator. The tests in `tests/` run them through the lockstep harness of `mcmvm-cosim`
//! on all three engines and write their waves under `out/waves/`.

pub mod access_time_tracker;
pub mod remote_tracker;
pub mod tlb_coalescer;
