//! Every integration test of this crate in one binary (one link instead of one per file).

mod cli_calibrate;
mod cli_codesign;
mod cli_coverage;
mod cli_hw;
mod cli_robustness;
mod cli_rtl_mutants;
mod cli_scale;
mod cli_set;
mod cli_sweep_plan;
mod cli_sweep_resume;
mod cli_traces;
mod cli_uvm_gpu;
mod hw_faults;
mod hw_in_the_loop;
mod hw_support;
mod readme_commands;
