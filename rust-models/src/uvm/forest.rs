//! Forest and SpecForest on the driver side: the ATT behind its ports, the APD run at
//! every profiling interrupt, each object's tree (isolation / motion bits) and the
//! access-recency information eviction uses. SpecForest adds pattern recording per
//! kernel, static stride hints and similarity groups.
//!
//! Registration follows the paper: at each kernel launch the driver registers the
//! launching kernel's objects (its pointer arguments, [`Workload::kernel_objects`]) in the
//! ATT's table through the register port — those already in the table again (a fresh timer
//! and profile for the new kernel), then the others into free slots, and when the table is
//! full over the least recently accessed object (the ATT's `oldest_obj` output). Objects
//! stay registered when their kernel ends, so the table keeps the most recently used
//! objects and eviction reads their recency from it. A kernel with more objects than slots
//! gets as many as fit, in argument order (no suite workload has one; not in the paper).
//!
//! [`Workload::kernel_objects`]: crate::workload::Workload::kernel_objects

use std::collections::HashMap;

use bitvec::prelude::{BitSlice, Lsb0};

use super::apd::{AccessClass, ClassSource, ObjectProfile, StepOutcome};
use super::att_port::{AttPort, AttRecord, AttSink};
use super::config::UvmConfig;
use super::forest_tree::{class_shape, root_pages, ObjectTreeBits};
use super::layout::{Layout, BASE_VPN};
use super::tbnp::TreeShape;

/// Per-object driver state.
#[derive(Debug, Clone)]
pub struct ForestObject {
    pub class: Option<(AccessClass, ClassSource)>,
    pub bits: ObjectTreeBits,
    pub shape: TreeShape,
    /// Classified in the current kernel: profiling has ceased.
    pub settled: bool,
    pub profile: ObjectProfile,
    /// Profiling steps over the whole run.
    pub steps: u64,
    /// Registration epoch; page recency keys compare only within an object.
    pub epoch: u64,
    /// Latest timer seen for the object in this epoch.
    pub timer: u32,
    /// Order of the object's latest record among all records (driver-side recency).
    pub last_record_seq: u64,
    /// The ATT slot holding the object, if it is registered.
    pub slot: Option<u8>,
    /// Object-local pages faulted in on demand in this epoch that no access had reached at
    /// the last profiling step (outstanding faults: the warps wait to replay on them).
    pub faulted_in: Vec<u32>,
}

/// What the ATT's record and interrupt ports feed.
pub struct Tracker {
    pub objects: Vec<ForestObject>,
    /// Recency key of every page: epoch << 32 | object-local timer of its latest access.
    pub page_key: Vec<u64>,
    /// Pending profiling interrupts, as objects.
    pub pending_irqs: Vec<usize>,
    /// The object in each ATT slot (the driver's copy of the table).
    pub slot_object: Vec<Option<usize>>,
    /// Records received (accesses that hit a registered object).
    pub records: u64,
    record_seq: u64,
    first_pages: Vec<usize>,
}

impl AttSink for Tracker {
    fn record(&mut self, rec: AttRecord) {
        let Some(&Some(o)) = self.slot_object.get(rec.obj as usize) else {
            return;
        };
        let obj = &mut self.objects[o];
        let Some(page) = rec.vpn.checked_sub(BASE_VPN).map(|p| p as usize) else {
            return;
        };
        let Some(rel) = page.checked_sub(self.first_pages[o]) else {
            return;
        };
        self.records += 1;
        if let Some(slot) = self.page_key.get_mut(page) {
            *slot = (obj.epoch << 32) | rec.timer as u64;
        }
        obj.timer = rec.timer;
        self.record_seq += 1;
        obj.last_record_seq = self.record_seq;
        if !obj.settled {
            obj.profile.record(rel, rec.timer);
        }
    }
    fn interrupt(&mut self, slot: u8) {
        if let Some(&Some(o)) = self.slot_object.get(slot as usize) {
            self.pending_irqs.push(o);
        }
    }
}

