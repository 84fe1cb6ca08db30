//! `mcmvm calibrate`: fit the timing model's unknowns (`mcmvm_models::calibrate::params`)
//! to the CLAP paper's baseline figures (`calibrate::targets`) over a grid or a Latin
//! hypercube; print every point and the best, write CSV and JSON, and with `--write` put
//! the best values into the config file. The runner is `mcmvm_study::calibrate`; this file
//! parses the flags. docs/calibration.md has the split (fitted / predicted) and the last
//! fit.

use super::study::{CliInputs, Terminal};
use mcmvm_models::calibrate::design::Design;
use mcmvm_models::workload::Scale;
use mcmvm_study::calibrate::Request;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// GPU configuration to calibrate (TOML or a built-in name; --write needs a file).
    #[arg(long, default_value = "configs/mcm-4chiplet.toml")]
    pub config: PathBuf,
    /// Workload size of the calibration runs: a multiplier, or `paper` (each workload at
    /// the CLAP paper's input size class; hours on a small machine).
    #[arg(long, default_value = "0.25")]
    pub scale: Scale,
    /// A Latin hypercube of N points over every parameter (instead of --grid).
    #[arg(long, value_name = "N", conflicts_with = "grid")]
    pub points: Option<usize>,
    /// Two-level factorial: `small` (the primary parameters) or `full` (every parameter).
    #[arg(long, value_parser = ["small", "full"])]
    pub grid: Option<String>,
    /// Seed of the Latin hypercube (printed).
    #[arg(long, default_value_t = 38)]
    pub design_seed: u64,
    /// Seed of the workload generators.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Only these workloads (comma-separated; default: the CLAP suite).
    #[arg(long)]
    pub workloads: Option<String>,
    /// Directory for calibrate.csv and calibrate.json.
    #[arg(long, default_value = "out/calibrate")]
    pub out: PathBuf,
    /// Write the best point's values into --config, with provenance comments.
    #[arg(long)]
    pub write: bool,
    /// Instead of fitting: `mcmvm sweep --suite clap --robustness` with these options
    /// (`--grid small`: its corners; `--points N`: its Latin hypercube) into --out: CLAP's
    /// headline figures over the box as config value [low, high] (predictions, never fitted).
    #[arg(long, conflicts_with = "write")]
    pub robustness: bool,
}

impl Args {
    fn design(&self) -> Design {
        match (self.points, self.grid.as_deref()) {
            (Some(points), _) => Design::Latin {
                points,
                seed: self.design_seed,
            },
            (None, Some("full")) => Design::Full,
            _ => Design::Small,
        }
    }

    fn workloads(&self) -> anyhow::Result<Vec<String>> {
        let suite = mcmvm_models::workload::clap_suite();
        let Some(list) = &self.workloads else {
            return Ok(suite.iter().map(|w| w.to_string()).collect());
        };
        list.split(',')
            .map(|w| {
                let w = w.trim();
                anyhow::ensure!(
                    suite.contains(&w),
                    "--workloads: `{w}` is not a CLAP workload (valid: {})",
                    suite.join(", ")
                );
                Ok(w.to_string())
            })
            .collect()
    }
}

pub fn run(args: Args) -> anyhow::Result<u8> {
    if args.robustness {
        return robustness(&args);
    }
    // Before an hour of runs, not after.
    anyhow::ensure!(
        !args.write || args.config.is_file(),
        "--write: {} is not a file (a built-in config cannot be rewritten; copy it with \
         `mcmvm config show` first)",
        args.config.display()
    );
    let req = Request {
        config: args.config.clone(),
        scale: args.scale,
        design: args.design(),
        seed: args.seed,
        workloads: args.workloads()?,
        out: args.out.clone(),
        write: args.write,
    };
    mcmvm_study::calibrate::run(&req, &CliInputs { hw: None }, &Terminal)?;
    Ok(0)
}

/// `--robustness`: the same as `mcmvm sweep --suite clap --robustness` with this command's
/// config, scale, seeds, workloads and design (one implementation: the sweep's).
fn robustness(args: &Args) -> anyhow::Result<u8> {
    #[derive(clap::Parser)]
    struct Sweep {
        #[command(flatten)]
        args: super::sweep::Args,
    }
    let points = match (args.points, args.grid.as_deref()) {
        (Some(n), _) => n.to_string(),
        (None, Some("full")) => {
            anyhow::bail!("--robustness --grid full: use --points N (a Latin hypercube)")
        }
        _ => "corners".to_string(),
    };
    let mut words: Vec<String> = ["mcmvm", "--suite", "clap", "--robustness", "--points"]
        .map(String::from)
        .to_vec();
    words.push(points);
    for (flag, value) in [
        ("--config", args.config.display().to_string()),
        ("--scale", args.scale.to_string()),
        ("--seed", args.seed.to_string()),
        ("--design-seed", args.design_seed.to_string()),
        ("--out", args.out.display().to_string()),
    ] {
        words.extend([flag.to_string(), value]);
    }
    if let Some(w) = &args.workloads {
        words.extend(["--workloads".to_string(), w.clone()]);
    }
    let sweep = <Sweep as clap::Parser>::try_parse_from(words)?;
    super::sweep::run(sweep.args)
}
