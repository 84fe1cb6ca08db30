//! BFS and SSSP on a generated power-law graph, as Rodinia's BFS is written: one thread per
//! vertex, two kernels per level (or round).
//!
//! `expand`: every thread reads its `mask` flag; an active vertex clears it, reads its row
//! offsets (one 8-byte load covers `row_offsets[v]` and `[v + 1]`) and walks its edges: per
//! edge a gather of `col_idx`, then of `visited` (BFS) or of `weights` followed by an atomic
//! min on `dist` (SSSP), and, for destinations that improve, writes of `cost` and
//! `updating`. A warp walks as many edge steps as its longest active lane: power-law degrees
//! make the divergence real. `update`: every thread reads `updating`; flagged vertices set
//! `mask` (and `visited`), clear `updating` and raise the `over` flag.
//!
//! Thread blocks own contiguous vertex ranges, so the per-vertex arrays and each block's
//! slice of `col_idx` are block-private, while the gathers into `visited` / `dist` go
//! anywhere — the mix CLAP's Table 4 shows for BFS.

use super::graph::{Graph, MAX_SSSP_ROUNDS, UNREACHED};
use super::program::{check_scale, coalesced, gather, grid_u32, scaled, Program, WarpGen, WARP};
use super::{Allocation, Kernel, WarpInstr, WarpStream, Workload, WorkloadError};

const WARPS: u32 = 8;
const VERTS_PER_TB: u64 = WARPS as u64 * WARP;
/// Vertices at scale 1: BFS expands each vertex once, SSSP several times (about 26 rounds
/// against BFS's 18 levels), so SSSP's graph is half the size for a similar run time.
const BFS_VERTICES: u64 = 1 << 20;
const SSSP_VERTICES: u64 = 1 << 19;

// Allocation indices (shared layout; SSSP's `weights` takes the place BFS leaves unused).
const ROWS: u16 = 0;
const COLS: u16 = 1;
const MASK: u16 = 2;
const UPDATING: u16 = 3;
const OVER: u16 = 4;
/// BFS: `visited`; SSSP: `weights`.
const VISITED_OR_WEIGHTS: u16 = 5;
/// BFS: `cost`; SSSP: `dist`.
const COST: u16 = 6;

/// Names of the graph workloads.
#[cfg(test)]
pub(crate) const NAMES: [&str; 2] = ["bfs", "sssp"];

#[derive(Clone, Copy, PartialEq)]
enum Algo {
    Bfs,
    Sssp,
}

/// Which vertices take the branch in each round.
enum Activity {
    /// BFS level per vertex.
    Levels(Vec<u8>),
    /// SSSP: bit r = active in round r.
    Rounds(Vec<u64>),
}

struct GraphGen {
    g: Graph,
    algo: Algo,
    act: Activity,
    /// Rounds (BFS levels) executed: one `expand` + `update` kernel pair each.
    rounds: u32,
}

impl GraphGen {
    /// Vertex `v` is in the frontier of round `r`.
    #[inline]
    fn active(&self, v: u32, r: u32) -> bool {
        match &self.act {
            Activity::Levels(l) => l[v as usize] as u32 == r,
            Activity::Rounds(m) => m[v as usize] >> r & 1 == 1,
        }
    }
    /// Vertex `v` is updated during round `r` (so active in round `r + 1`).
    #[inline]
    fn updated(&self, v: u32, r: u32) -> bool {
        match &self.act {
            Activity::Levels(l) => l[v as usize] != UNREACHED && l[v as usize] as u32 == r + 1,
            Activity::Rounds(m) => r < 63 && m[v as usize] >> (r + 1) & 1 == 1,
        }
    }
}

/// Build `bfs` or `sssp`.
pub(crate) fn build(
    name: &str,
    scale: f64,
    seed: u64,
) -> Option<Result<Box<dyn Workload>, WorkloadError>> {
    let algo = match name {
        "bfs" => Algo::Bfs,
        "sssp" => Algo::Sssp,
        _ => return None,
    };
    Some(build_algo(name, algo, scale, seed))
}

