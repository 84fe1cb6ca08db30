//! Fuzzing every parser a user's file reaches (issue #40): mcmvm traces, Accel-Sim trace
//! directories (plain and xz), NVBit mem_trace output, the GPU / UVM / hardware TOML
//! configs and recorded VCD stimulus. Properties, per input: no panic, no hang, peak heap
//! bounded by a multiple of the input's size plus a constant, and a rejection is one line
//! naming the file (and the line, where the format has lines). `make fuzz` runs it at
//! scale; `tests/suite` runs a fixed-seed slice and replays `regressions/`.

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

/// One regression case replayed: its target, its directory name, the outcome, peak bytes.
pub struct Replayed {
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

/// Replay the inputs saved under `root/<target>/<case>/` (each case a directory holding the
/// input's files), each on its own thread so that a hang past `hang_limit` is reported
/// rather than waited for.
pub fn replay_regressions(
    root: &std::path::Path,
    hang_limit: std::time::Duration,
) -> Vec<Replayed> {
    let mut out = Vec::new();
    for &t in targets::TARGETS {
        let Ok(cases) = std::fs::read_dir(root.join(t.name())) else {
            continue;
        };
        let mut cases: Vec<_> = cases
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.is_dir())
            .collect();
        cases.sort();
        for case in cases {
            let mut input = Input::default();
            let mut files: Vec<_> = std::fs::read_dir(&case)
                .map(|d| d.filter_map(Result::ok).map(|e| e.path()).collect())
                .unwrap_or_default();
            files.sort();
            for f in files {
                let bytes = std::fs::read(&f).unwrap_or_default();
                let name = f
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                input.logical_bytes += logical_len(&name, &bytes);
                input.files.push((name, bytes));
            }
            let name = case
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let dir = std::env::temp_dir().join(format!(
                "mcmvm-fuzz-regression-{}-{}-{name}",
                std::process::id(),
                t.name()
            ));
            let (send, receive) = std::sync::mpsc::channel();
            let worker_dir = dir.clone();
            std::thread::spawn(move || {
                let _ = send.send(runner::check_one(t, &worker_dir, &input));
            });
            let (outcome, peak_bytes) = receive.recv_timeout(hang_limit).unwrap_or_else(|_| {
                (
                    Err((
                        runner::FailureKind::Hang,
                        format!("still running after {hang_limit:?}"),
                    )),
                    0,
                )
            });
            let _ = std::fs::remove_dir_all(&dir);
            out.push(Replayed {
                target: t.name(),
                case: name,
                outcome,
                peak_bytes,
            });
        }
    }
    out
}
