//! Builds the Verilator engine: emits each block's Verilog with `mcmvm-rtl` (from the
//! parameters in `configs/hw.toml`), wraps it unchanged in a generated input-capture harness
//! (`build/shim.rs` says why), runs `verilator --cc` on both, generates a small C++ shim
//! per block from the port lists of `mcmvm_models::protocol`, and compiles everything plus
//! Verilator's runtime (once, for all blocks) with the `cc` crate.
//!
//! Nothing here fails the build when Verilator is missing or one block does not translate:
//! the reason is printed as a cargo warning and compiled into the crate, and the Verilator
//! engine of that block returns it as an error at run time. The other engines keep working.
//!
//! Output in `OUT_DIR`: `verilator_bindings.rs` (included by `src/verilator.rs`),
//! `hw_built.toml` (the parameters the models were built for), `verilog/<module>.v`,
//! `obj_<module>/` (Verilator's C++ and the shim).

#[path = "build/shim.rs"]
mod shim;

use mcmvm_models::config::HwConfig;
use mcmvm_models::protocol::{AttIn, AttOut, BlockKind, CoalIn, CoalOut, Ports, RtIn, RtOut};
use shim::{BlockPorts, BlockStatus};
use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets it"));
    let root = manifest
        .parent()
        .expect("cosim/ sits in the workspace")
        .to_path_buf();
    let hw_toml = root.join("configs/hw.toml");
    for watched in ["rtl/src", "rust-models/src/protocol.rs", "configs/hw.toml"] {
        println!("cargo:rerun-if-changed={}", root.join(watched).display());
    }
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=build/shim.rs");
    println!("cargo:rerun-if-env-changed=PATH");

    let cfg = load_config(&hw_toml);
    let built_toml = toml::to_string(&cfg).expect("HwConfig serialises");
    std::fs::write(out.join("hw_built.toml"), built_toml).expect("OUT_DIR is writable");

    let blocks = [
        BlockPorts::of::<RtIn, RtOut>(BlockKind::RemoteTracker),
        BlockPorts::of::<CoalIn, CoalOut>(BlockKind::TlbCoalescer),
        BlockPorts::of::<AttIn, AttOut>(BlockKind::AccessTimeTracker),
    ];
    let statuses: Vec<BlockStatus> = match verilator_root() {
        Err(reason) => {
            println!("cargo:warning={reason}");
            blocks
                .iter()
                .map(|_| BlockStatus::Unavailable(reason.clone()))
                .collect()
        }
        Ok(vroot) => build_blocks(&blocks, &cfg, &out, &vroot),
    };
    let bindings = shim::rust_bindings(&blocks, &statuses);
    std::fs::write(out.join("verilator_bindings.rs"), bindings).expect("OUT_DIR is writable");
}

/// The parameters to build for: `configs/hw.toml`, or the defaults when it does not exist.
/// A malformed file stops the build with its message (file, line, key).
fn load_config(path: &Path) -> HwConfig {
    if !path.exists() {
        println!(
            "cargo:warning={} not found: Verilator models built for the default parameters",
            path.display()
        );
        return HwConfig::default();
    }
    match HwConfig::load(path) {
        Ok(cfg) => cfg,
        Err(e) => panic!("{e}"),
    }
}

/// Verilator's install root (holding `include/verilated.cpp`), or why it is unusable.
fn verilator_root() -> Result<PathBuf, String> {
    const MISSING: &str = "verilator not found: install it (apt-get install verilator, or \
                           `make deps`) and rebuild";
    let output = match Command::new("verilator")
        .arg("--getenv")
        .arg("VERILATOR_ROOT")
        .output()
    {
        Ok(o) if o.status.success() => o,
        _ => return Err(MISSING.to_string()),
    };
    let root = PathBuf::from(String::from_utf8_lossy(&output.stdout).trim());
    if root.join("include/verilated.cpp").exists() {
        Ok(root)
    } else {
        Err(format!(
            "verilator found but {} has no include/verilated.cpp: reinstall it \
             (apt-get install --reinstall verilator) and rebuild",
            root.display()
        ))
    }
}

