//! Reading the text output of NVBit's example tool `mem_trace`: one line per executed warp
//! memory instruction, with all 32 lanes' addresses,
//!
//! ```text
//! MEMTRACE: CTX 0x00005581 - grid_launch_id 0 - CTA 0,0,0 - warp 3 - LDG.E.64 - 0x7f.. 0x0 ..
//! ```
//!
//! and, at each launch, `MEMTRACE: CTX … - LAUNCH - Kernel pc … - Kernel name NAME - grid
//! launch id N - grid size X,Y,Z - block size X,Y,Z - nregs … - shmem … - cuda stream id …`.
//! Every other line (the application's own output, NVBit's banner) is ignored.
//!
//! Warps' lines are interleaved, so the index keeps the byte offset of every line of every
//! warp (8 bytes per traced instruction, against some 600 bytes of text).

use super::lines::{dec, dim3, hex, PosLines, Source, StreamError};
use super::opcode::{global_access, width_from_opcode};
use super::regions::{progression, Regions, Touches};
use crate::workload::{Allocation, Kernel, WarpInstr, WarpStream, WorkloadError};
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::path::Path;

/// The prefix of every line the tool prints.
pub(crate) const PREFIX: &str = "MEMTRACE:";

/// A parsed access line; the active lanes' addresses go to the caller's buffer.
#[derive(Debug, PartialEq)]
pub(crate) struct Access<'a> {
    pub ctx: u64,
    pub launch: u64,
    pub cta: [u64; 3],
    pub warp: u64,
    pub opcode: &'a str,
}

/// A parsed launch line.
#[derive(Debug, PartialEq)]
pub(crate) struct Launch {
    pub ctx: u64,
    pub launch: u64,
    pub name: String,
    pub grid: [u64; 3],
    pub block: [u64; 3],
}

#[derive(Debug, PartialEq)]
pub(crate) enum Line<'a> {
    Access(Access<'a>),
    Launch(Launch),
    /// Not a line of the tool's trace (or one of its verbose messages).
    Other,
}

const ACCESS: &str =
    "MEMTRACE: CTX 0xC - grid_launch_id N - CTA X,Y,Z - warp W - OPCODE - ADDR x32";
const LAUNCH: &str =
    "MEMTRACE: CTX 0xC - LAUNCH - Kernel pc 0xP - Kernel name NAME - grid launch id N - grid size X,Y,Z - block size X,Y,Z - …";

/// Parse one line, leaving an access's active (non-zero) lane addresses in `addrs`.
pub(crate) fn parse<'a>(line: &'a str, addrs: &mut Vec<u64>) -> Result<Line<'a>, String> {
    let Some(rest) = line.trim().strip_prefix(PREFIX) else {
        return Ok(Line::Other);
    };
    let rest = rest.trim_start();
    let ctx = |p: &str, form: &str| {
        let c = p
            .strip_prefix("CTX ")
            .ok_or_else(|| format!("expected `{form}`"))?;
        hex(c.trim(), "the context")
    };
    if rest.contains(" - LAUNCH") {
        let c = ctx(rest.split(" - ").next().unwrap_or(""), LAUNCH)?;
        let bad = || format!("expected `{LAUNCH}`");
        let name_at = rest.find("Kernel name ").ok_or_else(bad)? + "Kernel name ".len();
        let name_end = rest[name_at..].find(" - grid launch id ").ok_or_else(bad)? + name_at;
        let after = &rest[name_end..];
        let field = |key: &str| {
            let at = after.find(key).ok_or_else(bad)? + key.len();
            Ok::<&str, String>(after[at..].split(" - ").next().unwrap_or("").trim())
        };
        return Ok(Line::Launch(Launch {
            ctx: c,
            launch: dec(field(" - grid launch id ")?, "the grid launch id")?,
            name: rest[name_at..name_end].trim().to_string(),
            grid: dim3(field(" - grid size ")?, "the grid size")?,
            block: dim3(field(" - block size ")?, "the block size")?,
        }));
    }
    if !rest.contains("grid_launch_id") {
        return Ok(Line::Other);
    }
    let parts: Vec<&str> = rest.splitn(6, " - ").collect();
    if parts.len() < 6 {
        return Err(format!("expected `{ACCESS}`"));
    }
    fn key<'s>(p: &'s str, k: &str) -> Result<&'s str, String> {
        p.strip_prefix(k)
            .map(str::trim)
            .ok_or_else(|| format!("expected `{k} …` in `{ACCESS}`, found `{p}`"))
    }
    let access = Access {
        ctx: ctx(parts[0], ACCESS)?,
        launch: dec(key(parts[1], "grid_launch_id")?, "the grid launch id")?,
        cta: dim3(key(parts[2], "CTA")?, "the CTA")?,
        warp: dec(key(parts[3], "warp")?, "the warp")?,
        opcode: parts[4].trim(),
    };
    addrs.clear();
    let mut lanes = 0;
    for tok in parts[5].split_whitespace() {
        lanes += 1;
        let a = hex(tok, "a lane address")?;
        // The tool prints 0x0 for a lane that is not active.
        if a != 0 {
            addrs.push(a);
        }
    }
    if lanes != 32 {
        return Err(format!("expected 32 lane addresses, found {lanes}"));
    }
    Ok(Line::Access(access))
}

