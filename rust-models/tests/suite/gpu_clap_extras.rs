//! The CLAP study's further figures: MPKI from the run's counters, the extra jobs and the
//! shapes of the sensitivity, 8-chiplet, Table 2 and paper tables, their CSV columns, and
//! the `[driver]` section of a GPU config.

use crate::gpu_support;

use gpu_support::{config4, read32, Scripted};
use mcmvm_models::driver::PolicyKind;
use mcmvm_models::gpu::clap_extras::{self as extras, ExtraRun, Variant};
use mcmvm_models::gpu::clap_tables as tables;
use mcmvm_models::gpu::sweep::{self, RunSummary};
use mcmvm_models::gpu::{simulate, GpuConfig, RunSpec};
use mcmvm_models::workload::{Allocation, Kernel};
use std::path::Path;

fn config8() -> GpuConfig {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/mcm-8chiplet.toml");
    GpuConfig::load(&path).expect("configs/mcm-8chiplet.toml loads")
}

#[test]
fn mpki_is_misses_per_thousand_warp_instructions_of_the_run() {
    // One warp reads three lines of one 64 KB page, with four compute instructions
    // before each: 3 x (4 + 1) = 15 warp instructions.
    let mut w = Scripted::new(
        "tiny",
        vec![Allocation::new("a", 1 << 16)],
        vec![Kernel::new("first", 1, 1), Kernel::new("second", 2, 1)],
    );
    for line in 0..3u64 {
        let mut i = read32(0, line * 128);
        i.compute_cycles = 4;
        w.push(0, 0, 0, i);
    }
    // The second kernel re-reads line 0 from two blocks (L1 TLB and cache are per SM).
    w.push(1, 0, 0, read32(0, 0));
    w.push(1, 1, 0, read32(0, 0));
    let spec = RunSpec {
        policy: PolicyKind::S64k,
        scale: 1.0,
        seed: 1,
    };
    let r = simulate(&config4(), &w, spec).expect("runs");
    assert_eq!(r.warp_instrs, 17);
    // One walk fills the L2 TLB for the page; every later access finds it in a TLB.
    let l2_tlb_misses: u64 = r.l2_tlb.iter().map(|c| c.misses).sum();
    assert_eq!(
        l2_tlb_misses,
        r.walks - r.faults,
        "each completed walk fills"
    );
    assert_eq!(r.l2_tlb_mpki, l2_tlb_misses as f64 * 1000.0 / 17.0);
    assert_eq!(r.l2_cache_mpki, r.l2_cache_misses as f64 * 1000.0 / 17.0);
    // Three data lines miss the L2 once each; the walks' page-table reads miss too.
    assert!(r.l2_cache_misses >= 3, "{}", r.l2_cache_misses);
    // Per kernel: instructions and thread blocks; the dominant kernel ran longest.
    assert_eq!(r.kernels.len(), 2);
    assert_eq!(
        (r.kernels[0].warp_instrs, r.kernels[1].warp_instrs),
        (15, 2)
    );
    assert_eq!(r.kernels[0].cycles + r.kernels[1].cycles, r.cycles);
    let d = mcmvm_models::gpu::metrics::dominant_kernel(&r.kernels).expect("kernels ran");
    assert_eq!((d.name.as_str(), d.thread_blocks), ("first", 1));
    // Table 2 reads the same counters from the run's summary.
    let s = RunSummary::of(&r);
    let rows = tables::table2(&[s]);
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].l2_cache_mpki, [None, Some(r.l2_cache_mpki), None]);
    assert_eq!(rows[0].l2_tlb_mpki, [None, Some(r.l2_tlb_mpki), None]);
    assert_eq!(rows[0].remote_ratio[1], Some(r.remote_ratio));
    assert_eq!(rows[0].footprint_bytes, 1 << 16);
    assert_eq!(rows[0].dominant_kernel, Some(("first".to_string(), 1)));
    assert_eq!(tables::per_kilo(3, 0), None);
}

