//! NVBit `mem_trace` output: the hand-written fixture read back exactly, and one error per
//! kind of malformed line, each naming its line.

use mcmvm_models::workload::trace::{detect, TraceFormat};
use mcmvm_models::workload::{
    Allocation, Kernel, Lanes, TraceWorkload, WarpInstr, Workload, WorkloadError,
};
use std::path::{Path, PathBuf};

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/traces/nvbit-tiny.txt")
}

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mcmvm-nvbit-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn strided(
    alloc: u16,
    write: bool,
    offset: u64,
    stride: u64,
    lanes: u8,
    elem: u8,
    c: u32,
) -> WarpInstr {
    WarpInstr {
        alloc,
        write,
        lanes: Lanes::Strided {
            offset,
            stride,
            lanes,
            elem,
        },
        compute_cycles: c,
        independent: false,
    }
}

fn gather(alloc: u16, write: bool, offsets: &[u64], elem: u8) -> WarpInstr {
    WarpInstr {
        alloc,
        write,
        lanes: Lanes::Gather {
            offsets: offsets.into(),
            elem,
        },
        compute_cycles: 0,
        independent: false,
    }
}

fn stream(t: &dyn Workload, k: usize, tb: u32, w: u32) -> Vec<WarpInstr> {
    t.warp_stream(k, tb, w).collect()
}

