//! The baseline targets of the fit: figures the CLAP paper reports (or that follow from
//! its figures) about its *baselines* alone — never CLAP against them, which is what the
//! model predicts. Each says how the paper's value is derived, how ours is computed from
//! runs, and where the seed (`/work/shared/seeds/clap-chiplet-locality-paper.zh.txt`)
//! gives it. [`UNFITTED`] lists the baseline figures the paper reports that cannot enter
//! the fit, and why.

use crate::driver::PolicyKind;
use crate::gpu::sweep::{geomean, speedup, RunSummary};
use serde::Serialize;

/// One baseline target: the geometric mean over the workloads of `policy`'s speed-up over
/// `base` (base cycles / policy cycles).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Target {
    /// Short name used in tables, CSV columns and provenance comments.
    pub id: &'static str,
    /// What the figure is.
    pub figure: &'static str,
    /// The paper's speed-up as a ratio (1.247 = +24.7 %).
    pub paper: f64,
    /// How `paper` follows from the paper's text.
    pub derivation: &'static str,
    /// Where the seed gives the figures it is derived from.
    pub section: &'static str,
    pub policy: PolicyKind,
    pub base: PolicyKind,
    /// Weight of its term in the residual.
    pub weight: f64,
}

/// CLAP §5.1: +17.5 % over S-64KB, +19.2 % over S-2MB, 5.78 % below ideal.
const CLAP_OVER_S64K: f64 = 1.175;
const CLAP_OVER_S2M: f64 = 1.192;
const CLAP_BELOW_IDEAL: f64 = 0.0578;

/// The targets of the fit. Both come from the §5.1 geometric means; ideal and S-64KB /
/// S-64KB and S-2MB are baselines, so the ratios are baseline-only quantities even though
/// the paper states them through CLAP's figures (its per-workload bars are not in the
/// seed). Equal weights: the two figures are the paper's two headline baseline ratios.
pub const TARGETS: [Target; 2] = [
    Target {
        id: "ideal_over_s64k",
        figure: "ideal over S-64KB (geomean speed-up)",
        paper: CLAP_OVER_S64K / (1.0 - CLAP_BELOW_IDEAL),
        derivation: "1.175 / (1 - 0.0578) = 1.2471: CLAP is +17.5 % over S-64KB and 5.78 % \
                     below ideal (read as 1 - clap/ideal, as clap_tables.rs does; read as \
                     ideal/clap - 1 it would be 1.175 x 1.0578 = 1.2429)",
        section: "§5.1 (seed: A4 experimental results, 5.1 performance)",
        policy: PolicyKind::Ideal,
        base: PolicyKind::S64k,
        weight: 1.0,
    },
    Target {
        id: "s64k_over_s2m",
        figure: "S-64KB over S-2MB (geomean speed-up)",
        paper: CLAP_OVER_S2M / CLAP_OVER_S64K,
        derivation: "1.192 / 1.175 = 1.0145: CLAP is +19.2 % over S-2MB and +17.5 % over \
                     S-64KB on the same workloads, so S-64KB is 1.45 % faster than S-2MB \
                     (exact only if both geomeans are over the same set, as §5.1 implies)",
        section: "§5.1 (seed: A4 experimental results, 5.1 performance)",
        policy: PolicyKind::S64k,
        base: PolicyKind::S2m,
        weight: 1.0,
    },
];

/// A baseline figure of the paper that does not enter the fit.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Unfitted {
    pub figure: &'static str,
    pub paper: &'static str,
    pub why: &'static str,
}

/// The paper's other baseline figures, each with why it is not a target (yet).
pub const UNFITTED: [Unfitted; 6] = [
    Unfitted {
        figure: "L2 TLB MPKI per workload under 4 KB / 64 KB / 2 MB pages",
        paper: "Table 2",
        why: "the seed has Table 2's caption only, not its numbers",
    },
    Unfitted {
        figure: "S-2MB's (and S-4KB's) remote-access ratio per workload",
        paper: "Fig. 1, 6, 18 (lines)",
        why: "plotted only; the text gives no number",
    },
    Unfitted {
        figure: "8 chiplets: S-64KB over S-2MB",
        paper:
            "1.215 / 1.133 = +7.24 % (§5.2, Fig. 22: CLAP +13.3 % over S-64KB, +21.5 % over S-2MB)",
        why: "baseline-only and derivable; needs every point run on mcm-8chiplet.toml too \
              (twice the cost), left for a later fit",
    },
    Unfitted {
        figure: "SA-64KB over SA-2MB",
        paper: "1.161 / 1.188 = -2.3 % (§5.2, Fig. 19)",
        why: "the model has no static-analysis (SA) placement",
    },
    Unfitted {
        figure: "NUMA-aware interleaving over naive interleaving",
        paper: "+42.0 %, and 0.6 % without NUMA optimisation (§2.6)",
        why: "the model has no naive (sub-page, all-chiplet) interleaving",
    },
    Unfitted {
        figure: "GRIT, ideal C-NUMA, MGvm, F-Barre over S-64KB",
        paper: "1.175/1.171, 1.175/1.119, 1.175/1.248, 1.175/1.138 (§5.1)",
        why: "other mechanisms, not baselines of the model's timing: fitting to them would \
              fit our simplified versions of those schemes (cnuma's epoch, mgvm's placement)",
    },
];

impl Target {
    /// Ours: the geomean over `workloads` of `policy`'s speed-up over `base` in `runs`
    /// (None when a workload lacks either run).
    pub fn measure(&self, runs: &[RunSummary], workloads: &[String]) -> Option<f64> {
        let xs: Option<Vec<f64>> = workloads
            .iter()
            .map(|w| speedup(runs, w, self.policy.name(), self.base.name()))
            .collect();
        geomean(&xs?)
    }

    /// This target's residual term for a measured speed-up: weight x ln(ours / paper)^2.
    pub fn term(&self, ours: f64) -> f64 {
        self.weight * (ours / self.paper).ln().powi(2)
    }
}

/// The policies the targets need, each once, in first-use order.
pub fn policies(targets: &[Target]) -> Vec<PolicyKind> {
    let mut ps = Vec::new();
    for t in targets {
        for p in [t.base, t.policy] {
            if !ps.contains(&p) {
                ps.push(p);
            }
        }
    }
    ps
}