fn build_algo(
    name: &str,
    algo: Algo,
    scale: f64,
    seed: u64,
) -> Result<Box<dyn Workload>, WorkloadError> {
    check_scale(name, scale)?;
    let base = if algo == Algo::Bfs {
        BFS_VERTICES
    } else {
        SSSP_VERTICES
    };
    let n64 = scaled(name, scale, base, VERTS_PER_TB, VERTS_PER_TB)?;
    let too_large = |why: &str| WorkloadError::TooLarge {
        name: name.to_string(),
        scale,
        why: why.to_string(),
    };
    let n = u32::try_from(n64).map_err(|_| too_large("more than 2^32 vertices"))?;
    let g = Graph::generate(n, seed).ok_or_else(|| too_large("more than 2^32 edges"))?;
    let (act, rounds) = match algo {
        Algo::Bfs => {
            let levels = g.bfs_levels(0);
            let depth = levels
                .iter()
                .filter(|&&l| l != UNREACHED)
                .max()
                .copied()
                .unwrap_or(0);
            // Levels 0..=depth each expand; the last finds nothing new and stops the loop.
            (Activity::Levels(levels), depth as u32 + 1)
        }
        Algo::Sssp => {
            let (mask, rounds) = g.sssp_rounds(0);
            (Activity::Rounds(mask), rounds.min(MAX_SSSP_ROUNDS))
        }
    };
    let grid = grid_u32(name, scale, n64 / VERTS_PER_TB)?;
    let (pre, second, cost) = match algo {
        Algo::Bfs => ("bfs", Allocation::new("visited", n64), "cost"),
        Algo::Sssp => (
            "sssp",
            Allocation::new("weights", g.m() * 4).in_group(0),
            "dist",
        ),
    };
    let allocations = vec![
        Allocation::new("row_offsets", (n64 + 1) * 4),
        Allocation::new("col_idx", g.m() * 4).in_group(0),
        Allocation::new("mask", n64),
        Allocation::new("updating", n64),
        Allocation::new("over", 4),
        second,
        Allocation::new(cost, n64 * 4),
    ];
    let mut kernels = Vec::new();
    for _ in 0..rounds {
        kernels.push(Kernel::new(format!("{pre}_expand"), grid, WARPS));
        kernels.push(Kernel::new(format!("{pre}_update"), grid, WARPS));
    }
    let description = format!(
        "{} on a power-law R-MAT-style graph: {} vertices, {} edges, {} {}",
        if algo == Algo::Bfs {
            "Rodinia-style BFS"
        } else {
            "frontier Bellman-Ford SSSP"
        },
        n,
        g.m(),
        rounds,
        if algo == Algo::Bfs {
            "levels"
        } else {
            "rounds"
        }
    );
    Ok(Box::new(Program {
        name: name.to_string(),
        description,
        allocations,
        kernels,
        gen: GraphGen {
            g,
            algo,
            act,
            rounds,
        },
    }))
}

/// Lane bookkeeping of one warp.
struct Lanes32 {
    v0: u32,
    n: u32,
}

impl Lanes32 {
    fn new(g: &Graph, tb: u32, warp: u32) -> Self {
        let v0 = (tb * WARPS + warp) * WARP as u32;
        Lanes32 {
            v0,
            n: (g.n.saturating_sub(v0)).min(WARP as u32),
        }
    }
}

/// The per-edge-step state of an `expand` warp.
struct Expand<'a> {
    gen: &'a GraphGen,
    round: u32,
    lanes: Lanes32,
    /// Active lanes: (vertex, first edge, degree).
    active: Vec<(u32, u64, u32)>,
    max_deg: u32,
    step: u32,
    started: bool,
    /// Instructions ready to go out, in reverse order.
    pending: Vec<WarpInstr>,
}

impl<'a> Expand<'a> {
    fn new(gen: &'a GraphGen, round: u32, tb: u32, warp: u32) -> Self {
        let lanes = Lanes32::new(&gen.g, tb, warp);
        let active: Vec<_> = (lanes.v0..lanes.v0 + lanes.n)
            .filter(|&v| gen.active(v, round))
            .map(|v| {
                let (s, d) = gen.g.edges(v);
                (v, s, d)
            })
            .collect();
        let max_deg = active.iter().map(|a| a.2).max().unwrap_or(0);
        Expand {
            gen,
            round,
            lanes,
            active,
            max_deg,
            step: 0,
            started: false,
            pending: Vec::with_capacity(4),
        }
    }

    /// Queue the instructions of edge step `j`.
    fn queue_step(&mut self, j: u32) {
        let g = &self.gen.g;
        let mut edges = [0u64; 32];
        let mut dests = [0u64; 32];
        let mut upd = [0u64; 32];
        let (mut k, mut u) = (0, 0);
        for &(_, s, d) in &self.active {
            if j < d {
                let e = s + j as u64;
                let t = g.dest(e);
                edges[k] = e * 4;
                dests[k] = t as u64;
                k += 1;
                if self.gen.updated(t, self.round) {
                    upd[u] = t as u64;
                    u += 1;
                }
            }
        }
        let mut out = Vec::with_capacity(4);
        out.push(gather(COLS, &edges[..k], 4, false));
        match self.gen.algo {
            Algo::Bfs => {
                out.push(gather(VISITED_OR_WEIGHTS, &dests[..k], 1, false));
                if u > 0 {
                    let cost: Vec<u64> = upd[..u].iter().map(|t| t * 4).collect();
                    out.push(gather(COST, &cost, 4, true));
                    out.push(gather(UPDATING, &upd[..u], 1, true));
                }
            }
            Algo::Sssp => {
                out.push(gather(VISITED_OR_WEIGHTS, &edges[..k], 4, false));
                let dist: Vec<u64> = dests[..k].iter().map(|t| t * 4).collect();
                out.push(gather(COST, &dist, 4, true));
                if u > 0 {
                    out.push(gather(UPDATING, &upd[..u], 1, true));
                }
            }
        }
        out.reverse();
        self.pending = out;
    }
}

