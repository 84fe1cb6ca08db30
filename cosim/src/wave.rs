//! Streaming VCD writer for a lockstep run: scope `inputs` with every input port, then one
//! scope per engine with every output port. Timescale 1 ns, one time unit per cycle;
//! only changed values are written, straight to a buffered file, so a run of any length
//! needs constant memory.

use crate::error::CosimError;
use mcmvm_models::protocol::{PortDesc, Ports};
use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use vcd::{IdCode, TimescaleUnit, Value};

/// Records the inputs and every engine's outputs of each cycle into a VCD file.
pub struct WaveRecorder<I: Ports, O: Ports> {
    path: PathBuf,
    writer: vcd::Writer<BufWriter<File>>,
    input_ids: Vec<IdCode>,
    /// `output_ids[engine][port]`.
    output_ids: Vec<Vec<IdCode>>,
    /// Last value written per variable, inputs first, then each engine's outputs; `None`
    /// before the first cycle so everything is written once.
    last: Vec<Option<u64>>,
    _ports: std::marker::PhantomData<(I, O)>,
}

impl<I: Ports, O: Ports> WaveRecorder<I, O> {
    /// Create `path` (parent directories too) and write the header for `engines`.
    pub fn create(path: &Path, engines: &[&str]) -> Result<Self, CosimError> {
        let io_err = |source| CosimError::Vcd {
            path: path.to_path_buf(),
            io: source,
        };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(io_err)?;
        }
        let file = File::create(path).map_err(io_err)?;
        let mut writer = vcd::Writer::new(BufWriter::with_capacity(1 << 16, file));
        let mut header = || -> std::io::Result<(Vec<IdCode>, Vec<Vec<IdCode>>)> {
            writer.timescale(1, TimescaleUnit::NS)?;
            let input_ids = add_scope(&mut writer, "inputs", I::PORTS)?;
            let mut output_ids = Vec::with_capacity(engines.len());
            for engine in engines {
                output_ids.push(add_scope(&mut writer, engine, O::PORTS)?);
            }
            writer.enddefinitions()?;
            Ok((input_ids, output_ids))
        };
        let (input_ids, output_ids) = header().map_err(io_err)?;
        let vars = I::PORTS.len() + engines.len() * O::PORTS.len();
        Ok(WaveRecorder {
            path: path.to_path_buf(),
            writer,
            input_ids,
            output_ids,
            last: vec![None; vars],
            _ports: std::marker::PhantomData,
        })
    }

    /// The file being written.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Record cycle `cycle`: the inputs applied and each engine's outputs, in engine order.
    pub fn record(&mut self, cycle: u64, input: &I, outputs: &[O]) -> Result<(), CosimError> {
        self.write_cycle(cycle, input, outputs)
            .map_err(|source| CosimError::Vcd {
                path: self.path.clone(),
                io: source,
            })
    }

    fn write_cycle(&mut self, cycle: u64, input: &I, outputs: &[O]) -> std::io::Result<()> {
        let mut stamped = false;
        let mut slot = 0;
        for (i, desc) in I::PORTS.iter().enumerate() {
            let v = input.get(i);
            self.change(&mut stamped, cycle, slot, self.input_ids[i], desc.width, v)?;
            slot += 1;
        }
        for (e, out) in outputs.iter().enumerate() {
            for (i, desc) in O::PORTS.iter().enumerate() {
                let v = out.get(i);
                self.change(
                    &mut stamped,
                    cycle,
                    slot,
                    self.output_ids[e][i],
                    desc.width,
                    v,
                )?;
                slot += 1;
            }
        }
        Ok(())
    }

    /// Write one variable if it changed, preceded by the cycle's timestamp the first time.
    fn change(
        &mut self,
        stamped: &mut bool,
        cycle: u64,
        slot: usize,
        id: IdCode,
        width: u32,
        v: u64,
    ) -> std::io::Result<()> {
        if self.last[slot] == Some(v) {
            return Ok(());
        }
        self.last[slot] = Some(v);
        if !*stamped {
            self.writer.timestamp(cycle)?;
            *stamped = true;
        }
        if width == 1 {
            self.writer.change_scalar(id, Value::from(v & 1 == 1))
        } else {
            self.writer
                .change_vector(id, (0..width).rev().map(|b| Value::from((v >> b) & 1 == 1)))
        }
    }

    /// Close the wave at time `end` (the cycle after the last one recorded) and flush it
    /// to disk.
    pub fn finish(mut self, end: u64) -> Result<PathBuf, CosimError> {
        let io_err = |source| CosimError::Vcd {
            path: self.path.clone(),
            io: source,
        };
        self.writer.timestamp(end).map_err(io_err)?;
        self.writer.flush().map_err(io_err)?;
        Ok(self.path)
    }
}

fn add_scope<W: std::io::Write>(
    writer: &mut vcd::Writer<W>,
    name: &str,
    ports: &[PortDesc],
) -> std::io::Result<Vec<IdCode>> {
    writer.add_module(name)?;
    let ids = ports
        .iter()
        .map(|p| writer.add_wire(p.width, p.name))
        .collect::<std::io::Result<Vec<_>>>()?;
    writer.upscope()?;
    Ok(ids)
}
