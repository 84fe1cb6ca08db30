//! What a CLAP run is expected to cost, so the pool starts the longest first
//! ([`crate::pool`]): its workload's warp memory instructions, weighted by its policy.
//! Only the order of the runs depends on it.

use mcmvm_models::driver::PolicyKind;
use rayon::prelude::*;

/// Host time per warp memory instruction against the other policies: S-2MB and S-4KB
/// took 1.28x and 1.31x the mean of the rest (0.97-1.05) in `sweep --suite clap --scale
/// 0.1`.
fn policy_weight(p: PolicyKind) -> f64 {
    match p {
        PolicyKind::S4k | PolicyKind::S2m => 1.3,
        _ => 1.0,
    }
}

/// The warp memory instructions of each workload at each scale the sweep runs it at.
pub(crate) struct Costs {
    counts: Vec<(String, u64, f64)>,
}

impl Costs {
    /// Count `wanted`'s (workload, scale) pairs, each built once, in parallel. A workload
    /// that cannot be built costs 1 (its run reports the error).
    pub(crate) fn new(wanted: &[(String, f64)], seed: u64) -> Costs {
        let mut pairs: Vec<(String, f64)> = Vec::new();
        for (w, s) in wanted {
            if !pairs.iter().any(|(v, t)| v == w && t == s) {
                pairs.push((w.clone(), *s));
            }
        }
        let counts = pairs
            .par_iter()
            .map(|(w, scale)| {
                let n = mcmvm_models::workload::by_name(w, *scale, seed)
                    .map_or(1.0, |wl| wl.instr_count() as f64);
                (w.clone(), scale.to_bits(), n)
            })
            .collect();
        Costs { counts }
    }

    /// The expected cost of `workload` at `scale` under `policy`.
    pub(crate) fn of(&self, workload: &str, scale: f64, policy: PolicyKind) -> f64 {
        let n = self
            .counts
            .iter()
            .find(|(w, s, _)| w == workload && *s == scale.to_bits())
            .map_or(1.0, |c| c.2);
        n * policy_weight(policy)
    }
}
