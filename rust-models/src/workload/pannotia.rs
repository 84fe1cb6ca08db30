//! `pagerank`: Pannotia's PageRank (Che et al., IISWC'13, "Pannotia: Understanding
//! Irregular GPGPU Graph Applications"). The CLAP paper's summary lists Pannotia among its
//! suites (its reference 22, "A Quantitative Study of Irregular Programs on GPUs",
//! IISWC'12, is Burtscher et al.'s LonestarGPU study). Not named in the CLAP paper: one of
//! the six workloads we chose for its remaining benchmarks (docs/workloads.md).
//!
//! The kernels, one thread per vertex over a CSR graph (`row`, `col`):
//! - `inibuffer`: `page_rank1[v] = 1 / n; page_rank2[v] = 0`, once;
//! - `pagerank1`: read `row[v]`, `row[v + 1]` and `page_rank1[v]` (the value each edge
//!   passes on, `page_rank1[v] / degree`), then for each edge `nid = col[e]` and an
//!   `atomicAdd(&page_rank2[nid], value)`: a scatter to anywhere in the graph;
//! - `pagerank2`: `page_rank1[v] = (1 - d) / n + d * page_rank2[v]; page_rank2[v] = 0`.
//!
//! The host runs `pagerank1` and `pagerank2` [`ITERATIONS`] times. Thread blocks own
//! contiguous vertex ranges, so `row`, each block's slice of `col` and the rank arrays'
//! own entries are block-private, while the atomics land on the destinations' chiplets.
//! The graph is `graph.rs`'s power-law R-MAT-style generator (Pannotia reads real graphs,
//! which we do not ship).

use super::edge_walk::{EdgeIndex, EdgeWalk, StepOp};
use super::graph::Graph;
use super::program::{check_scale, coalesced, grid_u32, scaled, Program, WarpGen, WARP};
use super::{Allocation, Kernel, WarpStream, Workload, WorkloadError};

/// Warps per thread block (256 threads; Pannotia sets the work-group size on the command
/// line, this is ours).
const WARPS: u32 = 8;
const VERTS_PER_TB: u64 = WARPS as u64 * WARP;
/// Vertices at scale 1 (our choice: a run of a few million warp instructions).
const VERTICES: u64 = 1 << 18;
/// Power iterations (`pagerank1` + `pagerank2` pairs). Pannotia runs a fixed count; this
/// one is ours, kept small because every iteration walks every edge.
pub(crate) const ITERATIONS: usize = 2;

const ROW: u16 = 0;
const COL: u16 = 1;
const RANK1: u16 = 2;
const RANK2: u16 = 3;

/// `pagerank1`'s loop body: the edge's destination, then the atomic add there.
static LOOP: [StepOp; 2] = [
    StepOp {
        alloc: COL,
        index: EdgeIndex::Edge,
        elem: 4,
        write: false,
    },
    StepOp {
        alloc: RANK2,
        index: EdgeIndex::Dest,
        elem: 4,
        write: true,
    },
];

/// Names of the workloads in this file.
#[cfg(test)]
pub(crate) const NAMES: [&str; 1] = ["pagerank"];

struct PageRankGen {
    g: Graph,
}

/// Build `pagerank`.
pub(crate) fn build(
    name: &str,
    scale: f64,
    seed: u64,
) -> Option<Result<Box<dyn Workload>, WorkloadError>> {
    (name == "pagerank").then(|| pagerank(scale, seed))
}

/// A power-law graph of `base * scale` vertices (a multiple of `per_tb`) for `name`.
pub(super) fn graph_at(
    name: &str,
    scale: f64,
    seed: u64,
    base: u64,
    per_tb: u64,
) -> Result<Graph, WorkloadError> {
    check_scale(name, scale)?;
    let too_large = |why: &str| WorkloadError::TooLarge {
        name: name.to_string(),
        scale,
        why: why.to_string(),
    };
    let n = scaled(name, scale, base, per_tb, per_tb)?;
    let n = u32::try_from(n).map_err(|_| too_large("more than 2^32 vertices"))?;
    Graph::generate(n, seed).ok_or_else(|| too_large("more than 2^32 edges"))
}

fn pagerank(scale: f64, seed: u64) -> Result<Box<dyn Workload>, WorkloadError> {
    let g = graph_at("pagerank", scale, seed, VERTICES, VERTS_PER_TB)?;
    let n = g.n as u64;
    let grid = grid_u32("pagerank", scale, n / VERTS_PER_TB)?;
    let mut kernels = vec![Kernel::new("inibuffer", grid, WARPS)];
    for _ in 0..ITERATIONS {
        kernels.push(Kernel::new("pagerank1", grid, WARPS));
        kernels.push(Kernel::new("pagerank2", grid, WARPS));
    }
    Ok(Box::new(Program {
        name: "pagerank".into(),
        description: format!(
            "Pannotia PageRank on a power-law graph: {n} vertices, {} edges, {ITERATIONS} iterations",
            g.m()
        ),
        allocations: vec![
            Allocation::new("row", (n + 1) * 4),
            Allocation::new("col", g.m() * 4),
            Allocation::new("page_rank1", n * 4),
            Allocation::new("page_rank2", n * 4),
        ],
        kernels,
        gen: PageRankGen { g },
    }))
}

impl WarpGen for PageRankGen {
    fn stream(&self, kernel: usize, tb: u32, warp: u32) -> WarpStream<'_> {
        let v0 = (tb * WARPS + warp) * WARP as u32;
        let (v, n) = (v0 as u64, WARP);
        if kernel == 0 {
            return Box::new(
                [
                    coalesced(RANK1, v * 4, n, 4, true),
                    coalesced(RANK2, v * 4, n, 4, true),
                ]
                .into_iter(),
            );
        }
        if kernel.is_multiple_of(2) {
            return Box::new(
                [
                    coalesced(RANK2, v * 4, n, 4, false),
                    coalesced(RANK1, v * 4, n, 4, true),
                    coalesced(RANK2, v * 4, n, 4, true),
                ]
                .into_iter(),
            );
        }
        let header = [
            coalesced(ROW, v * 4, n, 4, false),
            coalesced(ROW, (v + 1) * 4, n, 4, false),
            coalesced(RANK1, v * 4, n, 4, false),
        ];
        Box::new(
            header
                .into_iter()
                .chain(EdgeWalk::new(&self.g, &LOOP, v0, n as u32)),
        )
    }

    fn count(&self) -> u64 {
        let warps = self.g.n / WARP as u32;
        let loops = EdgeWalk::iterations_of_all_warps(&self.g, WARP as u32);
        let per_iteration = warps as u64 * (3 + 3) + loops * LOOP.len() as u64;
        warps as u64 * 2 + ITERATIONS as u64 * per_iteration
    }
}
