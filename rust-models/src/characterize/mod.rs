//! # Microbenchmarks through the GPU model (`mcmvm characterize`)
//!
//! The model measured the way GPU microbenchmarking studies measure real GPUs (Wong et al.
//! 2010; Mei & Chu 2016; Jia et al. 2018): dependent pointer chases whose mean cycles per
//! load form a staircase over the footprint, and floods of independent loads whose rates
//! are throughputs. Only the model's public API is used: workloads ([`bench`]) run through
//! [`crate::gpu::simulate`], and figures are read from the [`RunReport`].
//!
//! 1. [`plan`] lists the benchmarks for a config: the data-cache staircase (stride 128 B),
//!    one TLB staircase per page class (stride one page), page walks with and without
//!    page-walk-cache hits, local against remote chases, and the floods.
//! 2. [`measure`] runs one (they are independent: the CLI runs them in parallel). A chase's
//!    figure is the measured kernel's cycles over its loads — the warm-up round is a kernel
//!    of its own, excluded. A flood runs twice, with and without its measured kernel, and
//!    the difference of the counters is the measured kernel's.
//! 3. [`expected`] says what the config implies for each; [`steps`] finds the staircase's
//!    steps; [`table`] prints both side by side.

mod bench;
pub mod expected;
pub mod steps;
pub mod svg;
pub mod table;

pub use bench::{ChaseSpec, ChaseWorkload, FloodSpec, FloodWorkload, Pattern, Scope, Shape};
pub use expected::{ChaseShape, Implied, PageClass, Path};

use crate::driver::PolicyKind;
use crate::gpu::config::{GpuConfig, LINE_BYTES};
use crate::gpu::{simulate, GpuError, RunReport, RunSpec};
use serde::Serialize;

/// Why a characterization could not run.
#[derive(Debug, thiserror::Error)]
pub enum CharacterizeError {
    #[error("policy `{0}`: characterize places its data with s4k, s64k or ideal")]
    Policy(PolicyKind),
    #[error("{what}")]
    Run {
        what: String,
        /// Boxed: a `GpuError` is large beside the other variants.
        #[source]
        source: Box<GpuError>,
    },
    #[error("{what}: the run reported {got} kernels, expected {want}")]
    Kernels {
        what: String,
        got: usize,
        want: usize,
    },
}

/// Which table a benchmark belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Section {
    /// Stride 128 B over the footprint, under the data policy.
    DataCache,
    /// Stride one page of the class.
    Tlb(PageClass),
    /// Walks with and without page-walk-cache hits.
    Walk,
    /// The same chase on data homed on the SM's chiplet and on another.
    LocalRemote,
    /// Floods.
    Throughput,
}

/// One benchmark of the plan.
#[derive(Debug, Clone, Serialize)]
pub struct Bench {
    pub section: Section,
    /// What it is, one line.
    pub name: String,
    pub policy: PolicyKind,
    pub kind: Kind,
}

#[derive(Debug, Clone, Serialize)]
pub enum Kind {
    Chase { spec: ChaseSpec, shape: ChaseShape },
    Flood(FloodSpec),
}

/// What one benchmark measured.
#[derive(Debug, Clone, Serialize)]
pub struct Measured {
    pub bench: Bench,
    /// Chases: mean cycles per load of the measured kernel, and the path the config
    /// predicts.
    pub cycles_per_load: Option<f64>,
    pub expected: Option<Path>,
    /// Floods: the measured kernel's cycles and counters.
    pub flood: Option<FloodFigures>,
}

/// A flood's measured kernel, from the difference of two runs' counters.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct FloodFigures {
    pub cycles: u64,
    pub lines: u64,
    pub translations: u64,
    /// Lookups of the chiplets' L2 TLBs (the L1 misses).
    pub l2_lookups: u64,
    pub walks: u64,
    pub active_sms: u32,
    pub active_chiplets: u32,
    pub remote_ratio: f64,
}

