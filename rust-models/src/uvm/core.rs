//! The driver-side UVM state: the fault buffer, residency, the fault-order LRU, Forest's
//! ATT and trees, the layout and the metrics. The GPU model's memory service
//! (`gpu_service.rs`) owns one `UvmCore` and calls the batch service (`service.rs`) on it.

use std::collections::VecDeque;
use std::time::Instant;

use bitvec::prelude::*;

use super::config::UvmConfig;
use super::forest::ForestState;
use super::layout::{Layout, BASE_VPN};
use super::lru::FaultOrderLru;
use super::metrics::{ObjectReport, UvmMetrics};
use super::residency::Residency;
use super::tbnp::TreeShape;
use super::UvmPolicy;
use crate::workload::Workload;

/// Driver state of one UVM run; fields are shared with `service.rs` and `gpu_service.rs`.
pub(super) struct UvmCore {
    pub(super) cfg: UvmConfig,
    pub(super) policy: UvmPolicy,
    pub(super) layout: Layout,
    pub(super) res: Residency,
    /// Cycle at which a resident page's data is on the GPU (end of its batch).
    pub(super) ready_at: Vec<u64>,
    pub(super) lru: FaultOrderLru,
    pub(super) forest: Option<ForestState>,
    pub(super) tbnp_shape: TreeShape,
    /// Fault buffer: (page, cycle), one entry per page (duplicates coalesced).
    pub(super) buffer: VecDeque<(u32, u64)>,
    pub(super) queued: BitVec<u64, Lsb0>,
    /// 2 MB blocks that ever received a page (for the preferred-location first touch).
    pub(super) block_populated: BitVec<u64, Lsb0>,
    pub(super) pinned_blocks: BitVec<u64, Lsb0>,
    /// The driver is free again (after its last batch or profiling step).
    pub(super) driver_free_at: u64,
    pub(super) metrics: UvmMetrics,
    pub(super) obj_faults: Vec<u64>,
    pub(super) obj_migrated: Vec<u64>,
    pub(super) check_invariants: bool,
    pub(super) service_wall: f64,
    /// With `record_changes`, `service_batch` logs the pages it evicted and migrated, in
    /// order (the GPU model's service unmaps and maps them in its page table).
    pub(super) record_changes: bool,
    pub(super) evicted_log: Vec<usize>,
    pub(super) migrated_log: Vec<usize>,
    /// Forest's eviction candidates, kept between batches for its allocation.
    pub(super) victim_scratch: Vec<(u64, usize)>,
    /// The objects each kernel is launched with (every object when it declares none).
    kernel_objects: Vec<Vec<usize>>,
}

/// GPU memory of `capacity` pages: the footprint over the oversubscription, or the whole
/// span already resident with `UvmPolicy::None`.
fn initial_residency(layout: &Layout, cfg: &UvmConfig, policy: UvmPolicy) -> Residency {
    let capacity = if policy == UvmPolicy::None {
        layout.span_pages
    } else {
        ((layout.footprint_pages as f64 / cfg.memory.oversubscription).ceil() as usize).max(1)
    };
    let mut res = Residency::new(layout.span_pages, capacity);
    if policy == UvmPolicy::None {
        for o in &layout.objects {
            for p in o.first_page..o.first_page + o.pages {
                res.migrate_in(p, false, 0);
            }
        }
    }
    res
}

/// The objects each kernel is launched with (every object when it declares none).
fn kernel_objects(wl: &dyn Workload, n_obj: usize) -> Vec<Vec<usize>> {
    (0..wl.kernels().len())
        .map(|k| match wl.kernel_objects(k) {
            Some(objs) => objs.into_iter().map(usize::from).collect(),
            None => (0..n_obj).collect(),
        })
        .collect()
}

impl UvmCore {
    /// State for `wl` under `policy`; with `UvmPolicy::None` every page starts resident.
    pub(super) fn new(
        wl: &dyn Workload,
        cfg: &UvmConfig,
        policy: UvmPolicy,
        check: bool,
    ) -> Result<Self, mcmvm_protocol::system::BlockFault> {
        let layout = Layout::new(wl.allocations());
        let res = initial_residency(&layout, cfg, policy);
        let capacity = res.capacity();
        let forest = policy
            .tracks_access()
            .then(|| ForestState::new(cfg, &layout, policy == UvmPolicy::SpecForest))
            .transpose()?;
        let n_obj = layout.objects.len();
        let kernel_objects = kernel_objects(wl, n_obj);
        let metrics = UvmMetrics {
            workload: wl.name().to_string(),
            policy: policy.name().to_string(),
            oversubscription: cfg.memory.oversubscription,
            footprint_pages: layout.footprint_pages,
            capacity_pages: capacity,
            att_engine: forest
                .as_ref()
                .map(|f| f.att.engine.clone())
                .unwrap_or_else(|| "none".into()),
            ..Default::default()
        };
        Ok(UvmCore {
            cfg: cfg.clone(),
            policy,
            res,
            ready_at: vec![0; layout.span_pages],
            lru: FaultOrderLru::new(layout.blocks()),
            forest,
            tbnp_shape: cfg.tbnp_shape().unwrap_or(TreeShape::TBNP_DEFAULT),
            buffer: VecDeque::new(),
            queued: bitvec![u64, Lsb0; 0; layout.span_pages],
            block_populated: bitvec![u64, Lsb0; 0; layout.blocks()],
            pinned_blocks: bitvec![u64, Lsb0; 0; layout.blocks()],
            driver_free_at: 0,
            metrics,
            obj_faults: vec![0; n_obj],
            obj_migrated: vec![0; n_obj],
            check_invariants: check,
            service_wall: 0.0,
            record_changes: false,
            victim_scratch: Vec::new(),
            evicted_log: Vec::new(),
            migrated_log: Vec::new(),
            kernel_objects,
            layout,
        })
    }

