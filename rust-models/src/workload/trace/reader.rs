//! Reading a trace: one validating pass that indexes warps, then streams from disk.

use super::parse::{parse_line, strip_comment, Context, Record};
use super::{LineError, HEADER, VERSION};
use crate::workload::{
    AllocIndex, Allocation, Kernel, WarpInstr, WarpStream, Workload, WorkloadError,
};
use std::collections::HashMap;
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Where a warp's records sit in the file.
#[derive(Debug, Clone, Copy)]
struct WarpSpan {
    /// Byte offset of the warp's first record line.
    offset: u64,
    /// Number of access records.
    records: u64,
    /// Line of the first record (for messages).
    line: u64,
}

/// A trace file as a [`Workload`]. Opening validates every line; streams read the file again.
pub(crate) struct McmvmTrace {
    path: PathBuf,
    name: String,
    allocations: Vec<Allocation>,
    alloc_index: HashMap<String, AllocIndex>,
    kernels: Vec<Kernel>,
    warps: HashMap<(u32, u32, u32), WarpSpan>,
    records: u64,
    file: File,
    /// The first I/O or parse failure met while streaming (the file changed after it was
    /// validated); streams end early rather than panic.
    stream_error: Mutex<Option<String>>,
}

/// Where the validating pass is: past the header yet, and the warp whose run of records is
/// open.
#[derive(Default)]
struct Indexing {
    seen_header: bool,
    open_run: Option<(u32, u32, u32)>,
}

impl McmvmTrace {
    /// Open and validate a trace. Any malformed record is an error naming the file and line.
    pub fn open(path: &Path) -> Result<McmvmTrace, WorkloadError> {
        let io = |source| WorkloadError::Io {
            path: path.to_path_buf(),
            source,
        };
        let file = File::open(path).map_err(io)?;
        let mut reader = BufReader::new(file.try_clone().map_err(io)?);
        let mut t = McmvmTrace {
            path: path.to_path_buf(),
            name: path
                .file_stem()
                .map_or("trace".into(), |s| s.to_string_lossy().into_owned()),
            allocations: Vec::new(),
            alloc_index: HashMap::new(),
            kernels: Vec::new(),
            warps: HashMap::new(),
            records: 0,
            file,
            stream_error: Mutex::new(None),
        };
        let mut state = Indexing::default();
        let mut buf = Vec::new();
        let (mut offset, mut line) = (0u64, 0u64);
        loop {
            buf.clear();
            let n = reader.read_until(b'\n', &mut buf).map_err(io)?;
            if n == 0 {
                break;
            }
            line += 1;
            let start = offset;
            offset += n as u64;
            std::str::from_utf8(&buf)
                .map_err(|_| LineError::rule("line is not valid UTF-8"))
                .and_then(|text| t.index_line(&mut state, text, start, line))
                .map_err(|source| WorkloadError::Trace {
                    path: path.to_path_buf(),
                    line,
                    source,
                })?;
        }
        if !state.seen_header {
            return Err(WorkloadError::TraceFile {
                path: path.to_path_buf(),
                source: LineError::Short {
                    what: "empty trace",
                    expected: format!("the header `{HEADER} {VERSION}`"),
                },
            });
        }
        Ok(t)
    }

    /// Validate one line at byte `start` (line `line`) and note what it declares.
    fn index_line(
        &mut self,
        state: &mut Indexing,
        text: &str,
        start: u64,
        line: u64,
    ) -> Result<(), LineError> {
        let body = strip_comment(text);
        if body.is_empty() {
            return Ok(());
        }
        let ctx = Context {
            allocations: &self.allocations,
            alloc_index: &self.alloc_index,
            kernels: &self.kernels,
        };
        let rec = parse_line(body, &ctx)?;
        if !state.seen_header {
            return match rec {
                Record::Header(VERSION) => {
                    state.seen_header = true;
                    Ok(())
                }
                Record::Header(v) => Err(LineError::rule(format!(
                    "trace version {v} is not supported (this reader reads version {VERSION})"
                ))),
                _ => Err(LineError::rule(format!(
                    "expected the header `{HEADER} {VERSION}` as the first record"
                ))),
            };
        }
        let declarations_closed = !self.warps.is_empty();
        match rec {
            Record::Header(_) => return Err(LineError::rule("a second header record")),
            Record::Name(n) => self.name = n,
            Record::Alloc(_) | Record::Kernel(_) if declarations_closed => {
                return Err(LineError::rule(
                    "`alloc` and `kernel` records must come before the first access record",
                ));
            }
            Record::Alloc(a) => {
                if self.alloc_index.contains_key(&a.name) {
                    return Err(LineError::rule(format!(
                        "allocation `{}` is declared twice",
                        a.name
                    )));
                }
                let idx = AllocIndex::try_from(self.allocations.len())
                    .map_err(|_| LineError::rule("more than 65536 allocations"))?;
                self.alloc_index.insert(a.name.clone(), idx);
                self.allocations.push(a);
            }
            Record::Kernel(k) => self.kernels.push(k),
            Record::Access(key, _) => self.index_access(state, key, start, line)?,
        }
        Ok(())
    }

