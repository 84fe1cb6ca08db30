//! The built-in workloads by name, the two study suites, and their one-line descriptions.

use super::{cuda_sdk, graphbig, pannotia, parboil_lbm, rodinia_extra};
use super::{dense, dl, gemm, graph_kernels, pattern, spmv, stencil};
use super::{tango, uvmbench, uvmbench_rodinia, uvmbench_tiles};
use super::{Workload, WorkloadError};

/// The CLAP study (MCM GPU page placement): the paper's benchmarks. The last six stand
/// for the paper's fifteen that its text does not name; which benchmarks they are is our
/// choice (docs/workloads.md).
const CLAP_SUITE: [&str; 18] = [
    "bfs",
    "sssp",
    "ste",
    "3dc",
    "lps",
    "blk",
    "paf",
    "lud",
    "sc",
    "gemm-resnet50",
    "gemm-vit",
    "gemm-gpt3",
    "pagerank",
    "dc",
    "kmeans",
    "hotspot",
    "lbm",
    "transpose",
];

/// The Forest study (UVM oversubscription): access patterns, DL footprints, and fifteen
/// general-purpose benchmarks of UVMBench and Tango (our choice of the paper's unnamed
/// fifteen, `docs/workloads-forest.md`).
const FOREST_SUITE: [&str; 25] = [
    "ls",
    "hchi",
    "hcli",
    "lc",
    "mixed",
    "spmv",
    "alexnet",
    "resnet50",
    "bert",
    "whisper",
    "uvm-2dconv",
    "uvm-3dconv",
    "uvm-atax",
    "uvm-bicg",
    "uvm-mvt",
    "uvm-gesummv",
    "uvm-fdtd2d",
    "uvm-backprop",
    "uvm-bfs",
    "uvm-hotspot",
    "uvm-kmeans",
    "uvm-nw",
    "uvm-srad",
    "tango-gru",
    "tango-lstm",
];

/// Workloads of the CLAP study, in table order.
pub fn clap_suite() -> &'static [&'static str] {
    &CLAP_SUITE
}

/// Workloads of the Forest study, in table order.
pub fn forest_suite() -> &'static [&'static str] {
    &FOREST_SUITE
}

/// A catalogue entry: name, suite and what the generator models.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct WorkloadInfo {
    pub name: &'static str,
    pub suite: &'static str,
    pub summary: &'static str,
}

