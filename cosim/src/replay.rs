//! Recorded port traffic as stimulus: the `inputs` scope of a VCD written by `mcmvm run
//! --record-ports` (or by a lockstep run) read back as one block's stimulus, cycle for
//! cycle, so a corner case a workload found becomes a directed testbench
//! (`mcmvm cosim --block B --stimulus FILE.vcd`).
//!
//! Time is the cycle index (one time unit per cycle, as [`crate::WaveRecorder`] writes): the
//! inputs of cycle `t` are the values after every change stamped at or before `t`; the
//! file's last timestamp ends the stimulus. A `.vcd.gz` file is read through gzip.

use crate::error::CosimError;
use mcmvm_models::protocol::Ports;
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use vcd::{Command, IdCode, Value};

/// Longest stimulus read from one file (a guard against a corrupt final timestamp).
const MAX_CYCLES: u64 = 100_000_000;
/// Deepest `$scope` nesting accepted: the vcd crate reads scopes recursively, and a header
/// nesting thousands deep would overflow the stack.
const MAX_SCOPE_DEPTH: usize = 64;
/// Longest header read (a guard against a file that never ends its definitions).
const MAX_HEADER_BYTES: u64 = 64 << 20;

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

/// The header's bytes, up to and including the line with `$enddefinitions`, after checking
/// that its scopes nest at most [`MAX_SCOPE_DEPTH`] deep. (A header that never ends is left
/// to the vcd parser to reject.)
fn bounded_header(reader: &mut impl BufRead) -> Result<Vec<u8>, String> {
    let mut header = Vec::new();
    let mut depth = 0usize;
    loop {
        let start = header.len();
        let left = MAX_HEADER_BYTES - start as u64;
        let n = reader
            .by_ref()
            .take(left)
            .read_until(b'\n', &mut header)
            .map_err(|e| format!("cannot read: {e}"))?;
        if n == 0 {
            if header.len() as u64 >= MAX_HEADER_BYTES {
                return Err(format!(
                    "not a VCD file: no `$enddefinitions` in the first {MAX_HEADER_BYTES} bytes"
                ));
            }
            return Ok(header);
        }
        for word in header[start..].split(|b| b.is_ascii_whitespace()) {
            match word {
                b"$scope" => {
                    depth += 1;
                    if depth > MAX_SCOPE_DEPTH {
                        return Err(format!(
                            "not a VCD file this reader takes: scopes nest deeper than {MAX_SCOPE_DEPTH}"
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

/// The stimulus error for `path`.
fn bad(path: &Path, message: String) -> CosimError {
    CosimError::Stimulus {
        path: path.to_path_buf(),
        message,
    }
}

/// The stimulus recorded in `path` for the block whose input set is `I`.
pub fn read_stimulus<I: Ports>(path: &Path) -> Result<Stimulus<I>, CosimError> {
    // 1. Open (through gzip for `.gz`), bound the header, parse it.
    let mut parser = open(path)?;
    let header = parser
        .parse_header()
        .map_err(|e| bad(path, format!("not a VCD file: {e}")))?;
    // 2. Every input port of `I`, at its width, and nothing else under `inputs`.
    let ports = input_ports::<I>(path, &header)?;
    // 3. The value changes, as runs of equal inputs.
    let stimulus = read_runs::<I>(path, parser, &ports)?;
    if stimulus.cycles == 0 {
        return Err(bad(path, "no cycles recorded".to_string()));
    }
    Ok(stimulus)
}

fn open(path: &Path) -> Result<VcdParser, CosimError> {
    let file = std::fs::File::open(path).map_err(|e| bad(path, format!("cannot read: {e}")))?;
    let reader: Box<dyn Read> = if path.extension().is_some_and(|x| x == "gz") {
        Box::new(flate2::read::GzDecoder::new(file))
    } else {
        Box::new(file)
    };
    let mut reader = BufReader::new(reader);
    let header = bounded_header(&mut reader).map_err(|m| bad(path, m))?;
    Ok(vcd::Parser::new(std::io::Cursor::new(header).chain(reader)))
}

/// Each input port's id code in `header`, mapped to its index in `I::PORTS`.
fn input_ports<I: Ports>(
    path: &Path,
    header: &vcd::Header,
) -> Result<HashMap<IdCode, usize>, CosimError> {
    let mut ports: HashMap<IdCode, usize> = HashMap::new();
    for (i, p) in I::PORTS.iter().enumerate() {
        let var = header.find_var(&["inputs", p.name]).ok_or_else(|| {
            bad(
                path,
                format!(
                    "no input port `inputs.{}` ({} bits): the recording is of another block",
                    p.name, p.width
                ),
            )
        })?;
        if var.size != p.width {
            return Err(bad(
                path,
                format!(
                    "input port `{}` is {} bits wide in the file, the block's is {}",
                    p.name, var.size, p.width
                ),
            ));
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
        Some(name) => Err(bad(
            path,
            format!(
                "input `{name}` is not a port of this block: the recording is of another block"
            ),
        )),
        None => Ok(ports),
    }
}

/// The body's value changes of `ports`, as runs of cycles with equal inputs.
fn read_runs<I: Ports>(
    path: &Path,
    parser: VcdParser,
    ports: &HashMap<IdCode, usize>,
) -> Result<Stimulus<I>, CosimError> {
    let err = |message: String| bad(path, message);
    let mut current = I::default();
    let mut runs: Vec<(I, u64)> = Vec::new();
    let mut cycles = 0u64;
    let mut at: Option<u64> = None;
    for command in parser {
        let command = command.map_err(|e| err(format!("malformed VCD: {e}")))?;
        match command {
            Command::Timestamp(t) => {
                if let Some(prev) = at {
                    if t < prev {
                        return Err(err(format!("time goes back from #{prev} to #{t}")));
                    }
                    if t > MAX_CYCLES {
                        return Err(err(format!("#{t}: longer than {MAX_CYCLES} cycles")));
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
                    current.set(
                        i,
                        bit(v).ok_or_else(|| err(undefined(I::PORTS[i].name, at)))?,
                    );
                }
            }
            Command::ChangeVector(id, v) => {
                if let Some(&i) = ports.get(&id) {
                    let x = vector(&v).ok_or_else(|| err(undefined(I::PORTS[i].name, at)))?;
                    current.set(i, x);
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

fn undefined(port: &str, at: Option<u64>) -> String {
    format!(
        "input `{port}` is X or Z at #{}: a stimulus must be 0 or 1",
        at.unwrap_or(0)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::WaveRecorder;
    use mcmvm_models::protocol::{AttIn, RtIn, RtOut};

    #[test]
    fn a_recording_reads_back_cycle_for_cycle() {
        let dir = std::env::temp_dir().join(format!("mcmvm-replay-{}", std::process::id()));
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
        assert!(read_stimulus::<RtIn>(&path).is_err());
        // Scopes nested past the limit are refused before the vcd parser recurses into them.
        let deep = "$scope module a $end\n".repeat(100_000);
        std::fs::write(
            &path,
            format!("$timescale 1 ns $end\n{deep}$enddefinitions $end\n#0\n#1\n"),
        )
        .unwrap();
        let e = read_stimulus::<RtIn>(&path).unwrap_err().to_string();
        assert!(e.contains("nest deeper than 64"), "{e}");
        // A jump of 10^8 - 1 cycles is one run, not 10^8 copies of the inputs.
        let mut w = WaveRecorder::<RtIn, RtOut>::create(&path, &["twin"]).unwrap();
        w.record(0, &RtIn::reset(), &[RtOut::default()]).unwrap();
        w.finish(MAX_CYCLES - 1).unwrap();
        let long = read_stimulus::<RtIn>(&path).unwrap();
        assert_eq!((long.len(), long.runs.len()), (MAX_CYCLES - 1, 1));
        let missing = read_stimulus::<RtIn>(&dir.join("none.vcd"))
            .unwrap_err()
            .to_string();
        assert!(missing.contains("cannot read"), "{missing}");
        let _ = std::fs::remove_dir_all(dir);
    }
}
