//! What a run measured: counters kept by the event loop while it runs, and the report built
//! from them at the end (serde `Serialize` for JSON; [`RunReport::csv_row`] for CSV).

use super::tlb::{SizeClass, CLASSES};
use serde::Serialize;
use std::fmt::Write;

/// Raw counters of one run (kept by the event loop; cheap to bump).
#[derive(Debug, Clone, Default)]
pub struct Counters {
    pub warp_mem_instrs: u64,
    /// Memory instructions the warp issued without waiting for them (independent ones).
    pub overlapped_instrs: u64,
    /// Memory instructions plus the compute instructions between them.
    pub warp_instrs: u64,
    pub lines: u64,
    pub remote_lines: u64,
    pub l1_tlb_hits: [u64; CLASSES],
    pub l1_tlb_misses: [u64; CLASSES],
    pub l2_tlb_hits: [u64; CLASSES],
    pub l2_tlb_misses: [u64; CLASSES],
    pub walks: u64,
    pub walk_levels_read: u64,
    pub walk_remote_levels: u64,
    pub walks_with_remote_level: u64,
    pub pwc_hits: u64,
    /// Fills whose entry the coalescer widened beyond the walked page.
    pub coalesced_fills: u64,
    /// The coalescing twin's entry disagreed with the page table; the fill fell back to
    /// the PTE alone. Should stay 0.
    pub coalescer_mismatches: u64,
    pub faults: u64,
    /// Accesses whose translation was ready before the page's mapping completed; the
    /// model's timing invariant, which keeps it 0.
    pub translations_before_mapping: u64,
    /// Walks that read a PTE whose mapping was still being made and joined its fault.
    pub fault_joins: u64,
    pub shootdowns: u64,
    pub l1_cache_hits: u64,
    pub l1_cache_misses: u64,
    /// Memory instructions issued when the last structure's PMM phase ended (its MMA ran).
    pub pmm_end_instr: Option<u64>,
    /// Per kernel launched, in order: warp instructions and cycles it ran.
    pub kernels: Vec<(u64, u64)>,
    /// Warp-cycles waiting on a translation ([`super::translation::TranslationReport`]).
    pub translation_stall_cycles: u64,
    /// Warp-cycles of residence, every warp's launch to end.
    pub warp_cycles: u64,
}

/// One kernel of a run.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct KernelReport {
    pub name: String,
    /// Thread blocks in its grid.
    pub thread_blocks: u32,
    /// Warp instructions (memory and compute) it executed.
    pub warp_instrs: u64,
    /// Cycles from its launch to its last warp's end.
    pub cycles: u64,
}

/// The kernel that ran longest (the paper's "dominant kernel" of Table 2), if any ran.
pub fn dominant_kernel(kernels: &[KernelReport]) -> Option<&KernelReport> {
    // The first of equals, so the choice does not depend on iteration details.
    kernels
        .iter()
        .fold(None, |best: Option<&KernelReport>, k| match best {
            Some(b) if b.cycles >= k.cycles => Some(b),
            _ => Some(k),
        })
}

/// Per-allocation counters.
#[derive(Debug, Clone, Default)]
pub struct AllocCounters {
    pub lines: u64,
    pub remote_lines: u64,
    pub walks: u64,
    pub faults: u64,
    /// Remote Tracker counters drained by the driver plus those drained at the end.
    pub rt_access: u64,
    pub rt_remote: u64,
    /// Per-chiplet accesses of each 64 KB page.
    pub pages: super::locality::PageLocality,
}

impl AllocCounters {
    /// Zero counters for a structure of `bytes` on a GPU of `chiplets`.
    pub fn new(bytes: u64, chiplets: u32) -> AllocCounters {
        AllocCounters {
            pages: super::locality::PageLocality::new(bytes, chiplets),
            ..AllocCounters::default()
        }
    }
}

/// TLB behaviour of one page-size class.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ClassStats {
    pub class: &'static str,
    pub hits: u64,
    pub misses: u64,
    pub hit_rate: f64,
    /// Misses per thousand warp instructions.
    pub mpki: f64,
}

/// Per data structure.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct AllocReport {
    pub name: String,
    pub bytes: u64,
    /// Page size (or mapping granularity) the policy gave it, as the driver reports it.
    pub page_size: String,
    /// What happened to it, for Table 4 (`128KB (MMA)`, `OLP (fallback: small
    /// structure): 2MB`, …; see `driver::table4`).
    pub table4: String,
    /// Why MMA fell back to OLP, in full (clap only).
    pub mma_fallback: Option<String>,
    pub lines: u64,
    pub remote_lines: u64,
    /// True remote ratio of its line accesses.
    pub remote_ratio: f64,
    pub walks: u64,
    pub faults: u64,
    /// Remote Tracker's estimate (completed walks), if it saw any.
    pub rt_remote_ratio: Option<f64>,
    pub rt_access: u64,
    pub rt_remote: u64,
    /// Which chiplets access its pages, where they live, and the remote ratio a placement
    /// by busiest chiplet would leave (`gpu/locality.rs`).
    pub locality: super::locality::LocalitySummary,
}