#[test]
fn the_extra_jobs_cover_every_table_once() {
    let cfg = config4();
    let ws = vec!["bfs".to_string(), "ste".to_string()];
    let jobs = extras::extra_jobs(&cfg, &ws);
    // Per workload: s64k; clap at 5 non-default PMM thresholds, 2 non-default block
    // counts and the configuration's own values; 4 policies on 8 chiplets.
    assert_eq!(jobs.len(), 2 * (1 + 1 + 5 + 2 + 4));
    for (i, j) in jobs.iter().enumerate() {
        assert!(!jobs[..i].contains(j), "{j:?} twice");
    }
    let main: Vec<_> = jobs.iter().filter_map(|j| j.main_equivalent()).collect();
    assert_eq!(
        main.len(),
        4,
        "s64k and clap of each workload repeat the main sweep"
    );
    assert!(jobs.contains(&extras::ExtraJob {
        variant: Variant::Pmm { fraction: 0.30 },
        workload: "ste".into(),
        policy: PolicyKind::Clap,
    }));
    assert!(!jobs
        .iter()
        .any(|j| j.variant == Variant::Pmm { fraction: 0.20 }));
}

/// Every extra job of `bfs` at a tiny scale, run.
fn tiny_extras() -> (GpuConfig, Vec<ExtraRun>) {
    let (cfg, cfg8) = (config4(), config8());
    let jobs = extras::extra_jobs(&cfg, &["bfs".to_string()]);
    let runs = jobs
        .into_iter()
        .map(|j| {
            let r = extras::run_extra(&cfg, &cfg8, &j, 0.01, 1).expect("tiny run");
            (j, RunSummary::of(&r))
        })
        .collect();
    (cfg, runs)
}

#[test]
fn sensitivity_8_chiplet_and_paper_tables_have_their_shapes_and_columns() {
    let (cfg, runs) = tiny_extras();
    let pmm = extras::pmm_sensitivity(&cfg, &runs);
    let values: Vec<f64> = pmm.rows.iter().map(|r| r.value).collect();
    assert_eq!(values, extras::PMM_FRACTIONS);
    let defaults: Vec<bool> = pmm.rows.iter().map(|r| r.default).collect();
    assert_eq!(defaults, [false, false, false, true, false, false]);
    for r in &pmm.rows {
        assert_eq!(r.workloads, 1, "{r:?}");
        assert_eq!(r.per_workload.len(), 1);
        assert_eq!(r.geomean, r.per_workload[0].1);
    }
    assert_eq!(pmm.rows[3].vs_default, Some(0.0));
    let csv = pmm.csv();
    assert_eq!(
        csv.lines().next(),
        Some("pmm_fraction,default,geomean,vs_default,fallbacks,workloads,bfs")
    );
    assert_eq!(csv.lines().count(), 7);
    assert!(pmm.text().contains("-1.3 % on average"));

    let blocks = extras::min_blocks_sensitivity(&cfg, &runs);
    let values: Vec<f64> = blocks.rows.iter().map(|r| r.value).collect();
    assert_eq!(values, [1.0, 2.0, 4.0]);
    assert!(blocks.rows[0].default);
    // Needing more blocks never sends fewer structures to OLP.
    assert!(blocks.rows[0].fallbacks <= blocks.rows[1].fallbacks);
    assert!(blocks.rows[1].fallbacks <= blocks.rows[2].fallbacks);

    // The 8-chiplet runs ran on 8 chiplets and every policy has a result.
    let c8 = tables::chiplets8(&runs, &extras::CHIPLETS8_POLICIES);
    assert_eq!(c8.policies, ["s64k", "s2m", "clap", "ideal"]);
    assert_eq!(c8.rows.len(), 1);
    assert!(c8.rows[0].1.iter().all(Option::is_some), "{c8:?}");
    assert_eq!(c8.rows[0].1[0].map(|c| c.0), Some(1.0), "s64k over itself");
    assert!(c8.geomeans.iter().all(|g| g.is_some_and(|g| g > 0.0)));
    for (j, r) in &runs {
        let chiplets = r.csv_row.split(',').nth(2);
        let want = if j.variant == Variant::Chiplets8 {
            "8"
        } else {
            "4"
        };
        assert_eq!(chiplets, Some(want), "{j:?}");
    }
    let csv = c8.csv();
    assert_eq!(
        csv.lines().next(),
        Some("workload,policy,speedup_over_s64k,remote_ratio")
    );
    assert_eq!(csv.lines().count(), 1 + 4 + 4);
    assert!(c8.text().contains("(paper +13.3%)"));

    // The paper's figures: ours from the same runs, the difference ours minus theirs.
    let main: Vec<RunSummary> = runs
        .iter()
        .filter(|(j, _)| j.variant == Variant::Chiplets8)
        .map(|(_, r)| r.clone())
        .collect();
    let figs = tables::paper_figures(&main, Some(&c8), Some(&pmm));
    let names: Vec<&str> = figs.iter().map(|f| f.figure).collect();
    assert_eq!(
        names,
        [
            "CLAP over s64k (geomean)",
            "CLAP over s2m (geomean)",
            "CLAP below ideal (1 - clap/ideal)",
            "8 chiplets: CLAP over s64k",
            "8 chiplets: CLAP over s2m",
            "PMM 30 % vs 20 %",
            "RT similarity to true ratio (s64k)",
            "chiplet locality (s64k)"
        ]
    );
    let papers: Vec<f64> = figs.iter().map(|f| f.paper).collect();
    assert_eq!(
        papers,
        [0.175, 0.192, 0.0578, 0.133, 0.215, -0.013, 0.953, 0.935]
    );
    // The mean over workloads of their s64k runs' own figures.
    let s64k: Vec<f64> = main
        .iter()
        .filter(|r| r.policy == "s64k")
        .filter_map(|r| r.chiplet_locality)
        .collect();
    // (None at this tiny scale, where no structure reaches 2 MB.)
    let expected = (!s64k.is_empty()).then(|| s64k.iter().sum::<f64>() / s64k.len() as f64);
    assert_eq!(figs[7].ours, expected);
    assert_eq!(
        figs[0].ours, c8.clap_over_s64k,
        "these runs are the 8-chiplet ones"
    );
    assert_eq!(figs[5].ours, pmm.rows[4].vs_default);
    for f in &figs {
        assert_eq!(f.difference, f.ours.map(|o| o - f.paper));
    }
    let csv = tables::paper_csv(&figs);
    assert_eq!(csv.lines().next(), Some("figure,paper,mcmvm,difference"));
    assert_eq!(csv.lines().count(), 9);
    let none = tables::paper_figures(&main, None, None);
    assert_eq!(none[3].ours, None);
    assert_eq!(none[5].ours, None);
}

