//! Running a target over many inputs: each input written to a worker's own directory,
//! parsed under `catch_unwind` (a panic is a failure), measured by the counting allocator
//! (peak bytes bounded by a multiple of the input's size plus a constant), and watched by a
//! watchdog thread (an input still running after the hang limit is a failure: the watchdog
//! saves it and ends the process, since a stuck thread cannot be stopped).
//!
//! Input `i` of target `t` under seed `s` comes from its own PRNG stream, so any input can
//! be made again from `(s, t, i)` alone: that is how the watchdog and the allocator's cap
//! save the input that hangs or runs away.

use crate::targets::{Target, Verdict, TARGETS};
use crate::Input;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::cell::{Cell, RefCell};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, Once};
use std::time::{Duration, Instant};

/// Peak heap bytes one input may cost: this many per byte of input (its text before any
/// compression)…
pub const MEM_PER_BYTE: u64 = 256;
/// …plus this many.
pub const MEM_BASE: u64 = 16 << 20;

/// What went wrong with one input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailureKind {
    Panic,
    /// More heap than the bound allows.
    Memory,
    /// A rejection that is not one line naming the file (and line or key).
    Message,
    /// Accepted, but reading it back (the warp streams) failed or disagreed.
    Readback,
    /// Still running after the hang limit.
    Hang,
}

#[derive(Debug, Clone)]
pub struct Failure {
    pub kind: FailureKind,
    pub index: u64,
    pub detail: String,
    pub saved: PathBuf,
}

/// Totals of one target's run.
#[derive(Debug, Clone, Default)]
pub struct Stats {
    pub inputs: u64,
    pub accepted: u64,
    pub rejected: u64,
    pub panics: u64,
    pub memory: u64,
    pub messages: u64,
    pub readbacks: u64,
    /// Most heap bytes one input cost, and that input's size.
    pub peak_bytes: u64,
    pub peak_input_bytes: u64,
    /// The largest input tried.
    pub max_input_bytes: u64,
    /// The first failures (at most [`KEEP_FAILURES`]).
    pub failures: Vec<Failure>,
}

const KEEP_FAILURES: usize = 10;

impl Stats {
    pub fn failed(&self) -> u64 {
        self.panics + self.memory + self.messages + self.readbacks
    }
    fn merge(&mut self, o: Stats) {
        self.inputs += o.inputs;
        self.accepted += o.accepted;
        self.rejected += o.rejected;
        self.panics += o.panics;
        self.memory += o.memory;
        self.messages += o.messages;
        self.readbacks += o.readbacks;
        if o.peak_bytes > self.peak_bytes {
            self.peak_bytes = o.peak_bytes;
            self.peak_input_bytes = o.peak_input_bytes;
        }
        self.max_input_bytes = self.max_input_bytes.max(o.max_input_bytes);
        self.failures.extend(o.failures);
        self.failures.sort_by_key(|f| f.index);
        self.failures.truncate(KEEP_FAILURES);
    }
}

/// How to run: seed, inputs, worker threads, hang limit, where crashes go.
#[derive(Debug, Clone)]
pub struct Plan {
    pub seed: u64,
    pub inputs: u64,
    pub workers: usize,
    pub hang_limit: Duration,
    pub crash_dir: PathBuf,
}

/// `target/fuzz-crashes` of the workspace (or of `$CARGO_TARGET_DIR`).
pub fn default_crash_dir() -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(t) => PathBuf::from(t).join("fuzz-crashes"),
        None => Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .unwrap_or(Path::new("."))
            .join("target/fuzz-crashes"),
    }
}

/// The PRNG of input `index` of target `target` under `seed` (splitmix64 of the three).
pub fn input_rng(seed: u64, target: usize, index: u64) -> ChaCha8Rng {
    let mut z = seed ^ ((target as u64) << 56) ^ index.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    ChaCha8Rng::seed_from_u64(z ^ (z >> 31))
}

thread_local! {
    /// (target, seed, index) of the input this thread is running, for the allocator's cap.
    static RUNNING: Cell<Option<(usize, u64, u64)>> = const { Cell::new(None) };
    /// Set while an input runs: its panic message goes here instead of stderr.
    static PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
    static QUIET: Cell<bool> = const { Cell::new(false) };
}

