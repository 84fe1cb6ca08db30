//! `mcmvm sweep --suite forest` on the GPU timing model at a tiny scale: configured as the
//! paper's GPU (`configs/gpu-turing.toml`), with fewer SMs, it produces the per-workload
//! table, the oversubscription curve, both ablations and the paper's figures.

use std::path::Path;

use crate::uvm_common::small_turing;
use mcmvm_models::gpu::GpuConfig;
use mcmvm_models::uvm::sweep::{paper_table, POLICIES};
use mcmvm_models::uvm::{sweep_forest, SweepOptions, UvmConfig};

fn configs() -> (GpuConfig, UvmConfig) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs");
    let gpu = GpuConfig::load(&root.join("gpu-turing.toml")).expect("gpu-turing.toml loads");
    let ucfg = UvmConfig::load(&root.join("uvm-turing.toml"), &[]).expect("uvm-turing loads");
    (gpu, ucfg)
}

fn options(workloads: &[&str], oversubs: &[f64]) -> SweepOptions {
    let mut o = SweepOptions::new(configs().1, small_turing());
    o.workloads = workloads.iter().map(|w| w.to_string()).collect();
    o.oversubs = oversubs.to_vec();
    o.scale = 0.02;
    o
}

#[test]
fn the_papers_gpu_is_one_turing_chiplet_with_the_papers_uvm() {
    let (gpu, ucfg) = configs();
    assert_eq!(gpu.gpu.chiplets, 1);
    assert_eq!(gpu.gpu.sms_per_chiplet, 68);
    assert_eq!(gpu.gpu.warps_per_sm, 32);
    assert_eq!(gpu.gpu.clock_mhz, 1365.0);
    assert_eq!(
        ucfg.gpu.clock_mhz, gpu.gpu.clock_mhz,
        "the µs of both configs agree"
    );
    assert_eq!(ucfg.memory.page_kb, 4);
    assert_eq!(ucfg.memory.oversubscription, 1.5);
    assert_eq!(ucfg.fault.far_fault_latency_us, 45.0);
    assert_eq!(ucfg.fault.batch_size, 256);
    assert_eq!(ucfg.host_link.bandwidth_gb_s, 15.75);
    assert_eq!(small_turing().placement.name(), "s4k");
}

#[test]
fn the_sweep_has_the_table_the_curve_and_both_ablations() {
    let dir = std::env::temp_dir().join(format!("mcmvm-sweep-timing-{}", std::process::id()));
    let mut opts = options(&["ls", "lc"], &[1.25, 1.5]);
    opts.out_dir = Some(dir.clone());
    let r = sweep_forest(&opts).expect("the sweep runs");
    assert_eq!(r.runs.len(), 2 * 2 * POLICIES.len());
    assert_eq!(r.rows.len(), 4);
    for row in &r.rows {
        let cycles = [
            row.tbnp_cycles,
            row.forest_cycles,
            row.specforest_cycles,
            row.forest_lru_cycles,
            row.tbnp_aae_cycles,
        ];
        assert!(
            cycles.iter().all(|&c| c > 0),
            "{}: {cycles:?}",
            row.workload
        );
        assert!(row.far_faults.iter().all(|&f| f > 0), "{}", row.workload);
        let expect = row.tbnp_cycles as f64 / row.tbnp_aae_cycles as f64;
        assert_eq!(row.tbnp_aae_speedup, expect);
    }
    // The rows are the runs': each row's cycles are its five runs' cycles, in job order.
    let ls = r
        .rows
        .iter()
        .position(|x| x.workload == "ls" && x.oversubscription == 1.5)
        .expect("ls at 150 %");
    let runs = &r.runs[ls * POLICIES.len()..(ls + 1) * POLICIES.len()];
    assert_eq!(runs[0].policy, "tbnp");
    assert_eq!(r.rows[ls].tbnp_cycles, runs[0].cycles);
    assert_eq!(r.rows[ls].forest_cycles, runs[1].cycles);
    assert_eq!(r.summaries.len(), 2);
    let table = r.table();
    assert!(table.starts_with("workload "), "{table}");
    assert!(table.contains("geomean at oversub 1.25: forest"), "{table}");
    assert!(
        table.contains("forest over tbnp at 150 % (geomean)"),
        "{table}"
    );
    assert!(
        table.contains("specforest over tbnp at 125 % (geomean)"),
        "{table}"
    );
    assert!(table.contains("223 -> 10"), "{table}");
    assert!(
        table.contains("forest's share of its log-geomean at oversub 1.50: ls "),
        "{table}"
    );
    assert!(
        table.contains("without the workloads where tbnp thrashes > 10x the footprint"),
        "{table}"
    );
    let csv = std::fs::read_to_string(dir.join("forest.csv")).unwrap();
    let mut lines = csv.lines();
    let header = lines.next().unwrap();
    assert!(
        header.ends_with(",profiling_steps_forest_lru,classes,forest_log_share,tbnp_thrashes"),
        "{header}"
    );
    let cells: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(cells.len(), 4, "{csv}");
    // Each oversubscription's shares of Forest's log-geomean sum to 1 (or are all empty
    // when the logs cancel), and the thrash flag follows TBNp's thrash multiple.
    let col = |name: &str| header.split(',').position(|c| c == name).unwrap();
    let (share, flag, thrash) = (
        col("forest_log_share"),
        col("tbnp_thrashes"),
        col("thrash_x_tbnp"),
    );
    for o in ["1.25", "1.5"] {
        let mine: Vec<&Vec<&str>> = cells.iter().filter(|c| c[1] == o).collect();
        if mine.iter().all(|c| !c[share].is_empty()) {
            let sum: f64 = mine.iter().map(|c| c[share].parse::<f64>().unwrap()).sum();
            assert!((sum - 1.0).abs() < 1e-5, "{o}: {sum}");
        }
        for c in &mine {
            let thrashes = c[thrash].parse::<f64>().unwrap() > 10.0;
            assert_eq!(c[flag], thrashes.to_string(), "{c:?}");
        }
    }
    let json = std::fs::read_to_string(dir.join("forest.json")).unwrap();
    assert!(json.starts_with("{\n  \"seed\": 1,"), "{json}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn the_paper_table_sets_specforest_on_dl_beside_the_papers_151() {
    let r = sweep_forest(&options(&["ls", "alexnet"], &[1.5])).unwrap();
    let paper = paper_table(&r.summaries, &r.rows);
    // No 125 % run, no 125 % figure.
    assert!(!paper.contains("125 %"), "{paper}");
    let dl = r.rows.iter().find(|x| x.workload == "alexnet").unwrap();
    let line = paper
        .lines()
        .find(|l| l.starts_with("specforest over tbnp on 1 DL networks"))
        .unwrap_or_else(|| panic!("{paper}"));
    assert!(line.contains("1.51x"), "{line}");
    // One network: the geometric mean is its own speed-up.
    assert!(
        line.ends_with(&format!("{:.3}x", dl.specforest_speedup)),
        "{line} vs {}",
        dl.specforest_speedup
    );
    // Without a DL network, no DL figure.
    let ls = sweep_forest(&options(&["ls"], &[1.5])).unwrap();
    assert!(!paper_table(&ls.summaries, &ls.rows).contains("DL networks"));
}