/// What the index pass learns of one launch.
#[derive(Default)]
struct Launched {
    name: Option<String>,
    grid: Option<[u64; 3]>,
    block: Option<[u64; 3]>,
    ctas: HashMap<[u64; 3], Cta>,
}

/// One CTA of a launch.
struct Cta {
    /// The line it first appears at (for messages).
    line: u64,
    /// Per warp id as printed, the byte offsets of its lines.
    warps: BTreeMap<u64, Vec<u64>>,
}

/// An NVBit mem_trace output as a workload.
pub(crate) struct NvbitTrace {
    source: Source,
    name: String,
    allocations: Vec<Allocation>,
    kernels: Vec<Kernel>,
    warps: HashMap<(u32, u32, u32), Vec<u64>>,
    regions: Regions,
    records: u64,
    stream_error: StreamError,
}

impl NvbitTrace {
    pub fn open(path: &Path) -> Result<NvbitTrace, WorkloadError> {
        let source = Source::open(path)?;
        let mut order: HashMap<(u64, u64), usize> = HashMap::new();
        let mut launches: Vec<Launched> = Vec::new();
        let mut touches = Touches::new(Vec::new());
        let mut records = 0u64;
        let mut addrs = Vec::with_capacity(32);
        source.for_each_line(|offset, line, text| {
            let parsed = parse(text, &mut addrs)?;
            let key = match &parsed {
                Line::Other => return Ok(()),
                Line::Launch(l) => (l.ctx, l.launch),
                Line::Access(a) => (a.ctx, a.launch),
            };
            let n = order.len();
            let k = *order.entry(key).or_insert(n);
            if k == launches.len() {
                launches.push(Launched::default());
            }
            let info = &mut launches[k];
            let a = match parsed {
                Line::Access(a) => a,
                Line::Launch(l) => {
                    if info.grid.is_some() {
                        return Err(format!("grid launch id {} is launched twice", l.launch));
                    }
                    info.name = Some(l.name);
                    info.grid = Some(l.grid);
                    info.block = Some(l.block);
                    return Ok(());
                }
                Line::Other => return Ok(()),
            };
            if let Some(g) = info.grid {
                if a.cta.iter().zip(&g).any(|(c, g)| c >= g) {
                    return Err(format!(
                        "CTA {},{},{} is outside the launch's grid size {},{},{}",
                        a.cta[0], a.cta[1], a.cta[2], g[0], g[1], g[2]
                    ));
                }
            }
            let cta = info.ctas.entry(a.cta).or_insert_with(|| Cta {
                line,
                warps: BTreeMap::new(),
            });
            cta.warps.entry(a.warp).or_default().push(offset);
            if global_access(a.opcode).is_some() && !addrs.is_empty() {
                records += 1;
                let elem = width_from_opcode(a.opcode);
                if let Some(&x) = addrs
                    .iter()
                    .find(|&&x| x.checked_add(elem as u64).is_none())
                {
                    return Err(format!(
                        "access at {x:#x} runs past the end of the address space"
                    ));
                }
                for &x in &addrs {
                    touches.touch(x, elem);
                }
            }
            Ok(())
        })?;
        let mut kernels = Vec::with_capacity(launches.len());
        let mut warps = HashMap::new();
        for (k, info) in launches.into_iter().enumerate() {
            let kernel = layout(k, info, &mut warps).map_err(|(line, message)| match line {
                Some(line) => WorkloadError::Trace {
                    path: path.to_path_buf(),
                    line,
                    message,
                },
                None => WorkloadError::TraceFile {
                    path: path.to_path_buf(),
                    message,
                },
            })?;
            kernels.push(kernel);
        }
        let regions = touches
            .finish()
            .map_err(|message| WorkloadError::TraceFile {
                path: path.to_path_buf(),
                message,
            })?;
        Ok(NvbitTrace {
            name: path
                .file_stem()
                .map_or("nvbit".into(), |s| s.to_string_lossy().into_owned()),
            allocations: regions.allocations.clone(),
            source,
            kernels,
            warps,
            regions,
            records,
            stream_error: StreamError::default(),
        })
    }