/// Forest (or SpecForest when `spec` is set).
pub struct ForestState {
    pub att: AttPort,
    pub tracker: Tracker,
    spec: bool,
    cfg: UvmConfig,
    root_pages: usize,
    /// SpecForest pattern table: (kernel name, object) → class of its last run.
    recorded: HashMap<(String, usize), AccessClass>,
    /// SpecForest: the class the first decided member gave each similarity group.
    group_class: HashMap<u32, AccessClass>,
    kernel: String,
    /// The running kernel's objects.
    kernel_objects: Vec<usize>,
}

impl ForestState {
    pub fn new(
        cfg: &UvmConfig,
        layout: &Layout,
        spec: bool,
    ) -> Result<ForestState, mcmvm_protocol::system::BlockFault> {
        let root = root_pages(&cfg.forest.trees);
        let partition = (cfg.forest.trees.partition_kb / 4) as usize;
        let default_shape = class_shape(&cfg.forest.trees, AccessClass::Lc);
        let objects = layout
            .objects
            .iter()
            .map(|o| ForestObject {
                class: None,
                bits: ObjectTreeBits::for_shape(partition, root, default_shape),
                shape: default_shape,
                settled: false,
                profile: ObjectProfile::new(o.pages),
                steps: 0,
                epoch: 0,
                timer: 0,
                last_record_seq: 0,
                slot: None,
                faulted_in: Vec::new(),
            })
            .collect();
        Ok(ForestState {
            att: AttPort::new(&cfg.att, &cfg.engines)?,
            tracker: Tracker {
                objects,
                page_key: vec![0; layout.span_pages],
                pending_irqs: Vec::new(),
                slot_object: vec![None; cfg.att.objects],
                records: 0,
                record_seq: 0,
                first_pages: layout.objects.iter().map(|o| o.first_page).collect(),
            },
            spec,
            cfg: cfg.clone(),
            root_pages: root,
            recorded: HashMap::new(),
            group_class: HashMap::new(),
            kernel: String::new(),
            kernel_objects: Vec::new(),
        })
    }

    fn set_class(&mut self, o: usize, class: AccessClass, source: ClassSource) {
        let partition = (self.cfg.forest.trees.partition_kb / 4) as usize;
        let shape = class_shape(&self.cfg.forest.trees, class);
        let obj = &mut self.tracker.objects[o];
        obj.class = Some((class, source));
        obj.bits = ObjectTreeBits::for_shape(partition, self.root_pages, shape);
        // The prefetcher reads the shape back from the bits it programmed.
        obj.shape = obj.bits.shape();
        obj.settled = true;
    }

    /// Objects registered in the ATT (the driver's copy of its table), by slot.
    pub fn registered(&self) -> Vec<usize> {
        self.tracker.slot_object.iter().flatten().copied().collect()
    }

    /// Register object `o` in slot `slot` (its range through the register port).
    fn register(&mut self, o: usize, slot: u8, layout: &Layout) {
        let obj = &layout.objects[o];
        let first = obj.first_vpn().0;
        let last = first + obj.pages as u64 - 1;
        let t = &mut self.tracker;
        if let Some(prev) = t.slot_object[slot as usize].replace(o) {
            if prev != o {
                t.objects[prev].slot = None;
            }
        }
        t.objects[o].slot = Some(slot);
        self.att.register(slot, first, last, t);
    }

    /// The slot a newly registered object takes: a free one, else the least recently
    /// accessed object's (the ATT's `oldest_obj`).
    fn slot_for_new(&mut self) -> Option<u8> {
        if let Some(free) = self.tracker.slot_object.iter().position(|s| s.is_none()) {
            return Some(free as u8);
        }
        self.att.oldest(&mut self.tracker)
    }

