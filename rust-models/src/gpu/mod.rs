//! # The behavioural MCM GPU timing model
//!
//! An event-driven model of CLAP's baseline MCM GPU (Table 1): chiplets of SMs, per-SM L1
//! TLBs and L1 caches, per-chiplet L2 TLBs, GMMUs with multi-threaded walkers, memory-side
//! L2 caches, HBM channels and a ring between chiplets. It answers "how many cycles, how
//! many remote accesses, how good is translation" for one workload under one placement
//! policy of the driver's memory manager.
//!
//! ## Why event-driven
//! Ticking 256 SMs × 64 warps every cycle is slow and mostly idle work. Instead every warp
//! carries the cycle it is next ready; a priority queue pops the earliest warp, which
//! issues its next memory instruction; the instruction's latency is computed as data by
//! walking the hierarchy once (TLBs → walker → caches → memory), and the warp goes back into
//! the queue at its completion cycle. Contention is modelled by bandwidth budgets that the
//! time-ordered requests consume (HBM channels, ring ports, SM issue and L1 ports, walker
//! threads), and by TLB entries that remember when their fill completes (a later miss to
//! the same page waits for the earlier walk instead of starting its own). Where a page's
//! translation, or a remote line's ring crossing, ends well after the event, its lines go
//! on as an event of their own at that cycle (`pending.rs`), so the budgets see requests
//! close to time order.
//!
//! ## An access, step by step
//! 1. The warp's SM spends issue slots on the compute instructions before the access.
//! 2. The lanes are coalesced into distinct 128-byte lines, grouped by 4 KB page.
//! 3. Per page: the SM's L1 TLBs (one per page size, probed together), then the chiplet's
//!    L2 TLB, then a walk in the chiplet's GMMU ([`gmmu`]). A walk that finds no mapping is
//!    a page fault, handed to the [`MemoryService`]; the warp replays when it says.
//! 4. Per line: the SM's L1 cache; on a miss the line goes to the chiplet that holds its
//!    physical frame — across the ring if that is another chiplet — and its memory-side L2,
//!    then HBM.
//! 5. The instruction completes when its last line arrives.
//!
//! ## Hooks for the UVM path
//! [`MemoryService`] (in [`service`]) is called on every GPU memory access (per page per
//! warp instruction, after translation, as an Access Time Tracker at the GMMU sees it) and
//! on every page fault (it maps the page — or migrates it, evicts, prefetches — and returns
//! the cycle the warp can replay, plus any TLB shootdowns). [`FirstTouchService`] is the
//! default: it maps on first touch through the driver's memory manager after the
//! configured fault latency.
//!
//! ## Thread-block placement
//! First touch (CLAP §2.7): each kernel's grid is cut into one contiguous chunk per chiplet,
//! so consecutive thread blocks share a chiplet; inside a chiplet, blocks go to SMs as
//! slots free up.

mod access;
mod bandwidth;
pub mod clap_extras;
pub mod clap_tables;
pub mod cnuma;
pub mod config;
mod config_rules;
pub mod driver_spec;
mod event_loop;
mod fill;
pub mod gmmu;
pub mod host_clock;
pub mod in_flight;
mod kernel_state;
mod lanes;
pub mod locality;
mod mapping;
pub mod memory;
pub mod metrics;
pub mod mshr;
mod pending;
mod prefetch;
pub(crate) mod ready_queue;
pub mod replay;
mod rt_bank;
pub mod service;
mod simulate;
mod size_class;
pub mod sweep;
pub mod tlb;
mod tlb_ways;
mod translate_page;
pub mod translation;

pub use config::GpuConfig;
pub use event_loop::Gpu;
pub use metrics::{AllocReport, RunReport};
pub use service::{AccessEvent, FaultContext, FaultReply, FirstTouchService, MemoryService};
pub use simulate::{driver_config, simulate, simulate_with, RunSpec};

use crate::addr::Va;

/// Why a simulation could not run or finish.
#[derive(Debug, thiserror::Error)]
pub enum GpuError {
    #[error(transparent)]
    Config(#[from] crate::config::ConfigError),
    #[error(transparent)]
    Driver(#[from] crate::driver::DriverError),
    #[error(transparent)]
    Workload(#[from] crate::workload::WorkloadError),
    #[error("the page fault at {0} was not resolved by the memory service")]
    FaultNotResolved(Va),
    #[error("workload access outside its data: {0}")]
    BadAccess(String),
    #[error("kernel `{kernel}`: {message}")]
    BadKernel { kernel: String, message: String },
    /// The event loop ran out of events with warps left (a model bug, never user input).
    #[error("kernel `{kernel}`: the event loop stopped with {warps} warps unfinished and (pages, instructions) {pending:?} pending")]
    Stuck {
        kernel: String,
        warps: usize,
        pending: (usize, usize),
    },
    #[error("{0} warp slots exceed the model's limit of 2^31 - 1")]
    TooManyWarps(u64),
    /// The policy drains the Remote Trackers and the GPU config has none.
    #[error("policy {0} reads CLAP's Remote Tracker, but the GPU config has none (walker.remote_tracker = false)")]
    NoRemoteTracker(&'static str),
    /// A memory service (e.g. the UVM path) failed; its own error is kept as the source.
    #[error("memory service: {0}")]
    Service(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// A hardware block's engine failed or disagreed (hardware in the loop).
    #[error("hardware: {0}")]
    Block(#[from] mcmvm_protocol::system::BlockFault),
}

impl GpuError {
    /// The block fault this error is, if it is one.
    pub fn block_fault(&self) -> Option<&mcmvm_protocol::system::BlockFault> {
        match self {
            GpuError::Block(f) => Some(f),
            _ => None,
        }
    }
}
