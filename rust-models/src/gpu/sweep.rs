//! The CLAP study: every workload of the suite under every placement policy, and the two
//! tables the paper reports — Figure 18 (speed-up over S-64KB and remote-access ratio, with
//! geometric means) and Table 4 (the page size CLAP chose for each workload's largest data
//! structures). The parallel loop and the progress bar live in the CLI; this module runs
//! one job and formats results. The tables are built from [`RunSummary`]s, so a sweep run
//! as separate jobs (one per process, `mcmvm sweep --task-id`) merges into the same text.

use super::metrics::RunReport;
use super::simulate::{simulate, RunSpec};
use super::{GpuConfig, GpuError};
use crate::driver::PolicyKind;
use serde::{Deserialize, Serialize};
use std::fmt::Write;

/// The policies of Figure 18, baseline first, then S-64KB with CLAP's coalescing
/// hardware alone.
pub const CLAP_POLICIES: [PolicyKind; 6] = [
    PolicyKind::S64k,
    PolicyKind::S2m,
    PolicyKind::Olp,
    PolicyKind::Clap,
    PolicyKind::Ideal,
    PolicyKind::S64kCoal,
];

/// `default` (the default sweep's policies, `mcmvm sweep --suite clap`) followed by every
/// other policy in [`PolicyKind::ALL`]'s order: the paper's other baselines (`--policies
/// extended`, opt-in so the default run stays quick) — the static intermediate page sizes
/// of Fig. 6 with their own TLBs, MGvm-style page-table placement and ideal C-NUMA.
pub fn extended_policies(default: &[PolicyKind]) -> Vec<PolicyKind> {
    let mut all = default.to_vec();
    all.extend(PolicyKind::ALL.iter().filter(|p| !default.contains(p)));
    all
}

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

/// What the tables of the study need from one run: Figure 18, Table 4 and the two CSVs,
/// without the rest of the report. A sweep run as separate jobs (`--task-id`) stores it
/// next to the full report, and the merge builds the tables from it alone.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunSummary {
    pub workload: String,
    pub policy: String,
    pub cycles: u64,
    #[serde(with = "exact_f64")]
    pub remote_ratio: f64,
    /// Warp memory instructions per wall-clock second (varies from run to run).
    #[serde(with = "exact_f64")]
    pub speed: f64,
    pub allocs: Vec<AllocSummary>,
    /// Table 2's counters: warp instructions, L2 cache and L2 TLB misses, and the
    /// dominant kernel's name and thread blocks ([`super::metrics::dominant_kernel`]).
    #[serde(default)]
    pub warp_instrs: u64,
    #[serde(default)]
    pub l2_cache_misses: u64,
    #[serde(default)]
    pub l2_tlb_misses: u64,
    #[serde(default)]
    pub dominant_kernel: Option<(String, u32)>,
    /// The RT's similarity to the true remote ratio and the chiplet locality of the run's
    /// structures of 2 MB or more (CLAP §4.3, §3.4).
    #[serde(default, with = "exact_opt_f64")]
    pub rt_similarity: Option<f64>,
    #[serde(default, with = "exact_opt_f64")]
    pub chiplet_locality: Option<f64>,
    /// The run's row of `clap.csv`.
    pub csv_row: String,
    /// The run's rows of `clap_structures.csv`.
    pub structure_rows: Vec<String>,
}

/// One data structure of a [`RunSummary`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AllocSummary {
    pub name: String,
    pub bytes: u64,
    pub page_size: String,
    /// What happened to it (Table 4's label).
    #[serde(default)]
    pub table4: String,
}

