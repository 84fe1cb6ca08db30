//! Every integration test of this crate in one binary (one link instead of one per file).

mod access_time_tracker;
mod att_bins_and_rules;
mod coalescer_bins_and_rules;
mod common;
mod coverage;
mod coverage_bins;
mod readme_corners;
mod remote_tracker;
mod rt_bins_and_rules;
mod tlb_coalescer;
