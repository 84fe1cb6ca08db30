//! The edge loop of a vertex-parallel graph kernel, as Pannotia's PageRank and GraphBIG's
//! degree centrality write it: one thread per vertex, `for (e = start; e < end; e++)`. A
//! warp runs as many iterations as its longest active lane; at iteration `j` only the
//! lanes whose degree exceeds `j` issue, so power-law degrees make the divergence real
//! (as in `graph_expand.rs` for BFS / SSSP, whose per-round activity this loop lacks:
//! here every vertex walks its edges in every launch).

use super::graph::Graph;
use super::program::{gather_offsets, WARP};
use super::{LaneOffsets, WarpInstr};

const LANES: usize = WARP as usize;

/// What indexes one instruction of the loop body.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum EdgeIndex {
    /// The edge itself (`col[e]`, `edgelist[e]`, `weights[e]`).
    Edge,
    /// The edge's destination vertex (`rank[col[e]]`, `vplist[dest]`).
    Dest,
}

/// One instruction of the loop body: allocation, index, bytes per element, write.
#[derive(Clone, Copy, Debug)]
pub(super) struct StepOp {
    pub alloc: u16,
    pub index: EdgeIndex,
    pub elem: u8,
    pub write: bool,
}

/// The loop-body instructions of one warp, iteration by iteration.
pub(super) struct EdgeWalk<'a> {
    g: &'a Graph,
    ops: &'static [StepOp],
    /// First edge and degree of each lane's vertex (lanes `0..n`).
    first: [u64; LANES],
    degree: [u32; LANES],
    n: usize,
    max_deg: u32,
    /// The iteration in progress and the next of its instructions.
    step: u32,
    pos: usize,
    /// Lanes with an edge at `step`.
    live: u32,
}

impl<'a> EdgeWalk<'a> {
    /// The loop of the warp whose lanes hold vertices `v0..v0 + n`.
    pub(super) fn new(g: &'a Graph, ops: &'static [StepOp], v0: u32, n: u32) -> Self {
        let mut w = EdgeWalk {
            g,
            ops,
            first: [0; LANES],
            degree: [0; LANES],
            n: n as usize,
            max_deg: 0,
            step: 0,
            pos: 0,
            live: 0,
        };
        for l in 0..w.n {
            let (s, d) = g.edges(v0 + l as u32);
            w.first[l] = s;
            w.degree[l] = d;
            w.max_deg = w.max_deg.max(d);
        }
        w.load_step();
        w
    }

    /// Iterations the warp runs: its longest lane's degree.
    pub(super) fn iterations(g: &Graph, v0: u32, n: u32) -> u64 {
        (v0..v0 + n).map(|v| g.edges(v).1).max().unwrap_or(0) as u64
    }

    /// Loop iterations summed over every full warp of one vertex per lane (a kernel's
    /// edge loops, for the generators' exact instruction counts).
    pub(super) fn iterations_of_all_warps(g: &Graph, lanes: u32) -> u64 {
        (0..g.n / lanes)
            .map(|w| EdgeWalk::iterations(g, w * lanes, lanes))
            .sum()
    }

    fn load_step(&mut self) {
        self.live = 0;
        for l in 0..self.n {
            if self.step < self.degree[l] {
                self.live |= 1 << l;
            }
        }
    }
}

impl Iterator for EdgeWalk<'_> {
    type Item = WarpInstr;

    fn next(&mut self) -> Option<WarpInstr> {
        if self.ops.is_empty() || self.step >= self.max_deg {
            return None;
        }
        let op = self.ops[self.pos];
        let (j, e) = (self.step as u64, op.elem as u64);
        let lanes = self.live.count_ones() as usize;
        let live = super::graph_kernels::set_bits(self.live);
        let offsets = match op.index {
            EdgeIndex::Edge => {
                LaneOffsets::from_exact(lanes, live.map(|l| (self.first[l] + j) * e))
            }
            EdgeIndex::Dest => LaneOffsets::from_exact(
                lanes,
                live.map(|l| self.g.dest(self.first[l] + j) as u64 * e),
            ),
        };
        self.pos += 1;
        if self.pos == self.ops.len() {
            self.pos = 0;
            self.step += 1;
            if self.step < self.max_deg {
                self.load_step();
            }
        }
        Some(gather_offsets(op.alloc, offsets, op.elem, op.write))
    }
}
