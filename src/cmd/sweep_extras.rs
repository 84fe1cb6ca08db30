//! `mcmvm sweep --suite clap`, after Figure 18 and Table 4: the 8-chiplet MCM GPU, the
//! PMM-threshold and MMA block-count sensitivities (runs of their own, skipped by
//! `--no-extras`), then the paper's figures beside ours. The models live in
//! `mcmvm_models::gpu::{clap_extras, clap_tables}`; this file runs the jobs and writes
//! the files.

use super::sweep::{Args, ClapSweep};
use anyhow::Context;
use mcmvm_models::gpu::clap_extras::{self as extras, ExtraJob, ExtraRun, Sensitivity};
use mcmvm_models::gpu::clap_tables::{self as tables, Chiplets8};
use mcmvm_models::gpu::sweep::RunSummary;
use rayon::prelude::*;
use serde::Serialize;
use std::path::Path;

/// The workloads the extra runs use unless `--extras-workloads` says otherwise (when the
/// sweep runs them): one of each kind the paper separates — a graph workload that likes
/// large pages (`bfs`), a stencil that needs small ones (`ste`), the OLP-fallback case
/// (`paf`), and a GEMM whose matrix B every chiplet shares (`gemm-vit`).
pub const DEFAULT_EXTRAS_WORKLOADS: [&str; 4] = ["bfs", "ste", "paf", "gemm-vit"];

/// What the extra runs measured.
#[derive(Debug, Serialize)]
pub struct Extras {
    pub scale: f64,
    pub workloads: Vec<String>,
    /// Runs taken from the main sweep instead of run again.
    pub reused: usize,
    pub chiplets8: Chiplets8,
    pub pmm: Sensitivity,
    pub min_blocks: Sensitivity,
    #[serde(skip)]
    pub failed: usize,
    /// Every extra run: its job and its row of `clap.csv`.
    pub runs: Vec<(ExtraJob, String)>,
}

/// The extra runs' workloads: `--extras-workloads` (`all`: the sweep's), else the
/// defaults the sweep runs, else the sweep's own.
fn workloads(args: &Args, main: &[RunSummary]) -> anyhow::Result<Vec<String>> {
    let mut ran: Vec<String> = Vec::new();
    for r in main {
        if !ran.contains(&r.workload) {
            ran.push(r.workload.clone());
        }
    }
    match args.extras_workloads.as_deref().map(str::trim) {
        Some("all") => Ok(ran),
        Some(list) => {
            let keep: Vec<String> = list.split(',').map(|w| w.trim().to_string()).collect();
            for k in &keep {
                if !mcmvm_models::workload::clap_suite().contains(&k.as_str()) {
                    anyhow::bail!(
                        "--extras-workloads: `{k}` is not in the clap suite ({}), nor `all`",
                        mcmvm_models::workload::clap_suite().join(", ")
                    );
                }
            }
            Ok(keep)
        }
        None => {
            let some: Vec<String> = DEFAULT_EXTRAS_WORKLOADS
                .iter()
                .filter(|w| ran.iter().any(|r| r == *w))
                .map(|w| w.to_string())
                .collect();
            Ok(if some.is_empty() { ran } else { some })
        }
    }
}

/// The extra runs' scale, and the main sweep's multiplier (None under `--scale paper`).
/// Under `--scale paper` the extras run at the quick default size unless --extras-scale
/// says otherwise (paper-size extras would multiply the sweep's time).
fn extras_scale(args: &Args) -> anyhow::Result<(f64, Option<f64>)> {
    let main_factor = match args.scale_spec() {
        mcmvm_models::workload::Scale::Factor(x) => Some(x),
        mcmvm_models::workload::Scale::Paper => None,
    };
    let scale = args.extras_scale.or(main_factor).unwrap_or(1.0);
    if !(scale.is_finite() && scale > 0.0) {
        anyhow::bail!("--extras-scale: expected a positive number, got {scale}");
    }
    Ok((scale, main_factor))
}

