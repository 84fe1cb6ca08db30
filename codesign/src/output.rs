//! A study's outputs: the Pareto front, the recommendation, the table printed, and
//! `<out>/codesign/<block>.{json,csv}` plus the Pareto SVG (drawn by `mcmvm-report`, so
//! `mcmvm report` draws the same one).

use crate::study::{write_json, write_text, PointResult};
use crate::CodesignError;
use mcmvm_protocol::protocol::BlockKind;
use mcmvm_report::codesign::{Study, StudyPoint};
use std::fmt::Write;
use std::path::{Path, PathBuf};

/// The library whose area and critical path the figure and the recommendation use.
pub const PLOT_LIBRARY: &str = "sky130hd";

/// Points within this fraction of the best system effect count as equally good.
pub const WITHIN: f64 = 0.01;

/// Effect differences below this fraction are inside the timing model's uncertainty (its
/// calibration leaves residuals of a few per cent on the CLAP baselines,
/// `docs/calibration.md`): the ranking by effect then says nothing.
pub const NOISE: f64 = 0.01;

fn area(p: &PointResult) -> f64 {
    p.on(PLOT_LIBRARY).map_or(f64::INFINITY, |l| l.area_um2)
}

/// Whether no other point is at most as large and at least as good, one of them strictly
/// (a point that failed its lockstep is never on the front and hides no other).
pub fn pareto(points: &[PointResult]) -> Vec<bool> {
    points
        .iter()
        .map(|p| {
            let (a, e) = (area(p), p.effect.geomean_speedup);
            !p.failed()
                && !points.iter().filter(|q| !q.failed()).any(|q| {
                    let (qa, qe) = (area(q), q.effect.geomean_speedup);
                    qa <= a && qe >= e && (qa < a || qe > e)
                })
        })
        .collect()
}

/// The smallest point within [`WITHIN`] of the best effect, and the sentence saying so;
/// points that failed their lockstep are left out.
pub fn recommend(points: &[PointResult]) -> (Option<usize>, String) {
    let passed = || (0..points.len()).filter(|&i| !points[i].failed());
    let best = passed()
        .map(|i| points[i].effect.geomean_speedup)
        .fold(f64::NEG_INFINITY, f64::max);
    let Some(i) = passed()
        .filter(|&i| points[i].effect.geomean_speedup >= best * (1.0 - WITHIN))
        .min_by(|&a, &b| area(&points[a]).total_cmp(&area(&points[b])))
    else {
        return (
            None,
            "no point recommended: none was measured with its Verilog agreeing with the twin"
                .into(),
        );
    };
    let r = &points[i];
    let mut s = format!(
        "recommended: {} (smallest {PLOT_LIBRARY} area within {:.0} % of the best effect {best:.4}: {:.4})",
        r.label,
        WITHIN * 100.0,
        r.effect.geomean_speedup
    );
    match points.iter().find(|p| p.paper) {
        None => s.push_str("; the paper's point is not in this grid"),
        Some(p) if p.label == r.label => {
            s.push_str("; that is the paper's point itself");
        }
        Some(p) => {
            let saving: Vec<String> = r
                .libraries
                .iter()
                .filter_map(|l| {
                    let pl = p.on(&l.library)?;
                    Some(format!(
                        "{:.1} % on {}",
                        100.0 * (1.0 - l.area_um2 / pl.area_um2),
                        l.library
                    ))
                })
                .collect();
            let _ = write!(
                s,
                "; area saving over the paper's point: {}",
                saving.join(", ")
            );
            let diff =
                (r.effect.geomean_speedup - p.effect.geomean_speedup) / p.effect.geomean_speedup;
            let _ = write!(s, "; effect {:+.2} % against the paper's", diff * 100.0);
            if diff.abs() < NOISE {
                let _ = write!(
                    s,
                    " — inside the timing model's noise (< {:.0} %): at these workloads and scale the \
                     system cannot tell the two apart",
                    NOISE * 100.0
                );
            }
        }
    }
    (Some(i), s)
}

