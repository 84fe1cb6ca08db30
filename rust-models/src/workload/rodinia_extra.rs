//! Two Rodinia benchmarks (Che et al., IISWC'09) the CLAP paper does not name, chosen by
//! us for its remaining workloads (docs/workloads.md): `kmeans` and `hotspot`.
//!
//! `kmeans` (Rodinia `kmeans_cuda_kernel.cu`): `invert_mapping` transposes the points'
//! features from `feature[point][nfeatures]` to `feature_flipped[nfeatures][point]`, one
//! thread per point (strided loads, coalesced stores); then each `kmeansPoint` launch, one
//! thread per point, reads its features once per cluster (`nclusters × nfeatures` coalesced
//! texture loads of `feature_flipped`; the cluster centres sit in constant memory, not in a
//! global allocation) and writes `membership[point]`. Thread blocks own contiguous point
//! ranges in both layouts, so every structure is block-private.
//!
//! `hotspot` (Rodinia `hotspot.cu`, `calculate_temp`): a 2-D thermal grid in 16×16 thread
//! blocks with a pyramid of `PYRAMID` time steps per launch, so blocks overlap by a halo of
//! `PYRAMID` cells on each side. Thread (tx, ty) loads `temp_src` and `power` at its cell
//! when it lies in the grid and, after the pyramid, stores `temp_dst` if it computed the
//! last step. A warp is two rows of 16 threads: each of its instructions touches two
//! 64-byte row segments a grid row apart (a tile of two rows, up to 32 lanes).

use super::program::{after, check_scale, coalesced, grid_u32, scaled, Program, WarpGen, WARP};
use super::{Allocation, Kernel, Lanes, WarpInstr, WarpStream, Workload, WorkloadError};

/// Names of the workloads in this file.
#[cfg(test)]
pub(crate) const NAMES: [&str; 2] = ["kmeans", "hotspot"];

/// Build `kmeans` or `hotspot`.
pub(crate) fn build(name: &str, scale: f64) -> Option<Result<Box<dyn Workload>, WorkloadError>> {
    match name {
        "kmeans" => Some(kmeans(scale)),
        "hotspot" => Some(hotspot(scale)),
        _ => None,
    }
}

// ---------------------------------------------------------------- kmeans

/// Rodinia's `THREADS_PER_BLOCK` (16 × 16 threads).
const KM_WARPS: u64 = 8;
const KM_POINTS_PER_TB: u64 = KM_WARPS * WARP;
/// Features per point: Rodinia's `kdd_cup` input has 34.
const KM_FEATURES: u64 = 34;
/// Clusters: Rodinia's run scripts use 5 (`-m 5 -n 5`).
const KM_CLUSTERS: u64 = 5;
/// Points at scale 1 (our choice; `kdd_cup` has 494,020).
const KM_POINTS: u64 = 1 << 18;
/// `kmeansPoint` launches. Rodinia iterates until fewer than 0.1 % of the points change
/// cluster, which depends on the data; a fixed count is ours.
const KM_ITERATIONS: usize = 2;

const FEATURE: u16 = 0;
const FLIPPED: u16 = 1;
const MEMBERSHIP: u16 = 2;

struct KmeansGen {
    npoints: u64,
}

fn kmeans(scale: f64) -> Result<Box<dyn Workload>, WorkloadError> {
    check_scale("kmeans", scale)?;
    let npoints = scaled(
        "kmeans",
        scale,
        KM_POINTS,
        KM_POINTS_PER_TB,
        KM_POINTS_PER_TB,
    )?;
    let grid = grid_u32("kmeans", scale, npoints / KM_POINTS_PER_TB)?;
    let mut kernels = vec![Kernel::new("invert_mapping", grid, KM_WARPS as u32)];
    kernels.extend((0..KM_ITERATIONS).map(|_| Kernel::new("kmeansPoint", grid, KM_WARPS as u32)));
    let bytes = npoints * KM_FEATURES * 4;
    Ok(Box::new(Program {
        name: "kmeans".into(),
        description: format!(
            "Rodinia k-means: {npoints} points x {KM_FEATURES} features, {KM_CLUSTERS} clusters, {KM_ITERATIONS} iterations"
        ),
        allocations: vec![
            Allocation::new("feature", bytes),
            Allocation::new("feature_flipped", bytes),
            Allocation::new("membership", npoints * 4),
        ],
        kernels,
        gen: KmeansGen { npoints },
    }))
}