/// Everything one run reports. `Default` is the empty report `Gpu::finish` fills part by
/// part.
#[derive(Debug, Clone, Default, Serialize)]
pub struct RunReport {
    pub workload: String,
    pub policy: String,
    pub chiplets: u32,
    pub scale: f64,
    pub seed: u64,
    pub cycles: u64,
    pub warp_mem_instrs: u64,
    /// Memory instructions issued without their warp waiting for them (independent,
    /// `gpu.loads_in_flight_per_warp` > 1).
    pub overlapped_instrs: u64,
    /// Line requests that reached an L1 port, HBM channel or ring port before a request
    /// processed earlier and were served ahead of it (when the resources serve in arrival order).
    pub out_of_order_requests: u64,
    /// The config's `memory.serve_in_arrival_order`: the order the ports and channels
    /// served requests in (arrival, or the event loop's processing order).
    pub served_in_arrival_order: bool,
    /// Queueing the HBM channels and ring ports did not charge: an out-of-order request
    /// served ahead of requests already answered leaves their answers standing
    /// (`gpu/bandwidth.rs`); this sums how much later each would have finished. Its share
    /// of all queueing (charged + uncharged) says how far a bandwidth-bound run's
    /// figures lean on it.
    pub uncharged_queue_cycles: f64,
    pub uncharged_queue_share: f64,
    /// L1 misses that waited for a miss-status holding register, and their mean wait in
    /// cycles (`gpu.l1_mshrs_per_sm`).
    pub mshr_waits: u64,
    pub mshr_mean_wait: f64,
    /// MSHR grants made while a hold processed earlier but starting later was counted, so
    /// the registers were briefly over-subscribed (see `gpu::mshr`).
    pub mshr_overbooked: u64,
    pub warp_instrs: u64,
    pub lines: u64,
    /// Line accesses whose frame lives on another chiplet than the requester's.
    pub remote_ratio: f64,
    pub l1_tlb: Vec<ClassStats>,
    pub l2_tlb: Vec<ClassStats>,
    pub l1_tlb_hit_rate: f64,
    pub l2_tlb_hit_rate: f64,
    pub walks: u64,
    pub walk_levels_read: u64,
    pub walk_remote_levels: u64,
    pub walks_with_remote_level: u64,
    pub pwc_hits: u64,
    /// TLB fills whose entry the coalescer widened beyond the walked page (CLAP §4.6).
    pub coalesced_fills: u64,
    /// TLB inserts (L1 and L2) that widened an entry of the same group and offset.
    pub merged_tlb_entries: u64,
    pub coalescer_mismatches: u64,
    pub faults: u64,
    /// Walks that found the page's mapping still in flight and joined its fault.
    pub fault_joins: u64,
    /// Accesses that used a translation before the cycle its mapping completed (the
    /// timing invariant: always 0).
    pub translations_before_mapping: u64,
    pub shootdowns: u64,
    pub l1_cache_hit_rate: f64,
    pub l2_cache_hit_rate: f64,
    /// L2 cache misses (data lines and page-walk reads), summed over chiplets.
    pub l2_cache_misses: u64,
    /// L2 cache misses per thousand warp instructions (CLAP Table 2).
    pub l2_cache_mpki: f64,
    /// L2 TLB misses of every page-size class per thousand warp instructions (Table 2).
    pub l2_tlb_mpki: f64,
    /// Every kernel launched, in order.
    pub kernels: Vec<KernelReport>,
    /// Translation stalls and the TLBs' port, miss-register and walker waits.
    pub translation: super::translation::TranslationReport,
    /// Mean queueing per line at the HBM channels and the ring ports, in cycles.
    pub hbm_queue_cycles: f64,
    pub ring_queue_cycles: f64,
    pub page_table_pages: u64,
    pub pf_blocks_used: u64,
    /// Percentage of memory instructions issued when PMM ended (None: it never ended or
    /// the policy has no PMM phase).
    pub pmm_end_pct: Option<f64>,
    /// Remote Tracker estimate over all structures vs the true remote ratio above.
    pub rt_remote_ratio: Option<f64>,
    /// Mean over structures of at least 2 MB the RT saw of 1 - |RT estimate - true remote
    /// ratio| (CLAP §4.3's similarity, 95.3 % in the paper).
    pub rt_similarity: Option<f64>,
    /// Mean over structures of at least 2 MB of their chiplet locality (CLAP §3.4, 93.5 %).
    pub chiplet_locality: Option<f64>,
    pub allocs: Vec<AllocReport>,
    /// Wall-clock seconds of the simulation and warp memory instructions per second.
    pub sim_seconds: f64,
    pub speed: f64,
    /// The driver's own statistics.
    pub driver: serde_json::Value,
    /// The memory service's extra metrics (UVM path), if any.
    pub service: Option<serde_json::Value>,
    /// Which engines served the GMMUs' blocks, and their cycles.
    pub hardware: mcmvm_protocol::system::HardwareReport,
}