/// The summary the report reads.
pub fn study(block: BlockKind, points: &[PointResult], recommendation: &str) -> Study {
    let front = pareto(points);
    Study {
        block: block.short_name().into(),
        effect: format!(
            "geomean speed-up, {}",
            points.first().map_or("", |p| p.effect.metric.as_str())
        ),
        library: PLOT_LIBRARY.into(),
        points: points
            .iter()
            .zip(front)
            .map(|(p, pareto)| StudyPoint {
                label: p.label.clone(),
                paper: p.paper,
                default: p.default,
                area_um2: area(p),
                critical_path_ns: p.on(PLOT_LIBRARY).map_or(0.0, |l| l.critical_path_ns),
                effect: p.effect.geomean_speedup,
                pareto,
            })
            .collect(),
        recommendation: recommendation.into(),
    }
}

/// Header of the CSV (one row per point and library).
pub const CSV_HEADER: &str = "block,point,paper,default,library,area_um2,logic_area_um2,cells,\
flip_flops,critical_path_ns,max_clock_mhz,dynamic_w,leakage_w,power_clock_mhz,\
power_undefined_cells,corner,lint,lockstep_cycles,lockstep_mismatches,geomean_speedup,metric,workload_figures,cached";

/// One CSV row per point and library.
pub fn csv(block: BlockKind, points: &[PointResult]) -> String {
    let mut s = format!("{CSV_HEADER}\n");
    for p in points {
        let figures = workload_figures(p).replace(',', ";");
        let (ls_cycles, ls_mismatches) = p
            .lockstep
            .as_ref()
            .map_or((String::new(), String::new()), |l| {
                (l.cycles.to_string(), l.mismatches.to_string())
            });
        for l in &p.libraries {
            let _ = writeln!(
                s,
                "{},\"{}\",{},{},{},{:.2},{:.2},{},{},{:.4},{:.1},{:.6e},{:.6e},{:.1},{},\"{}\",{},{},{},{:.6},{},\"{}\",{}",
                block.short_name(),
                p.label,
                p.paper,
                p.default,
                l.library,
                l.area_um2,
                l.logic_area_um2,
                l.cells,
                l.flip_flops,
                l.critical_path_ns,
                l.max_clock_mhz,
                l.dynamic_w,
                l.leakage_w,
                l.power_clock_mhz,
                l.power_undefined_cells,
                l.corner,
                p.lint,
                ls_cycles,
                ls_mismatches,
                p.effect.geomean_speedup,
                p.effect.metric,
                figures,
                p.cached
            );
        }
    }
    s
}

