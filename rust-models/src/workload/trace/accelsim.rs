//! Reading an Accel-Sim SASS trace directory (`kernelslist.g` and `kernel-N.traceg[.xz]`):
//! one validating pass indexes every warp of every kernel file and gathers the touched
//! addresses (for the allocations); the warp streams then re-read their lines from disk.

use super::accelsim_index::index_kernel;
use super::accelsim_parse::{command, inst, Command, Inst};
use super::lines::{PosLines, Source, StreamError};
use super::regions::{Regions, Touches};
use crate::workload::{Allocation, Kernel, WarpInstr, WarpStream, WorkloadError};
use std::collections::{HashMap, HashSet, VecDeque};
use std::path::{Path, PathBuf};

/// The list file inside a trace directory.
pub(crate) const LIST: &str = "kernelslist.g";

/// One kernel trace file, opened for positioned reads.
pub(crate) struct KernelFile {
    pub source: Source,
    /// Tracer version and line-info flag: they decide the layout of instruction lines.
    pub version: u32,
    pub lineinfo: bool,
}

/// Where a warp's instruction lines sit.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Span {
    pub offset: u64,
    /// Instruction lines (memory or not).
    pub insts: u64,
}

/// An Accel-Sim trace as a workload.
pub(crate) struct AccelSimTrace {
    list: PathBuf,
    name: String,
    allocations: Vec<Allocation>,
    kernels: Vec<Kernel>,
    files: Vec<KernelFile>,
    /// Per kernel, its file (a file may be listed more than once: relaunches).
    kernel_file: Vec<usize>,
    warps: HashMap<(usize, u32, u32), Span>,
    regions: Regions,
    records: u64,
    stream_error: StreamError,
}

impl AccelSimTrace {
    /// Open a trace directory, or the `kernelslist.g` inside one.
    pub fn open(path: &Path) -> Result<AccelSimTrace, WorkloadError> {
        let (dir, list) = if path.is_dir() {
            (path.to_path_buf(), path.join(LIST))
        } else {
            (
                path.parent().unwrap_or(Path::new(".")).to_path_buf(),
                path.to_path_buf(),
            )
        };
        if !list.is_file() {
            let raw = dir.join("kernelslist").is_file();
            return Err(WorkloadError::TraceFile {
                path: dir,
                message: format!(
                    "not an Accel-Sim trace directory: it has no {LIST}{}",
                    if raw {
                        " (only the tracer's raw `kernelslist`: run Accel-Sim's post-traces-processing on it first)"
                    } else {
                        ""
                    }
                ),
            });
        }
        // The commands: buffers, and kernel files in launch order.
        let listing = Source::open(&list)?;
        let mut declared = Vec::new();
        let mut launches: Vec<(String, u64)> = Vec::new();
        listing.for_each_line(|_, line, text| {
            let t = text.trim();
            if t.is_empty() || t.starts_with('#') {
                return Ok(());
            }
            match command(t)? {
                Command::Kernel(f) => launches.push((f, line)),
                Command::Buffer(d) => declared.push(d),
                Command::Ignored => {}
            }
            Ok(())
        })?;
        let mut names = HashSet::new();
        for d in &declared {
            if let Some(n) = &d.name {
                if !names.insert(n.clone()) {
                    return Err(WorkloadError::TraceFile {
                        path: list,
                        message: format!("allocation name `{n}` is declared twice"),
                    });
                }
            }
        }
        let mut t = AccelSimTrace {
            name: dir
                .file_name()
                .map_or("accelsim".into(), |s| s.to_string_lossy().into_owned()),
            list: list.clone(),
            allocations: Vec::new(),
            kernels: Vec::new(),
            files: Vec::new(),
            kernel_file: Vec::new(),
            warps: HashMap::new(),
            regions: Touches::new(Vec::new()).finish().expect("no allocations"),
            records: 0,
            stream_error: StreamError::default(),
        };
        let mut touches = Touches::new(declared);
        let mut by_path: HashMap<String, (usize, Kernel, u64)> = HashMap::new();
        for (file, line) in launches {
            if let Some((i, k, records)) = by_path.get(&file) {
                t.kernel_file.push(*i);
                t.kernels.push(k.clone());
                t.records += records;
                continue;
            }
            let path = dir.join(&file);
            let at = |message: String| WorkloadError::Trace {
                path: list.clone(),
                line,
                message,
            };
            if file.ends_with(".trace") || file.ends_with(".trace.xz") {
                return Err(at(format!(
                    "`{file}` is a raw tracer file: run Accel-Sim's post-traces-processing to get `.traceg` files"
                )));
            }
            if !path.is_file() {
                return Err(at(format!("kernel trace `{file}` does not exist")));
            }
            let source = Source::open(&path)?;
            let index = t.files.len();
            let mut records = 0;
            let (kernel, file_meta) =
                index_kernel(source, index, &mut t.warps, &mut records, &mut touches)?;
            t.records += records;
            t.files.push(file_meta);
            by_path.insert(file, (index, kernel.clone(), records));
            t.kernel_file.push(index);
            t.kernels.push(kernel);
        }
        t.regions = touches
            .finish()
            .map_err(|message| WorkloadError::TraceFile {
                path: list,
                message,
            })?;
        t.allocations = t.regions.allocations.clone();
        Ok(t)
    }

