//! Every integration test of this crate in one binary (one link instead of one per file).

mod formal_rt;
mod four_state;
mod rt_logic_area;
mod synth_cache;
mod yosys_small_counter;
