//! `mcmvm verilog --out DIR`: the Verilog of the three blocks, one file each, with the top
//! module named after the block so all three can share one yosys or Verilator run.

use super::common::{emit_verilog, load_hw_config};
use mcmvm_models::protocol::BlockKind;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// Output directory.
    #[arg(long, default_value = "out/verilog")]
    pub out: PathBuf,
    /// Hardware parameters (default: configs/hw.toml if present, else the papers' values).
    #[arg(long)]
    pub config: Option<PathBuf>,
}

pub fn run(args: Args) -> anyhow::Result<u8> {
    let (cfg, from) = load_hw_config(args.config.as_deref())?;
    println!("parameters: {from}");
    for (b, path) in emit_verilog(&args.out, &cfg, &BlockKind::ALL)? {
        let bytes = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
        println!(
            "{:<20} {} ({} bytes)",
            b.module_name(),
            path.display(),
            bytes
        );
    }
    Ok(0)
}