/// Sweep points from `lo` to `hi` (inclusive): powers of two times `lo` and the points
/// halfway between them (×1.5), so a power-of-two reach is a point and the next is 1.5×.
pub fn points(lo: u64, hi: u64) -> Vec<u64> {
    let mut v = Vec::new();
    let mut p = lo.max(1);
    while p <= hi {
        v.push(p);
        if p >= 2 && p + p / 2 <= hi {
            v.push(p + p / 2);
        }
        p *= 2;
    }
    v
}

/// Measured loads per chase at least (a short chase is repeated this often).
const MIN_LOADS: u64 = 512;

fn chase(class: PageClass, stride: u64, loads: u64, remote: bool) -> Kind {
    let unit = stride.min(class.bytes());
    let spread_lines = (unit / LINE_BYTES).max(1);
    let home = if remote { 1 } else { 0 };
    let spec = ChaseSpec {
        stride,
        loads,
        rounds: MIN_LOADS.div_ceil(loads).clamp(1, 64) as u32,
        spread_lines,
        home,
        runner: 0,
    };
    let footprint = spec.footprint();
    let shape = ChaseShape {
        class,
        pages: footprint.div_ceil(class.bytes()),
        lines: loads,
        regions: footprint.div_ceil(crate::addr::PAGE_2M),
        gigs: expected::gigs(footprint),
        remote,
    };
    Kind::Chase { spec, shape }
}

/// Every benchmark for `cfg`; the data-side sections place with `policy`.
pub fn plan(cfg: &GpuConfig, policy: PolicyKind) -> Result<Vec<Bench>, CharacterizeError> {
    let data = PageClass::of_policy(policy).ok_or(CharacterizeError::Policy(policy))?;
    let mut out = Vec::new();
    let b = |section, name: String, policy, kind| Bench {
        section,
        name,
        policy,
        kind,
    };
    for f in points(4096, 4 * cfg.l2_cache.bytes) {
        let kind = chase(data, LINE_BYTES, f / LINE_BYTES, false);
        out.push(b(Section::DataCache, format!("{f} B"), policy, kind));
    }
    for class in PageClass::ALL {
        let top = 2 * class.entries(&cfg.l2_tlb);
        for pages in points(2, top) {
            let kind = chase(class, class.bytes(), pages, false);
            let name = format!("{pages} pages");
            out.push(b(Section::Tlb(class), name, class.policy(), kind));
        }
    }
    // 4 KB pages beyond the L2 TLB: one page per 4 KB keeps the walks in a few PDB0
    // entries (PWC hits), one page per 2 MB needs a PDB0 entry per walk (misses).
    let pages = 2 * PageClass::K4.entries(&cfg.l2_tlb);
    for (stride, what) in [
        (4096, "PWC hits"),
        (crate::addr::PAGE_2M, "PDB0 PWC misses"),
    ] {
        let kind = chase(PageClass::K4, stride, pages, false);
        let name = format!("walk, {what}: {pages} pages, stride {stride} B");
        out.push(b(Section::Walk, name, PolicyKind::S4k, kind));
    }
    if cfg.gpu.chiplets > 1 {
        let in_l2 = (4 * cfg.l1_cache.bytes).min(cfg.l2_cache.bytes / 2);
        for (f, level) in [(in_l2, "L2$"), (4 * cfg.l2_cache.bytes, "DRAM")] {
            for remote in [false, true] {
                let kind = chase(data, LINE_BYTES, f / LINE_BYTES, remote);
                let place = if remote { "remote" } else { "local" };
                let name = format!("{level} {place}: {f} B");
                out.push(b(Section::LocalRemote, name, policy, kind));
            }
        }
    }
    out.extend(floods(cfg, policy));
    Ok(out)
}

