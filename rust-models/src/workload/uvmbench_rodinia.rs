//! UVMBench's Rodinia kernels (managed-memory ports of Rodinia 3.1's CUDA benchmarks) as
//! general-purpose workloads of the Forest study: `uvm-backprop`, `uvm-bfs` and
//! `uvm-kmeans` here, `uvm-hotspot`, `uvm-nw` and `uvm-srad` in [`super::uvmbench_tiles`].
//! The choice of benchmarks is ours (the Forest paper does not list its fifteen); see
//! `docs/workloads-forest.md`.
//!
//! Each follows its CUDA kernel: Rodinia's 16×16 thread blocks (`BLOCK_SIZE` 16) put two
//! `threadIdx.y` rows of 16 lanes in one warp, so a warp's tile access is two half-rows,
//! `cols` elements apart. Host-side work between launches (backprop's output layer, kmeans'
//! new centres, srad's image statistics) is not modelled: under UVM it would migrate the
//! arrays the host reads back to the CPU, which the UVM model does not simulate.
//! Compute cycles (`TILE_CYCLES`) are ours.

use super::graph_kernels;
use super::program::{
    after, check_scale, coalesced, gather_offsets, grid_u32, scaled, Program, WarpGen, WARP,
};
use super::uvmbench::strided;
use super::{
    AllocIndex, Allocation, Kernel, LaneOffsets, WarpInstr, WarpStream, Workload, WorkloadError,
};

/// Names of the workloads in this file.
#[cfg(test)]
pub(crate) const NAMES: [&str; 3] = ["uvm-backprop", "uvm-bfs", "uvm-kmeans"];

/// Rodinia's `BLOCK_SIZE` / `HEIGHT` / `WIDTH`.
pub(super) const BS: u64 = 16;
/// Warps of a 16×16 block.
pub(super) const WARPS_16X16: u32 = 8;
/// Compute cycles of a tile's shared-memory work before its store (ours).
pub(super) const TILE_CYCLES: u32 = 16;

/// Build one of this file's workloads.
pub(crate) fn build(
    name: &str,
    scale: f64,
    seed: u64,
) -> Option<Result<Box<dyn Workload>, WorkloadError>> {
    let r = match name {
        "uvm-backprop" => backprop(scale),
        "uvm-bfs" => bfs(scale, seed),
        "uvm-kmeans" => kmeans(scale),
        _ => return None,
    };
    Some(r)
}

/// One warp of a 16-wide block: lanes 0..16 are row `ty0`, 16..32 row `ty0 + 1`.
/// `at(half, tx)` is the element index of a lane (`None`: the lane is inactive).
pub(super) fn half_rows(
    alloc: AllocIndex,
    write: bool,
    at: impl Fn(u64, u64) -> Option<u64>,
) -> Option<WarpInstr> {
    let mut offs = [0u64; WARP as usize];
    let mut n = 0;
    for half in 0..2 {
        for tx in 0..BS {
            if let Some(e) = at(half, tx) {
                offs[n] = e * 4;
                n += 1;
            }
        }
    }
    (n > 0).then(|| {
        gather_offsets(
            alloc,
            LaneOffsets::from_exact(n, offs[..n].iter().copied()),
            4,
            write,
        )
    })
}

// ---------------------------------------------------------------- backprop

const BP_INPUT: AllocIndex = 0;
const BP_OUTPUT_HIDDEN: AllocIndex = 1;
const BP_WEIGHTS: AllocIndex = 2;
const BP_PARTIAL: AllocIndex = 3;
const BP_DELTA: AllocIndex = 4;
const BP_PREV_WEIGHTS: AllocIndex = 5;
/// Hidden units (Rodinia's backprop: 16).
const BP_HID: u64 = 16;

struct BackpropGen {
    blocks: u64,
}

fn backprop(scale: f64) -> Result<Box<dyn Workload>, WorkloadError> {
    let name = "uvm-backprop";
    check_scale(name, scale)?;
    // Input units (Rodinia runs 65536; 2^20 here so that the weights are ~68 MB).
    let inputs = scaled(name, scale, 1 << 20, BS * 8, BS * 8)?;
    let blocks = inputs / BS;
    let grid = grid_u32(name, scale, blocks)?;
    let w = (inputs + 1) * (BP_HID + 1) * 4;
    Ok(Box::new(Program {
        name: name.into(),
        description: format!(
            "UVMBench (Rodinia) backprop: {inputs} inputs x {BP_HID} hidden, layerforward then adjust_weights, 16x16 blocks"
        ),
        allocations: vec![
            Allocation::new("input_cuda", (inputs + 1) * 4).with_stride(1),
            Allocation::new("output_hidden_cuda", (BP_HID + 1) * 4),
            Allocation::new("input_hidden_cuda", w).with_stride(1).in_group(0),
            Allocation::new("hidden_partial_sum", blocks * BP_HID * 4).with_stride(1),
            Allocation::new("hidden_delta_cuda", (BP_HID + 1) * 4),
            Allocation::new("input_prev_weights_cuda", w).with_stride(1).in_group(0),
        ],
        kernels: vec![
            Kernel::new("bpnn_layerforward_CUDA", grid, WARPS_16X16),
            Kernel::new("bpnn_adjust_weights_cuda", grid, WARPS_16X16),
        ],
        gen: BackpropGen { blocks },
    }))
}

