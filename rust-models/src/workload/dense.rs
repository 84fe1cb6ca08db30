//! Regular and dynamic-programming kernels of the CLAP suite: `blk` (CUDA SDK
//! BlackScholes), `paf` (Rodinia pathfinder), `lud` (Rodinia LU decomposition, 32×32
//! tiles) and `sc` (Rodinia streamcluster's `pgain`).

use super::program::{
    after, check_scale, coalesced, gather, grid_u32, scaled, Program, WarpGen, WARP,
};
use super::rng::{below, hash2, hash4};
use super::{Allocation, Kernel, WarpInstr, WarpStream, Workload, WorkloadError};

/// Names of the workloads in this file.
#[cfg(test)]
pub(crate) const NAMES: [&str; 4] = ["blk", "paf", "lud", "sc"];

/// Build one of `blk`, `paf`, `lud`, `sc`.
pub(crate) fn build(
    name: &str,
    scale: f64,
    seed: u64,
) -> Option<Result<Box<dyn Workload>, WorkloadError>> {
    let r = match name {
        "blk" => blk(scale),
        "paf" => paf(scale),
        "lud" => lud(scale),
        "sc" => sc(scale, seed),
        _ => return None,
    };
    Some(r)
}

// ---------------------------------------------------------------- blk

/// BlackScholes launches: the SDK sample repeats the kernel to time it.
const BLK_ITERS: u32 = 8;

struct BlkGen {
    warps_total: u64,
}

fn blk(scale: f64) -> Result<Box<dyn Workload>, WorkloadError> {
    check_scale("blk", scale)?;
    // One thread prices two options (float2 loads), 128 threads per block.
    let opts = scaled("blk", scale, 8 << 20, 256, 256)?;
    let grid = grid_u32("blk", scale, opts / 256)?;
    let names = [
        "StockPrice",
        "OptionStrike",
        "OptionYears",
        "CallResult",
        "PutResult",
    ];
    Ok(Box::new(Program {
        name: "blk".into(),
        description: format!(
            "BlackScholes on {opts} options, float2 per thread, {BLK_ITERS} launches"
        ),
        allocations: names
            .iter()
            .map(|n| Allocation::new(*n, opts * 4))
            .collect(),
        kernels: (0..BLK_ITERS)
            .map(|_| Kernel::new("BlackScholesGPU", grid, 4))
            .collect(),
        gen: BlkGen {
            warps_total: opts / 64,
        },
    }))
}

impl WarpGen for BlkGen {
    fn stream(&self, _kernel: usize, tb: u32, warp: u32) -> WarpStream<'_> {
        Box::new(BlkWarp {
            off: (tb as u64 * 4 + warp as u64) * 64 * 4,
            next: 0,
        })
    }
    fn count(&self) -> u64 {
        self.warps_total * 5 * BLK_ITERS as u64
    }
}

/// A BlackScholes warp: three float2 loads, the pricing, two float2 stores. Generated one
/// instruction at a time: building all five up front, boxing them and moving them out one
/// by one cost ~5 % of a blk run (a million warps at the default scale).
struct BlkWarp {
    off: u64,
    next: u8,
}

impl Iterator for BlkWarp {
    type Item = WarpInstr;
    #[inline]
    fn next(&mut self) -> Option<WarpInstr> {
        let i = self.next;
        if i >= 5 {
            return None;
        }
        self.next += 1;
        let load_or_store = coalesced(i as u16, self.off, WARP, 8, i >= 3);
        Some(if i == 3 {
            after(load_or_store, 120)
        } else {
            load_or_store
        })
    }
}

// ---------------------------------------------------------------- paf

const PAF_BLOCK: i64 = 256;
const PAF_PYRAMID: i64 = 20;
const PAF_COLS: i64 = 1 << 17;

struct PafGen {
    /// startStep and iteration count of each kernel.
    steps: Vec<(i64, i64)>,
}