    /// Kernel launch: register the kernel's objects with the ATT (fresh timers and
    /// profiles); SpecForest applies hints, recorded patterns and its similarity groups'
    /// classes and ceases those objects.
    pub fn kernel_launch(&mut self, kernel: &str, objects: &[usize], layout: &Layout) {
        self.kernel = kernel.to_string();
        let capacity = self.tracker.slot_object.len();
        let mut take: Vec<usize> = Vec::with_capacity(objects.len().min(capacity));
        for &o in objects {
            if o < layout.objects.len() && !take.contains(&o) && take.len() < capacity {
                take.push(o);
            }
        }
        // Those already in the table first (re-registering touches them, so the
        // replacements below never pick one of this kernel's objects), then the rest.
        take.sort_by_key(|&o| self.tracker.objects[o].slot.is_none());
        for &o in &take {
            let slot = match self.tracker.objects[o].slot {
                Some(s) => Some(s),
                None => self.slot_for_new(),
            };
            if let Some(slot) = slot {
                self.reset_for_kernel(o, layout);
                self.register(o, slot, layout);
            }
        }
        let registered = take
            .iter()
            .filter(|&&o| self.tracker.objects[o].slot.is_some());
        self.kernel_objects = registered.copied().collect();
        if self.spec {
            for i in 0..self.kernel_objects.len() {
                self.speculate(self.kernel_objects[i], kernel, layout);
            }
        }
        self.tracker.pending_irqs.clear();
    }

    /// A fresh profile and the default tree for object `o` in the new kernel.
    fn reset_for_kernel(&mut self, o: usize, layout: &Layout) {
        let default_shape = class_shape(&self.cfg.forest.trees, AccessClass::Lc);
        let partition = (self.cfg.forest.trees.partition_kb / 4) as usize;
        let fo = &mut self.tracker.objects[o];
        fo.epoch += 1;
        fo.timer = 0;
        fo.settled = false;
        fo.profile = ObjectProfile::new(layout.objects[o].pages);
        fo.faulted_in.clear();
        fo.class = None;
        fo.bits = ObjectTreeBits::for_shape(partition, self.root_pages, default_shape);
        fo.shape = default_shape;
    }

    /// SpecForest at launch: a static stride hint, else the kernel's recorded pattern, else
    /// the class its similarity group already has; such an object is ceased at once.
    fn speculate(&mut self, o: usize, kernel: &str, layout: &Layout) {
        let sw = &self.cfg.forest.spec;
        let obj = &layout.objects[o];
        let group = obj
            .similarity_group
            .filter(|_| sw.similarity_groups)
            .and_then(|g| self.group_class.get(&g).copied());
        let recorded = sw
            .pattern_recording
            .then(|| self.recorded.get(&(kernel.to_string(), o)).copied())
            .flatten();
        if sw.static_stride_hints && obj.stride_hint.is_some() {
            self.set_class(o, AccessClass::Ls, ClassSource::StaticHint);
        } else if let Some(c) = recorded {
            self.set_class(o, c, ClassSource::Recorded);
        } else if let Some(c) = group {
            self.set_class(o, c, ClassSource::SimilarityGroup);
        }
        if let (true, Some(slot)) = (
            self.tracker.objects[o].settled,
            self.tracker.objects[o].slot,
        ) {
            self.att.cease(slot, &mut self.tracker);
        }
    }

    /// Kernel end: the last records come out of the ATT's pipeline; SpecForest records
    /// the classes decided for the kernel's objects. The objects stay registered.
    pub fn kernel_end(&mut self) {
        self.att.drain(&mut self.tracker);
        if !self.spec {
            return;
        }
        for &o in &self.kernel_objects {
            if let Some((c, _)) = self.tracker.objects[o].class {
                self.recorded.insert((self.kernel.clone(), o), c);
            }
        }
    }

