//! A generic data-parallel program made of phases (kernels), each touching a few objects
//! with one access class per object. The Forest pattern programs and the DL layer
//! footprints are built from it.
//!
//! Classes, per warp and launch:
//! - `Stream`: the object is split evenly over the grid's warps in thread-block order and
//!   each warp walks its slice with coalesced 128-byte accesses (when the object is smaller
//!   than a line per warp, warps share lines round-robin, like a split-K reduction);
//! - `Dense`: `per_warp` gathers, each lane a uniformly random element of the whole object
//!   (high coverage, high intensity);
//! - `Sparse`: `per_warp` gathers landing on one page per 64 KB group — which page depends
//!   on the group — so the range is covered but 1/16 of its pages are ever touched (high
//!   coverage, low intensity);
//! - `Hot`: `per_warp` gathers confined to a fixed window of 1/10 of the object (low
//!   coverage).

use super::program::{coalesced, gather, WarpGen, WARP};
use super::rng::{below, hash4, mix64, XorShift};
use super::{Kernel, WarpInstr, WarpStream};
use crate::addr::{PAGE_4K, PAGE_64K};

/// Warps per thread block of every phase.
pub(crate) const WARPS: u64 = 8;
/// Most objects one phase touches.
const MAX_TOUCHES: usize = 8;

/// How a phase touches one object.
#[derive(Clone, Copy, PartialEq, Debug)]
pub(crate) enum Class {
    Stream { write: bool },
    Dense { per_warp: u64 },
    Sparse { per_warp: u64 },
    Hot { per_warp: u64 },
}

/// One kernel launch: its name, grid and the objects it touches.
#[derive(Clone, Debug)]
pub(crate) struct Phase {
    pub name: String,
    pub grid: u32,
    pub touches: Vec<(u16, Class)>,
}

/// The generator: object sizes and the launch sequence.
pub(crate) struct PhaseGen {
    pub bytes: Vec<u64>,
    pub phases: Vec<Phase>,
    pub seed: u64,
}

impl PhaseGen {
    /// The kernel list of the phases.
    pub fn kernels(&self) -> Vec<Kernel> {
        self.phases
            .iter()
            .map(|p| Kernel::new(p.name.clone(), p.grid, WARPS as u32))
            .collect()
    }

    /// Instructions a warp issues on a touch in a grid of `warps` warps.
    fn per_warp(&self, alloc: u16, class: Class, warps: u64) -> u64 {
        match class {
            Class::Stream { .. } => (self.bytes[alloc as usize] / warps / 128).max(1),
            Class::Dense { per_warp } | Class::Sparse { per_warp } | Class::Hot { per_warp } => {
                per_warp
            }
        }
    }

    /// Access `step` of a touch by global warp `gw`.
    fn access(
        &self,
        kernel: u64,
        warps: u64,
        gw: u64,
        alloc: u16,
        class: Class,
        step: u64,
    ) -> WarpInstr {
        let bytes = self.bytes[alloc as usize];
        let elems = bytes / 4;
        let seed = self.seed ^ mix64(alloc as u64 + 1);
        let mut lanes = [0u64; WARP as usize];
        // One hash per instruction seeds a cheap sequential generator for its 32 lanes.
        let mut rng = XorShift::new(hash4(seed, kernel, gw, step, 0));
        let mut lane_hash = |_: usize| rng.next_u64();
        match class {
            Class::Stream { write } => {
                let lines = bytes / 128;
                let off = if lines >= warps {
                    gw * (lines / warps) * 128 + step * 128
                } else {
                    (gw % lines) * 128
                };
                return coalesced(alloc, off, WARP, 4, write);
            }
            Class::Dense { .. } => {
                for (l, off) in lanes.iter_mut().enumerate() {
                    *off = below(lane_hash(l), elems) * 4;
                }
            }
            Class::Sparse { .. } => {
                let groups = (bytes / PAGE_64K).max(1);
                let pages_per_group = ((bytes / PAGE_4K) / groups).max(1);
                for (l, off) in lanes.iter_mut().enumerate() {
                    let h = lane_hash(l);
                    let g = below(h, groups);
                    let page = g * pages_per_group + below(mix64(seed ^ g), pages_per_group);
                    *off = (page * PAGE_4K + (h & 0x3ff) * 4).min(bytes - 4);
                }
            }
            Class::Hot { .. } => {
                let window = (elems / 10).max(1);
                let start = below(mix64(seed), elems - window + 1);
                for (l, off) in lanes.iter_mut().enumerate() {
                    *off = (start + below(lane_hash(l), window)) * 4;
                }
            }
        }
        gather(alloc, &lanes, 4, false)
    }
}

impl WarpGen for PhaseGen {
    fn stream(&self, kernel: usize, tb: u32, warp: u32) -> WarpStream<'_> {
        let phase = &self.phases[kernel];
        let warps = phase.grid as u64 * WARPS;
        let gw = tb as u64 * WARPS + warp as u64;
        let mut counts = [0u64; MAX_TOUCHES];
        for (c, &(a, class)) in counts.iter_mut().zip(&phase.touches) {
            *c = self.per_warp(a, class, warps);
        }
        let steps = counts.iter().copied().max().unwrap_or(0);
        let touches = phase.touches.len().min(MAX_TOUCHES);
        // Round-robin over the objects, step by step, as a loop body touching each would.
        Box::new((0..steps).flat_map(move |s| {
            (0..touches).filter(move |&t| s < counts[t]).map(move |t| {
                let (a, class) = phase.touches[t];
                self.access(kernel as u64, warps, gw, a, class, s)
            })
        }))
    }

    /// A phase is launched with the objects it touches, in touch order.
    fn kernel_objects(&self, kernel: usize) -> Option<Vec<u16>> {
        let mut objects: Vec<u16> = Vec::new();
        for &(a, _) in &self.phases.get(kernel)?.touches {
            if !objects.contains(&a) {
                objects.push(a);
            }
        }
        Some(objects)
    }

    fn count(&self) -> u64 {
        self.phases
            .iter()
            .map(|p| {
                let warps = p.grid as u64 * WARPS;
                p.touches
                    .iter()
                    .take(MAX_TOUCHES)
                    .map(|&(a, c)| self.per_warp(a, c, warps))
                    .sum::<u64>()
                    * warps
            })
            .sum()
    }
}
