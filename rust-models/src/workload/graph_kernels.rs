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
use super::graph_expand::{mask_read, Expand};
use super::program::{
    check_scale, coalesced, gather_offsets, grid_u32, scaled, Program, WarpGen, WARP,
};
use super::{Allocation, Kernel, LaneOffsets, WarpStream, Workload, WorkloadError};

pub(super) const WARPS: u32 = 8;
const VERTS_PER_TB: u64 = WARPS as u64 * WARP;
/// Vertices at scale 1: BFS expands each vertex once, SSSP several times (about 26 rounds
/// against BFS's 18 levels), so SSSP's graph is half the size for a similar run time.
const BFS_VERTICES: u64 = 1 << 20;
const SSSP_VERTICES: u64 = 1 << 19;

// Allocation indices (shared layout; SSSP's `weights` takes the place BFS leaves unused).
pub(super) const ROWS: u16 = 0;
pub(super) const COLS: u16 = 1;
pub(super) const MASK: u16 = 2;
pub(super) const UPDATING: u16 = 3;
const OVER: u16 = 4;
/// BFS: `visited`; SSSP: `weights`.
pub(super) const VISITED_OR_WEIGHTS: u16 = 5;
/// BFS: `cost`; SSSP: `dist`.
pub(super) const COST: u16 = 6;

/// Names of the graph workloads.
#[cfg(test)]
pub(crate) const NAMES: [&str; 2] = ["bfs", "sssp"];

#[derive(Clone, Copy, PartialEq)]
pub(super) enum Algo {
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

pub(super) struct GraphGen {
    pub(super) g: Graph,
    pub(super) algo: Algo,
    act: Activity,
    /// Rounds (BFS levels) executed: one `expand` + `update` kernel pair each.
    rounds: u32,
    /// [`Activity::updated`] as one bitset over the vertices per round: the expand
    /// kernel asks it for every edge's destination, at random, and a round's bits are an
    /// eighth of the level array (they stay in the host's cache).
    updated_bits: Vec<u64>,
    words_per_round: usize,
}

impl Activity {
    /// Vertex `v` is updated during round `r` (so active in round `r + 1`).
    fn updated(&self, v: u32, r: u32) -> bool {
        match self {
            Activity::Levels(l) => l[v as usize] != UNREACHED && l[v as usize] as u32 == r + 1,
            Activity::Rounds(m) => r < 63 && m[v as usize] >> (r + 1) & 1 == 1,
        }
    }

    /// [`Activity::updated`] of `n` vertices over `rounds` rounds, a bitset per round.
    fn updated_bits(&self, n: u32, rounds: u32) -> (Vec<u64>, usize) {
        let words = (n as usize).div_ceil(64);
        let mut bits = vec![0u64; words * rounds as usize];
        for r in 0..rounds {
            for v in 0..n {
                if self.updated(v, r) {
                    bits[r as usize * words + v as usize / 64] |= 1 << (v % 64);
                }
            }
        }
        (bits, words)
    }
}

impl GraphGen {
    fn new(g: Graph, algo: Algo, act: Activity, rounds: u32) -> GraphGen {
        let (updated_bits, words_per_round) = act.updated_bits(g.n, rounds);
        GraphGen {
            g,
            algo,
            act,
            rounds,
            updated_bits,
            words_per_round,
        }
    }

    /// Vertex `v` is in the frontier of round `r`.
    #[inline]
    pub(super) fn active(&self, v: u32, r: u32) -> bool {
        match &self.act {
            Activity::Levels(l) => l[v as usize] as u32 == r,
            Activity::Rounds(m) => m[v as usize] >> r & 1 == 1,
        }
    }
    /// Vertex `v` is updated during round `r < rounds` (so active in round `r + 1`).
    #[inline]
    pub(super) fn updated(&self, v: u32, r: u32) -> bool {
        self.updated_word(v, r) >> (v % 64) & 1 == 1
    }

    /// The word of round `r`'s bitset that holds vertex `v`.
    #[inline]
    fn updated_word(&self, v: u32, r: u32) -> u64 {
        self.updated_bits[r as usize * self.words_per_round + v as usize / 64]
    }

