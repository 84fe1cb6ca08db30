//! `mcmvm synth [--block rt|coalescer|att|all] [--json]`: yosys to osu018 standard cells;
//! area, cells, flip-flops, transistors and a 28 nm estimate beside the paper's figures.

use super::common::{emit_verilog, load_hw_config, BlockChoice};
use mcmvm_synth::AreaReport;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// Which block to synthesise.
    #[arg(long, value_enum, default_value = "all")]
    pub block: BlockChoice,
    /// Print a JSON list instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Directory for the Verilog and yosys work files.
    #[arg(long, default_value = "out/verilog")]
    pub dir: PathBuf,
    /// Hardware parameters (default: configs/hw.toml if present, else the papers' values).
    #[arg(long)]
    pub config: Option<PathBuf>,
}

/// Synthesise the chosen blocks.
pub fn synthesize(args: &Args) -> anyhow::Result<Vec<AreaReport>> {
    let (cfg, _) = load_hw_config(args.config.as_deref())?;
    let tools = mcmvm_synth::Tools::discover()?;
    let files = emit_verilog(&args.dir, &cfg, &args.block.blocks())?;
    let work = args.dir.join("synth");
    files
        .iter()
        .map(|(b, path)| {
            Ok(mcmvm_synth::synthesize(
                &tools,
                path,
                b.module_name(),
                &work,
            )?)
        })
        .collect()
}

pub fn print_table(reports: &[AreaReport]) {
    println!(
        "{:<20} {:>12} {:>7} {:>6} {:>11} {:>12} {:>10}",
        "block", "area µm²", "cells", "FFs", "transistors", "28nm mm²", "paper mm²"
    );
    for r in reports {
        println!(
            "{:<20} {:>12.0} {:>7} {:>6} {:>11} {:>12.5} {:>10}",
            r.block,
            r.area_um2,
            r.cells,
            r.flip_flops,
            r.transistors,
            r.area_mm2_28nm,
            r.paper_mm2
                .map(|p| format!("{p:.4}"))
                .unwrap_or_else(|| "—".into())
        );
    }
    println!("area at 0.18 µm (osu018, µm² = cell width × height); 28 nm estimate = A × (28/180)² (ideal shrink)");
    println!("paper: CLAP RT 0.0124 mm², coalescing logic 0.0024 mm² (UMC 28 nm); Forest gives no ATT area");
}

pub fn run(args: Args) -> anyhow::Result<u8> {
    let reports = synthesize(&args)?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&reports)?);
    } else {
        print_table(&reports);
    }
    Ok(0)
}
