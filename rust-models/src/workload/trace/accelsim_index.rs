//! The indexing pass over one Accel-Sim kernel file: validate the header and every thread
//! block, note where each warp's instruction lines start, and gather the touched addresses.

use super::accelsim::{KernelFile, Span};
use super::accelsim_parse::{inst, Header, Inst};
use super::lines::{dec, dim3, Source};
use super::regions::Touches;
use super::LineError;
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

/// The indexing pass over one kernel file, line by line.
struct Indexer<'a> {
    file: usize,
    stem: String,
    header: Header,
    /// Set at the first `#BEGIN_TB`, from the header: the kernel, its grid and its warps
    /// per block.
    kernel: Option<(Kernel, [u64; 3], u32)>,
    state: State,
    tbs_seen: HashSet<u32>,
    warps_seen: HashSet<u32>,
    addrs: Vec<u64>,
    warps: &'a mut HashMap<(usize, u32, u32), Span>,
    records: &'a mut u64,
    touches: &'a mut Touches,
}

/// Validate and index one kernel file: its header, then every thread block.
pub(crate) fn index_kernel(
    source: Source,
    file: usize,
    warps: &mut HashMap<(usize, u32, u32), Span>,
    records: &mut u64,
    touches: &mut Touches,
) -> Result<(Kernel, KernelFile), WorkloadError> {
    let mut ix = Indexer {
        file,
        stem: file_stem(&source.path),
        header: Header::default(),
        kernel: None,
        state: State::Header,
        tbs_seen: HashSet::new(),
        warps_seen: HashSet::new(),
        addrs: Vec::with_capacity(32),
        warps,
        records,
        touches,
    };
    let lines = source.for_each_line(|offset, _, text| ix.line(offset, text))?;
    if let Some(e) = ix.unfinished() {
        return Err(WorkloadError::Trace {
            path: source.path.clone(),
            line: lines,
            source: e,
        });
    }
    let kernel = match ix.kernel {
        Some((k, _, _)) => k,
        // A kernel without thread blocks: still a launch, of no memory instructions.
        None => {
            kernel_of(&ix.header, &ix.stem)
                .map_err(|e| WorkloadError::TraceFile {
                    path: source.path.clone(),
                    source: e,
                })?
                .0
        }
    };
    let meta = KernelFile {
        version: ix.header.version.unwrap_or(3),
        lineinfo: ix.header.lineinfo,
        source,
    };
    Ok((kernel, meta))
}

