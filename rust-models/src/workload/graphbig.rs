//! `dc`: GraphBIG's degree centrality (Nai et al., SC'15, "GraphBIG: Understanding Graph
//! Computing in the Context of Industrial Solutions", `gpu_dc`). Not named in the CLAP
//! paper: one of the six workloads we chose for its remaining benchmarks
//! (docs/workloads.md).
//!
//! GraphBIG's CUDA graph holds `vertexlist` (CSR offsets) and `edgelist` as 64-bit words.
//! `initialize` zeroes `vplist[v]`; `kernel`, one thread per vertex, reads
//! `vertexlist[v]` and `vertexlist[v + 1]`, then for each edge reads `edgelist[e]` and
//! does `atomicAdd(&vplist[dest], 1)` — the in-degree of every vertex, as a scatter into a
//! small array every chiplet writes. Both launch `maxThreadsPerBlock` (1024) threads per
//! block, as GraphBIG does. The graph is `graph.rs`'s power-law generator (GraphBIG reads
//! LDBC graphs, which we do not ship).

use super::edge_walk::{EdgeIndex, EdgeWalk, StepOp};
use super::graph::Graph;
use super::pannotia::graph_at;
use super::program::{coalesced, grid_u32, Program, WarpGen, WARP};
use super::{Allocation, Kernel, WarpStream, Workload, WorkloadError};

/// Warps per thread block: GraphBIG's `maxThreadsPerBlock` (1024 on every NVIDIA GPU
/// since Fermi).
const WARPS: u32 = 32;
const VERTS_PER_TB: u64 = WARPS as u64 * WARP;
/// Vertices at scale 1 (our choice).
const VERTICES: u64 = 1 << 20;

const VERTEXLIST: u16 = 0;
const EDGELIST: u16 = 1;
const VPLIST: u16 = 2;

static LOOP: [StepOp; 2] = [
    StepOp {
        alloc: EDGELIST,
        index: EdgeIndex::Edge,
        elem: 8,
        write: false,
    },
    StepOp {
        alloc: VPLIST,
        index: EdgeIndex::Dest,
        elem: 4,
        write: true,
    },
];

/// Names of the workloads in this file.
#[cfg(test)]
pub(crate) const NAMES: [&str; 1] = ["dc"];

struct DcGen {
    g: Graph,
}

/// Build `dc`.
pub(crate) fn build(
    name: &str,
    scale: f64,
    seed: u64,
) -> Option<Result<Box<dyn Workload>, WorkloadError>> {
    (name == "dc").then(|| dc(scale, seed))
}

fn dc(scale: f64, seed: u64) -> Result<Box<dyn Workload>, WorkloadError> {
    let g = graph_at("dc", scale, seed, VERTICES, VERTS_PER_TB)?;
    let n = g.n as u64;
    let grid = grid_u32("dc", scale, n / VERTS_PER_TB)?;
    Ok(Box::new(Program {
        name: "dc".into(),
        description: format!(
            "GraphBIG degree centrality on a power-law graph: {n} vertices, {} edges",
            g.m()
        ),
        allocations: vec![
            Allocation::new("vertexlist", (n + 1) * 8),
            Allocation::new("edgelist", g.m() * 8),
            Allocation::new("vplist", n * 4),
        ],
        kernels: vec![
            Kernel::new("initialize", grid, WARPS),
            Kernel::new("kernel", grid, WARPS),
        ],
        gen: DcGen { g },
    }))
}

impl WarpGen for DcGen {
    fn stream(&self, kernel: usize, tb: u32, warp: u32) -> WarpStream<'_> {
        let v0 = (tb * WARPS + warp) * WARP as u32;
        let v = v0 as u64;
        if kernel == 0 {
            return Box::new(std::iter::once(coalesced(VPLIST, v * 4, WARP, 4, true)));
        }
        let header = [
            coalesced(VERTEXLIST, v * 8, WARP, 8, false),
            coalesced(VERTEXLIST, (v + 1) * 8, WARP, 8, false),
        ];
        Box::new(
            header
                .into_iter()
                .chain(EdgeWalk::new(&self.g, &LOOP, v0, WARP as u32)),
        )
    }

    fn count(&self) -> u64 {
        let warps = self.g.n / WARP as u32;
        let loops = EdgeWalk::iterations_of_all_warps(&self.g, WARP as u32);
        warps as u64 * (1 + 2) + loops * LOOP.len() as u64
    }
}
