//! `spmv`: a mixed-pattern program — CSR sparse matrix × vector, one thread per row,
//! launched repeatedly (power iteration).
//!
//! Its objects follow different classes at once: `row_ptr` and `y` are indexed by the row
//! (linear streaming, stride hint, similarity group 0), `col_idx` and `vals` by the nonzero
//! (streamed per warp, but with divergent lanes; similarity group 1: same index
//! expression), and `x` is gathered through `col_idx` at uniformly random columns (dense
//! irregular). Rows hold 8–24 nonzeros (uniform), so lanes of a warp finish at different
//! steps, as in the scalar CSR kernel.

use super::program::{
    after, check_scale, coalesced, gather, grid_u32, scaled, Program, WarpGen, WARP,
};
use super::rng::{below, hash2};
use super::{Allocation, Kernel, Lanes, WarpInstr, WarpStream, Workload, WorkloadError};

const WARPS: u64 = 8;
const LAUNCHES: u32 = 2;
const ROWS: u64 = 1 << 20;
const COLS: u64 = 4 << 20;
const MIN_NNZ: u64 = 8;
const NNZ_SPREAD: u64 = 17;

const ROW_PTR: u16 = 0;
const COL_IDX: u16 = 1;
const VALS: u16 = 2;
const X: u16 = 3;
const Y: u16 = 4;

struct SpmvGen {
    row_ptr: Vec<u32>,
    cols: u64,
    seed: u64,
}

/// Build `spmv`.
pub(crate) fn build(
    name: &str,
    scale: f64,
    seed: u64,
) -> Option<Result<Box<dyn Workload>, WorkloadError>> {
    (name == "spmv").then(|| build_spmv(scale, seed))
}

fn build_spmv(scale: f64, seed: u64) -> Result<Box<dyn Workload>, WorkloadError> {
    let name = "spmv";
    check_scale(name, scale)?;
    let rows = scaled(name, scale, ROWS, WARPS * WARP, WARPS * WARP)?;
    let cols = scaled(name, scale, COLS, 1024, 1024)?;
    let too_large = || WorkloadError::TooLarge {
        name: name.into(),
        scale,
        why: "more than 2^32 nonzeros".into(),
    };
    let mut row_ptr = Vec::with_capacity(rows as usize + 1);
    let mut acc = 0u64;
    row_ptr.push(0);
    for r in 0..rows {
        acc += MIN_NNZ + below(hash2(seed, 11, r), NNZ_SPREAD);
        row_ptr.push(u32::try_from(acc).map_err(|_| too_large())?);
    }
    let grid = grid_u32(name, scale, rows / (WARPS * WARP))?;
    Ok(Box::new(Program {
        name: name.into(),
        description: format!(
            "CSR SpMV y = A x: {rows} rows x {cols} cols, {acc} nonzeros, {LAUNCHES} launches"
        ),
        allocations: vec![
            Allocation::new("row_ptr", (rows + 1) * 4)
                .with_stride(1)
                .in_group(0),
            Allocation::new("col_idx", acc * 4).in_group(1),
            Allocation::new("vals", acc * 4).in_group(1),
            Allocation::new("x", cols * 4),
            Allocation::new("y", rows * 4).with_stride(1).in_group(0),
        ],
        kernels: (0..LAUNCHES)
            .map(|_| Kernel::new("spmv_csr_scalar", grid, WARPS as u32))
            .collect(),
        gen: SpmvGen {
            row_ptr,
            cols,
            seed,
        },
    }))
}

impl SpmvGen {
    fn row(&self, r: u64) -> (u64, u64) {
        let s = self.row_ptr[r as usize] as u64;
        (s, self.row_ptr[r as usize + 1] as u64 - s)
    }
    fn max_nnz(&self, r0: u64) -> u64 {
        (r0..r0 + WARP).map(|r| self.row(r).1).max().unwrap_or(0)
    }
}

impl WarpGen for SpmvGen {
    fn stream(&self, _kernel: usize, tb: u32, warp: u32) -> WarpStream<'_> {
        let r0 = (tb as u64 * WARPS + warp as u64) * WARP;
        // Each lane reads row_ptr[r] and row_ptr[r + 1] with one 8-byte load.
        let head = WarpInstr {
            alloc: ROW_PTR,
            write: false,
            lanes: Lanes::Strided {
                offset: r0 * 4,
                stride: 4,
                lanes: WARP as u8,
                elem: 8,
            },
            compute_cycles: 0,
            // Indexed by the row: no earlier load forms its address.
            independent: true,
        };
        let steps = (0..self.max_nnz(r0)).flat_map(move |j| {
            let mut e = [0u64; WARP as usize];
            let mut xs = [0u64; WARP as usize];
            let mut k = 0;
            for r in r0..r0 + WARP {
                let (s, n) = self.row(r);
                if j < n {
                    e[k] = (s + j) * 4;
                    xs[k] = below(hash2(self.seed, 12, s + j), self.cols) * 4;
                    k += 1;
                }
            }
            [
                gather(COL_IDX, &e[..k], 4, false),
                gather(VALS, &e[..k], 4, false),
                after(gather(X, &xs[..k], 4, false), 2),
            ]
        });
        Box::new(
            std::iter::once(head)
                .chain(steps)
                .chain(std::iter::once(coalesced(Y, r0 * 4, WARP, 4, true))),
        )
    }
    fn count(&self) -> u64 {
        let rows = self.row_ptr.len() as u64 - 1;
        let per_launch: u64 = (0..rows / WARP)
            .map(|w| 2 + 3 * self.max_nnz(w * WARP))
            .sum();
        per_launch * LAUNCHES as u64
    }
}