/// The extra jobs split into those the main sweep already ran (same job, same scale: its
/// summary) and those to run.
fn reuse<'a>(
    jobs: &'a [ExtraJob],
    main: &[RunSummary],
    same_scale: bool,
) -> (Vec<ExtraRun>, Vec<&'a ExtraJob>) {
    let from_main = |j: &ExtraJob| -> Option<RunSummary> {
        let m = j.main_equivalent()?;
        same_scale
            .then(|| {
                main.iter()
                    .find(|r| r.workload == m.workload && r.policy == m.policy.name())
            })
            .flatten()
            .cloned()
    };
    let reused = jobs
        .iter()
        .filter_map(|j| from_main(j).map(|r| (j.clone(), r)))
        .collect();
    let todo = jobs.iter().filter(|j| from_main(j).is_none()).collect();
    (reused, todo)
}

/// The line that opens the extra runs.
fn announce(
    args: &Args,
    main: &[RunSummary],
    ws: &[String],
    todo: usize,
    reused: usize,
    scale: f64,
) {
    println!();
    println!(
        "extras: the 8-chiplet GPU ({}), clap at PMM thresholds {} and MMA block counts {}: \
         {} runs ({} more from the main sweep) on {} at scale {}{}",
        extras::CHIPLETS8_POLICIES.map(|p| p.name()).join(", "),
        extras::PMM_FRACTIONS
            .map(|f| format!("{:.0}%", 100.0 * f))
            .join(" "),
        extras::MIN_FULL_BLOCKS.map(|b| b.to_string()).join(" "),
        todo,
        reused,
        ws.join(","),
        scale,
        if args.extras_workloads.is_none() && ws.len() < main_workloads(main) {
            " (a subset, to keep the default sweep quick; --extras-workloads all for every one)"
        } else {
            ""
        }
    );
}

/// Run `todo` in parallel with a progress bar: each job with its summary or its error.
fn run_todo(
    s: &ClapSweep,
    cfg8: &mcmvm_models::gpu::GpuConfig,
    todo: &[&ExtraJob],
    scale: f64,
    seed: u64,
) -> Vec<(ExtraJob, anyhow::Result<RunSummary>)> {
    let bar = super::progress::bar(todo.len() as u64, "extra runs");
    let results = todo
        .par_iter()
        .map(|job| {
            let r = extras::run_extra(&s.cfg, cfg8, job, scale, seed)
                .map(|rep| RunSummary::of(&rep))
                .map_err(anyhow::Error::from);
            bar.set_message(format!(
                "{} {} {}",
                job.workload,
                job.policy,
                job.variant.label()
            ));
            bar.inc(1);
            ((*job).clone(), r)
        })
        .collect();
    bar.finish_and_clear();
    results
}

/// The three extra tables printed, then (after `took`) their CSVs in `out`.
fn print_and_write(
    out: &Path,
    chiplets8: &Chiplets8,
    pmm: &Sensitivity,
    min_blocks: &Sensitivity,
    took: std::time::Duration,
) -> anyhow::Result<()> {
    println!();
    println!("8 chiplets (mcm-8chiplet): speed-up over s64k (remote-access ratio)");
    print!("{}", chiplets8.text());
    println!();
    println!("PMM threshold: clap's geometric-mean speed-up over s64k (4 chiplets)");
    print!("{}", pmm.text());
    println!();
    println!(
        "MMA's fully mapped VA blocks needed (not a number in the paper; 1 by default): \
         clap over s64k"
    );
    print!("{}", min_blocks.text());
    println!("(extras {:.0} s)", took.as_secs_f64());
    write(out, "clap_8chiplet.csv", chiplets8.csv())?;
    write(out, "clap_pmm.csv", pmm.csv())?;
    write(out, "clap_min_blocks.csv", min_blocks.csv())?;
    println!(
        "wrote {}/clap_8chiplet.csv, clap_pmm.csv, clap_min_blocks.csv",
        out.display()
    );
    Ok(())
}

