//! A trace file gives the same run as the workload it describes.

use crate::gpu_support;

use gpu_support::{read32, run, Scripted};
use mcmvm_models::driver::PolicyKind;
use mcmvm_models::gpu::RunReport;
use mcmvm_models::workload::{Allocation, Kernel, Lanes, TraceWorkload, WarpInstr};

/// Written by hand: two structures, a kernel of four single-warp blocks (one per chiplet)
/// streaming a 512 KB slice of A each and gathering from B.
const HAND_TRACE: &str = "\
mcmvm-trace 1
name tiny
# name bytes
alloc A 2097152
alloc B 65536
# name grid warps-per-TB
kernel stream 4 1
# kernel tb warp alloc r|w s offset stride lanes elem
a 0 0 0 A r s 0 4 32 4
a 0 0 0 A r s 128 4 32 4
a 0 0 0 B r g 4 0,4096,8192,60000 c=12
a 0 1 0 A r s 524288 4 32 4
a 0 1 0 A w s 524416 4 32 4
a 0 2 0 A r s 1048576 4 32 4
a 0 2 0 B r g 4 16,32 c=3
a 0 3 0 A r s 1572864 4 32 4
a 0 3 0 A r s 1572864 4 32 4
";

fn scripted_twin() -> Scripted {
    let mut w = Scripted::new(
        "tiny",
        vec![
            Allocation::new("A", 2 << 20),
            Allocation::new("B", 64 << 10),
        ],
        vec![Kernel::new("stream", 4, 1)],
    );
    let gather = |offsets: &[u64], c: u32| WarpInstr {
        alloc: 1,
        write: false,
        lanes: Lanes::Gather {
            offsets: offsets.into(),
            elem: 4,
        },
        compute_cycles: c,
        independent: false,
    };
    w.push(0, 0, 0, read32(0, 0));
    w.push(0, 0, 0, read32(0, 128));
    w.push(0, 0, 0, gather(&[0, 4096, 8192, 60000], 12));
    w.push(0, 1, 0, read32(0, 524288));
    w.push(
        0,
        1,
        0,
        WarpInstr {
            write: true,
            ..read32(0, 524416)
        },
    );
    w.push(0, 2, 0, read32(0, 1048576));
    w.push(0, 2, 0, gather(&[16, 32], 3));
    w.push(0, 3, 0, read32(0, 1572864));
    w.push(0, 3, 0, read32(0, 1572864));
    w
}

fn key(r: &RunReport) -> (u64, u64, u64, u64, u64, String) {
    (
        r.cycles,
        r.warp_mem_instrs,
        r.lines,
        r.walks,
        r.faults,
        format!("{:.6}", r.remote_ratio),
    )
}

#[test]
fn a_hand_written_trace_runs_exactly_like_the_workload_it_describes() {
    let dir = std::env::temp_dir().join(format!("mcmvm-gpu-trace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("tiny.trace");
    std::fs::write(&path, HAND_TRACE).expect("write trace");
    let trace = TraceWorkload::open(&path).expect("the hand-written trace parses");
    let twin = scripted_twin();
    for p in [PolicyKind::S64k, PolicyKind::S2m, PolicyKind::Clap] {
        let a = run(&trace, p);
        let b = run(&twin, p);
        assert_eq!(key(&a), key(&b), "{p}");
        assert_eq!(a.warp_mem_instrs, 9);
    }
    assert!(trace.stream_error().is_none());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_built_in_workload_written_as_a_trace_runs_the_same() {
    let w = mcmvm_models::workload::by_name("blk", 0.05, 7).expect("blk builds");
    let dir = std::env::temp_dir().join(format!("mcmvm-gpu-blk-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("blk.trace");
    mcmvm_models::workload::write_trace(w.as_ref(), &path).expect("write trace");
    let trace = TraceWorkload::open(&path).expect("trace parses");
    let a = run(w.as_ref(), PolicyKind::Clap);
    let b = run(&trace, PolicyKind::Clap);
    assert_eq!(key(&a), key(&b));
    let _ = std::fs::remove_dir_all(&dir);
}