static HOOK: Once = Once::new();
/// Only one reporter ends the process.
static ENDING: AtomicBool = AtomicBool::new(false);

fn install_panic_hook() {
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if QUIET.with(Cell::get) {
                let at = info
                    .location()
                    .map_or(String::new(), |l| format!(" at {}:{}", l.file(), l.line()));
                let msg = info
                    .payload()
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| info.payload().downcast_ref::<String>().cloned())
                    .unwrap_or_default();
                PANIC.with(|p| *p.borrow_mut() = Some(format!("{msg}{at}")));
            } else {
                previous(info);
            }
        }));
    });
}

/// Save input `index` of `target` under `crash_dir`; returns the directory.
pub fn save(
    crash_dir: &Path,
    target: &dyn Target,
    seed: u64,
    index: u64,
    input: &Input,
) -> PathBuf {
    let dir = crash_dir.join(format!("{}-seed{seed}-{index}", target.name()));
    let _ = std::fs::create_dir_all(&dir);
    for (name, bytes) in &input.files {
        let _ = std::fs::write(dir.join(name), bytes);
    }
    dir
}

/// Called by the allocator when a thread running an input passes the hard cap.
pub(crate) fn over_cap(live: i64) {
    let running = RUNNING.with(Cell::get);
    if ENDING.swap(true, Ordering::SeqCst) {
        std::thread::park();
    }
    let place = match running {
        Some((t, seed, index)) => {
            let target = TARGETS[t];
            let input = target.generate(&mut input_rng(seed, t, index));
            let dir = save(&default_crash_dir(), target, seed, index, &input);
            format!(
                "{} input {index} (seed {seed}), saved to {}",
                target.name(),
                dir.display()
            )
        }
        None => "a saved regression input".to_string(),
    };
    eprintln!("FAIL memory: {place} holds {live} bytes, past the hard cap");
    std::process::exit(1);
}

/// Write `input`'s files into `dir` (emptied first).
pub fn materialise(dir: &Path, input: &Input) -> std::io::Result<()> {
    if dir.exists() {
        std::fs::remove_dir_all(dir)?;
    }
    std::fs::create_dir_all(dir)?;
    for (name, bytes) in &input.files {
        std::fs::write(dir.join(name), bytes)?;
    }
    Ok(())
}

/// One input through `target` in `dir`: its verdict, or the failure, and its peak bytes.
pub fn check_one(
    target: &dyn Target,
    dir: &Path,
    input: &Input,
) -> (Result<Verdict, (FailureKind, String)>, u64) {
    install_panic_hook();
    if let Err(e) = materialise(dir, input) {
        return (
            Err((
                FailureKind::Readback,
                format!("cannot write the input: {e}"),
            )),
            0,
        );
    }
    QUIET.with(|q| q.set(true));
    let base = crate::alloc::start();
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| target.run(dir)));
    let peak = crate::alloc::stop(base);
    QUIET.with(|q| q.set(false));
    let result = match outcome {
        Err(_) => Err((
            FailureKind::Panic,
            PANIC.with(|p| p.borrow_mut().take()).unwrap_or_default(),
        )),
        Ok(Err(e)) => Err(e),
        Ok(Ok(v)) => {
            let bound = MEM_PER_BYTE * input.logical_bytes + MEM_BASE;
            if peak > bound {
                Err((
                    FailureKind::Memory,
                    format!(
                        "{peak} bytes for a {}-byte input (bound {bound})",
                        input.logical_bytes
                    ),
                ))
            } else {
                Ok(v)
            }
        }
    };
    (result, peak)
}

/// Per worker: when its input began (ms since the run began, 0 = idle) and which it is.
struct Slot {
    started: AtomicU64,
    index: AtomicU64,
}

