//! `--record-ports DIR`: every block instance's system-driven port traffic, one VCD per
//! instance (`rt-chiplet0.vcd`, `att-UVMdriver.vcd`, …). Time is the block cycle *stepped*:
//! the idle cycles the system skips (proven not to change state or outputs) are left out,
//! so `mcmvm cosim --stimulus FILE` plays the recording back cycle for cycle.

use crate::error::CosimError;
use crate::wave::WaveRecorder;
use mcmvm_models::protocol::Ports;
use mcmvm_protocol::system::{BlockFault, BoxedSystemEngine, EngineReport, SystemEngine};
use std::path::Path;

/// Records what passes through another engine.
pub struct RecordingEngine<I: Ports, O: Ports> {
    inner: BoxedSystemEngine<I, O>,
    wave: Option<WaveRecorder<I, O>>,
    cycles: u64,
}

impl<I: Ports, O: Ports> RecordingEngine<I, O> {
    pub fn new(inner: BoxedSystemEngine<I, O>, path: &Path) -> Result<Self, CosimError> {
        let name = inner.report().engine;
        // The scope must be a plain identifier (`check(twin,verilator)` is not).
        let scope: String = name
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect();
        let wave = WaveRecorder::create(path, &[scope.as_str()])?;
        Ok(RecordingEngine {
            inner,
            wave: Some(wave),
            cycles: 0,
        })
    }
}

impl<I: Ports, O: Ports> SystemEngine<I, O> for RecordingEngine<I, O> {
    fn step(&mut self, system_cycle: u64, input: &I) -> Result<O, BlockFault> {
        let out = self.inner.step(system_cycle, input)?;
        if let Some(w) = self.wave.as_mut() {
            // A recording that cannot be written is dropped, never the run.
            if w.record(self.cycles, input, &[out]).is_err() {
                self.wave = None;
            }
        }
        self.cycles += 1;
        Ok(out)
    }
    fn skip_idle(&mut self, from: u64, cycles: u64) -> Result<(), BlockFault> {
        self.inner.skip_idle(from, cycles)
    }
    fn sync(&mut self) -> Result<(), BlockFault> {
        self.inner.sync()
    }
    fn report(&self) -> EngineReport {
        self.inner.report()
    }
}

impl<I: Ports, O: Ports> Drop for RecordingEngine<I, O> {
    fn drop(&mut self) {
        if let Some(w) = self.wave.take() {
            let _ = w.finish(self.cycles);
        }
    }
}
