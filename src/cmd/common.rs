//! Pieces shared by the hardware subcommands: the hw.toml lookup and block selection.

use anyhow::Context;
use mcmvm_models::config::HwConfig;
use mcmvm_models::protocol::BlockKind;
use std::path::{Path, PathBuf};

/// Default hardware parameter file, relative to the working directory.
pub const DEFAULT_HW_CONFIG: &str = "configs/hw.toml";

/// Load the hardware parameters: the given file (which must exist), else
/// `configs/hw.toml` if present, else the built-in defaults (the papers' values).
pub fn load_hw_config(path: Option<&Path>) -> anyhow::Result<(HwConfig, String)> {
    match path {
        Some(p) => Ok((HwConfig::load(p)?, p.display().to_string())),
        None if Path::new(DEFAULT_HW_CONFIG).is_file() => Ok((
            HwConfig::load(Path::new(DEFAULT_HW_CONFIG))?,
            DEFAULT_HW_CONFIG.to_string(),
        )),
        None => Ok((HwConfig::default(), "built-in defaults".to_string())),
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