/// The one-line summary of each built-in workload, as `mcmvm workloads` lists it.
const SUMMARIES: &[(&str, &str)] = &[
    (
        "bfs",
        "Rodinia BFS on a power-law graph (CSR; divergent edge loops, gathers into visited/cost)",
    ),
    (
        "sssp",
        "frontier Bellman-Ford SSSP on a power-law graph (CSR with weights, atomic min)",
    ),
    (
        "ste",
        "Parboil 7-point 3D stencil; a thread block per row, chiplet slices per plane",
    ),
    (
        "3dc",
        "PolyBench 3D convolution; one kernel per plane, 32x8 tiles",
    ),
    (
        "lps",
        "3D Laplace Jacobi solver; 32x4 tiles marching z",
    ),
    (
        "blk",
        "BlackScholes: five streamed arrays, contiguous per thread block",
    ),
    (
        "paf",
        "Rodinia pathfinder: dynamic programming over wall rows, pyramid blocks",
    ),
    (
        "lud",
        "Rodinia LU decomposition: diagonal, perimeter and internal tile kernels",
    ),
    (
        "sc",
        "Rodinia streamcluster pgain: transposed coordinates, repeated per candidate",
    ),
    (
        "gemm-resnet50",
        "SGEMM with ResNet-50's FC shape; matrix B read by every thread block",
    ),
    (
        "gemm-vit",
        "SGEMM with ViT-Base's MLP shape; matrix B read by every thread block",
    ),
    (
        "gemm-gpt3",
        "SGEMM with a GPT-3 MLP slice; matrix B read by every thread block",
    ),
    (
        "pagerank",
        "Pannotia PageRank: per-edge atomic adds into the destinations' ranks (our pick)",
    ),
    (
        "dc",
        "GraphBIG degree centrality: per-edge atomic increments, 1024-thread blocks (our pick)",
    ),
    (
        "kmeans",
        "Rodinia k-means: feature transpose, then every point's features once per cluster (our pick)",
    ),
    (
        "hotspot",
        "Rodinia hotspot: 2-D thermal grid, 16x16 blocks with a pyramid halo (our pick)",
    ),
    (
        "lbm",
        "Parboil lbm: D3Q19 lattice Boltzmann, 20 slabs per grid, push streaming (our pick)",
    ),
    (
        "transpose",
        "CUDA SDK transposeCoalesced: tile rows in, tile columns out (our pick)",
    ),
    (
        "ls",
        "linear streaming (LS): vector add over three arrays",
    ),
    (
        "hchi",
        "dense irregular (HCHI): uniform random gathers over a table",
    ),
    (
        "hcli",
        "sparse irregular (HCLI): gathers touching one page per 64 KB",
    ),
    (
        "lc",
        "low coverage (LC): gathers confined to 10% of a table",
    ),
    (
        "mixed",
        "one object of each class (LS, HCHI, HCLI, LC) in one kernel",
    ),
    (
        "spmv",
        "CSR SpMV: streamed rows and nonzeros, dense irregular gathers of x",
    ),
    (
        "alexnet",
        "AlexNet layer-by-layer footprint (weights and activations as objects)",
    ),
    (
        "resnet50",
        "ResNet-50 layer-by-layer footprint",
    ),
    (
        "bert",
        "BERT-base encoder footprint; attention as dense gathers",
    ),
    (
        "whisper",
        "Whisper-base encoder/decoder footprint; self- and cross-attention",
    ),
    (
        "uvm-2dconv",
        "UVMBench PolyBench 2DCONV: 3x3 convolution, 32x8 blocks (LS)",
    ),
    (
        "uvm-3dconv",
        "UVMBench PolyBench 3DCONV: one launch per plane, 11 loads per point (LS)",
    ),
    (
        "uvm-atax",
        "UVMBench PolyBench ATAX: thread per row (lanes 32 rows apart), then per column",
    ),
    (
        "uvm-bicg",
        "UVMBench PolyBench BICG: thread per column, then per row of one matrix",
    ),
    (
        "uvm-mvt",
        "UVMBench PolyBench MVT: x1 += A y1 (rows), x2 += A^T y2 (columns)",
    ),
    (
        "uvm-gesummv",
        "UVMBench PolyBench GESUMMV: two matrices walked row per thread",
    ),
    (
        "uvm-fdtd2d",
        "UVMBench PolyBench FDTD-2D: three field-update kernels per time step (LS)",
    ),
    (
        "uvm-backprop",
        "UVMBench Rodinia backprop: layerforward and adjust_weights over the weights",
    ),
    (
        "uvm-bfs",
        "UVMBench Rodinia BFS (the bfs generator) with per-kernel objects declared",
    ),
    (
        "uvm-hotspot",
        "UVMBench Rodinia hotspot: pyramid stencil tiles, ping-pong temperatures",
    ),
    (
        "uvm-kmeans",
        "UVMBench Rodinia kmeans: transpose, then 34 feature rows per point and cluster",
    ),
    (
        "uvm-nw",
        "UVMBench Rodinia Needleman-Wunsch: 16x16 tiles on anti-diagonal launches",
    ),
    (
        "uvm-srad",
        "UVMBench Rodinia srad_v2: two 16x16-tile kernels over six images",
    ),
    (
        "tango-gru",
        "Tango GRU: per time step, six gate matrices streamed by one cell kernel",
    ),
    (
        "tango-lstm",
        "Tango LSTM: per time step, eight gate matrices streamed, cell state updated",
    ),
];

