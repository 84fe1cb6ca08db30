//! The microbenchmark programs, as [`Workload`]s the model runs like any other.
//!
//! [`ChaseWorkload`]: one warp, one lane, dependent loads (`independent = false`, so each
//! load waits for the one before: its address depends on it). Three kernels, each a grid of
//! one thread block per chiplet (first-touch scheduling puts block `c` on chiplet `c`):
//! 1. `touch`: the home chiplet's block maps every page the chase uses (first touch puts
//!    it on that chiplet; several warps, independent loads, so the faults overlap);
//! 2. `warm`: the runner chiplet's block chases once, filling its TLBs and caches;
//! 3. `chase`: the same block chases `rounds` times: the measured kernel.
//!
//! [`FloodWorkload`]: every warp of one SM, one chiplet or the whole GPU issues
//! independent loads (divergent gathers or coalesced streams); a `touch` kernel maps the
//! data first, and the measured kernel is the second (absent from the touch-only twin the
//! counters are subtracted from).

use crate::workload::rng::hash4;
use crate::workload::{
    Allocation, Kernel, LaneOffsets, Lanes, WarpInstr, WarpStream, Workload, WARP_LANES,
};
use serde::Serialize;

const LINE: u64 = crate::gpu::config::LINE_BYTES;
const PAGE: u64 = crate::addr::PAGE_4K;

/// Parameters of one dependent chase.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ChaseSpec {
    /// Bytes between consecutive loads.
    pub stride: u64,
    /// Loads per round (the footprint is `loads × stride`).
    pub loads: u64,
    /// Rounds of the measured kernel.
    pub rounds: u32,
    /// Lines of a stride unit the loads rotate through, one step per load, so that one
    /// line per page does not fall into a few L1 sets (1: always the unit's first line).
    /// One step per load, not one per group of loads: the caches' set index XORs higher
    /// line bits into the low ones (`gpu/memory.rs`), and a group of consecutive pages
    /// on one offset cancels the rotation (48 pages of 4 KB thrashed 4 sets).
    pub spread_lines: u64,
    /// Chiplet whose block touches (maps) the data, and chiplet whose block chases.
    pub home: u32,
    pub runner: u32,
}

impl ChaseSpec {
    /// Byte offset of load `i` of a round.
    pub fn offset(&self, i: u64) -> u64 {
        let rot = i % self.spread_lines.max(1);
        i * self.stride + rot * LINE
    }

    pub fn footprint(&self) -> u64 {
        self.loads * self.stride
    }
}

fn load(lanes: Lanes, independent: bool) -> WarpInstr {
    WarpInstr {
        alloc: 0,
        write: false,
        lanes,
        compute_cycles: 0,
        independent,
    }
}

fn one_lane(offset: u64) -> Lanes {
    Lanes::Strided {
        offset,
        stride: 4,
        lanes: 1,
        elem: 4,
    }
}

/// Warps that touch a chase's pages (the faults of different warps overlap).
const TOUCH_WARPS: u32 = 16;

/// The dependent pointer chase.
pub struct ChaseWorkload {
    spec: ChaseSpec,
    allocs: Vec<Allocation>,
    kernels: Vec<Kernel>,
    /// One offset per distinct 4 KB page the chase uses, in chase order.
    touches: Vec<u64>,
    touch_warps: u32,
}

impl ChaseWorkload {
    /// `chiplets` thread blocks per kernel; `warps_per_sm` bounds the touch block.
    pub fn new(spec: ChaseSpec, chiplets: u32, warps_per_sm: u32) -> ChaseWorkload {
        let mut touches = Vec::new();
        let mut last = u64::MAX;
        for i in 0..spec.loads {
            let off = spec.offset(i);
            if off / PAGE != last {
                last = off / PAGE;
                touches.push(off);
            }
        }
        let touch_warps = TOUCH_WARPS.min(warps_per_sm).max(1);
        ChaseWorkload {
            spec,
            allocs: vec![Allocation::new("chain", spec.footprint().max(LINE))],
            kernels: vec![
                Kernel::new("touch", chiplets, touch_warps),
                Kernel::new("warm", chiplets, 1),
                Kernel::new("chase", chiplets, 1),
            ],
            touches,
            touch_warps,
        }
    }
}

