//! Pieces shared by the hardware subcommands: the hw.toml lookup and block selection.

use anyhow::Context;
use clap::builder::{PossibleValuesParser, TypedValueParser};
use mcmvm_models::config::HwConfig;
use mcmvm_models::driver::PolicyKind;
use mcmvm_models::protocol::BlockKind;
use mcmvm_models::uvm::UvmPolicy;
use std::path::{Path, PathBuf};

/// Default hardware parameter file, relative to the working directory.
pub const DEFAULT_HW_CONFIG: &str = "configs/hw.toml";

/// Load the hardware parameters: the given file (which must exist), else
/// `configs/hw.toml` if present, else the built-in defaults (the papers' values).
pub fn load_hw_config(path: Option<&Path>) -> anyhow::Result<(HwConfig, String)> {
    match path {
        Some(p) => Ok((super::configs::hw(p)?, p.display().to_string())),
        None if Path::new(DEFAULT_HW_CONFIG).is_file() => Ok((
            HwConfig::load(Path::new(DEFAULT_HW_CONFIG))?,
            DEFAULT_HW_CONFIG.to_string(),
        )),
        None => Ok((
            super::configs::hw(Path::new(DEFAULT_HW_CONFIG))?,
            "built-in hw".to_string(),
        )),
    }
}

/// `--block` values of synth: one block or all.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum BlockChoice {
    Rt,
    Coalescer,
    Att,
    All,
}

impl BlockChoice {
    pub fn blocks(self) -> Vec<BlockKind> {
        match self {
            BlockChoice::Rt => vec![BlockKind::RemoteTracker],
            BlockChoice::Coalescer => vec![BlockKind::TlbCoalescer],
            BlockChoice::Att => vec![BlockKind::AccessTimeTracker],
            BlockChoice::All => BlockKind::ALL.to_vec(),
        }
    }
}

/// Emit the Verilog of `blocks` into `dir`; returns (block, file) pairs.
pub fn emit_verilog(
    dir: &Path,
    cfg: &HwConfig,
    blocks: &[BlockKind],
) -> anyhow::Result<Vec<(BlockKind, PathBuf)>> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let mut out = Vec::new();
    for &b in blocks {
        let text = mcmvm_rtl::emit::verilog(b, cfg)
            .with_context(|| format!("emitting {}", b.module_name()))?;
        let path = dir.join(format!("{}.v", b.module_name()));
        std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))?;
        out.push((b, path));
    }
    Ok(out)
}

/// `--hw` and its companions, shared by `run` and `sweep`.
#[derive(clap::Args, Debug, Clone)]
pub struct HwArgs {
    /// Engines serving the hardware blocks inside the system run: twin (behavioural, the
    /// default), rusthdl (rust-hdl's simulator), verilator (the emitted Verilog), check
    /// (twin and Verilator side by side, every output compared every cycle; the first
    /// mismatch stops the run with exit code 1 and a VCD of the block's last 1,000 cycles).
    /// rusthdl and verilator run on a thread of their own with the twin predicting their
    /// outputs; a misprediction repeats the run with the RTL serving unpredicted.
    #[arg(long, default_value = "twin", value_parser = ["twin", "rusthdl", "verilator", "check"])]
    pub hw: String,
    /// With `--hw rusthdl|verilator`: the RTL serves on the system's thread from the start,
    /// no twin predicting it.
    #[arg(long)]
    pub hw_unpredicted: bool,
    /// Write each block instance's port traffic as VCD into DIR (one file per block and
    /// chiplet); play one back as stimulus with `mcmvm cosim --block B --stimulus FILE`.
    #[arg(long, value_name = "DIR")]
    pub record_ports: Option<PathBuf>,
    /// With `--hw check`: also step the idle cycles the system skips, on both engines, and
    /// check they change no output (slow).
    #[arg(long)]
    pub hw_every_cycle: bool,
    /// With `--hw check`: also check the Verilator models' own registers against the
    /// blocks' state invariants after every block cycle (slower).
    #[arg(long)]
    pub hw_invariants: bool,
    /// Where `--hw check` writes a mismatching block's VCD.
    #[arg(long, value_name = "DIR", default_value = "out/hw-check")]
    pub hw_check_dir: PathBuf,
}

impl HwArgs {
    /// The engines for a run (each block instance is elaborated for its own parameters).
    pub fn hardware(&self) -> anyhow::Result<mcmvm_models::blocks::Hardware> {
        use mcmvm_cosim::system::{hardware, HwMode, HwOptions};
        let mode: HwMode = self.hw.parse()?;
        if self.hw_every_cycle && mode != HwMode::Check {
            anyhow::bail!("--hw-every-cycle goes with --hw check");
        }
        if self.hw_invariants && mode != HwMode::Check {
            anyhow::bail!("--hw-invariants goes with --hw check");
        }
        if self.hw_unpredicted && !matches!(mode, HwMode::RustHdl | HwMode::Verilator) {
            anyhow::bail!("--hw-unpredicted goes with --hw rusthdl or --hw verilator");
        }
        if let Some(dir) = &self.record_ports {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("--record-ports {}: cannot create", dir.display()))?;
        }
        let mut opts = HwOptions::new(mode);
        opts.record_dir = self.record_ports.clone();
        opts.every_cycle = self.hw_every_cycle;
        opts.invariants = self.hw_invariants;
        opts.predict = !self.hw_unpredicted;
        opts.mismatch_dir = self.hw_check_dir.clone();
        Ok(hardware(opts))
    }
}

/// Whether `e` is a `--hw check` mismatch (exit code 1, not 2).
pub fn is_block_mismatch(e: &anyhow::Error) -> bool {
    use mcmvm_models::gpu::GpuError;
    use mcmvm_models::uvm::UvmError;
    use mcmvm_protocol::system::BlockFault;
    let m = |f: &BlockFault| matches!(f, BlockFault::Mismatch { .. });
    e.chain().any(|c| {
        c.downcast_ref::<BlockFault>().is_some_and(m)
            || matches!(c.downcast_ref::<GpuError>(), Some(GpuError::Block(f)) if m(f))
            || matches!(c.downcast_ref::<UvmError>(), Some(UvmError::Block(f)) if m(f))
    })
}

/// `--policy`: a placement policy, its names listed in `--help` and in clap's error.
pub fn policy_parser() -> impl TypedValueParser<Value = PolicyKind> {
    PossibleValuesParser::new(PolicyKind::ALL.map(PolicyKind::name))
        .try_map(|s| s.parse::<PolicyKind>())
}

/// `--uvm`: a UVM management policy, its names listed in `--help` and in clap's error.
pub fn uvm_policy_parser() -> impl TypedValueParser<Value = UvmPolicy> {
    PossibleValuesParser::new(UvmPolicy::ALL.map(UvmPolicy::name))
        .try_map(|s| s.parse::<UvmPolicy>())
}
