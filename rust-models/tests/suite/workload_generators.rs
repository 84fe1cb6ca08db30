//! Properties of the built-in workload generators: determinism, exact instruction counts,
//! bounds, laziness, and the sharing / ownership patterns the CLAP study depends on.

use mcmvm_models::workload::{by_name, catalog, count_by_walking, Lanes, Workload};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::collections::HashSet;

/// Counts live heap bytes and their peak, so a test can see whether generating a stream
/// holds memory proportional to its length. The counts are per thread: the test harness
/// runs tests in parallel, and a global count saw other tests' frees (CI once read a
/// negative difference as 2^64 - 261,243 bytes).
struct Counting;

thread_local! {
    // `const` initialisers with no destructor: touching them never allocates, so the
    // allocator may use them.
    static LIVE: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
}

fn live() -> isize {
    LIVE.with(Cell::get)
}

fn peak() -> isize {
    PEAK.with(Cell::get)
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        // `try_with`: a thread being torn down has no locals left; its allocations go
        // uncounted rather than aborting.
        let _ = LIVE.try_with(|live| {
            let now = live.get() + l.size() as isize;
            live.set(now);
            let _ = PEAK.try_with(|peak| peak.set(peak.get().max(now)));
        });
        System.alloc(l)
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        let _ = LIVE.try_with(|live| live.set(live.get() - l.size() as isize));
        System.dealloc(p, l)
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

const SMALL: f64 = 0.01;

fn small(name: &str, seed: u64) -> Box<dyn Workload> {
    by_name(name, SMALL, seed).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// A sample of warps spread over every kernel: first, middle and last of each grid.
fn sample_warps(w: &dyn Workload) -> Vec<(usize, u32, u32)> {
    let mut v = Vec::new();
    for (k, kern) in w.kernels().iter().enumerate() {
        for tb in [0, kern.grid / 2, kern.grid - 1] {
            for warp in [0, kern.warps_per_tb - 1] {
                v.push((k, tb, warp));
            }
        }
    }
    v
}

#[test]
fn same_seed_same_streams_and_the_seed_matters_for_graphs() {
    for info in catalog() {
        let (a, b) = (small(info.name, 42), small(info.name, 42));
        assert_eq!(a.allocations(), b.allocations(), "{}", info.name);
        assert_eq!(a.kernels(), b.kernels(), "{}", info.name);
        for (k, tb, w) in sample_warps(a.as_ref()).into_iter().take(60) {
            assert!(
                a.warp_stream(k, tb, w).eq(b.warp_stream(k, tb, w)),
                "{} k{k} tb{tb} w{w}",
                info.name
            );
        }
    }
    let (a, b) = (small("bfs", 1), small("bfs", 2));
    assert_ne!(
        a.allocations()[1].bytes,
        b.allocations()[1].bytes,
        "the graph depends on the seed"
    );
}

#[test]
fn instruction_counts_are_exact_and_every_access_is_inside_its_allocation() {
    for info in catalog() {
        let w = small(info.name, 7);
        let allocs = w.allocations();
        let mut walked = 0u64;
        for (k, kern) in w.kernels().iter().enumerate() {
            for tb in 0..kern.grid {
                for warp in 0..kern.warps_per_tb {
                    for i in w.warp_stream(k, tb, warp) {
                        walked += 1;
                        let a = &allocs[i.alloc as usize];
                        let (lo, hi) = i.lanes.extent().expect("no instruction without lanes");
                        assert!(
                            hi <= a.bytes,
                            "{}: k{k} tb{tb} w{warp}: [{lo}, {hi}) outside {} ({} B)",
                            info.name,
                            a.name,
                            a.bytes
                        );
                        assert!((1..=32).contains(&i.lanes.active()), "{}: lanes", info.name);
                    }
                }
            }
        }
        assert_eq!(
            w.instr_count(),
            walked,
            "{}: instr_count must equal the streams",
            info.name
        );
        assert!(walked > 0, "{}", info.name);
    }
}

#[test]
fn default_scale_is_sized_for_a_few_seconds_per_run() {
    // 2–10 M warp memory instructions and tens to a few hundred MB, per the brief; counted
    // from loop bounds (the graph ones traverse their graph).
    let mut bad = Vec::new();
    for info in catalog() {
        let w = by_name(info.name, 1.0, 1).unwrap();
        let n = w.instr_count();
        let mb = mcmvm_models::workload::footprint_bytes(w.as_ref()) >> 20;
        println!(
            "{:14} {:>10} instrs {:>5} MB {:>5} kernels",
            info.name,
            n,
            mb,
            w.kernels().len()
        );
        if !(1_000_000..=12_000_000).contains(&n) || !(8..=700).contains(&mb) {
            bad.push(format!("{}: {n} instructions, {mb} MB", info.name));
        }
    }
    assert!(bad.is_empty(), "{bad:?}");
}

#[test]
fn gemm_matrix_b_is_read_entirely_by_every_thread_block() {
    for name in ["gemm-resnet50", "gemm-vit", "gemm-gpt3"] {
        let w = by_name(name, 0.05, 1).unwrap();
        let b = &w.allocations()[1];
        assert_eq!(b.name, "B");
        let k = &w.kernels()[0];
        assert!(k.grid >= 2, "{name}: need several thread blocks");
        let mut a_rows_seen = Vec::new();
        for tb in 0..k.grid {
            let mut b_lines = HashSet::new();
            let mut a_span = (u64::MAX, 0);
            for warp in 0..k.warps_per_tb {
                for i in w.warp_stream(0, tb, warp) {
                    let (lo, hi) = i.lanes.extent().unwrap();
                    match i.alloc {
                        0 => a_span = (a_span.0.min(lo), a_span.1.max(hi)),
                        1 => (lo / 128..hi.div_ceil(128)).for_each(|l| {
                            b_lines.insert(l);
                        }),
                        _ => {}
                    }
                }
            }
            assert_eq!(
                b_lines.len() as u64,
                b.bytes.div_ceil(128),
                "{name}: tb {tb} must read all of B"
            );
            a_rows_seen.push(a_span);
        }
        // A: each block reads its own contiguous rows, in block order, without overlap.
        for pair in a_rows_seen.windows(2) {
            assert!(
                pair[0].1 <= pair[1].0,
                "{name}: A regions overlap or go backwards"
            );
        }
    }
}

/// Byte ranges written by one thread block of kernel `k`, merged.
fn written_ranges(w: &dyn Workload, k: usize, tb: u32) -> Vec<(u64, u64)> {
    let mut r: Vec<(u64, u64)> = Vec::new();
    for warp in 0..w.kernels()[k].warps_per_tb {
        for i in w.warp_stream(k, tb, warp).filter(|i| i.write) {
            r.push(i.lanes.extent().unwrap());
        }
    }
    r.sort();
    let mut merged: Vec<(u64, u64)> = Vec::new();
    for (lo, hi) in r {
        match merged.last_mut() {
            Some(last) if lo <= last.1 => last.1 = last.1.max(hi),
            _ => merged.push((lo, hi)),
        }
    }
    merged
}

#[test]
fn stencil_thread_blocks_own_contiguous_slices_of_each_plane() {
    // ste: a block writes one whole row per plane; consecutive blocks write adjacent rows.
    let w = by_name("ste", 0.2, 1).unwrap();
    let row = 512 * 4;
    let plane = 512 * row;
    for tb in [1u32, 2, 100, 510] {
        let r = written_ranges(w.as_ref(), 0, tb);
        assert!(!r.is_empty());
        for (j, &(lo, hi)) in r.iter().enumerate() {
            assert_eq!(hi - lo, row, "ste tb {tb}: one row per plane");
            assert_eq!(
                lo,
                (j as u64 + 1) * plane + tb as u64 * row,
                "ste tb {tb}: rows in place"
            );
        }
    }
    // 3dc and lps: the blocks of one band (one row of the block grid) write one contiguous
    // slice of each plane (3dc leaves out the k = 0 and k = N-1 boundary columns), and band
    // b's slice starts where band b-1's ended.
    for (name, tbs_per_band, row, rows_per_band) in
        [("3dc", 16u32, 512 * 4u64, 8u64), ("lps", 8, 256 * 4, 4)]
    {
        let w = by_name(name, 0.2, 1).unwrap();
        let plane = row * row / 4;
        for b in [1u32, 2, 5] {
            let mut ranges: Vec<(u64, u64)> = (b * tbs_per_band..(b + 1) * tbs_per_band)
                .flat_map(|tb| written_ranges(w.as_ref(), 0, tb))
                .collect();
            ranges.sort();
            let p = ranges[0].0 / plane;
            let in_plane: Vec<(u64, u64)> =
                ranges.into_iter().filter(|r| r.0 / plane == p).collect();
            for pair in in_plane.windows(2) {
                assert!(
                    pair[1].0 <= pair[0].1 + 8,
                    "{name} band {b}: hole in the slice"
                );
            }
            let (lo, hi) = (in_plane[0].0, in_plane.iter().map(|r| r.1).max().unwrap());
            let expect = p * plane + b as u64 * rows_per_band * row;
            assert!(
                lo >= expect && lo <= expect + 4,
                "{name} band {b}: slice starts at {lo}, expected {expect}"
            );
            assert!(
                hi + 4 >= expect + rows_per_band * row && hi <= expect + rows_per_band * row,
                "{name} band {b}: slice ends at {hi}"
            );
        }
    }
}

#[test]
fn streams_are_lazy_memory_does_not_grow_with_stream_length() {
    // The counter sees this thread's heap: a 1 MB buffer shows as 1 MB, freed as 0.
    let before = live();
    let buf = vec![0u8; 1 << 20];
    assert_eq!(
        live() - before,
        buf.len() as isize,
        "the counter sees allocations"
    );
    drop(buf);
    assert_eq!(live(), before, "the counter sees frees");
    // A ste warp's stream grows with the number of planes; a stream over 4x the planes
    // must not need more live heap while it is consumed.
    let peak_for = |scale: f64| {
        let w = by_name("ste", scale, 1).unwrap();
        let base = live();
        PEAK.with(|p| p.set(base));
        let n = w.warp_stream(0, 7, 3).count();
        (peak() - base, n)
    };
    let (p1, n1) = peak_for(1.0);
    let (p4, n4) = peak_for(4.0);
    assert!(n4 > 3 * n1, "the longer stream is longer: {n1} vs {n4}");
    assert!(
        p4 <= p1 + 1024,
        "peak heap while streaming: {p1} B for {n1} instrs, {p4} B for {n4}"
    );
    // And building a big workload allocates nothing per instruction.
    let base = live();
    let w = by_name("ls", 4.0, 1).unwrap();
    let held = live() - base;
    assert!(
        held < 64 * 1024,
        "ls at scale 4 holds {held} B for {} instructions",
        w.instr_count()
    );
}

#[test]
fn graph_gathers_go_everywhere_while_per_vertex_arrays_stay_block_local() {
    let w = by_name("bfs", 0.05, 3).unwrap();
    // Kernel 0 expands the source (vertex 0, in block 0).
    let mut mask_lo = u64::MAX;
    let mut cols_hi = 0;
    for warp in 0..w.kernels()[0].warps_per_tb {
        for i in w.warp_stream(0, 0, warp) {
            let (lo, hi) = i.lanes.extent().unwrap();
            if i.alloc == 2 {
                mask_lo = mask_lo.min(lo);
            }
            if i.alloc == 5 {
                cols_hi = cols_hi.max(hi);
            }
        }
    }
    assert_eq!(mask_lo, 0);
    assert!(
        cols_hi > w.allocations()[5].bytes / 4,
        "visited gathers reach far vertices"
    );
    assert!(matches!(
        w.warp_stream(0, 0, 0).nth(2).unwrap().lanes,
        Lanes::Gather { .. }
    ));
}

#[test]
fn repeated_kernels_exist_for_pattern_recording() {
    for name in ["ls", "hchi", "mixed", "bert", "ste", "sc"] {
        let w = small(name, 1);
        let names: Vec<&str> = w.kernels().iter().map(|k| k.name.as_str()).collect();
        let distinct: HashSet<&&str> = names.iter().collect();
        assert!(
            distinct.len() < names.len(),
            "{name}: some kernel must repeat"
        );
    }
    assert_eq!(
        count_by_walking(small("lud", 1).as_ref()),
        small("lud", 1).instr_count()
    );
}

/// Generation speed per workload (run with `--ignored --nocapture`): the GPU model targets
/// at least 5 M warp instructions/s end to end, so generation must be far faster.
#[test]
#[ignore]
fn generation_throughput() {
    for info in catalog() {
        let w = by_name(info.name, 0.25, 1).unwrap();
        let t = std::time::Instant::now();
        let mut n = 0u64;
        let mut lanes = 0u64;
        for (k, kern) in w.kernels().iter().enumerate() {
            for tb in 0..kern.grid {
                for warp in 0..kern.warps_per_tb {
                    for i in w.warp_stream(k, tb, warp) {
                        n += 1;
                        lanes += i.lanes.active() as u64;
                    }
                }
            }
        }
        let s = t.elapsed().as_secs_f64();
        println!(
            "{:14} {:>9} instrs {:6.1} M instr/s ({:.1} lanes avg)",
            info.name,
            n,
            n as f64 / s / 1e6,
            lanes as f64 / n as f64
        );
    }
}
