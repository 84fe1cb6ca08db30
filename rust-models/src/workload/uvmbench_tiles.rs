//! UVMBench's Rodinia grid kernels with 16×16 tiles: `uvm-hotspot` (thermal pyramid
//! stencil), `uvm-nw` (Needleman-Wunsch, anti-diagonal wavefront of tiles) and `uvm-srad`
//! (speckle-reducing anisotropic diffusion, srad_v2). The choice of benchmarks is ours; see
//! [`super::uvmbench_rodinia`] for the conventions (two half-rows per warp, host work left
//! out) and `docs/workloads-forest.md`.

use super::program::{after, check_scale, coalesced, grid_u32, scaled, Program, WarpGen};
use super::uvmbench::strided;
use super::uvmbench_rodinia::{half_rows, BS, TILE_CYCLES, WARPS_16X16};
use super::{AllocIndex, Allocation, Kernel, WarpInstr, WarpStream, Workload, WorkloadError};

/// Names of the workloads in this file.
#[cfg(test)]
pub(crate) const NAMES: [&str; 3] = ["uvm-hotspot", "uvm-nw", "uvm-srad"];

/// Build one of this file's workloads.
pub(crate) fn build(name: &str, scale: f64) -> Option<Result<Box<dyn Workload>, WorkloadError>> {
    let r = match name {
        "uvm-hotspot" => hotspot(scale),
        "uvm-nw" => nw(scale),
        "uvm-srad" => srad(scale),
        _ => return None,
    };
    Some(r)
}

// ---------------------------------------------------------------- hotspot

/// Pyramid height and total iterations (a typical Rodinia run: `hotspot N 2 4`; ours).
const HS_PYRAMID: u64 = 2;
const HS_ITERATIONS: u64 = 4;
const HS_POWER: AllocIndex = 0;

struct HotspotGen {
    n: u64,
    /// Thread blocks per row of the block grid.
    bcols: u64,
}

fn hotspot(scale: f64) -> Result<Box<dyn Workload>, WorkloadError> {
    let name = "uvm-hotspot";
    check_scale(name, scale)?;
    let n = scaled(name, scale.sqrt(), 4096, BS, 2 * BS)?;
    let small = BS - 2 * HS_PYRAMID;
    let bcols = n.div_ceil(small);
    let grid = grid_u32(name, scale, bcols * bcols)?;
    Ok(Box::new(Program {
        name: name.into(),
        description: format!(
            "UVMBench (Rodinia) hotspot: {n}x{n} grid, pyramid height {HS_PYRAMID}, {HS_ITERATIONS} iterations, ping-pong temperatures"
        ),
        allocations: vec![
            Allocation::new("MatrixPower", n * n * 4),
            Allocation::new("MatrixTemp[0]", n * n * 4).in_group(0),
            Allocation::new("MatrixTemp[1]", n * n * 4).in_group(0),
        ],
        kernels: (0..HS_ITERATIONS / HS_PYRAMID)
            .map(|_| Kernel::new("calculate_temp", grid, WARPS_16X16))
            .collect(),
        gen: HotspotGen { n, bcols },
    }))
}

impl HotspotGen {
    /// Grid coordinates (y, x) of lane (`half`, `tx`) of warp `warp` of block `tb`.
    fn cell(&self, tb: u32, warp: u32, half: u64, tx: u64) -> (i64, i64) {
        let (bs, p) = (BS as i64, HS_PYRAMID as i64);
        let small = bs - 2 * p;
        let (bx, by) = (tb as i64 % self.bcols as i64, tb as i64 / self.bcols as i64);
        (
            small * by - p + 2 * warp as i64 + half as i64,
            small * bx - p + tx as i64,
        )
    }
    /// The lane loads `temp_src` and `power`: its cell is inside the grid.
    fn inside(&self, tb: u32, warp: u32, half: u64, tx: u64) -> bool {
        let (y, x) = self.cell(tb, warp, half, tx);
        let n = self.n as i64;
        (0..n).contains(&y) && (0..n).contains(&x)
    }
    /// The lane stores `temp_dst`: after the last of the pyramid's iterations its tx and ty
    /// lie in [p, BS − p − 1] and its cell is inside the grid.
    fn computed(&self, tb: u32, warp: u32, half: u64, tx: u64) -> bool {
        let p = HS_PYRAMID;
        let ty = 2 * warp as u64 + half;
        (p..BS - p).contains(&ty) && (p..BS - p).contains(&tx) && self.inside(tb, warp, half, tx)
    }
    fn index(&self, tb: u32, warp: u32, half: u64, tx: u64) -> u64 {
        let (y, x) = self.cell(tb, warp, half, tx);
        (y * self.n as i64 + x) as u64
    }
}

