//! The timing check of [`super::MapTimes`] inside a run: it counts an access whose TLB
//! entry was ready before the page's mapping completed.

use crate::addr::{Va, PAGE_4K, PAGE_64K};
use crate::driver::{MemoryManager, PolicyKind};
use crate::gpu::{driver_config, FirstTouchService, Gpu, GpuConfig};
use crate::workload::{self, Lanes, WarpInstr};
use std::path::Path;

fn config4() -> GpuConfig {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/mcm-4chiplet.toml");
    GpuConfig::load(&path).expect("configs/mcm-4chiplet.toml loads")
}

fn read(offset: u64) -> WarpInstr {
    WarpInstr {
        alloc: 0,
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

/// A page mapped and in the TLBs; then its mapping is made to complete far in the future
/// (as a model bug would leave it): the next access hits the L1 TLB with a translation
/// ready long before, and the check counts it.
#[test]
fn an_access_through_a_tlb_entry_ready_before_its_mapping_is_counted() {
    let cfg = config4();
    // (`ideal` is absent: its 2 MB entries take the PA from the page table and wait for the
    // page's mapping on every hit, so no stale entry can serve it.)
    for policy in [PolicyKind::S64k, PolicyKind::S2m, PolicyKind::Clap] {
        let w = workload::by_name("ste", 0.02, 1).expect("workload");
        let mm = MemoryManager::new(driver_config(&cfg), policy, w.allocations()).expect("mm");
        let service = Box::new(FirstTouchService { latency: 3000 });
        let mut gpu = Gpu::new(&cfg, w.as_ref(), mm, service).expect("gpu");
        let first = gpu.execute_to_end(0, 0, &read(0)).expect("first access");
        assert!(
            first >= 3000,
            "{policy}: the first touch waits for its fault"
        );
        let again = gpu
            .execute_to_end(first, 0, &read(128))
            .expect("second access");
        assert_eq!(gpu.counters.translations_before_mapping, 0, "{policy}");
        assert!(again < first + 1000, "{policy}: a TLB hit");
        let base = gpu.alloc_base[0];
        gpu.map_times
            .stamp(Va(base).vpn(), PAGE_64K / PAGE_4K, first + 1_000_000);
        gpu.execute_to_end(first + 10, 0, &read(256))
            .expect("third access");
        assert_eq!(
            gpu.counters.translations_before_mapping, 1,
            "{policy}: the L1 TLB's entry predates the (moved) mapping"
        );
    }
}
