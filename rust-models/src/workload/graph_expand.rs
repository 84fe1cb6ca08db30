//! The `expand` kernel's warp stream of BFS / SSSP (see `graph_kernels.rs` for the
//! algorithm). It emits one instruction per `next()` from fixed-size lane arrays, building
//! each gather's offsets in place (allocating only beyond two lanes): at millions of
//! instructions per second the generator would otherwise cost as much as the GPU model it
//! feeds.

use super::graph_kernels::{
    set_bits, Algo, GraphGen, Lanes32, COLS, COST, MASK, ROWS, UPDATING, VISITED_OR_WEIGHTS,
};
use super::program::{coalesced, gather_offsets, WARP};
use super::{LaneOffsets, WarpInstr};

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

/// One instruction of an edge step: (allocation, lanes, bytes per element, write).
type StepInstr = (u16, StepLanes, u8, bool);

/// BFS per edge step: `col_idx`, `visited`; for updated destinations `cost`, `updating`.
const BFS_STEP: [StepInstr; 4] = [
    (COLS, StepLanes::Edges, 4, false),
    (VISITED_OR_WEIGHTS, StepLanes::Dests, 1, false),
    (COST, StepLanes::Updated, 4, true),
    (UPDATING, StepLanes::Updated, 1, true),
];
/// SSSP per edge step: `col_idx`, `weights`, the atomic min on `dist`; for updated
/// destinations `updating`.
const SSSP_STEP: [StepInstr; 4] = [
    (COLS, StepLanes::Edges, 4, false),
    (VISITED_OR_WEIGHTS, StepLanes::Edges, 4, false),
    (COST, StepLanes::Dests, 4, true),
    (UPDATING, StepLanes::Updated, 1, true),
];

/// Where the warp is in its program.
#[derive(Clone, Copy, PartialEq)]
enum Phase {
    /// Nothing emitted yet: next is the `mask` read of every lane.
    Start,
    /// The header gathers of the active lanes: clear the flag, read the row bounds,
    /// read the vertex's own cost.
    Header,
    /// The edge steps.
    Steps,
}

/// The per-edge-step state of an `expand` warp.
///
/// Kept small and in one piece (about 400 bytes, no side allocation): the event loop holds
/// thousands of these, one per resident warp, and touches a different one on nearly every
/// instruction, so their size is the host-cache footprint of the whole generator. The
/// lanes still walking edges are a bit mask, so a step costs its live lanes, not all
/// active ones (power-law degrees leave one or two lanes for most steps).
#[repr(C)]
pub(super) struct Expand<'a> {
    // Read on every instruction: first, in the host cache line the event loop prefetches
    // (`repr(C)` keeps this order).
    /// Where the warp is, and the next instruction of the current phase and how many it
    /// has.
    phase: Phase,
    pos: u8,
    count: u8,
    active: u8,
    n_dests: u8,
    /// Edge steps loaded so far (the current one is `step - 1`).
    step: u32,
    max_deg: u32,
    /// Active lanes (bit a) with an edge at the current step.
    live: u32,
    /// Which destinations of the current step this round updates (bit i for `dests[i]`).
    updates: u32,
    round: u32,
    lanes: Lanes32,
    gen: &'a GraphGen,
    /// The current step's destinations, in active-lane order.
    dests: [u32; LANES],
    /// Active lanes: first edge and degree of its vertex, lane in the warp.
    first_edge: [u32; LANES],
    degree: [u16; LANES],
    lane: [u8; LANES],
}

