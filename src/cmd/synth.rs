//! `mcmvm synth [--block rt|coalescer|att|all] [--library osu018|sky130hd|all] [--json]`:
//! yosys to osu018 (0.18 µm) and SkyWater sky130_fd_sc_hd (130 nm) standard cells; area,
//! logic area, cells, flip-flops, NAND2-equivalents, transistors, the critical path and
//! maximum clock from OpenSTA, and a 28 nm estimate beside the paper's figures.

use super::common::{emit_verilog, load_hw_config, BlockChoice};
use mcmvm_synth::cache::Source;
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
    /// Standard-cell library.
    #[arg(long, default_value = "all", value_parser = ["osu018", "sky130hd", "all"])]
    pub library: String,
}

/// Synthesise the chosen blocks.
pub fn synthesize(args: &Args) -> anyhow::Result<Vec<AreaReport>> {
    let (cfg, _) = load_hw_config(args.config.as_deref())?;
    let tools = mcmvm_synth::Tools::discover()?;
    let files = emit_verilog(&args.dir, &cfg, &args.block.blocks())?;
    let work = args.dir.join("synth");
    let libs: Vec<_> = mcmvm_synth::area::libraries(&tools, &work)?
        .into_iter()
        .filter(|l| args.library == "all" || args.library == l.name)
        .collect();
    let cache = mcmvm_synth::cache::cache_root();
    let (mut out, mut sources) = (Vec::new(), Vec::new());
    let bar = super::progress::bar((libs.len() * files.len()) as u64, "blocks synthesised");
    for lib in &libs {
        for (b, path) in &files {
            bar.set_message(format!("{} on {}", b.module_name(), lib.name));
            bar.inc(1);
            let (report, source) = mcmvm_synth::cache::synthesize_cached(
                &cache,
                &tools,
                lib,
                path,
                b.module_name(),
                &work,
            )?;
            out.push(report);
            sources.push(source);
        }
    }
    bar.finish_and_clear();
    note_cache(&cache, &sources);
    Ok(out)
}

/// One line on stderr: how many of the results the synthesis cache served.
pub fn note_cache(cache: &std::path::Path, sources: &[Source]) {
    let served = sources.iter().filter(|s| **s == Source::Cache).count();
    if served > 0 {
        super::progress::note(&format!(
            "synthesis: {served} of {} results from the cache in {} (keyed by the Verilog, library, scripts and tool versions)",
            sources.len(),
            cache.display()
        ));
    }
}

pub fn print_table(reports: &[AreaReport]) {
    println!(
        "{:<20} {:<9} {:>10} {:>10} {:>7} {:>6} {:>8} {:>9} {:>8} {:>10} {:>9}",
        "block",
        "library",
        "area µm²",
        "logic µm²",
        "cells",
        "FFs",
        "NAND2eq",
        "path ns",
        "max MHz",
        "28nm mm²",
        "paper mm²"
    );
    for r in reports {
        println!(
            "{:<20} {:<9} {:>10.0} {:>10.0} {:>7} {:>6} {:>8.0} {:>9.3} {:>8.0} {:>10.5} {:>9}",
            r.block,
            r.library,
            r.area_um2,
            r.logic_area_um2,
            r.cells,
            r.flip_flops,
            r.nand2_equivalents,
            r.min_period_ns,
            r.max_clock_mhz,
            r.area_mm2_28nm,
            r.paper_mm2
                .map(|p| format!("{p:.4}"))
                .unwrap_or_else(|| "—".into())
        );
    }
    println!("28 nm estimate = area × (28 / node)², an ideal shrink per library (180 nm osu018, 130 nm sky130hd), not a 28 nm synthesis");
    println!("timing: OpenSTA, ideal clock, inputs and outputs at the clock edge; path = worst arrival + setup; paper clock 1132 MHz (CLAP's GPU)");
    if reports.iter().any(|r| r.combinational) {
        // A block with 0 FFs has no clock of its own: its figure is a delay, not a period.
        println!("0 FFs (combinational block): timed on a virtual clock, path = worst input-to-output delay (no setup; the registers around it are its user's)");
    }
    println!("flip-flops: sky130hd maps held registers to its enable flip-flop (edfxtp_1, counted as flip-flop area: the hold mux it absorbs leaves the logic area); osu018 has none, so each held bit's hold mux stays in the logic area");
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
