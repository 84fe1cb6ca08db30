//! The on-disk cache of Verilator models: one directory per (module, hash), the hash over
//! everything that goes into the build (emitted Verilog, harness, shim, `verilator --version`,
//! the compile flags), so the same parameters are verilated and compiled once and any change
//! gets a build of its own. Verilator's runtime is compiled once per Verilator version into
//! `-fPIC` objects that every block library links.
//!
//! Many test threads and several processes may ask for the same model at once: they take
//! a lock file per entry (`locks/<entry>`, `flock` through `File::lock`), so one builds and
//! the others find its build. The build goes into a unique temporary directory, gets its
//! manifest last (`verilator_manifest`) and is renamed into place, so a process killed
//! mid-build leaves no entry. Nothing is served unchecked: an entry whose files do not
//! match its manifest (truncated, corrupted), that has none (half-written by hand or by an
//! older layout) or that another Verilator version built is rebuilt, with one line on
//! stderr saying why.

/// A progress line about a model build on stderr, unless `MCMVM_QUIET` is set (the CLI's
/// `--quiet`). Verilator's warnings are printed regardless.
macro_rules! announce {
    ($($arg:tt)*) => {
        if std::env::var_os("MCMVM_QUIET").is_none() {
            eprintln!($($arg)*);
        }
    };
}

use crate::error::CosimError;
use crate::verilator_build::{
    build_runtime, compile, library_name, verilate, Sources, Tools, CXX_FLAGS, LINK_FLAGS,
    RUNTIME_SOURCES, VERILATOR_FLAGS,
};
use crate::verilator_manifest::{self as manifest, Stale};
use mcmvm_protocol::cache::Fnv;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// Environment variable naming the cache root.
pub const CACHE_ENV: &str = "MCMVM_VERILATOR_CACHE";

/// Bump when the layout of a cache directory or the way it is built changes (2: entries
/// carry a manifest; older entries are left alone rather than rebuilt as "half-written").
const FORMAT: &str = "mcmvm-verilator-cache-2";

/// The cache root: `$MCMVM_VERILATOR_CACHE`, else `verilator-models/` in the workspace's
/// target directory (the one this crate was built into), which `cargo clean` empties.
pub fn cache_root() -> PathBuf {
    match std::env::var_os(CACHE_ENV) {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => default_cache_root(),
    }
}

fn default_cache_root() -> PathBuf {
    mcmvm_protocol::cache::target_dir().join("verilator-models")
}

/// Where a model is and whether this call built it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Cached {
    /// The model's cache directory.
    pub dir: PathBuf,
    /// Its shared library.
    pub library: PathBuf,
    /// Whether this call verilated and compiled it (false: it was in the cache).
    pub built: bool,
    /// Why this call rebuilt an entry it found in the cache.
    pub stale: Option<Stale>,
}

/// The cache directory of `src`'s model under `root`, building it on first use.
pub(crate) fn model(src: &Sources, tools: &Tools, root: &Path) -> Result<Cached, CosimError> {
    let version = crate::verilator_memo::verilator_version(tools, root, src.module)?;
    let name = entry_name(src, &version);
    let dir = root.join(&name);
    let library = dir.join(library_name(src.module));
    let found = |stale| Cached {
        dir: dir.clone(),
        library: library.clone(),
        built: false,
        stale,
    };
    if dir.is_dir() && manifest::verify(&dir, &version).is_ok() {
        return Ok(found(None));
    }
    create_root(root)?;
    // One build per entry: whoever waited here finds the entry built by the holder.
    let _lock = lock_entry(root, &name)?;
    let stale = match manifest::verify(&dir, &version) {
        Ok(()) => return Ok(found(None)),
        Err(_) if !dir.exists() => None,
        Err(why) => {
            eprintln!("verilator cache: {name}: {why}; rebuilding");
            discard(root, &dir)?;
            Some(why)
        }
    };
    let built = build_entry(src, tools, root, &version, (&name, &dir))?;
    Ok(Cached {
        dir,
        library,
        built,
        stale,
    })
}

/// The entry's directory name: the module and a hash of everything that goes into it.
fn entry_name(src: &Sources, version: &str) -> String {
    let hash = Fnv::new()
        .part(FORMAT)
        .part(&src.verilog)
        .part(&src.harness)
        .part(&src.shim)
        .part(version)
        .parts(VERILATOR_FLAGS)
        .parts(CXX_FLAGS)
        .parts(LINK_FLAGS)
        .value();
    format!("{}-{hash:016x}", src.module)
}

/// Build the entry in a temporary directory and publish it as `dir` (the entry's lock
/// held); whether this process's build was the one published.
fn build_entry(
    src: &Sources,
    tools: &Tools,
    root: &Path,
    version: &str,
    (name, dir): (&str, &Path),
) -> Result<bool, CosimError> {
    announce!(
        "verilator: building {} for {} (first use; cached in {})",
        src.module,
        src.params,
        dir.display()
    );
    let start = Instant::now();
    let tmp = temp_dir(root, src.module)?;
    let warnings = build(src, tools, root, version, &tmp)
        .and_then(|w| manifest::write(&tmp, name, version).map(|()| w))
        .inspect_err(|_| {
            let _ = std::fs::remove_dir_all(&tmp);
        })?;
    let built = publish(&tmp, dir, &dir.join(manifest::MANIFEST))?;
    announce!(
        "verilator: built {} in {:.1} s ({} warning(s){})",
        src.module,
        start.elapsed().as_secs_f64(),
        warnings.len(),
        if built {
            ""
        } else {
            "; another process finished first, using its build"
        }
    );
    Ok(built)
}

