//! Every integration test of this crate in one binary (one link instead of one per file).

mod access_time_tracker;
mod recorded;
mod remote_tracker;
mod rtl_vs_twin_small;
mod scoreboard;
mod tlb_coalescer;
