//! `calibrate`: the residual is Σ weight × ln(ours / paper)² over the targets, ours the
//! geomean speed-up from the runs; the best point is the one with the smallest residual;
//! a point's overrides reach the model; `rewrite` changes only the fitted keys' lines
//! (plus provenance comments), is idempotent, and the result still loads.

use mcmvm_models::calibrate::design::{self, Design, Point};
use mcmvm_models::calibrate::fit::{best, score, Plan};
use mcmvm_models::calibrate::params::{param, PARAMS};
use mcmvm_models::calibrate::rewrite::{rewrite, PROVENANCE};
use mcmvm_models::calibrate::targets::TARGETS;
use mcmvm_models::gpu::sweep::RunSummary;
use mcmvm_models::gpu::GpuConfig;
use mcmvm_models::workload::Scale;
use std::path::{Path, PathBuf};

fn config_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/mcm-4chiplet.toml")
}

fn config_text() -> String {
    std::fs::read_to_string(config_path()).expect("the shipped config")
}

/// The shipped config as it was before `mcmvm calibrate --write` put the fit into it:
/// no provenance comments, no L2 TLB port key, 4 loads in flight, the ring's 768 GB/s.
fn pre_fit_config_text() -> String {
    let mut in_l2 = false;
    let mut lines = Vec::new();
    for l in config_text().lines() {
        if l.starts_with('[') {
            in_l2 = l == "[l2_tlb]";
        }
        if l.starts_with(PROVENANCE) || (in_l2 && l.starts_with("lookups_per_cycle =")) {
            continue;
        }
        lines.push(if l.starts_with("loads_in_flight_per_warp =") {
            "loads_in_flight_per_warp = 4".to_string()
        } else if l.starts_with("total_bandwidth_gbs =")
            && !in_l2
            && lines.iter().any(|x: &String| x == "[interconnect]")
        {
            "total_bandwidth_gbs = 768.0".to_string()
        } else {
            l.to_string()
        });
    }
    lines.join("\n") + "\n"
}

fn summary(workload: &str, policy: &str, cycles: u64) -> RunSummary {
    RunSummary {
        workload: workload.into(),
        policy: policy.into(),
        cycles,
        ..Default::default()
    }
}

#[test]
fn residual_of_known_cycles_is_the_sum_of_squared_log_ratios() {
    // Two workloads: ideal 2x and 1.25x faster than s64k (geomean sqrt(2.5)); s2m 1.1x and
    // 1.0x as slow as s64k (geomean sqrt(1.1)).
    let runs = vec![
        summary("a", "s64k", 2000),
        summary("a", "ideal", 1000),
        summary("a", "s2m", 2200),
        summary("b", "s64k", 1000),
        summary("b", "ideal", 800),
        summary("b", "s2m", 1000),
    ];
    let ws = vec!["a".to_string(), "b".to_string()];
    let r = score(0, &TARGETS, &runs, &ws);
    let ours = [2.5f64.sqrt(), 1.1f64.sqrt()];
    let mut sum = 0.0;
    for (k, t) in TARGETS.iter().enumerate() {
        let f = r.figures[k].expect("both runs present");
        assert!((f - ours[k]).abs() < 1e-12, "{}: {f} vs {}", t.id, ours[k]);
        let term = t.weight * (ours[k] / t.paper).ln().powi(2);
        assert!((r.terms[k].unwrap() - term).abs() < 1e-12);
        sum += term;
    }
    assert!((r.residual.unwrap() - sum).abs() < 1e-12);
    // The paper's figures themselves score zero.
    assert!((TARGETS[0].paper - 1.175 / (1.0 - 0.0578)).abs() < 1e-12);
    assert!(TARGETS.iter().all(|t| t.term(t.paper) == 0.0));
    // A missing run leaves the residual undefined, not zero.
    let r = score(0, &TARGETS, &runs[..5], &ws);
    assert_eq!(r.residual, None);
}

#[test]
fn two_point_fit_scores_each_point_and_picks_the_smaller_residual() {
    let loads = PARAMS
        .iter()
        .position(|p| p.key == "gpu.loads_in_flight_per_warp")
        .unwrap();
    let points = vec![
        Point {
            label: "config".into(),
            settings: Vec::new(),
        },
        Point {
            label: "one-load".into(),
            settings: vec![(loads, 1.0)],
        },
    ];
    let scale = Scale::Factor(0.02);
    println!("workloads lud, bfs; scale {scale}; generator seed 1");
    let plan = Plan::new(
        &config_path(),
        &config_text(),
        &PARAMS,
        &TARGETS,
        points,
        vec!["lud".into(), "bfs".into()],
        scale,
        1,
    )
    .unwrap();
    let jobs = plan.jobs();
    assert_eq!(
        jobs.len(),
        2 * 2 * 3,
        "points x workloads x (s64k, ideal, s2m)"
    );
    let runs: Vec<(usize, RunSummary)> = jobs
        .iter()
        .map(|j| (j.point, plan.run(j).unwrap()))
        .collect();
    let cycles = |p: usize| -> Vec<u64> {
        runs.iter()
            .filter(|(q, _)| *q == p)
            .map(|(_, r)| r.cycles)
            .collect()
    };
    assert_ne!(cycles(0), cycles(1), "the override reached the model");
    let results = plan.evaluate(&runs);
    for r in &results {
        let mine: Vec<RunSummary> = runs
            .iter()
            .filter(|(p, _)| *p == r.point)
            .map(|(_, s)| s.clone())
            .collect();
        let again = score(r.point, &TARGETS, &mine, &plan.workloads);
        assert_eq!(&again, r);
        let sum: f64 = r.terms.iter().map(|t| t.unwrap()).sum();
        assert!((r.residual.unwrap() - sum).abs() < 1e-15);
    }
    let b = best(&results).unwrap();
    let other = &results[1 - b.point];
    println!(
        "residuals: {:?}, best {}",
        results.iter().map(|r| r.residual).collect::<Vec<_>>(),
        b.point
    );
    assert!(b.residual.unwrap() <= other.residual.unwrap());
}

