//! UVMBench's PolyBench-GPU kernels (managed-memory ports of PolyBench/GPU), as general-purpose
//! workloads of the Forest study: `uvm-2dconv`, `uvm-3dconv`, `uvm-atax`, `uvm-bicg`,
//! `uvm-mvt`, `uvm-gesummv`, `uvm-fdtd2d`.
//!
//! The Forest paper evaluates "15 workloads based on UVMBench, InterplayUVM, Tango" without
//! naming them; which fifteen is our choice (see `docs/workloads-forest.md`). Each generator
//! follows its CUDA kernel: PolyBench-GPU's thread-to-data mapping (2D kernels: 32×8 thread
//! blocks, `j = blockIdx.x * 32 + threadIdx.x` fastest, `i = blockIdx.y * 8 + threadIdx.y`;
//! 1D kernels: 256-thread blocks), its loop nests and its launch sequence. A warp is one
//! `threadIdx.y` row of a 2D block, so its lanes are 32 consecutive `j`.
//!
//! Modelling choices not in the benchmarks (stated where they are used):
//! - a load every lane makes from one address (`x[j]` in a matrix-vector loop) is one access
//!   of one active lane: the coalescer serves it as one word;
//! - repeated loads of one address in one expression (3DCONV reads `A[i-1][j-1][k-1]` three
//!   times) are loaded once, as nvcc's common-subexpression elimination does;
//! - the accumulators of the matrix-vector loops (`tmp[i] += ...`) stay in a register and are
//!   stored once after the loop (the source accumulates in global memory; keeping it there
//!   would add a load and a store of the always-resident output per step);
//! - compute cycles between accesses (one FMA per product, `FMA_CYCLES`) are ours.

use super::program::{after, check_scale, coalesced, grid_u32, scaled, Program, WarpGen, WARP};
use super::{
    AllocIndex, Allocation, Kernel, Lanes, WarpInstr, WarpStream, Workload, WorkloadError,
};

/// Names of the workloads in this file.
#[cfg(test)]
pub(crate) const NAMES: [&str; 7] = [
    "uvm-2dconv",
    "uvm-3dconv",
    "uvm-atax",
    "uvm-bicg",
    "uvm-mvt",
    "uvm-gesummv",
    "uvm-fdtd2d",
];

/// Compute cycles of one multiply-add between two accesses (ours, not the benchmarks').
const FMA_CYCLES: u32 = 2;
/// Threads per block of PolyBench-GPU's 1D kernels (`DIM_THREAD_BLOCK_X`).
const TB_1D: u64 = 256;
/// Rows of a 2D thread block (`DIM_THREAD_BLOCK_Y`); its x extent is one warp.
const TB_Y: u64 = 8;

/// Build one of this file's workloads.
pub(crate) fn build(name: &str, scale: f64) -> Option<Result<Box<dyn Workload>, WorkloadError>> {
    let r = match name {
        "uvm-2dconv" => conv(name, scale, Conv::D2),
        "uvm-3dconv" => conv(name, scale, Conv::D3),
        "uvm-atax" | "uvm-bicg" | "uvm-mvt" | "uvm-gesummv" => matvec(name, scale),
        "uvm-fdtd2d" => fdtd(scale),
        _ => return None,
    };
    Some(r)
}

/// A load every lane makes from one word (see the module comment).
#[inline]
pub(crate) fn uniform(alloc: AllocIndex, offset: u64) -> WarpInstr {
    coalesced(alloc, offset, 1, 4, false)
}

/// `lanes` 4-byte accesses `stride` bytes apart from `offset` (a column of a row-major array).
#[inline]
pub(crate) fn strided(
    alloc: AllocIndex,
    offset: u64,
    stride: u64,
    lanes: u64,
    write: bool,
) -> WarpInstr {
    let mut i = coalesced(alloc, offset, lanes, 4, write);
    i.lanes = Lanes::Strided {
        offset,
        stride,
        lanes: lanes as u8,
        elem: 4,
    };
    i
}

/// The lanes of a warp covering `[j0, j0 + 32)` that fall inside `[lo, hi]`: (first, count).
#[inline]
fn lanes_in(j0: u64, lo: u64, hi: u64) -> Option<(u64, u64)> {
    let (a, b) = (j0.max(lo), (j0 + WARP - 1).min(hi));
    (a <= b).then(|| (a, b - a + 1))
}

