//! Replaying recorded port traffic: the `inputs` scope of a VCD written by `mcmvm run
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
use std::path::Path;
use vcd::{Command, IdCode, Value};

/// Longest stimulus read from one file (a guard against a corrupt final timestamp).
const MAX_CYCLES: u64 = 100_000_000;

/// The stimulus recorded in `path` for the block whose input set is `I`.
pub fn read_stimulus<I: Ports>(path: &Path) -> Result<Vec<I>, CosimError> {
    let err = |message: String| CosimError::Stimulus {
        path: path.to_path_buf(),
        message,
    };
    let file = std::fs::File::open(path).map_err(|e| err(format!("cannot read: {e}")))?;
    let reader: Box<dyn std::io::Read> = if path.extension().is_some_and(|x| x == "gz") {
        Box::new(flate2::read::GzDecoder::new(file))
    } else {
        Box::new(file)
    };
    let mut parser = vcd::Parser::new(std::io::BufReader::new(reader));
    let header = parser
        .parse_header()
        .map_err(|e| err(format!("not a VCD file: {e}")))?;
    let mut ports: HashMap<IdCode, usize> = HashMap::new();
    for (i, p) in I::PORTS.iter().enumerate() {
        let var = header.find_var(&["inputs", p.name]).ok_or_else(|| {
            err(format!(
                "no input port `inputs.{}` ({} bits): the recording is of another block",
                p.name, p.width
            ))
        })?;
        if var.size != p.width {
            return Err(err(format!(
                "input port `{}` is {} bits wide in the file, the block's is {}",
                p.name, var.size, p.width
            )));
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
    if let Some(name) = extra {
        return Err(err(format!(
            "input `{name}` is not a port of this block: the recording is of another block"
        )));
    }
    let mut current = I::default();
    let mut cycles: Vec<I> = Vec::new();
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
                    cycles.extend(std::iter::repeat_n(current, (t - prev) as usize));
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
                    let mut x = 0u64;
                    for b in v.iter() {
                        x = (x << 1)
                            | bit(b).ok_or_else(|| err(undefined(I::PORTS[i].name, at)))?;
                    }
                    current.set(i, x);
                }
            }
            _ => {}
        }
    }
    if cycles.is_empty() {
        return Err(err("no cycles recorded".to_string()));
    }
    Ok(cycles)
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
        assert_eq!(read_stimulus::<RtIn>(&path).unwrap(), inputs.to_vec());
        let other = read_stimulus::<AttIn>(&path).unwrap_err().to_string();
        assert!(
            other.contains("the recording is of another block"),
            "{other}"
        );
        std::fs::write(&path, "$timescale 1 ns $end\n garbage").unwrap();
        assert!(read_stimulus::<RtIn>(&path).is_err());
        let missing = read_stimulus::<RtIn>(&dir.join("none.vcd"))
            .unwrap_err()
            .to_string();
        assert!(missing.contains("cannot read"), "{missing}");
        let _ = std::fs::remove_dir_all(dir);
    }
}
