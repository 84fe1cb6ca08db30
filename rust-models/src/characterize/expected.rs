//! What the configuration implies, in one place: the reach of every TLB, the capacity of
//! every cache, the latency of every path a dependent load can take, and the bandwidth
//! bounds. Every "expected" figure `mcmvm characterize` prints beside a measured one comes
//! from here, so a new config key (TLB ports, miss queues) is added here and nowhere else.
//!
//! The latency of a path follows the model's own steps (`gpu/mod.rs`, "An access, step by
//! step"): L1 TLB lookup; on a miss the L2 TLB; on a miss a walk (each directory level a
//! page-walk-cache hit or a table-line read, the leaf always read); then the L1 cache; on
//! a miss the ring (remote only), the home L2, and on an L2 miss DRAM. A single dependent
//! warp never queues, so the bandwidth terms are zero.

use crate::addr::{PAGE_1G, PAGE_2M, PAGE_4K, PAGE_64K};
use crate::driver::PolicyKind;
use crate::gpu::config::{GpuConfig, TlbSpec, LINE_BYTES};
use serde::Serialize;

/// The TLB structure (page-size class) a chase exercises, and the policy that gives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum PageClass {
    K4,
    K64,
    /// 2 MB translations. Under `ideal` (64 KB placement, 2 MB translation cost): `s2m`
    /// would keep the 64 KB entries its first touches filled before promotion (no
    /// shootdown on promotion), so its 2 MB TLB is not reached by a short chase.
    M2,
}

impl PageClass {
    pub const ALL: [PageClass; 3] = [PageClass::K4, PageClass::K64, PageClass::M2];

    pub const fn bytes(self) -> u64 {
        match self {
            PageClass::K4 => PAGE_4K,
            PageClass::K64 => PAGE_64K,
            PageClass::M2 => PAGE_2M,
        }
    }

    pub const fn label(self) -> &'static str {
        match self {
            PageClass::K4 => "4KB",
            PageClass::K64 => "64KB",
            PageClass::M2 => "2MB",
        }
    }

    /// The placement policy whose translations land in this class's TLBs.
    pub const fn policy(self) -> PolicyKind {
        match self {
            PageClass::K4 => PolicyKind::S4k,
            PageClass::K64 => PolicyKind::S64k,
            PageClass::M2 => PolicyKind::Ideal,
        }
    }

    /// The class of a policy's translations, for the policies characterize can place with.
    pub fn of_policy(p: PolicyKind) -> Option<PageClass> {
        PageClass::ALL.into_iter().find(|c| c.policy() == p)
    }

    /// Entries of this class's TLB at one level.
    pub fn entries(self, t: &TlbSpec) -> u64 {
        match self {
            PageClass::K4 => t.entries_4k as u64,
            PageClass::K64 => t.entries_64k as u64,
            PageClass::M2 => t.entries_2m as u64,
        }
    }

    /// Directory levels above the leaf a walk may find in the page-walk cache: PDB2, PDB1,
    /// PDB0 above a PTB leaf; a 2 MB translation ends at PDB0 (`gpu/gmmu.rs` step 3).
    pub const fn directory_levels(self) -> u32 {
        match self {
            PageClass::M2 => 2,
            _ => 3,
        }
    }
}

/// The shape of a dependent chase, as far as the path of its loads depends on it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ChaseShape {
    pub class: PageClass,
    /// Distinct translations (pages of `class`) per round.
    pub pages: u64,
    /// Distinct 128-byte lines per round.
    pub lines: u64,
    /// Distinct PDB0 entries (2 MB regions) per round.
    pub regions: u64,
    /// Distinct PDB1 entries (1 GB regions) per round.
    pub gigs: u64,
    /// The data (and its page table) lives on another chiplet than the chasing SM.
    pub remote: bool,
}