fn paf(scale: f64) -> Result<Box<dyn Workload>, WorkloadError> {
    check_scale("paf", scale)?;
    let rows = scaled("paf", scale, 480, 1, PAF_PYRAMID as u64 + 1)? as i64;
    let small = PAF_BLOCK - 2 * PAF_PYRAMID;
    let grid = grid_u32("paf", scale, ((PAF_COLS + small - 1) / small) as u64)?;
    let steps: Vec<(i64, i64)> = (0..rows - 1)
        .step_by(PAF_PYRAMID as usize)
        .map(|t| (t, PAF_PYRAMID.min(rows - 1 - t)))
        .collect();
    let cols = PAF_COLS as u64;
    Ok(Box::new(Program {
        name: "paf".into(),
        description: format!(
            "Rodinia pathfinder {rows} rows x {cols} cols, pyramid height {PAF_PYRAMID}"
        ),
        allocations: vec![
            Allocation::new("wall", (rows as u64 - 1) * cols * 4),
            Allocation::new("result_a", cols * 4),
            Allocation::new("result_b", cols * 4),
        ],
        kernels: steps
            .iter()
            .map(|_| Kernel::new("dynproc", grid, (PAF_BLOCK / WARP as i64) as u32))
            .collect(),
        gen: PafGen { steps },
    }))
}

impl PafGen {
    /// The accesses of one warp: (alloc, first column, lanes, write), in issue order.
    fn plan(&self, kernel: usize, tb: u32, warp: u32) -> Vec<(u16, i64, u64, bool, i64)> {
        let (start, iters) = self.steps[kernel];
        let small = PAF_BLOCK - 2 * PAF_PYRAMID;
        let blk_x = small * tb as i64 - PAF_PYRAMID;
        let valid_min = (-blk_x).max(0);
        let valid_max = (PAF_BLOCK - 1).min(PAF_COLS - 1 - blk_x);
        let (w0, w1) = (
            warp as i64 * WARP as i64,
            warp as i64 * WARP as i64 + WARP as i64 - 1,
        );
        // Lanes tx in [lo, hi] of this warp, as (first tx, count).
        let span = |lo: i64, hi: i64| {
            let (a, b) = (lo.max(w0), hi.min(w1));
            (a <= b).then_some((a, (b - a + 1) as u64))
        };
        let (src, dst) = if kernel.is_multiple_of(2) {
            (1, 2)
        } else {
            (2, 1)
        };
        let mut out = Vec::new();
        if let Some((a, n)) = span(valid_min, valid_max) {
            out.push((src, blk_x + a, n, false, -1));
        }
        for i in 0..iters {
            if let Some((a, n)) = span((i + 1).max(valid_min), (PAF_BLOCK - i - 2).min(valid_max)) {
                out.push((0, blk_x + a, n, false, start + i));
            }
        }
        if let Some((a, n)) = span(iters.max(valid_min), (PAF_BLOCK - iters - 1).min(valid_max)) {
            out.push((dst, blk_x + a, n, true, -1));
        }
        out
    }
}

impl WarpGen for PafGen {
    fn stream(&self, kernel: usize, tb: u32, warp: u32) -> WarpStream<'_> {
        Box::new(
            self.plan(kernel, tb, warp)
                .into_iter()
                .map(|(alloc, col, n, write, row)| {
                    let row = row.max(0) as u64;
                    let off = (row * PAF_COLS as u64 + col as u64) * 4;
                    after(
                        coalesced(alloc, off, n, 4, write),
                        if alloc == 0 { 6 } else { 0 },
                    )
                }),
        )
    }
    fn count(&self) -> u64 {
        let grid = (PAF_COLS + (PAF_BLOCK - 2 * PAF_PYRAMID) - 1) / (PAF_BLOCK - 2 * PAF_PYRAMID);
        let mut total = 0;
        for k in 0..self.steps.len() {
            for tb in 0..grid as u32 {
                for w in 0..(PAF_BLOCK as u32 / WARP as u32) {
                    total += self.plan(k, tb, w).len() as u64;
                }
            }
        }
        total
    }
}

// ---------------------------------------------------------------- lud

const LUD_B: u64 = 32;

struct LudGen {
    n: u64,
    nb: u64,
    /// (phase, step) per kernel: phase 0 diagonal, 1 perimeter, 2 internal.
    plan: Vec<(u8, u64)>,
}

