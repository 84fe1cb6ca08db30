//! `transpose`: the CUDA SDK's matrix transpose, `transposeCoalesced` (the SDK sample
//! `transpose`, reference 75 of the CLAP paper's suites). Not named in the CLAP paper: one
//! of the six workloads we chose for its remaining benchmarks (docs/workloads.md).
//!
//! `odata[W × H] = idata[H × W]ᵀ`, fp32, in 32×32 tiles through shared memory: thread block
//! (bx, by) has 32×8 threads; warp w (threadIdx.y) loads rows `w, w + 8, w + 16, w + 24` of
//! input tile (bx, by), each a coalesced 128-byte row segment, and after the barrier stores
//! the same rows of output tile (by, bx). Consecutive blocks walk a tile row of the input
//! but a tile column of the output, so each block reads a region its chiplet owns and
//! writes 32 rows spread over the output: a regular kernel whose two structures have
//! different chiplet-locality.

use super::program::{check_scale, coalesced, grid_u32, scaled, Program, WarpGen, WARP};
use super::{Allocation, Kernel, WarpStream, Workload, WorkloadError};

const TILE: u64 = 32;
const BLOCK_ROWS: u64 = 8;
/// Input width (fixed) and height at scale 1 (ours; the SDK's default is 1024 × 1024).
const WIDTH: u64 = 4096;
const HEIGHT: u64 = 4096;
/// Launches: the SDK times `NUM_REPS` = 100 of them; four are ours.
const REPS: usize = 4;

const IDATA: u16 = 0;
const ODATA: u16 = 1;

/// Names of the workloads in this file.
#[cfg(test)]
pub(crate) const NAMES: [&str; 1] = ["transpose"];

struct TransposeGen {
    height: u64,
}

/// Build `transpose`.
pub(crate) fn build(name: &str, scale: f64) -> Option<Result<Box<dyn Workload>, WorkloadError>> {
    (name == "transpose").then(|| transpose(scale))
}

fn transpose(scale: f64) -> Result<Box<dyn Workload>, WorkloadError> {
    check_scale("transpose", scale)?;
    let height = scaled("transpose", scale, HEIGHT, TILE, TILE)?;
    let grid = grid_u32("transpose", scale, (WIDTH / TILE) * (height / TILE))?;
    let bytes = WIDTH * height * 4;
    Ok(Box::new(Program {
        name: "transpose".into(),
        description: format!(
            "CUDA SDK transposeCoalesced of a {height}x{WIDTH} matrix, 32x32 tiles, {REPS} launches"
        ),
        allocations: vec![
            Allocation::new("idata", bytes),
            Allocation::new("odata", bytes),
        ],
        kernels: (0..REPS)
            .map(|_| Kernel::new("transposeCoalesced", grid, BLOCK_ROWS as u32))
            .collect(),
        gen: TransposeGen { height },
    }))
}

impl WarpGen for TransposeGen {
    fn stream(&self, _kernel: usize, tb: u32, warp: u32) -> WarpStream<'_> {
        let gx = WIDTH / TILE;
        let (bx, by) = (tb as u64 % gx, tb as u64 / gx);
        let (w, h) = (warp as u64, self.height);
        let rows = (0..TILE).step_by(BLOCK_ROWS as usize);
        let loads = rows.clone().map(move |i| {
            coalesced(
                IDATA,
                ((by * TILE + w + i) * WIDTH + bx * TILE) * 4,
                WARP,
                4,
                false,
            )
        });
        let stores = rows.map(move |i| {
            coalesced(
                ODATA,
                ((bx * TILE + w + i) * h + by * TILE) * 4,
                WARP,
                4,
                true,
            )
        });
        Box::new(loads.chain(stores))
    }

    fn count(&self) -> u64 {
        let tbs = (WIDTH / TILE) * (self.height / TILE);
        tbs * BLOCK_ROWS * 2 * (TILE / BLOCK_ROWS) * REPS as u64
    }
}