#[test]
fn the_config_point_comes_first_and_a_duplicate_of_it_is_dropped() {
    let pts = design::points(Design::Small, &PARAMS).unwrap();
    let primaries = PARAMS.iter().filter(|p| p.primary).count();
    assert_eq!(pts.len(), 1 + (1 << primaries));
    assert!(pts[0].settings.is_empty());
    let plan = Plan::new(
        &config_path(),
        &config_text(),
        &PARAMS,
        &TARGETS,
        pts,
        vec!["lud".into()],
        Scale::Factor(0.02),
        1,
    )
    .unwrap();
    // The shipped values are one corner of the small grid (768 GB/s, unbounded L2 TLB
    // ports, 4 loads), so that corner is point 0 and is not run twice.
    assert_eq!(plan.points.len(), 1 << primaries);
    let lhs = |seed| design::points(Design::Latin { points: 16, seed }, &PARAMS).unwrap();
    assert_eq!(lhs(7), lhs(7), "seeded");
    assert_ne!(lhs(7), lhs(8));
    // Each continuous parameter's 16 values fall one in each sixteenth of its range.
    // (Narrow integer ranges, 2-4 loads or 8-64 walkers, round into fewer strata.)
    let wide = |p: &&mcmvm_models::calibrate::params::Param| {
        p.continuous && (p.high - p.low).abs() >= 100.0
    };
    for (i, p) in PARAMS.iter().enumerate().filter(|(_, p)| wide(p)) {
        let mut strata: Vec<usize> = lhs(7)[1..]
            .iter()
            .map(|pt| {
                let u = (pt.value(i).unwrap() - p.low) / (p.high - p.low);
                ((u * 16.0).floor() as usize).min(15)
            })
            .collect();
        strata.sort();
        strata.dedup();
        assert!(strata.len() >= 14, "{}: strata {strata:?}", p.key);
    }
}

#[test]
fn rewrite_changes_only_the_fitted_lines_and_still_loads() {
    let text = pre_fit_config_text();
    let path = config_path();
    let fitted = vec![
        (*param("interconnect.total_bandwidth_gbs").unwrap(), 3072.0),
        (*param("l2_tlb.lookups_per_cycle").unwrap(), 4.0),
        (*param("gpu.loads_in_flight_per_warp").unwrap(), 2.0),
    ];
    let out = rewrite(&text, &path, &fitted, "test targets").unwrap();
    let cfg = GpuConfig::parse(&out, &path).unwrap();
    assert_eq!(cfg.interconnect.total_bandwidth_gbs, 3072.0);
    assert_eq!(cfg.l2_tlb.lookups_per_cycle, 4);
    assert_eq!(cfg.gpu.loads_in_flight_per_warp, 2);
    assert_eq!(
        cfg.l1_tlb.lookups_per_cycle, 0,
        "the L1 TLB's key is untouched"
    );
    // Without the provenance comments and the one added key, the files align line by
    // line and differ only in the two keys the file already had.
    let kept: Vec<&str> = out
        .lines()
        .filter(|l| !l.starts_with(PROVENANCE) && *l != "lookups_per_cycle = 4")
        .collect();
    let orig: Vec<&str> = text.lines().collect();
    assert_eq!(kept.len(), orig.len());
    let changed: Vec<(&str, &str)> = orig
        .iter()
        .zip(&kept)
        .filter(|(a, b)| a != b)
        .map(|(a, b)| (*a, *b))
        .collect();
    assert_eq!(
        changed,
        vec![
            (
                "loads_in_flight_per_warp = 4",
                "loads_in_flight_per_warp = 2"
            ),
            (
                "total_bandwidth_gbs = 768.0",
                "total_bandwidth_gbs = 3072.0"
            ),
        ]
    );
    assert_eq!(out.matches(PROVENANCE).count(), 3);
    // The added key sits in [l2_tlb], after its last key.
    let l2 = out.find("[l2_tlb]").unwrap();
    let added = out.find("lookups_per_cycle = 4").unwrap();
    assert!(added > l2 && added < out.find("[l1_cache]").unwrap());
    // Idempotent: the same fit again changes nothing.
    assert_eq!(rewrite(&out, &path, &fitted, "test targets").unwrap(), out);
}

#[test]
fn docs_list_every_parameter_and_target() {
    let doc = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/calibration.md"),
    )
    .expect("docs/calibration.md");
    for p in &PARAMS {
        assert!(
            doc.contains(&format!("| `{}` |", p.key)),
            "{} missing",
            p.key
        );
    }
    for t in &TARGETS {
        assert!(doc.contains(&format!("| `{}` |", t.id)), "{} missing", t.id);
    }
}
