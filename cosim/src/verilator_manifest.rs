//! The manifest of a Verilator model's cache entry: the SHA-256 and length of every file in
//! it, the Verilator version that built it and the entry's name (which carries the hash of
//! everything that keys it). It is written last, through a temporary file renamed into
//! place, so an entry without one is half-written. Before an entry is served the manifest
//! and every file are checked; an entry that fails is rebuilt, with one line on stderr
//! saying why (`verilator_cache::model`).

use crate::error::CosimError;
use sha2::{Digest, Sha256};
use std::fmt::Write as _;
use std::io::Read;
use std::path::{Path, PathBuf};

/// The manifest's file name in an entry.
pub(crate) const MANIFEST: &str = "manifest.txt";
/// The manifest's first line; bump when its layout changes.
const HEADER: &str = "mcmvm-verilator-manifest-1";

/// Why a cache entry cannot be served.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum Stale {
    #[error("no manifest (a build that did not finish)")]
    NoManifest,
    #[error("unreadable manifest")]
    BadManifest,
    #[error("built by Verilator `{found}`, this is `{current}`")]
    OtherVerilator { found: String, current: String },
    #[error("the manifest belongs to entry `{0}`")]
    OtherEntry(String),
    #[error("`{0}` is missing")]
    Missing(String),
    #[error("`{file}` has {found} bytes, the manifest says {expected} (truncated?)")]
    Length {
        file: String,
        found: u64,
        expected: u64,
    },
    #[error("`{0}` does not match its hash in the manifest (corrupted)")]
    Corrupted(String),
}

/// Every file under `dir` but the manifest, relative to `dir`, sorted.
fn files(dir: &Path) -> Result<Vec<PathBuf>, CosimError> {
    let mut out = Vec::new();
    let mut todo = vec![PathBuf::new()];
    while let Some(rel) = todo.pop() {
        let here = dir.join(&rel);
        let entries = std::fs::read_dir(&here).map_err(|io| CosimError::Cache {
            path: here.clone(),
            io,
        })?;
        for e in entries {
            let e = e.map_err(|io| CosimError::Cache {
                path: here.clone(),
                io,
            })?;
            let path = rel.join(e.file_name());
            let kind = e.file_type().map_err(|io| CosimError::Cache {
                path: dir.join(&path),
                io,
            })?;
            if kind.is_dir() {
                todo.push(path);
            } else if path != Path::new(MANIFEST) {
                out.push(path);
            }
        }
    }
    out.sort();
    Ok(out)
}

/// SHA-256 (hex) and length of `file`.
fn digest(file: &Path) -> std::io::Result<(String, u64)> {
    let mut f = std::fs::File::open(file)?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    let mut len = 0u64;
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
        len += n as u64;
    }
    let hex = h.finalize().iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    });
    Ok((hex, len))
}

/// Write the manifest of the finished build in `dir`, to be published as entry `entry`.
pub(crate) fn write(dir: &Path, entry: &str, version: &str) -> Result<(), CosimError> {
    let mut text = format!("{HEADER}\nentry\t{entry}\nverilator\t{version}\n");
    for rel in files(dir)? {
        let path = dir.join(&rel);
        let (hash, len) = digest(&path).map_err(|io| CosimError::Cache { path, io })?;
        let _ = writeln!(text, "file\t{hash}\t{len}\t{}", rel.display());
    }
    let tmp = dir.join(format!(".{MANIFEST}.tmp"));
    std::fs::write(&tmp, text).map_err(|io| CosimError::Cache {
        path: tmp.clone(),
        io,
    })?;
    let manifest = dir.join(MANIFEST);
    std::fs::rename(&tmp, &manifest).map_err(|io| CosimError::Cache { path: manifest, io })
}

/// Check entry `dir` against its manifest, for Verilator `version`.
pub(crate) fn verify(dir: &Path, version: &str) -> Result<(), Stale> {
    let text = match std::fs::read_to_string(dir.join(MANIFEST)) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(Stale::NoManifest),
        Err(_) => return Err(Stale::BadManifest),
    };
    let mut lines = text.lines();
    if lines.next() != Some(HEADER) {
        return Err(Stale::BadManifest);
    }
    let field = |line: Option<&str>, name: &str| -> Result<String, Stale> {
        line.and_then(|l| l.strip_prefix(name))
            .and_then(|l| l.strip_prefix('\t'))
            .map(str::to_string)
            .ok_or(Stale::BadManifest)
    };
    let entry = field(lines.next(), "entry")?;
    let found = field(lines.next(), "verilator")?;
    let name = dir.file_name().map(|n| n.to_string_lossy().into_owned());
    if name.as_deref() != Some(entry.as_str()) {
        return Err(Stale::OtherEntry(entry));
    }
    if found != version {
        return Err(Stale::OtherVerilator {
            found,
            current: version.to_string(),
        });
    }
    for line in lines {
        let mut parts = line.splitn(4, '\t');
        let (Some("file"), Some(hash), Some(len), Some(rel)) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(Stale::BadManifest);
        };
        let expected: u64 = len.parse().map_err(|_| Stale::BadManifest)?;
        let path = dir.join(rel);
        let actual = match std::fs::metadata(&path) {
            Ok(m) => m.len(),
            Err(_) => return Err(Stale::Missing(rel.to_string())),
        };
        if actual != expected {
            return Err(Stale::Length {
                file: rel.to_string(),
                found: actual,
                expected,
            });
        }
        match digest(&path) {
            Ok((h, _)) if h == hash => {}
            _ => return Err(Stale::Corrupted(rel.to_string())),
        }
    }
    Ok(())
}
