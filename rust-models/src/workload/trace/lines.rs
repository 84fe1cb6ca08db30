//! Shared plumbing of the external trace readers: opening a (possibly xz-compressed) text
//! file so that it can be read both sequentially (the indexing pass) and at any byte offset
//! (the warp streams), and a small positioned line reader.

use super::LineError;
use crate::workload::WorkloadError;
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Seek, SeekFrom};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// A trace text file ready for positioned reads.
///
/// An `.xz` file cannot be read at an offset, so it is decompressed once into an anonymous
/// temporary file: created, then unlinked at once, so that nothing is left behind whatever
/// way the process ends, while the open handle keeps the data readable.
pub(crate) struct Source {
    /// The path as the user named it (for messages), not the temporary copy.
    pub path: PathBuf,
    pub file: File,
}

/// Distinguishes the temporary files of one process.
static TEMP_SEQ: AtomicU64 = AtomicU64::new(0);

impl Source {
    pub fn open(path: &Path) -> Result<Source, WorkloadError> {
        let io = |source| WorkloadError::Io {
            path: path.to_path_buf(),
            source,
        };
        let file = File::open(path).map_err(io)?;
        if path.extension().is_none_or(|e| e != "xz") {
            return Ok(Source {
                path: path.to_path_buf(),
                file,
            });
        }
        let tmp = std::env::temp_dir().join(format!(
            "mcmvm-xz-{}-{}",
            std::process::id(),
            TEMP_SEQ.fetch_add(1, Ordering::Relaxed)
        ));
        let mut out = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&tmp)
            .map_err(|source| WorkloadError::Io {
                path: tmp.clone(),
                source,
            })?;
        // Unlink before decompressing: a failure below leaves nothing behind.
        let _ = std::fs::remove_file(&tmp);
        let mut dec = xz2::read::XzDecoder::new(BufReader::new(file));
        std::io::copy(&mut dec, &mut out).map_err(|source| WorkloadError::Decompress {
            path: path.to_path_buf(),
            source,
        })?;
        Ok(Source {
            path: path.to_path_buf(),
            file: out,
        })
    }

    /// Visit every line from the start: `(byte offset, 1-based line number, text)`. The
    /// visitor's error becomes a one-line error naming the file and the line.
    pub fn for_each_line(
        &self,
        mut visit: impl FnMut(u64, u64, &str) -> Result<(), LineError>,
    ) -> Result<u64, WorkloadError> {
        let io = |source| WorkloadError::Io {
            path: self.path.clone(),
            source,
        };
        let mut f = self.file.try_clone().map_err(io)?;
        f.seek(SeekFrom::Start(0)).map_err(io)?;
        let mut reader = BufReader::with_capacity(1 << 16, f);
        let mut buf = Vec::new();
        let (mut offset, mut line) = (0u64, 0u64);
        loop {
            buf.clear();
            let n = reader.read_until(b'\n', &mut buf).map_err(io)?;
            if n == 0 {
                return Ok(line);
            }
            line += 1;
            let text = std::str::from_utf8(&buf).map_err(|_| WorkloadError::Trace {
                path: self.path.clone(),
                line,
                source: LineError::rule("line is not valid UTF-8"),
            })?;
            visit(offset, line, text).map_err(|source| WorkloadError::Trace {
                path: self.path.clone(),
                line,
                source,
            })?;
            offset += n as u64;
        }
    }
}

/// Reads lines at byte offsets of a shared file handle with positioned reads: no file
/// descriptor per warp stream, a small buffer, and a seek that keeps the buffer when the
/// next line is already in it (NVBit warps' lines are interleaved but near each other).
pub(crate) struct PosLines<'a> {
    file: &'a File,
    /// File offset of `buf[0]`.
    buf_start: u64,
    buf: Vec<u8>,
    head: usize,
}

const BUF: usize = 4096;

impl<'a> PosLines<'a> {
    pub fn new(file: &'a File, pos: u64) -> PosLines<'a> {
        PosLines {
            file,
            buf_start: pos,
            buf: Vec::with_capacity(BUF),
            head: 0,
        }
    }

    /// Continue reading at `pos`.
    pub fn seek(&mut self, pos: u64) {
        let end = self.buf_start + self.buf.len() as u64;
        if pos >= self.buf_start && pos < end {
            self.head = (pos - self.buf_start) as usize;
        } else {
            self.buf.clear();
            self.buf_start = pos;
            self.head = 0;
        }
    }

    /// The next line without its newline, or `None` at the end of the file.
    pub fn next_line(&mut self) -> std::io::Result<Option<String>> {
        loop {
            if let Some(nl) = self.buf[self.head..].iter().position(|&b| b == b'\n') {
                let line =
                    String::from_utf8_lossy(&self.buf[self.head..self.head + nl]).into_owned();
                self.head += nl + 1;
                return Ok(Some(line));
            }
            // Keep the partial line, read more after it.
            self.buf.drain(..self.head);
            self.buf_start += self.head as u64;
            self.head = 0;
            let have = self.buf.len();
            self.buf.resize(have + BUF, 0);
            let n = self
                .file
                .read_at(&mut self.buf[have..], self.buf_start + have as u64)?;
            self.buf.truncate(have + n);
            if n == 0 {
                if self.buf.is_empty() {
                    return Ok(None);
                }
                let line = String::from_utf8_lossy(&self.buf).into_owned();
                self.buf_start += self.buf.len() as u64;
                self.buf.clear();
                return Ok(Some(line));
            }
        }
    }
}

/// The first failure met while streaming (a file changed after it was indexed): streams end
/// early rather than panic, and the run reports it.
#[derive(Default)]
pub(crate) struct StreamError(Mutex<Option<String>>);

impl StreamError {
    pub fn set(&self, path: &Path, message: impl std::fmt::Display) {
        if let Ok(mut e) = self.0.lock() {
            e.get_or_insert(format!("{}: {message}", path.display()));
        }
    }
    pub fn get(&self) -> Option<String> {
        self.0.lock().ok().and_then(|e| e.clone())
    }
}

/// Parse a hexadecimal number with or without `0x` (the tracers print both).
pub(crate) fn hex(tok: &str, what: &str) -> Result<u64, LineError> {
    let digits = tok
        .strip_prefix("0x")
        .or_else(|| tok.strip_prefix("0X"))
        .unwrap_or(tok);
    u64::from_str_radix(digits, 16)
        .map_err(|_| LineError::expected(format!("{what} (hexadecimal)"), tok))
}

/// Parse an unsigned decimal number.
pub(crate) fn dec(tok: &str, what: &str) -> Result<u64, LineError> {
    tok.parse::<u64>()
        .map_err(|_| LineError::expected(format!("{what} (an unsigned decimal integer)"), tok))
}

/// Parse `X,Y,Z` (optionally in parentheses) of unsigned decimals.
pub(crate) fn dim3(text: &str, what: &str) -> Result<[u64; 3], LineError> {
    let t = text.trim();
    let inner = t
        .strip_prefix('(')
        .and_then(|s| s.strip_suffix(')'))
        .unwrap_or(t);
    let parts: Vec<&str> = inner.split(',').map(str::trim).collect();
    let bad = || LineError::expected(format!("{what} as X,Y,Z"), t);
    if parts.len() != 3 {
        return Err(bad());
    }
    let mut v = [0u64; 3];
    for (x, p) in v.iter_mut().zip(&parts) {
        *x = p.parse().map_err(|_| bad())?;
    }
    Ok(v)
}
