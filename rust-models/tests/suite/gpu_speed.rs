//! Simulation speed and sweep-scale sanity checks on the built-in suite (slow: ignored by
//! default; `cargo test --release -- --ignored` runs them and prints the figures).

use crate::gpu_support;

use gpu_support::config4;
use mcmvm_models::driver::PolicyKind;
use mcmvm_models::gpu::{simulate, RunSpec};

#[test]
#[ignore]
fn print_speed_and_results_of_bfs_and_a_gemm() {
    let cfg = config4();
    for name in ["bfs", "gemm-resnet50"] {
        let w = mcmvm_models::workload::by_name(name, 1.0, 1).expect("builds");
        for p in [
            PolicyKind::S64k,
            PolicyKind::S2m,
            PolicyKind::Clap,
            PolicyKind::Ideal,
        ] {
            let spec = RunSpec {
                policy: p,
                scale: 1.0,
                seed: 1,
            };
            let r = simulate(&cfg, w.as_ref(), spec).expect("runs");
            println!(
                "{name:>14} {p:>5}: {:>10} cycles {:>9} instrs remote {:.3} l1tlb {:.3} l2tlb {:.3} walks {} speed {:.2} M/s",
                r.cycles, r.warp_mem_instrs, r.remote_ratio, r.l1_tlb_hit_rate, r.l2_tlb_hit_rate, r.walks, r.speed / 1e6
            );
        }
    }
}

/// One bfs run at `MCMVM_SCALE` (default 1): run under `/usr/bin/time -v` at scale 1 and 4
/// to compare peak memory.
#[test]
#[ignore]
fn one_bfs_run_at_the_scale_in_the_environment() {
    let scale: f64 = std::env::var("MCMVM_SCALE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1.0);
    let w = mcmvm_models::workload::by_name("bfs", scale, 1).expect("builds");
    let spec = RunSpec {
        policy: PolicyKind::Clap,
        scale,
        seed: 1,
    };
    let r = simulate(&config4(), w.as_ref(), spec).expect("runs");
    println!(
        "bfs clap scale {scale}: {} instrs, {} cycles",
        r.warp_mem_instrs, r.cycles
    );
}
