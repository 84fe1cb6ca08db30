//! `mcmvm workloads`: list the built-in workloads with their allocations, kernels and size,
//! or write one of them as a trace (mcmvm's format, or an Accel-Sim trace directory).

use anyhow::Context;
use mcmvm_models::workload::trace::write_accelsim_trace;
use mcmvm_models::workload::{by_name, catalog, footprint_bytes, write_trace, Scale, Workload};
use rayon::prelude::*;
use serde::Serialize;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// Which study's workloads to list.
    #[arg(long, default_value = "all", value_parser = ["clap", "forest", "all"])]
    suite: String,
    /// Problem size: a multiplier (1 = the default size) or `paper` (each CLAP workload
    /// at the CLAP paper's input size class, docs/workloads.md).
    #[arg(long, default_value = "1")]
    scale: Scale,
    /// Seed of the randomised generators (graphs, gathers).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
    /// Write workload NAME (at --scale and --seed) to FILE in the trace format, then exit.
    #[arg(long, num_args = 2, value_names = ["NAME", "FILE"])]
    write_trace: Option<Vec<String>>,
    /// Format of --write-trace: `mcmvm` (one file, docs/trace-format.md) or `accelsim` (FILE
    /// is a directory: kernelslist.g and kernel-N.traceg, docs/trace-formats-external.md).
    #[arg(long, default_value = "mcmvm", value_parser = ["mcmvm", "accelsim"], requires = "write_trace")]
    format: String,
}

/// Kernel launches with the same name and shape, counted.
#[derive(Serialize)]
struct KernelGroup {
    name: String,
    grid: u32,
    warps_per_tb: u32,
    launches: u32,
}

#[derive(Serialize)]
struct Listing {
    name: String,
    suite: &'static str,
    description: String,
    /// The multiplier the workload was built with (per workload under `--scale paper`).
    scale: f64,
    warp_instructions: u64,
    footprint_bytes: u64,
    allocations: Vec<mcmvm_models::workload::Allocation>,
    kernels: Vec<KernelGroup>,
}

pub fn run(args: Args) -> anyhow::Result<u8> {
    if let Some(v) = &args.write_trace {
        write_one(&args, &v[0], PathBuf::from(&v[1]))?;
        return Ok(0);
    }
    let infos: Vec<_> = catalog()
        .into_iter()
        .filter(|i| args.suite == "all" || i.suite == args.suite)
        .collect();
    let listings: Vec<Listing> = infos
        .par_iter()
        .map(|info| {
            let factor = args.scale.factor(info.name);
            let w = by_name(info.name, factor, args.seed)?;
            Ok(listing(w.as_ref(), info.suite, factor))
        })
        .collect::<anyhow::Result<_>>()
        .context("building the workloads")?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&listings)?);
        return Ok(0);
    }
    println!(
        "built-in workloads (scale {}, seed {}):",
        args.scale, args.seed
    );
    for l in &listings {
        print_listing(l);
    }
    Ok(0)
}

/// `--write-trace NAME FILE`: workload `name` as a trace in `--format`.
fn write_one(args: &Args, name: &str, file: PathBuf) -> anyhow::Result<()> {
    let w = by_name(name, args.scale.factor(name), args.seed)?;
    match args.format.as_str() {
        "accelsim" => write_accelsim_trace(w.as_ref(), &file)?,
        _ => write_trace(w.as_ref(), &file)?,
    }
    eprintln!(
        "wrote {} ({} warp instructions, scale {}, seed {}) to {}",
        name,
        w.instr_count(),
        args.scale,
        args.seed,
        file.display()
    );
    Ok(())
}

/// One workload's paragraph: description, size, kernels and allocations.
fn print_listing(l: &Listing) {
    println!();
    println!("{} [{}] — {}", l.name, l.suite, l.description);
    println!(
        "  {:.2} M warp memory instructions, footprint {} (scale {})",
        l.warp_instructions as f64 / 1e6,
        human(l.footprint_bytes),
        l.scale
    );
    let kernels: Vec<String> = l
        .kernels
        .iter()
        .map(|k| {
            format!(
                "{} x{} ({} TBs x {} warps)",
                k.name, k.launches, k.grid, k.warps_per_tb
            )
        })
        .collect();
    println!("  kernels: {}", shorten(&kernels, 6));
    let allocs: Vec<String> = l
        .allocations
        .iter()
        .map(|a| format!("{} {}", a.name, human(a.bytes)))
        .collect();
    println!("  allocations ({}): {}", allocs.len(), shorten(&allocs, 10));
}

fn listing(w: &dyn Workload, suite: &'static str, scale: f64) -> Listing {
    let mut kernels: Vec<KernelGroup> = Vec::new();
    for k in w.kernels() {
        match kernels
            .iter_mut()
            .find(|g| g.name == k.name && g.grid == k.grid && g.warps_per_tb == k.warps_per_tb)
        {
            Some(g) => g.launches += 1,
            None => kernels.push(KernelGroup {
                name: k.name.clone(),
                grid: k.grid,
                warps_per_tb: k.warps_per_tb,
                launches: 1,
            }),
        }
    }
    Listing {
        name: w.name().to_string(),
        suite,
        description: w.description().to_string(),
        scale,
        warp_instructions: w.instr_count(),
        footprint_bytes: footprint_bytes(w),
        allocations: w.allocations().to_vec(),
        kernels,
    }
}

/// A byte count in binary units.
fn human(b: u64) -> String {
    match b {
        b if b >= 1 << 30 => format!("{:.2} GB", b as f64 / (1u64 << 30) as f64),
        b if b >= 1 << 20 => format!("{:.1} MB", b as f64 / (1u64 << 20) as f64),
        b if b >= 1 << 10 => format!("{:.1} KB", b as f64 / 1024.0),
        b => format!("{b} B"),
    }
}

/// The first `n` items, then how many more.
fn shorten(items: &[String], n: usize) -> String {
    if items.len() <= n {
        items.join(", ")
    } else {
        format!("{}, … and {} more", items[..n].join(", "), items.len() - n)
    }
}