    /// Count an access record of warp `key`: it continues the open run, or opens the warp's
    /// one run.
    fn index_access(
        &mut self,
        state: &mut Indexing,
        key: (u32, u32, u32),
        start: u64,
        line: u64,
    ) -> Result<(), LineError> {
        self.records += 1;
        if state.open_run == Some(key) {
            if let Some(s) = self.warps.get_mut(&key) {
                s.records += 1;
            }
            return Ok(());
        }
        if let Some(s) = self.warps.get(&key) {
            return Err(LineError::rule(format!(
                "records of kernel {} tb {} warp {} must be contiguous: its records began at line {} and were interrupted",
                key.0, key.1, key.2, s.line
            )));
        }
        self.warps.insert(
            key,
            WarpSpan {
                offset: start,
                records: 1,
                line,
            },
        );
        state.open_run = Some(key);
        Ok(())
    }

    /// The first error met while streaming, if the file changed after it was validated.
    pub fn stream_error(&self) -> Option<String> {
        self.stream_error.lock().ok().and_then(|e| e.clone())
    }

    /// Access records in the file.
    pub fn records(&self) -> u64 {
        self.records
    }

    /// The file this trace was read from.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Streams one warp's records with positioned reads on the shared file handle: no file
/// descriptor per warp, and a small buffer.
struct TraceStream<'a> {
    trace: &'a McmvmTrace,
    pos: u64,
    left: u64,
    buf: Vec<u8>,
    head: usize,
}

const STREAM_BUF: usize = 2048;

impl TraceStream<'_> {
    fn fail(&mut self, msg: String) -> Option<WarpInstr> {
        if let Ok(mut e) = self.trace.stream_error.lock() {
            e.get_or_insert(format!("{}: {msg}", self.trace.path.display()));
        }
        self.left = 0;
        None
    }

    /// The next line of the file, without its newline.
    fn next_line(&mut self) -> std::io::Result<Option<String>> {
        loop {
            if let Some(nl) = self.buf[self.head..].iter().position(|&b| b == b'\n') {
                let line =
                    String::from_utf8_lossy(&self.buf[self.head..self.head + nl]).into_owned();
                self.head += nl + 1;
                return Ok(Some(line));
            }
            // Keep the partial line, read more after it.
            self.buf.drain(..self.head);
            self.head = 0;
            let have = self.buf.len();
            self.buf.resize(have + STREAM_BUF, 0);
            let n = self.trace.file.read_at(&mut self.buf[have..], self.pos)?;
            self.buf.truncate(have + n);
            self.pos += n as u64;
            if n == 0 {
                if self.buf.is_empty() {
                    return Ok(None);
                }
                let line = String::from_utf8_lossy(&self.buf).into_owned();
                self.buf.clear();
                return Ok(Some(line));
            }
        }
    }
}

impl Iterator for TraceStream<'_> {
    type Item = WarpInstr;
    fn next(&mut self) -> Option<WarpInstr> {
        while self.left > 0 {
            let line = match self.next_line() {
                Ok(Some(l)) => l,
                Ok(None) => {
                    return self.fail("ended before a warp's records (file changed?)".into())
                }
                Err(e) => return self.fail(e.to_string()),
            };
            let body = strip_comment(&line);
            if body.is_empty() {
                continue;
            }
            let ctx = Context {
                allocations: &self.trace.allocations,
                alloc_index: &self.trace.alloc_index,
                kernels: &self.trace.kernels,
            };
            return match parse_line(body, &ctx) {
                Ok(Record::Access(_, i)) => {
                    self.left -= 1;
                    Some(i)
                }
                // A `name` record may stand anywhere, even inside a warp's run (the index
                // pass lets it), and says nothing about the warp.
                Ok(Record::Name(_)) => continue,
                Ok(_) => {
                    self.fail("a warp's run is interrupted by a declaration (file changed?)".into())
                }
                Err(m) => self.fail(m.to_string()),
            };
        }
        None
    }
}

impl Workload for McmvmTrace {
    fn name(&self) -> &str {
        &self.name
    }
    fn allocations(&self) -> &[Allocation] {
        &self.allocations
    }
    fn kernels(&self) -> &[Kernel] {
        &self.kernels
    }
    fn warp_stream(&self, kernel: usize, tb: u32, warp: u32) -> WarpStream<'_> {
        match u32::try_from(kernel)
            .ok()
            .and_then(|k| self.warps.get(&(k, tb, warp)))
        {
            Some(span) => Box::new(TraceStream {
                trace: self,
                pos: span.offset,
                left: span.records,
                buf: Vec::with_capacity(STREAM_BUF),
                head: 0,
            }),
            // A warp with no records issues no memory instructions.
            None => Box::new(std::iter::empty()),
        }
    }
    fn description(&self) -> &str {
        "trace file"
    }
    fn instr_count(&self) -> u64 {
        self.records
    }
}