    pub fn path(&self) -> &Path {
        &self.list
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
    /// Global-memory instruction lines with an active lane, over all launches.
    pub fn records(&self) -> u64 {
        self.records
    }
    pub fn stream_error(&self) -> Option<String> {
        self.stream_error.get()
    }
    /// Every (kernel, thread block, warp) that has instruction lines, over all launches.
    pub fn indexed_warps(&self) -> Vec<(usize, u32, u32)> {
        let mut by_file: HashMap<usize, Vec<(u32, u32)>> = HashMap::new();
        for &(file, tb, warp) in self.warps.keys() {
            by_file.entry(file).or_default().push((tb, warp));
        }
        let mut out = Vec::new();
        for (k, file) in self.kernel_file.iter().enumerate() {
            for &(tb, warp) in by_file.get(file).into_iter().flatten() {
                out.push((k, tb, warp));
            }
        }
        out
    }

    pub fn warp_stream(&self, kernel: usize, tb: u32, warp: u32) -> WarpStream<'_> {
        let Some(&file) = self.kernel_file.get(kernel) else {
            return Box::new(std::iter::empty());
        };
        match self.warps.get(&(file, tb, warp)) {
            Some(span) => {
                let f = &self.files[file];
                Box::new(Stream {
                    trace: self,
                    file: f,
                    lines: PosLines::new(&f.source.file, span.offset),
                    left: span.insts,
                    compute: 0,
                    pending: VecDeque::new(),
                    addrs: Vec::with_capacity(32),
                })
            }
            // A warp without instructions issues no memory instructions.
            None => Box::new(std::iter::empty()),
        }
    }
}

/// One warp's instructions, re-read from its kernel file.
struct Stream<'a> {
    trace: &'a AccelSimTrace,
    file: &'a KernelFile,
    lines: PosLines<'a>,
    /// Instruction lines not yet read.
    left: u64,
    /// Non-memory instructions since the last memory instruction.
    compute: u32,
    pending: VecDeque<WarpInstr>,
    addrs: Vec<u64>,
}

impl Stream<'_> {
    fn fail(&mut self, msg: String) -> Option<WarpInstr> {
        self.trace.stream_error.set(&self.file.source.path, msg);
        self.left = 0;
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
            if self.left == 0 {
                // Trailing non-memory instructions have no access to precede: dropped.
                return None;
            }
            let line = match self.lines.next_line() {
                Ok(Some(l)) => l,
                Ok(None) => return self.fail("ended inside a warp (file changed?)".into()),
                Err(e) => return self.fail(e.to_string()),
            };
            if line.trim().is_empty() {
                continue;
            }
            self.left -= 1;
            match inst(
                &line,
                self.file.version,
                self.file.lineinfo,
                &mut self.addrs,
            ) {
                Ok(Inst::Compute) => self.compute = self.compute.saturating_add(1),
                Ok(Inst::Mem {
                    write,
                    elem,
                    stride,
                }) => {
                    let c = std::mem::take(&mut self.compute);
                    let r = self.trace.regions.push(
                        &self.addrs,
                        elem,
                        write,
                        stride,
                        c,
                        &mut self.pending,
                    );
                    if let Err(m) = r {
                        return self.fail(format!("{m} (file changed?)"));
                    }
                }
                Err(m) => return self.fail(format!("{m} (file changed?)")),
            }
        }
    }
}