impl WarpGen for BackpropGen {
    fn stream(&self, kernel: usize, tb: u32, warp: u32) -> WarpStream<'_> {
        let (by, ty0) = (tb as u64, 2 * warp as u64);
        let h1 = BP_HID + 1;
        // index = (hid+1)*HEIGHT*by + (hid+1)*ty + tx + 1 + (hid+1)
        let index = move |half: u64, tx: u64| Some(h1 * BS * by + h1 * (ty0 + half) + tx + 1 + h1);
        // index_in / index_y = HEIGHT*by + ty + 1; only lanes tx == 0 where the source says so.
        let first_row = (BS * by + ty0 + 1) * 4;
        let w = |a, write| half_rows(a, write, index).expect("16 lanes per row");
        let v: Vec<WarpInstr> = if kernel == 0 {
            vec![
                // if (tx == 0) input_node[ty] = input_cuda[index_in]
                coalesced(BP_INPUT, first_row, 2, 4, false),
                w(BP_WEIGHTS, false),
                // input_hidden_cuda[index] = weight_matrix[ty][tx] after the reduction
                after(w(BP_WEIGHTS, true), TILE_CYCLES),
                // if (tx == 0) hidden_partial_sum[by * hid + ty] = weight_matrix[tx][ty]
                coalesced(BP_PARTIAL, (by * BP_HID + ty0) * 4, 2, 4, true),
            ]
        } else {
            let mut v = vec![
                // delta[tx + 1] and ly[index_y] (ly is input_cuda), then oldw and w
                half_rows(BP_DELTA, false, |_, tx| Some(tx + 1)).expect("lanes"),
                half_rows(BP_INPUT, false, |half, _| Some(BS * by + ty0 + half + 1))
                    .expect("lanes"),
                w(BP_PREV_WEIGHTS, false),
                w(BP_WEIGHTS, false),
                after(w(BP_WEIGHTS, true), 4),
                w(BP_PREV_WEIGHTS, true),
            ];
            if by == 0 && warp == 0 {
                // if (ty == 0 && by == 0): the bias row w[tx + 1], oldw[tx + 1]
                v.extend([
                    coalesced(BP_PREV_WEIGHTS, 4, BS, 4, false),
                    coalesced(BP_WEIGHTS, 4, BS, 4, false),
                    coalesced(BP_WEIGHTS, 4, BS, 4, true),
                    coalesced(BP_PREV_WEIGHTS, 4, BS, 4, true),
                ]);
            }
            v
        };
        Box::new(v.into_iter())
    }
    fn count(&self) -> u64 {
        self.blocks * WARPS_16X16 as u64 * (4 + 6) + 4
    }
    fn kernel_objects(&self, kernel: usize) -> Option<Vec<AllocIndex>> {
        // The kernels' pointer arguments, in argument order.
        Some(match kernel {
            0 => vec![BP_INPUT, BP_OUTPUT_HIDDEN, BP_WEIGHTS, BP_PARTIAL],
            _ => vec![BP_DELTA, BP_INPUT, BP_WEIGHTS, BP_PREV_WEIGHTS],
        })
    }
}

// ---------------------------------------------------------------- bfs

/// Rodinia BFS is the generator the CLAP suite's `bfs` uses (`graph_kernels`): `uvm-bfs`
/// is that program under its UVMBench name, with the objects each kernel is launched with.
struct RodiniaBfs {
    inner: Box<dyn Workload>,
    description: String,
}

fn bfs(scale: f64, seed: u64) -> Result<Box<dyn Workload>, WorkloadError> {
    check_scale("uvm-bfs", scale)?;
    let inner = match graph_kernels::build("bfs", scale, seed) {
        Some(r) => r?,
        None => unreachable!("graph_kernels builds bfs"),
    };
    let description = format!("UVMBench (Rodinia) BFS: {}", inner.description());
    Ok(Box::new(RodiniaBfs { inner, description }))
}