impl Iterator for Expand<'_> {
    type Item = WarpInstr;
    fn next(&mut self) -> Option<WarpInstr> {
        loop {
            if let Some(i) = self.pending.pop() {
                return Some(i);
            }
            if !self.started {
                self.started = true;
                if self.lanes.n == 0 {
                    return None;
                }
                if !self.active.is_empty() {
                    let vs: Vec<u64> = self.active.iter().map(|a| a.0 as u64).collect();
                    let rows: Vec<u64> = vs.iter().map(|v| v * 4).collect();
                    // Clear the flag, read the row bounds and the vertex's own cost (BFS
                    // writes cost + 1 to new vertices; SSSP relaxes from it).
                    let mut hdr = vec![
                        gather(MASK, &vs, 1, true),
                        gather(ROWS, &rows, 8, false),
                        gather(COST, &rows, 4, false),
                    ];
                    hdr.reverse();
                    self.pending = hdr;
                }
                return Some(coalesced(
                    MASK,
                    self.lanes.v0 as u64,
                    self.lanes.n as u64,
                    1,
                    false,
                ));
            }
            if self.step >= self.max_deg {
                return None;
            }
            let j = self.step;
            self.step += 1;
            self.queue_step(j);
        }
    }
}

impl GraphGen {
    fn update_stream(&self, round: u32, tb: u32, warp: u32) -> WarpStream<'_> {
        let lanes = Lanes32::new(&self.g, tb, warp);
        if lanes.n == 0 {
            return Box::new(std::iter::empty());
        }
        let flagged: Vec<u64> = (lanes.v0..lanes.v0 + lanes.n)
            .filter(|&v| self.updated(v, round))
            .map(|v| v as u64)
            .collect();
        let mut out = vec![coalesced(
            UPDATING,
            lanes.v0 as u64,
            lanes.n as u64,
            1,
            false,
        )];
        if !flagged.is_empty() {
            out.push(gather(MASK, &flagged, 1, true));
            if self.algo == Algo::Bfs {
                out.push(gather(VISITED_OR_WEIGHTS, &flagged, 1, true));
            }
            out.push(gather(UPDATING, &flagged, 1, true));
            out.push(coalesced(OVER, 0, 1, 4, true));
        }
        Box::new(out.into_iter())
    }

    /// Exact instruction count of one warp in one round (mirrors the streams).
    fn warp_count(&self, round: u32, lanes: &Lanes32) -> u64 {
        if lanes.n == 0 {
            return 0;
        }
        let bfs = self.algo == Algo::Bfs;
        let mut total = 1; // expand: mask read
        let active: Vec<u32> = (lanes.v0..lanes.v0 + lanes.n)
            .filter(|&v| self.active(v, round))
            .collect();
        if !active.is_empty() {
            total += 3;
            let max_deg = active.iter().map(|&v| self.g.edges(v).1).max().unwrap_or(0);
            for j in 0..max_deg {
                let any_update = active.iter().any(|&v| {
                    let (s, d) = self.g.edges(v);
                    j < d && self.updated(self.g.dest(s + j as u64), round)
                });
                total += if bfs {
                    2 + 2 * any_update as u64
                } else {
                    3 + any_update as u64
                };
            }
        }
        total += 1; // update: updating read
        if (lanes.v0..lanes.v0 + lanes.n).any(|v| self.updated(v, round)) {
            total += if bfs { 4 } else { 3 };
        }
        total
    }
}

impl WarpGen for GraphGen {
    fn stream(&self, kernel: usize, tb: u32, warp: u32) -> WarpStream<'_> {
        let round = (kernel / 2) as u32;
        if kernel.is_multiple_of(2) {
            Box::new(Expand::new(self, round, tb, warp))
        } else {
            self.update_stream(round, tb, warp)
        }
    }

    fn count(&self) -> u64 {
        let warps = self.g.n.div_ceil(WARP as u32);
        let mut total = 0;
        for r in 0..self.rounds {
            for w in 0..warps {
                let lanes = Lanes32::new(&self.g, w / WARPS, w % WARPS);
                total += self.warp_count(r, &lanes);
            }
        }
        total
    }
}
