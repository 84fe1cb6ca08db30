//! The Forest study's oversubscription curve from `forest.csv`: the geometric mean of each
//! policy's speed-up over TBNp at every oversubscription ratio, over all workloads and
//! without each policy's largest outlier (the speed-up farthest from 1 in log terms), as
//! `mcmvm sweep --suite forest` prints it.

use crate::chart::{self, Bars};
use crate::forest::{geomean, has_ablations, oversubs, speedup_series, Row};
use crate::{Figure, Outcome, ReportError};
use std::path::Path;

/// The geometric mean of `xs` without the value farthest from 1 in log terms (all of them
/// with fewer than two), as the sweep computes it (`mcmvm_models::stats`).
pub fn geomean_without_outlier(xs: &[f64]) -> f64 {
    mcmvm_models::stats::geomean_without_outlier(xs).1
}

/// values[panel][oversub][series]: the geomean of each series' speed-ups per
/// oversubscription of `os`, over every workload (panel 0) and without the largest outlier
/// (panel 1).
fn curve_values(rs: &[Row], os: &[String], n_series: usize) -> [Vec<Vec<Option<f64>>>; 2] {
    let abl = has_ablations(rs);
    let mut values: [Vec<Vec<Option<f64>>>; 2] = [Vec::new(), Vec::new()];
    for o in os {
        let mine: Vec<&Row> = rs.iter().filter(|r| &r.oversub == o).collect();
        let per: Vec<Vec<f64>> = (0..n_series)
            .map(|i| mine.iter().map(|r| r.speedups(abl)[i]).collect())
            .collect();
        values[0].push(per.iter().map(|xs| Some(geomean(xs))).collect());
        values[1].push(
            per.iter()
                .map(|xs| Some(geomean_without_outlier(xs)))
                .collect(),
        );
    }
    values
}

/// `sub/fig-curve.svg` when the sweep has more than one oversubscription ratio (None
/// otherwise): one panel over every workload, one without each policy's largest outlier.
pub fn figure(
    out: &Path,
    sub: &str,
    rs: &[Row],
    done: &mut Outcome,
) -> Result<Option<Figure>, ReportError> {
    let os = oversubs(rs);
    if os.len() < 2 {
        return Ok(None);
    }
    let series = speedup_series(rs);
    let values = curve_values(rs, &os, series.len());
    let rel = format!("{sub}/fig-curve.svg");
    let groups: Vec<String> = os.clone();
    let panel_h = 380u32;
    let width = (220 + 40 * series.len() as u32 * groups.len() as u32).max(900);
    let all: Vec<usize> = (0..groups.len()).collect();
    let titles = [
        "geometric mean over every workload",
        "without each policy's largest outlier",
    ];
    crate::write_svg(
        out,
        &rel,
        (width, 60 + 2 * panel_h),
        |root| {
            let title = "Forest study: speed-up over TBNp by oversubscription";
            let mut rest = chart::title_and_legend(root, title, &series)?;
            for (title, vals) in titles.iter().zip(&values) {
                let (panel, below) = rest.split_vertically(panel_h);
                rest = below;
                chart::bars(
                    &panel,
                    &Bars {
                        title,
                        y_desc: "geomean speed-up over TBNp",
                        groups: &groups,
                        series: &series,
                        values: vals,
                        reference: Some(1.0),
                        y_max: None,
                        log: chart::wide_spread(vals),
                        value_labels: &all,
                        fmt: |v| format!("{v:.2}"),
                    },
                )?;
            }
            Ok(())
        },
        done,
    )?;
    Ok(Some(Figure {
        rel,
        caption: "The oversubscription curve: geometric mean speed-up over TBNp per \
                  oversubscription ratio and policy, over every workload (top) and without \
                  each policy's largest outlier (bottom)."
            .into(),
    }))
}

#[cfg(test)]
mod tests {
    use super::geomean_without_outlier;

    #[test]
    fn drops_the_speedup_farthest_from_one() {
        let g = geomean_without_outlier(&[2.0, 0.1, 4.0]);
        assert!((g - 8f64.sqrt()).abs() < 1e-12);
        assert!((geomean_without_outlier(&[3.0]) - 3.0).abs() < 1e-12);
    }
}
