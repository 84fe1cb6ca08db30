//! The tool side of the Verilator bridge: running `verilator --cc` on a block's emitted
//! Verilog and g++ on what it generates, into a directory that `verilator_cache` then
//! publishes. Every failure is a [`CosimError`] carrying the command and its stderr; a
//! missing tool says what to install.

use crate::error::CosimError;
use crate::verilator_invariants::Invariant;
use crate::verilator_shim::{cpp_shim, harness_module, harness_verilog, BlockPorts};
use mcmvm_models::config::HwConfig;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::OnceLock;

/// Verilator's flags (besides `--prefix`, `--top-module`, `-Mdir` and the files).
/// `-Wno-fatal`: warnings (WIDTH above all) are shown and kept, never silenced, but do not
/// stop the model from being built, so the lockstep can show what they cause.
pub(crate) const VERILATOR_FLAGS: &[&str] = &[
    "--cc",
    "-O3",
    "--x-assign",
    "fast",
    "--x-initial",
    "fast",
    "-Wno-fatal",
];

/// g++ flags of every object, the runtime's and the model's.
pub(crate) const CXX_FLAGS: &[&str] = &[
    "-std=gnu++17",
    // The model is the hot loop of the lockstep.
    "-O2",
    // Everything ends up in a shared library.
    "-fPIC",
    "-pthread",
    "-faligned-new",
    // Verilator's own makefile silences these for generated code (CFG_CXXFLAGS_NO_UNUSED).
    "-Wno-unused-parameter",
    "-Wno-unused-variable",
    "-Wno-unused-but-set-variable",
    "-Wno-sign-compare",
    "-Wno-bool-operation",
    "-Wno-shadow",
    "-DVM_COVERAGE=0",
    "-DVM_SC=0",
    "-DVM_TRACE=0",
    "-DVM_TRACE_FST=0",
    "-DVM_TRACE_VCD=0",
];

/// g++ link flags of a block's library. `-Bsymbolic`: every library carries its own copy of
/// Verilator's runtime and of classes named alike (`Vremote_tracker` for each configuration
/// of the Remote Tracker); each must bind to its own, never to a same-named one loaded earlier.
pub(crate) const LINK_FLAGS: &[&str] = &["-shared", "-Wl,-Bsymbolic", "-pthread"];

/// Verilator's runtime sources, compiled once per Verilator version (`verilator_cache`).
pub(crate) const RUNTIME_SOURCES: &[&str] = &["verilated.cpp", "verilated_threads.cpp"];

/// The file in a model's cache directory listing its state invariants, one per line in
/// bit order: `always|system`, a tab, the name.
pub(crate) const INVARIANTS_FILE: &str = "invariants.txt";

/// The file name of a block's model library inside its cache directory.
pub(crate) fn library_name(module: &str) -> String {
    format!("libmcmvm_{module}.so")
}

const VERILATOR_MISSING: &str = "verilator not found: apt-get install verilator (or make deps)";
const GXX_MISSING: &str = "g++ not found: apt-get install g++ (or make deps)";

/// The programs to run; tests point them at names that do not exist.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Tools {
    pub verilator: String,
    pub gxx: String,
}

impl Default for Tools {
    fn default() -> Self {
        Tools {
            verilator: "verilator".to_string(),
            gxx: "g++".to_string(),
        }
    }
}

/// `verilator --version` of the default tools, asked once per process: it is part of every
/// cache key, and Verilator's wrapper script is not free to start.
static DEFAULT_VERSION: OnceLock<String> = OnceLock::new();

impl Tools {
    /// `verilator --version` (e.g. `Verilator 5.006 2023-01-22 rev (Debian 5.006-3)`).
    pub fn verilator_version(&self, module: &'static str) -> Result<String, CosimError> {
        let default = *self == Tools::default();
        if let Some(v) = DEFAULT_VERSION.get().filter(|_| default) {
            return Ok(v.clone());
        }
        let mut cmd = Command::new(&self.verilator);
        cmd.arg("--version");
        let out = run(&mut cmd, module, VERILATOR_MISSING)?;
        let version = String::from_utf8_lossy(&out.stdout).trim().to_string();
        if default {
            let _ = DEFAULT_VERSION.set(version.clone());
        }
        Ok(version)
    }

    /// Verilator's `include/` directory (holding `verilated.cpp`).
    pub fn verilator_include(&self, module: &'static str) -> Result<PathBuf, CosimError> {
        let mut cmd = Command::new(&self.verilator);
        cmd.args(["--getenv", "VERILATOR_ROOT"]);
        let out = run(&mut cmd, module, VERILATOR_MISSING)?;
        let include = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()).join("include");
        if RUNTIME_SOURCES.iter().all(|f| include.join(f).is_file()) {
            Ok(include)
        } else {
            Err(CosimError::ToolMissing(format!(
                "verilator found but {} lacks its runtime sources ({}): reinstall it \
                 (apt-get install --reinstall verilator)",
                include.display(),
                RUNTIME_SOURCES.join(", ")
            )))
        }
    }
}

