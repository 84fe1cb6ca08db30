//! Forest and SpecForest on the driver side: the ATT behind its ports, the APD run at
//! every profiling interrupt, each object's tree (isolation / motion bits) and the
//! access-recency information eviction uses. SpecForest adds pattern recording per
//! kernel, static stride hints and similarity groups.

use std::collections::HashMap;

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
}

/// What the ATT's record and interrupt ports feed.
pub struct Tracker {
    pub objects: Vec<ForestObject>,
    /// Recency key of every page: epoch << 32 | object-local timer of its latest access.
    pub page_key: Vec<u64>,
    pub pending_irqs: Vec<u8>,
    record_seq: u64,
    first_pages: Vec<usize>,
}

impl AttSink for Tracker {
    fn record(&mut self, rec: AttRecord) {
        let o = rec.obj as usize;
        let Some(obj) = self.objects.get_mut(o) else {
            return;
        };
        let Some(page) = rec.vpn.checked_sub(BASE_VPN).map(|p| p as usize) else {
            return;
        };
        let Some(rel) = page.checked_sub(self.first_pages[o]) else {
            return;
        };
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
    fn interrupt(&mut self, obj: u8) {
        self.pending_irqs.push(obj);
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
    kernel: String,
    tracked: usize,
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
            })
            .collect();
        Ok(ForestState {
            att: AttPort::new(&cfg.att, &cfg.engines)?,
            tracker: Tracker {
                objects,
                page_key: vec![0; layout.span_pages],
                pending_irqs: Vec::new(),
                record_seq: 0,
                first_pages: layout.objects.iter().map(|o| o.first_page).collect(),
            },
            spec,
            cfg: cfg.clone(),
            root_pages: root,
            recorded: HashMap::new(),
            kernel: String::new(),
            tracked: layout.objects.len().min(cfg.att.objects),
        })
    }

    fn set_class(&mut self, o: usize, class: AccessClass, source: ClassSource) {
        let partition = (self.cfg.forest.trees.partition_kb / 4) as usize;
        let shape = class_shape(&self.cfg.forest.trees, class);
        let obj = &mut self.tracker.objects[o];
        obj.class = Some((class, source));
        obj.bits = ObjectTreeBits::for_shape(partition, self.root_pages, shape);
        // The prefetch engine reads the shape back from the bits it programmed.
        obj.shape = obj.bits.shape();
        obj.settled = true;
    }

    /// Kernel launch: register every tracked object with the ATT (fresh timers and
    /// profiles); SpecForest applies hints and recorded patterns and ceases those objects.
    pub fn kernel_launch(&mut self, kernel: &str, layout: &Layout) {
        self.kernel = kernel.to_string();
        let default_shape = class_shape(&self.cfg.forest.trees, AccessClass::Lc);
        let partition = (self.cfg.forest.trees.partition_kb / 4) as usize;
        for o in 0..self.tracked {
            let obj = &layout.objects[o];
            let first = obj.first_vpn().0;
            let last = first + obj.pages as u64 - 1;
            let fo = &mut self.tracker.objects[o];
            fo.epoch += 1;
            fo.timer = 0;
            fo.settled = false;
            fo.profile = ObjectProfile::new(obj.pages);
            fo.class = None;
            fo.bits = ObjectTreeBits::for_shape(partition, self.root_pages, default_shape);
            fo.shape = default_shape;
            self.att.register(o as u8, first, last, &mut self.tracker);
            if !self.spec {
                continue;
            }
            let sw = &self.cfg.forest.spec;
            if sw.static_stride_hints && obj.stride_hint.is_some() {
                self.set_class(o, AccessClass::Ls, ClassSource::StaticHint);
            } else if let Some(&c) = sw
                .pattern_recording
                .then(|| self.recorded.get(&(kernel.to_string(), o)))
                .flatten()
            {
                self.set_class(o, c, ClassSource::Recorded);
            }
            if self.tracker.objects[o].settled {
                self.att.cease(o as u8, &mut self.tracker);
            }
        }
        self.tracker.pending_irqs.clear();
    }

    /// Kernel end: the kernel's objects leave the ATT; SpecForest records the classes
    /// decided during the kernel.
    pub fn kernel_end(&mut self) {
        for o in 0..self.tracked {
            self.att.remove(o as u8, &mut self.tracker);
        }
        if !self.spec {
            return;
        }
        for o in 0..self.tracked {
            if let Some((c, _)) = self.tracker.objects[o].class {
                self.recorded.insert((self.kernel.clone(), o), c);
            }
        }
    }

    /// Service pending profiling interrupts; returns how many APD steps ran.
    pub fn service_interrupts(&mut self, layout: &Layout) -> u64 {
        let mut steps = 0;
        while let Some(o) = self.tracker.pending_irqs.pop() {
            let o = o as usize;
            if o >= self.tracked || self.tracker.objects[o].settled {
                continue;
            }
            steps += 1;
            self.tracker.objects[o].steps += 1;
            let outcome = self.tracker.objects[o].profile.step(&self.cfg.forest.apd);
            if let StepOutcome::Decided(class, source) = outcome {
                self.set_class(o, class, source);
                self.att.cease(o as u8, &mut self.tracker);
                if self.spec && self.cfg.forest.spec.similarity_groups {
                    self.propagate_to_group(o, class, layout);
                }
            }
        }
        steps
    }

    fn propagate_to_group(&mut self, from: usize, class: AccessClass, layout: &Layout) {
        let Some(group) = layout.objects[from].similarity_group else {
            return;
        };
        for o in 0..self.tracked {
            if o != from
                && layout.objects[o].similarity_group == Some(group)
                && !self.tracker.objects[o].settled
            {
                self.set_class(o, class, ClassSource::SimilarityGroup);
                self.att.cease(o as u8, &mut self.tracker);
            }
        }
    }

    /// Objects from least to most recently accessed: the ATT's oldest first, then the
    /// rest in the order of their latest records.
    pub fn objects_by_recency(&mut self) -> Vec<usize> {
        let oldest = self.att.oldest(&mut self.tracker).map(|o| o as usize);
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

    pub fn shape_of(&self, object: usize) -> TreeShape {
        self.tracker.objects[object].shape
    }
}
