//! The CLAP study: every workload of the suite under every placement policy, and the two
//! tables the paper reports — Figure 18 (speed-up over S-64KB and remote-access ratio, with
//! geometric means) and Table 4 (the page size CLAP chose for each workload's largest data
//! structures). The parallel loop and the progress bar live in the CLI; this module runs
//! one job and formats results.

use super::metrics::RunReport;
use super::simulate::{simulate, RunSpec};
use super::{GpuConfig, GpuError};
use crate::driver::PolicyKind;
use std::fmt::Write;

/// The policies of Figure 18, baseline first.
pub const CLAP_POLICIES: [PolicyKind; 5] = [
    PolicyKind::S64k,
    PolicyKind::S2m,
    PolicyKind::Olp,
    PolicyKind::Clap,
    PolicyKind::Ideal,
];

/// One cell of the study.
#[derive(Debug, Clone, PartialEq)]
pub struct Job {
    pub workload: String,
    pub policy: PolicyKind,
}

/// Every (workload, policy) pair of the CLAP suite, workload-major.
pub fn clap_jobs(policies: &[PolicyKind]) -> Vec<Job> {
    crate::workload::clap_suite()
        .iter()
        .flat_map(|w| {
            policies.iter().map(move |&p| Job {
                workload: w.to_string(),
                policy: p,
            })
        })
        .collect()
}

/// Build the job's workload and simulate it.
pub fn run_job(cfg: &GpuConfig, job: &Job, scale: f64, seed: u64) -> Result<RunReport, GpuError> {
    let w = crate::workload::by_name(&job.workload, scale, seed)?;
    simulate(
        cfg,
        w.as_ref(),
        RunSpec {
            policy: job.policy,
            scale,
            seed,
        },
    )
}

fn find<'a>(runs: &'a [RunReport], w: &str, p: &str) -> Option<&'a RunReport> {
    runs.iter().find(|r| r.workload == w && r.policy == p)
}

fn workloads_in_order(runs: &[RunReport]) -> Vec<String> {
    let mut ws: Vec<String> = Vec::new();
    for r in runs {
        if !ws.contains(&r.workload) {
            ws.push(r.workload.clone());
        }
    }
    ws
}

fn policies_in_order(runs: &[RunReport]) -> Vec<String> {
    let mut ps: Vec<String> = Vec::new();
    for r in runs {
        if !ps.contains(&r.policy) {
            ps.push(r.policy.clone());
        }
    }
    ps
}

/// Geometric mean of positive values (None if there are none).
pub fn geomean(xs: &[f64]) -> Option<f64> {
    let v: Vec<f64> = xs.iter().copied().filter(|x| *x > 0.0).collect();
    (!v.is_empty()).then(|| (v.iter().map(|x| x.ln()).sum::<f64>() / v.len() as f64).exp())
}

/// Speed-up of `policy` over `base` on workload `w`: base cycles / policy cycles.
pub fn speedup(runs: &[RunReport], w: &str, policy: &str, base: &str) -> Option<f64> {
    let b = find(runs, w, base)?;
    let p = find(runs, w, policy)?;
    (p.cycles > 0).then(|| b.cycles as f64 / p.cycles as f64)
}

/// Figure 18 as text: per workload, each policy's speed-up over s64k and its remote ratio;
/// then the geometric means, and CLAP's geometric mean against s64k and against s2m.
pub fn figure18(runs: &[RunReport]) -> String {
    let ws = workloads_in_order(runs);
    let ps = policies_in_order(runs);
    let mut s = String::new();
    let _ = writeln!(s, "Figure 18: speed-up over s64k (remote-access ratio)");
    let _ = write!(s, "{:<15}", "workload");
    for p in &ps {
        let _ = write!(s, " {:>16}", p);
    }
    let _ = writeln!(s);
    for w in &ws {
        let _ = write!(s, "{:<15}", w);
        for p in &ps {
            let cell = match (speedup(runs, w, p, "s64k"), find(runs, w, p)) {
                (Some(x), Some(r)) => format!("{:.3} ({:>5.1}%)", x, 100.0 * r.remote_ratio),
                (None, Some(r)) => format!("- ({:>5.1}%)", 100.0 * r.remote_ratio),
                _ => "failed".to_string(),
            };
            let _ = write!(s, " {:>16}", cell);
        }
        let _ = writeln!(s);
    }
    let _ = write!(s, "{:<15}", "geomean");
    for p in &ps {
        let xs: Vec<f64> = ws
            .iter()
            .filter_map(|w| speedup(runs, w, p, "s64k"))
            .collect();
        let g = geomean(&xs).map_or("-".into(), |g| format!("{g:.3}"));
        let _ = write!(s, " {:>16}", g);
    }
    let _ = writeln!(s);
    for base in ["s64k", "s2m"] {
        let xs: Vec<f64> = ws
            .iter()
            .filter_map(|w| speedup(runs, w, "clap", base))
            .collect();
        if let Some(g) = geomean(&xs) {
            let _ = writeln!(
                s,
                "CLAP vs {base}: geometric-mean speed-up {g:.3} ({:+.1}%) over {} workloads",
                100.0 * (g - 1.0),
                xs.len()
            );
        }
    }
    s
}

/// Table 4 as text: the page size CLAP gave each workload's three largest structures.
pub fn table4(runs: &[RunReport]) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "Table 4: page size chosen by CLAP for the three largest structures"
    );
    for w in workloads_in_order(runs) {
        let Some(r) = find(runs, &w, "clap") else {
            continue;
        };
        let mut allocs: Vec<_> = r.allocs.iter().collect();
        allocs.sort_by_key(|a| std::cmp::Reverse(a.bytes));
        let cells: Vec<String> = allocs
            .iter()
            .take(3)
            .map(|a| {
                format!(
                    "{} {} ({:.0} MB)",
                    a.name,
                    a.page_size,
                    a.bytes as f64 / 1048576.0
                )
            })
            .collect();
        let _ = writeln!(s, "{:<15} {}", w, cells.join(" | "));
    }
    s
}

/// CSV of every run (header + rows).
pub fn csv(runs: &[RunReport]) -> String {
    let mut s = String::from(RunReport::CSV_HEADER);
    s.push('\n');
    for r in runs {
        s.push_str(&r.csv_row());
        s.push('\n');
    }
    s
}

/// CSV of every structure of every run: the per-structure view behind Table 4.
pub fn alloc_csv(runs: &[RunReport]) -> String {
    let mut s = String::from(
        "workload,policy,structure,bytes,page_size,lines,remote_ratio,rt_remote_ratio,walks\n",
    );
    for r in runs {
        for a in &r.allocs {
            let _ = writeln!(
                s,
                "{},{},{},{},{},{},{:.6},{},{}",
                r.workload,
                r.policy,
                a.name,
                a.bytes,
                a.page_size,
                a.lines,
                a.remote_ratio,
                a.rt_remote_ratio
                    .map(|x| format!("{x:.6}"))
                    .unwrap_or_default(),
                a.walks
            );
        }
    }
    s
}