/// Emit, verilate and shim every block, then compile the ones that made it plus the
/// runtime into one static library.
fn build_blocks(
    blocks: &[BlockPorts],
    cfg: &HwConfig,
    out: &Path,
    vroot: &Path,
) -> Vec<BlockStatus> {
    let verilog_dir = out.join("verilog");
    std::fs::create_dir_all(&verilog_dir).expect("OUT_DIR is writable");
    let mut statuses = Vec::new();
    let mut sources: Vec<PathBuf> = Vec::new();
    let mut includes: Vec<PathBuf> = Vec::new();
    for block in blocks {
        match verilate_block(block, cfg, &verilog_dir, out) {
            Ok((mdir, mut cpp)) => {
                sources.append(&mut cpp);
                includes.push(mdir);
                statuses.push(BlockStatus::Built);
            }
            Err(reason) => {
                for line in reason.lines() {
                    println!("cargo:warning={}: {line}", block.module);
                }
                statuses.push(BlockStatus::Unavailable(reason));
            }
        }
    }
    if sources.is_empty() {
        return statuses;
    }
    let include = vroot.join("include");
    let mut build = cc::Build::new();
    build
        .cpp(true)
        .flag("-std=gnu++17")
        // Verilator's own makefile silences these for generated code (CFG_CXXFLAGS_NO_UNUSED).
        .flag_if_supported("-faligned-new")
        .flag_if_supported("-Wno-unused-parameter")
        .flag_if_supported("-Wno-unused-variable")
        .flag_if_supported("-Wno-unused-but-set-variable")
        .flag_if_supported("-Wno-sign-compare")
        .flag_if_supported("-Wno-bool-operation")
        .flag_if_supported("-Wno-shadow")
        // The model is the hot loop of the lockstep; -O0 (the dev profile) would make the
        // Verilator engine the slowest of the three.
        .opt_level(2)
        .debug(false)
        .define("VM_COVERAGE", "0")
        .define("VM_SC", "0")
        .define("VM_TRACE", "0")
        .define("VM_TRACE_FST", "0")
        .define("VM_TRACE_VCD", "0")
        .include(&include)
        .include(include.join("vltstd"))
        // Verilator's runtime, compiled once for every block.
        .file(include.join("verilated.cpp"))
        .file(include.join("verilated_threads.cpp"));
    for dir in &includes {
        build.include(dir);
    }
    for src in &sources {
        build.file(src);
    }
    build.compile("mcmvm_verilated");
    statuses
}

/// Emit one block's Verilog, run `verilator --cc` on it and write its shim. Returns the
/// object directory and the C++ files to compile, or the reason (with Verilator's stderr).
fn verilate_block(
    block: &BlockPorts,
    cfg: &HwConfig,
    verilog_dir: &Path,
    out: &Path,
) -> Result<(PathBuf, Vec<PathBuf>), String> {
    let text = mcmvm_rtl::emit::verilog(block.kind, cfg)
        .map_err(|e| format!("Verilog emission failed: {e}"))?;
    let vfile = verilog_dir.join(format!("{}.v", block.module));
    std::fs::write(&vfile, text).map_err(|e| format!("{}: {e}", vfile.display()))?;
    let harness = verilog_dir.join(format!("{}.v", shim::harness_module(block.module)));
    std::fs::write(&harness, shim::harness_verilog(block))
        .map_err(|e| format!("{}: {e}", harness.display()))?;
    let mdir = out.join(format!("obj_{}", block.module));
    // Stale files from an earlier run would be compiled too; start clean.
    let _ = std::fs::remove_dir_all(&mdir);
    let result = Command::new("verilator")
        .args(["--cc", "-O3", "--x-assign", "fast", "--x-initial", "fast"])
        // Warnings (WIDTH above all) are printed as cargo warnings, never silenced; they
        // do not stop the model from being built, so the lockstep can show what they cause.
        .arg("-Wno-fatal")
        .arg("--prefix")
        .arg(format!("V{}", block.module))
        .arg("--top-module")
        .arg(shim::harness_module(block.module))
        .arg("-Mdir")
        .arg(&mdir)
        .arg(&harness)
        .arg(&vfile)
        .output()
        .map_err(|e| format!("cannot run verilator: {e}"))?;
    let stderr = String::from_utf8_lossy(&result.stderr);
    if !result.status.success() {
        return Err(format!(
            "verilator --cc failed on {} ({}):\n{}",
            vfile.display(),
            result.status,
            stderr.trim_end()
        ));
    }
    for line in stderr.lines().filter(|l| l.starts_with("%Warning")) {
        println!("cargo:warning={}: {line}", block.module);
    }
    let shim_path = mdir.join(format!("mcmvm_shim_{}.cpp", block.module));
    std::fs::write(&shim_path, shim::cpp_shim(block))
        .map_err(|e| format!("{}: {e}", shim_path.display()))?;
    let mut cpp: Vec<PathBuf> = std::fs::read_dir(&mdir)
        .map_err(|e| format!("{}: {e}", mdir.display()))?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "cpp"))
        .collect();
    cpp.sort();
    Ok((mdir, cpp))
}

/// Port lists of a block's input and output sets, as the shim generator needs them.
impl BlockPorts {
    fn of<I: Ports, O: Ports>(kind: BlockKind) -> BlockPorts {
        BlockPorts {
            kind,
            module: kind.module_name(),
            inputs: I::PORTS.iter().map(|p| (p.name, p.width)).collect(),
            outputs: O::PORTS.iter().map(|p| (p.name, p.width)).collect(),
        }
    }
}
