//! Accel-Sim SASS traces: the hand-written fixture read back exactly, the writer's round
//! trip against the built-in generators, and one error per kind of malformed input, each
//! naming its file and line.

use mcmvm_models::workload::trace::{write_accelsim_trace, TraceFormat};
use mcmvm_models::workload::{
    by_name, Allocation, Kernel, Lanes, TraceWorkload, WarpInstr, Workload, WorkloadError,
};
use std::io::Read;
use std::path::{Path, PathBuf};

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/traces/accelsim-tiny")
}

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mcmvm-accelsim-test-{}", std::process::id()));
    let d = dir.join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
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

fn gather(alloc: u16, write: bool, offsets: &[u64], elem: u8, c: u32) -> WarpInstr {
    WarpInstr {
        alloc,
        write,
        lanes: Lanes::Gather {
            offsets: offsets.into(),
            elem,
        },
        compute_cycles: c,
        independent: false,
    }
}

fn stream(t: &dyn Workload, k: usize, tb: u32, w: u32) -> Vec<WarpInstr> {
    t.warp_stream(k, tb, w).collect()
}

#[test]
fn the_fixture_reads_back_exactly() {
    for path in [fixture(), fixture().join("kernelslist.g")] {
        let t = TraceWorkload::open(&path).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(t.format(), TraceFormat::AccelSim);
        assert_eq!(t.name(), "accelsim-tiny");
        // A (copied twice: one buffer; its last access runs 4 bytes past the copy), B, then
        // the undeclared output and the counter 4 MB above it.
        assert_eq!(
            t.allocations(),
            [
                Allocation::new("memcpy0", 4100),
                Allocation::new("memcpy1", 2048),
                Allocation::new("region0", 4096),
                Allocation::new("region1", 4096),
            ]
        );
        assert_eq!(
            t.kernels(),
            [Kernel::new("vecadd", 2, 2), Kernel::new("scale", 1, 1)]
        );
        // Base + stride after two compute instructions; a shared load counted as compute
        // before base + deltas; a list with lane 2 masked off; trailing EXIT/BRA dropped.
        assert_eq!(
            stream(&t, 0, 0, 0),
            [
                strided(0, false, 0, 4, 32, 4, 2),
                gather(1, false, &[0, 8, 16, 40], 8, 1),
                gather(2, true, &[0, 4, 12], 4, 0),
            ]
        );
        assert_eq!(
            stream(&t, 0, 0, 1),
            [
                strided(0, false, 128, 4, 32, 4, 0),
                strided(2, true, 0x80, 4, 16, 4, 0)
            ]
        );
        // An atomic is a write; a local store is compute; stride 0 is a broadcast.
        assert_eq!(
            stream(&t, 0, 1, 0),
            [
                gather(3, true, &[0x100], 4, 0),
                strided(1, false, 16, 0, 32, 4, 1)
            ]
        );
        assert_eq!(stream(&t, 0, 1, 1), []);
        // The xz-compressed kernel, tracer version 4 with a trailing immediate: a negative
        // delta, an 8-byte access past A's copy, and a store split over A and B.
        assert_eq!(
            stream(&t, 1, 0, 0),
            [
                gather(0, false, &[4092, 0], 4, 0),
                gather(0, false, &[4092], 8, 1),
                gather(0, true, &[0x10], 4, 0),
                gather(1, true, &[0x20], 4, 0),
            ]
        );
        assert_eq!(t.records(), 10);
        assert_eq!(t.instr_count(), 11);
        assert_eq!(t.stream_error(), None);
    }
}

/// The compressed kernel of the fixture, as text (what `xz -d` gives).
const KERNEL_2: &str = "\
-kernel name = scale
-kernel id = 2
-grid dim = (1,1,1)
-block dim = (32,1,1)
-shmem = 0
-nregs = 8
-binary version = 80
-cuda stream id = 0
-nvbit version = 1.7
-accelsim tracer version = 4

#traces format = PC mask dest_num [reg_dests] opcode src_num [reg_srcs] mem_width [adrrescompress?] [mem_addresses] immediate

#BEGIN_TB

thread block = 0,0,0

warp = 0
insts = 4
0000 00000003 1 R2 LDG.E 1 R4 4 2 0x7f0000000ffc -4092 0
0010 ffffffff 1 R3 FADD 2 R2 R2 0 0
0020 00000001 1 R6 LDG.E.64 1 R4 8 0 0x00007f0000000ffc 0
0030 00000003 0 STG.E 2 R4 R2 4 0 0x00007f0000000010 0x00007f0000200020 0

#END_TB
";

#[test]
fn the_compressed_fixture_kernel_is_the_documented_text() {
    let f = std::fs::File::open(fixture().join("kernel-2.traceg.xz")).unwrap();
    let mut text = String::new();
    xz2::read::XzDecoder::new(f)
        .read_to_string(&mut text)
        .unwrap();
    assert_eq!(text, KERNEL_2);
}

