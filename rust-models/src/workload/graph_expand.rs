//! The `expand` kernel's warp stream of BFS / SSSP (see `graph_kernels.rs` for the
//! algorithm). It emits one instruction per `next()` from fixed-size lane arrays, with no
//! allocation per instruction: at millions of instructions per second the generator would
//! otherwise cost as much as the GPU model it feeds.

use super::graph_kernels::{
    Algo, GraphGen, Lanes32, COLS, COST, MASK, ROWS, UPDATING, VISITED_OR_WEIGHTS,
};
use super::program::{coalesced, gather, WARP};
use super::WarpInstr;

const LANES: usize = WARP as usize;

/// What the next `next()` emits.
#[derive(Clone, Copy)]
enum Emit {
    /// The warp's first instruction: every lane reads its `mask` flag.
    MaskRead,
    /// Header gather `i` of the active lanes: clear the flag, read the row bounds, read
    /// the vertex's own cost.
    Header(u8),
    /// Instruction `i` of the current edge step.
    Step(u8),
    /// The next edge step (or the end of the stream).
    NextStep,
}

/// The per-edge-step state of an `expand` warp.
pub(super) struct Expand<'a> {
    gen: &'a GraphGen,
    round: u32,
    lanes: Lanes32,
    /// Active lanes: (vertex, first edge, degree).
    active: Vec<(u32, u64, u32)>,
    max_deg: u32,
    step: u32,
    emit: Emit,
    /// The current step's lanes: `col_idx` byte offsets, destinations, and the
    /// destinations this round updates (`k` and `u` of them).
    edges: [u64; LANES],
    dests: [u64; LANES],
    upd: [u64; LANES],
    k: usize,
    u: usize,
}

impl<'a> Expand<'a> {
    pub(super) fn new(gen: &'a GraphGen, round: u32, tb: u32, warp: u32) -> Self {
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
            emit: Emit::MaskRead,
            edges: [0; LANES],
            dests: [0; LANES],
            upd: [0; LANES],
            k: 0,
            u: 0,
        }
    }

    /// Gather the lanes of edge step `j`.
    fn load_step(&mut self, j: u32) {
        let g = &self.gen.g;
        let (mut k, mut u) = (0, 0);
        for &(_, s, d) in &self.active {
            if j < d {
                let e = s + j as u64;
                let t = g.dest(e);
                self.edges[k] = e * 4;
                self.dests[k] = t as u64;
                k += 1;
                if self.gen.updated(t, self.round) {
                    self.upd[u] = t as u64;
                    u += 1;
                }
            }
        }
        self.k = k;
        self.u = u;
    }

    /// Instruction `i` of the current step, if the step has one.
    fn step_instr(&self, i: u8) -> Option<WarpInstr> {
        let (k, u) = (self.k, self.u);
        let scaled = |src: &[u64], by: u64| {
            let mut out = [0u64; LANES];
            for (o, &x) in out.iter_mut().zip(src) {
                *o = x * by;
            }
            out
        };
        Some(match (self.gen.algo, i) {
            (_, 0) => gather(COLS, &self.edges[..k], 4, false),
            (Algo::Bfs, 1) => gather(VISITED_OR_WEIGHTS, &self.dests[..k], 1, false),
            (Algo::Bfs, 2) if u > 0 => gather(COST, &scaled(&self.upd[..u], 4)[..u], 4, true),
            (Algo::Bfs, 3) if u > 0 => gather(UPDATING, &self.upd[..u], 1, true),
            (Algo::Sssp, 1) => gather(VISITED_OR_WEIGHTS, &self.edges[..k], 4, false),
            (Algo::Sssp, 2) => gather(COST, &scaled(&self.dests[..k], 4)[..k], 4, true),
            (Algo::Sssp, 3) if u > 0 => gather(UPDATING, &self.upd[..u], 1, true),
            _ => return None,
        })
    }

    /// Header gather `i` over the active lanes.
    fn header_instr(&self, i: u8) -> Option<WarpInstr> {
        let n = self.active.len();
        let mut vs = [0u64; LANES];
        for (o, a) in vs.iter_mut().zip(&self.active) {
            *o = a.0 as u64 * if i == 0 { 1 } else { 4 };
        }
        Some(match i {
            0 => gather(MASK, &vs[..n], 1, true),
            1 => gather(ROWS, &vs[..n], 8, false),
            2 => gather(COST, &vs[..n], 4, false),
            _ => return None,
        })
    }
}

impl Iterator for Expand<'_> {
    type Item = WarpInstr;
    fn next(&mut self) -> Option<WarpInstr> {
        loop {
            match self.emit {
                Emit::MaskRead => {
                    if self.lanes.n == 0 {
                        return None;
                    }
                    self.emit = if self.active.is_empty() {
                        Emit::NextStep
                    } else {
                        Emit::Header(0)
                    };
                    return Some(coalesced(
                        MASK,
                        self.lanes.v0 as u64,
                        self.lanes.n as u64,
                        1,
                        false,
                    ));
                }
                Emit::Header(i) => match self.header_instr(i) {
                    Some(instr) => {
                        self.emit = Emit::Header(i + 1);
                        return Some(instr);
                    }
                    None => self.emit = Emit::NextStep,
                },
                Emit::Step(i) => match self.step_instr(i) {
                    Some(instr) => {
                        self.emit = Emit::Step(i + 1);
                        return Some(instr);
                    }
                    None => self.emit = Emit::NextStep,
                },
                Emit::NextStep => {
                    if self.step >= self.max_deg {
                        return None;
                    }
                    let j = self.step;
                    self.step += 1;
                    self.load_step(j);
                    self.emit = Emit::Step(0);
                }
            }
        }
    }
}
