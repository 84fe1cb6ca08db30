//! Trace input: mcmvm's own text format, Accel-Sim SASS traces and NVBit `mem_trace` output.
//!
//! [`TraceWorkload::open`] tells them apart by themselves: a directory or a `kernelslist.g`
//! is an Accel-Sim trace, a file whose first line that is not a comment looks like NVBit
//! output is one, anything else is read as the mcmvm format, described in full in
//! `docs/trace-format.md` (the external ones in `docs/trace-formats-external.md`). In short:
//!
//! ```text
//! mcmvm-trace 1
//! name vecadd                                   # optional
//! alloc A 4096 stride=1 group=0                 # name bytes [stride=P] [preferred-gpu] [group=G]
//! kernel vecadd 2 4                             # name grid warps-per-TB
//! a 0 0 0 A r s 0 4 32 4                        # kernel tb warp alloc r|w s offset stride lanes elem [c=N]
//! a 0 0 0 A r g 4 0,64,4000 c=10                # kernel tb warp alloc r|w g elem off,off,... [c=N]
//! ```
//!
//! Every `alloc` and `kernel` record precedes the first access record, and the access
//! records of one warp are contiguous (warps may come in any order). The reader indexes the
//! file once — one entry per warp: byte offset, line and record count — and streams each
//! warp's records from disk when asked, so memory grows with the number of warps, never
//! with the number of accesses. The external readers stream from disk the same way.

mod accelsim;
mod accelsim_index;
mod accelsim_parse;
mod accelsim_writer;
mod error;
mod lines;
mod nvbit;
mod nvbit_parse;
mod opcode;
mod parse;
mod reader;
mod regions;
mod writer;

pub use accelsim_writer::write_accelsim_trace;
pub use error::LineError;
pub use writer::write_trace;

use crate::workload::{Allocation, Kernel, WarpStream, Workload, WorkloadError};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::sync::OnceLock;

/// First line of every trace file (after comments).
pub const HEADER: &str = "mcmvm-trace";
/// The format version this reader understands.
pub const VERSION: u32 = 1;

/// Which format a trace was read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TraceFormat {
    /// mcmvm's own text format (`docs/trace-format.md`).
    Mcmvm,
    /// An Accel-Sim SASS trace directory (`kernelslist.g` + `kernel-N.traceg[.xz]`).
    AccelSim,
    /// The text output of NVBit's `mem_trace` example tool.
    NvBit,
}

enum Inner {
    Mcmvm(reader::McmvmTrace),
    AccelSim(accelsim::AccelSimTrace),
    NvBit(nvbit::NvbitTrace),
}

/// A trace, of any supported format, as a [`Workload`]. Opening validates everything;
/// warp streams read the files again.
pub struct TraceWorkload {
    inner: Inner,
    /// Instructions of the external formats, counted once when first asked: an access
    /// whose lanes fall in two allocations becomes two instructions, which only the final
    /// address map can tell.
    count: OnceLock<u64>,
}

/// Lines [`detect`] reads before deciding a file is not NVBit output.
const SNIFF_LINES: usize = 200;

/// The format of the trace at `path`, from its shape and first lines.
pub fn detect(path: &Path) -> TraceFormat {
    if path.is_dir() || path.file_name().is_some_and(|n| n == accelsim::LIST) {
        return TraceFormat::AccelSim;
    }
    // Unreadable files fall through to the mcmvm reader, whose error names the problem.
    let Ok(f) = std::fs::File::open(path) else {
        return TraceFormat::Mcmvm;
    };
    let mut first = true;
    for line in BufReader::new(f).lines().take(SNIFF_LINES) {
        let Ok(line) = line else { break };
        let l = line.trim();
        if l.is_empty() || l.starts_with('#') {
            continue;
        }
        if l.starts_with(nvbit_parse::PREFIX) || (first && l.contains("NVBit")) {
            return TraceFormat::NvBit;
        }
        if first && l.starts_with(HEADER) {
            return TraceFormat::Mcmvm;
        }
        first = false;
    }
    TraceFormat::Mcmvm
}

