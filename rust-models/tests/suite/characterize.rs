//! `mcmvm characterize` measures the config it is given: on a small config (small caches
//! and TLBs, so every staircase is a few short chases) each step sits where the config puts
//! it, each plateau costs the configured path, walks and remote accesses cost what the
//! config says, and a translation flood stays under a configured lookup port.

use crate::gpu_support::config4;
use mcmvm_models::characterize::{
    self, expected, steps, table, Bench, FloodSpec, FloodWorkload, Measured, PageClass, Pattern,
    Scope, Section, Shape,
};
use mcmvm_models::driver::PolicyKind;
use mcmvm_models::gpu::{simulate, GpuConfig, RunReport, RunSpec};

/// config4 with small caches and TLBs whose reaches all differ: L1$ 64 KB, L2$ 1 MB;
/// 4 KB TLBs reach 32 KB / 512 KB, 64 KB TLBs 256 KB / 2 MB, 2 MB TLBs 4 MB / 32 MB.
fn small() -> GpuConfig {
    let mut c = config4();
    c.gpu.sms_per_chiplet = 4;
    c.gpu.warps_per_sm = 16;
    c.l1_cache.bytes = 64 << 10;
    c.l2_cache.bytes = 1 << 20;
    (
        c.l1_tlb.entries_4k,
        c.l1_tlb.entries_64k,
        c.l1_tlb.entries_2m,
    ) = (8, 4, 2);
    (
        c.l2_tlb.entries_4k,
        c.l2_tlb.entries_64k,
        c.l2_tlb.entries_2m,
    ) = (128, 32, 16);
    c
}

fn measure_section(cfg: &GpuConfig, section: Section) -> Vec<Measured> {
    let plan = characterize::plan(cfg, PolicyKind::Ideal).expect("ideal places data");
    let benches: Vec<&Bench> = plan.iter().filter(|b| b.section == section).collect();
    assert!(!benches.is_empty(), "{section:?} has benchmarks");
    benches
        .into_iter()
        .map(|b| characterize::measure(cfg, b).expect("runs"))
        .collect()
}

/// Every point of `ms`: (name, measured, expected cycles, expected path has a walk).
fn points(ms: &[Measured]) -> Vec<(String, f64, u64, bool)> {
    points_mean(ms)
        .into_iter()
        .map(|(n, c, _, p)| (n, c, p.cycles, !p.l2_tlb_hit))
        .collect()
}

/// Every point of `ms`: (name, measured, expected mean cycles, path).
fn points_mean(
    ms: &[Measured],
) -> Vec<(String, f64, f64, mcmvm_models::characterize::expected::Path)> {
    ms.iter()
        .map(|m| {
            let p = m.expected.clone().expect("a chase has a path");
            let c = m.cycles_per_load.expect("a chase has cycles");
            (m.bench.name.clone(), c, p.mean_cycles, p)
        })
        .collect()
}

/// Each of `reaches` has a detected step that brackets it, and every point without a
/// walk costs exactly the configured path (a walk: within 10 %).
fn check_staircase(cfg: &GpuConfig, section: Section, reaches: &[u64]) {
    let ms = measure_section(cfg, section);
    let capacities = [cfg.l1_cache.bytes, cfg.l2_cache.bytes];
    for (name, got, want, path) in points_mean(&ms) {
        println!("{section:?} {name}: {got:.4} cycles/load, configured {want:.4}");
        let at_capacity = ms
            .iter()
            .find(|m| m.bench.name == name)
            .and_then(|m| match &m.bench.kind {
                mcmvm_models::characterize::Kind::Chase { spec, .. } => Some(spec.footprint()),
                _ => None,
            })
            .is_some_and(|f| capacities.contains(&f));
        if !path.l2_tlb_hit {
            let err = (got - want).abs() / want;
            assert!(err <= 0.10, "{name}: walk {got:.1} vs {want:.1}");
        } else if at_capacity {
            // A footprint of exactly a cache's size: the warm-up's page-table lines share
            // the cache, so a few loads miss (measured: 190.0122 against 190 at 1 MB).
            assert!(
                (got - want).abs() <= 0.001 * want,
                "{name}: {got} vs {want}"
            );
        } else {
            assert_eq!(got, want, "{name}");
        }
    }
    let found = table::steps_of(&ms, section);
    for &reach in reaches {
        let st = steps::nearest(&found, reach).unwrap_or_else(|| panic!("no step at all"));
        assert!(
            steps::brackets(&st, reach),
            "{section:?}: reach {reach} B, nearest step between {} and {} B",
            st.below,
            st.at
        );
    }
}

#[test]
fn data_cache_steps_sit_at_the_cache_sizes() {
    let cfg = small();
    check_staircase(
        &cfg,
        Section::DataCache,
        &[cfg.l1_cache.bytes, cfg.l2_cache.bytes],
    );
}

