//! Fuzzing every parser a user's file reaches (issue #40): mcmvm traces, Accel-Sim trace
//! directories (plain and xz), NVBit mem_trace output, the GPU / UVM / hardware TOML
//! configs and recorded VCD stimulus. Properties, per input: no panic, no hang, peak heap
//! bounded by a multiple of the input's size plus a constant, and a rejection is one line
//! naming the file (and the line, where the format has lines). `make fuzz` runs it at
//! scale; `tests/suite` runs a fixed-seed slice and every input saved in `regressions/`.

pub mod alloc;
pub mod mutate;
pub mod runner;
pub mod targets;

#[global_allocator]
static ALLOCATOR: alloc::Counting = alloc::Counting;

/// One input: files to write into an empty directory, and the size the memory bound uses
/// (the text before any compression).
#[derive(Debug, Clone, Default)]
pub struct Input {
    pub files: Vec<(String, Vec<u8>)>,
    pub logical_bytes: u64,
}

impl Input {
    /// One file, uncompressed.
    pub fn single(name: &str, bytes: Vec<u8>) -> Input {
        Input {
            logical_bytes: bytes.len() as u64,
            files: vec![(name.to_string(), bytes)],
        }
    }
}

/// One regression case run again: its target, its directory name, the outcome, peak bytes.
pub struct RegressionRun {
    pub target: &'static str,
    pub case: String,
    pub outcome: targets::Outcome,
    pub peak_bytes: u64,
}

/// The size the memory bound uses for a saved file: its text, decompressed.
fn logical_len(name: &str, bytes: &[u8]) -> u64 {
    use std::io::Read;
    let mut out = Vec::new();
    let read = if name.ends_with(".xz") {
        xz2::read::XzDecoder::new(bytes).read_to_end(&mut out)
    } else if name.ends_with(".gz") {
        flate2::read::GzDecoder::new(bytes).read_to_end(&mut out)
    } else {
        return bytes.len() as u64;
    };
    read.map_or(bytes.len() as u64, |n| n.max(bytes.len()) as u64)
}

/// Run the inputs saved under `root/<target>/<case>/` again (each case a directory holding
/// the input's files), each on its own thread so that a hang past `hang_limit` is reported
/// rather than waited for.
pub fn run_regressions(
    root: &std::path::Path,
    hang_limit: std::time::Duration,
) -> Vec<RegressionRun> {
    let mut out = Vec::new();
    for &t in targets::TARGETS {
        for case in sorted_entries(&root.join(t.name()), |p| p.is_dir()) {
            let input = saved_input(&case);
            let name = file_name(&case);
            let (outcome, peak_bytes) = check_with_hang_limit(t, &name, input, hang_limit);
            out.push(RegressionRun {
                target: t.name(),
                case: name,
                outcome,
                peak_bytes,
            });
        }
    }
    out
}

/// The entries of `dir` that pass `keep`, sorted (none if it cannot be read).
fn sorted_entries(
    dir: &std::path::Path,
    keep: impl Fn(&std::path::Path) -> bool,
) -> Vec<std::path::PathBuf> {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| keep(p))
                .collect()
        })
        .unwrap_or_default();
    entries.sort();
    entries
}

fn file_name(path: &std::path::Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// The input saved in the directory `case`: its files in name order.
fn saved_input(case: &std::path::Path) -> Input {
    let mut input = Input::default();
    for f in sorted_entries(case, |_| true) {
        let bytes = std::fs::read(&f).unwrap_or_default();
        let name = file_name(&f);
        input.logical_bytes += logical_len(&name, &bytes);
        input.files.push((name, bytes));
    }
    input
}

/// Check `input` against target `t` on a thread of its own, in a scratch directory named
/// after the case; a check still running after `hang_limit` is a hang.
fn check_with_hang_limit(
    t: &'static dyn targets::Target,
    case: &str,
    input: Input,
    hang_limit: std::time::Duration,
) -> (targets::Outcome, u64) {
    let dir = std::env::temp_dir().join(format!(
        "mcmvm-fuzz-regression-{}-{}-{case}",
        std::process::id(),
        t.name()
    ));
    let (send, receive) = std::sync::mpsc::channel();
    let worker_dir = dir.clone();
    std::thread::spawn(move || {
        let _ = send.send(runner::check_one(t, &worker_dir, &input));
    });
    let result = receive.recv_timeout(hang_limit).unwrap_or_else(|_| {
        (
            Err((
                runner::FailureKind::Hang,
                format!("still running after {hang_limit:?}"),
            )),
            0,
        )
    });
    let _ = std::fs::remove_dir_all(&dir);
    result
}