impl WarpGen for KmeansGen {
    fn stream(&self, kernel: usize, tb: u32, warp: u32) -> WarpStream<'_> {
        let p0 = (tb as u64 * KM_WARPS + warp as u64) * WARP;
        let n = self.npoints;
        if kernel == 0 {
            // Feature i of the warp's points: lane l reads feature[(p0 + l) * 34 + i].
            // Lanes KM_FEATURES floats apart: strided, but dependent, as the gather of
            // these offsets it stands for.
            return Box::new((0..KM_FEATURES).flat_map(move |i| {
                let load = WarpInstr {
                    alloc: FEATURE,
                    write: false,
                    lanes: Lanes::Strided {
                        offset: (p0 * KM_FEATURES + i) * 4,
                        stride: KM_FEATURES * 4,
                        lanes: WARP as u8,
                        elem: 4,
                    },
                    compute_cycles: 0,
                    independent: false,
                };
                [load, coalesced(FLIPPED, (i * n + p0) * 4, WARP, 4, true)]
            }));
        }
        let loads = (0..KM_CLUSTERS).flat_map(move |_| {
            // Three flops per feature: a subtraction and a multiply-add.
            (0..KM_FEATURES)
                .map(move |j| after(coalesced(FLIPPED, (j * n + p0) * 4, WARP, 4, false), 3))
        });
        Box::new(loads.chain(std::iter::once(coalesced(
            MEMBERSHIP,
            p0 * 4,
            WARP,
            4,
            true,
        ))))
    }

    fn count(&self) -> u64 {
        let warps = self.npoints / WARP;
        warps * (2 * KM_FEATURES + KM_ITERATIONS as u64 * (KM_CLUSTERS * KM_FEATURES + 1))
    }
}

// ---------------------------------------------------------------- hotspot

/// `BLOCK_SIZE`: 16 × 16 threads, 8 warps.
const HS_BLOCK: i64 = 16;
const HS_WARPS: u32 = 8;
/// Time steps per launch (`pyramid_height`; Rodinia's run script uses 2).
const HS_PYRAMID: i64 = 2;
/// Time steps simulated (`sim_time`), a multiple of the pyramid: four launches (ours).
const HS_STEPS: i64 = 8;
/// Grid columns (fixed) and rows at scale 1 (ours; Rodinia ships 512 and 1024 grids).
const HS_COLS: i64 = 2048;
const HS_ROWS: u64 = 2048;

const POWER: u16 = 0;
const TEMP_A: u16 = 1;
const TEMP_B: u16 = 2;

struct HotspotGen {
    rows: i64,
    block_cols: i64,
}

fn hotspot(scale: f64) -> Result<Box<dyn Workload>, WorkloadError> {
    check_scale("hotspot", scale)?;
    let rows = scaled("hotspot", scale, HS_ROWS, 1, HS_BLOCK as u64)? as i64;
    let small = HS_BLOCK - 2 * HS_PYRAMID;
    let block_cols = (HS_COLS + small - 1) / small;
    let block_rows = (rows + small - 1) / small;
    let grid = grid_u32("hotspot", scale, (block_cols * block_rows) as u64)?;
    let bytes = (rows * HS_COLS * 4) as u64;
    Ok(Box::new(Program {
        name: "hotspot".into(),
        description: format!(
            "Rodinia hotspot {rows}x{HS_COLS} grid, pyramid height {HS_PYRAMID}, {HS_STEPS} steps"
        ),
        allocations: vec![
            Allocation::new("power", bytes),
            Allocation::new("temp_a", bytes),
            Allocation::new("temp_b", bytes),
        ],
        kernels: (0..HS_STEPS / HS_PYRAMID)
            .map(|_| Kernel::new("calculate_temp", grid, HS_WARPS))
            .collect(),
        gen: HotspotGen { rows, block_cols },
    }))
}

/// The threads of a warp that touch memory: columns `tx0..tx0 + ntx` of rows
/// `ty0..ty0 + nty` of its block (empty when `ntx` or `nty` is 0).
#[derive(Clone, Copy)]
struct Tile {
    tx0: i64,
    ntx: i64,
    ty0: i64,
    nty: i64,
}

