//! `mcmvm run`: simulate one workload (built-in or trace) under one placement policy and
//! print what the model measured, the seed and the simulation speed.
//!
//! With `--uvm tbnp|forest|specforest|forest-lru|tbnp-aae` the UVM path runs: the GPU
//! model with the UVM driver as its memory service; without `--policy` on the Forest
//! study's GPU (`configs/gpu-turing.toml`, 4 KB pages), as `mcmvm sweep --suite forest`.

use anyhow::Context;
use mcmvm_models::driver::PolicyKind;
use mcmvm_models::gpu::{simulate, GpuConfig, RunSpec};
use mcmvm_models::uvm::{self, UvmPolicy};
use mcmvm_models::workload::{self, Scale, TraceWorkload, Workload};
use std::path::PathBuf;

#[derive(clap::Args)]
#[command(group = clap::ArgGroup::new("source").required(true).args(["workload", "trace"]))]
pub struct Args {
    /// GPU configuration (TOML). Default: configs/mcm-4chiplet.toml; with
    /// `--uvm tbnp|forest|specforest|forest-lru|tbnp-aae` and no `--policy`,
    /// configs/gpu-turing.toml (the Forest study's one-chiplet Turing GPU).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// UVM parameters (fault path, host link, TBNp, Forest) for `--uvm` on an MCM config.
    /// Default: uvm-turing.toml beside the `--config` file, else configs/uvm-turing.toml.
    #[arg(long)]
    pub uvm_config: Option<PathBuf>,
    /// Built-in workload (see `mcmvm workloads`).
    #[arg(long)]
    pub workload: Option<String>,
    /// Trace file instead of a built-in workload.
    #[arg(long)]
    pub trace: Option<PathBuf>,
    /// Placement policy (required unless --uvm runs; with --uvm the default is s4k, the
    /// Forest paper's 4 KB pages): s64k, s2m, clap and ideal are the paper's; s64k-coal is
    /// S-64KB with CLAP's coalescer; the rest are extended.
    #[arg(long, value_parser = super::common::policy_parser())]
    pub policy: Option<PolicyKind>,
    /// UVM management under oversubscription: forest-lru is Forest's trees with the
    /// baseline LRU, tbnp-aae TBNp with Forest's access-aware eviction.
    #[arg(long, default_value = "none", value_parser = super::common::uvm_policy_parser())]
    pub uvm: UvmPolicy,
    /// UVM oversubscription (footprint / GPU memory), at least 1.0.
    #[arg(long)]
    pub oversub: Option<f64>,
    /// Configuration override KEY=VALUE, repeatable: with --uvm a UVM key (e.g.
    /// forest.apd.r2=0.8), without it a GPU key (e.g. gpu.loads_in_flight_per_warp=2).
    #[arg(long = "set")]
    pub set: Vec<String>,
    /// GPU configuration override KEY=VALUE on any run of the GPU model, also with --uvm
    /// (e.g. gpu.l1_mshrs_per_sm=256); repeatable.
    #[arg(long = "gpu-set")]
    pub gpu_set: Vec<String>,
    /// Workload size: a multiplier (1 = the quick default) or `paper`, each CLAP
    /// workload at the CLAP paper's input size class (docs/workloads.md).
    #[arg(long, default_value = "1")]
    pub scale: Scale,
    /// Seed of the workload generator.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Also write the full report as JSON.
    #[arg(long)]
    pub json: Option<PathBuf>,
    #[command(flatten)]
    pub hw: super::common::HwArgs,
}

