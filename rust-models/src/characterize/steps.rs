//! Where a staircase steps: from the measured points alone, then matched to the reaches the
//! config implies.
//!
//! A rise is a point more than `max(3 cycles, 10 %)` above the one before; consecutive
//! rises are one step, from the plateau before the first to the point after the last. The
//! step sits at the first footprint whose cycles per load exceed the lower plateau by more
//! than half the step (the brief's definition, and Mei & Chu's reading of their curves).

use serde::Serialize;

/// One step of a staircase.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Step {
    /// The last footprint still below half the step, and the first above it.
    pub below: u64,
    pub at: u64,
    /// Cycles per load of the plateaus on either side.
    pub low: f64,
    pub high: f64,
}

fn rises(a: f64, b: f64) -> bool {
    b - a > (0.10 * a).max(3.0)
}

/// The steps of `points` (footprint, cycles per load), sorted by footprint.
pub fn detect(points: &[(u64, f64)]) -> Vec<Step> {
    let mut out = Vec::new();
    let mut i = 1;
    while i < points.len() {
        if !rises(points[i - 1].1, points[i].1) {
            i += 1;
            continue;
        }
        let start = i - 1;
        let mut end = i;
        while end + 1 < points.len() && rises(points[end].1, points[end + 1].1) {
            end += 1;
        }
        let (low, high) = (points[start].1, points[end].1);
        let half = low + (high - low) / 2.0;
        let k = (start + 1..=end)
            .find(|&k| points[k].1 > half)
            .unwrap_or(end);
        out.push(Step {
            below: points[k - 1].0,
            at: points[k].0,
            low,
            high,
        });
        i = end + 1;
    }
    out
}

/// The detected step nearest `reach` (in log distance to the step's midpoint), if any.
pub fn nearest(steps: &[Step], reach: u64) -> Option<Step> {
    let d = |s: &Step| {
        let mid = ((s.below as f64) * (s.at as f64)).sqrt();
        (mid / reach.max(1) as f64).ln().abs()
    };
    steps.iter().copied().min_by(|a, b| d(a).total_cmp(&d(b)))
}

/// The step brackets `reach`: it is within one sweep point of where the config puts it.
pub fn brackets(s: &Step, reach: u64) -> bool {
    s.below <= reach && reach < s.at
}
