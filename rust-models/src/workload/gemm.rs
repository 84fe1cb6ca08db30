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

/// Where a GEMM warp is in its program.
#[derive(Clone, Copy, PartialEq)]
enum Phase {
    /// Loading its rows of the block's A tile for the K step at `kb`.
    A,
    /// Loading its rows of B's `ktile × N` slab.
    B,
    /// Storing its rows of the C panel.
    C,
    Done,
}

/// One warp's instruction stream, written out as a state machine: nested iterator
/// adapters cost as much as the GPU model they feed (~30 ns per instruction).
struct GemmStream<'a> {
    gen: &'a GemmGen,
    /// First row of the block's panel, rows in it, this warp.
    r0: u64,
    rows: u64,
    w: u64,
    phase: Phase,
    /// The K step: its first K index, depth and FMAs per load.
    kb: u64,
    ktile: u64,
    compute: u32,
    /// Row (of A or C) or K row (of B) within the phase, and the 512-byte chunk in it.
    row: u64,
    chunk: u64,
}

impl<'a> GemmStream<'a> {
    fn new(gen: &'a GemmGen, tb: u64, w: u64) -> Self {
        let mut s = GemmStream {
            gen,
            r0: tb * TM,
            rows: gen.rows_in_tb(tb),
            w,
            phase: Phase::C,
            kb: 0,
            ktile: 0,
            compute: 0,
            row: w,
            chunk: 0,
        };
        s.start_step(0);
        s
    }

    /// Enter the K step at `kb`, or the C stores when K is done.
    fn start_step(&mut self, kb: u64) {
        self.row = self.w;
        self.chunk = 0;
        if kb >= self.gen.k {
            self.phase = Phase::C;
            return;
        }
        self.phase = Phase::A;
        self.kb = kb;
        self.ktile = TK.min(self.gen.k - kb);
        self.compute = self.gen.compute_per_load(self.rows, self.ktile, self.w);
    }

    /// The next chunk of a row segment of `bytes` at `offset`, or None when the row is
    /// done (and the stream moves to the warp's next row).
    fn chunk_of(&mut self, offset: u64, bytes: u64) -> Option<(u64, u64)> {
        let start = self.chunk * INSTR_BYTES;
        if start >= bytes {
            self.chunk = 0;
            self.row += WARPS;
            return None;
        }
        self.chunk += 1;
        let lanes = (bytes - start).min(INSTR_BYTES).div_ceil(VEC);
        Some((offset + start, lanes))
    }
}

impl Iterator for GemmStream<'_> {
    type Item = super::WarpInstr;

    fn next(&mut self) -> Option<super::WarpInstr> {
        let (k, n) = (self.gen.k, self.gen.n);
        loop {
            let (alloc, write, compute, segment) = match self.phase {
                Phase::A if self.row < self.rows => (
                    A,
                    false,
                    self.compute,
                    (((self.r0 + self.row) * k + self.kb) * 4, self.ktile * 4),
                ),
                Phase::A => {
                    self.phase = Phase::B;
                    self.row = self.w;
                    continue;
                }
                Phase::B if self.row < self.ktile => (
                    B,
                    false,
                    self.compute,
                    ((self.kb + self.row) * n * 4, n * 4),
                ),
                Phase::B => {
                    self.start_step(self.kb + TK);
                    continue;
                }
                Phase::C if self.row < self.rows => {
                    (C, true, 0, ((self.r0 + self.row) * n * 4, n * 4))
                }
                Phase::C => {
                    self.phase = Phase::Done;
                    return None;
                }
                Phase::Done => return None,
            };
            if let Some((offset, lanes)) = self.chunk_of(segment.0, segment.1) {
                return Some(after(
                    coalesced(alloc, offset, lanes, VEC as u8, write),
                    compute,
                ));
            }
        }
    }
}

impl WarpGen for GemmGen {
    fn stream(&self, _kernel: usize, tb: u32, warp: u32) -> WarpStream<'_> {
        Box::new(GemmStream::new(self, tb as u64, warp as u64))
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
