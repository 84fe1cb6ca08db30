//! One fuzz target per kind of file a user brings: how to make inputs, how to feed one to
//! the real parser, and what its rejection must look like.

mod accelsim;
mod config;
mod nvbit;
mod trace;
mod vcd;

use crate::runner::FailureKind;
use crate::Input;
use rand_chacha::ChaCha8Rng;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Mutex;

/// What the parser made of an input that broke no property.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Accepted,
    Rejected,
}

pub type Outcome = Result<Verdict, (FailureKind, String)>;

pub trait Target: Sync {
    /// The name `make fuzz` prints and `--target` takes.
    fn name(&self) -> &'static str;
    /// Input from `rng` alone: generated from the format's structure or a mutated fixture.
    fn generate(&self, rng: &mut ChaCha8Rng) -> Input;
    /// Feed the input written in `dir` to the parser; a broken property is an `Err`.
    fn run(&self, dir: &Path) -> Outcome;
}

/// Every target, in the order `make fuzz` runs them.
pub static TARGETS: &[&dyn Target] = &[
    &trace::McmvmTrace,
    &accelsim::AccelSim,
    &nvbit::Nvbit,
    &config::GPU,
    &config::UVM,
    &config::HW,
    &vcd::Vcd,
];

/// The target called `name`.
pub fn by_name(name: &str) -> Option<(usize, &'static dyn Target)> {
    TARGETS
        .iter()
        .enumerate()
        .find(|(_, t)| t.name() == name)
        .map(|(i, t)| (i, *t))
}

/// A rejection is fine when its message is one line naming `file` (and, when `line` is
/// given, that line as `file:LINE:`).
pub fn rejection(message: &str, file: &Path, line: Option<u64>) -> Outcome {
    static SHOW: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    if *SHOW.get_or_init(|| std::env::var_os("MCMVM_FUZZ_SHOW").is_some()) {
        eprintln!("rejected: {message}");
    }
    let name = file.display().to_string();
    let bad = |why: &str| Err((FailureKind::Message, format!("{why}: {message:?}")));
    if message.contains('\n') {
        return bad("the message spans several lines");
    }
    if !message.contains(&name) {
        return bad(&format!("the message does not name the file `{name}`"));
    }
    if let Some(l) = line {
        if !message.contains(&format!("{name}:{l}:")) {
            return bad(&format!("the message does not name line {l}"));
        }
    }
    Ok(Verdict::Rejected)
}

/// A shipped fixture's bytes (`rel` from the workspace root), read once.
pub fn fixture(rel: &str) -> Vec<u8> {
    static CACHE: Mutex<BTreeMap<String, Vec<u8>>> = Mutex::new(BTreeMap::new());
    let mut cache = CACHE.lock().unwrap_or_else(|p| p.into_inner());
    cache
        .entry(rel.to_string())
        .or_insert_with(|| {
            let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(rel);
            std::fs::read(&path).unwrap_or_else(|e| panic!("fixture {}: {e}", path.display()))
        })
        .clone()
}

/// xz-compress `bytes` (level 1: fast).
pub fn xz(bytes: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut e = xz2::write::XzEncoder::new(Vec::new(), 1);
    e.write_all(bytes).expect("xz into memory");
    e.finish().expect("xz into memory")
}

/// gzip-compress `bytes`.
pub fn gzip(bytes: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(bytes).expect("gzip into memory");
    e.finish().expect("gzip into memory")
}

/// Decompress a fixture for mutation.
pub fn unxz(bytes: &[u8]) -> Vec<u8> {
    use std::io::Read;
    let mut out = Vec::new();
    xz2::read::XzDecoder::new(bytes)
        .read_to_end(&mut out)
        .expect("fixture is xz");
    out
}
