//! Recorded port traffic as stimulus: the `inputs` scope of a VCD written by `mcmvm run
//! --record-ports` (or by a lockstep run) read back as one block's stimulus, cycle for
//! cycle, so a corner case a workload found becomes a directed testbench
//! (`mcmvm cosim --block B --stimulus FILE.vcd`).
//!
//! Time is the cycle index (one time unit per cycle, as [`crate::WaveRecorder`] writes): the
//! inputs of cycle `t` are the values after every change stamped at or before `t`; the
//! file's last timestamp ends the stimulus. A `.vcd.gz` file is read through gzip.

use mcmvm_models::protocol::Ports;
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use vcd::{Command, IdCode, Value};

/// Longest stimulus read from one file (a guard against a corrupt final timestamp).
const MAX_CYCLES: u64 = 100_000_000;
/// Deepest `$scope` nesting accepted: the vcd crate reads scopes recursively, and a header
/// nesting thousands deep would overflow the stack.
const MAX_SCOPE_DEPTH: usize = 64;
/// Longest header read (a guard against a file that never ends its definitions).
const MAX_HEADER_BYTES: u64 = 64 << 20;

/// Why a stimulus file cannot be used: the file, the line where the reader stopped (a
/// problem of the header as a whole has none), and what was expected there.
#[derive(Debug, thiserror::Error)]
pub enum StimulusError {
    /// The file could not be opened or read (a corrupt gzip stream too).
    #[error("{path}: cannot read: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// Line `line` is not what a stimulus recording has there.
    #[error("{path}:{line}: {problem}")]
    AtLine {
        path: PathBuf,
        line: u64,
        #[source]
        problem: StimulusProblem,
    },
    /// The file as a whole is not this block's recording.
    #[error("{path}: {problem}")]
    InFile {
        path: PathBuf,
        #[source]
        problem: StimulusProblem,
    },
}

