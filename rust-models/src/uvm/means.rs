//! What a Forest sweep's geometric mean is made of (issue #38): each workload's share of
//! the log-geomean of a speed-up, and the geomean without the workloads where TBNp
//! thrashes.
//!
//! - **Share**: the geomean of n speed-ups is exp(Σ ln sᵢ / n), so workload i contributes
//!   ln sᵢ / Σ ln s to its log. Shares sum to 1; a share above 1 (or below 0) means the
//!   other workloads pull the mean the other way. With Σ ln s = 0 (every speed-up 1, or
//!   gains and losses that cancel) there is no mean to share: every share is `None`.
//! - **TBNp thrashes** when the pages it migrates in again after evicting them exceed
//!   [`THRASH_LIMIT`] × the footprint (`UvmMetrics::thrash_multiple`, the Forest paper's
//!   "repeatedly thrashed pages over the footprint", its Figure 6 metric). Such a workload
//!   measures TBNp's collapse more than Forest's trees, so the sweep gives the geomean
//!   without it beside the full one.

use serde::Serialize;

/// TBNp's thrashed pages ÷ footprint above which a workload is left out of the second
/// geomean.
pub const THRASH_LIMIT: f64 = 10.0;

/// Whether TBNp thrashes beyond [`THRASH_LIMIT`] × the footprint, from its
/// `thrash_multiple` (thrashed pages ÷ footprint pages).
pub fn tbnp_thrashes(tbnp_thrash_multiple: f64) -> bool {
    tbnp_thrash_multiple > THRASH_LIMIT
}

/// Each speed-up's share of the log of their geometric mean: ln sᵢ / Σ ln s (None for
/// all when the sum is 0 or a speed-up is not positive).
pub fn log_shares(speedups: &[f64]) -> Vec<Option<f64>> {
    let logs: Vec<f64> = speedups.iter().map(|s| s.ln()).collect();
    let total: f64 = logs.iter().sum();
    if total == 0.0 || !total.is_finite() {
        return vec![None; speedups.len()];
    }
    logs.iter().map(|l| Some(l / total)).collect()
}

/// One policy's geomean at one oversubscription, whole and without the thrashing
/// workloads.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GeomeanParts {
    /// Per workload, in row order: (workload, share of the log-geomean).
    pub shares: Vec<(String, Option<f64>)>,
    /// The workloads where TBNp thrashes beyond [`THRASH_LIMIT`] × the footprint.
    pub tbnp_thrashing: Vec<String>,
    pub geomean: f64,
    /// The geomean over the other workloads (1 when none is left).
    pub geomean_without_thrashing: f64,
}

/// The parts of the geomean of `rows`: (workload, speed-up, TBNp's thrash multiple).
pub fn geomean_parts(rows: &[(&str, f64, f64)]) -> GeomeanParts {
    let speedups: Vec<f64> = rows.iter().map(|r| r.1).collect();
    let kept: Vec<f64> = rows
        .iter()
        .filter(|r| !tbnp_thrashes(r.2))
        .map(|r| r.1)
        .collect();
    GeomeanParts {
        shares: rows
            .iter()
            .map(|r| r.0.to_string())
            .zip(log_shares(&speedups))
            .collect(),
        tbnp_thrashing: rows
            .iter()
            .filter(|r| tbnp_thrashes(r.2))
            .map(|r| r.0.to_string())
            .collect(),
        geomean: crate::stats::geomean_or_one(&speedups),
        geomean_without_thrashing: crate::stats::geomean_or_one(&kept),
    }
}

/// A share as the tables print it: a signed percentage, `-` without a mean.
pub fn share_cell(share: Option<f64>) -> String {
    share.map_or_else(|| "-".to_string(), |s| format!("{:+.1}%", s * 100.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_sum_to_one_and_follow_the_logs() {
        // ln 4 = 2 ln 2 and ln 0.5 = -ln 2: the logs are 2, 1, -1 (× ln 2), sum 2.
        let rows = [("a", 4.0, 0.0), ("b", 2.0, 0.0), ("c", 0.5, 0.0)];
        let p = geomean_parts(&rows);
        let s: Vec<f64> = p.shares.iter().map(|x| x.1.unwrap()).collect();
        assert!((s[0] - 1.0).abs() < 1e-12 && (s[1] - 0.5).abs() < 1e-12);
        assert!((s[2] + 0.5).abs() < 1e-12);
        assert!((s.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        assert!((p.geomean - 4f64.cbrt()).abs() < 1e-12);
        assert_eq!(share_cell(p.shares[2].1), "-50.0%");
    }

    #[test]
    fn thrashing_workloads_leave_the_second_geomean_only() {
        // TBNp thrashes 12× the footprint on `a` (left out), exactly 10× on `b` (kept).
        let rows = [("a", 8.0, 12.0), ("b", 2.0, 10.0), ("c", 0.5, 3.0)];
        let p = geomean_parts(&rows);
        assert_eq!(p.tbnp_thrashing, vec!["a".to_string()]);
        assert!((p.geomean - 2.0).abs() < 1e-12, "{}", p.geomean);
        assert!((p.geomean_without_thrashing - 1.0).abs() < 1e-12);
        assert_eq!(p.shares.len(), 3);
    }

    #[test]
    fn no_mean_to_share_when_the_logs_cancel() {
        let p = geomean_parts(&[("a", 2.0, 0.0), ("b", 0.5, 0.0)]);
        assert!(p.shares.iter().all(|s| s.1.is_none()));
        assert_eq!(share_cell(None), "-");
        // Every workload thrashing: nothing left, the empty geomean is 1.
        let p = geomean_parts(&[("a", 3.0, 11.0)]);
        assert_eq!(p.geomean_without_thrashing, 1.0);
    }
}