/// `num / den`, 0 when `den` is 0.
pub fn ratio(num: u64, den: u64) -> f64 {
    if den == 0 {
        0.0
    } else {
        num as f64 / den as f64
    }
}

/// Per-class TLB statistics from hit and miss counters: the paper's three classes always
/// (4 KB, 64 KB, 2 MB, in that order), an intermediate class only if it saw a lookup
/// (the `s128k` … `s1m` policies).
pub fn class_stats(
    hits: &[u64; CLASSES],
    misses: &[u64; CLASSES],
    warp_instrs: u64,
) -> Vec<ClassStats> {
    SizeClass::ALL
        .iter()
        .filter(|&&c| c as usize <= 2 || hits[c as usize] + misses[c as usize] > 0)
        .map(|&c| {
            let (h, m) = (hits[c as usize], misses[c as usize]);
            ClassStats {
                class: c.label(),
                hits: h,
                misses: m,
                hit_rate: ratio(h, h + m),
                mpki: ratio(m * 1000, warp_instrs),
            }
        })
        .collect()
}

impl RunReport {
    /// Header of [`RunReport::csv_row`].
    pub const CSV_HEADER: &'static str = "workload,policy,chiplets,scale,seed,cycles,\
warp_mem_instrs,warp_instrs,remote_ratio,l1_tlb_hit_rate,l2_tlb_hit_rate,\
l1_mpki_4k,l1_mpki_64k,l1_mpki_2m,l2_mpki_4k,l2_mpki_64k,l2_mpki_2m,walks,\
walk_levels_read,walk_remote_levels,faults,page_table_pages,pf_blocks_used,pmm_end_pct,\
rt_remote_ratio,sim_seconds,speed";

    /// One CSV row (no quoting needed: names are identifiers).
    pub fn csv_row(&self) -> String {
        let opt = |v: Option<f64>| v.map(|x| format!("{x:.6}")).unwrap_or_default();
        format!(
            "{},{},{},{},{},{},{},{},{:.6},{:.6},{:.6},{:.4},{:.4},{:.4},{:.4},{:.4},{:.4},{},{},{},{},{},{},{},{},{:.3},{:.0}",
            self.workload,
            self.policy,
            self.chiplets,
            self.scale,
            self.seed,
            self.cycles,
            self.warp_mem_instrs,
            self.warp_instrs,
            self.remote_ratio,
            self.l1_tlb_hit_rate,
            self.l2_tlb_hit_rate,
            self.l1_tlb[0].mpki,
            self.l1_tlb[1].mpki,
            self.l1_tlb[2].mpki,
            self.l2_tlb[0].mpki,
            self.l2_tlb[1].mpki,
            self.l2_tlb[2].mpki,
            self.walks,
            self.walk_levels_read,
            self.walk_remote_levels,
            self.faults,
            self.page_table_pages,
            self.pf_blocks_used,
            opt(self.pmm_end_pct),
            opt(self.rt_remote_ratio),
            self.sim_seconds,
            self.speed,
        )
    }

    /// A readable multi-line summary for the terminal: the run, the TLBs, translation,
    /// the driver's phases and queueing, the structures.
    pub fn table(&self) -> String {
        let mut s = String::new();
        self.table_run(&mut s);
        self.table_tlbs(&mut s);
        self.table_translation(&mut s);
        self.table_driver(&mut s);
        self.table_structures(&mut s);
        s
    }

