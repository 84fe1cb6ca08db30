//! `mcmvm codesign --block rt|coalescer|att [--grid FILE]`: each point of a block's
//! parameter grid through lint, a lockstep run against the twin, synthesis on both
//! libraries, system runs with its own Verilog serving, and power from their switching;
//! the table, the recommendation, and `<out>/codesign/<block>.{json,csv}` with a Pareto
//! SVG. The study is `mcmvm-codesign`.
//!
//! Sharded like `mcmvm sweep` (docs/cluster.md): `--plan FILE` writes one command per
//! point, `--task-id N` runs point N alone into `<out>/codesign/runs/<block>-<point>.json`
//! (named by its parameters), and `mcmvm codesign merge DIR` builds the one-process run's
//! files from those, with the points of other grids run into DIR with the same options.

use super::common::load_hw_config;
use anyhow::Context;
use mcmvm_codesign::grid::{self, Point};
use mcmvm_codesign::shard::{self, ShardError, StudyId};
use mcmvm_codesign::study::{run_points, PointResult, Runner, StudyOptions};
use mcmvm_codesign::system::{default_scale, default_workloads, RunPlan, Systems};
use mcmvm_protocol::protocol::BlockKind;
use std::path::{Path, PathBuf};

/// `--block`: one block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Block {
    Rt,
    Coalescer,
    Att,
}

impl Block {
    fn kind(self) -> BlockKind {
        match self {
            Block::Rt => BlockKind::RemoteTracker,
            Block::Coalescer => BlockKind::TlbCoalescer,
            Block::Att => BlockKind::AccessTimeTracker,
        }
    }
}