impl Workload for RodiniaBfs {
    fn name(&self) -> &str {
        "uvm-bfs"
    }
    fn allocations(&self) -> &[Allocation] {
        self.inner.allocations()
    }
    fn kernels(&self) -> &[Kernel] {
        self.inner.kernels()
    }
    fn warp_stream(&self, kernel: usize, tb: u32, warp: u32) -> WarpStream<'_> {
        self.inner.warp_stream(kernel, tb, warp)
    }
    fn description(&self) -> &str {
        &self.description
    }
    fn instr_count(&self) -> u64 {
        self.inner.instr_count()
    }
    /// `Kernel(g_graph_nodes, g_graph_edges, g_graph_mask, g_updating_graph_mask,
    /// g_graph_visited, g_cost)` and `Kernel2(g_graph_mask, g_updating_graph_mask,
    /// g_graph_visited, g_over)`, alternating per level.
    fn kernel_objects(&self, kernel: usize) -> Option<Vec<AllocIndex>> {
        (kernel < self.kernels().len()).then(|| {
            if kernel.is_multiple_of(2) {
                vec![0, 1, 2, 3, 5, 6]
            } else {
                vec![2, 3, 5, 4]
            }
        })
    }
}

// ---------------------------------------------------------------- kmeans

/// kdd_cup's 34 features and Rodinia's default 5 clusters.
const KM_FEATURES: u64 = 34;
const KM_CLUSTERS: u64 = 5;
/// Iterations of the clustering loop (Rodinia stops on convergence; two here, ours).
const KM_ITERATIONS: usize = 2;
/// Threads per block (`THREADS_PER_DIM`² = 256).
const KM_TB: u64 = 256;
const KM_FEATURE: AllocIndex = 0;
const KM_FLIPPED: AllocIndex = 1;
const KM_MEMBERSHIP: AllocIndex = 2;

struct KmeansGen {
    points: u64,
}

fn kmeans(scale: f64) -> Result<Box<dyn Workload>, WorkloadError> {
    let name = "uvm-kmeans";
    check_scale(name, scale)?;
    let points = scaled(name, scale, 1 << 19, KM_TB, KM_TB)?;
    let grid = grid_u32(name, scale, points / KM_TB)?;
    let mut kernels = vec![Kernel::new("invert_mapping", grid, (KM_TB / WARP) as u32)];
    kernels.extend(
        (0..KM_ITERATIONS).map(|_| Kernel::new("kmeansPoint", grid, (KM_TB / WARP) as u32)),
    );
    let bytes = points * KM_FEATURES * 4;
    Ok(Box::new(Program {
        name: name.into(),
        description: format!(
            "UVMBench (Rodinia) kmeans: {points} points x {KM_FEATURES} features, {KM_CLUSTERS} clusters, invert_mapping then {KM_ITERATIONS} kmeansPoint launches"
        ),
        allocations: vec![
            // [point][feature] as read from the file; transposed to [feature][point].
            Allocation::new("feature_d", bytes),
            Allocation::new("feature_flipped_d", bytes),
            Allocation::new("membership_d", points * 4).with_stride(1),
        ],
        kernels,
        gen: KmeansGen { points },
    }))
}

impl WarpGen for KmeansGen {
    fn stream(&self, kernel: usize, tb: u32, warp: u32) -> WarpStream<'_> {
        let np = self.points;
        let p0 = (tb as u64 * (KM_TB / WARP) + warp as u64) * WARP;
        if kernel == 0 {
            // output[point_id + npoints*i] = input[point_id*nfeatures + i]
            return Box::new((0..KM_FEATURES).flat_map(move |i| {
                [
                    strided(
                        KM_FEATURE,
                        (p0 * KM_FEATURES + i) * 4,
                        KM_FEATURES * 4,
                        WARP,
                        false,
                    ),
                    coalesced(KM_FLIPPED, (i * np + p0) * 4, WARP, 4, true),
                ]
            }));
        }
        // for each cluster, for each feature: tex1Dfetch(t_features, point_id + j*npoints)
        // minus the centre's feature (constant memory, not a managed object).
        let dist = (0..KM_CLUSTERS * KM_FEATURES).map(move |s| {
            let j = s % KM_FEATURES;
            after(coalesced(KM_FLIPPED, (j * np + p0) * 4, WARP, 4, false), 3)
        });
        Box::new(dist.chain(std::iter::once(coalesced(
            KM_MEMBERSHIP,
            p0 * 4,
            WARP,
            4,
            true,
        ))))
    }
    fn count(&self) -> u64 {
        let warps = self.points / WARP;
        warps * (2 * KM_FEATURES + KM_ITERATIONS as u64 * (KM_CLUSTERS * KM_FEATURES + 1))
    }
    fn kernel_objects(&self, kernel: usize) -> Option<Vec<AllocIndex>> {
        Some(if kernel == 0 {
            vec![KM_FEATURE, KM_FLIPPED]
        } else {
            vec![KM_FLIPPED, KM_MEMBERSHIP]
        })
    }
}
