//! A hand-written workload for the UVM tests: explicit per-warp instruction lists.

#![allow(dead_code)]

use mcmvm_models::workload::{Allocation, Kernel, Lanes, WarpInstr, WarpStream, Workload};

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