/// Everything that goes into a block's model, generated before anything runs so the cache
/// key can be computed from it.
#[derive(Debug, Clone)]
pub(crate) struct Sources {
    pub module: &'static str,
    /// The block's parameters, `entries=8, counter_bits=8, ...`, for messages.
    pub params: String,
    pub verilog: String,
    pub harness: String,
    pub shim: String,
    /// The state invariants compiled into the harness (empty for an unchecked model).
    pub invariants: Vec<Invariant>,
}

impl Sources {
    /// Emit `block`'s Verilog for `cfg` and generate its harness and shim; with `checked`
    /// the harness also checks the block's state invariants every cycle.
    pub fn generate(
        block: &BlockPorts,
        cfg: &HwConfig,
        checked: bool,
    ) -> Result<Sources, CosimError> {
        let verilog = mcmvm_rtl::emit::verilog(block.kind, cfg).map_err(CosimError::Emit)?;
        let invariants = if checked {
            crate::verilator_invariants::invariants(block.kind, cfg, &verilog)?
        } else {
            Vec::new()
        };
        Ok(Sources {
            module: block.module,
            params: params_of(block, cfg),
            harness: harness_verilog(block, &invariants),
            shim: cpp_shim(block, checked.then_some(invariants.len())),
            verilog,
            invariants,
        })
    }
}

/// The block's section of `cfg` as `key=value, ...`. From its `Debug` form, which lists
/// every field, so a parameter added later shows up without touching this.
pub(crate) fn params_of(block: &BlockPorts, cfg: &HwConfig) -> String {
    use mcmvm_models::protocol::BlockKind;
    let debug = match block.kind {
        BlockKind::RemoteTracker => format!("{:?}", cfg.remote_tracker),
        BlockKind::TlbCoalescer => format!("{:?}", cfg.tlb_coalescer),
        BlockKind::AccessTimeTracker => format!("{:?}", cfg.access_time_tracker),
    };
    match (debug.find('{'), debug.rfind('}')) {
        (Some(open), Some(close)) if open < close => {
            debug[open + 1..close].trim().replace(": ", "=")
        }
        _ => debug,
    }
}

/// Verilate `src` into `dir` (empty, private to this build): the Verilog, the harness,
/// Verilator's output and the shim under `obj/`, `verilator.log` and `warnings.txt`.
/// Returns Verilator's `%Warning` lines.
pub(crate) fn verilate(
    src: &Sources,
    tools: &Tools,
    dir: &Path,
) -> Result<Vec<String>, CosimError> {
    let module = src.module;
    let top = harness_module(module);
    let vfile = dir.join(format!("{module}.v"));
    let hfile = dir.join(format!("{top}.v"));
    write(&vfile, &src.verilog)?;
    write(&hfile, &src.harness)?;
    write(&dir.join("params.txt"), &format!("{}\n", src.params))?;
    write(
        &dir.join(INVARIANTS_FILE),
        &src.invariants
            .iter()
            .map(|inv| {
                format!(
                    "{}\t{}\n",
                    if inv.system_only { "system" } else { "always" },
                    inv.name
                )
            })
            .collect::<String>(),
    )?;
    let obj = dir.join("obj");
    let mut verilate = Command::new(&tools.verilator);
    verilate
        .args(VERILATOR_FLAGS)
        .arg("--prefix")
        .arg(format!("V{module}"))
        .arg("--top-module")
        .arg(&top)
        .arg("-Mdir")
        .arg(&obj)
        .arg(&hfile)
        .arg(&vfile);
    let out = run(&mut verilate, module, VERILATOR_MISSING)?;
    let log = String::from_utf8_lossy(&out.stderr).into_owned();
    let warnings: Vec<String> = log
        .lines()
        .filter(|l| l.starts_with("%Warning"))
        .map(str::to_string)
        .collect();
    write(&dir.join("verilator.log"), &log)?;
    let mut listed = warnings.join("\n");
    if !listed.is_empty() {
        listed.push('\n');
    }
    write(&dir.join("warnings.txt"), &listed)?;
    write(&obj.join(format!("mcmvm_shim_{module}.cpp")), &src.shim)?;
    Ok(warnings)
}

