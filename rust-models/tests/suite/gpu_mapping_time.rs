//! Mappings complete in time: no access uses a translation before the cycle its page's
//! mapping completed (CLAP fidelity, issue 20 item 1), under every policy. The model
//! counts every access that does (`translations_before_mapping`); these tests hold it at
//! 0, and show that the count does catch a translation used early.

use crate::gpu_support;

use gpu_support::{config4, read32, run, Scripted};
use mcmvm_models::addr::Cycle;
use mcmvm_models::driver::PolicyKind;
use mcmvm_models::gpu::{
    driver_config, FaultContext, FaultReply, Gpu, GpuError, MemoryService, RunSpec,
};
use mcmvm_models::workload::{self, Allocation, Kernel, Workload};

/// Every thread block of every chiplet reads the same 4 MB, page by page, at once: the
/// first toucher of each page faults while the other chiplets' warps reach the page
/// within the fault latency — they must join the outstanding fault, whatever TLB entry,
/// coalesced line, page-table lookup or walk offers them the page.
fn shared_pages() -> Scripted {
    let bytes = 4u64 << 20;
    let mut s = Scripted::new(
        "shared-pages",
        vec![Allocation::new("data", bytes)],
        vec![Kernel::new("k", 64, 4)],
    );
    for tb in 0..64 {
        for w in 0..4u32 {
            // Each warp walks the whole buffer in 16 KB steps, from its own start, so
            // pages are first touched by different chiplets and reused by all.
            let start = ((tb as u64 * 4 + w as u64) * 37) % 256;
            for i in 0..256u64 {
                let off = ((start + i) % 256) * (16 << 10) + (w as u64 * 128);
                s.push(0, tb, w, read32(0, off));
            }
        }
    }
    s
}

#[test]
fn no_access_uses_a_translation_before_its_mapping_completed_on_shared_pages() {
    let w = shared_pages();
    let mut early = Vec::new();
    for p in PolicyKind::ALL {
        let r = run(&w, p);
        assert!(r.faults > 0, "{p}: the pages fault");
        if r.translations_before_mapping > 0 {
            early.push(format!("{p}: {}", r.translations_before_mapping));
        }
    }
    assert!(
        early.is_empty(),
        "accesses that used a translation before its mapping completed: {}",
        early.join(", ")
    );
}

/// Every CLAP workload under each of `policies` at `scale`: no access used a translation
/// before its mapping completed.
fn no_early_translation_on_the_clap_suite(scale: f64, policies: &[PolicyKind]) {
    println!("scale {scale}, seed 1, policies {policies:?}");
    let cfg = config4();
    let mut early = Vec::new();
    for &name in workload::clap_suite() {
        let w = workload::by_name(name, scale, 1).expect("workload");
        for &p in policies {
            let spec = RunSpec {
                policy: p,
                scale,
                seed: 1,
            };
            let r = mcmvm_models::gpu::simulate(&cfg, w.as_ref(), spec).expect("runs");
            if r.translations_before_mapping > 0 {
                early.push(format!("{name}/{p}: {}", r.translations_before_mapping));
            }
        }
    }
    assert!(
        early.is_empty(),
        "accesses that used a translation before its mapping completed: {}",
        early.join(", ")
    );
}

/// Every workload under CLAP and its baseline s64k (every policy is `..._on_shared_pages`):
/// 36 small runs instead of the whole matrix's 234.
#[test]
fn no_access_uses_a_translation_before_its_mapping_completed_on_the_clap_suite() {
    no_early_translation_on_the_clap_suite(0.01, &[PolicyKind::Clap, PolicyKind::S64k]);
}

#[test]
#[ignore = "slow: every CLAP workload under every policy at scale 0.05; fast cases: \
            ..._on_the_clap_suite (every workload, clap and s64k) and ..._on_shared_pages \
            (every policy); run by make test-exhaustive"]
fn no_access_uses_a_translation_before_its_mapping_completed_under_every_policy() {
    no_early_translation_on_the_clap_suite(0.05, &PolicyKind::ALL);
}

/// First-touch paging that lets the faulting warp replay at once although the mapping
/// completes `late` cycles after the fault: a service that breaks the protocol.
struct ReplaysEarly {
    late: u64,
}

impl MemoryService for ReplaysEarly {
    fn observes_accesses(&self) -> bool {
        false
    }
    fn mappings_complete_at(&self, fault_at: Cycle, _reply: &FaultReply) -> Cycle {
        Cycle(fault_at.0 + self.late)
    }
    fn on_fault(&mut self, ctx: FaultContext<'_>) -> Result<FaultReply, GpuError> {
        let outcome = ctx.mm.handle_fault(ctx.va, ctx.chiplet, ctx.rt)?;
        Ok(FaultReply {
            replay_at: ctx.now,
            outcome: Some(outcome),
        })
    }
}

/// Even a warp that replays before its page's mapping completes does not use it early:
/// its walk reads the PTE still invalid and joins the outstanding fault. (That the check
/// does count an early use is `gpu::mapping::run_tests`.)
#[test]
fn a_replay_before_the_mapping_completes_joins_the_fault() {
    let cfg = config4();
    let w = shared_pages();
    for p in [PolicyKind::S64k, PolicyKind::Ideal, PolicyKind::Clap] {
        let mm = mcmvm_models::driver::MemoryManager::new(driver_config(&cfg), p, w.allocations())
            .expect("driver");
        let mut gpu = Gpu::new(&cfg, &w, mm, Box::new(ReplaysEarly { late: 5000 })).expect("gpu");
        gpu.run_all().expect("runs");
        let spec = RunSpec {
            policy: p,
            scale: 1.0,
            seed: 1,
        };
        let r = gpu.finish(spec, 0.0).expect("report");
        assert_eq!(r.translations_before_mapping, 0, "{p}");
        assert!(
            r.fault_joins > 0,
            "{p}: the early replays joined their faults"
        );
    }
}
