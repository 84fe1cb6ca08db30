//! `mcmvm hw`: the hardware summary `make run` opens with — emit the Verilog, lint it,
//! synthesise it, and co-simulate every block in lockstep through all three engines
//! (behavioural twin, rust-hdl, Verilator on the emitted Verilog) with VCD waves.

use super::common::{emit_verilog, load_hw_config};
use mcmvm_cosim::{lockstep, CosimBlock, CosimError, EngineKind, LockstepOptions, LockstepReport};
use mcmvm_models::config::HwConfig;
use mcmvm_models::protocol::BlockKind;
use rayon::prelude::*;
use std::path::{Path, PathBuf};

#[derive(clap::Args)]
pub struct Args {
    /// Output directory: verilog/, waves/, hw-summary.json.
    #[arg(long, default_value = "out")]
    pub out: PathBuf,
    /// Lockstep cycles per block (random stimulus).
    #[arg(long, default_value_t = 200_000, value_parser = clap::value_parser!(u64).range(1..))]
    pub cycles: u64,
    /// Seed of the random stimulus.
    #[arg(long, default_value_t = 7)]
    pub seed: u64,
    /// Hardware parameters (default: configs/hw.toml if present, else the papers' values).
    #[arg(long)]
    pub config: Option<PathBuf>,
}

struct Row {
    block: BlockKind,
    lint: String,
    /// The area report and whether the synthesis cache served it, or the synthesis
    /// error (printed with its causes).
    synthesis: Result<(mcmvm_synth::AreaReport, mcmvm_synth::cache::Source), anyhow::Error>,
    lockstep: Result<LockstepReport, CosimError>,
    wave: PathBuf,
}

/// What every block's job shares: parameters, tools, directories and the stimulus.
struct Job<'a> {
    cfg: &'a HwConfig,
    tools: &'a mcmvm_synth::Tools,
    vdir: &'a Path,
    wdir: &'a Path,
    cycles: u64,
    seed: u64,
    /// The synthesis cache (`mcmvm_synth::cache`).
    cache: &'a Path,
}

fn cosim<B: CosimBlock>(
    cfg: &HwConfig,
    cycles: u64,
    vcd: &Path,
    stimulus: impl Iterator<Item = B::In>,
) -> Result<LockstepReport, CosimError> {
    let opts = LockstepOptions {
        engines: vec![EngineKind::Twin, EngineKind::RustHdl, EngineKind::Verilator],
        cycles,
        vcd: Some(vcd.to_path_buf()),
    };
    lockstep::<B>(cfg, &opts, stimulus)
}

pub fn run(args: Args) -> anyhow::Result<u8> {
    let (cfg, from) = load_hw_config(args.config.as_deref())?;
    let vdir = args.out.join("verilog");
    let wdir = args.out.join("waves");
    std::fs::create_dir_all(&wdir)?;
    println!(
        "== hardware: parameters from {from}; lockstep seed {} ==",
        args.seed
    );
    let files = emit_verilog(&vdir, &cfg, &BlockKind::ALL)?;
    let tools = mcmvm_synth::Tools::discover()?;
    let cache = mcmvm_synth::cache::cache_root();
    let job = Job {
        cfg: &cfg,
        tools: &tools,
        vdir: &vdir,
        wdir: &wdir,
        cycles: args.cycles,
        seed: args.seed,
        cache: &cache,
    };
    // The blocks are independent, and so are each block's lint, synthesis and lockstep
    // (`Job::row`): rayon spreads all of them over the cores (rows come back in block order).
    let bar = super::progress::bar(
        files.len() as u64,
        "blocks linted, synthesised and run in lockstep",
    );
    let rows: Vec<Row> = files
        .par_iter()
        .map(|(b, path)| {
            let row = job.row(*b, path);
            bar.inc(1);
            row
        })
        .collect();
    bar.finish_and_clear();
    let sources: Vec<_> = rows
        .iter()
        .filter_map(|r| r.synthesis.as_ref().ok().map(|a| a.1))
        .collect();
    super::synth::note_cache(&cache, &sources);
    let reports: Vec<_> = rows
        .iter()
        .filter_map(|r| r.synthesis.as_ref().ok().map(|a| a.0.clone()))
        .collect();
    super::synth::print_table(&reports);
    println!();
    let failed = print_rows(&rows);
    println!(
        "engines: twin (Rust twin), rusthdl (rust-hdl simulate()), verilator (emitted Verilog)"
    );
    write_summary(&args.out.join("hw-summary.json"), &rows)?;
    Ok(if failed { 1 } else { 0 })
}