/// Which structures a load of a chase hits, and what that costs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Path {
    pub l1_tlb_hit: bool,
    pub l2_tlb_hit: bool,
    /// Directory levels answered by the page-walk cache (walks only).
    pub pwc_hits: u32,
    /// Table lines read by a walk (0 without a walk).
    pub table_reads: u32,
    pub l1_cache_hit: bool,
    pub l2_cache_hit: bool,
    pub remote: bool,
    /// The sum of the configured latencies along the path, in cycles.
    pub cycles: u64,
    /// Share of the chase's pages whose L2 TLB set holds every page of the chase that maps
    /// to it (1 without a walk). Between 0 and 1, those pages hit and the rest walk.
    pub l2_tlb_hit_share: f64,
    /// Expected cycles per load: `cycles` for the walking pages, the same path without
    /// the walk for the share that hits.
    pub mean_cycles: f64,
    /// The same sum written out (`10 + 80 + ...`).
    pub terms: String,
}

impl Path {
    /// A short name of the path, the key the latency summary groups by.
    pub fn label(&self, class: PageClass) -> String {
        let tlb = if self.l1_tlb_hit {
            "L1 TLB hit".to_string()
        } else if self.l2_tlb_hit {
            format!("L2 TLB hit ({})", class.label())
        } else {
            let fit = if self.l2_tlb_hit_share > 0.0 {
                format!(
                    ", {:.0}% of pages fit their L2 TLB set",
                    100.0 * self.l2_tlb_hit_share
                )
            } else {
                String::new()
            };
            format!(
                "walk {} ({} PWC hit{}, {} read{}{fit})",
                class.label(),
                self.pwc_hits,
                if self.pwc_hits == 1 { "" } else { "s" },
                self.table_reads,
                if self.table_reads == 1 { "" } else { "s" }
            )
        };
        let data = match (self.l1_cache_hit, self.l2_cache_hit) {
            (true, _) => "L1$ hit",
            (false, true) => "L2$ hit",
            (false, false) => "DRAM",
        };
        let place = if self.remote && !self.l1_cache_hit {
            " remote"
        } else {
            ""
        };
        format!("{tlb}, {data}{place}")
    }
}

/// The configuration's figures, computed once.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Implied {
    pub l1_cache_lines: u64,
    pub l2_cache_lines: u64,
    /// Ring latency in cycles (`interconnect.latency_ns` at the core clock).
    pub ring_latency: u64,
    /// HBM bandwidth per chiplet and ring bandwidth per chiplet port, GB/s.
    pub hbm_gbs_per_chiplet: f64,
    pub ring_gbs_per_port: f64,
    /// Walks a chiplet's walkers finish per cycle at most when each walk takes the
    /// latency of a local 4 KB walk with page-walk-cache hits (Little's law).
    pub walks_per_cycle_per_chiplet: f64,
    /// Lines an SM's L1 port moves per cycle: one, a model constant (no config key).
    pub l1_port_lines_per_cycle: f64,
    /// Lookups per cycle of an SM's L1 TLB and of a chiplet's L2 TLB
    /// (`l1_tlb.lookups_per_cycle`, `l2_tlb.lookups_per_cycle`); None = unbounded (0).
    pub l1_tlb_lookups_per_cycle: Option<u32>,
    pub l2_tlb_lookups_per_cycle: Option<u32>,
}

impl Implied {
    pub fn new(cfg: &GpuConfig) -> Implied {
        let d = cfg.derived();
        let chiplets = cfg.gpu.chiplets as f64;
        let walk = walk_cycles(cfg, PageClass::K4, PageClass::K4.directory_levels(), false);
        Implied {
            l1_cache_lines: cfg.l1_cache.bytes / LINE_BYTES,
            l2_cache_lines: cfg.l2_cache.bytes / LINE_BYTES,
            ring_latency: d.ring_latency,
            hbm_gbs_per_chiplet: cfg.memory.total_bandwidth_gbs / chiplets,
            ring_gbs_per_port: cfg.interconnect.total_bandwidth_gbs / chiplets,
            walks_per_cycle_per_chiplet: cfg.walker.walkers_per_chiplet as f64 / walk as f64,
            l1_port_lines_per_cycle: 1.0,
            l1_tlb_lookups_per_cycle: (cfg.l1_tlb.lookups_per_cycle > 0)
                .then_some(cfg.l1_tlb.lookups_per_cycle),
            l2_tlb_lookups_per_cycle: (cfg.l2_tlb.lookups_per_cycle > 0)
                .then_some(cfg.l2_tlb.lookups_per_cycle),
        }
    }
}