#[test]
fn tlb_steps_sit_at_entries_times_page_size_for_every_page_size() {
    let cfg = small();
    for class in PageClass::ALL {
        let reach = |t| expected::tlb_reach(t, class);
        let (l1, l2) = (reach(&cfg.l1_tlb), reach(&cfg.l2_tlb));
        assert_eq!(l1, cfg.l1_tlb_entries(class) * class.bytes());
        check_staircase(&cfg, Section::Tlb(class), &[l1, l2]);
    }
}

trait Entries {
    fn l1_tlb_entries(&self, c: PageClass) -> u64;
}

impl Entries for GpuConfig {
    fn l1_tlb_entries(&self, c: PageClass) -> u64 {
        match c {
            PageClass::K4 => self.l1_tlb.entries_4k as u64,
            PageClass::K64 => self.l1_tlb.entries_64k as u64,
            PageClass::M2 => self.l1_tlb.entries_2m as u64,
        }
    }
}

#[test]
fn a_walk_costs_the_configured_walk() {
    let cfg = small();
    let ms = measure_section(&cfg, Section::Walk);
    let pts = points(&ms);
    for (name, got, want, walk) in &pts {
        println!("{name}: {got:.1} cycles/load, configured {want}");
        assert!(walk, "{name}: past the L2 TLB reach every load walks");
    }
    // With page-walk-cache hits: one table read (the leaf) on top of the TLB misses.
    let (name, got, want, _) = &pts[0];
    let leaf = cfg.l1_tlb.latency
        + cfg.l2_tlb.latency
        + 3 * cfg.walker.pwc_latency
        + cfg.l2_cache.latency
        + cfg.l1_cache.latency;
    assert!(
        *want >= leaf,
        "{name}: the configured path includes the walk"
    );
    assert!(
        (got - *want as f64).abs() <= 0.10 * *want as f64,
        "{name}: {got:.1} vs {want}"
    );
    // Without PDB0 hits the walk reads a table line more: it costs more.
    assert!(
        pts[1].1 > pts[0].1 + cfg.l2_cache.latency as f64 / 2.0,
        "{pts:?}"
    );
}

#[test]
fn remote_minus_local_is_the_ring_latency() {
    let cfg = small();
    let ms = measure_section(&cfg, Section::LocalRemote);
    let ring = cfg.derived().ring_latency as f64;
    for pair in ms.chunks(2) {
        let (l, r) = (&pair[0], &pair[1]);
        assert!(l.bench.name.contains("local") && r.bench.name.contains("remote"));
        let (l, r) = (l.cycles_per_load.unwrap(), r.cycles_per_load.unwrap());
        println!("{}: local {l:.1} remote {r:.1}", pair[0].bench.name);
        assert_eq!(r - l, ring);
    }
}

/// L2 TLB lookups per cycle of one chiplet's translation flood (its measured kernel).
fn l2_lookups_per_cycle(cfg: &GpuConfig) -> f64 {
    let spec = FloodSpec {
        pattern: Pattern::Gather {
            pages: 16 * cfg.l2_tlb.entries_4k as u64,
            per_warp: 4,
        },
        scope: Scope::OneChiplet,
    };
    let shape = Shape {
        chiplets: cfg.gpu.chiplets,
        sms_per_chiplet: cfg.gpu.sms_per_chiplet,
        warps_per_sm: cfg.gpu.warps_per_sm,
    };
    let run = |measure| -> RunReport {
        let w = FloodWorkload::new(spec, shape, measure, 1);
        let s = RunSpec {
            policy: PolicyKind::S4k,
            scale: 1.0,
            seed: 1,
        };
        simulate(cfg, &w, s).expect("runs")
    };
    let (base, full) = (run(false), run(true));
    let l2 = |r: &RunReport| r.l2_tlb.iter().map(|c| c.hits + c.misses).sum::<u64>();
    let cycles = full.kernels[1].cycles as f64;
    (l2(&full) - l2(&base)) as f64 / cycles
}

#[test]
fn a_translation_flood_stays_under_the_configured_l2_tlb_port() {
    // Walkers enough that the walks do not bound the flood first (seed 1).
    let mut cfg = small();
    cfg.walker.walkers_per_chiplet = 1024;
    let free = l2_lookups_per_cycle(&cfg);
    cfg.l2_tlb.lookups_per_cycle = 1;
    let ported = l2_lookups_per_cycle(&cfg);
    println!("L2 TLB lookups/cycle per chiplet: unbounded {free:.3}, 1 port {ported:.3}");
    assert!(free > 1.0, "the flood would exceed one lookup per cycle");
    assert!(ported <= 1.0 + 1e-9, "{ported}");
    assert!(ported > 0.5, "the port is the bound, and is used: {ported}");
}

#[test]
fn the_tables_name_every_section() {
    let cfg = small();
    let ms = measure_section(&cfg, Section::Tlb(PageClass::K64));
    let text = table::render(&cfg, &ms);
    assert!(text.contains("== TLB staircase 64KB"), "{text}");
    assert!(text.contains("step  L2 TLB reach (64KB)"), "{text}");
}
