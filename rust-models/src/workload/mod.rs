//! Workloads: what a GPU program allocates and how its warps touch memory.
//!
//! A workload declares its allocations (data structures) and its kernels; for each kernel,
//! thread block and warp it yields a lazy stream of warp memory instructions. The GPU model
//! schedules thread blocks onto chiplets and SMs and pulls instructions from these streams,
//! so nothing proportional to the instruction count is ever held in memory.
//!
//! Built-in generators (named after the papers' benchmarks, see [`registry`]) and the
//! trace-file reader ([`trace`]) both implement [`Workload`].
//!
//! Design: a generator owns only what the real program's *control* depends on (a graph's
//! degree table, a BFS level per vertex); addresses are recomputed on demand from the
//! thread-block and warp index, the way the kernel computes them. Randomness comes from a
//! counter-based hash of (seed, kernel, tb, warp, step) ([`rng`]), so any warp's stream can
//! be regenerated alone, in any order, and is the same for the same seed.

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

mod cuda_sdk;
mod dense;
mod dl;
mod edge_walk;
mod gemm;
mod graph;
mod graph_expand;
mod graph_kernels;
mod graphbig;
mod pannotia;
mod parboil_lbm;
mod pattern;
mod phases;
mod program;
pub mod registry;
pub mod rng;
mod rodinia_extra;
pub mod scale;
mod spmv;
mod stencil;
mod tango;
pub mod trace;
mod uvmbench;
mod uvmbench_rodinia;
mod uvmbench_tiles;

pub use registry::{by_name, catalog, clap_suite, forest_suite, WorkloadInfo};

/// The DL networks of the Forest suite (the paper's SpecForest-on-DL figure averages them).
pub fn dl_networks() -> &'static [&'static str] {
    &dl::NAMES
}
pub use scale::{paper_factor, Scale, ScaleParseError, PAPER_SCALES};
pub use trace::{write_trace, LineError, TraceWorkload};

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

impl Allocation {
    /// A plain allocation: no hints, no preferred location.
    pub fn new(name: impl Into<String>, bytes: u64) -> Self {
        Allocation {
            name: name.into(),
            bytes,
            stride_hint: None,
            preferred_gpu: false,
            similarity_group: None,
        }
    }
    /// Declare a SpecForest static stride hint (pages).
    pub fn with_stride(mut self, pages: u64) -> Self {
        self.stride_hint = Some(pages);
        self
    }
    /// Put the allocation in a SpecForest similarity group.
    pub fn in_group(mut self, group: u32) -> Self {
        self.similarity_group = Some(group);
        self
    }
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

impl Kernel {
    /// A kernel launch of `grid` thread blocks of `warps_per_tb` warps.
    pub fn new(name: impl Into<String>, grid: u32, warps_per_tb: u32) -> Self {
        Kernel {
            name: name.into(),
            grid,
            warps_per_tb,
        }
    }
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
    Gather { offsets: LaneOffsets, elem: u8 },
    /// A tile of `rows` rows of `lanes` consecutive elements: lane `r * lanes + i` touches
    /// `offset + r * row_stride + i * elem`, `elem` bytes each (a warp spanning rows of a
    /// 2-D grid). The gather of those offsets, without a box for them; a trace writes it as
    /// that gather.
    Rows {
        offset: u64,
        row_stride: u64,
        rows: u8,
        lanes: u8,
        elem: u8,
    },
}

/// Lanes in a warp.
pub const WARP_LANES: usize = 32;

/// The byte offsets of a gather's active lanes (at most [`WARP_LANES`]).
///
/// Up to [`INLINE_LANES`] offsets sit in the value itself, more in a box. Not all 32
/// inline: a warp instruction is moved several times between generator and event loop, and
/// 32 inline offsets made every instruction 280 bytes — the copies cost more than the
/// allocation (measured on `bfs` and `gemm-gpt3`). But most irregular gathers have one or
/// two active lanes (85 % on `bfs`, whose frontier lanes run out of edges at different
/// steps), and for them an allocation and a free were a tenth of the run's instructions.
#[derive(Clone)]
pub struct LaneOffsets(OffsetsRepr);

/// Offsets a [`LaneOffsets`] holds without allocating.
pub const INLINE_LANES: usize = 2;

#[derive(Clone)]
enum OffsetsRepr {
    Inline(u8, [u64; INLINE_LANES]),
    Boxed(Box<[u64]>),
}

impl LaneOffsets {
    /// The offsets of `lanes`, or `None` when there are more than [`WARP_LANES`].
    pub fn new(lanes: &[u64]) -> Option<LaneOffsets> {
        (lanes.len() <= WARP_LANES)
            .then(|| LaneOffsets::from_exact(lanes.len(), lanes.iter().copied()))
    }

