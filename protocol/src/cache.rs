//! What mcmvm's on-disk caches (the Verilator models, the synthesis results, the co-design
//! points) share: where they live by default, and the hash that keys their entries —
//! 64-bit FNV-1a, each part prefixed with its length, so parts cannot run into each other
//! (`ab`,`c` and `a`,`bc` hash differently). Not cryptographic: it only has to tell builds
//! apart, and every input is ours.

use std::path::{Path, PathBuf};

/// The workspace's target directory (the one this crate was built into), where the caches
/// live unless their environment variable says otherwise; `cargo clean` empties it.
pub fn target_dir() -> PathBuf {
    let workspace = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."));
    match option_env!("CARGO_TARGET_DIR") {
        // Cargo reads a relative target dir from where it runs, usually the workspace.
        Some(dir) => workspace.join(dir),
        None => workspace.join("target"),
    }
}

/// An FNV-1a hash in progress; [`Fnv::value`] reads it.
#[derive(Debug, Clone, Copy)]
pub struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Fnv {
        Fnv::new()
    }
}

impl Fnv {
    /// The offset basis (the hash of nothing).
    pub fn new() -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325)
    }

    /// Fold in raw bytes (no length prefix).
    pub fn bytes(&mut self, bytes: &[u8]) -> &mut Fnv {
        for &b in bytes {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
        self
    }

    /// Fold in one part, prefixed with its length.
    pub fn part(&mut self, part: &str) -> &mut Fnv {
        self.bytes(&(part.len() as u64).to_le_bytes());
        self.bytes(part.as_bytes())
    }

    /// Fold in a list of parts, prefixed with how many there are.
    pub fn parts(&mut self, parts: &[&str]) -> &mut Fnv {
        self.part(&parts.len().to_string());
        for p in parts {
            self.part(p);
        }
        self
    }

    /// The hash so far.
    pub fn value(&self) -> u64 {
        self.0
    }
}

/// The hash of `parts` (length-prefixed, as every cache key).
pub fn fnv(parts: &[&str]) -> u64 {
    Fnv::new().parts(parts).value()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hash_separates_parts_and_is_stable() {
        assert_ne!(fnv(&["ab", "c"]), fnv(&["a", "bc"]));
        assert_ne!(fnv(&["a"]), fnv(&["a", ""]));
        // FNV-1a of the empty string is its offset basis; of "a", the published value.
        assert_eq!(Fnv::new().value(), 0xcbf2_9ce4_8422_2325);
        assert_eq!(Fnv::new().bytes(b"a").value(), 0xaf63_dc4c_8601_ec8c);
    }
}