fn lud(scale: f64) -> Result<Box<dyn Workload>, WorkloadError> {
    check_scale("lud", scale)?;
    // The matrix area is what scales.
    let n = scaled("lud", scale.sqrt(), 1536, LUD_B, 2 * LUD_B)?;
    let nb = n / LUD_B;
    let mut kernels = Vec::new();
    let mut plan = Vec::new();
    for k in 0..nb - 1 {
        let rest = nb - k - 1;
        kernels.push(Kernel::new("lud_diagonal", 1, LUD_B as u32));
        kernels.push(Kernel::new(
            "lud_perimeter",
            grid_u32("lud", scale, rest)?,
            LUD_B as u32,
        ));
        kernels.push(Kernel::new(
            "lud_internal",
            grid_u32("lud", scale, rest * rest)?,
            LUD_B as u32,
        ));
        plan.extend([(0, k), (1, k), (2, k)]);
    }
    kernels.push(Kernel::new("lud_diagonal", 1, LUD_B as u32));
    plan.push((0, nb - 1));
    Ok(Box::new(Program {
        name: "lud".into(),
        description: format!("Rodinia LU decomposition of a {n}x{n} matrix, 32x32 tiles"),
        allocations: vec![Allocation::new("matrix", n * n * 4)],
        kernels,
        gen: LudGen { n, nb, plan },
    }))
}

impl WarpGen for LudGen {
    fn stream(&self, kernel: usize, tb: u32, warp: u32) -> WarpStream<'_> {
        let (phase, k) = self.plan[kernel];
        let (r, tb) = (warp as u64, tb as u64);
        // Row r of tile (bi, bj).
        let row = move |bi: u64, bj: u64, write: bool| {
            coalesced(
                0,
                ((bi * LUD_B + r) * self.n + bj * LUD_B) * 4,
                WARP,
                4,
                write,
            )
        };
        let v: Vec<WarpInstr> = match phase {
            0 => vec![row(k, k, false), after(row(k, k, true), 64)],
            1 => {
                let b = k + 1 + tb;
                vec![
                    row(k, k, false),
                    row(k, b, false),
                    row(b, k, false),
                    after(row(k, b, true), 32),
                    row(b, k, true),
                ]
            }
            _ => {
                let rest = self.nb - k - 1;
                let (bi, bj) = (k + 1 + tb / rest, k + 1 + tb % rest);
                vec![
                    row(k, bj, false),
                    row(bi, k, false),
                    row(bi, bj, false),
                    after(row(bi, bj, true), 32),
                ]
            }
        };
        Box::new(v.into_iter())
    }
    fn count(&self) -> u64 {
        self.plan
            .iter()
            .map(|&(phase, k)| {
                let rest = self.nb - k - 1;
                LUD_B
                    * match phase {
                        0 => 2,
                        1 => 5 * rest,
                        _ => 4 * rest * rest,
                    }
            })
            .sum()
    }
}

// ---------------------------------------------------------------- sc

const SC_DIM: u64 = 128;
const SC_CENTERS: u64 = 64;
const SC_ITERS: u64 = 16;

struct ScGen {
    num: u64,
    seed: u64,
}

fn sc(scale: f64, seed: u64) -> Result<Box<dyn Workload>, WorkloadError> {
    check_scale("sc", scale)?;
    let num = scaled("sc", scale, 65536, 256, 256)?;
    let grid = num / 256;
    let g32 = grid_u32("sc", scale, grid)?;
    Ok(Box::new(Program {
        name: "sc".into(),
        description: format!("Rodinia streamcluster pgain: {num} points x {SC_DIM} dims, {SC_ITERS} candidate centres"),
        allocations: vec![
            Allocation::new("coord", SC_DIM * num * 4),
            Allocation::new("weight", num * 4),
            Allocation::new("cost", num * 4),
            Allocation::new("assign", num * 4),
            Allocation::new("center_table", num * 4),
            Allocation::new("switch_membership", num),
            Allocation::new("work_mem", grid * (SC_CENTERS + 1) * 4),
        ],
        kernels: (0..SC_ITERS).map(|_| Kernel::new("pgain", g32, 8)).collect(),
        gen: ScGen { num, seed },
    }))
}

