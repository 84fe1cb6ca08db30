//! For the UVM tests: a hand-written workload (explicit per-warp instruction lists) and a
//! small GPU to run it on.

#![allow(dead_code)]

use std::path::Path;

use mcmvm_models::gpu::GpuConfig;
use mcmvm_models::uvm::{GpuUvmReport, UvmConfig, UvmError, UvmGpu, UvmPolicy};
use mcmvm_models::workload::{Allocation, Kernel, Lanes, WarpInstr, WarpStream, Workload};

/// The Forest study's GPU (`configs/gpu-turing.toml`, 4 KB pages) with 8 of its 68 SMs:
/// the same SMs, caches and clock, so small workloads run in seconds.
pub fn small_turing() -> UvmGpu {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/gpu-turing.toml");
    let mut cfg = GpuConfig::load(&path).expect("configs/gpu-turing.toml loads");
    cfg.gpu.sms_per_chiplet = 8;
    UvmGpu::new(cfg)
}

/// `wl` under `policy` on [`small_turing`], residency and page-table invariants checked
/// after every batch (`scale` and `seed` are those `wl` was built with; the report records
/// them).
pub fn run_small(
    wl: &dyn Workload,
    cfg: &UvmConfig,
    policy: UvmPolicy,
    scale: f64,
) -> Result<GpuUvmReport, UvmError> {
    small_turing().run_report(wl, cfg, policy, scale, 1, true)
}

/// Allocations, kernels and the instruction list of every (kernel, tb, warp).
pub struct ListWorkload {
    pub allocs: Vec<Allocation>,
    pub kernels: Vec<Kernel>,
    /// streams[kernel][tb * warps_per_tb + warp]
    pub streams: Vec<Vec<Vec<WarpInstr>>>,
}

impl Workload for ListWorkload {
    fn name(&self) -> &str {
        "list"
    }
    fn allocations(&self) -> &[Allocation] {
        &self.allocs
    }
    fn kernels(&self) -> &[Kernel] {
        &self.kernels
    }
    fn warp_stream(&self, kernel: usize, tb: u32, warp: u32) -> WarpStream<'_> {
        let k = &self.kernels[kernel];
        let i = (tb * k.warps_per_tb + warp) as usize;
        Box::new(self.streams[kernel][i].clone().into_iter())
    }
}

/// One 4-byte read (or write) of page `page` of allocation `alloc`.
pub fn touch(alloc: u16, page: u64, write: bool) -> WarpInstr {
    WarpInstr {
        alloc,
        write,
        lanes: Lanes::Strided {
            offset: page * 4096,
            stride: 4,
            lanes: 1,
            elem: 4,
        },
        compute_cycles: 0,
        independent: false,
    }
}

/// One kernel, one thread block of one warp running `instrs`.
pub fn single_warp(allocs: Vec<Allocation>, instrs: Vec<WarpInstr>) -> ListWorkload {
    ListWorkload {
        allocs,
        kernels: vec![Kernel::new("k", 1, 1)],
        streams: vec![vec![instrs]],
    }
}