/// Per workload: speed-up and the block's own figures, on one line.
pub fn workload_figures(p: &PointResult) -> String {
    p.effect
        .workloads
        .iter()
        .map(|w| {
            let mut s = format!("{} {:.4}", w.workload, w.speedup);
            if let Some(e) = w.rt_error {
                let _ = write!(s, " rt-err {:.2}%", 100.0 * e);
            }
            if let Some(m) = w.merged_entries {
                let _ = write!(s, " merged {m}");
            }
            if let Some(m) = w.l2_tlb_mpki {
                let _ = write!(s, " l2tlb-mpki {m:.3}");
            }
            if let Some(st) = w.profiling_steps {
                let _ = write!(s, " prof-steps {st}");
            }
            s
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The table printed to stdout.
pub fn table(block: BlockKind, points: &[PointResult]) -> String {
    let mut s = format!("co-design of {}\n", block.module_name());
    let _ = writeln!(
        s,
        "{:<4} {:<52} {:<8} {:<11} {:>9} {:>9} {:>6} {:>7} {:>6} {:>9} {:>9} {:>5} {:>10} {:>8}  per workload",
        "#",
        "point",
        "lint",
        "lockstep",
        "area µm²",
        "logic µm²",
        "FFs",
        "path ns",
        "MHz",
        "dyn mW",
        "leak nW",
        "undef",
        "osu µm²",
        "speed-up",
    );
    for (i, p) in points.iter().enumerate() {
        let Some(l) = p.on(PLOT_LIBRARY) else {
            continue;
        };
        let osu = p.on("osu018").map_or(0.0, |o| o.area_um2);
        let mark = match (p.paper, p.default) {
            (true, true) => "PD",
            (true, false) => "P",
            (false, true) => "D",
            _ => "",
        };
        let _ = writeln!(
            s,
            "{:<4} {:<52} {:<8} {:<11} {:>9.0} {:>9.0} {:>6} {:>7.3} {:>6.0} {:>9.3} {:>9.2} {:>5} {:>10.0} {:>8.4}  {}",
            format!("{i}{mark}"),
            p.label,
            p.lint,
            lockstep_cell(p),
            l.area_um2,
            l.logic_area_um2,
            l.flip_flops,
            l.critical_path_ns,
            l.max_clock_mhz,
            l.dynamic_w * 1e3,
            l.leakage_w * 1e9,
            l.power_undefined_cells,
            osu,
            p.effect.geomean_speedup,
            workload_figures(p)
        );
    }
    let _ = writeln!(
        s,
        "P = the paper's point, D = our default; lockstep = cycles compared with the twin and \
         the verdict (FAILED: a mismatch; the recommendation skips the point); area, path and power on {PLOT_LIBRARY} (tt, 25 °C, \
         1.8 V), undef = cells whose power OpenSTA left undefined (their NaN or infinite components are not in dyn and leak), osu µm² = area on osu018; speed-up = geomean {} with the point's Verilog serving",
        points.first().map_or("", |p| p.effect.metric.as_str())
    );
    s
}

/// The power line: how the power was computed (each method the points used), at which
/// clock, at each library's corner, and how many cells had undefined power.
pub fn power_line(points: &[PointResult]) -> String {
    let mut methods: Vec<&str> = points.iter().map(|p| p.power_tool.as_str()).collect();
    methods.dedup();
    let libs = points.first().map_or(&[][..], |p| p.libraries.as_slice());
    let mut clocks: Vec<String> = points
        .iter()
        .flat_map(|p| &p.libraries)
        .map(|l| format!("{:.0} MHz", l.power_clock_mhz))
        .collect();
    clocks.dedup();
    let corners: Vec<String> = libs
        .iter()
        .map(|l| format!("{} ({})", l.library, l.corner))
        .collect();
    let undefined: u64 = points
        .iter()
        .flat_map(|p| &p.libraries)
        .map(|l| l.power_undefined_cells)
        .sum();
    format!(
        "power: {}; timing constraints at the runs' GPU clock ({}); at {}; cells with \
         undefined power over all points and libraries: {undefined} (their NaN or infinite \
         components left out)",
        methods.join(" / "),
        clocks.join(", "),
        corners.join(" and ")
    )
}

/// `4000 ok`, `812 FAILED` or `-` (not run).
fn lockstep_cell(p: &PointResult) -> String {
    match &p.lockstep {
        None => "-".into(),
        Some(l) if l.passed() => format!("{} ok", l.cycles),
        Some(l) => format!("{} FAILED", l.cycles),
    }
}

/// The engines that served the block in each point's runs, and the cycles stepped; a
/// failed lockstep's first mismatch.
pub fn served_lines(points: &[PointResult]) -> String {
    let mut s = String::new();
    for (i, p) in points.iter().enumerate() {
        let mut engines: Vec<String> = p
            .effect
            .runs
            .iter()
            .flat_map(|r| r.served.iter().map(|x| x.engine.clone()))
            .collect();
        engines.sort();
        engines.dedup();
        let cycles: u64 = p
            .effect
            .runs
            .iter()
            .flat_map(|r| &r.served)
            .map(|x| x.block_cycles)
            .sum();
        let _ = writeln!(
            s,
            "point {i}: served by {} for {cycles} block cycles over {} runs{}",
            engines.join(", "),
            p.effect.runs.len(),
            if p.cached { " (cached)" } else { "" }
        );
        if let Some(m) = p.lockstep.as_ref().and_then(|l| l.first_mismatch.as_ref()) {
            let _ = writeln!(s, "point {i}: FAILED its lockstep against the twin: {m}");
        }
    }
    s
}

/// Write `<out>/codesign/<block>.json`, `.csv` and the Pareto SVG; returns the files.
pub fn write(
    out: &Path,
    block: BlockKind,
    points: &[PointResult],
    recommendation: &str,
) -> Result<Vec<PathBuf>, CodesignError> {
    let dir = out.join("codesign");
    let name = block.short_name();
    let st = study(block, points, recommendation);
    let json = dir.join(format!("{name}.json"));
    write_json(
        &json,
        &serde_json::json!({ "study": st, "power": power_line(points), "points": points }),
    )?;
    let csv_path = dir.join(format!("{name}.csv"));
    write_text(&csv_path, &csv(block, points))?;
    let mut done = mcmvm_report::Outcome::default();
    let rel = mcmvm_report::codesign::write_pareto(out, &st, &mut done)?;
    Ok(vec![json, csv_path, out.join(rel)])
}
