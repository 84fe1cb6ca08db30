//! MMA's cost (CLAP §4.4 measured ~0.4 µs per incremental update, < 1 µs to score):
//! - `mma/incremental_update`: one 64 KB page recorded in its 2 MB block's tree;
//! - `mma/score_and_select`: scoring a full block's tree and selecting its level;
//! - `driver/clap_fault_64k`: a whole CLAP page fault (placement, page-table write, tree);
//! - `driver/translate`: one translation of a mapped VA (the GPU model's hot path).

use criterion::{black_box, criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use mcmvm_models::addr::{ChipletId, Va, PAGE_64K};
use mcmvm_models::driver::mma::{LocalityTree, BLOCK_LEAVES};
use mcmvm_models::driver::{DriverConfig, MemoryManager, NoRemoteTrackers, PolicyKind};
use mcmvm_models::workload::Allocation;

fn mma(c: &mut Criterion) {
    let mut g = c.benchmark_group("mma");
    g.throughput(Throughput::Elements(BLOCK_LEAVES as u64));
    g.bench_function("incremental_update", |b| {
        b.iter_batched_ref(
            || LocalityTree::new(BLOCK_LEAVES, 4),
            |t| {
                for leaf in 0..BLOCK_LEAVES {
                    t.record(black_box(leaf), ChipletId((leaf / 4 % 4) as u8));
                }
            },
            BatchSize::SmallInput,
        )
    });
    g.finish();

    let mut full = LocalityTree::new(BLOCK_LEAVES, 4);
    for leaf in 0..BLOCK_LEAVES {
        full.record(leaf, ChipletId((leaf / 4 % 4) as u8));
    }
    c.bench_function("mma/score_and_select", |b| {
        b.iter(|| black_box(&full).select_level(black_box(0.25)))
    });
}

/// One 64 MB allocation, and a driver with room for it on every chiplet.
fn one_allocation() -> ([Allocation; 1], DriverConfig) {
    let allocs = [Allocation {
        name: "a".into(),
        bytes: 64 << 20,
        stride_hint: None,
        preferred_gpu: false,
        similarity_group: None,
    }];
    let cfg = DriverConfig {
        frames_per_chiplet: 64 * 512,
        ..DriverConfig::default()
    };
    (allocs, cfg)
}

fn driver_fault(c: &mut Criterion) {
    let (allocs, cfg) = one_allocation();
    let mut g = c.benchmark_group("driver");
    g.throughput(Throughput::Elements(BLOCK_LEAVES as u64));
    g.bench_function("clap_fault_64k", |b| {
        b.iter_batched_ref(
            || MemoryManager::new(cfg.clone(), PolicyKind::Clap, &allocs).expect("valid config"),
            |mm| {
                let base = mm.alloc_base(0).0;
                for page in 0..BLOCK_LEAVES as u64 {
                    let chiplet = ChipletId((page / 8 % 4) as u8);
                    black_box(
                        mm.handle_fault(Va(base + page * PAGE_64K), chiplet, &mut NoRemoteTrackers)
                            .ok(),
                    );
                }
            },
            BatchSize::SmallInput,
        )
    });
    g.finish();
}

fn driver_translate(c: &mut Criterion) {
    let (allocs, cfg) = one_allocation();
    // 64 MB mapped with 64 KB pages from four chiplets, translated at scattered VAs.
    let mut mm = MemoryManager::new(cfg, PolicyKind::S64k, &allocs).expect("valid config");
    let base = mm.alloc_base(0).0;
    for page in 0..1024u64 {
        let chiplet = ChipletId((page / 8 % 4) as u8);
        mm.handle_fault(Va(base + page * PAGE_64K), chiplet, &mut NoRemoteTrackers)
            .expect("memory is plentiful");
    }
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    c.bench_function("driver/translate", |b| {
        b.iter(|| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            black_box(mm.translate(Va(base + (x >> 38))))
        })
    });
}

criterion_group!(benches, mma, driver_fault, driver_translate);
criterion_main!(benches);
