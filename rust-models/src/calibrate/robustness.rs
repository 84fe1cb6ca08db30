//! A range on every headline (issue #38 item 4): CLAP's figures against its baselines,
//! run over the plausible box of the unknown parameters ([`super::params`]; its corners or
//! a Latin hypercube, [`super::design`]) instead of at the shipped values only. These are
//! the mechanism's *predictions*: they are measured over the box, never fitted.
//!
//! Each headline is a [`Target`] (a geomean speed-up of one policy over another) with the
//! paper's figure; a point's figure comes from the same plan and runner as the fit
//! ([`super::fit::Plan`]). The range is the lowest and highest figure over the points; a
//! headline whose range holds 1 (a gain at one end of the box, a loss at the other) is
//! flagged: its sign is not the model's to tell.

use super::fit::{Plan, PointResult};
use super::targets::Target;
use crate::driver::PolicyKind;
use serde::Serialize;

/// CLAP §5.1's headline figures, as speed-ups (clap over ideal = 1 − 0.0578).
pub const HEADLINES: [Target; 3] = [
    Target {
        id: "clap_over_s64k",
        figure: "CLAP over S-64KB (geomean speed-up)",
        paper: 1.175,
        derivation: "CLAP +17.5 % over S-64KB",
        section: "§5.1",
        policy: PolicyKind::Clap,
        base: PolicyKind::S64k,
        weight: 1.0,
    },
    Target {
        id: "clap_over_s2m",
        figure: "CLAP over S-2MB (geomean speed-up)",
        paper: 1.192,
        derivation: "CLAP +19.2 % over S-2MB",
        section: "§5.1",
        policy: PolicyKind::Clap,
        base: PolicyKind::S2m,
        weight: 1.0,
    },
    Target {
        id: "clap_over_ideal",
        figure: "CLAP over ideal (geomean speed-up; 1 − the distance from ideal)",
        paper: 1.0 - 0.0578,
        derivation: "CLAP 5.78 % below ideal, read as 1 - clap/ideal",
        section: "§5.1",
        policy: PolicyKind::Clap,
        base: PolicyKind::Ideal,
        weight: 1.0,
    },
];

/// One headline over the box.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Range {
    pub id: &'static str,
    pub paper: f64,
    /// At the config as given (point 0).
    pub config: Option<f64>,
    pub low: Option<f64>,
    pub high: Option<f64>,
    /// The range holds 1: a gain at one end of the box, a loss at the other.
    pub sign_flips: bool,
}

/// Each of the plan's targets over its points (`results` from [`Plan::evaluate`]).
pub fn ranges(plan: &Plan, results: &[PointResult]) -> Vec<Range> {
    ranges_for(&plan.targets, results)
}

/// The ranges as text: each headline as value [low, high] beside the paper's.
pub fn text(ranges: &[Range], points: usize) -> String {
    let pct = |x: Option<f64>| x.map_or("-".to_string(), |x| format!("{:+.1}%", 100.0 * (x - 1.0)));
    let mut s = format!(
        "headline over the plausible box ({points} points; a prediction, never fitted)\n{:<18} {:>9} {:>9}  {:<22} {}\n",
        "figure", "paper", "config", "[low, high]", "sign"
    );
    for r in ranges {
        s.push_str(&format!(
            "{:<18} {:>9} {:>9}  {:<22} {}\n",
            r.id,
            pct(Some(r.paper)),
            pct(r.config),
            format!("[{}, {}]", pct(r.low), pct(r.high)),
            if r.sign_flips {
                "FLIPS inside the box"
            } else {
                "holds"
            }
        ));
    }
    s
}

/// [`ranges`] for `targets` (the plan's, in order).
pub fn ranges_for(targets: &[Target], results: &[PointResult]) -> Vec<Range> {
    targets
        .iter()
        .enumerate()
        .map(|(k, t)| {
            let at = |r: &PointResult| r.figures.get(k).copied().flatten();
            let xs: Vec<f64> = results.iter().filter_map(at).collect();
            let low = xs.iter().copied().reduce(f64::min);
            let high = xs.iter().copied().reduce(f64::max);
            Range {
                id: t.id,
                paper: t.paper,
                config: results.iter().find(|r| r.point == 0).and_then(at),
                low,
                high,
                sign_flips: matches!((low, high), (Some(l), Some(h)) if l < 1.0 && h > 1.0),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calibrate::fit::PointResult;

    fn result(point: usize, figures: &[f64]) -> PointResult {
        PointResult {
            point,
            figures: figures.iter().map(|&x| Some(x)).collect(),
            terms: vec![None; figures.len()],
            residual: None,
        }
    }

    #[test]
    fn a_range_holding_one_is_flagged_and_the_config_is_point_0() {
        let results = [
            result(0, &[1.02, 1.30, 0.95]),
            result(1, &[0.97, 1.10, 0.90]),
            result(2, &[1.05, 1.40, 0.99]),
        ];
        let r = ranges_for(&HEADLINES, &results);
        assert_eq!(r[0].config, Some(1.02));
        assert_eq!((r[0].low, r[0].high), (Some(0.97), Some(1.05)));
        assert!(r[0].sign_flips, "a loss at one end, a gain at the other");
        assert!(!r[1].sign_flips && !r[2].sign_flips);
        let t = text(&r, 3);
        assert!(t.contains("[-3.0%, +5.0%]") && t.contains("FLIPS"), "{t}");
    }
}
