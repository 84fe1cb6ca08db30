//! Reading an Accel-Sim SASS trace directory (`kernelslist.g` and `kernel-N.traceg[.xz]`):
//! one validating pass indexes every warp of every kernel file and gathers the touched
//! addresses (for the allocations); the warp streams then re-read their lines from disk.

use super::accelsim_index::index_kernel;
use super::accelsim_parse::{command, inst, Command, Inst};
use super::lines::{PosLines, Source, StreamError};
use super::regions::{Declared, Regions, Touches};
use super::LineError;
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

/// What `kernelslist.g` lists: the buffers it declares, and the kernel files in launch
/// order with their line in the list.
struct Listing {
    declared: Vec<Declared>,
    launches: Vec<(String, u64)>,
}

/// Per kernel file already indexed: its index in `files`, its kernel and its records.
type Indexed = HashMap<String, (usize, Kernel, u64)>;

impl AccelSimTrace {
    /// Open a trace directory, or the `kernelslist.g` inside one: 1. read the list, 2. index
    /// each kernel file once (relaunches reuse it), 3. derive the allocations.
    pub fn open(path: &Path) -> Result<AccelSimTrace, WorkloadError> {
        let (dir, list) = list_path(path)?;
        // 1. The commands: buffers, and kernel files in launch order.
        let Listing { declared, launches } = read_list(&list)?;
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
        // 2. The kernel files.
        let mut touches = Touches::new(declared);
        let mut by_path = Indexed::new();
        for (file, line) in launches {
            t.launch(&dir, file, line, &mut by_path, &mut touches)?;
        }
        // 3. The allocations, from what the warps touched.
        t.regions = touches
            .finish()
            .map_err(|source| WorkloadError::TraceFile { path: list, source })?;
        t.allocations = t.regions.allocations.clone();
        Ok(t)
    }

    /// Add the launch of kernel file `file` (listed at `line`), indexing the file unless an
    /// earlier launch did.
    fn launch(
        &mut self,
        dir: &Path,
        file: String,
        line: u64,
        by_path: &mut Indexed,
        touches: &mut Touches,
    ) -> Result<(), WorkloadError> {
        if let Some((i, k, records)) = by_path.get(&file) {
            self.kernel_file.push(*i);
            self.kernels.push(k.clone());
            self.records += records;
            return Ok(());
        }
        let path = dir.join(&file);
        let at = |message: String| WorkloadError::Trace {
            path: self.list.clone(),
            line,
            source: LineError::rule(message),
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
        let index = self.files.len();
        let mut records = 0;
        let (kernel, file_meta) =
            index_kernel(source, index, &mut self.warps, &mut records, touches)?;
        self.records += records;
        self.files.push(file_meta);
        by_path.insert(file, (index, kernel.clone(), records));
        self.kernel_file.push(index);
        self.kernels.push(kernel);
        Ok(())
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

/// The trace directory and its `kernelslist.g`, from a path naming either.
fn list_path(path: &Path) -> Result<(PathBuf, PathBuf), WorkloadError> {
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
            source: LineError::rule(format!(
                "not an Accel-Sim trace directory: it has no {LIST}{}",
                if raw {
                    " (only the tracer's raw `kernelslist`: run Accel-Sim's post-traces-processing on it first)"
                } else {
                    ""
                }
            )),
        });
    }
    Ok((dir, list))
}

/// Read and validate `kernelslist.g`; a buffer name may be declared once.
fn read_list(list: &Path) -> Result<Listing, WorkloadError> {
    let listing = Source::open(list)?;
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
                    path: list.to_path_buf(),
                    source: LineError::rule(format!("allocation name `{n}` is declared twice")),
                });
            }
        }
    }
    Ok(Listing { declared, launches })
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