    /// Service pending profiling interrupts; returns how many APD steps ran. `queued` marks
    /// the pages (layout-wide) waiting in the driver's fault buffer.
    pub fn service_interrupts(&mut self, layout: &Layout, queued: &BitSlice<u64, Lsb0>) -> u64 {
        let mut steps = 0;
        while let Some(o) = self.tracker.pending_irqs.pop() {
            if self.tracker.objects[o].settled {
                continue;
            }
            steps += 1;
            let pending = self.outstanding_faults(o, layout, queued);
            self.tracker.objects[o].steps += 1;
            let outcome = self.tracker.objects[o]
                .profile
                .step_with_pending(&self.cfg.forest.apd, pending);
            if let StepOutcome::Decided(class, source) = outcome {
                self.set_class(o, class, source);
                if let Some(slot) = self.tracker.objects[o].slot {
                    self.att.cease(slot, &mut self.tracker);
                }
                if self.spec && self.cfg.forest.spec.similarity_groups {
                    self.propagate_to_group(o, class, layout);
                }
            }
        }
        steps
    }

    /// The object's untouched pages with an outstanding far fault: queued in the fault
    /// buffer, or faulted in and not yet reached by an access (the replay is still due).
    fn outstanding_faults(
        &mut self,
        o: usize,
        layout: &Layout,
        queued: &BitSlice<u64, Lsb0>,
    ) -> usize {
        let first = layout.objects[o].first_page;
        let pages = layout.objects[o].pages;
        let obj = &mut self.tracker.objects[o];
        let profile = &obj.profile;
        obj.faulted_in.retain(|&p| !profile.is_touched(p as usize));
        let mut n = obj.faulted_in.len();
        if let Some(range) = queued.get(first..(first + pages).min(queued.len())) {
            n += range
                .iter_ones()
                .filter(|&p| !profile.is_touched(p) && !obj.faulted_in.contains(&(p as u32)))
                .count();
        }
        n
    }

    /// SpecForest: the group takes the class; its members in the running kernel that are
    /// still profiling stop, the others get it at their next launch.
    fn propagate_to_group(&mut self, from: usize, class: AccessClass, layout: &Layout) {
        let Some(group) = layout.objects[from].similarity_group else {
            return;
        };
        self.group_class.entry(group).or_insert(class);
        for i in 0..self.kernel_objects.len() {
            let o = self.kernel_objects[i];
            if o != from
                && layout.objects[o].similarity_group == Some(group)
                && !self.tracker.objects[o].settled
            {
                self.set_class(o, class, ClassSource::SimilarityGroup);
                if let Some(slot) = self.tracker.objects[o].slot {
                    self.att.cease(slot, &mut self.tracker);
                }
            }
        }
    }

    /// Objects from least to most recently accessed: the ATT's oldest first, then the
    /// rest in the order of their latest records.
    pub fn objects_by_recency(&mut self) -> Vec<usize> {
        let oldest = self
            .att
            .oldest(&mut self.tracker)
            .and_then(|s| self.tracker.slot_object.get(s as usize).copied().flatten());
        let mut order: Vec<usize> = (0..self.tracker.objects.len()).collect();
        order.sort_by_key(|&o| (Some(o) != oldest, self.tracker.objects[o].last_record_seq));
        order
    }

    /// A page migrated in counts as touched now, so it is not the next victim before
    /// the faulting warp replays (no livelock under pressure).
    /// The migration also refreshes the object's driver-side recency: objects the ATT
    /// does not track (more objects than table entries) are then ordered by their faults.
    pub fn note_migrated(&mut self, page: usize, object: usize) {
        let t = &mut self.tracker;
        let obj = &mut t.objects[object];
        t.page_key[page] = (obj.epoch << 32) | obj.timer as u64;
        t.record_seq += 1;
        obj.last_record_seq = t.record_seq;
    }

    /// Page `page` (layout-wide) of `object` was migrated in for a far fault (not a
    /// prefetch): an outstanding fault until an access reaches it.
    pub fn note_faulted_in(&mut self, page: usize, object: usize) {
        let Some(rel) = page.checked_sub(self.tracker.first_pages[object]) else {
            return;
        };
        let obj = &mut self.tracker.objects[object];
        if !obj.settled && !obj.profile.is_touched(rel) {
            obj.faulted_in.push(rel as u32);
        }
    }

    pub fn shape_of(&self, object: usize) -> TreeShape {
        self.tracker.objects[object].shape
    }
}