#[derive(clap::Args)]
#[command(
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true,
    disable_help_subcommand = true
)]
pub struct Args {
    #[command(subcommand)]
    pub merge: Option<Merge>,
    /// The block whose parameters are varied.
    #[arg(long, value_enum, required = true)]
    pub block: Option<Block>,
    /// A TOML file with a list of values per key (every combination is a point); default:
    /// the paper's point, our default and two smaller points (docs/codesign.md).
    #[arg(long)]
    pub grid: Option<PathBuf>,
    /// Results go to OUT/codesign/ (JSON, CSV, SVG, per-point work files, the cache).
    #[arg(long, default_value = "out")]
    pub out: PathBuf,
    /// Comma-separated workloads (default: rt bfs,sssp; coalescer bfs,ste; att ls,mixed).
    #[arg(long)]
    pub workloads: Option<String>,
    /// Workload size multiplier (default: 0.1; att 0.05, on the GPU timing model).
    #[arg(long)]
    pub scale: Option<f64>,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Base hardware parameters: the keys the grid does not vary (default: configs/hw.toml
    /// if present, else the built-in values).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Write one shell command per point into FILE instead of running (GNU parallel, a
    /// Slurm array or HTCondor can run the lines), then `mcmvm codesign merge OUT`.
    #[arg(long, value_name = "FILE", conflicts_with = "task_id")]
    pub plan: Option<PathBuf>,
    /// Run only point N (0-based, grid order) into OUT/codesign/runs/<block>-<point>.json,
    /// named by its parameter values (a rerun overwrites only that file). Default:
    /// $SLURM_ARRAY_TASK_ID, if set.
    #[arg(long, value_name = "N")]
    pub task_id: Option<String>,
}

#[derive(clap::Subcommand)]
pub enum Merge {
    /// Build a study's table, CSV, JSON and SVG from the points `--task-id` wrote into
    /// DIR/codesign/runs.
    Merge(MergeArgs),
}

#[derive(clap::Args)]
pub struct MergeArgs {
    /// The study's output directory (`--out` of its tasks).
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
    /// The block (default: the one block DIR/codesign/runs holds).
    #[arg(long, value_enum)]
    pub block: Option<Block>,
    /// Where the files go (default: DIR).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

/// A study ready to run: its options, points and identity.
struct Prepared {
    opts: StudyOptions,
    points: Vec<Point>,
    id: StudyId,
    /// Where the base parameters came from.
    from: String,
}

pub fn run(args: Args) -> anyhow::Result<u8> {
    if let Some(Merge::Merge(m)) = args.merge {
        return merge(m);
    }
    // A plan lists every point, even inside a Slurm array task.
    let task = match &args.plan {
        None => mcmvm_study::plan::task_id(args.task_id.as_deref())?,
        Some(_) => None,
    };
    let s = prepare(&args)?;
    match (task, &args.plan) {
        (Some(n), _) => run_task(&s, n),
        (None, Some(plan)) => write_plan(&s, plan),
        (None, None) => run_all(&s),
    }
}

/// Validate the flags into the study's options, points and identity.
fn prepare(args: &Args) -> anyhow::Result<Prepared> {
    let block = args.block.context("--block rt|coalescer|att")?.kind();
    let (base, from) = load_hw_config(args.config.as_deref())?;
    let points = match &args.grid {
        Some(path) => grid::load_grid(path, block, &base)?,
        None => grid::default_grid(block, &base),
    };
    let plan = run_plan(args, block)?;
    let systems = Systems {
        clap_gpu: super::configs::gpu(&PathBuf::from("configs/mcm-4chiplet.toml"))?,
        forest_gpu: super::configs::gpu(&PathBuf::from("configs/gpu-turing.toml"))?,
        uvm: super::configs::uvm(&PathBuf::from("configs/uvm-turing.toml"), &[])?,
    };
    let id = study_id(args, block, &points, &plan, &from)?;
    let opts = StudyOptions {
        block,
        base,
        plan,
        systems,
        out: args.out.clone(),
    };
    Ok(Prepared {
        opts,
        points,
        id,
        from,
    })
}

/// `--workloads`, `--scale` and `--seed`, checked.
fn run_plan(args: &Args, block: BlockKind) -> anyhow::Result<RunPlan> {
    let scale = args.scale.unwrap_or_else(|| default_scale(block));
    if !(scale.is_finite() && scale > 0.0) {
        anyhow::bail!("--scale {scale}: expected a positive multiplier");
    }
    let workloads: Vec<String> = match &args.workloads {
        Some(w) => w
            .split(',')
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect(),
        None => default_workloads(block),
    };
    if workloads.is_empty() {
        anyhow::bail!("--workloads: expected at least one workload name");
    }
    for w in &workloads {
        mcmvm_models::workload::by_name(w, scale, args.seed)
            .with_context(|| format!("--workloads {w}"))?;
    }
    Ok(RunPlan {
        workloads,
        scale,
        seed: args.seed,
    })
}

/// The study's identity: the options every point shares, resolved (files absolute).
fn study_id(
    args: &Args,
    block: BlockKind,
    points: &[Point],
    plan: &RunPlan,
    from: &str,
) -> anyhow::Result<StudyId> {
    let absolute = |p: &Path| {
        std::path::absolute(p).with_context(|| format!("{}: no absolute path", p.display()))
    };
    let mut words = Vec::new();
    if Path::new(from).is_file() {
        words.extend([
            "--config".into(),
            absolute(Path::new(from))?.display().to_string(),
        ]);
    }
    if let Some(g) = &args.grid {
        words.extend(["--grid".into(), absolute(g)?.display().to_string()]);
    }
    words.extend([
        "--workloads".into(),
        plan.workloads.join(","),
        "--scale".into(),
        plan.scale.to_string(),
        "--seed".into(),
        plan.seed.to_string(),
    ]);
    Ok(StudyId {
        block: block.short_name().into(),
        points: points.len(),
        args: shard::shell_words(&words)?,
        dir: std::env::current_dir().context("the working directory")?,
        point_names: points.iter().map(|p| p.name(block)).collect(),
    })
}

/// Every point in this process; each point's file is written as it ends, and the outputs
/// are built from those files, as `merge` builds them.
fn run_all(s: &Prepared) -> anyhow::Result<u8> {
    let (opts, block) = (&s.opts, s.opts.block);
    println!(
        "== co-design of {}: {} points, base parameters from {}; workloads {} at scale {}, seed {} ==",
        block.module_name(),
        s.points.len(),
        s.from,
        opts.plan.workloads.join(","),
        opts.plan.scale,
        opts.plan.seed
    );
    shard::clear(&opts.out, &s.id)?;
    let bar = super::progress::bar(s.points.len() as u64, "points");
    run_points(
        opts,
        &s.points,
        |_, p| {
            bar.set_message(p.label.clone());
            bar.inc(1);
        },
        |i, r| shard::write_point(&opts.out, &s.id, i, r).map(|_| ()),
    )?;
    bar.finish_and_clear();
    let (_, results) = shard::load(&opts.out, Some(block.short_name()))?;
    let mut own = s.id.point_names.clone();
    own.sort();
    own.dedup();
    if results.len() > own.len() {
        println!(
            "with {} points of other grids measured into {} with the same options",
            results.len() - own.len(),
            opts.out.display()
        );
    }
    outputs(&opts.out, block, &results)
}

/// `--task-id N`: point N alone, into its file.
fn run_task(s: &Prepared, n: usize) -> anyhow::Result<u8> {
    let (block, total) = (s.opts.block.short_name(), s.points.len());
    let Some(p) = s.points.get(n) else {
        anyhow::bail!(
            "--task-id {n} is out of range: this {block} co-design has {total} points (0..={})",
            total.saturating_sub(1)
        );
    };
    println!("task {n}/{total}: {block} {}", p.label);
    let t0 = std::time::Instant::now();
    let r = match Runner::new(&s.opts).and_then(|r| r.point(p)) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("task {n}/{total} ({}) failed: {e:#}", p.label);
            return Ok(1);
        }
    };
    let path = shard::write_point(&s.opts.out, &s.id, n, &r)?;
    println!(
        "task {n}/{total}: wrote {} ({:.1} s)",
        path.display(),
        t0.elapsed().as_secs_f64()
    );
    Ok(0)
}