    pub fn path(&self) -> &Path {
        &self.source.path
    }
    pub fn name(&self) -> &str {
        &self.name
    }
    pub fn allocations(&self) -> &[Allocation] {
        &self.allocations
    }
    pub fn kernels(&self) -> &[Kernel] {
        &self.kernels
    }
    /// Global-memory access lines with at least one active lane.
    pub fn records(&self) -> u64 {
        self.records
    }
    pub fn stream_error(&self) -> Option<String> {
        self.stream_error.get()
    }

    /// Every (kernel, thread block, warp) that has lines.
    pub fn indexed_warps(&self) -> Vec<(usize, u32, u32)> {
        self.warps
            .keys()
            .map(|&(k, tb, w)| (k as usize, tb, w))
            .collect()
    }

    pub fn warp_stream(&self, kernel: usize, tb: u32, warp: u32) -> WarpStream<'_> {
        let key = u32::try_from(kernel).map(|k| (k, tb, warp));
        match key.ok().and_then(|k| self.warps.get(&k)) {
            Some(offsets) => Box::new(Stream {
                trace: self,
                offsets: offsets.iter(),
                lines: PosLines::new(&self.source.file, 0),
                compute: 0,
                pending: VecDeque::new(),
                addrs: Vec::with_capacity(32),
            }),
            None => Box::new(std::iter::empty()),
        }
    }
}

/// The kernel of one launch, and its warps' line offsets keyed by (kernel, tb, warp).
///
/// mem_trace prints `%warpid`, the warp's hardware slot on its SM, which need not be below
/// the block's warp count. When every id of the kernel is below the launch's warps per
/// block they are kept; else each CTA's ids are renumbered 0, 1, … in ascending order.
fn layout(
    k: usize,
    info: Launched,
    warps: &mut HashMap<(u32, u32, u32), Vec<u64>>,
) -> Result<Kernel, (Option<u64>, String)> {
    let max = |i: usize| info.ctas.keys().map(|c| c[i] + 1).max().unwrap_or(1);
    // Without a launch line the grid is the smallest that holds every CTA seen.
    let grid = info.grid.unwrap_or([max(0), max(1), max(2)]);
    let blocks = grid
        .iter()
        .try_fold(1u64, |a, &d| a.checked_mul(d))
        .filter(|&b| b <= u32::MAX as u64)
        .ok_or((None, format!("kernel {k}: more than 2^32 thread blocks")))?;
    let launch_warps = match info.block {
        Some(b) => Some(
            b.iter()
                .try_fold(1u64, |a, &d| a.checked_mul(d))
                .filter(|&t| t <= 1024)
                .ok_or((
                    None,
                    format!(
                        "kernel {k}: block size {},{},{} has more than 1024 threads",
                        b[0], b[1], b[2]
                    ),
                ))?
                .div_ceil(32)
                .max(1),
        ),
        None => None,
    };
    let keep = launch_warps.is_some_and(|w| {
        info.ctas
            .values()
            .all(|c| c.warps.keys().next_back().is_none_or(|&id| id < w))
    });
    let mut per_tb = launch_warps.unwrap_or(1);
    // In file order: the first offending CTA is the one reported.
    let mut ctas: Vec<_> = info.ctas.into_iter().collect();
    ctas.sort_unstable_by_key(|(_, c)| c.line);
    for (cta, Cta { line, warps: ws }) in ctas {
        let n = if keep { per_tb } else { ws.len() as u64 };
        if n > 32 {
            return Err((
                Some(line),
                format!(
                    "CTA {},{},{} has {n} distinct warp ids: more than the 32 warps a block can have",
                    cta[0], cta[1], cta[2]
                ),
            ));
        }
        per_tb = per_tb.max(n);
        if cta.iter().zip(&grid).any(|(c, g)| c >= g) {
            return Err((
                Some(line),
                format!(
                    "CTA {},{},{} is outside the launch's grid size {},{},{}",
                    cta[0], cta[1], cta[2], grid[0], grid[1], grid[2]
                ),
            ));
        }
        let tb = (cta[0] + grid[0] * (cta[1] + grid[1] * cta[2])) as u32;
        for (i, (id, offsets)) in ws.into_iter().enumerate() {
            let w = if keep { id } else { i as u64 };
            warps.insert((k as u32, tb, w as u32), offsets);
        }
    }
    if per_tb > 32 {
        return Err((None, format!("kernel {k}: more than 32 warps per block")));
    }
    let name = info.name.unwrap_or_else(|| format!("launch{k}"));
    Ok(Kernel::new(name, blocks as u32, per_tb as u32))
}

