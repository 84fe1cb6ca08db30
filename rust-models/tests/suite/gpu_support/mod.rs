//! Shared helpers of the GPU model's integration tests: a workload given as explicit
//! per-warp instruction lists, and the 4-chiplet config.

#![allow(dead_code)]

use mcmvm_models::driver::PolicyKind;
use mcmvm_models::gpu::{simulate, GpuConfig, RunReport, RunSpec};
use mcmvm_models::workload::{Allocation, Kernel, Lanes, WarpInstr, WarpStream, Workload};
use std::collections::HashMap;
use std::path::Path;

/// The repository's 4-chiplet config (CLAP Table 1).
pub fn config4() -> GpuConfig {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/mcm-4chiplet.toml");
    GpuConfig::load(&path).expect("configs/mcm-4chiplet.toml loads")
}

/// Run `w` on [`config4`] under `policy` at scale 1, seed 1.
pub fn run(w: &dyn Workload, policy: PolicyKind) -> RunReport {
    let spec = RunSpec {
        policy,
        scale: 1.0,
        seed: 1,
    };
    simulate(&config4(), w, spec).expect("runs")
}

/// A workload whose warps replay fixed instruction lists.
pub struct Scripted {
    pub name: String,
    pub allocs: Vec<Allocation>,
    pub kernels: Vec<Kernel>,
    pub warps: HashMap<(usize, u32, u32), Vec<WarpInstr>>,
}

impl Scripted {
    pub fn new(name: &str, allocs: Vec<Allocation>, kernels: Vec<Kernel>) -> Scripted {
        Scripted {
            name: name.into(),
            allocs,
            kernels,
            warps: HashMap::new(),
        }
    }
    /// Append an instruction to warp (kernel, tb, warp).
    pub fn push(&mut self, k: usize, tb: u32, w: u32, instr: WarpInstr) {
        self.warps.entry((k, tb, w)).or_default().push(instr);
    }
}

/// A warp-wide coalesced read of 32 four-byte elements at `offset`.
pub fn read32(alloc: u16, offset: u64) -> WarpInstr {
    WarpInstr {
        alloc,
        write: false,
        lanes: Lanes::Strided {
            offset,
            stride: 4,
            lanes: 32,
            elem: 4,
        },
        compute_cycles: 0,
        independent: false,
    }
}

impl Workload for Scripted {
    fn name(&self) -> &str {
        &self.name
    }
    fn allocations(&self) -> &[Allocation] {
        &self.allocs
    }
    fn kernels(&self) -> &[Kernel] {
        &self.kernels
    }
    fn warp_stream(&self, kernel: usize, tb: u32, warp: u32) -> WarpStream<'_> {
        match self.warps.get(&(kernel, tb, warp)) {
            Some(v) => Box::new(v.iter().cloned()),
            None => Box::new(std::iter::empty()),
        }
    }
}

/// Thread blocks that each own one `region`-byte slice of a `regions * region`-byte
/// array, with consecutive slices owned by different chiplets (slice k by chiplet
/// k mod 4): the first-touch scheduler puts block t on chiplet t / (grid / 4), and block t
/// reads slice (t mod chunk) * 4 + t / chunk. Every block streams its slice `passes` times.
pub fn interleaved_regions(region: u64, regions: u32, passes: u32) -> Scripted {
    let chiplets = 4;
    let grid = regions;
    let chunk = grid / chiplets;
    let mut s = Scripted::new(
        "interleaved",
        vec![Allocation::new("data", region * regions as u64)],
        vec![Kernel::new("k", grid, 1)],
    );
    for t in 0..grid {
        let k = (t % chunk) * chiplets + t / chunk;
        for _ in 0..passes {
            for line in 0..region / 128 {
                s.push(0, t, 0, read32(0, k as u64 * region + line * 128));
            }
        }
    }
    s
}
