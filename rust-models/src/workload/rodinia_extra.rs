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
//! 64-byte row segments a grid row apart (a gather of up to 32 lanes).

use super::program::{
    after, check_scale, coalesced, gather, grid_u32, scaled, Program, WarpGen, WARP,
};
use super::{Allocation, Kernel, WarpInstr, WarpStream, Workload, WorkloadError};

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
            return Box::new((0..KM_FEATURES).flat_map(move |i| {
                let lanes: Vec<u64> = (0..WARP)
                    .map(|l| ((p0 + l) * KM_FEATURES + i) * 4)
                    .collect();
                [
                    gather(FEATURE, &lanes, 4, false),
                    coalesced(FLIPPED, (i * n + p0) * 4, WARP, 4, true),
                ]
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

impl HotspotGen {
    /// Byte offsets the warp's lanes load (cells inside the grid) and store (cells that
    /// computed the last step of the pyramid), in lane order.
    fn plan(&self, tb: u32, warp: u32) -> (Vec<u64>, Vec<u64>) {
        let small = HS_BLOCK - 2 * HS_PYRAMID;
        let (bx, by) = (tb as i64 % self.block_cols, tb as i64 / self.block_cols);
        let (blk_x, blk_y) = (small * bx - HS_PYRAMID, small * by - HS_PYRAMID);
        let in_range = |v: i64, lo: i64, hi: i64| v >= lo && v <= hi;
        let valid = |b: i64, t: i64, n: i64| in_range(b + t, 0, n - 1);
        let (mut load, mut store) = (Vec::new(), Vec::new());
        for l in 0..WARP as i64 {
            let (tx, ty) = (l % HS_BLOCK, warp as i64 * 2 + l / HS_BLOCK);
            let (x, y) = (blk_x + tx, blk_y + ty);
            if !(valid(blk_x, tx, HS_COLS) && valid(blk_y, ty, self.rows)) {
                continue;
            }
            let off = ((y * HS_COLS + x) * 4) as u64;
            load.push(off);
            let inner = HS_PYRAMID..=HS_BLOCK - HS_PYRAMID - 1;
            if inner.contains(&tx) && inner.contains(&ty) {
                store.push(off);
            }
        }
        (load, store)
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
        let mut v: Vec<WarpInstr> = Vec::with_capacity(3);
        if !load.is_empty() {
            v.push(gather(src, &load, 4, false));
            v.push(gather(POWER, &load, 4, false));
        }
        if !store.is_empty() {
            // About twenty flops of the five-point update per time step of the pyramid,
            // in shared memory between the loads and the store (our estimate).
            v.push(after(gather(dst, &store, 4, true), 20 * HS_PYRAMID as u32));
        }
        Box::new(v.into_iter())
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
