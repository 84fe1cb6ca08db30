//! mcmvm's own trace format (`docs/trace-format.md`), through `TraceWorkload::open`.

use super::{fixture, rejection, Outcome, Target, Verdict};
use crate::mutate::{edge_number, mutate};
use crate::runner::FailureKind;
use crate::Input;
use mcmvm_models::workload::trace::TraceWorkload;
use mcmvm_models::workload::{Workload, WorkloadError};
use rand::seq::SliceRandom;
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use std::fmt::Write;
use std::path::Path;

pub struct McmvmTrace;

const FILE: &str = "input.trace";

/// A number: mostly small and valid, sometimes at an edge.
pub(crate) fn n(rng: &mut ChaCha8Rng, typical: u64) -> String {
    if rng.gen_bool(0.03) {
        edge_number(rng)
    } else {
        rng.gen_range(0..=typical).to_string()
    }
}

fn generate_text(rng: &mut ChaCha8Rng) -> String {
    let mut t = String::new();
    let allocs = header_and_allocations(rng, &mut t);
    let shapes = kernel_lines(rng, &mut t);
    for _ in 0..rng.gen_range(0..12) {
        let k = rng.gen_range(0..shapes.len());
        let (grid, warps) = shapes[k];
        let (tb, w) = (rng.gen_range(0..grid.min(8)), rng.gen_range(0..warps));
        for _ in 0..rng.gen_range(1..6) {
            access_line(rng, &mut t, (k, tb, w), allocs);
        }
    }
    t
}

/// The header (sometimes missing), an optional name and 1 to 4 allocation lines; returns
/// the allocations written.
fn header_and_allocations(rng: &mut ChaCha8Rng, t: &mut String) -> i32 {
    if rng.gen_bool(0.95) {
        t.push_str("mcmvm-trace 1\n");
    }
    if rng.gen_bool(0.3) {
        t.push_str("name fuzz # a comment\n");
    }
    // `i32`, as these draws have always been typed: another type draws other numbers.
    let allocs: i32 = rng.gen_range(1..5);
    for a in 0..allocs {
        let _ = write!(t, "alloc A{a} {}", n(rng, 1 << 20));
        if rng.gen_bool(0.3) {
            let _ = write!(t, " stride={}", n(rng, 16));
        }
        if rng.gen_bool(0.2) {
            t.push_str(" preferred-gpu");
        }
        if rng.gen_bool(0.3) {
            let _ = write!(t, " group={}", n(rng, 4));
        }
        t.push('\n');
    }
    allocs
}

/// 1 to 3 kernel lines; returns each kernel's (grid, warps per block).
fn kernel_lines(rng: &mut ChaCha8Rng, t: &mut String) -> Vec<(u64, i32)> {
    let kernels: usize = rng.gen_range(1..4);
    let mut shapes = Vec::new();
    for k in 0..kernels {
        let grid = if rng.gen_bool(0.05) {
            u32::MAX as u64
        } else {
            rng.gen_range(1..6)
        };
        let warps: i32 = rng.gen_range(1..=32);
        shapes.push((grid, warps));
        let _ = writeln!(t, "kernel k{k} {grid} {warps}");
    }
    shapes
}

/// One access line of warp `(kernel, block, warp)` to one of `allocs` allocations: a
/// strided or a gathered access, with optional compute cycles and `indep`.
fn access_line(rng: &mut ChaCha8Rng, t: &mut String, (k, tb, w): (usize, u64, i32), allocs: i32) {
    let alloc = rng.gen_range(0..allocs);
    let rw = if rng.gen() { "r" } else { "w" };
    let _ = write!(t, "a {k} {tb} {w} A{alloc} {rw} ");
    if rng.gen_bool(0.6) {
        let _ = write!(
            t,
            "s {} {} {} {}",
            n(rng, 4096),
            n(rng, 64),
            rng.gen_range(1..=32),
            [1, 2, 4, 8, 16].choose(rng).expect("sizes")
        );
    } else {
        let offs: Vec<String> = (0..rng.gen_range(1..=32)).map(|_| n(rng, 8192)).collect();
        let _ = write!(
            t,
            "g {} {}",
            [1, 4, 8].choose(rng).expect("sizes"),
            offs.join(",")
        );
    }
    if rng.gen_bool(0.3) {
        let _ = write!(t, " c={}", n(rng, 100));
    }
    if rng.gen_bool(0.2) {
        t.push_str(" indep");
    }
    t.push('\n');
}

impl Target for McmvmTrace {
    fn name(&self) -> &'static str {
        "mcmvm-trace"
    }

    fn generate(&self, rng: &mut ChaCha8Rng) -> Input {
        text_trace_input(
            rng,
            FILE,
            "configs/traces/ls-tiny.trace",
            generate_text,
            0.9,
        )
    }

    fn run(&self, dir: &Path) -> Outcome {
        open_trace_file(&dir.join(FILE))
    }
}

/// One text trace file `file`: the shipped `fixture` (30 %) or a generated text, mutated
/// with probability `mutate_p`.
pub(crate) fn text_trace_input(
    rng: &mut ChaCha8Rng,
    file: &str,
    fixture_path: &str,
    generate: fn(&mut ChaCha8Rng) -> String,
    mutate_p: f64,
) -> Input {
    let text = if rng.gen_bool(0.3) {
        fixture(fixture_path)
    } else {
        generate(rng).into_bytes()
    };
    let bytes = if rng.gen_bool(mutate_p) {
        mutate(&text, rng, 4)
    } else {
        text
    };
    Input::single(file, bytes)
}

/// Open `path` as a trace the way `mcmvm run --trace` does, and read an accepted one back.
pub(crate) fn open_trace_file(path: &Path) -> Outcome {
    match TraceWorkload::open(path) {
        Ok(w) => read_back(&w),
        Err(e) => workload_rejection(&e, path),
    }
}

/// A rejection of a trace: one line, naming the file, and the line for a line's error.
pub(crate) fn workload_rejection(e: &WorkloadError, file: &Path) -> Outcome {
    let line = match e {
        WorkloadError::Trace { line, path, .. } if path == file => Some(*line),
        _ => None,
    };
    rejection(&e.to_string(), file, line)
}

/// Warp slots walked at most by the read-back check.
const WALK_LIMIT: u64 = 1 << 16;

/// An accepted trace must stream back every record it counted, with no stream error.
pub(crate) fn read_back(w: &TraceWorkload) -> Outcome {
    let slots: u64 = w
        .kernels()
        .iter()
        .map(|k| k.grid as u64 * k.warps_per_tb as u64)
        .sum();
    let walked = if slots <= WALK_LIMIT {
        Some(mcmvm_models::workload::count_by_walking(w))
    } else {
        None
    };
    // The counted instructions (external formats walk their indexed warps to count).
    let counted = w.instr_count();
    if let Some(e) = w.stream_error() {
        return Err((
            FailureKind::Readback,
            format!("accepted, but streaming fails: {e}"),
        ));
    }
    if let Some(walked) = walked {
        if walked != counted {
            return Err((
                FailureKind::Readback,
                format!("{counted} instructions counted, {walked} streamed"),
            ));
        }
    }
    if counted < w.records() {
        return Err((
            FailureKind::Readback,
            format!("{} records but {counted} instructions", w.records()),
        ));
    }
    Ok(Verdict::Accepted)
}