impl RunSummary {
    /// The summary of a finished run.
    pub fn of(r: &RunReport) -> RunSummary {
        RunSummary {
            workload: r.workload.clone(),
            policy: r.policy.clone(),
            cycles: r.cycles,
            remote_ratio: r.remote_ratio,
            speed: r.speed,
            allocs: r
                .allocs
                .iter()
                .map(|a| AllocSummary {
                    name: a.name.clone(),
                    bytes: a.bytes,
                    page_size: a.page_size.clone(),
                    table4: a.table4.clone(),
                })
                .collect(),
            warp_instrs: r.warp_instrs,
            l2_cache_misses: r.l2_cache_misses,
            l2_tlb_misses: r.l2_tlb.iter().map(|c| c.misses).sum(),
            dominant_kernel: super::metrics::dominant_kernel(&r.kernels)
                .map(|k| (k.name.clone(), k.thread_blocks)),
            rt_similarity: r.rt_similarity,
            chiplet_locality: r.chiplet_locality,
            csv_row: r.csv_row(),
            structure_rows: structure_rows(r),
        }
    }
}

/// Summaries of runs, in order.
pub fn summaries(runs: &[RunReport]) -> Vec<RunSummary> {
    runs.iter().map(RunSummary::of).collect()
}

/// [`exact_f64`] for an optional number (`null` when absent).
pub mod exact_opt_f64 {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(x: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
        match x {
            Some(x) => super::exact_f64::serialize(x, s),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
        Option::<String>::deserialize(d)?
            .map(|s| {
                s.parse()
                    .map_err(|_| serde::de::Error::custom(format!("`{s}` is not a number")))
            })
            .transpose()
    }
}

/// Serde for `f64` fields that must survive a JSON round trip bit for bit: written as a
/// string of Rust's shortest round-trip text (`"0.1"`, `"NaN"`), read back with
/// `str::parse`, which is exact. (serde_json's own float parsing is best-effort unless its
/// `float_roundtrip` feature is on, so the last digit of a 17-digit number may move.)
pub mod exact_f64 {
    use serde::{de::Error, Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(x: &f64, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(&format_args!("{x:?}"))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
        let s = String::deserialize(d)?;
        s.parse()
            .map_err(|_| D::Error::custom(format!("`{s}` is not a number")))
    }
}

/// Pretty JSON of an array whose elements are already pretty JSON texts (each as
/// `serde_json::to_string_pretty` writes it), placed at nesting `level`: byte for byte what
/// `to_string_pretty` writes for the array of the elements themselves.
pub fn pretty_array(items: &[String], level: usize) -> String {
    if items.is_empty() {
        return "[]".to_string();
    }
    let pad = "  ".repeat(level + 1);
    let body: Vec<String> = items
        .iter()
        .map(|t| {
            t.lines()
                .map(|l| format!("{pad}{l}"))
                .collect::<Vec<_>>()
                .join("\n")
        })
        .collect();
    format!("[\n{}\n{}]", body.join(",\n"), "  ".repeat(level))
}

/// `clap.json`: every run's full report, from each run's pretty JSON (see [`pretty_array`]).
pub fn runs_json(reports: &[String]) -> String {
    pretty_array(reports, 0)
}

fn find<'a>(runs: &'a [RunSummary], w: &str, p: &str) -> Option<&'a RunSummary> {
    runs.iter().find(|r| r.workload == w && r.policy == p)
}

fn workloads_in_order(runs: &[RunSummary]) -> Vec<String> {
    let mut ws: Vec<String> = Vec::new();
    for r in runs {
        if !ws.contains(&r.workload) {
            ws.push(r.workload.clone());
        }
    }
    ws
}

fn policies_in_order(runs: &[RunSummary]) -> Vec<String> {
    let mut ps: Vec<String> = Vec::new();
    for r in runs {
        if !ps.contains(&r.policy) {
            ps.push(r.policy.clone());
        }
    }
    ps
}

pub use crate::stats::geomean;

/// Speed-up of `policy` over `base` on workload `w`: base cycles / policy cycles.
pub fn speedup(runs: &[RunSummary], w: &str, policy: &str, base: &str) -> Option<f64> {
    let b = find(runs, w, base)?;
    let p = find(runs, w, policy)?;
    (p.cycles > 0).then(|| b.cycles as f64 / p.cycles as f64)
}

