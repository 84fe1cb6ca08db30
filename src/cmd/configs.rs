//! The built-in configurations, compiled into the binary so that `mcmvm run --workload bfs
//! --policy clap` works from any directory, and `mcmvm config show NAME` prints one to
//! start your own from. A `--config FILE` that exists is read from disk; a path that does
//! not exist but names a built-in (`configs/mcm-8chiplet.toml`, `mcm-8chiplet.toml` or
//! `mcm-8chiplet`) is the built-in.

use anyhow::Context;
use mcmvm_models::config::HwConfig;
use mcmvm_models::gpu::GpuConfig;
use mcmvm_models::uvm::UvmConfig;
use std::path::{Path, PathBuf};

/// (name, what it is, TOML text).
const BUILTIN: [(&str, &str, &str); 5] = [
    (
        "mcm-4chiplet",
        "the 4-chiplet MCM GPU of CLAP's Table 1 (default of run and sweep --suite clap)",
        include_str!("../../configs/mcm-4chiplet.toml"),
    ),
    (
        "mcm-8chiplet",
        "the same MCM GPU with 8 chiplets",
        include_str!("../../configs/mcm-8chiplet.toml"),
    ),
    (
        "gpu-turing",
        "the Forest paper's one-chiplet Turing GPU on the timing model (default of sweep --suite forest)",
        include_str!("../../configs/gpu-turing.toml"),
    ),
    (
        "uvm-turing",
        "the UVM parameters of Forest's Turing GPU (default of --uvm runs)",
        include_str!("../../configs/uvm-turing.toml"),
    ),
    (
        "hw",
        "the hardware blocks' parameters (default of verilog, lint, synth, cosim, hw)",
        include_str!("../../configs/hw.toml"),
    ),
];

/// The built-in a path names, if the path is not a file.
fn builtin_for(path: &Path) -> Option<(&'static str, &'static str)> {
    if path.is_file() {
        return None;
    }
    let parent_ok = path
        .parent()
        .is_none_or(|p| p.as_os_str().is_empty() || p.ends_with("configs"));
    let name = path.file_name()?.to_str()?;
    let stem = name.strip_suffix(".toml").unwrap_or(name);
    BUILTIN
        .iter()
        .find(|(n, _, _)| parent_ok && *n == stem)
        .map(|(n, _, text)| (*n, *text))
}

/// The text of a configuration and how to name it in messages.
pub fn text(path: &Path) -> anyhow::Result<(String, PathBuf)> {
    if let Some((name, text)) = builtin_for(path) {
        return Ok((text.to_string(), PathBuf::from(format!("built-in {name}"))));
    }
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("{}: cannot read", path.display()))?;
    Ok((text, path.to_path_buf()))
}

/// A GPU configuration from a file or a built-in.
pub fn gpu(path: &Path) -> anyhow::Result<GpuConfig> {
    gpu_with(path, &[])
}

/// A GPU configuration from a file or a built-in, with `key=value` overrides.
pub fn gpu_with(path: &Path, overrides: &[String]) -> anyhow::Result<GpuConfig> {
    let (text, name) = text(path)?;
    Ok(GpuConfig::parse_with(&text, &name, overrides)?)
}

/// A UVM configuration from a file or a built-in, with `key=value` overrides.
pub fn uvm(path: &Path, overrides: &[String]) -> anyhow::Result<UvmConfig> {
    let (text, name) = text(path)?;
    Ok(UvmConfig::from_text(&text, &name, overrides)?)
}

/// Whether a configuration is a UVM one (see `UvmConfig::is_uvm_text`).
pub fn is_uvm(path: &Path) -> anyhow::Result<bool> {
    let (text, name) = text(path)?;
    Ok(UvmConfig::is_uvm_text(&text, &name)?)
}

/// Block parameters from a file or a built-in.
pub fn hw(path: &Path) -> anyhow::Result<HwConfig> {
    let (text, name) = text(path)?;
    let cfg: HwConfig = mcmvm_models::config::parse_toml(&text, &name)?;
    cfg.validate(&name)?;
    Ok(cfg)
}

/// `mcmvm config list|show NAME`.
#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub command: ConfigCommand,
}

#[derive(clap::Subcommand)]
pub enum ConfigCommand {
    /// The built-in configurations.
    List,
    /// Print one built-in configuration (redirect it to a file to start your own).
    Show { name: String },
}

pub fn run(args: Args) -> anyhow::Result<u8> {
    match args.command {
        ConfigCommand::List => {
            for (name, what, _) in BUILTIN {
                println!("{name:<14} {what}");
            }
        }
        ConfigCommand::Show { name } => {
            let stem = name.strip_suffix(".toml").unwrap_or(&name);
            let Some((_, _, text)) = BUILTIN.iter().find(|(n, _, _)| *n == stem) else {
                let names: Vec<&str> = BUILTIN.iter().map(|b| b.0).collect();
                anyhow::bail!(
                    "no built-in configuration `{name}`: expected one of {}",
                    names.join(", ")
                );
            };
            print!("{text}");
        }
    }
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_parses_and_paths_resolve_to_them_only_when_no_file_exists() {
        gpu(Path::new("/nonexistent/configs/mcm-4chiplet.toml")).unwrap();
        gpu(Path::new("mcm-8chiplet")).unwrap();
        gpu(Path::new("gpu-turing")).unwrap();
        uvm(Path::new("uvm-turing.toml"), &[]).unwrap();
        hw(Path::new("/nowhere/configs/hw.toml")).unwrap();
        assert!(is_uvm(Path::new("uvm-turing")).unwrap());
        assert!(!is_uvm(Path::new("mcm-4chiplet")).unwrap());
        let e = gpu(Path::new("/nowhere/mcm-9chiplet.toml"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("cannot read"), "{e}");
        // A directory other than `configs` does not alias a built-in.
        assert!(gpu(Path::new("/elsewhere/mcm-4chiplet.toml")).is_err());
    }
}
