//! The fifteen general-purpose workloads of the Forest study (UVMBench's PolyBench-GPU and
//! Rodinia kernels, Tango's RNNs): instruction counts from their loop bounds, footprints,
//! accesses inside their allocations, the kernel objects they declare, the thread-to-data
//! mappings that make their patterns, and runs on a small Turing GPU under UVM.

use crate::uvm_common::run_small;
use mcmvm_models::uvm::{UvmConfig, UvmPolicy};
use mcmvm_models::workload::{by_name, footprint_bytes, forest_suite, Lanes, Workload};
use std::collections::BTreeSet;
use std::path::Path;

const FIFTEEN: [&str; 15] = [
    "uvm-2dconv",
    "uvm-3dconv",
    "uvm-atax",
    "uvm-bicg",
    "uvm-mvt",
    "uvm-gesummv",
    "uvm-fdtd2d",
    "uvm-backprop",
    "uvm-bfs",
    "uvm-hotspot",
    "uvm-kmeans",
    "uvm-nw",
    "uvm-srad",
    "tango-gru",
    "tango-lstm",
];

fn build(name: &str, scale: f64) -> Box<dyn Workload> {
    by_name(name, scale, 1).unwrap_or_else(|e| panic!("{name}: {e}"))
}

#[test]
fn all_fifteen_are_in_the_forest_suite_and_named_after_their_benchmark() {
    for name in FIFTEEN {
        assert!(forest_suite().contains(&name), "{name}");
        let w = build(name, 0.01);
        assert_eq!(w.name(), name);
        let suite = if name.starts_with("tango") {
            "Tango"
        } else {
            "UVMBench"
        };
        assert!(
            w.description().contains(suite),
            "{name}: {}",
            w.description()
        );
    }
    // No clash with the CLAP suite's names.
    for clap in mcmvm_models::workload::clap_suite() {
        assert!(!FIFTEEN.contains(clap));
    }
}

/// Instruction counts at scales where the dimensions are round, from the kernels' loops.
#[test]
fn instruction_counts_follow_the_loop_bounds() {
    let n = 1024u64; // 2D problems at scale 1/16 (sqrt 1/4 of 4096), 1D of 2^20 likewise
    let cases: Vec<(&str, f64, u64)> = vec![
        // interior rows x warps per row x (9 loads + 1 store)
        ("uvm-2dconv", 1.0 / 16.0, (n - 2) * (n / 32) * 10),
        // 256^3 at scale 1/8 -> 128^3: planes x rows x warps x (11 loads + 1 store)
        ("uvm-3dconv", 1.0 / 8.0, 126 * 126 * 4 * 12),
        // two kernels: N/32 warps x N steps x 2 terms + 1 store
        ("uvm-atax", 1.0 / 16.0, 2 * (n / 32) * (2 * n + 1)),
        ("uvm-bicg", 1.0 / 16.0, 2 * (n / 32) * (2 * n + 1)),
        // MVT reads x1 / x2 before its loop
        ("uvm-mvt", 1.0 / 16.0, 2 * (n / 32) * (2 * n + 2)),
        // one kernel, three terms per step, two stores
        ("uvm-gesummv", 1.0 / 16.0, (n / 32) * (3 * n + 2)),
        // 2048 at scale 1/4 -> 1024; 3 steps of (row 0: 2, other rows 4) + 4 + 6
        (
            "uvm-fdtd2d",
            0.25,
            3 * ((n / 32) * (2 + 4 * (n - 1)) + (n / 32) * n * 10),
        ),
        // 2^20 inputs at 1/16 -> 65536: blocks x 8 warps x (4 + 6), plus the bias row's 4
        ("uvm-backprop", 1.0 / 16.0, 4096 * 8 * 10 + 4),
        // 4096 at 1/16 -> 1024: 64 x 64 tiles x (1 + 16 + 1 + 1 + 16)
        ("uvm-nw", 1.0 / 16.0, 64 * 64 * 35),
        // 2048 at 1/4 -> 1024: tiles x 8 warps x 2 iterations x (10 + 9)
        ("uvm-srad", 0.25, 64 * 64 * 8 * 2 * 19),
        // 2^19 points at 1/16 -> 32768: warps x (2 x 34 + 2 x (5 x 34 + 1))
        ("uvm-kmeans", 1.0 / 16.0, 1024 * (68 + 2 * 171)),
        // 2048 at 1/4 -> 1024: 4 steps x 32 warps x (2N x (1 + gates) + tail)
        ("tango-gru", 0.25, 4 * 32 * (2 * n * 4 + 1)),
        ("tango-lstm", 0.25, 4 * 32 * (2 * n * 5 + 3)),
    ];
    for (name, scale, expect) in cases {
        let w = build(name, scale);
        assert_eq!(w.instr_count(), expect, "{name} at scale {scale}");
    }
}

