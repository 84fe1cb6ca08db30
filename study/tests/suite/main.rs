//! mcmvm-study's integration tests: one binary (see STYLE.md, "Tests").

mod fixtures;
mod merge;
mod plan;
mod sweep;
