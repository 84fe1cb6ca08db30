//! A deferred far-fault replay re-executes the whole warp instruction (`gpu::replay`): a
//! memory service that batches its faults (as UVM does) sees the instruction's earlier
//! pages accessed again on every attempt, not only the page that faulted.

use crate::gpu_support;

use std::cell::RefCell;
use std::rc::Rc;

use gpu_support::{config4, Scripted};
use mcmvm_models::addr::Cycle;
use mcmvm_models::driver::{MemoryManager, PolicyKind};
use mcmvm_models::gpu::{
    driver_config, AccessEvent, FaultContext, FaultReply, Gpu, GpuError, MemoryService,
};
use mcmvm_models::workload::{Allocation, Kernel, Lanes, WarpInstr};

/// Maps each faulting page at once and lets the warp replay 1000 cycles later, from the
/// event loop's queue (as the UVM service does); records every access's page.
struct Deferring {
    pages: Rc<RefCell<Vec<u64>>>,
}

impl MemoryService for Deferring {
    fn on_access(&mut self, ev: &AccessEvent) {
        self.pages.borrow_mut().push(ev.va.0 >> 12);
    }
    fn on_fault(&mut self, ctx: FaultContext<'_>) -> Result<FaultReply, GpuError> {
        let outcome = ctx.mm.handle_fault(ctx.va, ctx.chiplet, ctx.rt)?;
        Ok(FaultReply {
            replay_at: Cycle(ctx.now.0 + 1000),
            outcome: Some(outcome),
        })
    }
    fn defers_replays(&self) -> bool {
        true
    }
}

#[test]
fn a_replay_re_executes_the_whole_instruction() {
    // One warp, one instruction: four lanes on four different 4 KB pages, none mapped.
    let mut w = Scripted::new(
        "replay",
        vec![Allocation::new("a", 1 << 20)],
        vec![Kernel::new("k", 1, 1)],
    );
    w.push(
        0,
        0,
        0,
        WarpInstr {
            alloc: 0,
            write: false,
            lanes: Lanes::Strided {
                offset: 0,
                stride: 4096,
                lanes: 4,
                elem: 4,
            },
            compute_cycles: 0,
            independent: false,
        },
    );
    let cfg = config4();
    let mm = MemoryManager::new(driver_config(&cfg), PolicyKind::S4k, &w.allocs).unwrap();
    let base = mm.alloc_base(0).0 >> 12;
    let pages = Rc::new(RefCell::new(Vec::new()));
    let svc = Deferring {
        pages: pages.clone(),
    };
    let mut gpu = Gpu::new(&cfg, &w, mm, Box::new(svc)).unwrap();
    gpu.run_all().unwrap();
    let replays = gpu.replay_counters();
    let seen: Vec<u64> = pages.borrow().iter().map(|p| p - base).collect();
    // Attempt 1 faults on page 0; replay k accesses pages 0..k and faults on page k; the
    // fourth replay accesses all four.
    assert_eq!(seen, [0, 0, 1, 0, 1, 2, 0, 1, 2, 3]);
    assert_eq!(replays.attempts, 4);
    assert_eq!((replays.regressions, replays.resumed), (0, 0));
}
