//! `mcmvm characterize`: microbenchmarks through the GPU model — latency staircases (data
//! caches, TLBs per page size, page walks, local against remote) and throughputs
//! (translations, HBM, ring) — each figure beside what the config implies
//! (`mcmvm_models::characterize`, docs/characterize.md). The points are small independent
//! simulations, run in parallel.

use anyhow::Context;
use mcmvm_models::characterize::{self, table, PageClass, Section};
use mcmvm_models::driver::PolicyKind;
use rayon::prelude::*;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// GPU configuration (TOML or a built-in name). Default: configs/mcm-4chiplet.toml.
    #[arg(long, default_value = "configs/mcm-4chiplet.toml")]
    pub config: PathBuf,
    /// GPU configuration override KEY=VALUE (e.g. l1_tlb.entries_4k=16); repeatable.
    #[arg(long = "set")]
    pub set: Vec<String>,
    /// Placement of the data-cache, local/remote and bandwidth benchmarks: s4k, s64k or
    /// ideal (2 MB translations over 64 KB placement, which keeps the TLBs out of the
    /// data-cache staircase). The TLB staircases use s4k, s64k and ideal whatever this is.
    #[arg(long, default_value = "ideal", value_parser = ["s4k", "s64k", "ideal"])]
    pub policy: String,
    /// Directory for characterize.json and staircase.svg.
    #[arg(long, default_value = "out/characterize")]
    pub out: PathBuf,
}

pub fn run(args: Args) -> anyhow::Result<u8> {
    let mut cfg = super::configs::gpu_with(&args.config, &args.set)?;
    cfg.engines = Default::default();
    let policy: PolicyKind = args.policy.parse()?;
    let plan = characterize::plan(&cfg, policy)?;
    println!(
        "config: {}  policy: {}  benchmarks: {}",
        args.config.display(),
        policy,
        plan.len()
    );
    let bar = super::progress::bar(plan.len() as u64, "benchmarks");
    let measured: Result<Vec<_>, _> = plan
        .par_iter()
        .map(|b| {
            let m = characterize::measure(&cfg, b);
            bar.inc(1);
            m
        })
        .collect();
    bar.finish_and_clear();
    let measured = measured?;
    print!("{}", table::render(&cfg, &measured));
    write_outputs(&args.out, &cfg, &measured)?;
    Ok(0)
}

fn write_outputs(
    out: &std::path::Path,
    cfg: &mcmvm_models::gpu::GpuConfig,
    ms: &[characterize::Measured],
) -> anyhow::Result<()> {
    std::fs::create_dir_all(out).with_context(|| format!("{}: cannot create", out.display()))?;
    let mut sections = vec![(Section::DataCache, "data caches, stride 128 B".to_string())];
    sections.extend(PageClass::ALL.map(|c| {
        (
            Section::Tlb(c),
            format!("TLB {}, stride one page", c.label()),
        )
    }));
    let steps: Vec<_> = sections
        .iter()
        .map(|(s, name)| serde_json::json!({"staircase": name, "steps": table::steps_of(ms, *s)}))
        .collect();
    let json = serde_json::json!({
        "config": cfg,
        "implied": characterize::Implied::new(cfg),
        "points": ms,
        "steps": steps,
    });
    let path = out.join("characterize.json");
    std::fs::write(&path, serde_json::to_string_pretty(&json)?)
        .with_context(|| format!("{}: cannot write", path.display()))?;
    println!("json: {}", path.display());
    let series: Vec<_> = sections
        .iter()
        .map(|(s, name)| (name.clone(), table::staircase(ms, *s)))
        .filter(|(_, p)| !p.is_empty())
        .collect();
    let svg = characterize::svg::staircase("cycles per dependent load vs footprint", &series);
    let path = out.join("staircase.svg");
    std::fs::write(&path, svg).with_context(|| format!("{}: cannot write", path.display()))?;
    println!("svg: {}", path.display());
    Ok(())
}
