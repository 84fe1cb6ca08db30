//! One block's study: every point of the grid through emission, lint, a lockstep run
//! against the twin, synthesis on both libraries, the system runs with its Verilog
//! serving, and power from their switching — each point cached by the hash of everything
//! it depends on, so a rerun is quick. [`Runner::point`] is one point alone (a
//! `--task-id` shard); [`run_points`] is all of them in one process.
//!
//! The cache key (64-bit FNV-1a over length-prefixed parts, as the Verilator model cache
//! does) covers the point's Verilog text, the yosys scripts and the power script's
//! format, each Liberty file's name and size, the workloads, scale and seed, and the
//! system configurations as JSON. Entries are `<out>/codesign/cache/<block>-<hash>.json`.

use crate::activity::Activity;
use crate::cost::{self, LibraryCost};
use crate::grid::{self, Point};
use crate::lockstep::{self, Lockstep};
use crate::system::{self, Effect, RunPlan, Systems};
use crate::CodesignError;
use mcmvm_models::config::HwConfig;
use mcmvm_protocol::protocol::BlockKind;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Bump when a cached point's meaning changes.
const CACHE_FORMAT: &str = "mcmvm-codesign-1";

/// Everything measured at one point (a row of the CSV, an element of the JSON).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PointResult {
    pub label: String,
    /// The block's keys and values.
    pub params: Vec<(String, String)>,
    pub paper: bool,
    pub default: bool,
    /// The cache key (hash of the Verilog and everything else the point depends on).
    pub key: String,
    pub lint: String,
    /// The point's Verilog against the twin (absent in a cache entry written before the
    /// lockstep existed: it is run and added on the next read).
    #[serde(default)]
    pub lockstep: Option<Lockstep>,
    /// osu018, then sky130hd.
    pub libraries: Vec<LibraryCost>,
    /// How the power figures were computed ([`crate::power::method`]).
    pub power_tool: String,
    pub effect: Effect,
    /// Whether this result came from the cache (a shard's result file keeps it, so the
    /// merged files are the one-process run's).
    #[serde(default)]
    pub cached: bool,
}

impl PointResult {
    /// The figures on `library`, if synthesised there.
    pub fn on(&self, library: &str) -> Option<&LibraryCost> {
        self.libraries.iter().find(|l| l.library == library)
    }

    /// [`grid::point_name`] of its parameters: the name of its work directory and file.
    pub fn name(&self) -> String {
        grid::point_name(self.params.iter().map(|(_, v)| v.as_str()))
    }

    /// Whether the point failed its lockstep (its Verilog disagreed with the twin).
    pub fn failed(&self) -> bool {
        self.lockstep.as_ref().is_some_and(|l| !l.passed())
    }
}

/// What a study needs besides its points.
#[derive(Debug, Clone)]
pub struct StudyOptions {
    pub block: BlockKind,
    /// The base hardware configuration (keys the grid does not vary).
    pub base: HwConfig,
    pub plan: RunPlan,
    pub systems: Systems,
    /// `<out>`: results go to `<out>/codesign/`.
    pub out: PathBuf,
}

/// What every point of a study shares: the options, the tools, the points the marks
/// compare with.
pub struct Runner<'a> {
    opts: &'a StudyOptions,
    tools: mcmvm_synth::Tools,
    paper: Point,
    ours: Point,
}