impl<'a> Expand<'a> {
    /// The warp of `lanes` in `round`, whose active lanes (bit l: lane l) are `active`.
    pub(super) fn new(gen: &'a GraphGen, round: u32, lanes: Lanes32, active: u32) -> Self {
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
            phase: Phase::Start,
            pos: 0,
            count: 0,
            live: 0,
            dests: [0; LANES],
            n_dests: 0,
            updates: 0,
        };
        for l in set_bits(active) {
            let (s, d) = gen.g.edges(e.lanes.v0 + l as u32);
            let a = e.active as usize;
            e.lane[a] = l as u8;
            // Edge indices fit 32 bits (the row offsets are u32), degrees `MAX_DEGREE`.
            e.first_edge[a] = s as u32;
            e.degree[a] = d as u16;
            e.max_deg = e.max_deg.max(d);
            e.live |= 1 << a;
            e.active += 1;
        }
        e
    }

    /// Load the next edge step: drop the lanes whose edges ran out, gather the
    /// destinations of the others.
    fn load_step(&mut self) {
        let j = self.step;
        self.step += 1;
        let (mut k, mut updates, mut live) = (0, 0u32, self.live);
        for a in set_bits(self.live) {
            if j < self.degree[a] as u32 {
                let t = self.gen.g.dest(self.first_edge[a] as u64 + j as u64);
                self.dests[k] = t;
                updates |= (self.gen.updated(t, self.round) as u32) << k;
                k += 1;
            } else {
                live &= !(1 << a);
            }
        }
        self.live = live;
        self.n_dests = k as u8;
        self.updates = updates;
        let any_update = (updates != 0) as u8;
        self.count = match self.gen.algo {
            Algo::Bfs => 2 + 2 * any_update,
            Algo::Sssp => 3 + any_update,
        };
        self.pos = 0;
    }

    /// Instruction `i` of the current step.
    #[inline(always)]
    fn step_instr(&self, i: u8) -> WarpInstr {
        let table = match self.gen.algo {
            Algo::Bfs => &BFS_STEP,
            Algo::Sssp => &SSSP_STEP,
        };
        let (alloc, lanes, elem, write) = table[i as usize];
        let e = elem as u64;
        let offsets = match lanes {
            StepLanes::Edges => {
                let j = self.step as u64 - 1;
                let first = &self.first_edge;
                LaneOffsets::from_exact(
                    self.n_dests as usize,
                    set_bits(self.live).map(|a| (first[a] as u64 + j) * e),
                )
            }
            StepLanes::Dests => LaneOffsets::from_exact(
                self.n_dests as usize,
                self.dests[..self.n_dests as usize]
                    .iter()
                    .map(|&d| d as u64 * e),
            ),
            StepLanes::Updated => LaneOffsets::from_exact(
                self.updates.count_ones() as usize,
                set_bits(self.updates).map(|k| self.dests[k] as u64 * e),
            ),
        };
        gather_offsets(alloc, offsets, elem, write)
    }

    /// Header gather `i` over the active lanes.
    #[inline(always)]
    fn header_instr(&self, i: u8) -> WarpInstr {
        let n = self.active as usize;
        let (alloc, elem, write, scale) = match i {
            0 => (MASK, 1, true, 1),
            1 => (ROWS, 8, false, 4),
            _ => (COST, 4, false, 4),
        };
        let v0 = self.lanes.v0;
        let offsets = LaneOffsets::from_exact(
            n,
            self.lane[..n]
                .iter()
                .map(|&l| (v0 + l as u32) as u64 * scale),
        );
        gather_offsets(alloc, offsets, elem, write)
    }

    /// Start the header (or, with no active lane, nothing) after the `mask` read, or
    /// the next edge step; `None` when the warp is done.
    fn next_phase(&mut self) -> Option<WarpInstr> {
        if self.phase == Phase::Start {
            if self.lanes.n == 0 {
                return None;
            }
            self.phase = Phase::Header;
            self.pos = 0;
            self.count = if self.active == 0 { 0 } else { 3 };
            return Some(mask_read(&self.lanes));
        }
        if self.step >= self.max_deg {
            return None;
        }
        self.phase = Phase::Steps;
        self.load_step();
        self.pos = 1;
        Some(self.step_instr(0))
    }
}

/// The warp's first instruction: every lane reads its `mask` flag (the whole program of a
/// warp with no active lane).
pub(super) fn mask_read(lanes: &Lanes32) -> WarpInstr {
    coalesced(MASK, lanes.v0 as u64, lanes.n as u64, 1, false)
}

impl Iterator for Expand<'_> {
    type Item = WarpInstr;
    #[inline]
    fn next(&mut self) -> Option<WarpInstr> {
        if self.pos < self.count {
            let i = self.pos;
            self.pos += 1;
            return Some(if self.phase == Phase::Steps {
                self.step_instr(i)
            } else {
                self.header_instr(i)
            });
        }
        self.next_phase()
    }
}