#[test]
fn hotspot_counts_its_pyramid_lanes() {
    // 4096 at 1/64 -> 512: each block computes 12 x 12 cells (16 - 2 x pyramid height 2),
    // so 43 x 43 blocks, each loading its 16 x 16 tile with a 2-cell halo.
    let w = build("uvm-hotspot", 1.0 / 64.0);
    let k = &w.kernels()[0];
    assert_eq!((k.grid, k.warps_per_tb, w.kernels().len()), (43 * 43, 8, 2));
    assert_eq!(
        w.instr_count(),
        mcmvm_models::workload::count_by_walking(w.as_ref())
    );
    // Warp 0 of block 0 holds tile rows -2 and -1, outside the grid: it issues nothing.
    assert_eq!(w.warp_stream(0, 0, 0).count(), 0);
    // Warp 1 of block 0 (rows 0 and 1): loads of 14 in-grid columns per row, and the
    // stores of computed cells (ty 2, 3 are in [2, 13]) — ty 2 is row 0, ty 3 row 1.
    let v: Vec<_> = w.warp_stream(0, 0, 1).collect();
    assert_eq!(v.len(), 3);
    assert_eq!(v[0].lanes.active(), 28);
    assert_eq!((v[2].lanes.active(), v[2].write), (24, true));
}

#[test]
fn footprints_at_the_default_scale() {
    const M: u64 = 1 << 20;
    let cases: [(&str, u64); 14] = [
        ("uvm-2dconv", 2 * 64 * M),
        ("uvm-3dconv", 2 * 64 * M),
        ("uvm-atax", 64 * M + 3 * 4096 * 4),
        ("uvm-bicg", 64 * M + 4 * 4096 * 4),
        ("uvm-mvt", 64 * M + 4 * 4096 * 4),
        ("uvm-gesummv", 2 * 64 * M + 3 * 4096 * 4),
        ("uvm-fdtd2d", 2 * 2048 * 2049 * 4 + 2048 * 2048 * 4 + 3 * 4),
        (
            "uvm-backprop",
            // input, output_hidden, weights, partial sums, delta, previous weights
            (M + 1) * 4 + 17 * 4 + (M + 1) * 17 * 4 + M * 4 + 17 * 4 + (M + 1) * 17 * 4,
        ),
        ("uvm-hotspot", 3 * 64 * M),
        ("uvm-kmeans", 2 * (M / 2) * 34 * 4 + (M / 2) * 4),
        ("uvm-nw", 2 * 4097 * 4097 * 4),
        ("uvm-srad", 6 * 16 * M),
        ("tango-gru", 6 * 16 * M + 4 * 2048 * 4 + 5 * 2048 * 4),
        (
            "tango-lstm",
            8 * 16 * M + 4 * 2048 * 4 + 5 * 2048 * 4 + 2048 * 4,
        ),
    ];
    for (name, bytes) in cases {
        let w = build(name, 1.0);
        assert_eq!(footprint_bytes(w.as_ref()), bytes, "{name}");
        // The Forest sweep stays quick: tens to a few hundred MB.
        assert!(
            (40 * M..=300 * M).contains(&bytes),
            "{name}: {} MB",
            bytes >> 20
        );
    }
    // uvm-bfs is the bfs generator's graph.
    let (a, b) = (build("uvm-bfs", 1.0), build("bfs", 1.0));
    assert_eq!(a.allocations(), b.allocations());
    assert_eq!(a.instr_count(), b.instr_count());
}

/// Every kernel declares its objects; every access of a kernel is to a declared object and
/// inside it; declared lists hold no duplicates.
#[test]
fn kernels_declare_the_objects_they_touch_and_accesses_stay_inside() {
    for name in FIFTEEN {
        let w = build(name, 0.01);
        let allocs = w.allocations();
        for (k, kern) in w.kernels().iter().enumerate() {
            let declared = w
                .kernel_objects(k)
                .unwrap_or_else(|| panic!("{name}: kernel {k} declares no objects"));
            let set: BTreeSet<u16> = declared.iter().copied().collect();
            assert_eq!(set.len(), declared.len(), "{name} k{k}: duplicates");
            assert!(set.iter().all(|&a| (a as usize) < allocs.len()));
            let mut touched = BTreeSet::new();
            for tb in 0..kern.grid {
                for warp in 0..kern.warps_per_tb {
                    for i in w.warp_stream(k, tb, warp) {
                        let (lo, hi) = i.lanes.extent().expect("active lanes");
                        let a = &allocs[i.alloc as usize];
                        assert!(
                            hi <= a.bytes,
                            "{name} k{k} tb{tb} w{warp}: [{lo},{hi}) > {}",
                            a.bytes
                        );
                        assert!((1..=32).contains(&i.lanes.active()));
                        touched.insert(i.alloc);
                    }
                }
            }
            assert!(
                touched.is_subset(&set),
                "{name} k{k} ({}): touched {touched:?}, declared {set:?}",
                kern.name
            );
        }
    }
}

