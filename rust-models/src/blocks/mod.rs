//! Behavioural twins of the three hardware blocks. Each has the same ports and the same
//! cycle-by-cycle behaviour as its RTL module in `mcmvm-rtl` (see `protocol` for the cycle
//! convention), and is what the system model uses by default.

pub mod access_time_tracker;
mod att_ranges;
mod att_recency;
pub mod engine;
pub mod remote_tracker;
pub mod tlb_coalescer;

pub use engine::{Hardware, TwinFactory};