pub fn run(args: Args) -> anyhow::Result<u8> {
    let uvm = args.uvm;
    if let Some(path) = &args.config {
        if super::configs::is_uvm(path)? {
            // Read as a GPU config, it would fail on its first key (`chiplets`).
            anyhow::bail!(
                "{} is a UVM configuration: give it as --uvm-config with --uvm \
                 tbnp|forest|specforest|forest-lru|tbnp-aae, and --config a GPU configuration \
                 such as configs/gpu-turing.toml",
                path.display()
            );
        }
    }
    if uvm != UvmPolicy::None {
        return run_uvm_gpu(&args, uvm);
    }
    let (config, cfg, policy) = gpu_config_and_policy(&args, &args.set)?;
    let source = Source::open(&args)?;
    let w = source.workload();
    println!(
        "seed: {}  config: {}  workload: {}  hw: {}",
        args.seed,
        config.display(),
        w.name(),
        args.hw.hw
    );
    let spec = RunSpec {
        policy,
        scale: args.scale.factor(w.name()),
        seed: args.seed,
    };
    let spin = super::progress::spinner(format!("simulating {} under {policy}", w.name()));
    let report = simulate(&cfg, w, spec);
    spin.finish_and_clear();
    let report = report.with_context(|| format!("workload {}, policy {}", w.name(), policy))?;
    source.check_complete()?;
    print!("{}", report.table());
    print!("{}", report.hardware.table());
    println!(
        "speed: {:.0} warp mem-instr/s ({:.2} s)",
        report.speed, report.sim_seconds
    );
    print_host_pages();
    write_json(args.json.as_deref(), &report)?;
    Ok(0)
}

/// How much of the process sits on transparent huge pages (the speed depends on it; see
/// `host_pages`).
fn print_host_pages() {
    if let Some(bytes) = crate::host_pages::huge_page_bytes() {
        println!(
            "host memory: {:.1} MB on 2 MB pages",
            bytes as f64 / (1 << 20) as f64
        );
    }
}

/// `--set` overrides plus `--oversub` as `memory.oversubscription`, checked first so a bad
/// ratio is reported as the flag the user typed.
fn uvm_overrides(args: &Args) -> anyhow::Result<Vec<String>> {
    let mut sets = args.set.clone();
    if let Some(o) = args.oversub {
        if o.is_nan() || o < 1.0 {
            anyhow::bail!(
                "--oversub {o}: expected a ratio of at least 1.0 (footprint / GPU memory)"
            );
        }
        sets.push(format!("memory.oversubscription={o}"));
    }
    Ok(sets)
}

/// The UVM config that goes with the GPU config at `gpu_config`: the repository keeps them
/// side by side, so a run from another directory with `--config /path/configs/...` finds
/// it; otherwise the working directory's `configs/uvm-turing.toml`.
fn default_uvm_config(gpu_config: &std::path::Path) -> PathBuf {
    let beside = gpu_config.with_file_name("uvm-turing.toml");
    if beside.is_file() {
        beside
    } else {
        PathBuf::from("configs/uvm-turing.toml")
    }
}

/// `--uvm tbnp|forest|specforest|forest-lru|tbnp-aae`: the GPU model runs the workload under
/// the placement policy, and the UVM driver services its faults (batches, prefetch,
/// eviction over the host link). The speed excludes the host time of fault handling: the
/// driver's service and the GPU's fault path (faulting walks, shootdowns, replays that
/// fault again); the figure with it follows.
fn run_uvm_gpu(args: &Args, policy: UvmPolicy) -> anyhow::Result<u8> {
    let (config, cfg, placement) = gpu_config_and_policy(args, &[])?;
    let ucfg_path = args
        .uvm_config
        .clone()
        .unwrap_or_else(|| default_uvm_config(&config));
    let mut ucfg = super::configs::uvm(&ucfg_path, &uvm_overrides(args)?)?;
    // The factory elaborates each block for the parameters it is asked for.
    ucfg.engines = cfg.engines.clone();
    let source = Source::open(args)?;
    let w = source.workload();
    println!(
        "seed: {}  config: {}  uvm-config: {}  workload: {}  policy: {}  uvm: {}",
        args.seed,
        config.display(),
        ucfg_path.display(),
        w.name(),
        placement,
        policy.name()
    );
    let spec = RunSpec {
        policy: placement,
        scale: args.scale.factor(w.name()),
        seed: args.seed,
    };
    let spin = super::progress::spinner(format!(
        "simulating {} under {placement} with UVM {}",
        w.name(),
        policy.name()
    ));
    let r = uvm::run_on_gpu(&cfg, &ucfg, w, spec, policy, false);
    spin.finish_and_clear();
    let r = r.with_context(|| {
        format!(
            "workload {}, policy {}, uvm {}",
            w.name(),
            placement,
            policy.name()
        )
    })?;
    source.check_complete()?;
    print!("{}", r.table());
    print!("{}", r.gpu.hardware.table());
    print!("{}", r.uvm.hardware.table());
    println!(
        "speed: {:.0} warp mem-instr/s over the whole run ({:.2} s; of it GPU fault path {:.2} s, driver {:.2} s)",
        r.gpu.speed, r.gpu.sim_seconds, r.fault_path_s, r.driver_s
    );
    print_host_pages();
    write_json(args.json.as_deref(), &r)?;
    Ok(0)
}

