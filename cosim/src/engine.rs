//! The three engines and the blocks they can run.
//!
//! Every engine of a block is a `CycleModel` over the same port sets, so the lockstep can
//! hold them side by side as trait objects:
//! - `twin`: the behavioural twin from `mcmvm_models::blocks`, the system model's fast path;
//! - `rusthdl`: the RustHDL module run by rust-hdl's `simulate()` (adapter in `mcmvm_rtl`);
//! - `verilator`: the *emitted Verilog* compiled by Verilator (this crate's bridge).

use crate::error::CosimError;
use crate::verilator::VerilatorModel;
use mcmvm_models::blocks::{access_time_tracker, remote_tracker, tlb_coalescer};
use mcmvm_models::config::HwConfig;
use mcmvm_models::protocol::{
    AttIn, AttOut, BlockKind, CoalIn, CoalOut, CycleModel, Ports, RtIn, RtOut,
};
use std::str::FromStr;

/// One simulation engine of a block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum EngineKind {
    /// The behavioural twin.
    Twin,
    /// rust-hdl's own simulator on the RustHDL module.
    RustHdl,
    /// Verilator on the emitted Verilog.
    Verilator,
}

impl EngineKind {
    /// Every engine, in the order the CLI lists them.
    pub const ALL: [EngineKind; 3] = [EngineKind::Twin, EngineKind::RustHdl, EngineKind::Verilator];

    /// The command-line name, also the engine's VCD scope.
    pub fn name(self) -> &'static str {
        match self {
            EngineKind::Twin => "twin",
            EngineKind::RustHdl => "rusthdl",
            EngineKind::Verilator => "verilator",
        }
    }

    /// Parse a comma-separated list (`twin,verilator`): each name once, at least one.
    pub fn parse_list(list: &str) -> Result<Vec<EngineKind>, CosimError> {
        let mut engines = Vec::new();
        for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            let kind: EngineKind = name.parse()?;
            if engines.contains(&kind) {
                return Err(CosimError::DuplicateEngine(name.to_string()));
            }
            engines.push(kind);
        }
        if engines.is_empty() {
            return Err(CosimError::NoEngines);
        }
        Ok(engines)
    }
}

impl std::fmt::Display for EngineKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for EngineKind {
    type Err = CosimError;
    fn from_str(s: &str) -> Result<Self, CosimError> {
        // `model` was the twin's name before `--hw` and `--engines` shared one vocabulary;
        // old scripts still pass it.
        if s == "model" {
            return Ok(EngineKind::Twin);
        }
        EngineKind::ALL
            .into_iter()
            .find(|k| k.name() == s)
            .ok_or_else(|| CosimError::UnknownEngine(s.to_string()))
    }
}

/// A boxed engine of a block with input set `I` and output set `O`.
pub type BoxedEngine<I, O> = Box<dyn CycleModel<In = I, Out = O>>;

/// A hardware block the lockstep can run: its port sets and how to build each engine.
pub trait CosimBlock {
    /// Input port set.
    type In: Ports;
    /// Output port set.
    type Out: Ports;
    /// Which block this is.
    const KIND: BlockKind;
    /// Build engine `kind` for the parameters `cfg`.
    fn engine(
        kind: EngineKind,
        cfg: &HwConfig,
    ) -> Result<BoxedEngine<Self::In, Self::Out>, CosimError>;
}

/// The Remote Tracker (CLAP §4.3).
pub struct Rt;
/// The TLB coalescing logic (CLAP §4.6).
pub struct Coalescer;
/// The Access Time Tracker (Forest).
pub struct Att;

impl CosimBlock for Rt {
    type In = RtIn;
    type Out = RtOut;
    const KIND: BlockKind = BlockKind::RemoteTracker;
    fn engine(kind: EngineKind, cfg: &HwConfig) -> Result<BoxedEngine<RtIn, RtOut>, CosimError> {
        Ok(match kind {
            EngineKind::Twin => Box::new(remote_tracker::RemoteTracker::new(&cfg.remote_tracker)),
            EngineKind::RustHdl => Box::new(mcmvm_rtl::remote_tracker::RemoteTrackerHdlSim::new(
                &cfg.remote_tracker,
            )),
            EngineKind::Verilator => Box::new(VerilatorModel::<RtIn, RtOut>::checked(
                Self::KIND,
                cfg,
                false,
            )?),
        })
    }
}

impl CosimBlock for Coalescer {
    type In = CoalIn;
    type Out = CoalOut;
    const KIND: BlockKind = BlockKind::TlbCoalescer;
    fn engine(
        kind: EngineKind,
        cfg: &HwConfig,
    ) -> Result<BoxedEngine<CoalIn, CoalOut>, CosimError> {
        Ok(match kind {
            EngineKind::Twin => Box::new(tlb_coalescer::TlbCoalescer::new(&cfg.tlb_coalescer)),
            EngineKind::RustHdl => Box::new(mcmvm_rtl::tlb_coalescer::TlbCoalescerHdlSim::new(
                &cfg.tlb_coalescer,
            )),
            EngineKind::Verilator => Box::new(VerilatorModel::<CoalIn, CoalOut>::checked(
                Self::KIND,
                cfg,
                false,
            )?),
        })
    }
}

impl CosimBlock for Att {
    type In = AttIn;
    type Out = AttOut;
    const KIND: BlockKind = BlockKind::AccessTimeTracker;
    fn engine(kind: EngineKind, cfg: &HwConfig) -> Result<BoxedEngine<AttIn, AttOut>, CosimError> {
        Ok(match kind {
            EngineKind::Twin => Box::new(access_time_tracker::AccessTimeTracker::new(
                &cfg.access_time_tracker,
            )),
            EngineKind::RustHdl => Box::new(
                mcmvm_rtl::access_time_tracker::AccessTimeTrackerHdlSim::new(
                    &cfg.access_time_tracker,
                ),
            ),
            EngineKind::Verilator => Box::new(VerilatorModel::<AttIn, AttOut>::checked(
                Self::KIND,
                cfg,
                false,
            )?),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn engine_lists_parse_and_bad_names_list_the_valid_ones() {
        assert_eq!(
            EngineKind::parse_list("twin,rusthdl,verilator").unwrap(),
            EngineKind::ALL.to_vec()
        );
        assert_eq!(
            EngineKind::parse_list("model").unwrap(),
            vec![EngineKind::Twin],
            "old scripts' name for the twin still parses"
        );
        let err = EngineKind::parse_list("twin,spice")
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "unknown engine `spice`: expected one of twin, rusthdl, verilator"
        );
        assert!(matches!(
            EngineKind::parse_list("twin,model"),
            Err(CosimError::DuplicateEngine(_))
        ));
        assert!(matches!(
            EngineKind::parse_list(" , "),
            Err(CosimError::NoEngines)
        ));
    }
}