impl ScGen {
    /// Points whose cost drops when the candidate opens (they switch centres).
    fn switching(&self, kernel: u64, p0: u64) -> Vec<u64> {
        (p0..p0 + WARP)
            .filter(|&p| hash4(self.seed, 7, kernel, p, 0).is_multiple_of(3))
            .collect()
    }
    /// Centre (a point id) that point `p` is assigned to.
    fn center_of(&self, p: u64) -> u64 {
        let c = below(hash2(self.seed, 5, p), SC_CENTERS);
        below(hash2(self.seed, 6, c), self.num)
    }
}

impl WarpGen for ScGen {
    fn stream(&self, kernel: usize, tb: u32, warp: u32) -> WarpStream<'_> {
        let (k, tb, w) = (kernel as u64, tb as u64, warp as u64);
        let p0 = (tb * 8 + w) * WARP;
        let num = self.num;
        let mut v: Vec<WarpInstr> = Vec::new();
        if w == 0 {
            // Warp 0 stages the candidate's coordinates (column x of the [dim][num] array).
            let x = below(hash2(self.seed, 9, k), num);
            for c in 0..SC_DIM / WARP {
                v.push(WarpInstr {
                    alloc: 0,
                    write: false,
                    lanes: super::Lanes::Strided {
                        offset: (c * WARP * num + x) * 4,
                        stride: num * 4,
                        lanes: WARP as u8,
                        elem: 4,
                    },
                    compute_cycles: 0,
                    independent: true,
                });
            }
        }
        for a in 1..4 {
            v.push(coalesced(a, p0 * 4, WARP, 4, false));
        }
        let centers: Vec<u64> = (p0..p0 + WARP).map(|p| self.center_of(p) * 4).collect();
        v.push(gather(4, &centers, 4, false));
        let coords =
            (0..SC_DIM).map(move |d| after(coalesced(0, (d * num + p0) * 4, WARP, 4, false), 2));
        let mut tail: Vec<WarpInstr> = Vec::new();
        let sw = self.switching(k, p0);
        if !sw.is_empty() {
            tail.push(after(gather(5, &sw, 1, true), 4));
        }
        if w == 0 {
            let bytes = (SC_CENTERS + 1) * 4;
            let base = tb * bytes;
            let mut off = 0;
            while off < bytes {
                let lanes = ((bytes - off) / 4).min(WARP);
                tail.push(coalesced(6, base + off, lanes, 4, true));
                off += lanes * 4;
            }
        }
        Box::new(v.into_iter().chain(coords).chain(tail))
    }
    fn count(&self) -> u64 {
        let warps = self.num / WARP;
        let tbs = warps / 8;
        let work_mem_instrs = ((SC_CENTERS + 1) * 4).div_ceil(WARP * 4);
        let mut total =
            SC_ITERS * (warps * (3 + 1 + SC_DIM) + tbs * (SC_DIM / WARP + work_mem_instrs));
        for k in 0..SC_ITERS {
            for wg in 0..warps {
                total += !self.switching(k, wg * WARP).is_empty() as u64;
            }
        }
        total
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each BlackScholes warp: `StockPrice`, `OptionStrike`, `OptionYears` loaded, 120
    /// cycles of pricing, `CallResult` and `PutResult` stored, float2 per lane at the
    /// warp's offset; then nothing.
    #[test]
    fn blk_warp_loads_three_arrays_prices_and_stores_two() {
        let gen = BlkGen { warps_total: 64 };
        for (tb, warp) in [(0u32, 0u32), (3, 1), (1000, 3)] {
            let off = (tb as u64 * 4 + warp as u64) * 256;
            let expect = vec![
                coalesced(0, off, WARP, 8, false),
                coalesced(1, off, WARP, 8, false),
                coalesced(2, off, WARP, 8, false),
                after(coalesced(3, off, WARP, 8, true), 120),
                coalesced(4, off, WARP, 8, true),
            ];
            let got: Vec<WarpInstr> = gen.stream(0, tb, warp).collect();
            assert!(got == expect, "block {tb}, warp {warp}");
        }
    }
}