/// Bytes one TLB level of `class` reaches: entries × page size.
pub fn tlb_reach(t: &TlbSpec, class: PageClass) -> u64 {
    class.entries(t) * class.bytes()
}

/// The capacities a footprint sweep can step at, named as the config names them:
/// (name, bytes). The TLB reaches are those of `class`.
pub fn reaches(cfg: &GpuConfig, class: PageClass) -> Vec<(String, u64)> {
    let l = class.label();
    vec![
        (
            format!("L1 TLB reach ({l}): l1_tlb entries x page"),
            tlb_reach(&cfg.l1_tlb, class),
        ),
        (
            format!("L2 TLB reach ({l}): l2_tlb entries x page"),
            tlb_reach(&cfg.l2_tlb, class),
        ),
        ("L1 cache: l1_cache.bytes".into(), cfg.l1_cache.bytes),
        ("L2 cache: l2_cache.bytes".into(), cfg.l2_cache.bytes),
    ]
}

/// Latency of a walk with `pwc_hits` directory levels from the page-walk cache, the rest
/// and the leaf read as lines that hit the (home) L2.
fn walk_cycles(cfg: &GpuConfig, class: PageClass, pwc_hits: u32, remote: bool) -> u64 {
    let reads = (class.directory_levels() - pwc_hits + 1) as u64;
    let ring = if remote {
        cfg.derived().ring_latency
    } else {
        0
    };
    pwc_hits as u64 * cfg.walker.pwc_latency + reads * (ring + cfg.l2_cache.latency)
}

/// The path of every load of a cyclic dependent chase of shape `s`, after a warm-up
/// round. A cyclic chase over LRU structures hits iff its distinct items fit (each item is
/// evicted just before its reuse otherwise). Consecutive lines spread evenly over a
/// cache's sets, so its capacity is its lines whatever the associativity; a TLB's sets
/// are picked by 16-page group, so past its reach some sets may still hold all their
/// pages ([`set_fit_share`]).
pub fn chase_path(cfg: &GpuConfig, s: &ChaseShape) -> Path {
    let l1_tlb_hit = s.pages <= s.class.entries(&cfg.l1_tlb);
    let share = if l1_tlb_hit {
        1.0
    } else {
        // The 64 KB TLB keeps a 1 MB group in one set (CLAP's coalescing); the others
        // index by page.
        let group = if s.class == PageClass::K64 { 16 } else { 1 };
        set_fit_share(
            s.pages,
            s.class.entries(&cfg.l2_tlb),
            cfg.l2_tlb.ways,
            group,
        )
    };
    if share >= 1.0 || share <= 0.0 {
        return path_of(cfg, s, l1_tlb_hit, share >= 1.0);
    }
    let hit = path_of(cfg, s, false, true);
    let mut walk = path_of(cfg, s, false, false);
    walk.l2_tlb_hit_share = share;
    walk.mean_cycles = share * hit.cycles as f64 + (1.0 - share) * walk.cycles as f64;
    walk
}