/// One warp's instructions, re-read line by line.
struct Stream<'a> {
    trace: &'a NvbitTrace,
    offsets: std::slice::Iter<'a, u64>,
    lines: PosLines<'a>,
    /// Non-global memory instructions since the last global one.
    compute: u32,
    pending: VecDeque<WarpInstr>,
    addrs: Vec<u64>,
}

impl Stream<'_> {
    fn fail(&mut self, msg: String) -> Option<WarpInstr> {
        self.trace
            .stream_error
            .set(&self.trace.source.path, format!("{msg} (file changed?)"));
        self.offsets = [].iter();
        self.pending.clear();
        None
    }
}

impl Iterator for Stream<'_> {
    type Item = WarpInstr;
    fn next(&mut self) -> Option<WarpInstr> {
        loop {
            if let Some(i) = self.pending.pop_front() {
                return Some(i);
            }
            let &offset = self.offsets.next()?;
            self.lines.seek(offset);
            let line = match self.lines.next_line() {
                Ok(Some(l)) => l,
                Ok(None) => return self.fail("ended early".into()),
                Err(e) => return self.fail(e.to_string()),
            };
            let opcode = match parse(&line, &mut self.addrs) {
                Ok(Line::Access(a)) => a.opcode,
                Ok(_) => return self.fail("an indexed line is no longer an access".into()),
                Err(m) => return self.fail(m),
            };
            match global_access(opcode) {
                Some(write) if !self.addrs.is_empty() => {
                    let c = std::mem::take(&mut self.compute);
                    let stride = progression(&self.addrs);
                    let elem = width_from_opcode(opcode);
                    let r = self.trace.regions.push(
                        &self.addrs,
                        elem,
                        write,
                        stride,
                        c,
                        &mut self.pending,
                    );
                    if let Err(m) = r {
                        return self.fail(m);
                    }
                }
                // Shared and local accesses (and all-inactive ones) stand for compute.
                _ => self.compute = self.compute.saturating_add(1),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn access_and_launch_lines() {
        let mut a = Vec::new();
        let mut line = String::from("MEMTRACE: CTX 0x000000000000abcd - grid_launch_id 2 - CTA 1,0,0 - warp 5 - LDG.E.64 - ");
        line.push_str("0x0000000000001000 0x0000000000000000 0x0000000000001010 ");
        line.push_str(&"0x0000000000000000 ".repeat(29));
        let l = parse(&line, &mut a).unwrap();
        assert_eq!(
            l,
            Line::Access(Access {
                ctx: 0xabcd,
                launch: 2,
                cta: [1, 0, 0],
                warp: 5,
                opcode: "LDG.E.64"
            })
        );
        assert_eq!(a, [0x1000, 0x1010]);
        let l = parse("MEMTRACE: CTX 0x1 - LAUNCH - Kernel pc 0x2 - Kernel name f(int*, float) - grid launch id 0 - grid size 4,1,1 - block size 64,1,1 - nregs 8 - shmem 0 - cuda stream id 0", &mut a).unwrap();
        assert_eq!(
            l,
            Line::Launch(Launch {
                ctx: 1,
                launch: 0,
                name: "f(int*, float)".into(),
                grid: [4, 1, 1],
                block: [64, 1, 1]
            })
        );
        assert_eq!(parse("Hello from the app", &mut a), Ok(Line::Other));
        assert_eq!(
            parse("MEMTRACE: STARTING CONTEXT 0x1", &mut a),
            Ok(Line::Other)
        );
        let e = parse(
            "MEMTRACE: CTX 0x1 - grid_launch_id 0 - CTA 0,0,0 - warp 0 - LDG.E - 0x10",
            &mut a,
        );
        assert!(e.unwrap_err().contains("32 lane addresses"));
    }
}