#[test]
fn thread_to_data_mappings_are_the_kernels() {
    // ATAX kernel 1: thread i walks row i, so a warp's lanes are a row (N floats) apart and
    // step j reads column j; kernel 2: thread j walks column j, lanes coalesced.
    let w = build("uvm-atax", 1.0 / 16.0);
    let n = 1024u64;
    let s: Vec<_> = w.warp_stream(0, 1, 2).take(4).collect();
    let t0 = (8 + 2) * 32;
    match &s[2].lanes {
        Lanes::Strided {
            offset,
            stride,
            lanes,
            ..
        } => {
            assert_eq!((*offset, *stride, *lanes), ((t0 * n + 1) * 4, n * 4, 32));
        }
        l => panic!("ATAX kernel 1 reads A by rows: {l:?}"),
    }
    assert_eq!(
        (s[1].alloc, s[1].lanes.active(), s[1].lanes.lane_offset(0)),
        (1, 1, 0)
    );
    let s2: Vec<_> = w.warp_stream(1, 1, 2).take(4).collect();
    assert_eq!(s2[2].lanes.lane_offset(0), (n + t0) * 4);
    assert_eq!(
        s2[2].lanes.lane_offset(31) - s2[2].lanes.lane_offset(0),
        31 * 4
    );

    // NW: block_width launches of 1..bw blocks, then bw-1..1; one 16-lane warp per block.
    let w = build("uvm-nw", 1.0 / 16.0);
    let grids: Vec<u32> = w.kernels().iter().map(|k| k.grid).collect();
    assert_eq!(grids.len(), 127);
    assert_eq!(&grids[..3], &[1, 2, 3]);
    assert_eq!(grids[63], 64);
    assert_eq!(&grids[124..], &[3, 2, 1]);
    // The west column of block (0, 0) is read with lanes one row (cols = 1025 ints) apart.
    let west = w.warp_stream(0, 0, 0).nth(17).unwrap();
    assert_eq!(
        west.lanes.lane_offset(1) - west.lanes.lane_offset(0),
        1025 * 4
    );

    // kmeans: a kmeansPoint warp reads its 32 points of each of the 34 feature rows, five
    // times (once per cluster), then stores membership.
    let w = build("uvm-kmeans", 1.0 / 16.0);
    let points = 32768u64;
    let v: Vec<_> = w.warp_stream(1, 0, 0).collect();
    assert_eq!(v.len(), 171);
    let rows: BTreeSet<u64> = v[..170]
        .iter()
        .map(|i| i.lanes.lane_offset(0) / (points * 4))
        .collect();
    assert_eq!(rows.len(), 34);
    assert!(v[170].write && v[170].alloc == 2);

    // Tango GRU: each step streams all six gate matrices once, row j of each in turn.
    let w = build("tango-gru", 0.25);
    let mut per_matrix = [0u64; 6];
    for i in w.warp_stream(2, 0, 0) {
        if (i.alloc as usize) < 6 {
            per_matrix[i.alloc as usize] += 1;
        }
    }
    assert_eq!(per_matrix, [1024; 6]);
}

fn turing() -> UvmConfig {
    let path = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../configs/uvm-turing.toml"
    ));
    UvmConfig::load(path, &["memory.oversubscription=1.5".into()]).expect("config loads")
}

/// Each runs to completion on a small Turing GPU under TBNp and Forest at 150 %
/// oversubscription, every access served, with the invariants checked.
#[test]
fn each_runs_under_tbnp_and_forest_at_a_tiny_scale() {
    let cfg = turing();
    for name in FIFTEEN {
        let w = build(name, 0.01);
        for policy in [UvmPolicy::Tbnp, UvmPolicy::Forest] {
            let r = run_small(w.as_ref(), &cfg, policy, 0.01)
                .unwrap_or_else(|e| panic!("{name} / {policy:?}: {e}"));
            assert_eq!(r.protocol.accesses_not_resident, 0, "{name} / {policy:?}");
            let m = r.uvm;
            assert_eq!(m.warp_mem_instrs, w.instr_count(), "{name} / {policy:?}");
            assert_eq!(m.out_of_range_accesses, 0, "{name}");
            assert!(m.cycles > 0 && m.far_faults > 0, "{name} / {policy:?}");
            assert!(
                m.capacity_pages < m.footprint_pages,
                "{name}: oversubscribed"
            );
        }
    }
}