impl TraceWorkload {
    /// Open and validate a trace, detecting its format ([`detect`]). Any malformed line is
    /// an error naming the file and the line.
    pub fn open(path: &Path) -> Result<TraceWorkload, WorkloadError> {
        let inner = match detect(path) {
            TraceFormat::Mcmvm => Inner::Mcmvm(reader::McmvmTrace::open(path)?),
            TraceFormat::AccelSim => Inner::AccelSim(accelsim::AccelSimTrace::open(path)?),
            TraceFormat::NvBit => Inner::NvBit(nvbit::NvbitTrace::open(path)?),
        };
        Ok(TraceWorkload {
            inner,
            count: OnceLock::new(),
        })
    }

    /// The format the trace was read from.
    pub fn format(&self) -> TraceFormat {
        match self.inner {
            Inner::Mcmvm(_) => TraceFormat::Mcmvm,
            Inner::AccelSim(_) => TraceFormat::AccelSim,
            Inner::NvBit(_) => TraceFormat::NvBit,
        }
    }

    /// The first error met while streaming, if a file changed after it was validated.
    pub fn stream_error(&self) -> Option<String> {
        match &self.inner {
            Inner::Mcmvm(t) => t.stream_error(),
            Inner::AccelSim(t) => t.stream_error(),
            Inner::NvBit(t) => t.stream_error(),
        }
    }

    /// Memory records in the trace: access records (mcmvm), global-memory instruction
    /// lines with an active lane (Accel-Sim, NVBit).
    pub fn records(&self) -> u64 {
        match &self.inner {
            Inner::Mcmvm(t) => t.records(),
            Inner::AccelSim(t) => t.records(),
            Inner::NvBit(t) => t.records(),
        }
    }

    /// The file the trace was read from (for Accel-Sim, its `kernelslist.g`).
    pub fn path(&self) -> &Path {
        match &self.inner {
            Inner::Mcmvm(t) => t.path(),
            Inner::AccelSim(t) => t.path(),
            Inner::NvBit(t) => t.path(),
        }
    }
}

impl TraceWorkload {
    /// Instructions the given warps stream.
    fn count_warps(&self, warps: Vec<(usize, u32, u32)>) -> u64 {
        warps
            .into_iter()
            .map(|(k, tb, w)| self.warp_stream(k, tb, w).count() as u64)
            .sum()
    }
}

impl Workload for TraceWorkload {
    fn name(&self) -> &str {
        match &self.inner {
            Inner::Mcmvm(t) => t.name(),
            Inner::AccelSim(t) => t.name(),
            Inner::NvBit(t) => t.name(),
        }
    }
    fn allocations(&self) -> &[Allocation] {
        match &self.inner {
            Inner::Mcmvm(t) => t.allocations(),
            Inner::AccelSim(t) => t.allocations(),
            Inner::NvBit(t) => t.allocations(),
        }
    }
    fn kernels(&self) -> &[Kernel] {
        match &self.inner {
            Inner::Mcmvm(t) => t.kernels(),
            Inner::AccelSim(t) => t.kernels(),
            Inner::NvBit(t) => t.kernels(),
        }
    }
    fn warp_stream(&self, kernel: usize, tb: u32, warp: u32) -> WarpStream<'_> {
        match &self.inner {
            Inner::Mcmvm(t) => t.warp_stream(kernel, tb, warp),
            Inner::AccelSim(t) => t.warp_stream(kernel, tb, warp),
            Inner::NvBit(t) => t.warp_stream(kernel, tb, warp),
        }
    }
    fn description(&self) -> &str {
        match self.format() {
            TraceFormat::Mcmvm => "trace file",
            TraceFormat::AccelSim => "Accel-Sim trace",
            TraceFormat::NvBit => "NVBit mem_trace output",
        }
    }
    fn instr_count(&self) -> u64 {
        match &self.inner {
            Inner::Mcmvm(t) => t.instr_count(),
            // Only the warps the index holds: walking every slot of the grid would take
            // hours for a launch of 2^32 thread blocks that records a handful.
            Inner::AccelSim(t) => *self
                .count
                .get_or_init(|| self.count_warps(t.indexed_warps())),
            Inner::NvBit(t) => *self
                .count
                .get_or_init(|| self.count_warps(t.indexed_warps())),
        }
    }
}
