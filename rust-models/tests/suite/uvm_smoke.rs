//! Prints one UVM run per Forest-suite workload and policy on the Forest study's GPU
//! (`configs/gpu-turing.toml`, 4 KB pages), and a Forest sweep (manual look: `--ignored`).

use mcmvm_models::gpu::GpuConfig;
use mcmvm_models::uvm::{UvmConfig, UvmGpu, UvmPolicy};
use std::path::Path;

fn scale() -> f64 {
    std::env::var("UVM_SCALE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0.05)
}

#[test]
#[ignore]
fn print_forest_suite_runs() {
    let scale = scale();
    let names = std::env::var("UVM_WL").unwrap_or_else(|_| "ls,hchi,hcli,lc,mixed".into());
    let (gpu, cfg) = (turing_gpu(), turing());
    for name in names.split(',') {
        let wl = mcmvm_models::workload::by_name(name, scale, 1).unwrap();
        let policies =
            std::env::var("UVM_POLICY").unwrap_or_else(|_| "tbnp,forest,specforest".into());
        for p in policies.split(',').map(|p| p.parse::<UvmPolicy>().unwrap()) {
            let m = gpu.run(wl.as_ref(), &cfg, p, scale, 1).unwrap();
            println!("{}", m.table());
            println!(
                "  speed {:.2} M warp mem-instr/s (wall {:.2}s, service {:.2}s)\n",
                m.instr_per_s / 1e6,
                m.wall_s,
                m.service_wall_s
            );
        }
    }
}

#[test]
#[ignore]
fn print_forest_sweep() {
    use mcmvm_models::uvm::{sweep_forest, SweepOptions};
    let mut opts = SweepOptions::new(turing(), turing_gpu());
    opts.scale = scale();
    if let Ok(o) = std::env::var("UVM_OVERSUB") {
        opts.oversubs = o.split(',').map(|x| x.parse().unwrap()).collect();
    }
    if let Ok(w) = std::env::var("UVM_WL") {
        opts.workloads = w.split(',').map(String::from).collect();
    }
    opts.out_dir = std::env::var("UVM_OUT").ok().map(Into::into);
    let r = sweep_forest(&opts).unwrap();
    print!("{}", r.table());
}

fn configs() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs")
}

/// The repository's UVM config.
fn turing() -> UvmConfig {
    UvmConfig::load(&configs().join("uvm-turing.toml"), &[]).expect("uvm-turing.toml loads")
}

/// The Forest study's GPU.
fn turing_gpu() -> UvmGpu {
    let gpu = GpuConfig::load(&configs().join("gpu-turing.toml")).expect("gpu-turing.toml loads");
    UvmGpu::new(gpu)
}
