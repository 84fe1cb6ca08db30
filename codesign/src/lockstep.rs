//! A point's own Verilog against the twin, cycle for cycle: the lockstep harness of `mcmvm
//! cosim` (`mcmvm_cosim::lockstep`) with the twin and Verilator on the point's
//! parameters, driven by the block's seeded random testbench stimulus
//! (`mcmvm-testbenches`). The harness stops at the first mismatch, so a point has 0 or 1;
//! a mismatch marks the point failed (the table says so and the recommendation skips it).
//!
//! The system runs check the same Verilog only where it serves (the twin predicts it and a
//! misprediction repeats the run unpredicted); the lockstep compares every output port on
//! every cycle, including the ones the system never reaches.

use crate::CodesignError;
use mcmvm_cosim::lockstep::lockstep;
use mcmvm_cosim::{Att, Coalescer, EngineKind, LockstepOptions, Rt};
use mcmvm_models::config::HwConfig;
use mcmvm_protocol::protocol::BlockKind;
use serde::{Deserialize, Serialize};

/// Cycles of random stimulus per point: short next to the system runs (which step the
/// ATT for millions of cycles), so the check costs little beside them.
pub const CYCLES: u64 = 4000;

/// The engines compared, in order (the twin first, as `mcmvm cosim` lists it).
const ENGINES: [EngineKind; 2] = [EngineKind::Twin, EngineKind::Verilator];

/// What a point's lockstep run found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Lockstep {
    /// `twin,verilator`.
    pub engines: String,
    /// The testbench seed (the study's `--seed`).
    pub seed: u64,
    /// Cycles compared (including a mismatching one).
    pub cycles: u64,
    /// Mismatching cycles: 0, or 1 (the harness stops at the first).
    pub mismatches: u64,
    /// The first mismatch: cycle, signal and each engine's value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_mismatch: Option<String>,
}

impl Lockstep {
    /// Whether the Verilog and the twin agreed on every cycle.
    pub fn passed(&self) -> bool {
        self.mismatches == 0
    }
}

/// Run the point `hw` of `block` in lockstep for [`CYCLES`] cycles of the testbench's
/// random stimulus seeded with `seed`.
pub fn run(block: BlockKind, hw: &HwConfig, seed: u64) -> Result<Lockstep, CodesignError> {
    let opts = LockstepOptions {
        engines: ENGINES.to_vec(),
        cycles: CYCLES,
        vcd: None,
    };
    let report = match block {
        BlockKind::RemoteTracker => {
            use mcmvm_testbenches::remote_tracker as tb;
            lockstep::<Rt>(hw, &opts, tb::random(hw, seed))
        }
        BlockKind::TlbCoalescer => {
            use mcmvm_testbenches::tlb_coalescer as tb;
            lockstep::<Coalescer>(hw, &opts, tb::random(hw, seed))
        }
        BlockKind::AccessTimeTracker => {
            use mcmvm_testbenches::access_time_tracker as tb;
            lockstep::<Att>(hw, &opts, tb::random(hw, seed))
        }
    }
    .map_err(|source| CodesignError::Lockstep {
        module: block.module_name(),
        source,
    })?;
    Ok(Lockstep {
        engines: ENGINES.map(EngineKind::name).join(","),
        seed,
        cycles: report.cycles,
        mismatches: u64::from(report.mismatch.is_some()),
        first_mismatch: report.mismatch.map(|m| m.to_string()),
    })
}
