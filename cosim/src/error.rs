//! Why a co-simulation could not run. A divergence between engines is *not* an error: it is
//! the result the lockstep exists to find, and is reported in [`crate::LockstepReport`].

use std::path::PathBuf;

/// Errors of the co-simulation library.
#[derive(Debug, thiserror::Error)]
pub enum CosimError {
    /// An engine name on the command line is not one of the three.
    #[error("unknown engine `{0}`: expected one of model, rusthdl, verilator")]
    UnknownEngine(String),
    /// The same engine was asked for twice.
    #[error("engine `{0}` given twice: each engine runs once")]
    DuplicateEngine(String),
    /// No engine was given.
    #[error("no engines given: expected one or more of model, rusthdl, verilator")]
    NoEngines,
    /// A run of zero cycles was asked for.
    #[error("cycles must be at least 1, got 0")]
    ZeroCycles,
    /// An external tool the engine needs was not there when this crate was built.
    #[error("{0}")]
    ToolMissing(String),
    /// The block's Verilator model could not be built (emission or `verilator --cc`
    /// failed); the reason includes Verilator's messages.
    #[error("the Verilator model of {module} was not built: {reason}")]
    VerilatorUnavailable {
        /// The block's module name.
        module: &'static str,
        /// What went wrong at build time.
        reason: String,
    },
    /// The Verilator model was compiled for other block parameters than this run uses.
    #[error(
        "the Verilator model of {module} was built for {built} (configs/hw.toml at build \
         time), but this run uses {requested}: rebuild with that configuration in \
         configs/hw.toml (cargo rebuilds the model when the file changes)"
    )]
    ConfigMismatch {
        /// The block's module name.
        module: &'static str,
        /// The parameters compiled into the model.
        built: String,
        /// The parameters of this run.
        requested: String,
    },
    /// The compiled Verilator model has other ports than the protocol (a stale build).
    #[error(
        "the Verilator model of {module} has ports {built}, the protocol has {expected}: rebuild"
    )]
    PortMismatch {
        /// The block's module name.
        module: &'static str,
        /// Ports compiled into the shim.
        built: String,
        /// Ports of the protocol this crate was compiled against.
        expected: String,
    },
    /// An engine exists but cannot run this block (its adapter is missing).
    #[error("engine {engine} cannot run {module}: {reason}")]
    EngineUnavailable {
        /// The engine's name.
        engine: &'static str,
        /// The block's module name.
        module: &'static str,
        /// Why not.
        reason: String,
    },
    /// The waveform file could not be created or written.
    // The OS error is part of the message and deliberately not a `#[source]`: printed as an
    // anyhow chain (`{:#}`) it would otherwise appear twice.
    #[error("{path}: cannot write VCD: {io}")]
    Vcd {
        /// The VCD path.
        path: PathBuf,
        /// The operating-system error.
        io: std::io::Error,
    },
}