impl Workload for ChaseWorkload {
    fn name(&self) -> &str {
        "chase"
    }
    fn allocations(&self) -> &[Allocation] {
        &self.allocs
    }
    fn kernels(&self) -> &[Kernel] {
        &self.kernels
    }
    fn warp_stream(&self, kernel: usize, tb: u32, warp: u32) -> WarpStream<'_> {
        let s = self.spec;
        match kernel {
            0 if tb == s.home => Box::new(
                self.touches
                    .iter()
                    .skip(warp as usize)
                    .step_by(self.touch_warps as usize)
                    .map(|&o| load(one_lane(o), true)),
            ),
            1 | 2 if tb == s.runner && warp == 0 => {
                let rounds = if kernel == 1 { 1 } else { s.rounds as u64 };
                Box::new(
                    (0..rounds * s.loads)
                        .map(move |i| s.offset(i % s.loads))
                        .map(|o| load(one_lane(o), false)),
                )
            }
            _ => Box::new(std::iter::empty()),
        }
    }
    fn instr_count(&self) -> u64 {
        self.touches.len() as u64 + self.spec.loads * (1 + self.spec.rounds as u64)
    }
}

/// Which warps a flood runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Scope {
    OneSm,
    OneChiplet,
    AllChiplets,
}

impl Scope {
    pub const fn label(self) -> &'static str {
        match self {
            Scope::OneSm => "one SM",
            Scope::OneChiplet => "one chiplet",
            Scope::AllChiplets => "all chiplets",
        }
    }
}

/// What every warp of a flood loads.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub enum Pattern {
    /// `per_warp` gathers, each lane on a random line of a random 4 KB page of `pages`.
    Gather { pages: u64, per_warp: u32 },
    /// `per_warp` coalesced line reads (32 lanes × 4 bytes) of the chiplet's slice, or of
    /// the next chiplet's slice when `remote`.
    Stream { per_warp: u32, remote: bool },
}

/// Parameters of one flood.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct FloodSpec {
    pub pattern: Pattern,
    pub scope: Scope,
}

/// The GPU's shape, as a flood needs it.
#[derive(Debug, Clone, Copy)]
pub struct Shape {
    pub chiplets: u32,
    pub sms_per_chiplet: u32,
    pub warps_per_sm: u32,
}

impl Shape {
    fn warps_per_chiplet(&self) -> u64 {
        self.sms_per_chiplet as u64 * self.warps_per_sm as u64
    }
}

/// Every warp of a scope loading at once.
pub struct FloodWorkload {
    spec: FloodSpec,
    shape: Shape,
    allocs: Vec<Allocation>,
    kernels: Vec<Kernel>,
    seed: u64,
}

impl FloodWorkload {
    /// With `measure` false only the touch kernel runs (the baseline of the counters).
    pub fn new(spec: FloodSpec, shape: Shape, measure: bool, seed: u64) -> FloodWorkload {
        // One block of `warps_per_sm` warps per SM: chiplet c's chunk of the grid is its
        // SMs, one block each (first-touch scheduling, `gpu/mod.rs`).
        let grid = shape.chiplets * shape.sms_per_chiplet;
        let k = |name| Kernel::new(name, grid, shape.warps_per_sm);
        let mut kernels = vec![k("touch")];
        if measure {
            kernels.push(k("flood"));
        }
        let bytes = match spec.pattern {
            Pattern::Gather { pages, .. } => pages * PAGE,
            Pattern::Stream { per_warp, .. } => {
                shape.chiplets as u64 * shape.warps_per_chiplet() * per_warp as u64 * LINE
            }
        };
        FloodWorkload {
            spec,
            shape,
            allocs: vec![Allocation::new("data", bytes)],
            kernels,
            seed,
        }
    }

    /// SMs whose warps load in the measured kernel.
    pub fn active_sms(&self) -> u32 {
        match self.spec.scope {
            Scope::OneSm => 1,
            Scope::OneChiplet => self.shape.sms_per_chiplet,
            Scope::AllChiplets => self.shape.sms_per_chiplet * self.shape.chiplets,
        }
    }