/// `--plan FILE`: one command a line, line N+1 running task N.
fn write_plan(s: &Prepared, plan: &Path) -> anyhow::Result<u8> {
    let exe = std::env::current_exe().context("the mcmvm binary's path")?;
    let out = std::path::absolute(&s.opts.out).context("--out: no absolute path")?;
    mcmvm_study::plan::write_plan(plan, s.id.points, |n| {
        shard::task_line(&exe, &s.id, n, &out)
    })?;
    println!(
        "plan {}: {} points of the {} co-design, one command a line (task ids 0..={})",
        plan.display(),
        s.id.points,
        s.id.block,
        s.id.points.saturating_sub(1)
    );
    println!(
        "each writes {}; when all are done: mcmvm codesign merge {}",
        shard::runs_dir(&out).display(),
        out.display()
    );
    Ok(0)
}

/// `mcmvm codesign merge DIR`: the one-process run's outputs from the point files.
fn merge(m: MergeArgs) -> anyhow::Result<u8> {
    let block = m.block.map(|b| b.kind().short_name());
    let loaded = shard::load(&m.dir, block);
    if let Err(ShardError::Missing { missing, study, .. }) = &loaded {
        let exe = std::env::current_exe().context("the mcmvm binary's path")?;
        let out = std::path::absolute(&m.dir).context("DIR: no absolute path")?;
        for &n in missing {
            println!(
                "missing point {n}: {}",
                shard::task_line(&exe, study, n, &out)?
            );
        }
    }
    let (id, results) = loaded?;
    let kind = BlockKind::from_short_name(&id.block)
        .with_context(|| format!("the point files name block `{}`", id.block))?;
    println!(
        "merge {}: {} points from {}",
        id.block,
        results.len(),
        shard::runs_dir(&m.dir).display()
    );
    outputs(m.out.as_deref().unwrap_or(&m.dir), kind, &results)
}

/// The table, the engines, power's tool, the recommendation; then the files.
fn outputs(out: &Path, block: BlockKind, results: &[PointResult]) -> anyhow::Result<u8> {
    use mcmvm_codesign::output;
    let (_, recommendation) = output::recommend(results);
    print!("{}", output::table(block, results));
    print!("{}", output::served_lines(results));
    println!("{}", output::power_line(results));
    println!("{recommendation}");
    for f in output::write(out, block, results, &recommendation)? {
        println!("wrote {}", f.display());
    }
    Ok(0)
}