// ---------------------------------------------------------------- 2DCONV, 3DCONV

#[derive(Clone, Copy, PartialEq)]
enum Conv {
    D2,
    D3,
}

/// 2DCONV: `B[i][j] = Σ c · A[i+di][j+dj]` over the 3×3 neighbourhood, in the source's
/// order (column by column). 3DCONV: one launch per interior plane `i`, the 15-term sum of
/// PolyBench-GPU (11 distinct addresses after CSE), in the source's order.
const CONV2D_TAPS: [(i64, i64, i64); 9] = [
    (0, -1, -1),
    (0, 0, -1),
    (0, 1, -1),
    (0, -1, 0),
    (0, 0, 0),
    (0, 1, 0),
    (0, -1, 1),
    (0, 0, 1),
    (0, 1, 1),
];
/// (di, dj, dk) of 3DCONV's distinct loads, first occurrence order.
const CONV3D_TAPS: [(i64, i64, i64); 11] = [
    (-1, -1, -1),
    (1, -1, -1),
    (0, -1, 0),
    (0, 0, 0),
    (0, 1, 0),
    (-1, -1, 1),
    (1, -1, 1),
    (-1, 0, 1),
    (1, 0, 1),
    (-1, 1, 1),
    (1, 1, 1),
];

struct ConvGen {
    kind: Conv,
    /// Edge of the square (2D) or cubic (3D) array.
    n: u64,
}

fn conv(name: &str, scale: f64, kind: Conv) -> Result<Box<dyn Workload>, WorkloadError> {
    check_scale(name, scale)?;
    // The array's volume is what scales. 2D: 4096² (PolyBench-GPU's default size);
    // 3D: 256³ (the suite's 3DCONV default, 256 per edge).
    let (n, what) = match kind {
        Conv::D2 => (scaled(name, scale.sqrt(), 4096, WARP, 2 * WARP)?, "2DCONV"),
        Conv::D3 => (scaled(name, scale.cbrt(), 256, WARP, 2 * WARP)?, "3DCONV"),
    };
    let elems = if kind == Conv::D2 { n * n } else { n * n * n };
    let grid = grid_u32(name, scale, (n / WARP) * (n / TB_Y))?;
    let kernels = match kind {
        Conv::D2 => vec![Kernel::new("Convolution2D_kernel", grid, TB_Y as u32)],
        Conv::D3 => (1..n - 1)
            .map(|_| Kernel::new("convolution3D_kernel", grid, TB_Y as u32))
            .collect(),
    };
    Ok(Box::new(Program {
        name: name.into(),
        description: format!(
            "UVMBench (PolyBench-GPU) {what} on {n}^{} fp32, 32x8 thread blocks{}",
            if kind == Conv::D2 { 2 } else { 3 },
            if kind == Conv::D3 {
                ", one launch per interior plane"
            } else {
                ""
            }
        ),
        allocations: vec![
            Allocation::new("A", elems * 4).with_stride(1).in_group(0),
            Allocation::new("B", elems * 4).with_stride(1).in_group(0),
        ],
        kernels,
        gen: ConvGen { kind, n },
    }))
}

impl WarpGen for ConvGen {
    fn stream(&self, kernel: usize, tb: u32, warp: u32) -> WarpStream<'_> {
        let n = self.n;
        let gx = n / WARP;
        let (bx, by) = (tb as u64 % gx, tb as u64 / gx);
        // 2D: row i, columns j. 3D: plane i = kernel + 1, row j, columns k.
        let (plane, row) = (kernel as u64 + 1, by * TB_Y + warp as u64);
        let lanes = lanes_in(bx * WARP, 1, n - 2).filter(|_| row >= 1 && row <= n - 2);
        let Some((first, count)) = lanes else {
            return Box::new(std::iter::empty());
        };
        let (taps, base): (&'static [(i64, i64, i64)], u64) = match self.kind {
            Conv::D2 => (&CONV2D_TAPS, 0),
            Conv::D3 => (&CONV3D_TAPS, plane),
        };
        let at = move |di: i64, dj: i64, dk: i64| {
            let (p, r, c) = (
                (base as i64 + di) as u64,
                (row as i64 + dj) as u64,
                (first as i64 + dk) as u64,
            );
            ((p * n + r) * n + c) * 4
        };
        let loads = taps.iter().map(move |&(di, dj, dk)| {
            after(coalesced(0, at(di, dj, dk), count, 4, false), FMA_CYCLES)
        });
        Box::new(loads.chain(std::iter::once(coalesced(1, at(0, 0, 0), count, 4, true))))
    }
    fn count(&self) -> u64 {
        let n = self.n;
        let per_warp = match self.kind {
            Conv::D2 => CONV2D_TAPS.len() as u64 + 1,
            Conv::D3 => (CONV3D_TAPS.len() as u64 + 1) * (n - 2),
        };
        // Interior rows only, every warp of a row has interior columns.
        (n - 2) * (n / WARP) * per_warp
    }
    fn kernel_objects(&self, _kernel: usize) -> Option<Vec<AllocIndex>> {
        Some(vec![0, 1])
    }
}

