//! `mcmvm cosim --mutants` (`make rtl-mutants`): every hand-written mutant of the emitted
//! Verilog (`mcmvm_cosim::rtl_mutants`) through two checks that do not compare it with the
//! twin on the testbench stimulus:
//!
//! (a) the README-derived reference monitor alone, watching the mutated Verilog on the
//!     block's testbench stimulus (directed cases, then `--cycles` random cycles), on the
//!     given configuration or, for a mutant whose behaviour needs saturating counters, the
//!     narrow one;
//! (b) a short system run with `--hw check`, the mutated Verilog under Verilator beside the
//!     twin and the README monitor (RT and coalescer: bfs under clap on the 4-chiplet MCM
//!     GPU; ATT: ls under forest on the Forest study's GPU, `configs/gpu-turing.toml`).
//!
//! Each mutant must be caught by at least one; the command exits 1 if one escapes both.

use anyhow::Context;
use mcmvm_cosim::lockstep::run_lockstep_monitored;
use mcmvm_cosim::rtl_mutants::{RtlMutant, MUTANTS};
use mcmvm_cosim::system::{hardware, HwMode, HwOptions};
use mcmvm_cosim::BoxedEngine;
use mcmvm_models::config::HwConfig;
use mcmvm_models::driver::PolicyKind;
use mcmvm_models::gpu::{simulate, GpuError, RunSpec};
use mcmvm_models::protocol::{BlockKind, Ports};
use mcmvm_models::uvm::{UvmError, UvmPolicy};
use mcmvm_models::workload;
use mcmvm_protocol::system::BlockFault;
use std::path::PathBuf;

/// What `--mutants` runs.
pub struct MutantPlan {
    /// The mutants (all, or those named / of `--block`).
    pub mutants: Vec<&'static RtlMutant>,
    /// Random cycles after the directed cases in check (a).
    pub cycles: u64,
    pub seed: u64,
    /// Workload scale of the system runs of check (b).
    pub system_scale: f64,
}

/// `--mutants LIST` (`all` or comma-separated names), narrowed to `block` if given.
pub fn select(list: &str, block: Option<BlockKind>) -> anyhow::Result<Vec<&'static RtlMutant>> {
    let mut chosen: Vec<&'static RtlMutant> = if list == "all" {
        MUTANTS.iter().collect()
    } else {
        list.split(',')
            .map(|n| {
                RtlMutant::by_name(n.trim()).with_context(|| {
                    let names: Vec<&str> = MUTANTS.iter().map(|m| m.name).collect();
                    format!(
                        "--mutants: unknown mutant `{}`: expected all or some of {}",
                        n.trim(),
                        names.join(", ")
                    )
                })
            })
            .collect::<anyhow::Result<_>>()?
    };
    if let Some(b) = block {
        chosen.retain(|m| m.block == b);
    }
    if chosen.is_empty() {
        anyhow::bail!("--mutants: no mutant of that block selected");
    }
    Ok(chosen)
}

/// Run every mutant of `plan` through checks (a) and (b); exit code 1 if one escapes both.
pub fn run(
    cfg: &HwConfig,
    narrow: impl Fn(BlockKind) -> Option<HwConfig>,
    plan: &MutantPlan,
) -> anyhow::Result<u8> {
    println!(
        "RTL mutants: {} (check a: README monitor on the testbench stimulus, directed + {} \
         random cycles, seed {}; check b: --hw check system run at scale {})",
        plan.mutants.len(),
        plan.cycles,
        plan.seed,
        plan.system_scale
    );
    let (mut by_a, mut by_b, mut escaped) = (0, 0, Vec::new());
    for m in &plan.mutants {
        let monitor_cfg = if m.needs_narrow {
            narrow(m.block).unwrap_or_else(|| cfg.clone())
        } else {
            cfg.clone()
        };
        let a = monitor_check(m, &monitor_cfg, plan)?;
        let b = system_check(m, plan)?;
        println!("mutant {} ({}): {}", m.name, m.block.short_name(), m.breaks);
        let config = if m.needs_narrow {
            "narrow config"
        } else {
            "config"
        };
        println!(
            "  (a) README monitor ({config}): {}",
            a.as_deref().unwrap_or("not caught")
        );
        println!(
            "  (b) --hw check system run: {}",
            b.as_deref().unwrap_or("not caught")
        );
        by_a += usize::from(a.is_some());
        by_b += usize::from(b.is_some());
        if a.is_none() && b.is_none() {
            escaped.push(m.name);
        }
    }
    println!(
        "mutants: {}, caught by (a) {by_a}, by (b) {by_b}, escaped both {}",
        plan.mutants.len(),
        escaped.len()
    );
    if !escaped.is_empty() {
        println!("escaped: {}", escaped.join(", "));
        return Ok(1);
    }
    Ok(0)
}

