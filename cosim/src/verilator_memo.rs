//! Two memos beside the Verilator model cache, so that loading an already built model costs
//! neither a Perl start nor an emission of the block's Verilog:
//!
//! - `verilator --version` is a Perl script that takes a quarter of a second to start; its
//!   answer is kept per (resolved path, size, modification time) of the program, so an
//!   upgraded Verilator is asked again.
//! - The cache key of a model is a hash of its emitted Verilog, and emitting a block through
//!   rust-hdl takes a fifth of a second. The emitted text is a pure function of the program
//!   that emits it and the block's parameters, so the model directory found for (this
//!   executable's path, size and modification time, block, parameters, ports, Verilator
//!   version) is kept; a rebuilt executable gets new entries.
//!
//! Both are best effort: an unreadable or unwritable memo only means the slow path runs.
//! A memo never names a model that is not in the cache: the library is checked before use.

use crate::verilator_build::Tools;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

/// Subdirectory of the cache root holding the memos.
const MEMO_DIR: &str = "memo";

/// `path`'s identity for a memo: its path, size and modification time.
fn identity(path: &Path) -> Option<String> {
    let meta = std::fs::metadata(path).ok()?;
    let mtime = meta.modified().ok()?.duration_since(UNIX_EPOCH).ok()?;
    Some(format!(
        "{}|{}|{}.{:09}",
        path.display(),
        meta.len(),
        mtime.as_secs(),
        mtime.subsec_nanos()
    ))
}

/// The file `program` names: itself when it holds a `/`, else the first match on `PATH`.
fn resolve(program: &str) -> Option<PathBuf> {
    if program.contains('/') {
        return Some(PathBuf::from(program));
    }
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join(program))
        .find(|p| p.is_file())
}

fn memo_file(root: &Path, stem: &str, key: &str) -> PathBuf {
    let hash = mcmvm_protocol::cache::fnv(&[key]);
    root.join(MEMO_DIR).join(format!("{stem}-{hash:016x}.txt"))
}

/// The memo's first line holds the key (so a hash collision reads as a miss), the second
/// the value.
fn read(file: &Path, key: &str) -> Option<String> {
    let text = std::fs::read_to_string(file).ok()?;
    let (stored, value) = text.split_once('\n')?;
    (stored == key).then(|| value.trim_end_matches('\n').to_string())
}

/// Write through a private temporary file and rename it into place, so a reader never sees
/// half a memo.
fn write(file: &Path, key: &str, value: &str) {
    let Some(dir) = file.parent() else { return };
    if std::fs::create_dir_all(dir).is_err() {
        return;
    }
    let tmp = dir.join(format!(
        ".tmp-{}-{}",
        std::process::id(),
        file.file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
    ));
    if std::fs::write(&tmp, format!("{key}\n{value}\n")).is_ok()
        && std::fs::rename(&tmp, file).is_err()
    {
        let _ = std::fs::remove_file(&tmp);
    }
}

/// `tools.verilator --version`, from the memo under `root` when the program is unchanged.
pub(crate) fn verilator_version(
    tools: &Tools,
    root: &Path,
    module: &'static str,
) -> Result<String, crate::error::CosimError> {
    let Some(key) = resolve(&tools.verilator)
        .as_deref()
        .and_then(identity)
        .map(|id| format!("verilator-version|{id}"))
    else {
        // Not found: asking it gives the error that says what to install.
        return tools.verilator_version(module);
    };
    let file = memo_file(root, "verilator-version", &key);
    if let Some(version) = read(&file, &key).filter(|v| !v.is_empty()) {
        return Ok(version);
    }
    let version = tools.verilator_version(module)?;
    write(&file, &key, &version);
    Ok(version)
}

/// The key of a model's emission memo, or `None` when this executable cannot be identified.
pub(crate) fn emission_key(block_key: &str, version: &str) -> Option<String> {
    let exe = identity(&std::env::current_exe().ok()?)?;
    Some(format!("emitted|{exe}|{block_key}|{version}"))
}

/// The model library the memo names for `key`, if it is still in the cache.
pub(crate) fn library_for(root: &Path, key: &str) -> Option<PathBuf> {
    let relative = read(&memo_file(root, "emitted", key), key)?;
    let library = root.join(relative);
    library.is_file().then_some(library)
}

/// Remember that `key` is the model whose library is `library` (a path under `root`).
pub(crate) fn remember_library(root: &Path, key: &str, library: &Path) {
    if let Ok(relative) = library.strip_prefix(root) {
        write(
            &memo_file(root, "emitted", key),
            key,
            &relative.to_string_lossy(),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("mcmvm-memo-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("scratch dir");
        dir
    }

    #[test]
    fn a_memo_returns_what_was_stored_under_its_own_key_only() {
        let root = scratch("roundtrip");
        let lib = root.join("block-0123/libmcmvm_block.so");
        std::fs::create_dir_all(lib.parent().expect("parent")).expect("mkdir");
        assert_eq!(library_for(&root, "k1"), None);
        remember_library(&root, "k1", &lib);
        // Not a file yet: a memo never names a model that is not there.
        assert_eq!(library_for(&root, "k1"), None);
        std::fs::write(&lib, b"").expect("write");
        assert_eq!(library_for(&root, "k1"), Some(lib.clone()));
        assert_eq!(library_for(&root, "k2"), None);
        // A memo file whose key line differs (a hash collision) reads as a miss.
        let file = memo_file(&root, "emitted", "k2");
        std::fs::write(file, "other\nblock-0123/libmcmvm_block.so\n").expect("write");
        assert_eq!(library_for(&root, "k2"), None);
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn a_missing_verilator_is_still_reported_as_missing() {
        let root = scratch("missing");
        let tools = Tools {
            verilator: "mcmvm-no-such-verilator".to_string(),
            gxx: "g++".to_string(),
        };
        let err = verilator_version(&tools, &root, "remote_tracker").expect_err("missing");
        assert!(
            err.to_string().contains("apt-get install verilator"),
            "{err}"
        );
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn the_executable_is_part_of_the_emission_key() {
        let key = emission_key("remote_tracker|entries=32", "Verilator 5").expect("exe");
        let exe = std::env::current_exe().expect("exe");
        assert!(key.contains(&exe.display().to_string()), "{key}");
    }
}