// ---------------------------------------------------------------- ATAX, BICG, MVT, GESUMMV

/// How a matrix-vector kernel maps threads to the matrix.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Walk {
    /// Thread `i` walks row `i` (`A[i*N + j]`, j = step): a warp's lanes are 32 rows apart.
    Row,
    /// Thread `j` walks column `j` (`A[i*N + j]`, i = step): a warp's lanes are coalesced.
    Col,
}

/// One access of the loop body.
#[derive(Clone, Copy, Debug)]
enum Term {
    /// The matrix element of this thread and step.
    Mat(AllocIndex),
    /// The vector element of this step (one word for every lane).
    Vec(AllocIndex),
}

/// One matrix-vector kernel: an N-thread launch whose threads each loop over N steps.
#[derive(Clone, Debug)]
struct MvKernel {
    name: &'static str,
    walk: Walk,
    /// Per-thread loads before the loop (the output's old value), coalesced over threads.
    heads: Vec<AllocIndex>,
    body: Vec<Term>,
    /// Per-thread stores after the loop, coalesced over threads.
    tails: Vec<AllocIndex>,
}

struct MvGen {
    n: u64,
    kernels: Vec<MvKernel>,
}

/// One of the four matrix-vector workloads: its matrices, vectors, kernels and a phrase
/// saying what it computes.
type MvShape = (
    &'static [&'static str],
    &'static [&'static str],
    Vec<MvKernel>,
    &'static str,
);

fn matvec(name: &str, scale: f64) -> Result<Box<dyn Workload>, WorkloadError> {
    check_scale(name, scale)?;
    // PolyBench-GPU's default N is 4096 for all four; the matrix area is what scales.
    let n = scaled(name, scale.sqrt(), 4096, TB_1D, TB_1D)?;
    let (mats, vecs, kernels, what) = matvec_shape(name);
    let mut allocations: Vec<Allocation> = mats
        .iter()
        .map(|m| Allocation::new(*m, n * n * 4))
        .collect();
    // The vectors are indexed by the thread (or the loop counter): unit stride.
    allocations.extend(
        vecs.iter()
            .map(|v| Allocation::new(*v, n * 4).with_stride(1)),
    );
    let grid = grid_u32(name, scale, n / TB_1D)?;
    Ok(Box::new(Program {
        name: name.into(),
        description: format!(
            "UVMBench (PolyBench-GPU) {what}, N = {n} fp32, 256-thread blocks, one thread per row or column"
        ),
        kernels: kernels
            .iter()
            .map(|k| Kernel::new(k.name, grid, (TB_1D / WARP) as u32))
            .collect(),
        allocations,
        gen: MvGen { n, kernels },
    }))
}