impl WarpGen for HotspotGen {
    fn stream(&self, kernel: usize, tb: u32, warp: u32) -> WarpStream<'_> {
        let (src, dst) = if kernel.is_multiple_of(2) {
            (1, 2)
        } else {
            (2, 1)
        };
        let load = |a| {
            half_rows(a, false, |h, t| {
                self.inside(tb, warp, h, t)
                    .then(|| self.index(tb, warp, h, t))
            })
        };
        let store = half_rows(dst, true, |h, t| {
            self.computed(tb, warp, h, t)
                .then(|| self.index(tb, warp, h, t))
        });
        let v = [
            load(src),
            load(HS_POWER),
            store.map(|i| after(i, TILE_CYCLES)),
        ];
        Box::new(v.into_iter().flatten())
    }
    fn count(&self) -> u64 {
        let any = |tb, w, f: &dyn Fn(u32, u32, u64, u64) -> bool| {
            (0..2).any(|h| (0..BS).any(|t| f(tb, w, h, t)))
        };
        let mut per_launch = 0;
        for tb in 0..(self.bcols * self.bcols) as u32 {
            for w in 0..WARPS_16X16 {
                per_launch += 2 * any(tb, w, &|a, b, c, d| self.inside(a, b, c, d)) as u64
                    + any(tb, w, &|a, b, c, d| self.computed(a, b, c, d)) as u64;
            }
        }
        per_launch * HS_ITERATIONS / HS_PYRAMID
    }
    fn kernel_objects(&self, kernel: usize) -> Option<Vec<AllocIndex>> {
        Some(if kernel.is_multiple_of(2) {
            vec![0, 1, 2]
        } else {
            vec![0, 2, 1]
        })
    }
}

// ---------------------------------------------------------------- nw

const NW_REFERENCE: AllocIndex = 0;
const NW_MATRIX: AllocIndex = 1;

struct NwGen {
    /// Tiles per edge (`block_width`).
    bw: u64,
    /// Row length of both matrices (`max_cols` = sequence length + 1).
    cols: u64,
    /// Per kernel: second phase (`needle_cuda_shared_2`) and its diagonal `i`.
    diagonals: Vec<(bool, u64)>,
}

fn nw(scale: f64) -> Result<Box<dyn Workload>, WorkloadError> {
    let name = "uvm-nw";
    check_scale(name, scale)?;
    let n = scaled(name, scale.sqrt(), 4096, BS, 2 * BS)?;
    let (bw, cols) = (n / BS, n + 1);
    // for i in 1..=block_width: shared_1<<<i, 16>>>; for i = block_width-1 down to 1: shared_2
    let diagonals: Vec<(bool, u64)> = (1..=bw)
        .map(|i| (false, i))
        .chain((1..bw).rev().map(|i| (true, i)))
        .collect();
    let mut kernels = Vec::with_capacity(diagonals.len());
    for &(second, i) in &diagonals {
        let k = if second {
            "needle_cuda_shared_2"
        } else {
            "needle_cuda_shared_1"
        };
        kernels.push(Kernel::new(k, grid_u32(name, scale, i)?, 1));
    }
    Ok(Box::new(Program {
        name: name.into(),
        description: format!(
            "UVMBench (Rodinia) nw: {n}x{n} alignment, 16x16 tiles along {} anti-diagonal launches, 16 threads per block",
            diagonals.len()
        ),
        allocations: vec![
            Allocation::new("referrence_cuda", cols * cols * 4).in_group(0),
            Allocation::new("matrix_cuda", cols * cols * 4).in_group(0),
        ],
        kernels,
        gen: NwGen { bw, cols, diagonals },
    }))
}

/// Accesses of one `needle_cuda_shared_*` block (one warp of 16 lanes).
const NW_PER_BLOCK: u64 = 3 + 2 * BS;

impl WarpGen for NwGen {
    fn stream(&self, kernel: usize, tb: u32, _warp: u32) -> WarpStream<'_> {
        let (second, i) = self.diagonals[kernel];
        let (bx, cols) = (tb as u64, self.cols);
        let (b_x, b_y) = if second {
            (bx + self.bw - i, self.bw - bx - 1)
        } else {
            (bx, i - 1 - bx)
        };
        let base = cols * BS * b_y + BS * b_x;
        let index = base + cols + 1;
        let mut v: Vec<WarpInstr> = Vec::with_capacity(NW_PER_BLOCK as usize);
        // if (tx == 0) temp[0][0] = matrix_cuda[index_nw]
        v.push(coalesced(NW_MATRIX, base * 4, 1, 4, false));
        // ref[ty][tx] = referrence[index + cols * ty]
        v.extend((0..BS).map(|ty| coalesced(NW_REFERENCE, (index + cols * ty) * 4, BS, 4, false)));
        // temp[tx + 1][0] = matrix_cuda[index_w + cols * tx]: the column left of the tile
        v.push(strided(NW_MATRIX, (base + cols) * 4, cols * 4, BS, false));
        // temp[0][tx + 1] = matrix_cuda[index_n]: the row above the tile
        v.push(coalesced(NW_MATRIX, (base + 1) * 4, BS, 4, false));
        // the 2·16 − 1 anti-diagonals in shared memory, then the tile's rows stored
        v.extend((0..BS).map(|ty| {
            let st = coalesced(NW_MATRIX, (index + cols * ty) * 4, BS, 4, true);
            if ty == 0 {
                after(st, 2 * TILE_CYCLES)
            } else {
                st
            }
        }));
        Box::new(v.into_iter())
    }
    fn count(&self) -> u64 {
        // Blocks: 1 + 2 + … + bw, then bw − 1 + … + 1: bw² in all.
        self.bw * self.bw * NW_PER_BLOCK
    }
    fn kernel_objects(&self, _kernel: usize) -> Option<Vec<AllocIndex>> {
        Some(vec![NW_REFERENCE, NW_MATRIX])
    }
}

