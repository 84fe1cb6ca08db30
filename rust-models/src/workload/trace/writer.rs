//! Writing any workload to the trace format.

use super::{HEADER, VERSION};
use crate::workload::{Lanes, WarpInstr, Workload, WorkloadError};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

/// Write `w` to `path` in trace format version 1: every warp of every kernel, in kernel,
/// thread-block, warp order. Use small scales: the file holds every access.
pub fn write_trace(w: &dyn Workload, path: &Path) -> Result<(), WorkloadError> {
    let io = |source| WorkloadError::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut out = BufWriter::new(File::create(path).map_err(io)?);
    write_to(w, &mut out).map_err(io)?;
    out.flush().map_err(io)
}

/// The declarations (header, name, allocations, kernels), then every warp's records.
fn write_to(w: &dyn Workload, out: &mut impl Write) -> std::io::Result<()> {
    writeln!(out, "{HEADER} {VERSION}")?;
    if !w.description().is_empty() {
        writeln!(out, "# {}", w.description().replace('\n', " "))?;
    }
    if !w.name().contains(char::is_whitespace) && !w.name().is_empty() {
        writeln!(out, "name {}", w.name())?;
    }
    for a in w.allocations() {
        write!(out, "alloc {} {}", a.name, a.bytes)?;
        if let Some(s) = a.stride_hint {
            write!(out, " stride={s}")?;
        }
        if a.preferred_gpu {
            write!(out, " preferred-gpu")?;
        }
        if let Some(g) = a.similarity_group {
            write!(out, " group={g}")?;
        }
        writeln!(out)?;
    }
    for k in w.kernels() {
        writeln!(out, "kernel {} {} {}", k.name, k.grid, k.warps_per_tb)?;
    }
    let names: Vec<&str> = w.allocations().iter().map(|a| a.name.as_str()).collect();
    for (ki, k) in w.kernels().iter().enumerate() {
        for tb in 0..k.grid {
            for warp in 0..k.warps_per_tb {
                for i in w.warp_stream(ki, tb, warp) {
                    let alloc = names.get(i.alloc as usize).copied().unwrap_or("?");
                    write_access(out, (ki, tb, warp), alloc, &i)?;
                }
            }
        }
    }
    Ok(())
}

/// One access record: `a KERNEL TB WARP ALLOC r|w` and the lanes and flags of `i`.
fn write_access(
    out: &mut impl Write,
    (ki, tb, warp): (usize, u32, u32),
    alloc: &str,
    i: &WarpInstr,
) -> std::io::Result<()> {
    let rw = if i.write { 'w' } else { 'r' };
    write!(out, "a {ki} {tb} {warp} {alloc} {rw} ")?;
    match &i.lanes {
        Lanes::Strided {
            offset,
            stride,
            lanes,
            elem,
        } => write!(out, "s {offset} {stride} {lanes} {elem}")?,
        Lanes::Gather { elem, .. } | Lanes::Rows { elem, .. } => {
            // A tile of rows has no record of its own: the gather of its lanes.
            write!(out, "g {elem} ")?;
            for j in 0..i.lanes.active() {
                if j > 0 {
                    write!(out, ",")?;
                }
                write!(out, "{}", i.lanes.lane_offset(j))?;
            }
        }
    }
    if i.compute_cycles > 0 {
        write!(out, " c={}", i.compute_cycles)?;
    }
    if i.independent {
        write!(out, " indep")?;
    }
    writeln!(out)
}
