//! `lbm`: Parboil's lattice-Boltzmann fluid solver (Stratton et al., 2012; the CUDA
//! version's `performStreamCollide_kernel`). Not named in the CLAP paper: one of the six
//! workloads we chose for its remaining benchmarks (docs/workloads.md).
//!
//! A D3Q19 lattice of `SIZE_X × SIZE_Y × SIZE_Z` cells, 19 distributions and a flag word
//! per cell, stored structure-of-arrays as the CUDA version does: entry `e` of cell
//! (x, y, z) at `e * SLAB + x + y * SIZE_X + (z + 2) * SIZE_X * SIZE_Y`, where a slab holds
//! two margin planes on either side and 16 floats of padding (`CALC_INDEX`). One thread
//! per cell: the block is a row of `SIZE_X` threads, the grid (SIZE_Y, SIZE_Z). Each
//! thread loads its 19 distributions and its flags from `src_grid`, collides, and pushes
//! ("SCATTER") each distribution to the neighbour it streams to in `dst_grid`; the grids
//! swap every time step. So every thread block touches twenty slices, one per slab,
//! spaced 1/20 of the grid apart — chiplet-locality repeats per slab, as the stencils'
//! does per plane. Obstacle cells bounce back to the same addresses; the flags change the
//! arithmetic, not the accesses.

use super::program::{after, check_scale, coalesced, grid_u32, scaled, Program, WarpGen, WARP};
use super::{Allocation, Kernel, WarpStream, Workload, WorkloadError};

/// Parboil's lattice width and depth (`SIZE` = 120); the block is one row of cells.
const SIZE_X: u64 = 120;
const SIZE_Y: u64 = 120;
/// Planes at scale 1 (ours; Parboil's inputs have 150).
const SIZE_Z: u64 = 32;
/// Floats of padding per slab (`PADDING`).
const PADDING: u64 = 16;
/// Entries per cell: 19 distributions and the flags.
const ENTRIES: u64 = 20;
const FLAGS: u64 = 19;
/// Time steps (ours; Parboil's short input runs 100).
const STEPS: usize = 4;

/// (dx, dy, dz) each distribution streams to, in Parboil's order C, N, S, E, W, T, B, NE,
/// NW, SE, SW, NT, NB, ST, SB, ET, EB, WT, WB.
const DIRS: [(i64, i64, i64); 19] = [
    (0, 0, 0),
    (0, 1, 0),
    (0, -1, 0),
    (1, 0, 0),
    (-1, 0, 0),
    (0, 0, 1),
    (0, 0, -1),
    (1, 1, 0),
    (-1, 1, 0),
    (1, -1, 0),
    (-1, -1, 0),
    (0, 1, 1),
    (0, 1, -1),
    (0, -1, 1),
    (0, -1, -1),
    (1, 0, 1),
    (1, 0, -1),
    (-1, 0, 1),
    (-1, 0, -1),
];

/// Names of the workloads in this file.
#[cfg(test)]
pub(crate) const NAMES: [&str; 1] = ["lbm"];

struct LbmGen {
    /// Floats per slab.
    slab: u64,
}

/// Build `lbm`.
pub(crate) fn build(name: &str, scale: f64) -> Option<Result<Box<dyn Workload>, WorkloadError>> {
    (name == "lbm").then(|| lbm(scale))
}

fn lbm(scale: f64) -> Result<Box<dyn Workload>, WorkloadError> {
    check_scale("lbm", scale)?;
    let z = scaled("lbm", scale, SIZE_Z, 1, 1)?;
    let slab = SIZE_X * SIZE_Y * (z + 4) + PADDING;
    let bytes = ENTRIES * slab * 4;
    let grid = grid_u32("lbm", scale, SIZE_Y * z)?;
    let warps = SIZE_X.div_ceil(WARP) as u32;
    Ok(Box::new(Program {
        name: "lbm".into(),
        description: format!(
            "Parboil lbm D3Q19 {SIZE_X}x{SIZE_Y}x{z} lattice, structure of arrays, {STEPS} steps"
        ),
        allocations: vec![
            Allocation::new("src_grid", bytes),
            Allocation::new("dst_grid", bytes),
        ],
        kernels: (0..STEPS)
            .map(|_| Kernel::new("performStreamCollide", grid, warps))
            .collect(),
        gen: LbmGen { slab },
    }))
}

impl LbmGen {
    /// Byte offset of entry `e` of cell (x, y, z); z may be -1 or SIZE_Z (the margins).
    fn at(&self, e: u64, x: i64, y: i64, z: i64) -> u64 {
        let cell = x + y * SIZE_X as i64 + (z + 2) * (SIZE_X * SIZE_Y) as i64;
        (e * self.slab + cell as u64) * 4
    }
}

impl WarpGen for LbmGen {
    fn stream(&self, kernel: usize, tb: u32, warp: u32) -> WarpStream<'_> {
        let (src, dst) = if kernel.is_multiple_of(2) {
            (0, 1)
        } else {
            (1, 0)
        };
        let (y, z) = ((tb as u64 % SIZE_Y) as i64, (tb as u64 / SIZE_Y) as i64);
        let x0 = warp as u64 * WARP;
        let lanes = WARP.min(SIZE_X - x0);
        let x = x0 as i64;
        let loads = (0..=FLAGS).map(move |e| coalesced(src, self.at(e, x, y, z), lanes, 4, false));
        let stores = DIRS.iter().enumerate().map(move |(e, &(dx, dy, dz))| {
            let s = coalesced(
                dst,
                self.at(e as u64, x + dx, y + dy, z + dz),
                lanes,
                4,
                true,
            );
            // The collision (~200 flops per cell in Parboil's kernel) precedes the first
            // store; the cycle count is our estimate.
            if e == 0 {
                after(s, 200)
            } else {
                s
            }
        });
        Box::new(loads.chain(stores))
    }

    fn count(&self) -> u64 {
        let z = (self.slab - PADDING) / (SIZE_X * SIZE_Y) - 4;
        let warps = SIZE_X.div_ceil(WARP);
        SIZE_Y * z * warps * (ENTRIES + DIRS.len() as u64) * STEPS as u64
    }
}