/// What a stimulus file holds that a recording of this block may not.
#[derive(Debug, thiserror::Error)]
pub enum StimulusProblem {
    /// The header never ends within [`MAX_HEADER_BYTES`].
    #[error("not a VCD file: no `$enddefinitions` in the first {limit} bytes")]
    HeaderNeverEnds { limit: u64 },
    /// `$scope`s nest deeper than [`MAX_SCOPE_DEPTH`].
    #[error("not a VCD file this reader takes: scopes nest deeper than {limit}")]
    ScopesTooDeep { limit: usize },
    /// The vcd parser rejected the text (its message repeats the line).
    #[error("not a VCD file: {0}")]
    Syntax(#[source] std::io::Error),
    /// An input port of the block has no variable under `inputs`.
    #[error("no input port `inputs.{port}` ({width} bits): the recording is of another block")]
    MissingPort { port: &'static str, width: u32 },
    /// An input port's variable has another width than the block's port.
    #[error("input port `{port}` is {found} bits wide in the file, the block's is {width}")]
    PortWidth {
        port: &'static str,
        found: u32,
        width: u32,
    },
    /// A variable under `inputs` is no port of the block.
    #[error("input `{name}` is not a port of this block: the recording is of another block")]
    ExtraPort { name: String },
    /// A timestamp below the one before it.
    #[error("time goes back from #{from} to #{to}")]
    TimeGoesBack { from: u64, to: u64 },
    /// A timestamp past [`MAX_CYCLES`].
    #[error("#{at}: longer than {limit} cycles")]
    TooLong { at: u64, limit: u64 },
    /// An input bit that is X or Z.
    #[error("input `{port}` is X or Z at #{at}: a stimulus must be 0 or 1")]
    Undefined { port: &'static str, at: u64 },
    /// The body records no cycle.
    #[error("no cycles recorded")]
    NoCycles,
}

/// A recorded stimulus: runs of cycles with the same inputs, so a file whose timestamps
/// jump far ahead costs memory for its changes, never for the cycles it skips.
#[derive(Debug, Clone, PartialEq)]
pub struct Stimulus<I> {
    runs: Vec<(I, u64)>,
    cycles: u64,
}

impl<I: Copy> Stimulus<I> {
    /// Cycles in all.
    pub fn len(&self) -> u64 {
        self.cycles
    }
    pub fn is_empty(&self) -> bool {
        self.cycles == 0
    }
    /// Each cycle's inputs, in order.
    pub fn iter(&self) -> impl Iterator<Item = I> + '_ {
        self.runs
            .iter()
            .flat_map(|&(i, n)| std::iter::repeat_n(i, n as usize))
    }
}

impl<I: Copy + 'static> IntoIterator for Stimulus<I> {
    type Item = I;
    type IntoIter = Box<dyn Iterator<Item = I>>;
    fn into_iter(self) -> Self::IntoIter {
        Box::new(
            self.runs
                .into_iter()
                .flat_map(|(i, n)| std::iter::repeat_n(i, n as usize)),
        )
    }
}

/// Where a header check stopped: the file as a whole, or a line of it.
enum HeaderFault {
    Read(std::io::Error),
    InFile(StimulusProblem),
    AtLine(u64, StimulusProblem),
}

/// The header's bytes, up to and including the line with `$enddefinitions`, after checking
/// that its scopes nest at most [`MAX_SCOPE_DEPTH`] deep. (A header that never ends is left
/// to the vcd parser to reject.)
fn bounded_header(reader: &mut impl BufRead) -> Result<Vec<u8>, HeaderFault> {
    let mut header = Vec::new();
    let mut depth = 0usize;
    let mut line = 0u64;
    loop {
        let start = header.len();
        let left = MAX_HEADER_BYTES - start as u64;
        let n = reader
            .by_ref()
            .take(left)
            .read_until(b'\n', &mut header)
            .map_err(HeaderFault::Read)?;
        if n == 0 {
            if header.len() as u64 >= MAX_HEADER_BYTES {
                return Err(HeaderFault::InFile(StimulusProblem::HeaderNeverEnds {
                    limit: MAX_HEADER_BYTES,
                }));
            }
            return Ok(header);
        }
        line += 1;
        for word in header[start..].split(|b| b.is_ascii_whitespace()) {
            match word {
                b"$scope" => {
                    depth += 1;
                    if depth > MAX_SCOPE_DEPTH {
                        return Err(HeaderFault::AtLine(
                            line,
                            StimulusProblem::ScopesTooDeep {
                                limit: MAX_SCOPE_DEPTH,
                            },
                        ));
                    }
                }
                b"$upscope" => depth = depth.saturating_sub(1),
                b"$enddefinitions" => return Ok(header),
                _ => {}
            }
        }
    }
}

/// A VCD parser positioned after a header [`bounded_header`] has checked.
type VcdParser = vcd::Parser<std::io::Chain<std::io::Cursor<Vec<u8>>, BufReader<Box<dyn Read>>>>;

/// The stimulus recorded in `path` for the block whose input set is `I`.
pub fn read_stimulus<I: Ports>(path: &Path) -> Result<Stimulus<I>, StimulusError> {
    let in_file = |problem| StimulusError::InFile {
        path: path.to_path_buf(),
        problem,
    };
    // 1. Open (through gzip for `.gz`), bound the header, parse it.
    let mut parser = open(path)?;
    let header = parser
        .parse_header()
        .map_err(|e| parse_error(path, &parser, e))?;
    // 2. Every input port of `I`, at its width, and nothing else under `inputs`.
    let ports = input_ports::<I>(&header).map_err(in_file)?;
    // 3. The value changes, as runs of equal inputs.
    let stimulus = read_runs::<I>(path, parser, &ports)?;
    if stimulus.cycles == 0 {
        return Err(in_file(StimulusProblem::NoCycles));
    }
    Ok(stimulus)
}

fn open(path: &Path) -> Result<VcdParser, StimulusError> {
    let read = |source| StimulusError::Read {
        path: path.to_path_buf(),
        source,
    };
    let file = std::fs::File::open(path).map_err(read)?;
    let reader: Box<dyn Read> = if path.extension().is_some_and(|x| x == "gz") {
        Box::new(flate2::read::GzDecoder::new(file))
    } else {
        Box::new(file)
    };
    let mut reader = BufReader::new(reader);
    let header = bounded_header(&mut reader).map_err(|fault| match fault {
        HeaderFault::Read(source) => read(source),
        HeaderFault::InFile(problem) => StimulusError::InFile {
            path: path.to_path_buf(),
            problem,
        },
        HeaderFault::AtLine(line, problem) => StimulusError::AtLine {
            path: path.to_path_buf(),
            line,
            problem,
        },
    })?;
    Ok(vcd::Parser::new(std::io::Cursor::new(header).chain(reader)))
}

/// An error of the vcd parser at the line it stopped on: its syntax errors are the file's,
/// anything else (a corrupt gzip stream) is a read error.
fn parse_error(path: &Path, parser: &VcdParser, e: std::io::Error) -> StimulusError {
    let syntax = matches!(
        e.kind(),
        std::io::ErrorKind::InvalidData | std::io::ErrorKind::UnexpectedEof
    ) && e
        .get_ref()
        .is_none_or(|inner| inner.downcast_ref::<vcd::ParseError>().is_some());
    if syntax {
        StimulusError::AtLine {
            path: path.to_path_buf(),
            line: parser.line(),
            problem: StimulusProblem::Syntax(e),
        }
    } else {
        StimulusError::Read {
            path: path.to_path_buf(),
            source: e,
        }
    }
}

/// Each input port's id code in `header`, mapped to its index in `I::PORTS`.
fn input_ports<I: Ports>(header: &vcd::Header) -> Result<HashMap<IdCode, usize>, StimulusProblem> {
    let mut ports: HashMap<IdCode, usize> = HashMap::new();
    for (i, p) in I::PORTS.iter().enumerate() {
        let var = header
            .find_var(&["inputs", p.name])
            .ok_or(StimulusProblem::MissingPort {
                port: p.name,
                width: p.width,
            })?;
        if var.size != p.width {
            return Err(StimulusProblem::PortWidth {
                port: p.name,
                found: var.size,
                width: p.width,
            });
        }
        ports.insert(var.code, i);
    }
    let extra = header.items.iter().find_map(|item| match item {
        vcd::ScopeItem::Scope(s) if s.identifier == "inputs" => {
            s.items.iter().find_map(|v| match v {
                vcd::ScopeItem::Var(v) if !I::PORTS.iter().any(|p| p.name == v.reference) => {
                    Some(v.reference.clone())
                }
                _ => None,
            })
        }
        _ => None,
    });
    match extra {
        Some(name) => Err(StimulusProblem::ExtraPort { name }),
        None => Ok(ports),
    }
}

/// The body's value changes of `ports`, as runs of cycles with equal inputs.
fn read_runs<I: Ports>(
    path: &Path,
    mut parser: VcdParser,
    ports: &HashMap<IdCode, usize>,
) -> Result<Stimulus<I>, StimulusError> {
    let mut current = I::default();
    let mut runs: Vec<(I, u64)> = Vec::new();
    let mut cycles = 0u64;
    let mut at: Option<u64> = None;
    while let Some(command) = parser.next() {
        let command = command.map_err(|e| parse_error(path, &parser, e))?;
        let at_line = |problem| StimulusError::AtLine {
            path: path.to_path_buf(),
            line: parser.line(),
            problem,
        };
        let undefined = |i: usize| {
            at_line(StimulusProblem::Undefined {
                port: I::PORTS[i].name,
                at: at.unwrap_or(0),
            })
        };
        match command {
            Command::Timestamp(t) => {
                if let Some(prev) = at {
                    if t < prev {
                        return Err(at_line(StimulusProblem::TimeGoesBack { from: prev, to: t }));
                    }
                    if t > MAX_CYCLES {
                        return Err(at_line(StimulusProblem::TooLong {
                            at: t,
                            limit: MAX_CYCLES,
                        }));
                    }
                    if t > prev {
                        runs.push((current, t - prev));
                        cycles += t - prev;
                    }
                }
                at = Some(t);
            }
            Command::ChangeScalar(id, v) => {
                if let Some(&i) = ports.get(&id) {
                    current.set(i, bit(v).ok_or_else(|| undefined(i))?);
                }
            }
            Command::ChangeVector(id, v) => {
                if let Some(&i) = ports.get(&id) {
                    current.set(i, vector(&v).ok_or_else(|| undefined(i))?);
                }
            }
            _ => {}
        }
    }
    Ok(Stimulus { runs, cycles })
}

/// A vector's value, most significant bit first; `None` if any bit is X or Z.
fn vector(v: &vcd::Vector) -> Option<u64> {
    let mut x = 0u64;
    for b in v.iter() {
        x = (x << 1) | bit(b)?;
    }
    Some(x)
}

fn bit(v: Value) -> Option<u64> {
    match v {
        Value::V0 => Some(0),
        Value::V1 => Some(1),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::WaveRecorder;
    use mcmvm_models::protocol::{AttIn, RtIn, RtOut};

    #[test]
    fn a_recording_reads_back_cycle_for_cycle() {
        let dir = std::env::temp_dir().join(format!("mcmvm-stimulus-{}", std::process::id()));
        let path = dir.join("rt.vcd");
        let inputs = [
            RtIn::reset(),
            RtIn::walk(3, true),
            RtIn::idle(),
            RtIn::idle(),
            RtIn::drain(3),
        ];
        let mut w = WaveRecorder::<RtIn, RtOut>::create(&path, &["twin"]).unwrap();
        for (t, i) in inputs.iter().enumerate() {
            w.record(t as u64, i, &[RtOut::default()]).unwrap();
        }
        w.finish(inputs.len() as u64).unwrap();
        let back = read_stimulus::<RtIn>(&path).unwrap();
        assert_eq!(back.len(), inputs.len() as u64);
        assert_eq!(back.into_iter().collect::<Vec<_>>(), inputs.to_vec());
        let other = read_stimulus::<AttIn>(&path).unwrap_err().to_string();
        assert!(
            other.contains("the recording is of another block"),
            "{other}"
        );
        std::fs::write(&path, "$timescale 1 ns $end\n garbage").unwrap();
        let e = read_stimulus::<RtIn>(&path).unwrap_err();
        assert!(matches!(e, StimulusError::AtLine { line: 2, .. }), "{e}");
        assert!(e.to_string().contains("rt.vcd:2: not a VCD file"), "{e}");
        // Scopes nested past the limit are refused before the vcd parser recurses into them.
        let deep = "$scope module a $end\n".repeat(100_000);
        std::fs::write(
            &path,
            format!("$timescale 1 ns $end\n{deep}$enddefinitions $end\n#0\n#1\n"),
        )
        .unwrap();
        let e = read_stimulus::<RtIn>(&path).unwrap_err().to_string();
        assert!(
            e.contains("rt.vcd:66: not a VCD file this reader takes: scopes nest deeper than 64"),
            "{e}"
        );
        // A timestamp that goes back is named with its line (the last one here).
        let mut w = WaveRecorder::<RtIn, RtOut>::create(&path, &["twin"]).unwrap();
        w.record(0, &RtIn::reset(), &[RtOut::default()]).unwrap();
        w.finish(5).unwrap();
        let mut text = std::fs::read_to_string(&path).unwrap();
        text.push_str("#3\n");
        std::fs::write(&path, &text).unwrap();
        let e = read_stimulus::<RtIn>(&path).unwrap_err().to_string();
        let last = text.lines().count();
        assert!(
            e.contains(&format!("rt.vcd:{last}: time goes back from #5 to #3")),
            "{e}"
        );
        // A jump of 10^8 - 1 cycles is one run, not 10^8 copies of the inputs.
        let mut w = WaveRecorder::<RtIn, RtOut>::create(&path, &["twin"]).unwrap();
        w.record(0, &RtIn::reset(), &[RtOut::default()]).unwrap();
        w.finish(MAX_CYCLES - 1).unwrap();
        let long = read_stimulus::<RtIn>(&path).unwrap();
        assert_eq!((long.len(), long.runs.len()), (MAX_CYCLES - 1, 1));
        let missing = read_stimulus::<RtIn>(&dir.join("none.vcd"))
            .unwrap_err()
            .to_string();
        assert!(missing.contains("none.vcd: cannot read"), "{missing}");
        let _ = std::fs::remove_dir_all(dir);
    }
}