fn floods(cfg: &GpuConfig, policy: PolicyKind) -> Vec<Bench> {
    let mut out = Vec::new();
    // 16 × the L2 TLB's 4 KB entries: nearly every lane walks.
    let pages = 16 * PageClass::K4.entries(&cfg.l2_tlb);
    for scope in [Scope::OneSm, Scope::OneChiplet, Scope::AllChiplets] {
        let spec = FloodSpec {
            pattern: Pattern::Gather { pages, per_warp: 4 },
            scope,
        };
        out.push(Bench {
            section: Section::Throughput,
            name: format!(
                "translations, gathers over {pages} 4KB pages, {}",
                scope.label()
            ),
            policy: PolicyKind::S4k,
            kind: Kind::Flood(spec),
        });
    }
    let remotes: &[bool] = if cfg.gpu.chiplets > 1 {
        &[false, true]
    } else {
        &[false]
    };
    for &remote in remotes {
        let spec = FloodSpec {
            pattern: Pattern::Stream {
                per_warp: 16,
                remote,
            },
            scope: Scope::AllChiplets,
        };
        let what = if remote {
            "ring, every load remote"
        } else {
            "HBM, every load local"
        };
        out.push(Bench {
            section: Section::Throughput,
            name: format!("{what}, coalesced streams, all chiplets"),
            policy,
            kind: Kind::Flood(spec),
        });
    }
    out
}

fn run(
    cfg: &GpuConfig,
    b: &Bench,
    w: &dyn crate::workload::Workload,
) -> Result<RunReport, CharacterizeError> {
    let spec = RunSpec {
        policy: b.policy,
        scale: 1.0,
        seed: 1,
    };
    simulate(cfg, w, spec).map_err(|source| CharacterizeError::Run {
        what: format!("{} under {}", b.name, b.policy),
        source: Box::new(source),
    })
}

fn kernel_cycles(b: &Bench, r: &RunReport, k: usize) -> Result<u64, CharacterizeError> {
    r.kernels
        .get(k)
        .map(|k| k.cycles)
        .ok_or(CharacterizeError::Kernels {
            what: b.name.clone(),
            got: r.kernels.len(),
            want: k + 1,
        })
}

/// Run one benchmark.
pub fn measure(cfg: &GpuConfig, b: &Bench) -> Result<Measured, CharacterizeError> {
    match &b.kind {
        Kind::Chase { spec, shape } => {
            let w = ChaseWorkload::new(*spec, cfg.gpu.chiplets, cfg.gpu.warps_per_sm);
            let r = run(cfg, b, &w)?;
            let cycles = kernel_cycles(b, &r, 2)?;
            let loads = spec.loads * spec.rounds as u64;
            Ok(Measured {
                bench: b.clone(),
                cycles_per_load: Some(cycles as f64 / loads as f64),
                expected: Some(expected::chase_path(cfg, shape)),
                flood: None,
            })
        }
        Kind::Flood(spec) => {
            let shape = Shape {
                chiplets: cfg.gpu.chiplets,
                sms_per_chiplet: cfg.gpu.sms_per_chiplet,
                warps_per_sm: cfg.gpu.warps_per_sm,
            };
            let base = run(cfg, b, &FloodWorkload::new(*spec, shape, false, 1))?;
            let w = FloodWorkload::new(*spec, shape, true, 1);
            let full = run(cfg, b, &w)?;
            let sum = |v: &[crate::gpu::metrics::ClassStats]| {
                v.iter().map(|c| c.hits + c.misses).sum::<u64>()
            };
            let lookups = |r: &RunReport| sum(&r.l1_tlb);
            let l2_lookups = |r: &RunReport| sum(&r.l2_tlb);
            let remote = |r: &RunReport| (r.remote_ratio * r.lines as f64).round() as u64;
            let lines = full.lines - base.lines;
            Ok(Measured {
                bench: b.clone(),
                cycles_per_load: None,
                expected: None,
                flood: Some(FloodFigures {
                    cycles: kernel_cycles(b, &full, 1)?,
                    lines,
                    translations: lookups(&full) - lookups(&base),
                    l2_lookups: l2_lookups(&full) - l2_lookups(&base),
                    walks: full.walks - base.walks,
                    active_sms: w.active_sms(),
                    active_chiplets: w.active_sms().div_ceil(cfg.gpu.sms_per_chiplet),
                    remote_ratio: (remote(&full) - remote(&base)) as f64 / lines.max(1) as f64,
                }),
            })
        }
    }
}
