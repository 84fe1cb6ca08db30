//! The CLAP sweep after Figure 18 and Table 4: the 8-chiplet MCM GPU, the PMM-threshold and
//! MMA block-count sensitivities (runs of their own, skipped by `--no-extras`), then the
//! paper's figures beside ours. The models live in `mcmvm_models::gpu::{clap_extras,
//! clap_tables}`; this module runs the jobs and writes the files.

use crate::clap::ClapSweep;
use crate::sweep::{self, Request};
use crate::{write_in, Console, Inputs, StudyError};
use mcmvm_models::gpu::clap_extras::{self as extras, ExtraJob, ExtraRun, Sensitivity};
use mcmvm_models::gpu::clap_tables::{self as tables, Chiplets8};
use mcmvm_models::gpu::sweep::RunSummary;
use mcmvm_models::gpu::GpuConfig;
use mcmvm_models::workload::{clap_suite, Scale};
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

/// The workloads of `main`, each once, in order.
fn ran(main: &[RunSummary]) -> Vec<String> {
    let mut ran: Vec<String> = Vec::new();
    for r in main {
        if !ran.contains(&r.workload) {
            ran.push(r.workload.clone());
        }
    }
    ran
}

/// The extra runs' workloads: `--extras-workloads` (`all`: the sweep's), else the
/// defaults the sweep runs, else the sweep's own.
fn workloads(x: &sweep::ExtrasOptions, main: &[RunSummary]) -> Result<Vec<String>, StudyError> {
    let ran = ran(main);
    match x.workloads.as_deref().map(str::trim) {
        Some("all") => Ok(ran),
        Some(list) => {
            let keep: Vec<String> = list.split(',').map(|w| w.trim().to_string()).collect();
            if let Some(k) = keep.iter().find(|k| !clap_suite().contains(&k.as_str())) {
                return Err(StudyError::ExtrasWorkload {
                    workload: k.clone(),
                });
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
fn extras_scale(req: &Request, x: &sweep::ExtrasOptions) -> Result<(f64, Option<f64>), StudyError> {
    let main_factor = match req.scale {
        Scale::Factor(x) => Some(x),
        Scale::Paper => None,
    };
    let scale = x.scale.or(main_factor).unwrap_or(1.0);
    if !(scale.is_finite() && scale > 0.0) {
        return Err(StudyError::ExtrasScale(scale));
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
fn announce(subset: bool, ws: &[String], todo: usize, reused: usize, scale: f64) -> String {
    format!(
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
        if subset {
            " (a subset, to keep the default sweep quick; --extras-workloads all for every one)"
        } else {
            ""
        }
    )
}

/// Run `todo` in parallel with a progress bar: each job with its summary or its error.
fn run_todo(
    s: &ClapSweep,
    cfg8: &GpuConfig,
    todo: &[&ExtraJob],
    (scale, seed): (f64, u64),
    console: &dyn Console,
) -> Vec<(ExtraJob, Result<RunSummary, StudyError>)> {
    let bar = console.bar(todo.len() as u64, "extra runs");
    let results = todo
        .par_iter()
        .map(|job| {
            let r = extras::run_extra(&s.cfg, cfg8, job, scale, seed)
                .map(|rep| RunSummary::of(&rep))
                .map_err(StudyError::from);
            bar.set_message(format!(
                "{} {} {}",
                job.workload,
                job.policy,
                job.variant.label()
            ));
            bar.inc();
            ((*job).clone(), r)
        })
        .collect();
    bar.finish();
    results
}

/// The three extra tables.
struct Tables {
    chiplets8: Chiplets8,
    pmm: Sensitivity,
    min_blocks: Sensitivity,
}

/// The three extra tables printed, then (after `took`) their CSVs in `out`.
fn print_and_write(
    out: &Path,
    t: &Tables,
    took: std::time::Duration,
    console: &dyn Console,
) -> Result<(), StudyError> {
    console.line("");
    console.line("8 chiplets (mcm-8chiplet): speed-up over s64k (remote-access ratio)");
    console.out(&t.chiplets8.text());
    console.line("");
    console.line("PMM threshold: clap's geometric-mean speed-up over s64k (4 chiplets)");
    console.out(&t.pmm.text());
    console.line("");
    console.line(
        "MMA's fully mapped VA blocks needed (not a number in the paper; 1 by default): \
         clap over s64k",
    );
    console.out(&t.min_blocks.text());
    console.line(&format!("(extras {:.0} s)", took.as_secs_f64()));
    write_in(out, "clap_8chiplet.csv", &t.chiplets8.csv())?;
    write_in(out, "clap_pmm.csv", &t.pmm.csv())?;
    write_in(out, "clap_min_blocks.csv", &t.min_blocks.csv())?;
    console.line(&format!(
        "wrote {}/clap_8chiplet.csv, clap_pmm.csv, clap_min_blocks.csv",
        out.display()
    ));
    Ok(())
}

/// Run the extra jobs (reusing the main sweep's runs of the same job at the same scale),
/// print their tables and write `clap_8chiplet.csv`, `clap_pmm.csv`,
/// `clap_min_blocks.csv`.
pub(crate) fn run(
    req: &Request,
    x: &sweep::ExtrasOptions,
    inputs: &dyn Inputs,
    s: &ClapSweep,
    main: &[RunSummary],
    console: &dyn Console,
) -> Result<Extras, StudyError> {
    let (scale, main_factor) = extras_scale(req, x)?;
    let ws = workloads(x, main)?;
    let mut cfg8 = inputs.gpu(Path::new("mcm-8chiplet"), &[])?;
    cfg8.engines = s.cfg.engines.clone();
    let jobs = extras::extra_jobs(&s.cfg, &ws);
    let (mut runs, todo) = reuse(&jobs, main, Some(scale) == main_factor);
    let n_reused = runs.len();
    let subset = x.workloads.is_none() && ws.len() < ran(main).len();
    console.line("");
    console.line(&announce(subset, &ws, todo.len(), n_reused, scale));
    let t0 = std::time::Instant::now();
    let mut failed = 0;
    for (job, r) in run_todo(s, &cfg8, &todo, (scale, req.seed), console) {
        match r {
            Ok(sum) => runs.push((job, sum)),
            Err(e) => {
                failed += 1;
                let what = format!("{} {} {}", job.workload, job.policy, job.variant.label());
                console.err(&format!("extra run {what} failed: {e}"));
            }
        }
    }
    // Job order, whichever finished first.
    runs.sort_by_key(|(j, _)| jobs.iter().position(|k| k == j));
    let t = Tables {
        chiplets8: tables::chiplets8(&runs, &extras::CHIPLETS8_POLICIES),
        pmm: extras::pmm_sensitivity(&s.cfg, &runs),
        min_blocks: extras::min_blocks_sensitivity(&s.cfg, &runs),
    };
    print_and_write(&s.out, &t, t0.elapsed(), console)?;
    Ok(Extras {
        scale,
        workloads: ws,
        reused: n_reused,
        chiplets8: t.chiplets8,
        pmm: t.pmm,
        min_blocks: t.min_blocks,
        failed,
        runs: runs.into_iter().map(|(j, r)| (j, r.csv_row)).collect(),
    })
}

/// Table 2 from the main sweep's runs: printed, and `clap_table2.csv`.
pub(crate) fn table2(
    dir: &Path,
    main: &[RunSummary],
    console: &dyn Console,
) -> Result<(), StudyError> {
    let rows = tables::table2(main);
    console.line("");
    console.out(&tables::table2_text(&rows));
    write_in(dir, "clap_table2.csv", &tables::table2_csv(&rows))
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
pub(crate) fn paper(
    dir: &Path,
    main: &[RunSummary],
    ex: Option<&Extras>,
    console: &dyn Console,
) -> Result<(), StudyError> {
    let figs = tables::paper_figures(main, ex.map(|e| &e.chiplets8), ex.map(|e| &e.pmm));
    console.line("");
    console.line("The paper's figures beside ours (measured; `-`: not run, see --no-extras)");
    console.out(&tables::paper_text(&figs));
    console.out(&tables::ideal_check_text(main));
    write_in(dir, "clap_paper.csv", &tables::paper_csv(&figs))?;
    let json = ExtrasJson {
        table2: tables::table2(main),
        paper: &figs,
        extras: ex,
    };
    write_in(
        dir,
        "clap_extras.json",
        &(serde_json::to_string_pretty(&json)? + "\n"),
    )?;
    console.line(&format!(
        "wrote {}/clap_table2.csv, clap_paper.csv, clap_extras.json",
        dir.display()
    ));
    Ok(())
}