/// Run the extra jobs (reusing the main sweep's runs of the same job at the same scale),
/// print their tables and write `clap_8chiplet.csv`, `clap_pmm.csv`,
/// `clap_min_blocks.csv`.
pub(super) fn run(args: &Args, s: &ClapSweep, main: &[RunSummary]) -> anyhow::Result<Extras> {
    let (scale, main_factor) = extras_scale(args)?;
    let ws = workloads(args, main)?;
    let mut cfg8 = super::configs::gpu(Path::new("mcm-8chiplet"))?;
    cfg8.engines = s.cfg.engines.clone();
    let jobs = extras::extra_jobs(&s.cfg, &ws);
    let (mut runs, todo) = reuse(&jobs, main, Some(scale) == main_factor);
    let n_reused = runs.len();
    announce(args, main, &ws, todo.len(), n_reused, scale);
    let t0 = std::time::Instant::now();
    let mut failed = 0;
    for (job, r) in run_todo(s, &cfg8, &todo, scale, args.seed) {
        match r {
            Ok(sum) => runs.push((job, sum)),
            Err(e) => {
                failed += 1;
                let what = format!("{} {} {}", job.workload, job.policy, job.variant.label());
                eprintln!("extra run {what} failed: {e}");
            }
        }
    }
    // Job order, whichever finished first.
    runs.sort_by_key(|(j, _)| jobs.iter().position(|k| k == j));
    let chiplets8 = tables::chiplets8(&runs, &extras::CHIPLETS8_POLICIES);
    let pmm = extras::pmm_sensitivity(&s.cfg, &runs);
    let min_blocks = extras::min_blocks_sensitivity(&s.cfg, &runs);
    print_and_write(&s.out, &chiplets8, &pmm, &min_blocks, t0.elapsed())?;
    Ok(Extras {
        scale,
        workloads: ws,
        reused: n_reused,
        chiplets8,
        pmm,
        min_blocks,
        failed,
        runs: runs.into_iter().map(|(j, r)| (j, r.csv_row)).collect(),
    })
}

fn main_workloads(main: &[RunSummary]) -> usize {
    let mut ws: Vec<&str> = main.iter().map(|r| r.workload.as_str()).collect();
    ws.sort_unstable();
    ws.dedup();
    ws.len()
}

fn write(dir: &Path, name: &str, text: String) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("{}: cannot create", dir.display()))?;
    let p = dir.join(name);
    std::fs::write(&p, text).with_context(|| format!("{}: cannot write", p.display()))
}

/// Table 2 from the main sweep's runs: printed, and `clap_table2.csv`.
pub(super) fn table2(dir: &Path, main: &[RunSummary]) -> anyhow::Result<()> {
    let rows = tables::table2(main);
    println!();
    print!("{}", tables::table2_text(&rows));
    write(dir, "clap_table2.csv", tables::table2_csv(&rows))
}

/// Everything `clap_extras.json` holds.
#[derive(Serialize)]
struct ExtrasJson<'a> {
    table2: Vec<tables::Table2Row>,
    paper: &'a [tables::PaperFigure],
    extras: Option<&'a Extras>,
}

/// The paper's figures beside ours (from the main runs and, if they ran, the extras):
/// printed, `clap_paper.csv`, and `clap_extras.json` with every extra table.
pub(super) fn paper(dir: &Path, main: &[RunSummary], ex: Option<&Extras>) -> anyhow::Result<()> {
    let figs = tables::paper_figures(main, ex.map(|e| &e.chiplets8), ex.map(|e| &e.pmm));
    println!();
    println!("The paper's figures beside ours (measured; `-`: not run, see --no-extras)");
    print!("{}", tables::paper_text(&figs));
    print!("{}", tables::ideal_check_text(main));
    write(dir, "clap_paper.csv", tables::paper_csv(&figs))?;
    let json = ExtrasJson {
        table2: tables::table2(main),
        paper: &figs,
        extras: ex,
    };
    write(
        dir,
        "clap_extras.json",
        serde_json::to_string_pretty(&json)? + "\n",
    )?;
    println!(
        "wrote {}/clap_table2.csv, clap_paper.csv, clap_extras.json",
        dir.display()
    );
    Ok(())
}
