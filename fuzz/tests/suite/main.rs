//! The fuzz crate's one integration-test binary: the harness's own checks, a fixed-seed
//! slice of every target, and the saved regression inputs.

mod harness;
mod regressions;
mod slice;