/// The GPU config (`--config`; default the 4-chiplet MCM one, or for `--uvm` without
/// `--policy` the Forest study's `gpu-turing.toml`) with the `--gpu-set` and `extra`
/// overrides applied, and the placement policy (`--policy`; with `--uvm` default s4k).
fn gpu_config_and_policy(
    args: &Args,
    extra: &[String],
) -> anyhow::Result<(PathBuf, GpuConfig, PolicyKind)> {
    let uvm = args.uvm != UvmPolicy::None;
    let config = args.config.clone().unwrap_or_else(|| {
        PathBuf::from(if uvm && args.policy.is_none() {
            "configs/gpu-turing.toml"
        } else {
            "configs/mcm-4chiplet.toml"
        })
    });
    let overrides: Vec<String> = args.gpu_set.iter().chain(extra).cloned().collect();
    let mut cfg = super::configs::gpu_with(&config, &overrides)?;
    cfg.engines = args.hw.hardware()?;
    let policy = match args.policy {
        Some(p) => p,
        None if uvm => PolicyKind::S4k,
        None => anyhow::bail!("--policy is required ({})", PolicyKind::NAMES),
    };
    Ok((config, cfg, policy))
}

/// The workload of a GPU-model run: a built-in generator or a streamed trace.
enum Source {
    Built(Box<dyn Workload>),
    /// Boxed: a trace's index is large beside a generator's pointer.
    Trace(Box<TraceWorkload>),
}

impl Source {
    fn open(args: &Args) -> anyhow::Result<Source> {
        Ok(match (&args.workload, &args.trace) {
            (Some(name), _) => {
                Source::Built(workload::by_name(name, args.scale.factor(name), args.seed)?)
            }
            (None, Some(path)) => Source::Trace(Box::new(TraceWorkload::open(path)?)),
            (None, None) => anyhow::bail!("give --workload NAME or --trace FILE"),
        })
    }

    fn workload(&self) -> &dyn Workload {
        match self {
            Source::Built(b) => b.as_ref(),
            Source::Trace(t) => t.as_ref(),
        }
    }

    /// A trace that changed under us ends its streams early; say so instead of reporting
    /// a truncated run as if it were whole.
    fn check_complete(&self) -> anyhow::Result<()> {
        if let Source::Trace(t) = self {
            if let Some(e) = t.stream_error() {
                anyhow::bail!("{}: {e}", t.path().display());
            }
        }
        Ok(())
    }
}

/// Write the full report as JSON when `--json` asks for it.
fn write_json(
    path: Option<&std::path::Path>,
    report: &impl serde::Serialize,
) -> anyhow::Result<()> {
    if let Some(path) = path {
        std::fs::write(path, serde_json::to_string_pretty(report)?)
            .with_context(|| format!("{}: cannot write", path.display()))?;
        println!("json: {}", path.display());
    }
    Ok(())
}
