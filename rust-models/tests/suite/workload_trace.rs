//! The trace format: round trip against the built-in generators, the hand-written example,
//! and one error per kind of malformed line, each naming the right line.

use mcmvm_models::workload::{
    by_name, write_trace, LineError, TraceWorkload, Workload, WorkloadError,
};
use std::path::{Path, PathBuf};

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mcmvm-trace-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// Every warp of `a` and `b` yields the same instructions.
fn assert_same_streams(a: &dyn Workload, b: &dyn Workload) {
    assert_eq!(a.allocations(), b.allocations());
    assert_eq!(a.kernels(), b.kernels());
    for (k, kern) in a.kernels().iter().enumerate() {
        for tb in 0..kern.grid {
            for w in 0..kern.warps_per_tb {
                assert!(
                    a.warp_stream(k, tb, w).eq(b.warp_stream(k, tb, w)),
                    "k{k} tb{tb} w{w} differ"
                );
            }
        }
    }
    assert_eq!(a.instr_count(), b.instr_count());
}

#[test]
fn round_trip_write_then_read_gives_identical_streams() {
    // One of each generator family, small: strided, gathers, compute cycles, flags.
    for (name, scale) in [
        ("bfs", 0.003),
        ("gemm-resnet50", 0.004),
        ("lps", 0.01),
        ("hcli", 0.002),
        ("sc", 0.004),
        ("whisper", 0.0005),
    ] {
        let w = by_name(name, scale, 9).unwrap();
        let path = tmp(&format!("{name}.trace"));
        write_trace(w.as_ref(), &path).unwrap();
        let t = TraceWorkload::open(&path).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(t.name(), name);
        assert_same_streams(w.as_ref(), &t);
        assert_eq!(t.stream_error(), None);
    }
}

#[test]
fn hand_written_example_equals_the_builtin_ls_at_scale_2_pow_minus_15() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/traces/ls-tiny.trace");
    let t = TraceWorkload::open(&path).unwrap_or_else(|e| panic!("{e}"));
    let w = by_name("ls", 1.0 / 32768.0, 1).unwrap();
    assert_same_streams(w.as_ref(), &t);
}

#[test]
fn warps_may_come_in_any_order_and_missing_warps_issue_nothing() {
    let text = "# a comment\nmcmvm-trace 1\nalloc X 0x1000 preferred-gpu\nkernel k 2 2\n\
                a 0 1 1 X w s 0 4 32 4 c=3\n\na 0 1 1 X r g 8 0,8,4088\na 0 0 0 X r s 128 8 16 8 # tail\n";
    let path = tmp("order.trace");
    std::fs::write(&path, text).unwrap();
    let t = TraceWorkload::open(&path).unwrap();
    assert!(t.allocations()[0].preferred_gpu);
    assert_eq!(t.instr_count(), 3);
    let w11: Vec<_> = t.warp_stream(0, 1, 1).collect();
    assert_eq!(w11.len(), 2);
    assert_eq!(w11[0].compute_cycles, 3);
    assert!(w11[0].write && !w11[1].write);
    assert_eq!(t.warp_stream(0, 0, 0).count(), 1);
    assert_eq!(t.warp_stream(0, 0, 1).count(), 0);
}

/// Open a trace made of `body` after a valid preamble and return (line, message).
fn error_of(body: &str) -> (u64, String) {
    let text =
        format!("mcmvm-trace 1\nalloc A 4096\nalloc B 64 stride=2 group=1\nkernel k 2 4\n{body}");
    let path = tmp("bad.trace");
    std::fs::write(&path, &text).unwrap();
    match TraceWorkload::open(&path) {
        Err(WorkloadError::Trace {
            line,
            source,
            path: p,
        }) => {
            assert_eq!(p, path);
            (line, source.to_string())
        }
        Err(e) => panic!("wrong error kind for {body:?}: {e}"),
        Ok(_) => panic!("accepted a malformed trace: {body:?}"),
    }
}