impl Indexer<'_> {
    /// One line at byte `offset`: what it may be depends on where the pass is.
    fn line(&mut self, offset: u64, text: &str) -> Result<(), LineError> {
        let l = text.trim();
        if l.is_empty() {
            return Ok(());
        }
        self.state = match std::mem::replace(&mut self.state, State::Header) {
            s @ (State::Header | State::Outside) => self.between_blocks(s, l)?,
            State::Begun => self.block_start(l)?,
            State::InBlock { .. } if l == "#END_TB" => State::Outside,
            State::InBlock { tb, xyz } => self.warp_start(tb, xyz, l)?,
            State::Warp { tb, xyz, warp } => {
                let n = l
                    .strip_prefix("insts")
                    .and_then(|r| r.trim_start().strip_prefix('='))
                    .ok_or_else(|| {
                        LineError::rule(format!("expected 'insts = N' after 'warp = {warp}'"))
                    })?;
                let insts = dec(n.trim(), "the instruction count")?;
                if insts == 0 {
                    State::InBlock { tb, xyz }
                } else {
                    let next = offset + text.len() as u64;
                    let span = Span {
                        offset: next,
                        insts,
                    };
                    self.warps.insert((self.file, tb, warp), span);
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
                self.instruction(l, warp, insts, left)?;
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
    }

    /// A line of the header, or between thread blocks.
    fn between_blocks(&mut self, s: State, l: &str) -> Result<State, LineError> {
        Ok(match s {
            State::Header if l.starts_with('-') => {
                self.header.line(l)?;
                State::Header
            }
            _ if l == "#BEGIN_TB" => {
                if self.kernel.is_none() {
                    self.kernel = Some(kernel_of(&self.header, &self.stem)?);
                }
                State::Begun
            }
            _ if l == "#END_TB" => {
                return Err(LineError::rule("'#END_TB' without a '#BEGIN_TB' before it"))
            }
            // `#traces format = …` and other comments.
            s if l.starts_with('#') => s,
            State::Header => {
                return Err(LineError::expected(
                    "a `-key = value` header line or '#BEGIN_TB'",
                    l,
                ))
            }
            _ => return Err(LineError::expected("'#BEGIN_TB'", l)),
        })
    }

    /// `thread block = X,Y,Z` after `#BEGIN_TB`.
    fn block_start(&mut self, l: &str) -> Result<State, LineError> {
        let xyz = l
            .strip_prefix("thread block")
            .and_then(|r| r.trim_start().strip_prefix('='))
            .ok_or_else(|| LineError::expected("'thread block = X,Y,Z' after '#BEGIN_TB'", l))?
            .trim()
            .to_string();
        let (_, grid, _) = self.kernel.as_ref().expect("set at #BEGIN_TB");
        let c = dim3(&xyz, "the thread block")?;
        if c.iter().zip(grid).any(|(c, g)| c >= g) {
            return Err(LineError::rule(format!(
                "thread block {xyz} is outside the grid ({},{},{})",
                grid[0], grid[1], grid[2]
            )));
        }
        let tb = (c[0] + grid[0] * (c[1] + grid[1] * c[2])) as u32;
        if !self.tbs_seen.insert(tb) {
            return Err(LineError::rule(format!("thread block {xyz} appears twice")));
        }
        self.warps_seen.clear();
        Ok(State::InBlock { tb, xyz })
    }

    /// `warp = W` inside thread block `xyz`.
    fn warp_start(&mut self, tb: u32, xyz: String, l: &str) -> Result<State, LineError> {
        let w = l
            .strip_prefix("warp")
            .and_then(|r| r.trim_start().strip_prefix('='))
            .ok_or_else(|| {
                LineError::expected(format!("'warp = W' or '#END_TB' in thread block {xyz}"), l)
            })?;
        let warp = dec(w.trim(), "the warp")?;
        let (_, _, per_block) = self.kernel.as_ref().expect("set at #BEGIN_TB");
        if warp >= *per_block as u64 {
            return Err(LineError::rule(format!(
                "warp {warp} is outside the block's {per_block} warps"
            )));
        }
        if !self.warps_seen.insert(warp as u32) {
            return Err(LineError::rule(format!(
                "warp {warp} appears twice in thread block {xyz}"
            )));
        }
        Ok(State::Warp {
            tb,
            xyz,
            warp: warp as u32,
        })
    }

    /// One of a warp's `insts` instruction lines, `left` of them still to come: counted,
    /// and its addresses touched.
    fn instruction(&mut self, l: &str, warp: u32, insts: u64, left: u64) -> Result<(), LineError> {
        if l.starts_with('#') || l.starts_with("warp") || l.starts_with("thread") {
            return Err(LineError::expected(
                format!("{left} more instruction lines for warp {warp} (insts = {insts})"),
                l,
            ));
        }
        let version = self.header.version.unwrap_or(3);
        match inst(l, version, self.header.lineinfo, &mut self.addrs)? {
            Inst::Compute => {}
            Inst::Mem { elem, .. } => {
                *self.records += 1;
                for &a in &self.addrs {
                    self.touches.touch(a, elem);
                }
            }
        }
        Ok(())
    }

    /// What the file still owed when it ended, if it ended inside a thread block.
    fn unfinished(&self) -> Option<LineError> {
        match &self.state {
            State::Header | State::Outside => None,
            State::Begun => Some(LineError::Short {
                what: "file ends early",
                expected: "'thread block = X,Y,Z'".to_string(),
            }),
            State::InBlock { xyz, .. } | State::Warp { xyz, .. } | State::Insts { xyz, .. } => {
                Some(LineError::rule(format!(
                    "file ends early: thread block {xyz} is not closed: expected '#END_TB'"
                )))
            }
        }
    }
}

/// The kernel a complete header describes, with its grid and warps per block.
fn kernel_of(h: &Header, stem: &str) -> Result<(Kernel, [u64; 3], u32), LineError> {
    let missing = |what: &str| {
        LineError::rule(format!(
            "expected '-{what} dim = (X,Y,Z)' in the header before the first '#BEGIN_TB'"
        ))
    };
    let grid = h.grid.ok_or_else(|| missing("grid"))?;
    let block = h.block.ok_or_else(|| missing("block"))?;
    let blocks = grid.iter().try_fold(1u64, |a, &d| a.checked_mul(d));
    let blocks = blocks
        .filter(|&b| b <= u32::MAX as u64)
        .ok_or_else(|| LineError::rule("the grid has more than 2^32 thread blocks"))?;
    let threads = block.iter().try_fold(1u64, |a, &d| a.checked_mul(d));
    let warps = threads
        .map(|t| t.div_ceil(32))
        .filter(|&w| w <= 32)
        .ok_or_else(|| {
            LineError::rule(format!(
                "block dim ({},{},{}) has more than 1024 threads",
                block[0], block[1], block[2]
            ))
        })?;
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
