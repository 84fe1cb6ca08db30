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

/// Which lanes of an edge step an instruction gathers, and by what index.
#[derive(Clone, Copy)]
enum StepLanes {
    /// Every lane with an edge this step, by edge index.
    Edges,
    /// The same lanes, by destination vertex.
    Dests,
    /// Lanes whose destination this round updates, by destination vertex.
    Updated,
}

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
///
/// Kept small and in one piece (about 400 bytes, no side allocation): the engine holds
/// thousands of these, one per resident warp, and touches a different one on nearly every
/// instruction, so their size is the host-cache footprint of the whole generator.
pub(super) struct Expand<'a> {
    gen: &'a GraphGen,
    round: u32,
    lanes: Lanes32,
    /// Active lanes: lane in the warp, first edge and degree of its vertex.
    lane: [u8; LANES],
    first_edge: [u32; LANES],
    degree: [u16; LANES],
    active: u8,
    max_deg: u32,
    step: u32,
    emit: Emit,
    /// The current step: destinations of its edges (in active-lane order), and which of
    /// them this round updates (bit i for destination i).
    dests: [u32; LANES],
    updates: u32,
}

impl<'a> Expand<'a> {
    pub(super) fn new(gen: &'a GraphGen, round: u32, tb: u32, warp: u32) -> Self {
        let lanes = Lanes32::new(&gen.g, tb, warp);
        let mut e = Expand {
            gen,
            round,
            lanes,
            lane: [0; LANES],
            first_edge: [0; LANES],
            degree: [0; LANES],
            active: 0,
            max_deg: 0,
            step: 0,
            emit: Emit::MaskRead,
            dests: [0; LANES],
            updates: 0,
        };
        for l in 0..e.lanes.n {
            let v = e.lanes.v0 + l;
            if gen.active(v, round) {
                let (s, d) = gen.g.edges(v);
                let a = e.active as usize;
                e.lane[a] = l as u8;
                // Edge indices fit 32 bits (the row offsets are u32), degrees
                // `MAX_DEGREE`.
                e.first_edge[a] = s as u32;
                e.degree[a] = d as u16;
                e.max_deg = e.max_deg.max(d);
                e.active += 1;
            }
        }
        e
    }

    /// The active lanes' (first edge, degree).
    fn active_edges(&self) -> impl Iterator<Item = (u64, u32)> + '_ {
        let n = self.active as usize;
        self.first_edge[..n]
            .iter()
            .zip(&self.degree[..n])
            .map(|(&s, &d)| (s as u64, d as u32))
    }

    /// Gather the destinations of edge step `j`.
    fn load_step(&mut self, j: u32) {
        let (mut k, mut updates) = (0, 0u32);
        for a in 0..self.active as usize {
            if j < self.degree[a] as u32 {
                let t = self.gen.g.dest(self.first_edge[a] as u64 + j as u64);
                self.dests[k] = t;
                updates |= (self.gen.updated(t, self.round) as u32) << k;
                k += 1;
            }
        }
        self.updates = updates;
    }

    /// Instruction `i` of the current step, if the step has one.
    fn step_instr(&self, i: u8) -> Option<WarpInstr> {
        use StepLanes::*;
        let any_update = self.updates != 0;
        // (allocation, lanes, bytes per element, write)
        let (alloc, lanes, elem, write) = match (self.gen.algo, i) {
            (_, 0) => (COLS, Edges, 4, false),
            (Algo::Bfs, 1) => (VISITED_OR_WEIGHTS, Dests, 1, false),
            (Algo::Bfs, 2) if any_update => (COST, Updated, 4, true),
            (Algo::Bfs, 3) if any_update => (UPDATING, Updated, 1, true),
            (Algo::Sssp, 1) => (VISITED_OR_WEIGHTS, Edges, 4, false),
            (Algo::Sssp, 2) => (COST, Dests, 4, true),
            (Algo::Sssp, 3) if any_update => (UPDATING, Updated, 1, true),
            _ => return None,
        };
        let mut buf = [0u64; LANES];
        let n = self.step_offsets(lanes, elem as u64, &mut buf);
        Some(gather(alloc, &buf[..n], elem, write))
    }

    /// Byte offsets (elements of `elem` bytes) of the current step's `lanes` into `out`;
    /// returns how many.
    fn step_offsets(&self, lanes: StepLanes, elem: u64, out: &mut [u64; LANES]) -> usize {
        let j = self.step - 1;
        let (mut n, mut k) = (0, 0);
        for (s, d) in self.active_edges() {
            if j >= d {
                continue;
            }
            let x = match lanes {
                StepLanes::Edges => Some(s + j as u64),
                StepLanes::Dests => Some(self.dests[k] as u64),
                StepLanes::Updated => (self.updates >> k & 1 == 1).then(|| self.dests[k] as u64),
            };
            if let Some(x) = x {
                out[n] = x * elem;
                n += 1;
            }
            k += 1;
        }
        n
    }

    /// Header gather `i` over the active lanes.
    fn header_instr(&self, i: u8) -> Option<WarpInstr> {
        let n = self.active as usize;
        let mut vs = [0u64; LANES];
        for (o, &l) in vs.iter_mut().zip(&self.lane[..n]) {
            *o = (self.lanes.v0 + l as u32) as u64 * if i == 0 { 1 } else { 4 };
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
                    self.emit = if self.active == 0 {
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