    fn active(&self, tb: u32) -> bool {
        match self.spec.scope {
            Scope::OneSm => tb == 0,
            Scope::OneChiplet => tb < self.shape.sms_per_chiplet,
            Scope::AllChiplets => true,
        }
    }

    fn slice_bytes(&self, per_warp: u32) -> u64 {
        self.shape.warps_per_chiplet() * per_warp as u64 * LINE
    }

    /// Touch kernel: 32 consecutive 4 KB pages per instruction; a stream's chiplet maps
    /// its own slice, a gather's pages are spread over every warp.
    fn touch(&self, tb: u32, warp: u32) -> WarpStream<'_> {
        let (first, pages, warps, me) = match self.spec.pattern {
            Pattern::Gather { pages, .. } => {
                let all = self.shape.warps_per_chiplet() * self.shape.chiplets as u64;
                let me = tb as u64 * self.shape.warps_per_sm as u64 + warp as u64;
                (0, pages, all, me)
            }
            Pattern::Stream { per_warp, .. } => {
                let slice = self.slice_bytes(per_warp);
                let chiplet = (tb / self.shape.sms_per_chiplet) as u64;
                let sm = (tb % self.shape.sms_per_chiplet) as u64;
                let me = sm * self.shape.warps_per_sm as u64 + warp as u64;
                let pages = slice.div_ceil(PAGE);
                (
                    chiplet * slice / PAGE,
                    pages,
                    self.shape.warps_per_chiplet(),
                    me,
                )
            }
        };
        let groups = pages.div_ceil(WARP_LANES as u64);
        Box::new((me..groups).step_by(warps as usize).map(move |g| {
            let lo = g * WARP_LANES as u64;
            let hi = (lo + WARP_LANES as u64).min(pages);
            let offsets: Vec<u64> = (lo..hi).map(|p| (first + p) * PAGE).collect();
            let lanes = Lanes::Gather {
                offsets: LaneOffsets::from(offsets),
                elem: 4,
            };
            load(lanes, true)
        }))
    }

    fn flood(&self, tb: u32, warp: u32) -> WarpStream<'_> {
        if !self.active(tb) {
            return Box::new(std::iter::empty());
        }
        let wpc = self.shape.warps_per_chiplet();
        let chiplet = (tb / self.shape.sms_per_chiplet) as u64;
        let me =
            (tb % self.shape.sms_per_chiplet) as u64 * self.shape.warps_per_sm as u64 + warp as u64;
        let seed = self.seed;
        match self.spec.pattern {
            Pattern::Gather { pages, per_warp } => {
                let gw = chiplet * wpc + me;
                Box::new((0..per_warp as u64).map(move |g| {
                    let offsets = LaneOffsets::from_exact(
                        WARP_LANES,
                        (0..WARP_LANES as u64).map(|l| {
                            let h = hash4(seed, gw, g, l, 0);
                            (h % pages) * PAGE + ((h >> 40) % (PAGE / LINE)) * LINE
                        }),
                    );
                    load(Lanes::Gather { offsets, elem: 4 }, true)
                }))
            }
            Pattern::Stream { per_warp, remote } => {
                let home = if remote {
                    (chiplet + 1) % self.shape.chiplets as u64
                } else {
                    chiplet
                };
                let base = home * self.slice_bytes(per_warp);
                // Consecutive warps read consecutive lines: the channels interleave.
                Box::new((0..per_warp as u64).map(move |j| {
                    let o = base + (j * wpc + me) * LINE;
                    let lanes = Lanes::Strided {
                        offset: o,
                        stride: 4,
                        lanes: WARP_LANES as u8,
                        elem: 4,
                    };
                    load(lanes, true)
                }))
            }
        }
    }
}

impl Workload for FloodWorkload {
    fn name(&self) -> &str {
        "flood"
    }
    fn allocations(&self) -> &[Allocation] {
        &self.allocs
    }
    fn kernels(&self) -> &[Kernel] {
        &self.kernels
    }
    fn warp_stream(&self, kernel: usize, tb: u32, warp: u32) -> WarpStream<'_> {
        match kernel {
            0 => self.touch(tb, warp),
            _ => self.flood(tb, warp),
        }
    }
}
