//! A calibration's outputs: a text table of every point (its values, figures and
//! residual), the best point's residual per target, `calibrate.csv` and `calibrate.json`
//! (every point, every run's cycles, the parameter table and the targets).

use super::design::Design;
use super::fit::{current_values, PointResult};
use super::fit::{Plan, PlanJob};
use super::targets::UNFITTED;
use super::CalibrateError;
use crate::gpu::sweep::RunSummary;
use std::fmt::Write;

/// The parameters any point sets, in table order.
fn varied(plan: &Plan) -> Vec<usize> {
    (0..plan.params.len())
        .filter(|&i| plan.points.iter().any(|p| p.value(i).is_some()))
        .collect()
}

/// Each point's effective value of parameter `i`: its own, else the config's.
fn values(plan: &Plan) -> Result<Vec<Vec<Option<f64>>>, CalibrateError> {
    let base = plan.point_config(&plan.points[0])?;
    let current = current_values(&base, &plan.params);
    Ok(plan
        .points
        .iter()
        .map(|pt| {
            (0..plan.params.len())
                .map(|i| pt.value(i).or(current[i]))
                .collect()
        })
        .collect())
}

fn cell(x: Option<f64>, f: impl Fn(f64) -> String) -> String {
    x.map_or_else(|| "-".to_string(), f)
}

/// Every point as a table, then the best point's residual per target.
pub fn text(plan: &Plan, results: &[PointResult]) -> Result<String, CalibrateError> {
    let cols = varied(plan);
    let vals = values(plan)?;
    let mut s = points_table(plan, results, &cols, &vals);
    if let Some(b) = super::fit::best(results) {
        best_text(&mut s, plan, results, b, &cols, &vals);
    }
    Ok(s)
}

/// One line per point: the varied parameters' values, the figures, the residual; then
/// the paper's figures.
fn points_table(
    plan: &Plan,
    results: &[PointResult],
    cols: &[usize],
    vals: &[Vec<Option<f64>>],
) -> String {
    let mut s = String::new();
    let _ = write!(s, "{:<10}", "point");
    for &i in cols {
        let _ = write!(s, " {:>11}", plan.params[i].short);
    }
    for t in &plan.targets {
        let _ = write!(s, " {:>16}", t.id);
    }
    let _ = writeln!(s, " {:>9}", "residual");
    for r in results {
        let _ = write!(s, "{:<10}", plan.points[r.point].label);
        for &i in cols {
            let p = &plan.params[i];
            let _ = write!(s, " {:>11}", cell(vals[r.point][i], |v| p.format(v)));
        }
        for f in &r.figures {
            let _ = write!(
                s,
                " {:>16}",
                cell(*f, |f| format!("{:+.2}%", 100.0 * (f - 1.0)))
            );
        }
        let _ = writeln!(s, " {:>9}", cell(r.residual, |x| format!("{x:.5}")));
    }
    let _ = write!(s, "{:<10}", "paper");
    for _ in cols {
        let _ = write!(s, " {:>11}", "");
    }
    for t in &plan.targets {
        let _ = write!(s, " {:>16}", format!("{:+.2}%", 100.0 * (t.paper - 1.0)));
    }
    let _ = writeln!(s);
    s
}

/// The best point `b`: its values, then each target's figure, log error and term.
fn best_text(
    s: &mut String,
    plan: &Plan,
    results: &[PointResult],
    b: &PointResult,
    cols: &[usize],
    vals: &[Vec<Option<f64>>],
) {
    let _ = writeln!(
        s,
        "\nbest: {} (residual {:.5}; the config as given: {})",
        plan.points[b.point].label,
        b.residual.unwrap_or(f64::NAN),
        cell(results.first().and_then(|r| r.residual), |x| format!(
            "{x:.5}"
        ))
    );
    for &i in cols {
        let p = &plan.params[i];
        let _ = writeln!(
            s,
            "  {} = {}",
            p.key,
            cell(vals[b.point][i], |v| p.format(v))
        );
    }
    let _ = writeln!(
        s,
        "{:<18} {:>9} {:>9} {:>13} {:>9}",
        "target", "paper", "ours", "ln(ours/pap)", "term"
    );
    for (k, t) in plan.targets.iter().enumerate() {
        let pct = |x: f64| format!("{:+.2}%", 100.0 * (x - 1.0));
        let _ = writeln!(
            s,
            "{:<18} {:>9} {:>9} {:>13} {:>9}",
            t.id,
            pct(t.paper),
            cell(b.figures[k], pct),
            cell(b.figures[k], |f| format!("{:+.4}", (f / t.paper).ln())),
            cell(b.terms[k], |x| format!("{x:.5}"))
        );
    }
}

/// `calibrate.csv`: one row per point.
pub fn csv(plan: &Plan, results: &[PointResult]) -> Result<String, CalibrateError> {
    let vals = values(plan)?;
    let mut s = String::from("point,label");
    for p in &plan.params {
        let _ = write!(s, ",{}", p.key);
    }
    for t in &plan.targets {
        let _ = write!(s, ",{}", t.id);
    }
    for t in &plan.targets {
        let _ = write!(s, ",term_{}", t.id);
    }
    s.push_str(",residual\n");
    for r in results {
        let _ = write!(s, "{},{}", r.point, plan.points[r.point].label);
        for (i, p) in plan.params.iter().enumerate() {
            let _ = write!(s, ",{}", cell(vals[r.point][i], |v| p.format(v)));
        }
        for x in r.figures.iter().chain(&r.terms).chain([&r.residual]) {
            let _ = write!(s, ",{}", x.map_or(String::new(), |x| format!("{x}")));
        }
        s.push('\n');
    }
    Ok(s)
}

/// `calibrate.json`: the plan (parameter table, targets, points), the unfitted baseline
/// figures, every point's result, the best point and every run's headline counters.
pub fn json(
    plan: &Plan,
    design: Design,
    results: &[PointResult],
    runs: &[(PlanJob, RunSummary)],
) -> Result<String, CalibrateError> {
    let best = super::fit::best(results).map(|b| {
        serde_json::json!({
            "point": b.point,
            "label": plan.points[b.point].label,
            "overrides": plan.points[b.point].overrides(&plan.params),
            "figures": b.figures,
            "terms": b.terms,
            "residual": b.residual,
        })
    });
    let runs: Vec<_> = runs
        .iter()
        .map(|(j, r)| {
            serde_json::json!({
                "point": j.point,
                "workload": r.workload,
                "policy": r.policy,
                "cycles": r.cycles,
                "remote_ratio": r.remote_ratio,
                "warp_instrs": r.warp_instrs,
                "l2_tlb_misses": r.l2_tlb_misses,
            })
        })
        .collect();
    let doc = serde_json::json!({
        "design": design,
        "plan": plan,
        "unfitted": UNFITTED,
        "results": results,
        "best": best,
        "runs": runs,
    });
    Ok(serde_json::to_string_pretty(&doc).expect("plain JSON values"))
}