/// The lock of entry `name` under `root`, held until dropped (`flock`: released by the
/// system if the process dies).
fn lock_entry(root: &Path, name: &str) -> Result<std::fs::File, CosimError> {
    // Kept beside the entries, never deleted: a waiter may hold the file open.
    let locks = root.join("locks");
    create_root(&locks)?;
    let path = locks.join(name);
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|io| CosimError::Cache {
            path: path.clone(),
            io,
        })?;
    file.lock().map_err(|io| CosimError::Cache { path, io })?;
    Ok(file)
}

/// Move the stale entry `dir` out of the way (atomically, so no reader sees half of it)
/// and delete it.
fn discard(root: &Path, dir: &Path) -> Result<(), CosimError> {
    let aside = temp_dir(root, "stale")?;
    // Renaming onto the empty directory just made replaces it.
    std::fs::rename(dir, &aside).map_err(|io| CosimError::Cache {
        path: dir.to_path_buf(),
        io,
    })?;
    let _ = std::fs::remove_dir_all(&aside);
    Ok(())
}

/// Verilate and compile `src` into `tmp`. Verilator runs first, so a Verilog error is
/// reported before the runtime is compiled; its warnings are shown as soon as it ends.
fn build(
    src: &Sources,
    tools: &Tools,
    root: &Path,
    version: &str,
    tmp: &Path,
) -> Result<Vec<String>, CosimError> {
    let warnings = verilate(src, tools, tmp)?;
    // Shown on the first build only, and kept in warnings.txt for later.
    for line in &warnings {
        eprintln!("verilator: {}: {line}", src.module);
    }
    let include = tools.verilator_include(src.module)?;
    let objects = runtime(tools, &include, version, root)?;
    compile(src.module, tools, &include, &objects, tmp)?;
    Ok(warnings)
}

/// Verilator's runtime objects under `root`, compiled on first use.
fn runtime(
    tools: &Tools,
    include: &Path,
    version: &str,
    root: &Path,
) -> Result<Vec<PathBuf>, CosimError> {
    let hash = Fnv::new()
        .part(FORMAT)
        .part(version)
        .part(&include.to_string_lossy())
        .parts(CXX_FLAGS)
        .value();
    let dir = root.join(format!("verilated-runtime-{hash:016x}"));
    let objects: Vec<PathBuf> = RUNTIME_SOURCES
        .iter()
        .map(|name| dir.join(Path::new(name).with_extension("o")))
        .collect();
    if objects.iter().all(|o| o.is_file()) {
        return Ok(objects);
    }
    announce!(
        "verilator: compiling Verilator's runtime (once per Verilator version; cached in {})",
        dir.display()
    );
    let start = Instant::now();
    let tmp = temp_dir(root, "verilated-runtime")?;
    build_runtime(tools, include, &tmp).inspect_err(|_| {
        let _ = std::fs::remove_dir_all(&tmp);
    })?;
    publish(&tmp, &dir, &objects[0])?;
    announce!(
        "verilator: compiled Verilator's runtime in {:.1} s",
        start.elapsed().as_secs_f64()
    );
    Ok(objects)
}

fn create_root(root: &Path) -> Result<(), CosimError> {
    std::fs::create_dir_all(root).map_err(|io| CosimError::Cache {
        path: root.to_path_buf(),
        io,
    })
}

/// A new, empty directory under `root` that no other thread or process uses. Its name
/// starts with `.tmp-`; one left behind by a killed build is never read, only wasted space.
fn temp_dir(root: &Path, stem: &str) -> Result<PathBuf, CosimError> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    create_root(root)?;
    loop {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let dir = root.join(format!(".tmp-{stem}-{}-{n}", std::process::id()));
        match std::fs::create_dir(&dir) {
            Ok(()) => return Ok(dir),
            // Left by an earlier process that had the same id.
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(io) => return Err(CosimError::Cache { path: dir, io }),
        }
    }
}

/// Rename the finished build `tmp` to `dir`. Returns false when another thread or process
/// got there first (`dir` exists and holds `marker`, a file every finished build has): its
/// build is used and ours deleted.
fn publish(tmp: &Path, dir: &Path, marker: &Path) -> Result<bool, CosimError> {
    match std::fs::rename(tmp, dir) {
        Ok(()) => Ok(true),
        Err(io) => {
            let _ = std::fs::remove_dir_all(tmp);
            if marker.is_file() {
                Ok(false)
            } else {
                Err(CosimError::Cache {
                    path: dir.to_path_buf(),
                    io,
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_root_is_in_the_target_dir() {
        let root = default_cache_root();
        assert!(root.ends_with("verilator-models"), "{}", root.display());
    }
}

#[cfg(test)]
#[path = "verilator_cache_tests.rs"]
mod entry_tests;