/// Share of a cyclic chase's `pages` consecutive pages that stay in a TLB of `entries`
/// entries and `ways` ways (0: fully associative), whose set is picked by the page's
/// aligned group of `group` pages: 16 in the 64 KB TLB, so that CLAP's merged entries of
/// one group meet in one set (`gpu/tlb.rs`), which loads the sets unevenly. Under LRU a
/// cyclic chase hits in a set iff the set's pages fit its ways.
pub fn set_fit_share(pages: u64, entries: u64, ways: u32, group: u64) -> f64 {
    let ways = if ways == 0 { entries } else { ways as u64 }.max(1);
    let sets = (entries / ways).max(1);
    if pages == 0 {
        return 1.0;
    }
    let mut per_set = vec![0u64; sets as usize];
    let group = group.max(1);
    for g in 0..pages.div_ceil(group) {
        per_set[(g % sets) as usize] += (pages - g * group).min(group);
    }
    let fit: u64 = per_set.iter().filter(|&&n| n <= ways).sum();
    fit as f64 / pages as f64
}

/// [`chase_path`] with the TLB outcome given.
fn path_of(cfg: &GpuConfig, s: &ChaseShape, l1_tlb_hit: bool, l2_hit: bool) -> Path {
    let l2_tlb_hit = l1_tlb_hit || l2_hit;
    // PDB2 is one entry, PDB1 one per GB, PDB0 one per 2 MB region (2 MB translations end
    // at PDB0, which is read, not cached). The upper entries are reused by every walk and
    // stay; PDB0 entries hit iff all directory entries fit.
    let pdb0_cached = s.class != PageClass::M2;
    let keys = 1 + s.gigs + if pdb0_cached { s.regions } else { 0 };
    let levels = s.class.directory_levels();
    let pwc_hits = if keys <= cfg.walker.pwc_entries as u64 {
        levels
    } else {
        levels - 1
    };
    let walked = !l2_tlb_hit;
    let table_lines = if walked { s.pages.div_ceil(16) } else { 0 };
    let l1_cache_hit = s.lines <= cfg.l1_cache.bytes / LINE_BYTES;
    let l2_cache_hit = s.lines + table_lines <= cfg.l2_cache.bytes / LINE_BYTES;
    let d = cfg.derived();
    let ring = if s.remote { d.ring_latency } else { 0 };
    let mut terms = vec![cfg.l1_tlb.latency];
    if !l1_tlb_hit {
        terms.push(cfg.l2_tlb.latency);
    }
    if walked {
        terms.push(walk_cycles(cfg, s.class, pwc_hits, s.remote));
    }
    terms.push(cfg.l1_cache.latency);
    if !l1_cache_hit {
        terms.extend([ring, cfg.l2_cache.latency].into_iter().filter(|&t| t > 0));
        if !l2_cache_hit {
            terms.push(cfg.memory.dram_latency);
        }
    }
    let cycles = terms.iter().sum();
    let terms = terms
        .iter()
        .map(u64::to_string)
        .collect::<Vec<_>>()
        .join(" + ");
    Path {
        l1_tlb_hit,
        l2_tlb_hit,
        pwc_hits: if walked { pwc_hits } else { 0 },
        table_reads: if walked { levels - pwc_hits + 1 } else { 0 },
        l1_cache_hit,
        l2_cache_hit,
        remote: s.remote,
        cycles,
        terms,
        l2_tlb_hit_share: 1.0 - walked as u8 as f64,
        mean_cycles: cycles as f64,
    }
}

/// Distinct PDB1 entries (1 GB regions) of a span of `bytes`.
pub fn gigs(bytes: u64) -> u64 {
    bytes.div_ceil(PAGE_1G).max(1)
}

#[cfg(test)]
mod set_tests {
    use super::set_fit_share;

    #[test]
    fn whole_groups_load_the_sets_unevenly_single_pages_evenly() {
        // 32 entries, 16 ways: 2 sets. 48 pages in groups of 16: sets get 32 and 16.
        assert_eq!(set_fit_share(48, 32, 16, 16), 1.0 / 3.0);
        // Page-indexed: 24 pages in each set, none fits.
        assert_eq!(set_fit_share(48, 32, 16, 1), 0.0);
        assert_eq!(set_fit_share(32, 32, 16, 1), 1.0);
        // Fully associative: fits iff the pages fit the entries.
        assert_eq!(set_fit_share(33, 32, 0, 16), 0.0);
    }
}
