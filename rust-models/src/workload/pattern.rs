//! The access-pattern programs of the Forest study: `ls` (linear streaming), `hchi` (dense
//! irregular), `hcli` (sparse irregular), `lc` (low coverage) and `mixed` (one object of each
//! class in one kernel); the classes are described in [`super::phases`].
//!
//! Each is a data-parallel kernel launched several times (SpecForest's pattern recording
//! keys on repeated kernels). The thread-indexed objects (`idx`, `out`, the vector-add
//! arrays) declare a stride hint of one page and share similarity group 0, as SpecForest's
//! compiler pass would mark `a[i]`-style accesses.

use super::phases::{Class, Phase, PhaseGen, WARPS};
use super::program::{check_scale, grid_u32, scaled, Program, WARP};
use super::{Allocation, Workload, WorkloadError};

/// Names of the pattern workloads.
#[cfg(test)]
pub(crate) const NAMES: [&str; 5] = ["ls", "hchi", "hcli", "lc", "mixed"];

const MB: u64 = 1 << 20;

/// (object name, bytes at scale 1, class, thread-indexed)
type ObjSpec = (&'static str, u64, Class, bool);

/// Build one of the pattern workloads.
pub(crate) fn build(
    name: &str,
    scale: f64,
    seed: u64,
) -> Option<Result<Box<dyn Workload>, WorkloadError>> {
    let (objs, threads, kname, iters, what) = spec(name)?;
    Some(build_spec(
        name,
        &objs,
        threads,
        (kname, iters),
        what,
        scale,
        seed,
    ))
}

/// (objects, threads at scale 1, kernel name, launches, description)
type Spec = (Vec<ObjSpec>, u64, &'static str, u32, &'static str);

/// The spec of pattern workload `name`, if it is one.
fn spec(name: &str) -> Option<Spec> {
    use Class::*;
    let idx = ("idx", 4 * MB, Stream { write: false }, true);
    let out = ("out", 4 * MB, Stream { write: true }, true);
    // (objects, threads at scale 1, kernel name, launches, description)
    let spec = match name {
        "ls" => (
            vec![
                ("A", 64 * MB, Stream { write: false }, true),
                ("B", 64 * MB, Stream { write: false }, true),
                ("C", 64 * MB, Stream { write: true }, true),
            ],
            16 * MB,
            "vecadd",
            2,
            "linear streaming (LS): C = A + B, one element per thread",
        ),
        "hchi" => (
            vec![idx, ("table", 96 * MB, Dense { per_warp: 16 }, false), out],
            MB,
            "gather_dense",
            4,
            "dense irregular (HCHI): 16 uniform random gathers per thread over a 96 MB table",
        ),
        "hcli" => (
            vec![idx, ("table", 256 * MB, Sparse { per_warp: 8 }, false), out],
            MB,
            "gather_sparse",
            4,
            "sparse irregular (HCLI): gathers over a 256 MB table touching 1 page per 64 KB",
        ),
        "lc" => (
            vec![idx, ("table", 256 * MB, Hot { per_warp: 16 }, false), out],
            MB,
            "gather_hot",
            4,
            "low coverage (LC): gathers confined to a 10% window of a 256 MB table",
        ),
        "mixed" => (
            vec![
                ("stream", 32 * MB, Stream { write: false }, true),
                ("dense", 32 * MB, Dense { per_warp: 8 }, false),
                ("sparse", 64 * MB, Sparse { per_warp: 4 }, false),
                ("hot", 64 * MB, Hot { per_warp: 8 }, false),
                ("out", 32 * MB, Stream { write: true }, true),
            ],
            MB,
            "mixed",
            3,
            "mixed pattern: one LS, HCHI, HCLI and LC object each, and an LS output",
        ),
        _ => return None,
    };
    Some(spec)
}

fn build_spec(
    name: &str,
    objs: &[ObjSpec],
    threads: u64,
    (kname, iters): (&str, u32),
    what: &str,
    scale: f64,
    seed: u64,
) -> Result<Box<dyn Workload>, WorkloadError> {
    check_scale(name, scale)?;
    let tb_threads = WARPS * WARP;
    let threads = scaled(name, scale, threads, tb_threads, tb_threads)?;
    let warps = threads / WARP;
    let grid = grid_u32(name, scale, threads / tb_threads)?;
    let mut allocations = Vec::new();
    let mut bytes = Vec::new();
    let mut touches = Vec::new();
    for (i, &(oname, base, class, indexed)) in objs.iter().enumerate() {
        // A whole number of 128-byte lines per warp: every streaming slice is equal.
        let b = scaled(name, scale, base, warps * 128, warps * 128)?;
        let mut a = Allocation::new(oname, b);
        if indexed {
            a = a.with_stride(1).in_group(0);
        }
        allocations.push(a);
        bytes.push(b);
        touches.push((i as u16, class));
    }
    let phase = Phase {
        name: kname.to_string(),
        grid,
        touches,
    };
    let gen = PhaseGen {
        bytes,
        phases: vec![phase; iters as usize],
        seed,
    };
    Ok(Box::new(Program {
        name: name.to_string(),
        description: format!("{what}; {threads} threads x {iters} launches"),
        allocations,
        kernels: gen.kernels(),
        gen,
    }))
}
