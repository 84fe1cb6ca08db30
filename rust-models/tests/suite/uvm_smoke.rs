//! Prints one UVM run per Forest-suite workload and policy (manual look: `--ignored`).

use mcmvm_models::uvm::{run_workload, UvmConfig, UvmPolicy};
use std::path::Path;

#[test]
#[ignore]
fn print_forest_suite_runs() {
    let scale: f64 = std::env::var("UVM_SCALE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0.1);
    let names = std::env::var("UVM_WL").unwrap_or_else(|_| "ls,hchi,hcli,lc,mixed".into());
    let cfg = turing();
    for name in names.split(',') {
        let wl = mcmvm_models::workload::by_name(name, scale, 1).unwrap();
        let policies =
            std::env::var("UVM_POLICY").unwrap_or_else(|_| "tbnp,forest,specforest".into());
        for p in policies.split(',').map(|p| p.parse::<UvmPolicy>().unwrap()) {
            let m = run_workload(wl.as_ref(), &cfg, p, false).unwrap();
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
    let scale: f64 = std::env::var("UVM_SCALE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0.1);
    let cfg = turing();
    let mut opts = SweepOptions::new(cfg);
    opts.scale = scale;
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

/// The repository's UVM config.
fn turing() -> UvmConfig {
    let path = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../configs/uvm-turing.toml"
    ));
    UvmConfig::load(path, &[]).expect("configs/uvm-turing.toml loads")
}
