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

use super::lines::{PosLines, Source, StreamError};
use super::nvbit_parse::{parse, Line};
use super::opcode::{global_access, width_from_opcode};
use super::regions::{progression, Regions, Touches};
use super::LineError;
use crate::workload::{Allocation, Kernel, WarpInstr, WarpStream, WorkloadError};
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::path::Path;

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

/// The index pass: launches in order of first appearance, what the warps touch.
struct Index {
    /// Per (context, grid launch id), its position in `launches`.
    order: HashMap<(u64, u64), usize>,
    launches: Vec<Launched>,
    touches: Touches,
    records: u64,
    addrs: Vec<u64>,
}

impl Index {
    /// One line at byte `offset`, line number `line`.
    fn line(&mut self, offset: u64, line: u64, text: &str) -> Result<(), LineError> {
        let parsed = parse(text, &mut self.addrs)?;
        let key = match &parsed {
            Line::Other => return Ok(()),
            Line::Launch(l) => (l.ctx, l.launch),
            Line::Access(a) => (a.ctx, a.launch),
        };
        let n = self.order.len();
        let k = *self.order.entry(key).or_insert(n);
        if k == self.launches.len() {
            self.launches.push(Launched::default());
        }
        let info = &mut self.launches[k];
        let a = match parsed {
            Line::Access(a) => a,
            Line::Launch(l) => {
                if info.grid.is_some() {
                    return Err(LineError::rule(format!(
                        "grid launch id {} is launched twice",
                        l.launch
                    )));
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
                return Err(LineError::rule(format!(
                    "CTA {},{},{} is outside the launch's grid size {},{},{}",
                    a.cta[0], a.cta[1], a.cta[2], g[0], g[1], g[2]
                )));
            }
        }
        let cta = info.ctas.entry(a.cta).or_insert_with(|| Cta {
            line,
            warps: BTreeMap::new(),
        });
        cta.warps.entry(a.warp).or_default().push(offset);
        if global_access(a.opcode).is_some() && !self.addrs.is_empty() {
            self.touch(width_from_opcode(a.opcode))?;
        }
        Ok(())
    }

    /// Count a global access of `elem` bytes per lane at the addresses just parsed.
    fn touch(&mut self, elem: u8) -> Result<(), LineError> {
        self.records += 1;
        if let Some(&x) = self
            .addrs
            .iter()
            .find(|&&x| x.checked_add(elem as u64).is_none())
        {
            return Err(LineError::rule(format!(
                "access at {x:#x} runs past the end of the address space"
            )));
        }
        for &x in &self.addrs {
            self.touches.touch(x, elem);
        }
        Ok(())
    }
}

impl NvbitTrace {
    /// Open and validate the output: 1. index every line, 2. lay out each launch's warps,
    /// 3. derive the allocations.
    pub fn open(path: &Path) -> Result<NvbitTrace, WorkloadError> {
        let source = Source::open(path)?;
        let mut index = Index {
            order: HashMap::new(),
            launches: Vec::new(),
            touches: Touches::new(Vec::new()),
            records: 0,
            addrs: Vec::with_capacity(32),
        };
        // 1. Every line.
        source.for_each_line(|offset, line, text| index.line(offset, line, text))?;
        // 2. The kernels.
        let mut kernels = Vec::with_capacity(index.launches.len());
        let mut warps = HashMap::new();
        for (k, info) in index.launches.into_iter().enumerate() {
            let kernel = layout(k, info, &mut warps).map_err(|(line, source)| match line {
                Some(line) => WorkloadError::Trace {
                    path: path.to_path_buf(),
                    line,
                    source,
                },
                None => WorkloadError::TraceFile {
                    path: path.to_path_buf(),
                    source,
                },
            })?;
            kernels.push(kernel);
        }
        // 3. The allocations.
        let regions = index
            .touches
            .finish()
            .map_err(|source| WorkloadError::TraceFile {
                path: path.to_path_buf(),
                source,
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
            records: index.records,
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

/// An error of [`layout`]: at a CTA's first line, or of the whole launch.
type LayoutError = (Option<u64>, LineError);

/// The kernel of one launch, and its warps' line offsets keyed by (kernel, tb, warp).
///
/// mem_trace prints `%warpid`, the warp's hardware slot on its SM, which need not be below
/// the block's warp count. When every id of the kernel is below the launch's warps per
/// block they are kept; else each CTA's ids are renumbered 0, 1, … in ascending order.
fn layout(
    k: usize,
    info: Launched,
    warps: &mut HashMap<(u32, u32, u32), Vec<u64>>,
) -> Result<Kernel, LayoutError> {
    let max = |i: usize| info.ctas.keys().map(|c| c[i] + 1).max().unwrap_or(1);
    // Without a launch line the grid is the smallest that holds every CTA seen.
    let grid = info.grid.unwrap_or([max(0), max(1), max(2)]);
    let whole = |m: String| (None, LineError::rule(m));
    let blocks = grid
        .iter()
        .try_fold(1u64, |a, &d| a.checked_mul(d))
        .filter(|&b| b <= u32::MAX as u64)
        .ok_or_else(|| whole(format!("kernel {k}: more than 2^32 thread blocks")))?;
    let launch_warps = match info.block {
        Some(b) => Some(
            b.iter()
                .try_fold(1u64, |a, &d| a.checked_mul(d))
                .filter(|&t| t <= 1024)
                .ok_or_else(|| {
                    whole(format!(
                        "kernel {k}: block size {},{},{} has more than 1024 threads",
                        b[0], b[1], b[2]
                    ))
                })?
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
    let per_tb = place_ctas(k, info.ctas, grid, launch_warps, keep, warps)?;
    if per_tb > 32 {
        return Err(whole(format!("kernel {k}: more than 32 warps per block")));
    }
    let name = info.name.unwrap_or_else(|| format!("launch{k}"));
    Ok(Kernel::new(name, blocks as u32, per_tb as u32))
}

/// Key each CTA's warps by (kernel, linear thread block, warp) into `warps` — their ids
/// `keep`, else renumbered — and return the warps per block.
fn place_ctas(
    k: usize,
    ctas: HashMap<[u64; 3], Cta>,
    grid: [u64; 3],
    launch_warps: Option<u64>,
    keep: bool,
    warps: &mut HashMap<(u32, u32, u32), Vec<u64>>,
) -> Result<u64, LayoutError> {
    let mut per_tb = launch_warps.unwrap_or(1);
    // In file order: the first offending CTA is the one reported.
    let mut ctas: Vec<_> = ctas.into_iter().collect();
    ctas.sort_unstable_by_key(|(_, c)| c.line);
    for (cta, Cta { line, warps: ws }) in ctas {
        let at = |m: String| (Some(line), LineError::rule(m));
        let n = if keep { per_tb } else { ws.len() as u64 };
        if n > 32 {
            return Err(at(format!(
                "CTA {},{},{} has {n} distinct warp ids: more than the 32 warps a block can have",
                cta[0], cta[1], cta[2]
            )));
        }
        per_tb = per_tb.max(n);
        if cta.iter().zip(&grid).any(|(c, g)| c >= g) {
            return Err(at(format!(
                "CTA {},{},{} is outside the launch's grid size {},{},{}",
                cta[0], cta[1], cta[2], grid[0], grid[1], grid[2]
            )));
        }
        let tb = (cta[0] + grid[0] * (cta[1] + grid[1] * cta[2])) as u32;
        for (i, (id, offsets)) in ws.into_iter().enumerate() {
            let w = if keep { id } else { i as u64 };
            warps.insert((k as u32, tb, w as u32), offsets);
        }
    }
    Ok(per_tb)
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
                Err(m) => return self.fail(m.to_string()),
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
                        return self.fail(m.to_string());
                    }
                }
                // Shared and local accesses (and all-inactive ones) stand for compute.
                _ => self.compute = self.compute.saturating_add(1),
            }
        }
    }
}