/// The shape of matrix-vector workload `name` (one of the four names [`matvec`] serves).
fn matvec_shape(name: &str) -> MvShape {
    use Term::{Mat, Vec as V};
    use Walk::{Col, Row};
    let k = |name, walk, heads: &[AllocIndex], body: &[Term], tails: &[AllocIndex]| MvKernel {
        name,
        walk,
        heads: heads.to_vec(),
        body: body.to_vec(),
        tails: tails.to_vec(),
    };
    // (matrices, vectors, kernels, what)
    match name {
        // tmp = A x; y = Aᵀ tmp. Allocations: A, x, y, tmp.
        "uvm-atax" => (
            &["A"],
            &["x", "y", "tmp"],
            vec![
                k("atax_kernel1", Row, &[], &[Mat(0), V(1)], &[3]),
                k("atax_kernel2", Col, &[], &[Mat(0), V(3)], &[2]),
            ],
            "ATAX y = A^T (A x)",
        ),
        // s = Aᵀ r; q = A p. Allocations: A, r, s, p, q.
        "uvm-bicg" => (
            &["A"],
            &["r", "s", "p", "q"],
            vec![
                k("bicg_kernel1", Col, &[], &[V(1), Mat(0)], &[2]),
                k("bicg_kernel2", Row, &[], &[Mat(0), V(3)], &[4]),
            ],
            "BICG s = A^T r, q = A p",
        ),
        // x1 += A y1; x2 += Aᵀ y2. Allocations: a, x1, x2, y_1, y_2.
        "uvm-mvt" => (
            &["a"],
            &["x1", "x2", "y_1", "y_2"],
            vec![
                k("mvt_kernel1", Row, &[1], &[Mat(0), V(3)], &[1]),
                k("mvt_kernel2", Col, &[2], &[Mat(0), V(4)], &[2]),
            ],
            "MVT x1 += A y1, x2 += A^T y2",
        ),
        // tmp = A x; y = α tmp + β B x. Allocations: A, B, x, y, tmp.
        "uvm-gesummv" => (
            &["A", "B"],
            &["x", "y", "tmp"],
            vec![k(
                "gesummv_kernel",
                Row,
                &[],
                &[Mat(0), V(2), Mat(1)],
                &[4, 3],
            )],
            "GESUMMV y = alpha A x + beta B x",
        ),
        _ => unreachable!("matvec is called with its own names"),
    }
}

impl WarpGen for MvGen {
    fn stream(&self, kernel: usize, tb: u32, warp: u32) -> WarpStream<'_> {
        let k = &self.kernels[kernel];
        let n = self.n;
        let t0 = (tb as u64 * (TB_1D / WARP) + warp as u64) * WARP;
        let heads = k
            .heads
            .iter()
            .map(move |&a| coalesced(a, t0 * 4, WARP, 4, false));
        let body = (0..n).flat_map(move |s| {
            k.body.iter().map(move |&term| match term {
                Term::Vec(a) => uniform(a, s * 4),
                Term::Mat(a) => after(
                    match k.walk {
                        Walk::Row => strided(a, (t0 * n + s) * 4, n * 4, WARP, false),
                        Walk::Col => coalesced(a, (s * n + t0) * 4, WARP, 4, false),
                    },
                    FMA_CYCLES,
                ),
            })
        });
        let tails = k
            .tails
            .iter()
            .map(move |&a| coalesced(a, t0 * 4, WARP, 4, true));
        Box::new(heads.chain(body).chain(tails))
    }
    fn count(&self) -> u64 {
        let warps = self.n / WARP;
        self.kernels
            .iter()
            .map(|k| {
                warps * (k.heads.len() as u64 + self.n * k.body.len() as u64 + k.tails.len() as u64)
            })
            .sum()
    }
    fn kernel_objects(&self, kernel: usize) -> Option<Vec<AllocIndex>> {
        let k = self.kernels.get(kernel)?;
        let mut v: Vec<AllocIndex> = Vec::new();
        let terms = k.body.iter().map(|t| match *t {
            Term::Mat(a) | Term::Vec(a) => a,
        });
        for a in k
            .heads
            .iter()
            .copied()
            .chain(terms)
            .chain(k.tails.iter().copied())
        {
            if !v.contains(&a) {
                v.push(a);
            }
        }
        Some(v)
    }
}

// ---------------------------------------------------------------- FDTD-2D

/// Time steps (PolyBench's TMAX is 500; ours, so that the default run stays short).
const FDTD_TMAX: u64 = 3;
const EX: AllocIndex = 0;
const EY: AllocIndex = 1;
const HZ: AllocIndex = 2;
const FICT: AllocIndex = 3;

struct FdtdGen {
    /// NX = NY.
    n: u64,
}