/// A line's error is kept typed as the source of the file-level error, so that the CLI's
/// error chain ends at what the line got wrong, and the one-line message quotes it once.
#[test]
fn a_line_error_is_the_typed_source_of_the_trace_error() {
    let text = "mcmvm-trace 1\nalloc A 4096\nkernel k 2 4\na 0 0 0 A x s 0 4 32 4\n";
    let path = tmp("typed-source.trace");
    std::fs::write(&path, text).unwrap();
    let e = TraceWorkload::open(&path)
        .err()
        .expect("a malformed access");
    let source = std::error::Error::source(&e)
        .and_then(|s| s.downcast_ref::<LineError>())
        .expect("the line error is the source");
    assert_eq!(
        source,
        &LineError::Expected {
            expected: "r or w".into(),
            found: "x".into()
        }
    );
    assert_eq!(
        e.to_string(),
        format!("{}:4: expected r or w, found `x`", path.display())
    );
}

#[test]
fn each_malformed_line_kind_names_its_line() {
    let cases: [(&str, &str); 22] = [
        ("bogus 1 2\n", "unknown record"),
        ("alloc C\n", "too few fields"),
        ("alloc C ten\n", "allocation size"),
        ("alloc C 0\n", "at least 1 byte"),
        ("alloc C 10 color=red\n", "unknown allocation flag"),
        ("alloc A 10\n", "declared twice"),
        ("kernel k2 1\n", "too few fields"),
        ("kernel k2 0 4\n", "at least 1"),
        ("kernel k2 1 33\n", "larger than 32"),
        ("a 5 0 0 A r s 0 4 32 4\n", "kernel index 5"),
        ("a 0 2 0 A r s 0 4 32 4\n", "thread block 2"),
        ("a 0 0 4 A r s 0 4 32 4\n", "warp 4"),
        ("a 0 0 0 Z r s 0 4 32 4\n", "unknown allocation `Z`"),
        ("a 0 0 0 A x s 0 4 32 4\n", "expected r or w"),
        ("a 0 0 0 A r q 0 4 32 4\n", "lane form"),
        ("a 0 0 0 A r s 0 4 33 4\n", "lane count"),
        ("a 0 0 0 A r s 4000 4 32 4\n", "outside allocation `A`"),
        ("a 0 0 0 A r g 4 1,2,x\n", "lane offset"),
        ("a 0 0 0 A r s 0 4 32 4 d=5\n", "unexpected field"),
        ("a 0 0 0 A r s 0 4 32 0\n", "element size"),
        (
            "a 0 0 0 A r s 0 4 32 4\na 0 0 1 A r s 0 4 32 4\na 0 0 0 A r s 0 4 32 4\n",
            "contiguous",
        ),
        (
            "a 0 0 0 A r s 0 4 32 4\nalloc C 10\n",
            "before the first access",
        ),
    ];
    for (body, expect) in cases {
        // A comment and a blank line first: they count as lines too.
        let (line, msg) = error_of(&format!("# spacer\n\n{body}"));
        let want = 4 + 2 + body.lines().count() as u64;
        assert!(
            msg.contains(expect),
            "{body:?}: message `{msg}` should say `{expect}`"
        );
        assert_eq!(line, want, "{body:?}: {msg}");
    }
}

#[test]
fn header_problems_are_reported() {
    let path = tmp("hdr.trace");
    for (text, expect, line) in [
        ("alloc A 1\n", "expected the header", 1),
        ("# c\nmcmvm-trace 2\n", "version 2 is not supported", 2),
        ("mcmvm-trace 1\nmcmvm-trace 1\n", "second header", 2),
    ] {
        std::fs::write(&path, text).unwrap();
        match TraceWorkload::open(&path) {
            Err(WorkloadError::Trace {
                line: l, source, ..
            }) => {
                let message = source.to_string();
                assert!(message.contains(expect), "{message}");
                assert_eq!(l, line);
            }
            other => panic!("{text:?}: {:?}", other.err().map(|e| e.to_string())),
        }
    }
    std::fs::write(&path, "").unwrap();
    assert!(matches!(
        TraceWorkload::open(&path),
        Err(WorkloadError::TraceFile { .. })
    ));
    let e = TraceWorkload::open(Path::new("/nonexistent/x.trace"))
        .err()
        .unwrap();
    assert!(e.to_string().starts_with("/nonexistent/x.trace: "), "{e}");
}