/// Check (a): the monitor's first violation on the mutated Verilog, if any.
fn monitor_check(
    m: &RtlMutant,
    cfg: &HwConfig,
    plan: &MutantPlan,
) -> anyhow::Result<Option<String>> {
    match m.block {
        BlockKind::RemoteTracker => {
            use mcmvm_testbenches::remote_tracker as tb;
            let stim = tb::directed(cfg)
                .into_iter()
                .chain(tb::random(cfg, plan.seed).take(plan.cycles as usize));
            monitored::<_, mcmvm_models::protocol::RtOut>(m, cfg, stim)
        }
        BlockKind::TlbCoalescer => {
            use mcmvm_testbenches::tlb_coalescer as tb;
            let stim = tb::directed(cfg)
                .into_iter()
                .chain(tb::random(cfg, plan.seed).take(plan.cycles as usize));
            monitored::<_, mcmvm_models::protocol::CoalOut>(m, cfg, stim)
        }
        BlockKind::AccessTimeTracker => {
            use mcmvm_testbenches::access_time_tracker as tb;
            let stim = tb::directed(cfg)
                .into_iter()
                .chain(tb::random(cfg, plan.seed).take(plan.cycles as usize));
            monitored::<_, mcmvm_models::protocol::AttOut>(m, cfg, stim)
        }
    }
}

/// The mutated Verilog alone in a lockstep with the block's README monitor watching it.
fn monitored<I: Ports, O: Ports>(
    m: &RtlMutant,
    cfg: &HwConfig,
    stimulus: impl Iterator<Item = I>,
) -> anyhow::Result<Option<String>> {
    let model = m.verilator_model::<I, O>(cfg)?;
    let engines: Vec<(String, BoxedEngine<I, O>)> = vec![("verilator".into(), Box::new(model))];
    let monitor = mcmvm_refcheck::monitor_for::<I, O>(m.block, cfg)
        .context("the block's ports are the ones its monitor checks")?;
    let report = run_lockstep_monitored(engines, u64::MAX, None, Some(monitor), stimulus)?;
    Ok(report.violation.map(|v| {
        format!(
            "cycle {}, `{}` = {:#x}, README gives {:#x} ({})",
            v.cycle, v.signal, v.got, v.expected, v.rule
        )
    }))
}

/// Check (b): the fault a short `--hw check` system run with the mutant serving reports.
fn system_check(m: &'static RtlMutant, plan: &MutantPlan) -> anyhow::Result<Option<String>> {
    let mut opts = HwOptions::new(HwMode::Check);
    opts.mutant = Some(m);
    opts.mismatch_dir = PathBuf::from("out/rtl-mutants").join(m.name);
    let engines = hardware(opts);
    let scale = plan.system_scale;
    let fault = match m.block {
        BlockKind::RemoteTracker | BlockKind::TlbCoalescer => {
            let mut cfg = super::configs::gpu(std::path::Path::new("configs/mcm-4chiplet.toml"))?;
            cfg.engines = engines;
            let w = workload::by_name("bfs", scale, plan.seed)?;
            let spec = RunSpec {
                policy: PolicyKind::Clap,
                scale,
                seed: plan.seed,
            };
            match simulate(&cfg, w.as_ref(), spec) {
                Ok(_) => None,
                Err(GpuError::Block(f)) => Some(f),
                Err(e) => return Err(e).context("bfs under clap"),
            }
        }
        BlockKind::AccessTimeTracker => {
            let mut cfg =
                super::configs::uvm(std::path::Path::new("configs/uvm-turing.toml"), &[])?;
            cfg.engines = engines;
            let gpu = super::sweep::uvm_gpu(std::path::Path::new("configs/gpu-turing.toml"))?;
            let w = workload::by_name("ls", scale, plan.seed)?;
            match gpu.run(w.as_ref(), &cfg, UvmPolicy::Forest, scale, plan.seed) {
                Ok(_) => None,
                Err(UvmError::Block(f)) => Some(f),
                Err(e) => return Err(e).context("ls under forest"),
            }
        }
    };
    Ok(fault.map(|f| describe(&f)))
}

/// A fault in one line: which check of `--hw check` found it, where.
fn describe(f: &BlockFault) -> String {
    match f {
        BlockFault::Mismatch {
            unit,
            system_cycle,
            signal,
            values,
            ..
        } => {
            let vals: Vec<String> = values.iter().map(|(e, v)| format!("{e} {v:#x}")).collect();
            format!(
                "twin≠RTL at system cycle {system_cycle} ({unit}), `{signal}`: {}",
                vals.join(", ")
            )
        }
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn select_filters_by_name_and_block() {
        assert_eq!(select("all", None).expect("all").len(), MUTANTS.len());
        let rt = select("all", Some(BlockKind::RemoteTracker)).expect("rt");
        assert!(rt.iter().all(|m| m.block == BlockKind::RemoteTracker));
        let e = select("no-such", None).expect_err("unknown");
        assert!(e.to_string().contains("unknown mutant `no-such`"), "{e}");
    }
}
