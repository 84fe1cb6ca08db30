//! Throughput of the GPU timing model: warp memory instructions simulated per second,
//! single-threaded, on bfs and a GEMM at the default scale (the target is >= 5 M/s).
//! Peak memory is measured on the CLI instead (see the report), since criterion cannot.
//! `uvm_on_gpu`: the UVM driver as the memory service of the 4-chiplet GPU model
//! (`--uvm tbnp`, and `forest` on bfs), timed as
//! `mcmvm run` prints it there: without the driver's work and the GPU side of fault
//! handling (faulting walks, shootdowns, replays that fault again).

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use mcmvm_models::driver::PolicyKind;
use mcmvm_models::gpu::{simulate, GpuConfig, RunSpec};
use mcmvm_models::uvm::{run_on_gpu, UvmConfig, UvmPolicy};
use std::path::Path;
use std::time::Duration;

fn throughput(c: &mut Criterion) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/mcm-4chiplet.toml");
    let cfg = GpuConfig::load(&path).expect("config loads");
    let mut g = c.benchmark_group("gpu_run");
    g.sample_size(10);
    for name in ["bfs", "gemm-resnet50"] {
        let w = mcmvm_models::workload::by_name(name, 1.0, 1).expect("workload builds");
        for policy in [PolicyKind::S64k, PolicyKind::Clap] {
            let spec = RunSpec {
                policy,
                scale: 1.0,
                seed: 1,
            };
            let instrs = simulate(&cfg, w.as_ref(), spec)
                .expect("runs")
                .warp_mem_instrs;
            g.throughput(Throughput::Elements(instrs));
            g.bench_function(format!("{name}/{policy}"), |b| {
                b.iter(|| simulate(&cfg, w.as_ref(), spec).expect("runs").cycles)
            });
        }
    }
    g.finish();
}

fn uvm_on_gpu_throughput(c: &mut Criterion) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs");
    let gpu_cfg = GpuConfig::load(&dir.join("mcm-4chiplet.toml")).expect("config loads");
    let ucfg = UvmConfig::load(&dir.join("uvm-turing.toml"), &[]).expect("config loads");
    let mut g = c.benchmark_group("uvm_on_gpu");
    g.sample_size(10);
    let spec = RunSpec {
        policy: PolicyKind::S64k,
        scale: 1.0,
        seed: 1,
    };
    let cases = [
        ("bfs", UvmPolicy::Tbnp),
        ("bfs", UvmPolicy::Forest),
        ("gemm-resnet50", UvmPolicy::Tbnp),
    ];
    for (name, policy) in cases {
        let w = mcmvm_models::workload::by_name(name, 1.0, 1).expect("workload builds");
        let run = || run_on_gpu(&gpu_cfg, &ucfg, w.as_ref(), spec, policy, false).expect("runs");
        g.throughput(Throughput::Elements(run().gpu.warp_mem_instrs));
        g.bench_function(format!("{name}/{}", policy.name()), |b| {
            b.iter_custom(|iters| {
                (0..iters)
                    .map(|_| {
                        let r = run();
                        Duration::from_secs_f64(r.gpu.warp_mem_instrs as f64 / r.gpu_speed)
                    })
                    .sum()
            })
        });
    }
    g.finish();
}

criterion_group!(benches, throughput, uvm_on_gpu_throughput);
criterion_main!(benches);
