//! # mcmvm-refcheck — port-level reference monitors, written from the block READMEs
//!
//! Every engine of a block (twin, rust-hdl, Verilator) is compared with the others in
//! lockstep, but the twin and the RTL were written from the same reading of the papers, so
//! a shared misreading passes unnoticed. The monitors here are a third, independent
//! derivation: each one is written from its block's README alone
//! (`rtl/src/remote_tracker.md`, `rtl/src/tlb_coalescer.md`,
//! `rtl/src/access_time_tracker.md`) and sees only the ports. It keeps its own model of the
//! state the README describes, predicts every output of every cycle and reports the first
//! one that differs, naming the README rule behind the prediction.
//!
//! Each monitor also counts named functional-coverage bins ([`Coverage`], via [`Covered`]):
//! the behaviours of its README that the observed cycles exercised.
//!
//! The crate depends on `mcmvm-protocol` only (port structs and configs), never on the
//! twins or the RTL: sharing their code would defeat the point.

pub mod att;
pub mod coalescer;
pub mod coverage;
pub mod rt;
mod rt_table;

pub use att::AttMonitor;
pub use coalescer::CoalescerMonitor;
pub use coverage::{Coverage, Covered};
pub use rt::RtMonitor;

use mcmvm_protocol::config::HwConfig;
use mcmvm_protocol::protocol::{AttIn, AttOut, BlockKind, CoalIn, CoalOut, Ports, RtIn, RtOut};
use std::any::Any;

/// A port-level checker of one block. Every monitor counts coverage ([`Covered`]), so code
/// holding a `Box<dyn Monitor>` (the cosim lockstep) can report it.
pub trait Monitor<I, O>: Send + Covered {
    /// Observe one cycle (inputs applied, outputs sampled, then the clock edge) and check
    /// the outputs. The monitor advances its own state from `input` whether or not the
    /// outputs were right, so it stays a reference after a violation.
    fn observe(&mut self, cycle: u64, input: &I, output: &O) -> Result<(), Violation>;
}

/// The first output that differs from what the README predicts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// Block short name (`rt`, `coalescer`, `att`).
    pub block: &'static str,
    /// Cycle, as passed to [`Monitor::observe`].
    pub cycle: u64,
    /// Output port name.
    pub signal: &'static str,
    /// The value the README rule gives.
    pub expected: u64,
    /// The value the engine produced.
    pub got: u64,
    /// The rule, with the operations that led to the expected value.
    pub rule: String,
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} cycle {}: {} expected {:#x}, got {:#x}: {}",
            self.block, self.cycle, self.signal, self.expected, self.got, self.rule
        )
    }
}

impl std::error::Error for Violation {}

/// Port sets that have a reference monitor: lets generic code (the cosim lockstep) build
/// the monitor of whichever block it runs.
pub trait Reference: Ports {
    /// The block's output port set.
    type Out: Ports;
    /// The block's monitor for the parameters in `cfg`.
    fn monitor(cfg: &HwConfig) -> Box<dyn Monitor<Self, Self::Out>>;
}

impl Reference for RtIn {
    type Out = RtOut;
    fn monitor(cfg: &HwConfig) -> Box<dyn Monitor<RtIn, RtOut>> {
        Box::new(RtMonitor::new(&cfg.remote_tracker))
    }
}

impl Reference for CoalIn {
    type Out = CoalOut;
    fn monitor(cfg: &HwConfig) -> Box<dyn Monitor<CoalIn, CoalOut>> {
        Box::new(CoalescerMonitor::new(&cfg.tlb_coalescer))
    }
}

impl Reference for AttIn {
    type Out = AttOut;
    fn monitor(cfg: &HwConfig) -> Box<dyn Monitor<AttIn, AttOut>> {
        Box::new(AttMonitor::new(&cfg.access_time_tracker))
    }
}

/// The monitor of block `kind` as a monitor over `I` / `O`, for code that is generic over
/// the block and knows only its [`BlockKind`] (the cosim lockstep: its `CosimBlock` trait
/// carries no refcheck bound). `None` when `I` / `O` are not `kind`'s port sets.
pub fn monitor_for<I: Ports, O: Ports>(
    kind: BlockKind,
    cfg: &HwConfig,
) -> Option<Box<dyn Monitor<I, O>>> {
    let any: Box<dyn Any> = match kind {
        BlockKind::RemoteTracker => Box::new(RtIn::monitor(cfg)),
        BlockKind::TlbCoalescer => Box::new(CoalIn::monitor(cfg)),
        BlockKind::AccessTimeTracker => Box::new(AttIn::monitor(cfg)),
    };
    // Succeeds exactly when `Box<dyn Monitor<I, O>>` is the type built above.
    any.downcast::<Box<dyn Monitor<I, O>>>().ok().map(|b| *b)
}

/// Compare a predicted output set with the observed one, port by port in protocol order
/// (the order the cosim scoreboard names mismatches in, so both name the same signal), and
/// build the violation of the first difference. `rule` is only called on a difference, so
/// the per-cycle cost is one struct compare.
pub(crate) fn compare<O: Ports>(
    block: &'static str,
    cycle: u64,
    expected: &O,
    got: &O,
    rule: impl FnOnce(&'static str) -> String,
) -> Result<(), Violation> {
    if expected == got {
        return Ok(());
    }
    let Some(i) = (0..O::PORTS.len()).find(|&i| expected.get(i) != got.get(i)) else {
        return Ok(());
    };
    let signal = O::PORTS[i].name;
    Err(Violation {
        block,
        cycle,
        signal,
        expected: expected.get(i),
        got: got.get(i),
        rule: rule(signal),
    })
}

/// Low `width` bits of an input port value: a port struct built by hand may carry more bits
/// than the port has, and the hardware sees only the port's width.
pub(crate) fn bits(v: u64, width: u32) -> u64 {
    mcmvm_protocol::protocol::mask(width) & v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn monitor_for_matches_the_block_to_its_ports() {
        let cfg = HwConfig::default();
        assert!(monitor_for::<RtIn, RtOut>(BlockKind::RemoteTracker, &cfg).is_some());
        assert!(monitor_for::<CoalIn, CoalOut>(BlockKind::TlbCoalescer, &cfg).is_some());
        assert!(monitor_for::<AttIn, AttOut>(BlockKind::AccessTimeTracker, &cfg).is_some());
        assert!(monitor_for::<RtIn, RtOut>(BlockKind::AccessTimeTracker, &cfg).is_none());
    }

    /// The one line a failing check prints: block, cycle, port, both values in hex, rule.
    #[test]
    fn violation_reads_as_block_cycle_port_expected_got_rule() {
        let v = Violation {
            block: "rt",
            cycle: 42,
            signal: "drain_access",
            expected: 1,
            got: 0x1f,
            rule: "drain returns the walks since the last drain".into(),
        };
        assert_eq!(
            v.to_string(),
            "rt cycle 42: drain_access expected 0x1, got 0x1f: \
             drain returns the walks since the last drain"
        );
    }
}
