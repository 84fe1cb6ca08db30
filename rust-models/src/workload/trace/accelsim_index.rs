//! The indexing pass over one Accel-Sim kernel file: validate the header and every thread
//! block, note where each warp's instruction lines start, and gather the touched addresses.

use super::accelsim::{KernelFile, Span};
use super::accelsim_parse::{inst, Header, Inst};
use super::lines::{dec, dim3, Source};
use super::regions::Touches;
use crate::workload::{Kernel, WorkloadError};
use std::collections::{HashMap, HashSet};
use std::path::Path;

/// Where the indexing pass of one kernel file is.
enum State {
    Header,
    /// Between thread blocks.
    Outside,
    /// After `#BEGIN_TB`.
    Begun,
    /// Inside thread block `tb` (linear index, and as written).
    InBlock {
        tb: u32,
        xyz: String,
    },
    /// After `warp = W`.
    Warp {
        tb: u32,
        xyz: String,
        warp: u32,
    },
    /// Reading the `left` instruction lines of a warp declared with `insts`.
    Insts {
        tb: u32,
        xyz: String,
        warp: u32,
        insts: u64,
        left: u64,
    },
}

/// Validate and index one kernel file: its header, then every thread block.
pub(crate) fn index_kernel(
    source: Source,
    file: usize,
    warps: &mut HashMap<(usize, u32, u32), Span>,
    records: &mut u64,
    touches: &mut Touches,
) -> Result<(Kernel, KernelFile), WorkloadError> {
    let mut header = Header::default();
    let mut kernel: Option<(Kernel, [u64; 3], u32)> = None;
    let mut state = State::Header;
    let mut tbs_seen: HashSet<u32> = HashSet::new();
    let mut warps_seen: HashSet<u32> = HashSet::new();
    let mut addrs = Vec::with_capacity(32);
    let stem = file_stem(&source.path);
    let lines = source.for_each_line(|offset, _, text| {
        let l = text.trim();
        if l.is_empty() {
            return Ok(());
        }
        state = match std::mem::replace(&mut state, State::Header) {
            State::Header if l.starts_with('-') => {
                header.line(l)?;
                State::Header
            }
            State::Header | State::Outside if l == "#BEGIN_TB" => {
                if kernel.is_none() {
                    kernel = Some(kernel_of(&header, &stem)?);
                }
                State::Begun
            }
            State::Header | State::Outside if l == "#END_TB" => {
                return Err("'#END_TB' without a '#BEGIN_TB' before it".into())
            }
            // `#traces format = …` and other comments.
            s @ (State::Header | State::Outside) if l.starts_with('#') => s,
            State::Header => {
                return Err(format!(
                    "expected a `-key = value` header line or '#BEGIN_TB', found `{l}`"
                ))
            }
            State::Outside => return Err(format!("expected '#BEGIN_TB', found `{l}`")),
            State::Begun => {
                let xyz = l
                    .strip_prefix("thread block")
                    .and_then(|r| r.trim_start().strip_prefix('='))
                    .ok_or_else(|| {
                        format!("expected 'thread block = X,Y,Z' after '#BEGIN_TB', found `{l}`")
                    })?
                    .trim()
                    .to_string();
                let (_, grid, _) = kernel.as_ref().expect("set at #BEGIN_TB");
                let c = dim3(&xyz, "the thread block")?;
                if c.iter().zip(grid).any(|(c, g)| c >= g) {
                    return Err(format!(
                        "thread block {xyz} is outside the grid ({},{},{})",
                        grid[0], grid[1], grid[2]
                    ));
                }
                let tb = (c[0] + grid[0] * (c[1] + grid[1] * c[2])) as u32;
                if !tbs_seen.insert(tb) {
                    return Err(format!("thread block {xyz} appears twice"));
                }
                warps_seen.clear();
                State::InBlock { tb, xyz }
            }
            State::InBlock { .. } if l == "#END_TB" => State::Outside,
            State::InBlock { tb, xyz } => {
                let w = l
                    .strip_prefix("warp")
                    .and_then(|r| r.trim_start().strip_prefix('='))
                    .ok_or_else(|| {
                        format!("expected 'warp = W' or '#END_TB' in thread block {xyz}, found `{l}`")
                    })?;
                let warp = dec(w.trim(), "the warp")?;
                let (_, _, per_block) = kernel.as_ref().expect("set at #BEGIN_TB");
                if warp >= *per_block as u64 {
                    return Err(format!("warp {warp} is outside the block's {per_block} warps"));
                }
                if !warps_seen.insert(warp as u32) {
                    return Err(format!("warp {warp} appears twice in thread block {xyz}"));
                }
                State::Warp {
                    tb,
                    xyz,
                    warp: warp as u32,
                }
            }
            State::Warp { tb, xyz, warp } => {
                let n = l
                    .strip_prefix("insts")
                    .and_then(|r| r.trim_start().strip_prefix('='))
                    .ok_or_else(|| format!("expected 'insts = N' after 'warp = {warp}'"))?;
                let insts = dec(n.trim(), "the instruction count")?;
                if insts == 0 {
                    State::InBlock { tb, xyz }
                } else {
                    let next = offset + text.len() as u64;
                    warps.insert((file, tb, warp), Span { offset: next, insts });
                    State::Insts {
                        tb,
                        xyz,
                        warp,
                        insts,
                        left: insts,
                    }
                }
            }
            State::Insts {
                tb,
                xyz,
                warp,
                insts,
                left,
            } => {
                if l.starts_with('#') || l.starts_with("warp") || l.starts_with("thread") {
                    return Err(format!(
                        "expected {left} more instruction lines for warp {warp} (insts = {insts}), found `{l}`"
                    ));
                }
                match inst(l, header.version.unwrap_or(3), header.lineinfo, &mut addrs)? {
                    Inst::Compute => {}
                    Inst::Mem { elem, .. } => {
                        *records += 1;
                        for &a in &addrs {
                            touches.touch(a, elem);
                        }
                    }
                }
                if left == 1 {
                    State::InBlock { tb, xyz }
                } else {
                    State::Insts {
                        tb,
                        xyz,
                        warp,
                        insts,
                        left: left - 1,
                    }
                }
            }
        };
        Ok(())
    })?;
    let unfinished = match &state {
        State::Header | State::Outside => None,
        State::Begun => Some("expected 'thread block = X,Y,Z'".to_string()),
        State::InBlock { xyz, .. } | State::Warp { xyz, .. } | State::Insts { xyz, .. } => Some(
            format!("thread block {xyz} is not closed: expected '#END_TB'"),
        ),
    };
    if let Some(m) = unfinished {
        return Err(WorkloadError::Trace {
            path: source.path.clone(),
            line: lines,
            message: format!("file ends early: {m}"),
        });
    }
    let kernel = match kernel {
        Some((k, _, _)) => k,
        // A kernel without thread blocks: still a launch, of no memory instructions.
        None => {
            kernel_of(&header, &stem)
                .map_err(|message| WorkloadError::TraceFile {
                    path: source.path.clone(),
                    message,
                })?
                .0
        }
    };
    let meta = KernelFile {
        version: header.version.unwrap_or(3),
        lineinfo: header.lineinfo,
        source,
    };
    Ok((kernel, meta))
}

