//! Writing any workload as an Accel-Sim trace directory, so that mcmvm's built-in programs
//! can be fed to Accel-Sim-based tools, and the Accel-Sim reader checked against them.
//!
//! Each allocation becomes a `cudaMalloc,0xBASE,BYTES,NAME` line of `kernelslist.g` (an
//! mcmvm extension: Accel-Sim itself skips such lines) at a 2 MB-aligned base, 2 MB clear of
//! the previous one. Each kernel becomes `kernel-N.traceg` (N from 1, as the tracer counts)
//! with grid `(grid,1,1)` and block `(32 × warps,1,1)`. Every warp instruction is one line:
//! `LDG.E` / `STG.E` with a size suffix when the element is 1, 2, 8 or 16 bytes; a strided
//! access in base-stride form (mode 1), a gather as one address per lane (mode 0), its
//! active lanes the low ones of the mask; compute cycles as that many `NOP` lines before.

use super::regions::GAP;
use crate::workload::{Lanes, WarpInstr, Workload, WorkloadError};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

/// Where the first allocation is placed: a typical CUDA device address.
const FIRST_BASE: u64 = 0x7f00_0000_0000;

/// Write `w` into the directory `dir` (created if missing) as an Accel-Sim trace. Use small
/// scales: the files hold every instruction.
pub fn write_accelsim_trace(w: &dyn Workload, dir: &Path) -> Result<(), WorkloadError> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| WorkloadError::Io { path, source }
    };
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    let mut bases = Vec::with_capacity(w.allocations().len());
    let mut next = FIRST_BASE;
    for a in w.allocations() {
        bases.push(next);
        next = (next + a.bytes).next_multiple_of(GAP) + GAP;
    }
    let list = dir.join(super::accelsim::LIST);
    let mut out = BufWriter::new(File::create(&list).map_err(io(&list))?);
    let header = |out: &mut BufWriter<File>| -> std::io::Result<()> {
        for (a, base) in w.allocations().iter().zip(&bases) {
            writeln!(out, "cudaMalloc,{base:#x},{},{}", a.bytes, a.name)?;
        }
        for k in 1..=w.kernels().len() {
            writeln!(out, "kernel-{k}.traceg")?;
        }
        out.flush()
    };
    header(&mut out).map_err(io(&list))?;
    for ki in 0..w.kernels().len() {
        let path = dir.join(format!("kernel-{}.traceg", ki + 1));
        let mut out = BufWriter::new(File::create(&path).map_err(io(&path))?);
        write_kernel(w, ki, &bases, &mut out)
            .and_then(|_| out.flush())
            .map_err(io(&path))?;
    }
    Ok(())
}

fn write_kernel(
    w: &dyn Workload,
    ki: usize,
    bases: &[u64],
    out: &mut impl Write,
) -> std::io::Result<()> {
    let k = &w.kernels()[ki];
    let name: String = k.name.chars().filter(|c| !c.is_control()).collect();
    writeln!(out, "-kernel name = {name}")?;
    writeln!(out, "-kernel id = {}", ki + 1)?;
    writeln!(out, "-grid dim = ({},1,1)", k.grid)?;
    writeln!(out, "-block dim = ({},1,1)", 32 * k.warps_per_tb)?;
    writeln!(out, "-shmem = 0")?;
    writeln!(out, "-nregs = 32")?;
    writeln!(out, "-binary version = 70")?;
    writeln!(out, "-cuda stream id = 0")?;
    writeln!(out, "-nvbit version = none (written by mcmvm)")?;
    writeln!(out, "-accelsim tracer version = 3")?;
    writeln!(out)?;
    writeln!(out, "#traces format = PC mask dest_num [reg_dests] opcode src_num [reg_srcs] mem_width [adrrescompress?] [mem_addresses]")?;
    let mut lines = Vec::new();
    for tb in 0..k.grid {
        writeln!(out, "\n#BEGIN_TB\n\nthread block = {tb},0,0")?;
        for warp in 0..k.warps_per_tb {
            lines.clear();
            let mut pc = 0u64;
            for i in w.warp_stream(ki, tb, warp) {
                for _ in 0..i.compute_cycles {
                    lines.push(format!("{pc:04x} ffffffff 0 NOP 0 0"));
                    pc += 0x10;
                }
                let base = bases.get(i.alloc as usize).copied().unwrap_or(0);
                lines.push(format!("{pc:04x} {}", inst_line(&i, base)));
                pc += 0x10;
            }
            writeln!(out, "\nwarp = {warp}\ninsts = {}", lines.len())?;
            for l in &lines {
                writeln!(out, "{l}")?;
            }
        }
        writeln!(out, "\n#END_TB")?;
    }
    Ok(())
}

/// An instruction line after its PC: mask, operands, width and addresses (a base and
/// stride when Accel-Sim can read the stride, else the list) of access `i` at `base`.
fn inst_line(i: &WarpInstr, base: u64) -> String {
    let n = i.lanes.active();
    let mask = if n >= 32 { u32::MAX } else { (1u32 << n) - 1 };
    let elem = i.lanes.elem();
    let op = match (i.write, suffix(elem)) {
        (false, s) => format!("1 R2 LDG.E{s} 1 R4"),
        (true, s) => format!("0 STG.E{s} 2 R4 R2"),
    };
    let addrs = match &i.lanes {
        Lanes::Strided { offset, stride, .. } if i32::try_from(*stride).is_ok() => {
            format!("1 {:#x} {stride}", base + offset)
        }
        // Accel-Sim reads the stride as a 32-bit int: list wider ones.
        _ => {
            let mut s = String::from("0");
            for l in 0..n {
                s.push_str(&format!(" {:#018x}", base + i.lanes.lane_offset(l)));
            }
            s
        }
    };
    format!("{mask:08x} {op} {elem} {addrs}")
}

/// The opcode modifier Accel-Sim derives an access width from (4 bytes needs none; other
/// widths have no modifier, and the `mem_width` field carries them).
fn suffix(elem: u8) -> &'static str {
    match elem {
        1 => ".U8",
        2 => ".U16",
        8 => ".64",
        16 => ".128",
        _ => "",
    }
}
