//! Why a co-simulation could not run. A divergence between engines is *not* an error: it is
//! the result the lockstep exists to find, and is reported in [`crate::LockstepReport`].

use std::path::PathBuf;

/// Errors of the co-simulation library.
#[derive(Debug, thiserror::Error)]
pub enum CosimError {
    /// An engine name on the command line is not one of the three.
    #[error("unknown engine `{0}`: expected one of twin, rusthdl, verilator")]
    UnknownEngine(String),
    /// The same engine was asked for twice.
    #[error("engine `{0}` given twice: each engine runs once")]
    DuplicateEngine(String),
    /// No engine was given.
    #[error("no engines given: expected one or more of twin, rusthdl, verilator")]
    NoEngines,
    /// A stimulus file could not be used.
    #[error(transparent)]
    Stimulus(#[from] crate::stimulus::StimulusError),
    /// `--hw` named no engine set.
    #[error("unknown --hw `{0}`: expected one of twin, rusthdl, verilator, check")]
    UnknownHwMode(String),
    /// A mutant's edit names text the emitted Verilog no longer contains.
    #[error("RTL mutant `{mutant}` no longer applies: the emitted Verilog has no `{text}` (update rtl_mutants.rs)")]
    MutantStale { mutant: &'static str, text: String },
    /// A run of zero cycles was asked for.
    #[error("cycles must be at least 1, got 0")]
    ZeroCycles,
    /// An external tool the engine needs is not installed; the message says what to install.
    #[error("{0}")]
    ToolMissing(String),
    /// The block's Verilog could not be emitted (rust-hdl's design checks failed).
    // The message already names the module; not a `#[source]`, so an anyhow chain (`{:#}`)
    // does not print it twice.
    #[error("Verilog emission failed: {0}")]
    Emit(mcmvm_rtl::emit::EmitError),
    /// A state invariant reads a register the emitted Verilog does not declare.
    #[error("{0}")]
    Invariants(String),
    /// Verilator or g++ failed while building a block's model.
    #[error("building the Verilator model of {module}: `{command}` failed ({status}):\n{stderr}")]
    ToolFailed {
        /// The block's module name (or `the Verilator runtime`).
        module: &'static str,
        /// The command line that failed.
        command: String,
        /// Its exit status, or why it could not run.
        status: String,
        /// What it printed on stderr.
        stderr: String,
    },
    /// The Verilator model cache (a directory or a file in it) could not be written.
    #[error(
        "{path}: cannot write the Verilator model cache: {io} (set MCMVM_VERILATOR_CACHE to \
         a writable directory)"
    )]
    Cache {
        /// The directory or file that failed.
        path: PathBuf,
        /// The operating-system error.
        io: std::io::Error,
    },
    /// A built model library could not be loaded, or lacks the shim's entry points.
    #[error(
        "{path}: cannot load the Verilator model: {reason} (delete the directory to rebuild it)"
    )]
    Load {
        /// The shared library.
        path: PathBuf,
        /// The loader's message.
        reason: String,
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
