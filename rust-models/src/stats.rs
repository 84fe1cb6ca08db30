//! The one geometric mean every table and figure uses.
//!
//! Rule for zeros, everywhere: a geometric mean is over the positive, finite values only.
//! A speed-up of 0 or infinity comes from a run with no cycles, which has no ratio to
//! average; it is left out rather than clamped (clamping to a tiny value would send the
//! mean towards 0 with one degenerate run). With no value left the mean is None, or 1
//! (no change) where a number is needed ([`geomean_or_one`]).

/// Geometric mean of the positive, finite values of `xs` (None if there are none).
pub fn geomean(xs: &[f64]) -> Option<f64> {
    let (sum, n) = xs
        .iter()
        .filter(|x| x.is_finite() && **x > 0.0)
        .fold((0.0, 0usize), |(s, n), x| (s + x.ln(), n + 1));
    (n > 0).then(|| (sum / n as f64).exp())
}

/// [`geomean`], or 1 (no change) when no value counts.
pub fn geomean_or_one(xs: &[f64]) -> f64 {
    geomean(xs).unwrap_or(1.0)
}

/// The value of `xs` farthest from 1 in log terms (the largest outlier of a set of
/// speed-ups) and the geometric mean of the others; with fewer than two counting values,
/// no outlier and the mean of all.
pub fn geomean_without_outlier(xs: &[f64]) -> (Option<usize>, f64) {
    let counts = |x: f64| x.is_finite() && x > 0.0;
    if xs.iter().filter(|x| counts(**x)).count() < 2 {
        return (None, geomean_or_one(xs));
    }
    let worst = (0..xs.len())
        .filter(|&i| counts(xs[i]))
        .max_by(|&a, &b| xs[a].ln().abs().total_cmp(&xs[b].ln().abs()));
    let rest: Vec<f64> = (0..xs.len())
        .filter(|&i| Some(i) != worst)
        .map(|i| xs[i])
        .collect();
    (worst, geomean_or_one(&rest))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zeros_and_infinities_are_left_out() {
        assert_eq!(geomean(&[2.0, 8.0]), Some(4.0));
        assert_eq!(geomean(&[2.0, 0.0, 8.0, f64::INFINITY]), Some(4.0));
        assert_eq!(geomean(&[0.0]), None);
        assert_eq!(geomean_or_one(&[]), 1.0);
    }

    #[test]
    fn the_outlier_is_the_farthest_from_one_either_way() {
        let (i, g) = geomean_without_outlier(&[2.0, 0.1, 8.0]);
        assert_eq!(i, Some(1), "0.1 is farther from 1 than 8 in log terms");
        assert!((g - 4.0).abs() < 1e-12);
        let (i, g) = geomean_without_outlier(&[3.0]);
        assert_eq!(i, None);
        assert!((g - 3.0).abs() < 1e-12);
    }
}
