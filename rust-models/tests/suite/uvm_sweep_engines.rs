//! `mcmvm sweep --suite forest` on its two engines at a tiny scale: on the GPU timing model
//! configured as the paper's GPU (`configs/gpu-turing.toml`) it produces the per-workload
//! table, the oversubscription curve, both ablations and the paper's figures, every output
//! naming the engine; the replay engine's outputs say it is the fast approximate mode.

use std::path::Path;

use mcmvm_models::gpu::GpuConfig;
use mcmvm_models::uvm::sweep::{paper_table, POLICIES};
use mcmvm_models::uvm::sweep_engine::{check_same_gpu, REPLAY_LABEL, TIMING_LABEL};
use mcmvm_models::uvm::{sweep_forest, SweepEngine, SweepOptions, UvmConfig};

fn configs() -> (GpuConfig, UvmConfig) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs");
    let gpu = GpuConfig::load(&root.join("gpu-turing.toml")).expect("gpu-turing.toml loads");
    let ucfg = UvmConfig::load(&root.join("uvm-turing.toml"), &[]).expect("uvm-turing loads");
    (gpu, ucfg)
}

fn options(engine: SweepEngine, workloads: &[&str], oversubs: &[f64]) -> SweepOptions {
    let mut o = SweepOptions::new(configs().1);
    o.engine = engine;
    o.workloads = workloads.iter().map(|w| w.to_string()).collect();
    o.oversubs = oversubs.to_vec();
    o.scale = 0.02;
    o
}

#[test]
fn the_papers_gpu_is_one_turing_chiplet_and_both_configs_agree() {
    let (gpu, ucfg) = configs();
    assert_eq!(gpu.gpu.chiplets, 1);
    assert_eq!(gpu.gpu.sms_per_chiplet, 68);
    assert_eq!(ucfg.memory.page_kb, 4);
    assert_eq!(ucfg.fault.far_fault_latency_us, 45.0);
    assert_eq!(ucfg.host_link.bandwidth_gb_s, 15.75);
    assert_eq!(check_same_gpu(&gpu, &ucfg), Ok(()));
    let mut other = gpu.clone();
    other.gpu.sms_per_chiplet = 64;
    let e = check_same_gpu(&other, &ucfg).unwrap_err();
    assert!(e.contains("gpu.sms"), "{e}");
}

#[test]
fn the_timing_model_sweep_has_the_table_the_curve_and_both_ablations() {
    let dir = std::env::temp_dir().join(format!("mcmvm-sweep-timing-{}", std::process::id()));
    let mut opts = options(
        SweepEngine::timing(configs().0),
        &["ls", "lc"],
        &[1.25, 1.5],
    );
    opts.out_dir = Some(dir.clone());
    let r = sweep_forest(&opts).expect("the sweep runs");
    assert_eq!(r.engine, TIMING_LABEL);
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
    // The runs are the timing model's: its cycles differ from the replay engine's.
    let replay = sweep_forest(&options(SweepEngine::Replay, &["ls"], &[1.5])).unwrap();
    let timed = r
        .rows
        .iter()
        .find(|x| x.workload == "ls" && x.oversubscription == 1.5);
    assert_ne!(
        timed.map(|x| x.tbnp_cycles),
        Some(replay.rows[0].tbnp_cycles)
    );
    assert_eq!(r.summaries.len(), 2);
    let table = r.table();
    assert!(table.starts_with("engine: GPU timing model\n"), "{table}");
    assert!(
        table.contains("geomean at oversub 1.25 (GPU timing model)"),
        "{table}"
    );
    assert!(
        table.contains("forest over tbnp at 150 % (geomean)"),
        "{table}"
    );
    assert!(
        table.contains("specforest over tbnp at 125 % (geomean)"),
        "{table}"
    );
    assert!(table.contains("223 -> 10"), "{table}");
    let csv = std::fs::read_to_string(dir.join("forest.csv")).unwrap();
    let mut lines = csv.lines();
    assert!(lines.next().unwrap().ends_with(",classes,engine"));
    assert!(lines.all(|l| l.ends_with(",GPU timing model")), "{csv}");
    let json = std::fs::read_to_string(dir.join("forest.json")).unwrap();
    assert!(
        json.starts_with("{\n  \"engine\": \"GPU timing model\""),
        "{json}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn the_replay_engine_says_it_is_approximate_everywhere() {
    let r = sweep_forest(&options(SweepEngine::Replay, &["ls"], &[1.5])).unwrap();
    assert_eq!(r.engine, REPLAY_LABEL);
    let t = r.tables();
    assert!(t
        .table()
        .starts_with("engine: replay engine (fast approximate)\n"));
    assert!(t
        .csv()
        .lines()
        .skip(1)
        .all(|l| l.ends_with(",replay engine (fast approximate)")));
    let paper = paper_table(&r.engine, &r.summaries, &r.rows);
    assert!(paper.starts_with("the paper's figures beside ours (replay engine (fast approximate))"));
    // No 125 % run, no 125 % figure; no DL network ran, so no DL figure.
    assert!(!paper.contains("125 %"), "{paper}");
    assert!(!paper.contains("DL networks"), "{paper}");
}

#[test]
fn the_paper_table_sets_specforest_on_dl_beside_the_papers_151() {
    let r = sweep_forest(&options(SweepEngine::Replay, &["ls", "alexnet"], &[1.5])).unwrap();
    let paper = paper_table(&r.engine, &r.summaries, &r.rows);
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
}