/// Figure 18 as text: per workload, each policy's speed-up over s64k and its remote ratio;
/// then the geometric means, and CLAP's geometric mean against s64k and against s2m.
pub fn figure18(runs: &[RunReport]) -> String {
    figure18_of(&summaries(runs))
}

/// [`figure18`] from run summaries.
pub fn figure18_of(runs: &[RunSummary]) -> String {
    let ws = workloads_in_order(runs);
    let ps = policies_in_order(runs);
    let mut s = figure18_rows(runs, &ws, &ps);
    for base in ["s64k", "s2m", "ideal"] {
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
    s.push_str(&without_top_outlier(runs, &ws));
    s
}

/// Figure 18's table: a row per workload, then the geometric means.
fn figure18_rows(runs: &[RunSummary], ws: &[String], ps: &[String]) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "Figure 18: speed-up over s64k (remote-access ratio)");
    let _ = write!(s, "{:<15}", "workload");
    for p in ps {
        let _ = write!(s, " {:>16}", p);
    }
    let _ = writeln!(s);
    for w in ws {
        let _ = write!(s, "{:<15}", w);
        for p in ps {
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
    for p in ps {
        let xs: Vec<f64> = ws
            .iter()
            .filter_map(|w| speedup(runs, w, p, "s64k"))
            .collect();
        let g = geomean(&xs).map_or("-".into(), |g| format!("{g:.3}"));
        let _ = write!(s, " {:>16}", g);
    }
    let _ = writeln!(s);
    s
}

/// One workload can carry a geometric mean (a TLB-thrashing transpose): the line with
/// CLAP over s64k without the workload CLAP gains most on (empty with two or fewer).
fn without_top_outlier(runs: &[RunSummary], ws: &[String]) -> String {
    let per: Vec<(&str, f64)> = ws
        .iter()
        .filter_map(|w| speedup(runs, w, "clap", "s64k").map(|x| (w.as_str(), x)))
        .collect();
    if per.len() <= 2 {
        return String::new();
    }
    let top = per
        .iter()
        .copied()
        .fold(per[0], |a, b| if b.1 > a.1 { b } else { a });
    let rest: Vec<f64> = per.iter().filter(|p| p.0 != top.0).map(|p| p.1).collect();
    geomean(&rest).map_or(String::new(), |g| {
        format!(
            "CLAP vs s64k without the largest outlier ({}, {:.3}): {g:.3} ({:+.1}%) over {} workloads\n",
            top.0,
            top.1,
            100.0 * (g - 1.0),
            rest.len()
        )
    })
}

/// Table 4 as text: the page size CLAP gave each workload's three largest structures.
pub fn table4(runs: &[RunReport]) -> String {
    table4_of(&summaries(runs))
}

/// [`table4`] from run summaries.
pub fn table4_of(runs: &[RunSummary]) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "Table 4: page size chosen by CLAP for the three largest structures \
         (MMA's choice; OLP as MMA's fallback, with why and the size OLP made)"
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
                let label = if a.table4.is_empty() {
                    &a.page_size
                } else {
                    &a.table4
                };
                format!(
                    "{} {} ({:.1} MB)",
                    a.name,
                    label,
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
    csv_of(&summaries(runs))
}

/// [`csv`] from run summaries.
pub fn csv_of(runs: &[RunSummary]) -> String {
    let mut s = String::from(RunReport::CSV_HEADER);
    s.push('\n');
    for r in runs {
        s.push_str(&r.csv_row);
        s.push('\n');
    }
    s
}

/// CSV of every structure of every run: the per-structure view behind Table 4.
pub fn alloc_csv(runs: &[RunReport]) -> String {
    alloc_csv_of(&summaries(runs))
}

/// [`alloc_csv`] from run summaries.
pub fn alloc_csv_of(runs: &[RunSummary]) -> String {
    let mut s = String::from(
        "workload,policy,structure,bytes,page_size,lines,remote_ratio,rt_remote_ratio,walks,\
         floor_64k,floor_page,misplaced_share,chiplet_locality,table4\n",
    );
    for r in runs {
        for row in &r.structure_rows {
            s.push_str(row);
            s.push('\n');
        }
    }
    s
}

/// A run's rows of [`alloc_csv`] (no newlines).
fn structure_rows(r: &RunReport) -> Vec<String> {
    r.allocs
        .iter()
        .map(|a| {
            format!(
                "{},{},{},{},{},{},{:.6},{},{},{:.6},{:.6},{:.6},{:.6},{}",
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
                a.walks,
                a.locality.floor_64k,
                a.locality.floor_region,
                a.locality.misplaced_line_share,
                a.locality.chiplet_locality,
                a.table4
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::{exact_f64, pretty_array};
    use serde::{Deserialize, Serialize};

    #[derive(Serialize)]
    struct Item {
        name: String,
        xs: Vec<f64>,
        empty: Vec<u8>,
        nested: Vec<Vec<u32>>,
        none: Option<u8>,
    }

    fn item(i: u32) -> Item {
        Item {
            name: format!("item \"{i}\"\nsecond line"),
            xs: vec![0.1 * i as f64, 1.0 / 3.0],
            empty: vec![],
            nested: vec![vec![i], vec![]],
            none: None,
        }
    }

    #[test]
    fn pretty_array_is_what_serde_json_writes() {
        for n in 0..3 {
            let items: Vec<Item> = (0..n).map(item).collect();
            let texts: Vec<String> = items
                .iter()
                .map(|i| serde_json::to_string_pretty(i).unwrap())
                .collect();
            assert_eq!(
                pretty_array(&texts, 0),
                serde_json::to_string_pretty(&items).unwrap()
            );
            #[derive(Serialize)]
            struct Outer<'a> {
                a: u8,
                runs: &'a [Item],
            }
            let outer = serde_json::to_string_pretty(&Outer { a: 1, runs: &items }).unwrap();
            let composed = format!(
                "{{\n  \"a\": 1,\n  \"runs\": {}\n}}",
                pretty_array(&texts, 1)
            );
            assert_eq!(composed, outer);
        }
    }

    #[test]
    fn exact_f64_round_trips_every_bit() {
        #[derive(Serialize, Deserialize)]
        struct X(#[serde(with = "exact_f64")] f64);
        let mut x = 0.123_456_789_012_345_67_f64;
        for _ in 0..10_000 {
            x = (x * 7.77 + 0.000_123).fract() + 1e-300 * x;
            let text = serde_json::to_string(&X(x)).unwrap();
            let back: X = serde_json::from_str(&text).unwrap();
            assert_eq!(back.0.to_bits(), x.to_bits(), "{text}");
        }
        let back: X = serde_json::from_str("\"NaN\"").unwrap();
        assert!(back.0.is_nan());
        assert!(serde_json::from_str::<X>("\"zz\"").is_err());
    }

    #[test]
    fn figure18_sets_the_geomean_without_its_largest_outlier_beside_it() {
        let run = |w: &str, p: &str, cycles: u64| super::RunSummary {
            workload: w.into(),
            policy: p.into(),
            cycles,
            ..Default::default()
        };
        // clap over s64k: a 2x, b 1x, c 8x (the outlier); without c: sqrt(2 x 1).
        let runs = vec![
            run("a", "s64k", 200),
            run("a", "clap", 100),
            run("b", "s64k", 100),
            run("b", "clap", 100),
            run("c", "s64k", 800),
            run("c", "clap", 100),
        ];
        let t = super::figure18_of(&runs);
        assert!(
            t.contains("CLAP vs s64k: geometric-mean speed-up 2.520 (+152.0%) over 3 workloads"),
            "{t}"
        );
        assert!(
            t.contains(
                "CLAP vs s64k without the largest outlier (c, 8.000): 1.414 (+41.4%) over 2 workloads"
            ),
            "{t}"
        );
    }
}
