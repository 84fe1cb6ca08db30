//! Configuration loading shared by every model. The hardware blocks' parameters and the
//! TOML helpers live in `mcmvm-protocol` (the RTL reads them too); this re-exports them
//! under their historical path.

pub use mcmvm_protocol::config::*;
