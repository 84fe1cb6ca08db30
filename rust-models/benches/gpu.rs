//! Throughput of the GPU timing model: warp memory instructions simulated per second,
//! single-threaded, on bfs and a GEMM at the default scale (the target is >= 5 M/s).
//! Peak memory is measured on the CLI instead (see the report), since criterion cannot.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use mcmvm_models::driver::PolicyKind;
use mcmvm_models::gpu::{simulate, GpuConfig, RunSpec};
use std::path::Path;

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

criterion_group!(benches, throughput);
criterion_main!(benches);