impl Job<'_> {
    /// Lint, synthesise and run block `b` (its Verilog at `path`) in lockstep. The three are
    /// independent: `rayon::join` offers each to an idle core, so one block's synthesis and
    /// lockstep need not queue behind each other while the other core has finished.
    fn row(&self, b: BlockKind, path: &Path) -> Row {
        let (tools, module) = (self.tools, b.module_name());
        let wave = self.wdir.join(format!("{}.vcd", b.short_name()));
        let lint_dir = self.vdir.join("lint");
        let lint = || match mcmvm_synth::lint_cache::lint_cached(
            self.cache, tools, path, module, &lint_dir,
        )
        .map(|(r, _)| r)
        {
            Ok(r) if r.clean() => "clean".to_string(),
            Ok(r) => format!("{} msg", r.verilator.len() + r.yosys.len()),
            Err(e) => format!("error: {e}"),
        };
        let synth = || {
            let lib = mcmvm_synth::library::Library::osu018(tools);
            let work = self.vdir.join("synth");
            mcmvm_synth::cache::synthesize_cached(self.cache, tools, &lib, path, module, &work)
        };
        let ((synthesis, lint), lockstep) =
            rayon::join(|| rayon::join(synth, lint), || self.lockstep(b, &wave));
        Row {
            block: b,
            lint,
            synthesis: synthesis.map_err(anyhow::Error::new),
            lockstep,
            wave,
        }
    }

    /// Block `b` on all three engines under its random stimulus, waves to `wave`.
    fn lockstep(&self, b: BlockKind, wave: &Path) -> Result<LockstepReport, CosimError> {
        let (cfg, n, seed) = (self.cfg, self.cycles, self.seed);
        match b {
            BlockKind::RemoteTracker => cosim::<mcmvm_cosim::Rt>(
                cfg,
                n,
                wave,
                mcmvm_testbenches::remote_tracker::random(cfg, seed),
            ),
            BlockKind::TlbCoalescer => cosim::<mcmvm_cosim::Coalescer>(
                cfg,
                n,
                wave,
                mcmvm_testbenches::tlb_coalescer::random(cfg, seed),
            ),
            BlockKind::AccessTimeTracker => cosim::<mcmvm_cosim::Att>(
                cfg,
                n,
                wave,
                mcmvm_testbenches::access_time_tracker::random(cfg, seed),
            ),
        }
    }
}

/// Print the lint/lockstep table; whether any block failed (lint, synthesis or lockstep).
fn print_rows(rows: &[Row]) -> bool {
    println!(
        "{:<20} {:>7} {:>10} {:>10} {:>14}  wave",
        "block", "lint", "cycles", "mismatch", "lockstep c/s"
    );
    let mut failed = false;
    for r in rows {
        let (cycles, mism, rate) = match &r.lockstep {
            Ok(rep) => {
                failed |= rep.mismatch.is_some();
                lockstep_cells(rep)
            }
            Err(e) => {
                failed = true;
                ("-".into(), format!("error: {e}"), "-".into())
            }
        };
        failed |= r.lint != "clean" || r.synthesis.is_err();
        if let Err(e) = &r.synthesis {
            eprintln!("{}: synthesis failed: {e:#}", r.block.module_name());
        }
        println!(
            "{:<20} {:>7} {:>10} {:>10} {:>14}  {}",
            r.block.module_name(),
            r.lint,
            cycles,
            mism,
            rate,
            r.wave.display()
        );
    }
    failed
}

/// Cycles, first mismatch (or 0) and lockstep rate of one block's run.
fn lockstep_cells(rep: &LockstepReport) -> (String, String, String) {
    (
        rep.cycles.to_string(),
        match &rep.mismatch {
            None => "0".to_string(),
            Some(m) => format!("@{} {}", m.cycle, m.signal),
        },
        format!(
            "{:.0}",
            rep.cycles as f64 / rep.wall.as_secs_f64().max(1e-9)
        ),
    )
}

/// `hw-summary.json`: lint, area, cycles, mismatch and wave of every block.
fn write_summary(path: &Path, rows: &[Row]) -> anyhow::Result<()> {
    let json: Vec<_> = rows
        .iter()
        .map(|r| {
            serde_json::json!({
                "block": r.block.module_name(),
                "lint": r.lint,
                "area": r.synthesis.as_ref().ok().map(|a| &a.0),
                "synth_error": r.synthesis.as_ref().err().map(|e| format!("{e:#}")),
                "cycles": r.lockstep.as_ref().ok().map(|x| x.cycles),
                "mismatch": r.lockstep.as_ref().ok().map(|x| x.mismatch.is_some()),
                "wave": r.wave,
            })
        })
        .collect();
    std::fs::write(path, serde_json::to_string_pretty(&json)?)?;
    Ok(())
}
