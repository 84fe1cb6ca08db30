//! The shape every built-in generator shares: a name, allocations, kernels, and a warp
//! generator; plus the small constructors of warp instructions and the scale arithmetic.

use super::{
    AllocIndex, Allocation, Kernel, LaneOffsets, Lanes, WarpInstr, WarpStream, Workload,
    WorkloadError,
};

/// Threads per warp.
pub(crate) const WARP: u64 = 32;

/// The per-workload part of a generator: how warp streams are produced.
pub(crate) trait WarpGen: Send + Sync {
    /// Stream of warp `warp` of thread block `tb` of kernel `kernel` (indices already
    /// checked against the kernel list).
    fn stream(&self, kernel: usize, tb: u32, warp: u32) -> WarpStream<'_>;
    /// Exact number of warp memory instructions of the whole program, from loop bounds.
    fn count(&self) -> u64;
    /// The allocations kernel `kernel` is launched with, if the generator declares them.
    fn kernel_objects(&self, _kernel: usize) -> Option<Vec<AllocIndex>> {
        None
    }
}

/// A built-in workload: metadata plus its warp generator.
pub(crate) struct Program<G> {
    pub name: String,
    pub description: String,
    pub allocations: Vec<Allocation>,
    pub kernels: Vec<Kernel>,
    pub gen: G,
}

impl<G: WarpGen> Workload for Program<G> {
    fn name(&self) -> &str {
        &self.name
    }
    fn allocations(&self) -> &[Allocation] {
        &self.allocations
    }
    fn kernels(&self) -> &[Kernel] {
        &self.kernels
    }
    fn warp_stream(&self, kernel: usize, tb: u32, warp: u32) -> WarpStream<'_> {
        // An out-of-range request is a caller bug, but an empty stream is the honest answer
        // (that warp does not exist, so it issues nothing) and cannot bring a run down.
        match self.kernels.get(kernel) {
            Some(k) if tb < k.grid && warp < k.warps_per_tb => self.gen.stream(kernel, tb, warp),
            _ => Box::new(std::iter::empty()),
        }
    }
    fn description(&self) -> &str {
        &self.description
    }
    fn instr_count(&self) -> u64 {
        self.gen.count()
    }
    fn kernel_objects(&self, kernel: usize) -> Option<Vec<AllocIndex>> {
        self.gen.kernel_objects(kernel)
    }
}

/// Reject a scale that is not a finite positive number.
pub(crate) fn check_scale(name: &str, scale: f64) -> Result<(), WorkloadError> {
    if scale.is_finite() && scale > 0.0 {
        Ok(())
    } else {
        Err(WorkloadError::BadScale {
            name: name.to_string(),
            scale,
        })
    }
}

/// `base * scale` rounded to a multiple of `multiple`, at least `min` (a multiple too).
/// Fails when the result would not fit the 32-bit grid or index arithmetic of a kernel.
pub(crate) fn scaled(
    name: &str,
    scale: f64,
    base: u64,
    multiple: u64,
    min: u64,
) -> Result<u64, WorkloadError> {
    let v = (base as f64 * scale / multiple as f64).round() * multiple as f64;
    if v > (1u64 << 40) as f64 {
        return Err(WorkloadError::TooLarge {
            name: name.to_string(),
            scale,
            why: format!("a dimension of {v:.0} exceeds 2^40"),
        });
    }
    Ok((v as u64).max(min))
}

/// Convert a count to a grid size, failing instead of truncating.
pub(crate) fn grid_u32(name: &str, scale: f64, grid: u64) -> Result<u32, WorkloadError> {
    u32::try_from(grid).map_err(|_| WorkloadError::TooLarge {
        name: name.to_string(),
        scale,
        why: format!("grid of {grid} thread blocks exceeds 2^32"),
    })
}

/// A coalesced access: `lanes` consecutive elements of `elem` bytes from `offset`.
///
/// Its address is computed from thread and loop indices, so a load is independent of the
/// warp's earlier loads ([`WarpInstr::independent`]); a store is not (it writes what they
/// loaded). Every built-in generator's coalesced access is indexed this way.
#[inline]
pub(crate) fn coalesced(
    alloc: AllocIndex,
    offset: u64,
    lanes: u64,
    elem: u8,
    write: bool,
) -> WarpInstr {
    WarpInstr {
        alloc,
        write,
        lanes: Lanes::Strided {
            offset,
            stride: elem as u64,
            lanes: lanes as u8,
            elem,
        },
        compute_cycles: 0,
        independent: !write,
    }
}

/// An irregular access: one offset per active lane.
#[inline]
pub(crate) fn gather(alloc: AllocIndex, offsets: &[u64], elem: u8, write: bool) -> WarpInstr {
    gather_offsets(alloc, offsets.into(), elem, write)
}

/// An irregular access whose offsets the generator built in place. Its offsets come from
/// data the warp loaded (an index, an edge list), so it depends on its earlier loads.
#[inline]
pub(crate) fn gather_offsets(
    alloc: AllocIndex,
    offsets: LaneOffsets,
    elem: u8,
    write: bool,
) -> WarpInstr {
    WarpInstr {
        alloc,
        write,
        lanes: Lanes::Gather { offsets, elem },
        compute_cycles: 0,
        independent: false,
    }
}

/// Attach compute cycles to an instruction.
#[inline]
pub(crate) fn after(mut i: WarpInstr, compute_cycles: u32) -> WarpInstr {
    i.compute_cycles = compute_cycles;
    i
}