    /// [`GraphGen::updated`] of a warp's lanes as a bit mask (bit l: vertex `v0 + l`), in
    /// one read: a warp's 32 vertices share a word of the bitset.
    #[inline]
    pub(super) fn updated_lanes(&self, lanes: &Lanes32, r: u32) -> u32 {
        debug_assert!(lanes.v0.is_multiple_of(WARP as u32));
        (self.updated_word(lanes.v0, r) >> (lanes.v0 % 64)) as u32 & lane_mask(lanes.n)
    }

    /// [`GraphGen::active`] of a warp's lanes as a bit mask. A vertex is active in round
    /// `r > 0` exactly when round `r - 1` updated it (BFS: its level is `r`; SSSP: its
    /// round bit `r`), so one bitset word answers; round 0 asks vertex by vertex.
    #[inline]
    pub(super) fn active_lanes(&self, lanes: &Lanes32, r: u32) -> u32 {
        if r == 0 {
            (0..lanes.n).fold(0, |m, l| m | (self.active(lanes.v0 + l, 0) as u32) << l)
        } else {
            self.updated_lanes(lanes, r - 1)
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
    let (act, rounds) = activity(&g, algo);
    let grid = grid_u32(name, scale, n64 / VERTS_PER_TB)?;
    let (pre, allocations) = arrays(algo, n64, g.m());
    let mut kernels = Vec::new();
    for _ in 0..rounds {
        kernels.push(Kernel::new(format!("{pre}_expand"), grid, WARPS));
        kernels.push(Kernel::new(format!("{pre}_update"), grid, WARPS));
    }
    let description = describe(algo, n, g.m(), rounds);
    Ok(Box::new(Program {
        name: name.to_string(),
        description,
        allocations,
        kernels,
        gen: GraphGen::new(g, algo, act, rounds),
    }))
}

/// Which vertices each round activates, and the rounds (BFS levels) the run executes.
fn activity(g: &Graph, algo: Algo) -> (Activity, u32) {
    match algo {
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
    }
}

/// The kernels' name prefix and the arrays, in the order of the allocation indices
/// ([`ROWS`] … [`COST`]), for `n` vertices and `m` edges.
fn arrays(algo: Algo, n: u64, m: u64) -> (&'static str, Vec<Allocation>) {
    let (pre, second, cost) = match algo {
        Algo::Bfs => ("bfs", Allocation::new("visited", n), "cost"),
        Algo::Sssp => (
            "sssp",
            Allocation::new("weights", m * 4).in_group(0),
            "dist",
        ),
    };
    let allocations = vec![
        Allocation::new("row_offsets", (n + 1) * 4),
        Allocation::new("col_idx", m * 4).in_group(0),
        Allocation::new("mask", n),
        Allocation::new("updating", n),
        Allocation::new("over", 4),
        second,
        Allocation::new(cost, n * 4),
    ];
    (pre, allocations)
}

/// The one-line description `mcmvm workloads` prints.
fn describe(algo: Algo, n: u32, m: u64, rounds: u32) -> String {
    let (what, unit) = match algo {
        Algo::Bfs => ("Rodinia-style BFS", "levels"),
        Algo::Sssp => ("frontier Bellman-Ford SSSP", "rounds"),
    };
    format!("{what} on a power-law R-MAT-style graph: {n} vertices, {m} edges, {rounds} {unit}")
}

/// An `update` warp: read `updating`; if any lane is flagged, those lanes set `mask`
/// (and `visited`), clear `updating` and raise `over`. Its state is a lane mask, so no
/// instruction is built before it is issued.
struct Update {
    bfs: bool,
    lanes: Lanes32,
    /// Bit l: lane l's vertex was updated this round.
    flagged: u32,
    /// Index of the next instruction.
    next: u8,
}

impl Iterator for Update {
    type Item = super::WarpInstr;

    fn next(&mut self) -> Option<super::WarpInstr> {
        let i = self.next;
        self.next = self.next.saturating_add(1);
        if i == 0 {
            let (v0, n) = (self.lanes.v0 as u64, self.lanes.n as u64);
            return Some(coalesced(UPDATING, v0, n, 1, false));
        }
        if self.flagged == 0 {
            return None;
        }
        let (v0, bits) = (self.lanes.v0 as u64, self.flagged);
        let flagged = || {
            LaneOffsets::from_exact(
                bits.count_ones() as usize,
                set_bits(bits).map(|l| v0 + l as u64),
            )
        };
        // BFS: mask, visited, updating, over; SSSP has no `visited` write.
        let step = if !self.bfs && i >= 2 { i + 1 } else { i };
        Some(match step {
            1 => gather_offsets(MASK, flagged(), 1, true),
            2 => gather_offsets(VISITED_OR_WEIGHTS, flagged(), 1, true),
            3 => gather_offsets(UPDATING, flagged(), 1, true),
            4 => coalesced(OVER, 0, 1, 4, true),
            _ => return None,
        })
    }
}

/// The set bits of `bits`, lowest first (lanes of a warp mask, without a branch per lane).
pub(super) fn set_bits(mut bits: u32) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        (bits != 0).then(|| {
            let b = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            b
        })
    })
}