/// Compile what [`verilate`] left in `dir` and link it with the runtime `objects` into the
/// block's library, `dir/`[`library_name`].
pub(crate) fn compile(
    module: &'static str,
    tools: &Tools,
    include: &Path,
    objects: &[PathBuf],
    dir: &Path,
) -> Result<(), CosimError> {
    let obj = dir.join("obj");
    let mut sources: Vec<PathBuf> = std::fs::read_dir(&obj)
        .map_err(|io| CosimError::Cache {
            path: obj.clone(),
            io,
        })?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "cpp"))
        .collect();
    sources.sort();
    let compiles = sources
        .iter()
        .map(|cpp| {
            let mut cmd = compile_command(tools, include, &[obj.as_path()]);
            cmd.arg("-c")
                .arg(cpp)
                .arg("-o")
                .arg(cpp.with_extension("o"));
            cmd
        })
        .collect();
    run_parallel(compiles, module, GXX_MISSING)?;
    let mut link = Command::new(&tools.gxx);
    link.args(LINK_FLAGS)
        .arg("-o")
        .arg(dir.join(library_name(module)));
    link.args(sources.iter().map(|cpp| cpp.with_extension("o")));
    link.args(objects);
    run(&mut link, module, GXX_MISSING)?;
    Ok(())
}

/// Compile Verilator's runtime into `-fPIC` objects in `dir`; returns their paths.
pub(crate) fn build_runtime(
    tools: &Tools,
    include: &Path,
    dir: &Path,
) -> Result<Vec<PathBuf>, CosimError> {
    let mut objects = Vec::new();
    let mut compiles = Vec::new();
    for name in RUNTIME_SOURCES {
        let object = dir.join(Path::new(name).with_extension("o"));
        let mut cmd = compile_command(tools, include, &[]);
        cmd.arg("-c").arg(include.join(name)).arg("-o").arg(&object);
        compiles.push(cmd);
        objects.push(object);
    }
    run_parallel(compiles, "the Verilator runtime", GXX_MISSING)?;
    Ok(objects)
}

/// `g++ CXX_FLAGS -I<Verilator's include> -I<vltstd> -I<extra>...`.
fn compile_command(tools: &Tools, include: &Path, extra: &[&Path]) -> Command {
    let mut cmd = Command::new(&tools.gxx);
    cmd.args(CXX_FLAGS)
        .arg("-I")
        .arg(include)
        .arg("-I")
        .arg(include.join("vltstd"));
    for dir in extra {
        cmd.arg("-I").arg(dir);
    }
    cmd
}

/// Write a file of a build directory.
pub(crate) fn write(path: &Path, text: &str) -> Result<(), CosimError> {
    std::fs::write(path, text).map_err(|io| CosimError::Cache {
        path: path.to_path_buf(),
        io,
    })
}

/// The command line, for error messages.
fn describe(cmd: &Command) -> String {
    std::iter::once(cmd.get_program())
        .chain(cmd.get_args())
        .map(|a| a.to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Start `cmd` with its output captured; `missing` is the error when the program does not
/// exist.
fn spawn(cmd: &mut Command, module: &'static str, missing: &str) -> Result<Child, CosimError> {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => CosimError::ToolMissing(missing.to_string()),
            _ => CosimError::ToolFailed {
                module,
                command: describe(cmd),
                status: format!("could not start: {e}"),
                stderr: String::new(),
            },
        })
}

/// Wait for a child of [`spawn`]; a non-zero exit is an error with its stderr.
fn finish(child: Child, cmd: &Command, module: &'static str) -> Result<Output, CosimError> {
    let out = child
        .wait_with_output()
        .map_err(|e| CosimError::ToolFailed {
            module,
            command: describe(cmd),
            status: format!("could not be waited for: {e}"),
            stderr: String::new(),
        })?;
    if out.status.success() {
        Ok(out)
    } else {
        Err(CosimError::ToolFailed {
            module,
            command: describe(cmd),
            status: out.status.to_string(),
            stderr: String::from_utf8_lossy(&out.stderr).trim_end().to_string(),
        })
    }
}

/// Run one command to completion.
fn run(cmd: &mut Command, module: &'static str, missing: &str) -> Result<Output, CosimError> {
    let child = spawn(cmd, module, missing)?;
    finish(child, cmd, module)
}

/// Run `cmds` with as many at a time as there are cores (a model's two big files compile
/// side by side); the first failure is returned once every started command has ended.
fn run_parallel(
    mut cmds: Vec<Command>,
    module: &'static str,
    missing: &str,
) -> Result<(), CosimError> {
    let jobs = std::thread::available_parallelism().map_or(2, |n| n.get());
    let mut running: Vec<(Child, usize)> = Vec::new();
    let mut first_error = None;
    let mut next = 0;
    while next < cmds.len() || !running.is_empty() {
        if next < cmds.len() && running.len() < jobs && first_error.is_none() {
            match spawn(&mut cmds[next], module, missing) {
                Ok(child) => running.push((child, next)),
                Err(e) => first_error = Some(e),
            }
            next += 1;
            continue;
        }
        if running.is_empty() {
            break;
        }
        let (child, i) = running.remove(0);
        if let Err(e) = finish(child, &cmds[i], module) {
            first_error.get_or_insert(e);
        }
    }
    first_error.map_or(Ok(()), Err)
}