/// The summary of workload `n` (empty for a name without one).
fn summary(n: &str) -> &'static str {
    SUMMARIES
        .iter()
        .find(|(name, _)| *name == n)
        .map_or("", |(_, s)| s)
}

/// Every built-in workload with a short description (without building it).
pub fn catalog() -> Vec<WorkloadInfo> {
    let clap = CLAP_SUITE.iter().map(|&n| WorkloadInfo {
        name: n,
        suite: "clap",
        summary: summary(n),
    });
    let forest = FOREST_SUITE.iter().map(|&n| WorkloadInfo {
        name: n,
        suite: "forest",
        summary: summary(n),
    });
    clap.chain(forest).collect()
}

/// Build the built-in workload `name` at `scale` (1.0 = default size) with `seed`.
pub fn by_name(name: &str, scale: f64, seed: u64) -> Result<Box<dyn Workload>, WorkloadError> {
    let built = gemm::build(name, scale)
        .or_else(|| graph_kernels::build(name, scale, seed))
        .or_else(|| stencil::build(name, scale))
        .or_else(|| dense::build(name, scale, seed))
        .or_else(|| pattern::build(name, scale, seed))
        .or_else(|| spmv::build(name, scale, seed))
        .or_else(|| dl::build(name, scale, seed))
        .or_else(|| uvmbench::build(name, scale))
        .or_else(|| uvmbench_rodinia::build(name, scale, seed))
        .or_else(|| uvmbench_tiles::build(name, scale))
        .or_else(|| tango::build(name, scale))
        .or_else(|| pannotia::build(name, scale, seed))
        .or_else(|| graphbig::build(name, scale, seed))
        .or_else(|| rodinia_extra::build(name, scale))
        .or_else(|| parboil_lbm::build(name, scale))
        .or_else(|| cuda_sdk::build(name, scale));
    built.unwrap_or_else(|| {
        Err(WorkloadError::UnknownWorkload {
            name: name.to_string(),
            valid: CLAP_SUITE
                .iter()
                .chain(FOREST_SUITE.iter())
                .copied()
                .collect::<Vec<_>>()
                .join(", "),
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_listed_name_builds_and_names_match() {
        for info in catalog() {
            let w = by_name(info.name, 0.01, 1).unwrap_or_else(|e| panic!("{}: {e}", info.name));
            assert_eq!(w.name(), info.name);
            assert!(!info.summary.is_empty());
        }
        // The generator files agree with the suites.
        let all: Vec<&str> = gemm::NAMES
            .iter()
            .chain(&graph_kernels::NAMES)
            .chain(&stencil::NAMES)
            .chain(&dense::NAMES)
            .chain(&pattern::NAMES)
            .chain(&dl::NAMES)
            .chain(&["spmv"])
            .chain(&uvmbench::NAMES)
            .chain(&uvmbench_rodinia::NAMES)
            .chain(&uvmbench_tiles::NAMES)
            .chain(&tango::NAMES)
            .chain(&pannotia::NAMES)
            .chain(&graphbig::NAMES)
            .chain(&rodinia_extra::NAMES)
            .chain(&parboil_lbm::NAMES)
            .chain(&cuda_sdk::NAMES)
            .copied()
            .collect();
        assert_eq!(all.len(), CLAP_SUITE.len() + FOREST_SUITE.len());
    }

    #[test]
    fn unknown_name_lists_the_valid_ones() {
        let e = by_name("nope", 1.0, 1).err().unwrap().to_string();
        assert!(
            e.contains("unknown workload `nope`")
                && e.contains("gemm-gpt3")
                && e.contains("whisper"),
            "{e}"
        );
    }

    #[test]
    fn bad_scale_is_an_error() {
        for s in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            assert!(matches!(
                by_name("ste", s, 1),
                Err(WorkloadError::BadScale { .. })
            ));
        }
    }
}
