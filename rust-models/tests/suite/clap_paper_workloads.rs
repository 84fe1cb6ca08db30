//! The six CLAP workloads we chose for the paper's unnamed benchmarks (`pagerank`, `dc`,
//! `kmeans`, `hotspot`, `lbm`, `transpose`) and `--scale paper`: exact instruction counts
//! from the kernels' loop bounds, conservation laws of each kernel's accesses, and every
//! paper-scale footprint inside the paper's range. (Determinism, in-bounds accesses and
//! `instr_count` = walked streams hold for every catalogue entry in
//! `workload_generators.rs`.)

use mcmvm_models::workload::{
    by_name, clap_suite, count_by_walking, footprint_bytes, paper_factor, Lanes, Scale, Workload,
    PAPER_SCALES,
};
use std::collections::HashMap;

const NEW: [&str; 6] = ["pagerank", "dc", "kmeans", "hotspot", "lbm", "transpose"];
const MIB: u64 = 1 << 20;

/// Every (byte offset → times touched) of allocation `alloc` by kernel `k`, writes or reads.
fn touches(w: &dyn Workload, k: usize, alloc: u16, write: bool) -> HashMap<u64, u32> {
    let mut m = HashMap::new();
    let kern = &w.kernels()[k];
    for tb in 0..kern.grid {
        for warp in 0..kern.warps_per_tb {
            for i in w.warp_stream(k, tb, warp) {
                if i.alloc == alloc && i.write == write {
                    for l in 0..i.lanes.active() {
                        *m.entry(i.lanes.lane_offset(l)).or_insert(0) += 1;
                    }
                }
            }
        }
    }
    m
}

/// Each element of `elems` elements of `elem` bytes is touched exactly once.
fn once_each(m: &HashMap<u64, u32>, elems: u64, elem: u64, what: &str) {
    assert_eq!(m.len() as u64, elems, "{what}: elements touched");
    assert!(m.values().all(|&c| c == 1), "{what}: some element twice");
    assert!(
        m.keys().all(|&o| o % elem == 0 && o / elem < elems),
        "{what}"
    );
}

#[test]
fn the_suite_has_eighteen_workloads_and_the_new_ones_are_in_it() {
    assert_eq!(clap_suite().len(), 18);
    for n in NEW {
        assert!(clap_suite().contains(&n), "{n}");
    }
}

#[test]
fn regular_kernels_count_exactly_their_loop_bounds() {
    // kmeans: 2048 points; invert_mapping 34 loads + 34 stores per warp, each of two
    // kmeansPoint launches 5 x 34 loads + 1 store.
    let w = by_name("kmeans", 2048.0 / (1 << 18) as f64, 1).unwrap();
    assert_eq!(w.instr_count(), 64 * (68 + 2 * 171));
    // transpose: a 64 x 4096 input is 2 x 128 tiles; 8 warps, 4 loads + 4 stores, 4 launches.
    let w = by_name("transpose", 64.0 / 4096.0, 1).unwrap();
    assert_eq!(w.instr_count(), 256 * 8 * 8 * 4);
    // lbm: 3 planes of 120 x 120 cells; 4 warps (the last of 24 lanes) of 20 loads and 19
    // stores per row, 4 steps.
    let w = by_name("lbm", 3.0 / 32.0, 1).unwrap();
    assert_eq!(w.instr_count(), 120 * 3 * 4 * 39 * 4);
    // hotspot: 16 rows x 2048 columns in 12 x 12 inner blocks: 171 x 2 blocks. Block row
    // 0 starts at y = -2: warp 0 (y -2, -1) is outside, warps 1-7 load twice, warps 1-6
    // hold inner rows and store: 20. Block row 1 starts at y = 10: warps 0-2 load (y up
    // to 15), warps 1-2 store: 8. Four launches.
    let w = by_name("hotspot", 16.0 / 2048.0, 1).unwrap();
    assert_eq!(w.instr_count(), 171 * (20 + 8) * 4);
    for name in NEW {
        let w = by_name(name, 0.01, 3).unwrap();
        assert_eq!(w.instr_count(), count_by_walking(w.as_ref()), "{name}");
    }
}

#[test]
fn kmeans_transposes_every_feature_once_then_reads_it_once_per_cluster() {
    let w = by_name("kmeans", 4096.0 / (1 << 18) as f64, 1).unwrap();
    let elems = 4096 * 34;
    once_each(&touches(w.as_ref(), 0, 0, false), elems, 4, "feature read");
    once_each(
        &touches(w.as_ref(), 0, 1, true),
        elems,
        4,
        "feature_flipped written",
    );
    let reads = touches(w.as_ref(), 1, 1, false);
    assert_eq!(reads.len() as u64, elems);
    assert!(reads.values().all(|&c| c == 5), "once per cluster");
    once_each(&touches(w.as_ref(), 1, 2, true), 4096, 4, "membership");
}

#[test]
fn transpose_reads_and_writes_every_element_once_and_blocks_write_their_tile() {
    let w = by_name("transpose", 96.0 / 4096.0, 1).unwrap();
    let elems = 96 * 4096;
    once_each(&touches(w.as_ref(), 0, 0, false), elems, 4, "idata");
    once_each(&touches(w.as_ref(), 0, 1, true), elems, 4, "odata");
    // Block (bx, by) = (5, 2) writes rows 160..192 of the output (its bx), columns 64..96.
    let tb = 2 * 128 + 5;
    for warp in 0..8 {
        for i in w.warp_stream(0, tb, warp).filter(|i| i.write) {
            let (lo, hi) = i.lanes.extent().unwrap();
            let (row, col) = (lo / 4 / 96, lo / 4 % 96);
            assert!(
                (160..192).contains(&row) && col == 64 && hi - lo == 128,
                "{lo}"
            );
        }
    }
}