#[test]
fn the_fixture_reads_back_exactly() {
    assert_eq!(detect(&fixture()), TraceFormat::NvBit);
    let t = TraceWorkload::open(&fixture()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(t.format(), TraceFormat::NvBit);
    assert_eq!(t.name(), "nvbit-tiny");
    // A and B are 4 MB apart: two regions. The counter 1 MB above C shares C's region.
    assert_eq!(
        t.allocations(),
        [
            Allocation::new("region0", 4096),
            Allocation::new("region1", 4096),
            Allocation::new("region2", 0x10_1000),
        ]
    );
    // The second launch printed no LAUNCH line: its grid holds the CTAs seen (0,0,0 and
    // 0,1,0), its warps are renumbered per CTA.
    assert_eq!(
        t.kernels(),
        [
            Kernel::new("vecAdd(double*, double*, double*, int)", 2, 2),
            Kernel::new("launch1", 2, 1),
        ]
    );
    // Interleaved warps 0 and 1 of CTA 0; a shared store counted as compute; lane 31
    // inactive (0x0).
    assert_eq!(
        stream(&t, 0, 0, 0),
        [
            strided(0, false, 0, 8, 32, 8, 0),
            strided(1, false, 0, 8, 32, 8, 0),
            strided(2, true, 0, 8, 31, 8, 1),
        ]
    );
    let descending: Vec<u64> = (0..32).map(|i| 256 + 8 * (31 - i)).collect();
    assert_eq!(
        stream(&t, 0, 0, 1),
        [
            strided(0, false, 256, 8, 32, 8, 0),
            gather(1, false, &descending, 8),
        ]
    );
    // CTA 1 ran in hardware warp slots 4 and 5, beyond the block's 2 warps: renumbered.
    assert_eq!(stream(&t, 0, 1, 0), [strided(0, false, 512, 8, 16, 8, 0)]);
    assert_eq!(stream(&t, 0, 1, 1), [strided(2, true, 512, 512, 2, 8, 1)]);
    // An atomic is a write of 4 bytes; `.U8` is a byte.
    assert_eq!(stream(&t, 1, 0, 0), [gather(2, true, &[0x10_0000], 4)]);
    assert_eq!(stream(&t, 1, 1, 0), [gather(0, false, &[3, 1, 2, 0], 1)]);
    assert_eq!(t.records(), 9);
    assert_eq!(t.instr_count(), 9);
    assert_eq!(t.stream_error(), None);
}

/// An access line with `addrs` (padded to 32 lanes with 0x0).
fn access(launch: u64, cta: &str, warp: u64, op: &str, addrs: &[u64]) -> String {
    let mut s = format!("MEMTRACE: CTX 0x0000000000000001 - grid_launch_id {launch} - CTA {cta} - warp {warp} - {op} - ");
    for i in 0..32 {
        s.push_str(&format!("0x{:016x} ", addrs.get(i).copied().unwrap_or(0)));
    }
    s
}

const LAUNCH: &str = "MEMTRACE: CTX 0x0000000000000001 - LAUNCH - Kernel pc 0x0000000000000002 - Kernel name k - grid launch id 0 - grid size 2,1,1 - block size 64,1,1 - nregs 8 - shmem 0 - cuda stream id 0";

#[test]
fn warp_ids_below_the_block_size_are_kept() {
    let path = tmp("keep.txt");
    let text = [
        LAUNCH.to_string(),
        access(0, "1,0,0", 1, "LDG.E", &[0x1000, 0x1004]),
    ]
    .join("\n");
    std::fs::write(&path, text).unwrap();
    let t = TraceWorkload::open(&path).unwrap();
    assert_eq!(t.kernels(), [Kernel::new("k", 2, 2)]);
    assert_eq!(stream(&t, 0, 1, 0), []);
    assert_eq!(stream(&t, 0, 1, 1), [strided(0, false, 0, 4, 2, 4, 0)]);
}

#[test]
fn each_malformed_line_names_its_line() {
    let good = access(0, "0,0,0", 0, "LDG.E", &[0x1000]);
    let mut short = access(0, "0,0,0", 0, "LDG.E", &[0x1000]);
    short.truncate(short.len() - 19);
    let cases: Vec<(String, &str)> = vec![
        (short, "expected 32 lane addresses, found 31"),
        (good.replace("0x0000000000001000", "0xzz"), "lane address"),
        (good.replace("CTA 0,0,0", "CTA 0,0"), "the CTA as X,Y,Z"),
        (good.replace("warp 0", "warp x"), "expected the warp"),
        (good.replace("warp 0", "lane 0"), "expected `warp …`"),
        (
            good.replace("grid_launch_id 0", "grid_launch_id -1"),
            "grid launch id",
        ),
        (
            "MEMTRACE: CTX 0x1 - grid_launch_id 0 - CTA 0,0,0".into(),
            "expected `MEMTRACE: CTX 0xC - grid_launch_id N",
        ),
        (
            LAUNCH.replace("grid size 2,1,1", "grid 2"),
            "expected `MEMTRACE: CTX 0xC - LAUNCH",
        ),
        (LAUNCH.to_string(), "launched twice"),
        (
            access(0, "2,0,0", 0, "LDG.E", &[0x1000]),
            "outside the launch's grid size 2,1,1",
        ),
    ];
    for (bad, expect) in cases {
        // App output and a comment before it count as lines too.
        let text = format!("{LAUNCH}\nhello from the app\n# a comment\n{good}\n{bad}\n{good}\n");
        let path = tmp("bad.txt");
        std::fs::write(&path, &text).unwrap();
        match TraceWorkload::open(&path) {
            Err(WorkloadError::Trace {
                path: p,
                line,
                source,
            }) => {
                let message = source.to_string();
                assert_eq!(p, path);
                assert!(
                    message.contains(expect),
                    "{bad:?}: `{message}` should say `{expect}`"
                );
                assert_eq!(line, 5, "{bad:?}: {message}");
            }
            other => panic!("{bad:?}: {:?}", other.err().map(|e| e.to_string())),
        }
    }
}

#[test]
fn detection_looks_at_the_first_lines() {
    let path = tmp("detect.txt");
    for (text, want) in [
        ("# c\nmcmvm-trace 1\n", TraceFormat::Mcmvm),
        ("hello\nMEMTRACE: CTX 0x1 - LAUNCH\n", TraceFormat::NvBit),
        (
            "-- NVBit (NVidia Binary Instrumentation Tool v1.7) Loaded --\n",
            TraceFormat::NvBit,
        ),
        ("alloc A 1\n", TraceFormat::Mcmvm),
    ] {
        std::fs::write(&path, text).unwrap();
        assert_eq!(detect(&path), want, "{text:?}");
    }
    // More than 32 warp ids in one CTA cannot be a block.
    let many: Vec<String> = (0..33)
        .map(|w| access(0, "0,0,0", w, "LDG.E", &[0x1000]))
        .collect();
    std::fs::write(&path, many.join("\n")).unwrap();
    let e = TraceWorkload::open(&path).err().unwrap().to_string();
    assert!(e.contains(":1: CTA 0,0,0 has 33 distinct warp ids"), "{e}");
}