impl<'a> Runner<'a> {
    /// Find the tools (a missing one names its package).
    pub fn new(opts: &'a StudyOptions) -> Result<Runner<'a>, CodesignError> {
        Ok(Runner {
            opts,
            tools: mcmvm_synth::Tools::discover()?,
            paper: grid::paper_point(opts.block, &opts.base),
            ours: grid::default_point(opts.block, &opts.base),
        })
    }

    /// A point: from the cache, else measured and cached. Work files go to
    /// `<out>/codesign/points/<block>-<name>/` ([`grid::point_name`]), so points of other
    /// grids measured into the same `<out>` keep theirs.
    pub fn point(&self, p: &Point) -> Result<PointResult, CodesignError> {
        let (opts, block) = (self.opts, self.opts.block.short_name());
        let root = opts.out.join("codesign");
        let dir = root
            .join("points")
            .join(format!("{block}-{}", p.name(opts.block)));
        let v = cost::emit(opts.block, &p.hw, &dir)?;
        let key = cache_key(opts, &self.tools, &v.text)?;
        let cache = root.join("cache").join(format!("{block}-{key}.json"));
        let mut r = match read_cache(&cache) {
            Some(mut r) => {
                if r.lockstep.is_none() {
                    r.lockstep = Some(lockstep::run(opts.block, &p.hw, opts.plan.seed)?);
                    write_json(&cache, &r)?;
                }
                r.cached = true;
                r
            }
            None => {
                let r = measure(opts, &self.tools, p, &v, &dir, key)?;
                write_json(&cache, &r)?;
                r
            }
        };
        // The marks follow the base configuration of this run, not the cached one's.
        r.label = p.label.clone();
        r.paper = grid::same_block_params(opts.block, &p.hw, &self.paper.hw);
        r.default = grid::same_block_params(opts.block, &p.hw, &self.ours.hw);
        Ok(r)
    }
}

/// Run (or load from the cache) every point, calling `progress` with each point's label
/// before it starts and `done` with its result.
pub fn run_points(
    opts: &StudyOptions,
    points: &[Point],
    mut progress: impl FnMut(usize, &Point),
    mut done: impl FnMut(usize, &PointResult) -> Result<(), CodesignError>,
) -> Result<Vec<PointResult>, CodesignError> {
    let runner = Runner::new(opts)?;
    let mut out = Vec::new();
    for (i, p) in points.iter().enumerate() {
        progress(i, p);
        let r = runner.point(p)?;
        done(i, &r)?;
        out.push(r);
    }
    Ok(out)
}

/// Lint, lockstep, synthesise, run the system, then power: one point.
fn measure(
    opts: &StudyOptions,
    tools: &mcmvm_synth::Tools,
    p: &Point,
    v: &cost::Emitted,
    dir: &Path,
    key: String,
) -> Result<PointResult, CodesignError> {
    let lint = cost::lint(tools, v, opts.block, &dir.join("lint"))?;
    let lockstep = lockstep::run(opts.block, &p.hw, opts.plan.seed)?;
    let work = dir.join("synth");
    let synthesised = cost::synthesise(tools, v, opts.block, &work)?;
    let effect = system::measure(opts.block, &p.hw, &opts.systems, &opts.plan, dir)?;
    let mut activity = Activity::default();
    for vcd in &effect.vcds {
        activity.add_vcd(vcd)?;
    }
    let libraries = cost::with_power(
        &synthesised,
        opts.block,
        &activity,
        effect.block_clock_cycles,
        effect.clock_mhz,
        &work,
    )?;
    Ok(PointResult {
        label: p.label.clone(),
        params: grid::params(opts.block, &p.hw)
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
        paper: false,
        default: false,
        key,
        lint,
        lockstep: Some(lockstep),
        libraries,
        power_tool: crate::power::method(effect.vcds.len()),
        effect,
        cached: false,
    })
}

fn cache_key(
    opts: &StudyOptions,
    tools: &mcmvm_synth::Tools,
    verilog: &str,
) -> Result<String, CodesignError> {
    let json = |v: &dyn erased_json::Json| v.json();
    let mut h = mcmvm_protocol::cache::Fnv::new();
    h.part(CACHE_FORMAT)
        .part(opts.block.short_name())
        .part(verilog)
        .part(mcmvm_synth::area::COST_SCRIPT)
        .part(&crate::power::script(
            Path::new("L"),
            Path::new("N"),
            "T",
            1.0,
            true,
            &[],
        ));
    let size = std::fs::metadata(&tools.liberty)
        .map(|m| m.len())
        .unwrap_or(0);
    h.part(&format!("{}:{size}", tools.liberty.display()))
        .part("sky130_fd_sc_hd__tt_025C_1v80")
        .part(&json(&opts.plan))
        .part(&json(&opts.systems.clap_gpu))
        .part(&json(&opts.systems.forest_gpu))
        .part(&json(&opts.systems.uvm))
        .part(&json(&opts.base));
    Ok(format!("{:016x}", h.value()))
}

mod erased_json {
    pub trait Json {
        fn json(&self) -> String;
    }
    impl<T: serde::Serialize> Json for T {
        fn json(&self) -> String {
            serde_json::to_string(self).unwrap_or_else(|e| format!("<{e}>"))
        }
    }
}

/// A cached point, if its file is present and parses (a stale layout is measured again).
fn read_cache(path: &Path) -> Option<PointResult> {
    let text = std::fs::read_to_string(path).ok()?;
    serde_json::from_str(&text).ok()
}

/// Write `value` as pretty JSON, creating directories; whole, then renamed.
pub fn write_json<T: Serialize>(path: &Path, value: &T) -> Result<(), CodesignError> {
    let text = serde_json::to_string_pretty(value).map_err(|e| CodesignError::Json {
        path: path.to_path_buf(),
        detail: e.to_string(),
    })?;
    write_text(path, &text)
}

/// Write `text` to `path`, creating directories; whole, then renamed.
pub fn write_text(path: &Path, text: &str) -> Result<(), CodesignError> {
    let io = |source| CodesignError::Io {
        path: path.to_path_buf(),
        source,
    };
    if let Some(d) = path.parent() {
        std::fs::create_dir_all(d).map_err(io)?;
    }
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, text).map_err(io)?;
    std::fs::rename(&tmp, path).map_err(io)
}