impl Tile {
    /// The threads of `lo..=hi` (columns) by `ylo..=yhi` (rows), if any.
    fn span(lo: i64, hi: i64, ylo: i64, yhi: i64) -> Tile {
        Tile {
            tx0: lo,
            ntx: (hi - lo + 1).max(0),
            ty0: ylo,
            nty: (yhi - ylo + 1).max(0),
        }
    }
    fn is_empty(&self) -> bool {
        self.ntx == 0 || self.nty == 0
    }
}

impl HotspotGen {
    /// Block origin (grid cell of thread (0, 0), halo included) of thread block `tb`.
    fn origin(&self, tb: u32) -> (i64, i64) {
        let small = HS_BLOCK - 2 * HS_PYRAMID;
        let (bx, by) = (tb as i64 % self.block_cols, tb as i64 / self.block_cols);
        (small * bx - HS_PYRAMID, small * by - HS_PYRAMID)
    }

    /// The warp's threads that load `temp_src` and `power` (cells inside the grid) and
    /// that store `temp_dst` (those that computed the last step of the pyramid): each a
    /// rectangle, as the grid's bounds and the pyramid's inner square are.
    fn plan(&self, tb: u32, warp: u32) -> (Tile, Tile) {
        let (blk_x, blk_y) = self.origin(tb);
        // The warp's two rows of 16 threads, clipped to the grid.
        let (ty_lo, ty_hi) = (warp as i64 * 2, warp as i64 * 2 + 1);
        let (x_lo, x_hi) = ((-blk_x).max(0), (HS_COLS - 1 - blk_x).min(HS_BLOCK - 1));
        let (y_lo, y_hi) = ((-blk_y).max(ty_lo), (self.rows - 1 - blk_y).min(ty_hi));
        let (inner_lo, inner_hi) = (HS_PYRAMID, HS_BLOCK - HS_PYRAMID - 1);
        let load = Tile::span(x_lo, x_hi, y_lo, y_hi);
        let store = Tile::span(
            x_lo.max(inner_lo),
            x_hi.min(inner_hi),
            y_lo.max(inner_lo),
            y_hi.min(inner_hi),
        );
        (load, store)
    }

    /// The access of `tile`'s cells of `alloc`, row by row (a gather in thread order).
    fn access(&self, tb: u32, tile: Tile, alloc: u16, write: bool) -> WarpInstr {
        let (blk_x, blk_y) = self.origin(tb);
        let (x, y) = (blk_x + tile.tx0, blk_y + tile.ty0);
        WarpInstr {
            alloc,
            write,
            lanes: Lanes::Rows {
                offset: ((y * HS_COLS + x) * 4) as u64,
                row_stride: (HS_COLS * 4) as u64,
                rows: tile.nty as u8,
                lanes: tile.ntx as u8,
                elem: 4,
            },
            compute_cycles: 0,
            // Dependent, as the gather of these cells it stands for.
            independent: false,
        }
    }
}

impl WarpGen for HotspotGen {
    fn stream(&self, kernel: usize, tb: u32, warp: u32) -> WarpStream<'_> {
        let (src, dst) = if kernel.is_multiple_of(2) {
            (TEMP_A, TEMP_B)
        } else {
            (TEMP_B, TEMP_A)
        };
        let (load, store) = self.plan(tb, warp);
        let loads = (!load.is_empty()).then(|| {
            [
                self.access(tb, load, src, false),
                self.access(tb, load, POWER, false),
            ]
        });
        // About twenty flops of the five-point update per time step of the pyramid, in
        // shared memory between the loads and the store (our estimate).
        let store = (!store.is_empty())
            .then(|| after(self.access(tb, store, dst, true), 20 * HS_PYRAMID as u32));
        Box::new(loads.into_iter().flatten().chain(store))
    }

    fn count(&self) -> u64 {
        let small = HS_BLOCK - 2 * HS_PYRAMID;
        let tbs = self.block_cols * ((self.rows + small - 1) / small);
        let mut per_launch = 0u64;
        for tb in 0..tbs as u32 {
            for w in 0..HS_WARPS {
                let (load, store) = self.plan(tb, w);
                per_launch += 2 * !load.is_empty() as u64 + !store.is_empty() as u64;
            }
        }
        per_launch * (HS_STEPS / HS_PYRAMID) as u64
    }
}
