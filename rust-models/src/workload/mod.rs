//! Workloads: what a GPU program allocates and how its warps touch memory.
//!
//! A workload declares its allocations (data structures) and its kernels; for each kernel,
//! thread block and warp it yields a lazy stream of warp memory instructions. The GPU model
//! schedules thread blocks onto chiplets and SMs and pulls instructions from these streams,
//! so nothing proportional to the instruction count is ever held in memory.
//!
//! Built-in generators (named after the papers' benchmarks) and the trace-file reader both
//! implement [`Workload`].

use serde::{Deserialize, Serialize};

/// Index of an allocation within its workload (0-based, declaration order).
pub type AllocIndex = u16;

/// One data structure (a `cudaMalloc` / `cudaMallocManaged`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Allocation {
    pub name: String,
    pub bytes: u64,
    /// SpecForest static stride hint in 4 KB pages, if the program declares one.
    pub stride_hint: Option<u64>,
    /// UVM preferred location is this GPU (populate a whole 2 MB block on first touch).
    pub preferred_gpu: bool,
    /// SpecForest similarity group: allocations indexed by the same expression share it.
    pub similarity_group: Option<u32>,
}

/// One kernel launch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Kernel {
    pub name: String,
    /// Thread blocks in the grid.
    pub grid: u32,
    /// Warps per thread block.
    pub warps_per_tb: u32,
}

/// The lanes of one warp memory instruction, as byte offsets into one allocation.
#[derive(Debug, Clone, PartialEq)]
pub enum Lanes {
    /// Lane `i` (of `lanes` active) touches `offset + i * stride`, `elem` bytes each.
    Strided {
        offset: u64,
        stride: u64,
        lanes: u8,
        elem: u8,
    },
    /// Each active lane touches its own offset (gathers, scatters, indirect accesses).
    Gather { offsets: Box<[u64]>, elem: u8 },
}

/// One warp memory instruction.
#[derive(Debug, Clone, PartialEq)]
pub struct WarpInstr {
    pub alloc: AllocIndex,
    pub write: bool,
    pub lanes: Lanes,
    /// Non-memory instructions the warp executes before this one (compute between accesses).
    pub compute_cycles: u32,
}

/// Stream of a warp's memory instructions.
pub type WarpStream<'a> = Box<dyn Iterator<Item = WarpInstr> + Send + 'a>;

/// A GPU program: allocations, kernels and lazily generated warp streams.
pub trait Workload: Send + Sync {
    fn name(&self) -> &str;
    fn allocations(&self) -> &[Allocation];
    fn kernels(&self) -> &[Kernel];
    /// The memory instructions of warp `warp` of thread block `tb` of kernel `kernel`.
    fn warp_stream(&self, kernel: usize, tb: u32, warp: u32) -> WarpStream<'_>;
}