/// Bits of the first `n` lanes.
fn lane_mask(n: u32) -> u32 {
    if n >= 32 {
        u32::MAX
    } else {
        (1 << n) - 1
    }
}

/// Lane bookkeeping of one warp.
pub(super) struct Lanes32 {
    pub(super) v0: u32,
    pub(super) n: u32,
}

impl Lanes32 {
    pub(super) fn new(g: &Graph, tb: u32, warp: u32) -> Self {
        let v0 = (tb * WARPS + warp) * WARP as u32;
        Lanes32 {
            v0,
            n: (g.n.saturating_sub(v0)).min(WARP as u32),
        }
    }
}

impl GraphGen {
    fn expand_stream(&self, round: u32, lanes: Lanes32) -> WarpStream<'_> {
        let active = self.active_lanes(&lanes, round);
        if active == 0 {
            // Most warps of a level hold no frontier vertex (four in five of bfs's): their
            // one instruction needs no 400-byte edge-walking state, whose initialisation
            // wrote seven cold host lines per warp (~2 % of a bfs run).
            return Box::new(std::iter::once(mask_read(&lanes)));
        }
        Box::new(Expand::new(self, round, lanes, active))
    }

    fn update_stream(&self, round: u32, lanes: Lanes32) -> WarpStream<'_> {
        let flagged = self.updated_lanes(&lanes, round);
        Box::new(Update {
            bfs: self.algo == Algo::Bfs,
            lanes,
            flagged,
            next: 0,
        })
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
        let lanes = Lanes32::new(&self.g, tb, warp);
        if lanes.n == 0 {
            // Past the last vertex: the warp has no thread to run.
            return Box::new(std::iter::empty());
        }
        if kernel.is_multiple_of(2) {
            self.expand_stream(round, lanes)
        } else {
            self.update_stream(round, lanes)
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A warp with no active lane gets the one-instruction stream; every warp of every
    /// level must see exactly what the full edge-walking state emits (fixed seed).
    #[test]
    fn light_expand_streams_equal_the_full_state() {
        for algo in [Algo::Bfs, Algo::Sssp] {
            let g = Graph::generate(8192, 7).expect("a small graph");
            let act = match algo {
                Algo::Bfs => Activity::Levels(g.bfs_levels(0)),
                Algo::Sssp => Activity::Rounds(g.sssp_rounds(0).0),
            };
            let gen = GraphGen::new(g, algo, act, 8);
            let warps = gen.g.n.div_ceil(WARP as u32);
            let (mut light, mut full) = (0, 0);
            for round in 0..8 {
                for w in 0..warps {
                    let (tb, warp) = (w / WARPS, w % WARPS);
                    let lanes = Lanes32::new(&gen.g, tb, warp);
                    let active = gen.active_lanes(&lanes, round);
                    let expect: Vec<_> = Expand::new(&gen, round, lanes, active).collect();
                    let got: Vec<_> = gen.stream(2 * round as usize, tb, warp).collect();
                    assert!(got == expect, "round {round}, warp {w}");
                    if active == 0 {
                        light += 1;
                    } else {
                        full += 1;
                    }
                }
            }
            assert!(
                light > 0 && full > 0,
                "both kinds of warp: {light} / {full}"
            );
        }
    }
}