#[test]
fn round_trip_write_accelsim_then_read_gives_identical_streams() {
    for (name, scale) in [
        ("ls", 0.002),
        ("bfs", 0.003),
        ("gemm-resnet50", 0.004),
        ("lps", 0.01),
        ("hcli", 0.002),
        ("sc", 0.004),
        ("whisper", 0.0005),
    ] {
        let w = by_name(name, scale, 9).unwrap();
        let dir = tmp(&format!("rt-{name}"));
        write_accelsim_trace(w.as_ref(), &dir).unwrap();
        let t = TraceWorkload::open(&dir).unwrap_or_else(|e| panic!("{name}: {e}"));
        // Accel-Sim has no place for mcmvm's allocation hints: names and sizes come back.
        let shape = |a: &[Allocation]| -> Vec<(String, u64)> {
            a.iter().map(|a| (a.name.clone(), a.bytes)).collect()
        };
        assert_eq!(shape(t.allocations()), shape(w.allocations()), "{name}");
        assert_eq!(t.kernels(), w.kernels(), "{name}");
        for (k, kern) in w.kernels().iter().enumerate() {
            for tb in 0..kern.grid {
                for warp in 0..kern.warps_per_tb {
                    // Accel-Sim carries no dependence marks: everything reads back dependent.
                    let blocking = |mut i: WarpInstr| {
                        i.independent = false;
                        i
                    };
                    assert!(
                        w.warp_stream(k, tb, warp)
                            .map(blocking)
                            .eq(t.warp_stream(k, tb, warp)),
                        "{name}: k{k} tb{tb} w{warp} differ"
                    );
                }
            }
        }
        assert_eq!(t.instr_count(), w.instr_count(), "{name}");
        assert_eq!(t.stream_error(), None);
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// A kernel file's preamble: grid 2 blocks of 2 warps, tracer version 3.
const HEAD: &str = "-kernel name = k\n-grid dim = (2,1,1)\n-block dim = (64,1,1)\n-accelsim tracer version = 3\n\n#traces format = ...\n";

/// Open a trace whose only kernel file is `kernel` and return (file, line, message).
fn error_of(kernel: &str) -> (PathBuf, u64, String) {
    let dir = tmp("bad");
    std::fs::write(
        dir.join("kernelslist.g"),
        "MemcpyHtoD,0x1000,64\nkernel-1.traceg\n",
    )
    .unwrap();
    std::fs::write(dir.join("kernel-1.traceg"), kernel).unwrap();
    match TraceWorkload::open(&dir) {
        Err(WorkloadError::Trace { path, line, source }) => (path, line, source.to_string()),
        Err(e) => panic!("wrong error kind for {kernel:?}: {e}"),
        Ok(_) => panic!("accepted a malformed trace: {kernel:?}"),
    }
}

#[test]
fn each_malformed_kernel_line_names_its_line() {
    let tb = "#BEGIN_TB\nthread block = 0,0,0\nwarp = 0\ninsts = 1\n";
    let cases: Vec<(String, u64, &str)> = vec![
        (format!("{HEAD}#BEGIN_TB\nthread block = 0,0,0\nwarp = 3\n"), 9, "warp 3 is outside"),
        (format!("{HEAD}#BEGIN_TB\nthread block = 0,0,0\nwarp = 1\n\nnot insts\n"), 11, "expected 'insts = N' after 'warp = 1'"),
        (format!("{HEAD}#BEGIN_TB\nthread block = 2,0,0\n"), 8, "outside the grid"),
        (format!("{HEAD}#BEGIN_TB\nblock = 0\n"), 8, "expected 'thread block = X,Y,Z'"),
        (format!("{HEAD}0000 ffffffff 0 EXIT 0 0\n"), 7, "expected a `-key = value` header line or '#BEGIN_TB'"),
        (format!("{HEAD}{tb}0000 zz 0 EXIT 0 0\n"), 11, "active mask"),
        (format!("{HEAD}{tb}0000 00000003 0 STG.E 1 R4 4 0 0x1000\n"), 11, "one address per active lane"),
        (format!("{HEAD}{tb}0000 00000003 0 STG.E 1 R4 4 7 0x1000 4\n"), 11, "compression mode 7"),
        (format!("{HEAD}{tb}0000 00000003 0 STG.E 1 R4 4 1 0x1000\n"), 11, "the stride"),
        (format!("{HEAD}{tb}0000 00000003 0 STG.E 1 R4 4 2 0x1000\n"), 11, "one delta per further active lane"),
        (format!("{HEAD}{tb}0000 00000001 0 STG.E 1 R4 256 0 0x1000\n"), 11, "mem_width 256"),
        (format!("{HEAD}#BEGIN_TB\nthread block = 0,0,0\nwarp = 0\ninsts = 2\n0000 ffffffff 0 EXIT 0 0\n#END_TB\n"), 12, "expected 1 more instruction lines for warp 0"),
        (format!("{HEAD}{tb}0000 ffffffff 0 EXIT 0 0\n#END_TB\n#BEGIN_TB\nthread block = 0,0,0\n"), 14, "appears twice"),
        (format!("{HEAD}{tb}0000 ffffffff 0 EXIT 0 0\n"), 11, "file ends early: thread block 0,0,0 is not closed"),
        (format!("{HEAD}{tb}0000 ffffffff 0 EXIT 0 0\n#END_TB\n0010 ffffffff 0 EXIT 0 0\n"), 13, "expected '#BEGIN_TB'"),
        ("-kernel name = k\n-block dim = (32,1,1)\n#BEGIN_TB\n".into(), 3, "expected '-grid dim = (X,Y,Z)'"),
        ("-grid dim = (2,0,1)\n".into(), 1, "zero dimension"),
        ("-grid dim = (1,1,1)\n-block dim = (2048,1,1)\n#BEGIN_TB\n".into(), 3, "more than 1024 threads"),
    ];
    for (text, want, expect) in cases {
        let (path, line, msg) = error_of(&text);
        assert!(path.ends_with("kernel-1.traceg"), "{}", path.display());
        assert!(
            msg.contains(expect),
            "{text:?}: message `{msg}` should say `{expect}`"
        );
        assert_eq!(line, want, "{text:?}: {msg}");
    }
    // The one-line form: file:line: message.
    let dir = tmp("bad");
    std::fs::write(dir.join("kernelslist.g"), "kernel-1.traceg\n").unwrap();
    let kernel = dir.join("kernel-1.traceg");
    std::fs::write(
        &kernel,
        format!("{HEAD}#BEGIN_TB\nthread block = 1,0,0\nwarp = 1\n"),
    )
    .unwrap();
    let e = TraceWorkload::open(&dir).err().unwrap().to_string();
    let want = format!(
        "{}:9: file ends early: thread block 1,0,0 is not closed: expected '#END_TB'",
        kernel.display()
    );
    assert_eq!(e, want);
    std::fs::write(
        &kernel,
        format!("{HEAD}#BEGIN_TB\nthread block = 1,0,0\nwarp = 1\nwarp = 0\n"),
    )
    .unwrap();
    let e = TraceWorkload::open(&dir).err().unwrap().to_string();
    assert_eq!(
        e,
        format!(
            "{}:10: expected 'insts = N' after 'warp = 1'",
            kernel.display()
        )
    );
}

#[test]
fn kernelslist_problems_name_the_list_and_line() {
    let dir = tmp("list");
    std::fs::write(dir.join("kernel-1.traceg"), HEAD).unwrap();
    for (list, line, expect) in [
        (
            "kernel-1.traceg\nlaunch now\n",
            2,
            "expected `kernel-N.traceg[.xz]`",
        ),
        ("MemcpyHtoD,0x10\n", 1, "expected `kernel-N.traceg[.xz]`"),
        ("MemcpyHtoD,zz,10\n", 1, "device address"),
        (
            "# c\n\nkernel-9.traceg\n",
            3,
            "`kernel-9.traceg` does not exist",
        ),
        ("kernel-1.trace\n", 1, "post-traces-processing"),
    ] {
        std::fs::write(dir.join("kernelslist.g"), list).unwrap();
        match TraceWorkload::open(&dir) {
            Err(WorkloadError::Trace {
                path,
                line: l,
                source,
            }) => {
                let message = source.to_string();
                assert!(path.ends_with("kernelslist.g"));
                assert!(message.contains(expect), "{list:?}: {message}");
                assert_eq!(l, line, "{list:?}: {message}");
            }
            other => panic!("{list:?}: {:?}", other.err().map(|e| e.to_string())),
        }
    }
    // A kernel without thread blocks is a launch of no instructions.
    std::fs::write(dir.join("kernelslist.g"), "kernel-1.traceg\n").unwrap();
    let t = TraceWorkload::open(&dir).unwrap();
    assert_eq!(t.kernels(), [Kernel::new("k", 2, 2)]);
    assert_eq!(t.instr_count(), 0);
}

#[test]
fn directory_and_file_problems_are_one_line() {
    let dir = tmp("empty");
    let e = TraceWorkload::open(&dir).err().unwrap();
    assert!(matches!(e, WorkloadError::TraceFile { .. }), "{e}");
    assert!(e.to_string().contains("has no kernelslist.g"), "{e}");
    std::fs::write(dir.join("kernelslist"), "kernel-1.trace\n").unwrap();
    let e = TraceWorkload::open(&dir).err().unwrap().to_string();
    assert!(e.contains("post-traces-processing"), "{e}");
    // Not xz at all.
    std::fs::write(dir.join("kernelslist.g"), "kernel-1.traceg.xz\n").unwrap();
    std::fs::write(dir.join("kernel-1.traceg.xz"), "plain text").unwrap();
    let e = TraceWorkload::open(&dir).err().unwrap();
    // The decoder's error is kept as the source.
    assert!(matches!(e, WorkloadError::Decompress { .. }), "{e}");
    assert!(std::error::Error::source(&e).is_some(), "{e}");
    assert!(
        e.to_string()
            .contains("kernel-1.traceg.xz: cannot decompress (xz)"),
        "{e}"
    );
}
