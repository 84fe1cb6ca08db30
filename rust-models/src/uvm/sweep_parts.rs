//! The Forest sweep's per-run parts: what the tables need of one run ([`RunPart`]), stored
//! beside its metrics when jobs run as separate processes, and the rows built from them.

use serde::{Deserialize, Serialize};

use super::metrics::UvmMetrics;
use super::sweep::{SweepRow, POLICIES};
use crate::gpu::sweep::exact_f64;

/// What the tables need from one run. A sweep run as separate jobs (`--task-id`) stores it
/// next to the run's full metrics, and the merge builds the rows from it alone.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunPart {
    pub workload: String,
    pub policy: String,
    #[serde(with = "exact_f64")]
    pub oversubscription: f64,
    pub cycles: u64,
    pub far_faults: u64,
    #[serde(with = "exact_f64")]
    pub prefetched_unused_pct: f64,
    #[serde(with = "exact_f64")]
    pub thrash_multiple: f64,
    pub profiling_steps: u64,
    /// The class of each object, `name:CLASS` (`-`: unclassified), space-separated.
    pub classes: String,
}

impl RunPart {
    /// The part of a finished run.
    pub fn of(m: &UvmMetrics) -> RunPart {
        RunPart {
            workload: m.workload.clone(),
            policy: m.policy.clone(),
            oversubscription: m.oversubscription,
            cycles: m.cycles,
            far_faults: m.far_faults,
            prefetched_unused_pct: m.prefetched_unused_pct,
            thrash_multiple: m.thrash_multiple,
            profiling_steps: m.profiling_steps,
            classes: m
                .objects
                .iter()
                .map(|o| format!("{}:{}", o.name, o.class.as_deref().unwrap_or("-")))
                .collect::<Vec<_>>()
                .join(" "),
        }
    }
}

/// Why run parts do not make the rows of a sweep.
#[derive(Debug, thiserror::Error)]
pub enum PartsError {
    #[error("{0} runs are not whole (tbnp, forest, specforest, forest-lru, tbnp-aae) groups")]
    Incomplete(usize),
    #[error("run {index} is {found}, where the sweep's order has {expected}")]
    OutOfOrder {
        index: usize,
        expected: String,
        found: String,
    },
}

pub(super) fn row_of(c: &[RunPart]) -> SweepRow {
    let (t, f, s, l, a) = (&c[0], &c[1], &c[2], &c[3], &c[4]);
    let over = |x: &RunPart| t.cycles as f64 / x.cycles.max(1) as f64;
    SweepRow {
        workload: t.workload.clone(),
        oversubscription: t.oversubscription,
        tbnp_cycles: t.cycles,
        forest_cycles: f.cycles,
        specforest_cycles: s.cycles,
        forest_lru_cycles: l.cycles,
        tbnp_aae_cycles: a.cycles,
        forest_speedup: over(f),
        specforest_speedup: over(s),
        forest_lru_speedup: over(l),
        tbnp_aae_speedup: over(a),
        far_faults: [t, f, s, l, a].map(|x| x.far_faults),
        unused_prefetch_pct: [t, f, s, l, a].map(|x| x.prefetched_unused_pct),
        thrash_multiple: [t, f, s, l, a].map(|x| x.thrash_multiple),
        profiling_steps_forest: f.profiling_steps,
        profiling_steps_specforest: s.profiling_steps,
        profiling_steps_forest_lru: l.profiling_steps,
        classes: f.classes.clone(),
    }
}

/// The rows of a sweep from its runs' parts in job order (see [`forest_jobs`]).
pub fn rows_of(parts: &[RunPart]) -> Result<Vec<SweepRow>, PartsError> {
    let n = POLICIES.len();
    if !parts.len().is_multiple_of(n) {
        return Err(PartsError::Incomplete(parts.len()));
    }
    let name = |w: &str, o: f64, p: &str| format!("{w} at {o} under {p}");
    let mut rows = Vec::new();
    for (k, c) in parts.chunks(n).enumerate() {
        for (i, (part, policy)) in c.iter().zip(POLICIES).enumerate() {
            let (w, o) = (&c[0].workload, c[0].oversubscription);
            if part.policy != policy.name()
                || part.workload != *w
                || part.oversubscription.to_bits() != o.to_bits()
            {
                let found = name(&part.workload, part.oversubscription, &part.policy);
                let expected = name(w, o, policy.name());
                let index = n * k + i;
                return Err(PartsError::OutOfOrder {
                    index,
                    expected,
                    found,
                });
            }
        }
        rows.push(row_of(c));
    }
    Ok(rows)
}