#[test]
fn hotspot_stores_each_cell_once_per_launch_and_loads_its_halo() {
    let w = by_name("hotspot", 40.0 / 2048.0, 1).unwrap();
    let cells = 40 * 2048;
    once_each(&touches(w.as_ref(), 0, 2, true), cells, 4, "temp_b written");
    once_each(&touches(w.as_ref(), 1, 1, true), cells, 4, "temp_a written");
    // Blocks overlap by the pyramid's halo: an inner block loads 16 x 16 cells and
    // stores its 12 x 12.
    let loads = touches(w.as_ref(), 0, 1, false);
    assert_eq!(loads.values().map(|&c| c as u64).sum::<u64>(), {
        // Per axis, cells are loaded once per block covering them with its halo.
        let per_axis = |n: i64| -> u64 {
            let blocks = (n + 11) / 12;
            (0..blocks)
                .map(|b| ((12 * b + 13).min(n - 1) - (12 * b - 2).max(0) + 1) as u64)
                .sum()
        };
        per_axis(2048) * per_axis(40)
    });
    let i = w.warp_stream(0, 171 + 5, 3).next().unwrap();
    assert!(matches!(i.lanes, Lanes::Rows { rows: 2, .. }) && i.lanes.active() == 32);
}

#[test]
fn lbm_pushes_every_distribution_to_one_cell_of_its_slab() {
    let w = by_name("lbm", 2.0 / 32.0, 1).unwrap();
    let slab = 120 * 120 * 6 + 16;
    let writes = touches(w.as_ref(), 0, 1, true);
    assert_eq!(
        writes.len(),
        19 * 120 * 120 * 2,
        "one write per (cell, direction)"
    );
    assert!(writes.values().all(|&c| c == 1), "no cell written twice");
    let mut per_slab = [0u64; 19];
    for &o in writes.keys() {
        per_slab[(o / 4 / slab) as usize] += 1;
    }
    assert!(per_slab.iter().all(|&n| n == 120 * 120 * 2), "{per_slab:?}");
    // The centre distribution stays in its cell: C of cell (x, y, z) at plane z + 2.
    let c: Vec<u64> = w
        .warp_stream(0, 121, 1)
        .filter(|i| i.write)
        .map(|i| i.lanes.lane_offset(0) / 4)
        .collect();
    assert_eq!(c[0], 32 + 120 + (1 + 2) * 120 * 120);
    let reads = touches(w.as_ref(), 0, 0, false);
    assert_eq!(
        reads.len(),
        20 * 120 * 120 * 2,
        "20 entries of every cell read"
    );
}

#[test]
fn graph_scatters_touch_every_edge_once_per_pass() {
    for (name, kernel, cols, scatter, elem) in
        [("pagerank", 1usize, 1u16, 3u16, 4u64), ("dc", 1, 1, 2, 8)]
    {
        let w = by_name(name, 0.02, 5).unwrap();
        let edges = w.allocations()[cols as usize].bytes / elem;
        once_each(&touches(w.as_ref(), kernel, cols, false), edges, elem, name);
        let hits: u64 = touches(w.as_ref(), kernel, scatter, true)
            .values()
            .map(|&c| c as u64)
            .sum();
        assert_eq!(hits, edges, "{name}: one atomic per edge");
    }
}

#[test]
fn paper_scale_footprints_lie_in_the_papers_range() {
    for p in PAPER_SCALES {
        assert!(clap_suite().contains(&p.name), "{}", p.name);
    }
    for &name in clap_suite() {
        assert_eq!(Scale::Paper.factor(name), paper_factor(name));
        let entry = PAPER_SCALES.iter().find(|p| p.name == name);
        let entry = entry.unwrap_or_else(|| panic!("{name}: no paper scale"));
        let w = by_name(name, entry.factor, 1).unwrap();
        let bytes = footprint_bytes(w.as_ref());
        println!(
            "{name:14} {:>6} MiB (target {} MiB)",
            bytes / MIB,
            entry.target_bytes / MIB
        );
        assert!(
            (60 * MIB..=4096 * MIB).contains(&bytes),
            "{name}: {bytes} B"
        );
        let off = bytes.abs_diff(entry.target_bytes) as f64 / entry.target_bytes as f64;
        assert!(
            off < 0.1,
            "{name}: {bytes} B against the target {}",
            entry.target_bytes
        );
    }
    // The two inputs the paper sizes: PAF's largest structure 1.86 GB, BLK 310 MB in all.
    let paf = by_name("paf", paper_factor("paf"), 1).unwrap();
    let wall = paf.allocations()[0].bytes as f64 / (1u64 << 30) as f64;
    assert!((wall - 1.86).abs() < 0.005, "paf wall {wall} GiB");
    let blk = footprint_bytes(by_name("blk", paper_factor("blk"), 1).unwrap().as_ref());
    assert!(blk.abs_diff(310 * MIB) < MIB, "blk {blk} B");
}
