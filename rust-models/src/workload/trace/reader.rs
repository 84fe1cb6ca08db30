//! Reading a trace: one validating pass that indexes warps, then streams from disk.

use super::parse::{parse_line, strip_comment, Context, Record};
use super::{HEADER, VERSION};
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

impl McmvmTrace {
    /// Open and validate a trace. Any malformed record is an error naming the file and line.
    pub fn open(path: &Path) -> Result<McmvmTrace, WorkloadError> {
        let io = |source| WorkloadError::Io {
            path: path.to_path_buf(),
            source,
        };
        let file = File::open(path).map_err(io)?;
        let mut reader = BufReader::new(file.try_clone().map_err(io)?);
        let at = |line: u64, message: String| WorkloadError::Trace {
            path: path.to_path_buf(),
            line,
            message,
        };
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
        let mut buf = Vec::new();
        let (mut offset, mut line_no) = (0u64, 0u64);
        let mut seen_header = false;
        // The warp whose run of records is open, with the line its run began at.
        let mut open_run: Option<((u32, u32, u32), u64)> = None;
        loop {
            buf.clear();
            let n = reader.read_until(b'\n', &mut buf).map_err(io)?;
            if n == 0 {
                break;
            }
            line_no += 1;
            let start = offset;
            offset += n as u64;
            let text = std::str::from_utf8(&buf)
                .map_err(|_| at(line_no, "line is not valid UTF-8".into()))?;
            let body = strip_comment(text);
            if body.is_empty() {
                continue;
            }
            let ctx = Context {
                allocations: &t.allocations,
                alloc_index: &t.alloc_index,
                kernels: &t.kernels,
            };
            let rec = parse_line(body, &ctx).map_err(|m| at(line_no, m))?;
            if !seen_header {
                match rec {
                    Record::Header(VERSION) => {
                        seen_header = true;
                        continue;
                    }
                    Record::Header(v) => return Err(at(line_no, format!("trace version {v} is not supported (this reader reads version {VERSION})"))),
                    _ => return Err(at(line_no, format!("expected the header `{HEADER} {VERSION}` as the first record"))),
                }
            }
            let declarations_closed = !t.warps.is_empty();
            match rec {
                Record::Header(_) => return Err(at(line_no, "a second header record".into())),
                Record::Name(n) => t.name = n,
                Record::Alloc(_) | Record::Kernel(_) if declarations_closed => {
                    return Err(at(
                        line_no,
                        "`alloc` and `kernel` records must come before the first access record"
                            .into(),
                    ));
                }
                Record::Alloc(a) => {
                    if t.alloc_index.contains_key(&a.name) {
                        return Err(at(
                            line_no,
                            format!("allocation `{}` is declared twice", a.name),
                        ));
                    }
                    let idx = AllocIndex::try_from(t.allocations.len())
                        .map_err(|_| at(line_no, "more than 65536 allocations".into()))?;
                    t.alloc_index.insert(a.name.clone(), idx);
                    t.allocations.push(a);
                }
                Record::Kernel(k) => t.kernels.push(k),
                Record::Access(key, _) => {
                    t.records += 1;
                    match open_run {
                        Some((k, _)) if k == key => {
                            if let Some(s) = t.warps.get_mut(&key) {
                                s.records += 1;
                            }
                        }
                        _ => {
                            if let Some(s) = t.warps.get(&key) {
                                return Err(at(line_no, format!(
                                    "records of kernel {} tb {} warp {} must be contiguous: its records began at line {} and were interrupted",
                                    key.0, key.1, key.2, s.line
                                )));
                            }
                            t.warps.insert(
                                key,
                                WarpSpan {
                                    offset: start,
                                    records: 1,
                                    line: line_no,
                                },
                            );
                            open_run = Some((key, line_no));
                        }
                    }
                }
            }
        }
        if !seen_header {
            return Err(WorkloadError::TraceFile {
                path: path.to_path_buf(),
                message: format!("empty trace: expected the header `{HEADER} {VERSION}`"),
            });
        }
        Ok(t)
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
    fn next_line(&mut self) -> Result<Option<String>, String> {
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
            let n = self
                .trace
                .file
                .read_at(&mut self.buf[have..], self.pos)
                .map_err(|e| e.to_string())?;
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
                Err(e) => return self.fail(e),
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
                Err(m) => self.fail(m),
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