    /// A GPU access to resident page `p`: residency flags and, with Forest, one ATT access.
    #[inline]
    pub(super) fn access_page(&mut self, now: u64, p: usize, write: bool) {
        self.res.touch(p, write);
        self.metrics.page_accesses += 1;
        if let Some(f) = self.forest.as_mut() {
            f.att.access(now, BASE_VPN + p as u64, &mut f.tracker);
        }
    }

    /// The ATT's fault, if it raised one (the run stops with it).
    pub(super) fn take_block_fault(&mut self) -> Option<mcmvm_protocol::system::BlockFault> {
        self.forest.as_mut().and_then(|f| f.att.take_fault())
    }

    /// The end of a run: a checking engine has then compared every cycle; the ATT's fault.
    pub(super) fn sync_blocks(&mut self) -> Option<mcmvm_protocol::system::BlockFault> {
        if let Some(f) = self.forest.as_mut() {
            f.att.sync();
        }
        self.take_block_fault()
    }

    /// The ATT's fault as the GPU model's error, at the end of a run.
    pub(super) fn run_end_faults(&mut self) -> Result<(), crate::gpu::GpuError> {
        match self.sync_blocks() {
            Some(f) => Err(f.into()),
            None => Ok(()),
        }
    }

    /// The `hardware` section: the ATT's engine and cycles (empty without Forest).
    pub(super) fn hardware(&self) -> mcmvm_protocol::system::HardwareReport {
        mcmvm_protocol::system::HardwareReport {
            engine: self.cfg.engines.name().to_string(),
            blocks: self.forest.iter().map(|f| f.att.report()).collect(),
            ..Default::default()
        }
    }

    /// Run the APD for pending ATT interrupts. Profiling is driver time: it starts when
    /// the driver is free (`busy_until`: the end of a running batch, else now).
    pub(super) fn service_profiling(&mut self, busy_until: u64) {
        let Some(f) = self.forest.as_mut() else {
            return;
        };
        if f.tracker.pending_irqs.is_empty() {
            return;
        }
        if !self.policy.forest_trees() {
            // tbnp-aae: the ATT only tracks recency; the driver profiles nothing.
            f.tracker.pending_irqs.clear();
            return;
        }
        let w0 = Instant::now();
        let steps = f.service_interrupts(&self.layout, &self.queued);
        self.metrics.profiling_steps += steps;
        let us = steps as f64 * self.cfg.fault.profiling_step_us;
        self.metrics.service.profiling_us += us;
        self.driver_free_at = self.driver_free_at.max(busy_until) + self.cfg.us_to_cycles(us);
        self.service_wall += w0.elapsed().as_secs_f64();
    }

    /// Queue a far fault on page `p` at cycle `t` unless it is already queued.
    #[inline]
    pub(super) fn queue_fault(&mut self, p: usize, t: u64) {
        if !self.queued[p] {
            self.queued.set(p, true);
            self.buffer.push_back((p as u32, t));
        }
    }

    /// Kernel boundaries (Forest registers kernel `kernel`'s objects; SpecForest records
    /// patterns).
    pub(super) fn kernel_launch(&mut self, kernel: usize, name: &str) {
        if let Some(f) = self.forest.as_mut() {
            let objects = self.kernel_objects.get(kernel).map_or(&[][..], |o| &o[..]);
            f.kernel_launch(name, objects, &self.layout);
            if !self.policy.forest_trees() {
                // tbnp-aae keeps TBNp's trees: cease every registered object at launch (no
                // profiling interrupts; the ATT still records access times for eviction).
                for &o in objects {
                    if let Some(slot) = f.tracker.objects.get(o).and_then(|x| x.slot) {
                        f.tracker.objects[o].settled = true;
                        f.att.cease(slot, &mut f.tracker);
                    }
                }
            }
        }
    }
    pub(super) fn kernel_end(&mut self) {
        if let Some(f) = self.forest.as_mut() {
            f.kernel_end();
        }
    }

    /// The metrics with the per-object reports.
    pub(super) fn finish(&mut self) -> UvmMetrics {
        let mut m = std::mem::take(&mut self.metrics);
        m.service_wall_s = self.service_wall;
        m.hardware = self.hardware();
        m.att_records = self.forest.as_ref().map_or(0, |f| f.tracker.records);
        for (i, o) in self.layout.objects.iter().enumerate() {
            let (class, source, shape, steps) = match &self.forest {
                Some(f) if self.policy.forest_trees() => {
                    let fo = &f.tracker.objects[i];
                    (
                        fo.class.map(|(c, _)| c.name().to_string()),
                        fo.class.map(|(_, s)| format!("{s:?}")),
                        fo.shape,
                        fo.steps,
                    )
                }
                _ => (None, None, self.tbnp_shape, 0),
            };
            m.objects.push(ObjectReport {
                name: o.name.clone(),
                pages: o.pages,
                class,
                source,
                tree_kb: shape.tree_pages as u64 * 4,
                leaf_kb: shape.leaf_pages as u64 * 4,
                profiling_steps: steps,
                far_faults: self.obj_faults[i],
                pages_migrated: self.obj_migrated[i],
            });
        }
        m
    }
}