fn fdtd(scale: f64) -> Result<Box<dyn Workload>, WorkloadError> {
    let name = "uvm-fdtd2d";
    check_scale(name, scale)?;
    let n = scaled(name, scale.sqrt(), 2048, WARP, 2 * WARP)?;
    let grid = grid_u32(name, scale, (n / WARP) * (n / TB_Y))?;
    let kernels = (0..FDTD_TMAX)
        .flat_map(|_| {
            [
                "fdtd_step1_kernel",
                "fdtd_step2_kernel",
                "fdtd_step3_kernel",
            ]
            .map(|k| Kernel::new(k, grid, TB_Y as u32))
        })
        .collect();
    Ok(Box::new(Program {
        name: name.into(),
        description: format!(
            "UVMBench (PolyBench-GPU) FDTD-2D on {n}x{n} fp32, {FDTD_TMAX} time steps of three kernels"
        ),
        allocations: vec![
            Allocation::new("ex", n * (n + 1) * 4).with_stride(1).in_group(0),
            Allocation::new("ey", (n + 1) * n * 4).with_stride(1).in_group(0),
            Allocation::new("hz", n * n * 4).with_stride(1).in_group(0),
            Allocation::new("_fict_", FDTD_TMAX * 4),
        ],
        kernels,
        gen: FdtdGen { n },
    }))
}

impl WarpGen for FdtdGen {
    fn stream(&self, kernel: usize, tb: u32, warp: u32) -> WarpStream<'_> {
        let n = self.n;
        let gx = n / WARP;
        let (t, step) = (kernel as u64 / 3, kernel % 3);
        let j0 = (tb as u64 % gx) * WARP;
        let i = (tb as u64 / gx) * TB_Y + warp as u64;
        // Row-major offsets: ex is NX x (NY+1), ey (NX+1) x NY, hz NX x NY.
        let ex = |i: u64, j: u64| (i * (n + 1) + j) * 4;
        let nxn = |i: u64, j: u64| (i * n + j) * 4;
        let v: Vec<WarpInstr> = match step {
            // ey[i][j] = i == 0 ? fict[t] : ey[i][j] - 0.5 (hz[i][j] - hz[i-1][j])
            0 if i == 0 => vec![
                uniform(FICT, t * 4),
                coalesced(EY, nxn(0, j0), WARP, 4, true),
            ],
            0 => vec![
                coalesced(EY, nxn(i, j0), WARP, 4, false),
                coalesced(HZ, nxn(i, j0), WARP, 4, false),
                coalesced(HZ, nxn(i - 1, j0), WARP, 4, false),
                after(coalesced(EY, nxn(i, j0), WARP, 4, true), FMA_CYCLES),
            ],
            // ex[i][j] = ex[i][j] - 0.5 (hz[i][j] - hz[i][j-1]), j > 0
            1 => {
                let (j, c) = lanes_in(j0, 1, n - 1).expect("a warp has a column > 0");
                vec![
                    coalesced(EX, ex(i, j), c, 4, false),
                    coalesced(HZ, nxn(i, j), c, 4, false),
                    coalesced(HZ, nxn(i, j - 1), c, 4, false),
                    after(coalesced(EX, ex(i, j), c, 4, true), FMA_CYCLES),
                ]
            }
            // hz[i][j] -= 0.7 (ex[i][j+1] - ex[i][j] + ey[i+1][j] - ey[i][j])
            _ => vec![
                coalesced(HZ, nxn(i, j0), WARP, 4, false),
                coalesced(EX, ex(i, j0 + 1), WARP, 4, false),
                coalesced(EX, ex(i, j0), WARP, 4, false),
                coalesced(EY, nxn(i + 1, j0), WARP, 4, false),
                coalesced(EY, nxn(i, j0), WARP, 4, false),
                after(coalesced(HZ, nxn(i, j0), WARP, 4, true), 2 * FMA_CYCLES),
            ],
        };
        Box::new(v.into_iter())
    }
    fn count(&self) -> u64 {
        let warps_per_row = self.n / WARP;
        let rows = self.n;
        // step 1: row 0 stores fict (2), the others 4; step 2: 4; step 3: 6.
        let step1 = warps_per_row * (2 + 4 * (rows - 1));
        FDTD_TMAX * (step1 + warps_per_row * rows * (4 + 6))
    }
    fn kernel_objects(&self, kernel: usize) -> Option<Vec<AllocIndex>> {
        Some(match kernel % 3 {
            0 => vec![FICT, EX, EY, HZ],
            _ => vec![EX, EY, HZ],
        })
    }
}