#[test]
fn table2_and_structure_csv_columns() {
    let rows: Vec<tables::Table2Row> = vec![];
    assert_eq!(
        tables::table2_csv(&rows),
        "workload,footprint_bytes,dominant_kernel,dominant_kernel_tbs,\
         l2_cache_mpki_4k,l2_cache_mpki_64k,l2_cache_mpki_2m,\
         l2_tlb_mpki_4k,l2_tlb_mpki_64k,l2_tlb_mpki_2m,\
         remote_ratio_4k,remote_ratio_64k,remote_ratio_2m,\
         rt_similarity_64k,chiplet_locality_64k\n"
    );
    assert_eq!(
        sweep::alloc_csv_of(&[]),
        "workload,policy,structure,bytes,page_size,lines,remote_ratio,rt_remote_ratio,walks,\
         floor_64k,floor_page,misplaced_share,chiplet_locality,table4\n"
    );
}

#[test]
fn the_driver_section_is_optional_checked_and_reaches_the_driver() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/mcm-4chiplet.toml");
    let text = std::fs::read_to_string(&path).expect("config text");
    let cfg = GpuConfig::parse(&text, &path).expect("parses");
    assert_eq!(
        cfg.driver,
        Default::default(),
        "the file states the defaults"
    );
    let d = mcmvm_models::gpu::driver_config(&cfg);
    assert_eq!(
        (d.pmm_fraction, d.mma_min_full_blocks, d.chiplets),
        (0.2, 1, 4)
    );
    let start = text.find("\n[driver]\n").expect("a [driver] section");
    let end = start + text[start..].find("\n\n# [hw]").expect("section end");
    let without = format!("{}{}", &text[..start], &text[end..]);
    assert_eq!(
        GpuConfig::parse(&without, &path).expect("optional").driver,
        cfg.driver
    );
    let bad = text.replace("mma_min_full_blocks = 1", "mma_min_full_blocks = 0");
    let e = GpuConfig::parse(&bad, &path).unwrap_err().to_string();
    assert!(e.contains("driver.mma_min_full_blocks"), "{e}");
    let bad = text.replace("pmm_fraction = 0.2", "pmm_fraction = 1.5");
    let e = GpuConfig::parse(&bad, &path).unwrap_err().to_string();
    assert!(
        e.contains("driver.pmm_fraction") && e.contains("0..=1"),
        "{e}"
    );
    let bad = text.replace("pmm_fraction = 0.2", "pmm_fraction = 0.2\npmm_percent = 20");
    let e = GpuConfig::parse(&bad, &path).unwrap_err().to_string();
    assert!(e.contains("pmm_percent"), "{e}");
}
