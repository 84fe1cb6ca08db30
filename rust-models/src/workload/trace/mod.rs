//! The mcmvm trace format (text, version 1): allocations, kernels and per-warp accesses.
//! The full description, with an example, is in `docs/trace-format.md`; in short:
//!
//! ```text
//! mcmvm-trace 1
//! name vecadd                                   # optional
//! alloc A 4096 stride=1 group=0                 # name bytes [stride=P] [preferred-gpu] [group=G]
//! kernel vecadd 2 4                             # name grid warps-per-TB
//! a 0 0 0 A r s 0 4 32 4                        # kernel tb warp alloc r|w s offset stride lanes elem [c=N]
//! a 0 0 0 A r g 4 0,64,4000 c=10                # kernel tb warp alloc r|w g elem off,off,... [c=N]
//! ```
//!
//! Every `alloc` and `kernel` record precedes the first access record, and the access
//! records of one warp are contiguous (warps may come in any order). The reader indexes the
//! file once — one entry per warp: byte offset, line and record count — and streams each
//! warp's records from disk when asked, so memory grows with the number of warps, never
//! with the number of accesses.

mod parse;
mod reader;
mod writer;

pub use reader::TraceWorkload;
pub use writer::write_trace;

/// First line of every trace file (after comments).
pub const HEADER: &str = "mcmvm-trace";
/// The format version this reader understands.
pub const VERSION: u32 = 1;
