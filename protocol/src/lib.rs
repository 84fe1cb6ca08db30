//! # mcmvm-protocol — what the hardware blocks and the system agree on
//!
//! The small crate both sides of mcmvm depend on, so neither depends on the other:
//! - [`protocol`]: the blocks' port sets and the cycle convention (`CycleModel`);
//! - [`config`]: the blocks' parameters (`configs/hw.toml`) and TOML loading; [`config_error`]:
//!   its typed errors, which name the file and key and say what was expected;
//! - [`cache`]: where the on-disk caches live and the hash they key their entries by;
//! - [`system`]: how a system model drives a block engine inside a full-system run (block
//!   cycles at system cycles, engine reports, faults), so an RTL engine can serve where the
//!   behavioural twin does.
//!
//! `rtl/` (RustHDL) and `rust-models/` (behavioural) both build on this; `cosim/` joins them.

pub mod cache;
pub mod config;
pub mod config_error;
pub mod protocol;
pub mod system;