/// Run `plan.inputs` inputs of target number `t` on `plan.workers` threads.
pub fn run_target(t: usize, plan: &Plan) -> Stats {
    let target = TARGETS[t];
    let work = std::env::temp_dir().join(format!(
        "mcmvm-fuzz-{}-{}-{}",
        std::process::id(),
        target.name(),
        plan.seed
    ));
    let next = AtomicU64::new(0);
    let total = Mutex::new(Stats::default());
    let slots: Vec<Slot> = (0..plan.workers)
        .map(|_| Slot {
            started: AtomicU64::new(0),
            index: AtomicU64::new(0),
        })
        .collect();
    let epoch = Instant::now();
    let done = AtomicBool::new(false);
    std::thread::scope(|s| {
        s.spawn(|| watchdog(t, plan, &slots, epoch, &done));
        let workers: Vec<_> = (0..plan.workers)
            .map(|w| {
                let (slot, next, total, work) = (&slots[w], &next, &total, &work);
                s.spawn(move || {
                    let dir = work.join(format!("w{w}"));
                    let mut stats = Stats::default();
                    loop {
                        let index = next.fetch_add(1, Ordering::Relaxed);
                        if index >= plan.inputs {
                            break;
                        }
                        let input = target.generate(&mut input_rng(plan.seed, t, index));
                        slot.index.store(index, Ordering::SeqCst);
                        slot.started
                            .store(epoch.elapsed().as_millis() as u64 + 1, Ordering::SeqCst);
                        RUNNING.with(|r| r.set(Some((t, plan.seed, index))));
                        let (result, peak) = check_one(target, &dir, &input);
                        RUNNING.with(|r| r.set(None));
                        slot.started.store(0, Ordering::SeqCst);
                        record(&mut stats, plan, target, index, &input, result, peak);
                    }
                    let _ = std::fs::remove_dir_all(&dir);
                    total.lock().expect("stats lock").merge(stats);
                })
            })
            .collect();
        for w in workers {
            w.join()
                .expect("a worker thread ended by panic outside catch_unwind");
        }
        done.store(true, Ordering::SeqCst);
    });
    let _ = std::fs::remove_dir_all(&work);
    total.into_inner().expect("stats lock")
}

fn record(
    stats: &mut Stats,
    plan: &Plan,
    target: &dyn Target,
    index: u64,
    input: &Input,
    result: Result<Verdict, (FailureKind, String)>,
    peak: u64,
) {
    stats.inputs += 1;
    stats.max_input_bytes = stats.max_input_bytes.max(input.logical_bytes);
    if peak > stats.peak_bytes {
        stats.peak_bytes = peak;
        stats.peak_input_bytes = input.logical_bytes;
    }
    match result {
        Ok(Verdict::Accepted) => stats.accepted += 1,
        Ok(Verdict::Rejected) => stats.rejected += 1,
        Err((kind, detail)) => {
            match kind {
                FailureKind::Panic => stats.panics += 1,
                FailureKind::Memory => stats.memory += 1,
                FailureKind::Message => stats.messages += 1,
                FailureKind::Readback | FailureKind::Hang => stats.readbacks += 1,
            }
            if stats.failures.len() < KEEP_FAILURES {
                let saved = save(&plan.crash_dir, target, plan.seed, index, input);
                stats.failures.push(Failure {
                    kind,
                    index,
                    detail,
                    saved,
                });
            }
        }
    }
}

/// Ends the process when an input runs longer than the hang limit, saving it first.
fn watchdog(t: usize, plan: &Plan, slots: &[Slot], epoch: Instant, done: &AtomicBool) {
    let limit = plan.hang_limit.as_millis() as u64;
    while !done.load(Ordering::SeqCst) {
        std::thread::sleep(Duration::from_millis(50));
        let now = epoch.elapsed().as_millis() as u64 + 1;
        for slot in slots {
            let started = slot.started.load(Ordering::SeqCst);
            if started != 0 && now.saturating_sub(started) > limit {
                if ENDING.swap(true, Ordering::SeqCst) {
                    return;
                }
                let index = slot.index.load(Ordering::SeqCst);
                let target = TARGETS[t];
                let input = target.generate(&mut input_rng(plan.seed, t, index));
                let dir = save(&plan.crash_dir, target, plan.seed, index, &input);
                eprintln!(
                    "FAIL hang: {} input {index} (seed {}) still running after {:?}, saved to {}",
                    target.name(),
                    plan.seed,
                    plan.hang_limit,
                    dir.display()
                );
                std::process::exit(1);
            }
        }
    }
}
