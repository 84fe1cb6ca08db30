//! # The UVM path: far faults, TBNp, eviction, Forest, SpecForest
//!
//! When a GPU program's footprint exceeds GPU memory, what the driver prefetches and what
//! it evicts decides performance. This module models NVIDIA's driver as the baseline and
//! Forest / SpecForest (ISCA 2025) on top of it, as the memory service of the GPU timing
//! model ([`gpu_service`]; entry points [`run_on_gpu`] and [`UvmGpu`]):
//!
//! 1. the GPU's warps issue memory instructions (`crate::gpu`); an access to a page that
//!    is not on the GPU is a far fault, queued in the fault buffer (duplicates coalesced)
//!    and the warp waits;
//! 2. the driver fetches a batch of up to 256 faults ([`service`]), de-duplicates them,
//!    groups them by prefetch tree (a 2 MB VA block for TBNp, the object's own tree for
//!    Forest), asks the prefetcher ([`tbnp`]) which neighbours to bring along, evicts to
//!    make room ([`lru`] fault-order LRU of 2 MB chunks, or Forest's object-then-leaf
//!    recency order), migrates over the host link and updates the page table
//!    ([`residency`]); every step's latency is accounted in [`metrics::ServiceTime`];
//! 3. waiting warps whose pages arrived replay their whole instruction (`crate::gpu::replay`);
//! 4. with Forest, every performed access steps the Access Time Tracker through its
//!    ports ([`att_port`]); its interrupts run the access-pattern detector ([`apd`]),
//!    which programs the object's isolation / motion bits ([`forest_tree`]).
//!
//! `sweep_forest` runs the Forest suite, `sensitivity` its thresholds one at a time.

pub mod apd;
pub mod att_port;
pub mod att_ref;
pub mod config;
mod core;
pub mod forest;
#[cfg(test)]
mod forest_tests;
pub mod forest_tree;
pub mod gpu_run;
pub mod gpu_service;
#[cfg(test)]
mod gpu_tests;
pub mod layout;
pub mod lru;
pub mod mask;
pub mod means;
pub mod metrics;
pub mod residency;
pub mod sensitivity;
pub mod service;
#[cfg(test)]
mod service_tests;
mod stall;
pub mod sweep;
pub mod sweep_out;
pub mod sweep_parts;
pub mod tbnp;

pub use config::UvmConfig;
pub use gpu_run::{run_on_gpu, GpuUvmReport, UvmGpu};
pub use gpu_service::{GpuUvmStats, UvmGpuService};
pub use metrics::UvmMetrics;
pub use sensitivity::{sensitivity, SensitivityReport};
pub use sweep::{sweep_forest, SweepOptions, SweepReport};

/// Which UVM management runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
pub enum UvmPolicy {
    /// No UVM: every page is on the GPU from the start (the no-fault reference).
    None,
    /// NVIDIA's driver: TBNp prefetching, fault-order LRU eviction of 2 MB chunks.
    Tbnp,
    /// Per-object trees from the APD, access-aware eviction.
    Forest,
    /// Forest with pattern recording, static stride hints and similarity groups.
    SpecForest,
    /// Ablation: Forest's per-object trees (ATT, APD) with the baseline's fault-order LRU
    /// eviction of 2 MB chunks — what the trees alone buy.
    ForestLru,
    /// Ablation: TBNp's trees with Forest's access-aware eviction (the ATT tracks recency;
    /// the driver ceases every object at launch, so no profiling runs) — what the eviction
    /// alone buys.
    TbnpAae,
}

impl UvmPolicy {
    pub const ALL: [UvmPolicy; 6] = [
        UvmPolicy::None,
        UvmPolicy::Tbnp,
        UvmPolicy::Forest,
        UvmPolicy::SpecForest,
        UvmPolicy::ForestLru,
        UvmPolicy::TbnpAae,
    ];
    pub fn name(self) -> &'static str {
        match self {
            UvmPolicy::None => "none",
            UvmPolicy::Tbnp => "tbnp",
            UvmPolicy::Forest => "forest",
            UvmPolicy::SpecForest => "specforest",
            UvmPolicy::ForestLru => "forest-lru",
            UvmPolicy::TbnpAae => "tbnp-aae",
        }
    }

    /// The ATT runs (its records give access recency; Forest's trees and eviction need it).
    pub fn tracks_access(self) -> bool {
        !matches!(self, UvmPolicy::None | UvmPolicy::Tbnp)
    }

    /// Per-object trees programmed by the APD (profiling runs).
    pub fn forest_trees(self) -> bool {
        matches!(
            self,
            UvmPolicy::Forest | UvmPolicy::SpecForest | UvmPolicy::ForestLru
        )
    }

    /// Access-aware eviction (least recently accessed object, then its oldest page's leaf)
    /// instead of the fault-order LRU of 2 MB chunks.
    pub fn access_aware_eviction(self) -> bool {
        matches!(
            self,
            UvmPolicy::Forest | UvmPolicy::SpecForest | UvmPolicy::TbnpAae
        )
    }
}

impl std::str::FromStr for UvmPolicy {
    type Err = UvmError;
    fn from_str(s: &str) -> Result<Self, UvmError> {
        UvmPolicy::ALL
            .into_iter()
            .find(|p| p.name() == s)
            .ok_or_else(|| UvmError::UnknownPolicy(s.to_string()))
    }
}

/// Why a UVM run could not complete.
#[derive(Debug, thiserror::Error)]
pub enum UvmError {
    #[error("unknown UVM policy `{0}` (expected none, tbnp, forest, specforest, forest-lru or tbnp-aae)")]
    UnknownPolicy(String),
    #[error("oversubscription {0} is below 1.0 (it is footprint / GPU memory)")]
    Oversubscription(f64),
    #[error("workload `{0}` has no allocations")]
    NoAllocations(String),
    #[error("simulation stalled at cycle {cycle}: {detail}")]
    Stall { cycle: u64, detail: String },
    #[error("invariant violated at cycle {cycle}")]
    Invariant {
        cycle: u64,
        #[source]
        source: residency::ResidencyError,
    },
    #[error(transparent)]
    Config(#[from] crate::config::ConfigError),
    /// Boxed, as `Gpu`: the error stays small on the paths that succeed.
    #[error("workload")]
    Workload(#[source] Box<crate::workload::WorkloadError>),
    #[error("writing results into {path}")]
    Io {
        path: std::path::PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("encoding {what} as JSON")]
    Json {
        what: &'static str,
        #[source]
        source: serde_json::Error,
    },
    #[error("--uvm none on the GPU model is the first-touch path, not a UVM service")]
    NoneOnGpu,
    /// The driver's memory manager could not be built for a UVM run.
    #[error("driver memory manager")]
    Driver(#[from] crate::driver::DriverError),
    /// The GPU model failed during a UVM run (a block fault is [`UvmError::Block`]).
    #[error("GPU model")]
    Gpu(#[source] Box<crate::gpu::GpuError>),
    /// A hardware block's engine failed or disagreed (hardware in the loop).
    #[error("hardware: {0}")]
    Block(#[from] mcmvm_protocol::system::BlockFault),
}

impl From<crate::workload::WorkloadError> for UvmError {
    fn from(e: crate::workload::WorkloadError) -> Self {
        UvmError::Workload(Box::new(e))
    }
}

impl UvmError {
    /// The block fault this error is, if it is one.
    pub fn block_fault(&self) -> Option<&mcmvm_protocol::system::BlockFault> {
        match self {
            UvmError::Block(f) => Some(f),
            _ => None,
        }
    }
}
