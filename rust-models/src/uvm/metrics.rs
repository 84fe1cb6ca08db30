//! What a UVM run reports.

use serde::Serialize;

/// Class of one object at the end of a run, and how it got it.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ObjectReport {
    pub name: String,
    pub pages: usize,
    /// Last class (None: never classified, i.e. TBNp's one shape).
    pub class: Option<String>,
    /// How the class was obtained (Profiled, Fallback, Recorded, StaticHint, SimilarityGroup).
    pub source: Option<String>,
    /// Tree / leaf in KB the object ended with.
    pub tree_kb: u64,
    pub leaf_kb: u64,
    /// Profiling steps spent on this object over the run.
    pub profiling_steps: u64,
    pub far_faults: u64,
    pub pages_migrated: u64,
}

/// Where the fault-service time went (µs, summed over batches).
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct ServiceTime {
    /// Fixed far-fault latency per batch.
    pub fault_handling_us: f64,
    /// Per-VA-block page-table update and bookkeeping.
    pub block_update_us: f64,
    /// Host → GPU migration transfers.
    pub migration_us: f64,
    /// GPU → host write-backs of dirty evicted pages.
    pub writeback_us: f64,
    /// Forest profiling steps (driver time, serialised with batches).
    pub profiling_us: f64,
}

/// Metrics of one `mcmvm run --uvm ...`.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct UvmMetrics {
    pub workload: String,
    pub policy: String,
    pub oversubscription: f64,
    pub footprint_pages: usize,
    pub capacity_pages: usize,
    pub cycles: u64,
    pub warp_mem_instrs: u64,
    pub page_accesses: u64,
    /// Distinct non-resident pages serviced as faults (after de-duplication).
    pub far_faults: u64,
    pub batches: u64,
    pub pages_migrated: u64,
    pub pages_prefetched: u64,
    /// Prefetched pages evicted before any access.
    pub prefetched_unused: u64,
    pub prefetched_unused_pct: f64,
    /// Migrations of pages that had been evicted before.
    pub thrashed_pages: u64,
    /// Thrashed pages / footprint.
    pub thrash_multiple: f64,
    /// Eviction decisions (a 2 MB chunk for TBNp, a leaf for Forest) and pages they freed.
    pub evictions: u64,
    pub pages_evicted: u64,
    pub dirty_writebacks: u64,
    pub host_to_gpu_bytes: u64,
    pub gpu_to_host_bytes: u64,
    pub profiling_steps: u64,
    /// Forest: ATT records received, i.e. page accesses that hit a registered object
    /// (equal to `page_accesses` when every kernel's objects are registered).
    pub att_records: u64,
    pub service: ServiceTime,
    pub objects: Vec<ObjectReport>,
    /// Which ATT engine answered (`twin`, `reference`, or `none`).
    pub att_engine: String,
    /// Which engine served the ATT, and its block cycles.
    pub hardware: mcmvm_protocol::system::HardwareReport,
    /// Accesses outside their allocation (workload bugs; skipped).
    pub out_of_range_accesses: u64,
    /// Wall-clock seconds of the run and of fault service inside it.
    pub wall_s: f64,
    pub service_wall_s: f64,
    /// Warp memory instructions per wall second, fault-service time excluded.
    pub instr_per_s: f64,
}

impl UvmMetrics {
    /// Derived ratios, filled once at the end of a run.
    pub fn finish(&mut self) {
        self.prefetched_unused_pct = if self.pages_prefetched == 0 {
            0.0
        } else {
            100.0 * self.prefetched_unused as f64 / self.pages_prefetched as f64
        };
        self.thrash_multiple = self.thrashed_pages as f64 / self.footprint_pages.max(1) as f64;
        let busy = (self.wall_s - self.service_wall_s).max(1e-9);
        self.instr_per_s = self.warp_mem_instrs as f64 / busy;
    }

    /// A readable table for the terminal: the run's counters, then one line per object.
    pub fn table(&self) -> String {
        let mut s = self.counter_rows();
        for o in &self.objects {
            s.push_str(&format!(
                "    {:<20} {:>8} pages  class {:<5} ({:<15}) tree {:>5} KB leaf {:>4} KB  steps {:>4}  faults {:>7}  migrated {:>8}\n",
                o.name,
                o.pages,
                o.class.as_deref().unwrap_or("-"),
                o.source.as_deref().unwrap_or("-"),
                o.tree_kb,
                o.leaf_kb,
                o.profiling_steps,
                o.far_faults,
                o.pages_migrated
            ));
        }
        s
    }

    /// The table's rows of run-wide counters.
    fn counter_rows(&self) -> String {
        let mut s = String::new();
        let mut row = |k: &str, v: String| s.push_str(&format!("  {k:<28} {v}\n"));
        row("workload", self.workload.clone());
        row("uvm policy", self.policy.clone());
        row(
            "oversubscription",
            format!(
                "{:.2} (footprint {} pages, GPU {} pages)",
                self.oversubscription, self.footprint_pages, self.capacity_pages
            ),
        );
        row("cycles", self.cycles.to_string());
        row("warp memory instructions", self.warp_mem_instrs.to_string());
        row("far faults", self.far_faults.to_string());
        row("fault batches", self.batches.to_string());
        row("pages migrated", self.pages_migrated.to_string());
        row("pages prefetched", self.pages_prefetched.to_string());
        row(
            "prefetched unused",
            format!(
                "{} ({:.1} %)",
                self.prefetched_unused, self.prefetched_unused_pct
            ),
        );
        row(
            "thrashed pages",
            format!(
                "{} ({:.2} x footprint)",
                self.thrashed_pages, self.thrash_multiple
            ),
        );
        row(
            "evictions",
            format!(
                "{} ({} pages, {} dirty write-backs)",
                self.evictions, self.pages_evicted, self.dirty_writebacks
            ),
        );
        row(
            "host link bytes",
            format!(
                "{} H2D, {} D2H",
                self.host_to_gpu_bytes, self.gpu_to_host_bytes
            ),
        );
        row("profiling steps", self.profiling_steps.to_string());
        let t = &self.service;
        row("fault service (us)", format!("handling {:.0}, block updates {:.0}, migration {:.0}, write-back {:.0}, profiling {:.0}", t.fault_handling_us, t.block_update_us, t.migration_us, t.writeback_us, t.profiling_us));
        row("ATT engine", self.att_engine.clone());
        s
    }
}