    /// Identity, instructions, queueing, remote ratio, locality, caches.
    fn table_run(&self, s: &mut String) {
        let _ = writeln!(
            s,
            "workload {}  policy {}  chiplets {}  scale {}  seed {}",
            self.workload, self.policy, self.chiplets, self.scale, self.seed
        );
        let _ = writeln!(s, "cycles                 {}", self.cycles);
        let _ = writeln!(
            s,
            "warp memory instrs     {}  (warp instrs {}; {} overlapped)",
            self.warp_mem_instrs, self.warp_instrs, self.overlapped_instrs
        );
        let _ = writeln!(
            s,
            "out-of-order requests  {}  (served in {} order; HBM/ring queueing left uncharged {:.0} cycles, {:.1}% of all)",
            self.out_of_order_requests,
            if self.served_in_arrival_order {
                "arrival"
            } else {
                "processing"
            },
            self.uncharged_queue_cycles,
            100.0 * self.uncharged_queue_share
        );
        let _ = writeln!(
            s,
            "MSHR waits             {}  (L1 misses; mean {:.1} cycles; {} grants over capacity)",
            self.mshr_waits, self.mshr_mean_wait, self.mshr_overbooked
        );
        let _ = writeln!(
            s,
            "remote-access ratio    {}  (RT estimate {})",
            pct(self.remote_ratio),
            self.rt_remote_ratio.map(pct).unwrap_or_else(|| "-".into())
        );
        let _ = writeln!(
            s,
            "chiplet locality       {}  (64 KB pages one chiplet mainly accesses; RT similarity {}; structures of 2 MB or more)",
            self.chiplet_locality.map(pct).unwrap_or_else(|| "-".into()),
            self.rt_similarity.map(pct).unwrap_or_else(|| "-".into())
        );
        let _ = writeln!(
            s,
            "L1 / L2 cache hit rate {} / {}",
            pct(self.l1_cache_hit_rate),
            pct(self.l2_cache_hit_rate)
        );
    }

    /// Hits, misses, hit rate and MPKI per TLB level and size class.
    fn table_tlbs(&self, s: &mut String) {
        let _ = writeln!(
            s,
            "TLB        class   hits        misses      hit rate  MPKI"
        );
        for (lvl, v) in [("L1", &self.l1_tlb), ("L2", &self.l2_tlb)] {
            for c in v.iter() {
                let _ = writeln!(
                    s,
                    "{lvl:<10} {:<7} {:<11} {:<11} {:<9} {:.3}",
                    c.class,
                    c.hits,
                    c.misses,
                    pct(c.hit_rate),
                    c.mpki
                );
            }
        }
    }

    /// Translation stalls, walks, coalescing, faults.
    fn table_translation(&self, s: &mut String) {
        let tr = &self.translation;
        let _ = writeln!(
            s,
            "translation stall      {} warp-cycles, {} of warp time  (TLB ports L1 {} / L2 {}, miss registers L1 {} / L2 {}, walkers {} cycles waited)",
            tr.stall_cycles,
            pct(tr.stall_share),
            tr.l1_port_wait_cycles,
            tr.l2_port_wait_cycles,
            tr.l1_miss_wait_cycles,
            tr.l2_miss_wait_cycles,
            tr.walker_wait_cycles
        );
        let _ = writeln!(s, "page walks             {}  (levels read {}, remote {}, walks with a remote level {}, PWC hits {})",
            self.walks, self.walk_levels_read, self.walk_remote_levels, self.walks_with_remote_level, self.pwc_hits);
        let _ = writeln!(
            s,
            "coalesced TLB fills    {}  (merged TLB entries {})",
            self.coalesced_fills, self.merged_tlb_entries
        );
        let _ = writeln!(
            s,
            "page faults            {}  (walks that joined an outstanding fault {})",
            self.faults, self.fault_joins
        );
        let _ = writeln!(
            s,
            "used before mapped     {}  (translations used before their mapping completed; must be 0)",
            self.translations_before_mapping
        );
    }

    /// Page-table size, PF blocks, the PMM phase, HBM and ring queueing.
    fn table_driver(&self, s: &mut String) {
        let _ = writeln!(s, "page-table pages       {}", self.page_table_pages);
        let _ = writeln!(s, "PF blocks used         {}", self.pf_blocks_used);
        let _ = writeln!(
            s,
            "PMM phase ends at      {}",
            self.pmm_end_pct
                .map(|p| format!("{p:.2}% of memory instrs"))
                .unwrap_or_else(|| "-".into())
        );
        let _ = writeln!(
            s,
            "queueing per line      HBM {:.2} cycles, ring {:.2} cycles",
            self.hbm_queue_cycles, self.ring_queue_cycles
        );
    }

    /// One line per data structure, largest first.
    fn table_structures(&self, s: &mut String) {
        let _ = writeln!(
            s,
            "structure            bytes        page size  remote   RT est.  floor    misplaced  walks"
        );
        let mut allocs: Vec<&AllocReport> = self.allocs.iter().collect();
        allocs.sort_by_key(|a| std::cmp::Reverse(a.bytes));
        for a in allocs {
            let _ = writeln!(
                s,
                "{:<20} {:<12} {:<10} {:<8} {:<8} {:<8} {:<10} {}",
                a.name,
                a.bytes,
                a.page_size,
                pct(a.remote_ratio),
                a.rt_remote_ratio.map(pct).unwrap_or_else(|| "-".into()),
                pct(a.locality.floor_region),
                pct(a.locality.misplaced_line_share),
                a.walks
            );
        }
    }
}

/// A fraction as a percentage with two decimals.
fn pct(x: f64) -> String {
    format!("{:.2}%", 100.0 * x)
}
