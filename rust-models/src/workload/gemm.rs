//! GEMM with the fully-connected layer shapes of ResNet-50, ViT and GPT-3 (CLAP §3.2).
//!
//! C[M×N] = A[M×K] · B[K×N], fp32, row-major. Each thread block computes a panel of C: `TM`
//! consecutive rows across all N columns. It walks K in steps of `TK`: per step the block's
//! warps load the block's `TM × TK` tile of A and the whole `TK × N` slab of B, then
//! accumulate; at the end they store the panel. So a block reads its own rows of A (a
//! contiguous region: chiplet-local under first touch) and *all* of B (read by every thread
//! block: the globally shared structure CLAP's Remote Tracker exists for), and writes its own
//! rows of C. Loads are 128-bit (float4), as tuned SGEMM kernels issue them: one warp
//! instruction moves 512 bytes.
//!
//! The batch dimension M is what `--scale` multiplies; K and N are the layer's own.

use super::program::{after, check_scale, coalesced, grid_u32, scaled, Program, WarpGen, WARP};
use super::{Allocation, Kernel, WarpStream, Workload, WorkloadError};

/// Rows of C per thread block.
const TM: u64 = 16;
/// K elements per step.
const TK: u64 = 128;
/// Warps per thread block.
const WARPS: u64 = 8;
/// Bytes per lane (float4).
const VEC: u64 = 16;
/// Bytes per warp instruction.
const INSTR_BYTES: u64 = VEC * WARP;

/// A layer shape: (name, description, M at scale 1, K, N).
struct Shape {
    name: &'static str,
    what: &'static str,
    m: u64,
    k: u64,
    n: u64,
}

const SHAPES: [Shape; 3] = [
    Shape {
        name: "gemm-resnet50",
        what: "ResNet-50 classifier FC (batch 4096 x 2048 -> 1000)",
        m: 4096,
        k: 2048,
        n: 1000,
    },
    Shape {
        name: "gemm-vit",
        what: "ViT-Base MLP fc1 (16 images x 197 tokens, 768 -> 3072)",
        m: 3152,
        k: 768,
        n: 3072,
    },
    Shape {
        name: "gemm-gpt3",
        what: "GPT-3 MLP fc1, one 1/48 tensor-parallel slice (1024 tokens, 12288 -> 1024)",
        m: 1024,
        k: 12288,
        n: 1024,
    },
];

/// Names of the GEMM workloads.
#[cfg(test)]
pub(crate) const NAMES: [&str; 3] = [SHAPES[0].name, SHAPES[1].name, SHAPES[2].name];

struct GemmGen {
    m: u64,
    k: u64,
    n: u64,
    grid: u64,
}

const A: u16 = 0;
const B: u16 = 1;
const C: u16 = 2;

/// Build one of the GEMM workloads.
pub(crate) fn build(name: &str, scale: f64) -> Option<Result<Box<dyn Workload>, WorkloadError>> {
    let shape = SHAPES.iter().find(|s| s.name == name)?;
    Some(build_shape(shape, scale))
}

fn build_shape(s: &Shape, scale: f64) -> Result<Box<dyn Workload>, WorkloadError> {
    check_scale(s.name, scale)?;
    let m = scaled(s.name, scale, s.m, TM, TM)?;
    let grid = m / TM;
    let gen = GemmGen {
        m,
        k: s.k,
        n: s.n,
        grid,
    };
    Ok(Box::new(Program {
        name: s.name.to_string(),
        description: format!("SGEMM {}x{}x{}: {}", m, s.k, s.n, s.what),
        allocations: vec![
            Allocation::new("A", m * s.k * 4),
            Allocation::new("B", s.k * s.n * 4),
            Allocation::new("C", m * s.n * 4),
        ],
        kernels: vec![Kernel::new(
            "sgemm",
            grid_u32(s.name, scale, grid)?,
            WARPS as u32,
        )],
        gen,
    }))
}

/// How many of `total` rows warp `w` handles when rows are dealt round-robin to warps.
fn rows_of_warp(w: u64, total: u64) -> u64 {
    if w < total {
        (total - w - 1) / WARPS + 1
    } else {
        0
    }
}

impl GemmGen {
    fn rows_in_tb(&self, tb: u64) -> u64 {
        TM.min(self.m - tb * TM)
    }
    /// FMA instructions a warp executes per loaded instruction in a K step: the block does
    /// rows × N × TK multiply-adds over its threads, spread over the step's loads.
    fn compute_per_load(&self, rows: u64, ktile: u64, warp: u64) -> u32 {
        let fma_per_thread = rows * self.n * ktile / (WARPS * WARP);
        let loads = rows_of_warp(warp, rows) * (ktile * 4).div_ceil(INSTR_BYTES)
            + rows_of_warp(warp, ktile) * (self.n * 4).div_ceil(INSTR_BYTES);
        (fma_per_thread / loads.max(1)).min(u32::MAX as u64) as u32
    }
}

/// The instructions that move one row segment of `bytes` bytes at `offset`.
fn row_chunks(
    alloc: u16,
    offset: u64,
    bytes: u64,
    write: bool,
    compute: u32,
) -> impl Iterator<Item = super::WarpInstr> {
    (0..bytes.div_ceil(INSTR_BYTES)).map(move |c| {
        let start = c * INSTR_BYTES;
        let lanes = (bytes - start).min(INSTR_BYTES).div_ceil(VEC);
        after(
            coalesced(alloc, offset + start, lanes, VEC as u8, write),
            compute,
        )
    })
}

impl WarpGen for GemmGen {
    fn stream(&self, _kernel: usize, tb: u32, warp: u32) -> WarpStream<'_> {
        let (tb, w) = (tb as u64, warp as u64);
        let r0 = tb * TM;
        let rows = self.rows_in_tb(tb);
        let (k, n) = (self.k, self.n);
        let steps = (0..k).step_by(TK as usize).flat_map(move |kb| {
            let ktile = TK.min(k - kb);
            let compute = self.compute_per_load(rows, ktile, w);
            let a_rows = (w..rows).step_by(WARPS as usize).flat_map(move |r| {
                row_chunks(A, ((r0 + r) * k + kb) * 4, ktile * 4, false, compute)
            });
            let b_rows = (w..ktile)
                .step_by(WARPS as usize)
                .flat_map(move |kr| row_chunks(B, (kb + kr) * n * 4, n * 4, false, compute));
            a_rows.chain(b_rows)
        });
        let c_rows = (w..rows)
            .step_by(WARPS as usize)
            .flat_map(move |r| row_chunks(C, (r0 + r) * n * 4, n * 4, true, 0));
        Box::new(steps.chain(c_rows))
    }

    fn count(&self) -> u64 {
        let row = |bytes: u64| bytes.div_ceil(INSTR_BYTES);
        let mut total = 0;
        for tb in 0..self.grid {
            let rows = self.rows_in_tb(tb);
            for w in 0..WARPS {
                let mut kb = 0;
                while kb < self.k {
                    let ktile = TK.min(self.k - kb);
                    total += rows_of_warp(w, rows) * row(ktile * 4)
                        + rows_of_warp(w, ktile) * row(self.n * 4);
                    kb += TK;
                }
                total += rows_of_warp(w, rows) * row(self.n * 4);
            }
        }
        total
    }
}
