//! The points a calibration visits: a two-level full factorial (`--grid small` over the
//! primary parameters, `--grid full` over all of them) or a seeded Latin hypercube over
//! the whole box (`--points N`). Point 0 is always the configuration as given (no
//! overrides), so every fit reports the residual of the values it started from.

use super::params::Param;
use super::CalibrateError;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

/// How to choose the points.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Design {
    /// Every combination of `low` and `high` of the primary parameters.
    Small,
    /// Every combination of `low` and `high` of every parameter (the box's corners).
    Full,
    /// `points` Latin-hypercube points over every parameter, drawn with `seed`.
    Latin { points: usize, seed: u64 },
}

/// One point: the value of each varied parameter (by index into the parameter table).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Point {
    pub label: String,
    /// (parameter index, value); parameters not listed keep the config's value.
    pub settings: Vec<(usize, f64)>,
}

impl Point {
    /// The `--set KEY=VALUE` overrides of this point.
    pub fn overrides(&self, params: &[Param]) -> Vec<String> {
        self.settings
            .iter()
            .map(|&(i, v)| params[i].set(v))
            .collect()
    }

    /// The value this point gives parameter `i`, if it sets it.
    pub fn value(&self, i: usize) -> Option<f64> {
        self.settings.iter().find(|(j, _)| *j == i).map(|(_, v)| *v)
    }
}

/// Largest design `points` builds: 2^11 corners of the full box fit, anything beyond is a
/// typo (a run is tens of simulations a point).
pub const MAX_POINTS: usize = 4096;

/// The design's points, the config's own point first.
pub fn points(design: Design, params: &[Param]) -> Result<Vec<Point>, CalibrateError> {
    let varied: Vec<usize> = match design {
        Design::Small => (0..params.len()).filter(|&i| params[i].primary).collect(),
        Design::Full | Design::Latin { .. } => (0..params.len()).collect(),
    };
    let mut pts = vec![Point {
        label: "config".into(),
        settings: Vec::new(),
    }];
    match design {
        Design::Small | Design::Full => {
            let n = 1usize
                .checked_shl(varied.len() as u32)
                .filter(|&n| n <= MAX_POINTS)
                .ok_or(CalibrateError::TooManyPoints {
                    points: 1u128 << varied.len().min(127),
                    max: MAX_POINTS,
                })?;
            for corner in 0..n {
                let settings = varied
                    .iter()
                    .enumerate()
                    .map(|(bit, &i)| {
                        let p = &params[i];
                        (
                            i,
                            if corner >> bit & 1 == 0 {
                                p.low
                            } else {
                                p.high
                            },
                        )
                    })
                    .collect();
                pts.push(Point {
                    label: format!("corner-{corner}"),
                    settings,
                });
            }
        }
        Design::Latin { points, seed } => {
            if points == 0 || points > MAX_POINTS {
                return Err(CalibrateError::TooManyPoints {
                    points: points as u128,
                    max: MAX_POINTS,
                });
            }
            pts.extend(latin(points, seed, params, &varied));
        }
    }
    Ok(pts)
}

/// `n` Latin-hypercube points: each parameter's range cut into `n` strata, each stratum
/// used by exactly one point, at a uniform position inside it.
fn latin(n: usize, seed: u64, params: &[Param], varied: &[usize]) -> Vec<Point> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut columns: Vec<Vec<f64>> = Vec::new();
    for _ in varied {
        let mut strata: Vec<usize> = (0..n).collect();
        strata.shuffle(&mut rng);
        columns.push(
            strata
                .into_iter()
                .map(|s| (s as f64 + rng.gen::<f64>()) / n as f64)
                .collect(),
        );
    }
    (0..n)
        .map(|k| Point {
            label: format!("lhs-{k}"),
            settings: varied
                .iter()
                .zip(&columns)
                .map(|(&i, col)| (i, params[i].at(col[k])))
                .collect(),
        })
        .collect()
}