// ---------------------------------------------------------------- srad

/// srad_v2's diffusion iterations (`niter`; two here, ours).
const SRAD_ITERS: usize = 2;
// srad_cuda_1/2(E_C, W_C, N_C, S_C, J_cuda, C_cuda, ...): allocations in argument order.
const E_C: AllocIndex = 0;
const W_C: AllocIndex = 1;
const N_C: AllocIndex = 2;
const S_C: AllocIndex = 3;
const J: AllocIndex = 4;
const C: AllocIndex = 5;

struct SradGen {
    n: u64,
}

fn srad(scale: f64) -> Result<Box<dyn Workload>, WorkloadError> {
    let name = "uvm-srad";
    check_scale(name, scale)?;
    let n = scaled(name, scale.sqrt(), 2048, BS, 2 * BS)?;
    let grid = grid_u32(name, scale, (n / BS) * (n / BS))?;
    let kernels = (0..SRAD_ITERS)
        .flat_map(|_| ["srad_cuda_1", "srad_cuda_2"].map(|k| Kernel::new(k, grid, WARPS_16X16)))
        .collect();
    Ok(Box::new(Program {
        name: name.into(),
        description: format!(
            "UVMBench (Rodinia) srad_v2: {n}x{n} image, {SRAD_ITERS} iterations of two 16x16-tile kernels"
        ),
        allocations: ["E_C", "W_C", "N_C", "S_C", "J_cuda", "C_cuda"]
            .iter()
            .map(|a| Allocation::new(*a, n * n * 4).in_group(0))
            .collect(),
        kernels,
        gen: SradGen { n },
    }))
}

impl WarpGen for SradGen {
    fn stream(&self, kernel: usize, tb: u32, warp: u32) -> WarpStream<'_> {
        let n = self.n;
        let g = n / BS;
        let (bx, by, ty0) = (tb as u64 % g, tb as u64 / g, 2 * warp as u64);
        let (r0, c0) = (BS * by, BS * bx);
        let tile = move |a, write| {
            half_rows(a, write, |h, tx| Some((r0 + ty0 + h) * n + c0 + tx)).expect("16x16 tile")
        };
        // The row below the tile (the last row at the bottom edge), read by every ty; the
        // column right of the tile (the last column at the right edge), one word per ty.
        let south_row = if by == g - 1 { n - 1 } else { r0 + BS };
        let east_col = if bx == g - 1 { n - 1 } else { c0 + BS };
        let row_of = move |a, r: u64| {
            half_rows(a, false, move |_, tx| Some(r * n + c0 + tx)).expect("lanes")
        };
        let col_of = move |a, c: u64| {
            half_rows(a, false, move |h, _| Some((r0 + ty0 + h) * n + c)).expect("lanes")
        };
        let v: Vec<WarpInstr> = if kernel.is_multiple_of(2) {
            // The source loads the neighbour first and reloads the edge value at the image
            // border, the first load falling outside J there; only the in-bounds load is kept.
            let north_row = if by == 0 { 0 } else { r0 - 1 };
            let west_col = if bx == 0 { 0 } else { c0 - 1 };
            vec![
                tile(J, false),
                row_of(J, north_row),
                row_of(J, south_row),
                col_of(J, west_col),
                col_of(J, east_col),
                after(tile(C, true), TILE_CYCLES),
                tile(E_C, true),
                tile(W_C, true),
                tile(S_C, true),
                tile(N_C, true),
            ]
        } else {
            vec![
                row_of(C, south_row),
                col_of(C, east_col),
                tile(C, false),
                tile(J, false),
                tile(N_C, false),
                tile(S_C, false),
                tile(W_C, false),
                tile(E_C, false),
                after(tile(J, true), TILE_CYCLES / 2),
            ]
        };
        Box::new(v.into_iter())
    }
    fn count(&self) -> u64 {
        let warps = (self.n / BS) * (self.n / BS) * WARPS_16X16 as u64;
        SRAD_ITERS as u64 * warps * (10 + 9)
    }
    fn kernel_objects(&self, _kernel: usize) -> Option<Vec<AllocIndex>> {
        Some(vec![E_C, W_C, N_C, S_C, J, C])
    }
}
