//! `mcmvm lint`: Verilator `--lint-only -Wall` (only DECLFILENAME waived) and yosys `check`
//! on the freshly emitted Verilog of every block. Exits 1 if anything is reported.

use super::common::{emit_verilog, load_hw_config};
use mcmvm_models::protocol::BlockKind;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// Directory the Verilog is emitted into and linted from.
    #[arg(long, default_value = "out/verilog")]
    pub dir: PathBuf,
    /// Hardware parameters (default: configs/hw.toml if present, else the papers' values).
    #[arg(long)]
    pub config: Option<PathBuf>,
}

pub fn run(args: Args) -> anyhow::Result<u8> {
    let (cfg, _) = load_hw_config(args.config.as_deref())?;
    let tools = mcmvm_synth::Tools::discover()?;
    let files = emit_verilog(&args.dir, &cfg, &BlockKind::ALL)?;
    let work = args.dir.join("lint");
    // Unchanged Verilog is not linted twice (`mcmvm_synth::lint_cache`).
    let cache = mcmvm_synth::cache::cache_root();
    let mut dirty = 0;
    for (b, path) in files {
        let (r, _) =
            mcmvm_synth::lint_cache::lint_cached(&cache, &tools, &path, b.module_name(), &work)?;
        if r.clean() {
            println!(
                "{:<20} verilator -Wall: clean   yosys check: clean",
                b.module_name()
            );
        } else {
            dirty += 1;
            println!(
                "{:<20} verilator: {} message(s)   yosys: {} message(s)",
                b.module_name(),
                r.verilator.len(),
                r.yosys.len()
            );
            for m in r.verilator.iter().chain(r.yosys.iter()) {
                println!("    {m}");
            }
        }
    }
    Ok(if dirty == 0 { 0 } else { 1 })
}