    /// The `n` offsets `lanes` yields (a generator's lanes, without a buffer in between).
    ///
    /// # Panics
    /// When `n` exceeds [`WARP_LANES`] or `lanes` yields other than `n` offsets: a
    /// generator bug, never input.
    #[inline(always)]
    pub fn from_exact(n: usize, mut lanes: impl Iterator<Item = u64>) -> LaneOffsets {
        assert!(
            n <= WARP_LANES,
            "a warp has {WARP_LANES} lanes, got {n} offsets"
        );
        let repr = if n <= INLINE_LANES {
            let mut v = [0u64; INLINE_LANES];
            for x in v.iter_mut().take(n) {
                *x = lanes.next().expect("as many offsets as announced");
            }
            OffsetsRepr::Inline(n as u8, v)
        } else {
            let mut v = Vec::with_capacity(n);
            v.extend(lanes.by_ref().take(n));
            assert_eq!(v.len(), n, "as many offsets as announced");
            OffsetsRepr::Boxed(v.into_boxed_slice())
        };
        debug_assert!(lanes.next().is_none(), "more offsets than announced");
        LaneOffsets(repr)
    }
}

impl From<&[u64]> for LaneOffsets {
    /// # Panics
    /// With more than [`WARP_LANES`] offsets: a warp has no more lanes. The generators
    /// never build one; trace input is checked with [`LaneOffsets::new`].
    fn from(lanes: &[u64]) -> LaneOffsets {
        match LaneOffsets::new(lanes) {
            Some(l) => l,
            None => panic!("a warp has {WARP_LANES} lanes, got {} offsets", lanes.len()),
        }
    }
}

impl From<Vec<u64>> for LaneOffsets {
    /// # Panics
    /// With more than [`WARP_LANES`] offsets, as `From<&[u64]>`.
    fn from(lanes: Vec<u64>) -> LaneOffsets {
        LaneOffsets::from(&lanes[..])
    }
}

impl std::ops::Deref for LaneOffsets {
    type Target = [u64];
    #[inline]
    fn deref(&self) -> &[u64] {
        match &self.0 {
            OffsetsRepr::Inline(n, v) => &v[..*n as usize],
            OffsetsRepr::Boxed(b) => b,
        }
    }
}

impl PartialEq for LaneOffsets {
    fn eq(&self, other: &LaneOffsets) -> bool {
        **self == **other
    }
}

impl std::fmt::Debug for LaneOffsets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl Lanes {
    /// Number of active lanes.
    pub fn active(&self) -> usize {
        match self {
            Lanes::Strided { lanes, .. } => *lanes as usize,
            Lanes::Gather { offsets, .. } => offsets.len(),
            Lanes::Rows { rows, lanes, .. } => *rows as usize * *lanes as usize,
        }
    }
    /// Bytes touched by each lane.
    pub fn elem(&self) -> u8 {
        match self {
            Lanes::Strided { elem, .. } | Lanes::Gather { elem, .. } | Lanes::Rows { elem, .. } => {
                *elem
            }
        }
    }
    /// Byte offset touched by active lane `i` (`i < active()`).
    pub fn lane_offset(&self, i: usize) -> u64 {
        match self {
            Lanes::Strided { offset, stride, .. } => offset + i as u64 * stride,
            Lanes::Gather { offsets, .. } => offsets[i],
            Lanes::Rows {
                offset,
                row_stride,
                lanes,
                elem,
                ..
            } => {
                let (r, l) = (i as u64 / *lanes as u64, i as u64 % *lanes as u64);
                offset + r * row_stride + l * *elem as u64
            }
        }
    }
    /// The smallest offset touched and one past the largest byte touched, or `None` when no
    /// lane is active. Used to check that every access lies inside its allocation.
    pub fn extent(&self) -> Option<(u64, u64)> {
        let elem = self.elem() as u64;
        match self {
            Lanes::Strided {
                offset,
                stride,
                lanes,
                ..
            } => (*lanes > 0).then(|| {
                // Saturating: a trace may carry absurd numbers, which must fail the bounds
                // check rather than wrap.
                let last = (*lanes as u64 - 1).saturating_mul(*stride);
                (*offset, offset.saturating_add(last).saturating_add(elem))
            }),
            Lanes::Gather { offsets, .. } => {
                let lo = offsets.iter().min()?;
                let hi = offsets.iter().max()?;
                Some((*lo, hi.saturating_add(elem)))
            }
            Lanes::Rows {
                offset,
                row_stride,
                rows,
                lanes,
                ..
            } => (*rows > 0 && *lanes > 0).then(|| {
                let last_row = (*rows as u64 - 1).saturating_mul(*row_stride);
                let last = offset
                    .saturating_add(last_row)
                    .saturating_add((*lanes as u64 - 1) * elem);
                (*offset, last.saturating_add(elem))
            }),
        }
    }
}

/// One warp memory instruction.
#[derive(Debug, Clone, PartialEq)]
pub struct WarpInstr {
    pub alloc: AllocIndex,
    pub write: bool,
    pub lanes: Lanes,
    /// Non-memory instructions the warp executes before this one (compute between accesses).
    pub compute_cycles: u32,
    /// Neither this instruction's address nor its data comes from the warp's earlier
    /// loads still in flight, so it issues without waiting for them and the warp goes on
    /// (memory-level parallelism, [`crate::gpu::in_flight`]). `false`: it waits for them
    /// and blocks the warp until it completes.
    pub independent: bool,
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
    /// The allocations kernel `kernel` is launched with (its pointer arguments, in
    /// argument order), which the UVM driver registers in Forest's ATT at launch. `None`:
    /// not declared (traces, the CLAP generators); the driver then assumes every allocation.
    fn kernel_objects(&self, _kernel: usize) -> Option<Vec<AllocIndex>> {
        None
    }
    /// One line saying what the program does (empty for traces without one).
    fn description(&self) -> &str {
        ""
    }
    /// Total warp memory instructions over all kernels. Built-in generators answer from
    /// their loop bounds without generating; the default walks every stream.
    fn instr_count(&self) -> u64 {
        count_by_walking(self)
    }
}

/// Count a workload's warp memory instructions by walking every stream (exact, slow).
pub fn count_by_walking<W: Workload + ?Sized>(w: &W) -> u64 {
    let mut total = 0u64;
    for (k, kernel) in w.kernels().iter().enumerate() {
        for tb in 0..kernel.grid {
            for warp in 0..kernel.warps_per_tb {
                total += w.warp_stream(k, tb, warp).count() as u64;
            }
        }
    }
    total
}

/// Total bytes of all allocations.
pub fn footprint_bytes(w: &dyn Workload) -> u64 {
    w.allocations().iter().map(|a| a.bytes).sum()
}

/// Why a workload could not be built or read.
#[derive(Debug, thiserror::Error)]
pub enum WorkloadError {
    #[error("unknown workload `{name}`; valid names: {valid}")]
    UnknownWorkload { name: String, valid: String },
    #[error("workload `{name}`: scale must be a finite number > 0, got {scale}")]
    BadScale { name: String, scale: f64 },
    #[error("workload `{name}`: scale {scale} is too large ({why})")]
    TooLarge {
        name: String,
        scale: f64,
        why: String,
    },
    /// A malformed line of a trace.
    #[error("{}:{line}: {source}", path.display())]
    Trace {
        path: PathBuf,
        line: u64,
        #[source]
        source: LineError,
    },
    /// A trace file (or directory) that is wrong as a whole, not at one line.
    #[error("{}: {source}", path.display())]
    TraceFile {
        path: PathBuf,
        #[source]
        source: LineError,
    },
    /// A compressed trace file that does not decompress.
    #[error("{}: cannot decompress (xz): {source}", path.display())]
    Decompress {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Inline (up to two lanes) and boxed offsets read back the same, in lane order.
    #[test]
    fn lane_offsets_keep_every_offset_in_order() {
        for n in [0usize, 1, 2, 3, 17, WARP_LANES] {
            let v: Vec<u64> = (0..n as u64).map(|i| 1000 - 7 * i).collect();
            let a = LaneOffsets::new(&v).expect("at most a warp");
            let b = LaneOffsets::from_exact(n, v.iter().copied());
            assert_eq!(&a[..], &v[..], "{n} lanes");
            assert_eq!(a, b);
            assert_eq!(a.clone(), a);
        }
        assert!(LaneOffsets::new(&[0; WARP_LANES + 1]).is_none());
    }
}