/// The kernel a complete header describes, with its grid and warps per block.
fn kernel_of(h: &Header, stem: &str) -> Result<(Kernel, [u64; 3], u32), String> {
    let grid = h
        .grid
        .ok_or("expected '-grid dim = (X,Y,Z)' in the header before the first '#BEGIN_TB'")?;
    let block = h
        .block
        .ok_or("expected '-block dim = (X,Y,Z)' in the header before the first '#BEGIN_TB'")?;
    let blocks = grid.iter().try_fold(1u64, |a, &d| a.checked_mul(d));
    let blocks = blocks
        .filter(|&b| b <= u32::MAX as u64)
        .ok_or("the grid has more than 2^32 thread blocks")?;
    let threads = block.iter().try_fold(1u64, |a, &d| a.checked_mul(d));
    let warps = threads
        .map(|t| t.div_ceil(32))
        .filter(|&w| w <= 32)
        .ok_or(format!(
            "block dim ({},{},{}) has more than 1024 threads",
            block[0], block[1], block[2]
        ))?;
    let name = h.name.clone().unwrap_or_else(|| stem.to_string());
    Ok((
        Kernel::new(name, blocks as u32, warps as u32),
        grid,
        warps as u32,
    ))
}

/// `kernel-3` of `kernel-3.traceg.xz`.
fn file_stem(p: &Path) -> String {
    let n = p
        .file_name()
        .map_or(String::new(), |s| s.to_string_lossy().into_owned());
    n.split('.').next().unwrap_or(&n).to_string()
}
