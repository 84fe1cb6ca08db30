//! Runtime builds of the Verilator models: non-default parameters build and agree with the
//! twin, a second request reuses the build, and a bad cache root or a missing tool is an
//! error. The stimulus generators are small local ones: `mcmvm-testbenches` depends on this
//! crate, so its generators cannot be used here.

use super::*;
use crate::engine::{Att, Coalescer, CosimBlock, EngineKind, Rt};
use crate::lockstep::{lockstep, LockstepOptions};
use mcmvm_models::protocol::{AttIn, AttOut, CoalIn, CoalOut, RtIn, RtOut};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const CYCLES: u64 = 20_000;

fn small_rt() -> HwConfig {
    let mut cfg = HwConfig::default();
    cfg.remote_tracker.entries = 8;
    cfg.remote_tracker.counter_bits = 8;
    cfg.remote_tracker.report_evictions = true;
    cfg
}

fn att16() -> HwConfig {
    let mut cfg = HwConfig::default();
    cfg.access_time_tracker.objects = 16;
    cfg
}

/// Walks and drains over 12 IDs (more than the 8 rows, so rows are replaced) skewed towards
/// the first few (so 8-bit counters saturate), and a rare reset.
fn rt_stimulus(seed: u64) -> impl Iterator<Item = RtIn> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let ids: [u8; 12] = [0, 255, 1, 7, 42, 100, 128, 200, 3, 64, 99, 254];
    let mut first = true;
    std::iter::from_fn(move || {
        if std::mem::take(&mut first) || rng.gen_ratio(1, 5000) {
            return Some(RtIn::reset());
        }
        let pick = |rng: &mut ChaCha8Rng| ids[rng.gen_range(0..12).min(rng.gen_range(0..12))];
        let mut input = RtIn::idle();
        if rng.gen_bool(0.7) {
            let id = pick(&mut rng);
            input = RtIn::walk(id, rng.gen_bool(0.6));
        }
        if rng.gen_bool(0.05) {
            let id = pick(&mut rng);
            input = input.with_drain(id);
        }
        Some(input)
    })
}

/// Registrations of small ranges (slots up to 31, beyond the 16-entry table too),
/// accesses mostly inside the registered ranges, removals, ceases and a rare reset.
fn att_stimulus(seed: u64) -> impl Iterator<Item = AttIn> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut ranges: Vec<(u64, u64)> = Vec::new();
    std::iter::from_fn(move || {
        let mut input = AttIn::default();
        if rng.gen_ratio(1, 4000) {
            input.reset = 1;
        }
        if rng.gen_bool(0.03) || ranges.is_empty() {
            let start = rng.gen_range(0..256u64) * 0x10;
            let end = start + rng.gen_range(0..0x40);
            input.reg_valid = 1;
            input.reg_obj = if rng.gen_bool(0.1) {
                rng.gen_range(0..32)
            } else {
                rng.gen_range(0..16)
            };
            input.reg_start_vpn = start;
            input.reg_end_vpn = end;
            ranges.push((start, end));
            if ranges.len() > 24 {
                ranges.remove(0);
            }
        }
        if rng.gen_bool(0.005) {
            input.rm_valid = 1;
            input.rm_obj = rng.gen_range(0..17);
        }
        if rng.gen_bool(0.005) {
            input.cease_valid = 1;
            input.cease_obj = rng.gen_range(0..17);
        }
        if rng.gen_bool(0.8) {
            let (start, end) = ranges[rng.gen_range(0..ranges.len())];
            input.acc_valid = 1;
            input.acc_vpn = if rng.gen_bool(0.1) {
                end + 1
            } else {
                rng.gen_range(start..=end)
            };
        }
        Some(input)
    })
}

/// Merges of contiguous lines with one slot broken at random (another PPN, permissions or
/// an invalid PTE), lookups near the merged groups, both in one cycle, gaps and a rare
/// reset (with requests).
fn coalescer_stimulus(seed: u64) -> impl Iterator<Item = CoalIn> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut first = true;
    std::iter::from_fn(move || {
        let mut input = CoalIn::default();
        if std::mem::take(&mut first) || rng.gen_ratio(1, 1000) {
            input.reset = 1;
        }
        let group = rng.gen_range(0..64u64) << 4;
        let base_ppn = rng.gen_range(0..0x1_0000_0000u64);
        if rng.gen_bool(0.5) {
            let mut line: [u64; 16] =
                core::array::from_fn(|i| 1 | 0x60 | (((base_ppn + i as u64) & 0xFFFF_FFFF) << 16));
            let broken = rng.gen_range(0..16);
            line[broken] = match rng.gen_range(0..3) {
                0 => line[broken] ^ (1 << 20),
                1 => line[broken] | (1 << 4),
                _ => line[broken] & !1,
            };
            input.merge_valid = 1;
            input.merge_vpn = group | rng.gen_range(0..16);
            input.set_ptes(&line);
        }
        if rng.gen_bool(0.5) {
            input.lookup_valid = 1;
            input.lookup_vpn = (group | rng.gen_range(0..16)) ^ (u64::from(rng.gen_bool(0.1)) << 4);
            input.entry_base_vpn = group;
            input.entry_base_ppn = base_ppn;
            input.entry_mask = rng.gen_range(0..0x1_0000);
        }
        Some(input)
    })
}

/// Twin and Verilator model of `B` in lockstep for [`CYCLES`] cycles: no mismatch.
fn assert_agrees_with_twin<B: CosimBlock>(cfg: &HwConfig, stimulus: impl Iterator<Item = B::In>) {
    let opts = LockstepOptions {
        engines: vec![EngineKind::Twin, EngineKind::Verilator],
        cycles: CYCLES,
        vcd: None,
    };
    let report = lockstep::<B>(cfg, &opts, stimulus).unwrap_or_else(|e| panic!("lockstep: {e}"));
    if let Some(m) = &report.mismatch {
        panic!("twin and Verilator diverge: {m}");
    }
    assert_eq!(report.cycles, CYCLES);
}

#[test]
fn a_small_remote_tracker_builds_and_agrees_with_the_twin() {
    assert_agrees_with_twin::<Rt>(&small_rt(), rt_stimulus(11));
}

#[test]
fn a_16_object_access_time_tracker_builds_and_agrees_with_the_twin() {
    assert_agrees_with_twin::<Att>(&att16(), att_stimulus(12));
}

/// The same stimulus through `step` one cycle at a time and through `step_batch` in
/// batches of 1, 7 and 1,024 cycles (and what is left): identical outputs every cycle, and
/// `state_violation` after a batch reads its last cycle.
fn assert_batches_step_as_single_cycles<I: Ports, O: Ports>(
    kind: BlockKind,
    cfg: &HwConfig,
    stimulus: impl Iterator<Item = I>,
) {
    let inputs: Vec<I> = stimulus.take(CYCLES as usize).collect();
    let mut single = VerilatorModel::<I, O>::checked(kind, cfg, false).expect("model");
    let mut batched = VerilatorModel::<I, O>::checked(kind, cfg, false).expect("model");
    let want: Vec<O> = inputs.iter().map(|i| single.step(i)).collect();
    let mut got = Vec::new();
    let mut rest = &inputs[..];
    for size in [1, 7, 1024].into_iter().cycle() {
        if rest.is_empty() {
            break;
        }
        let (batch, after) = rest.split_at(size.min(rest.len()));
        assert_eq!(
            batched.step_batch(batch, &mut got),
            None,
            "no broken invariant"
        );
        rest = after;
    }
    assert_eq!(got.len(), want.len());
    if let Some(k) = (0..want.len()).find(|&k| got[k] != want[k]) {
        panic!("cycle {k}: step {:?}, step_batch {:?}", want[k], got[k]);
    }
    assert_eq!(batched.state_violation(), single.state_violation());
}

#[test]
fn a_batch_steps_the_same_cycles_as_one_at_a_time() {
    println!("seeds 21 (att), 22 (rt); {CYCLES} cycles each");
    assert_batches_step_as_single_cycles::<AttIn, AttOut>(
        BlockKind::AccessTimeTracker,
        &att16(),
        att_stimulus(21),
    );
    assert_batches_step_as_single_cycles::<RtIn, RtOut>(
        BlockKind::RemoteTracker,
        &small_rt(),
        rt_stimulus(22),
    );
}

#[test]
fn a_16_entry_remote_tracker_with_4_bit_counters_saturates_and_agrees_with_the_twin() {
    let mut cfg = HwConfig::default();
    cfg.remote_tracker.entries = 16;
    cfg.remote_tracker.counter_bits = 4;
    assert_agrees_with_twin::<Rt>(&cfg, rt_stimulus(13));
}

#[test]
fn an_att_with_a_non_power_of_two_threshold_and_narrow_timers_agrees_with_the_twin() {
    let mut cfg = att16();
    cfg.access_time_tracker.objects = 8;
    cfg.access_time_tracker.timer_bits = 8;
    cfg.access_time_tracker.profiling_threshold = 100;
    assert_agrees_with_twin::<Att>(&cfg, att_stimulus(14));
}

#[test]
fn the_combinational_coalescer_builds_its_own_model_and_agrees_with_the_twin() {
    let mut cfg = HwConfig::default();
    cfg.tlb_coalescer.output_registers = false;
    let seed = 15;
    println!("coalescer stimulus seed {seed}");
    assert_agrees_with_twin::<Coalescer>(&cfg, coalescer_stimulus(seed));
    // The flag changes the emitted Verilog, so the cache keeps a model per variant.
    let kind = BlockKind::TlbCoalescer;
    let model = |c: &HwConfig| {
        VerilatorModel::<CoalIn, CoalOut>::new(kind, c)
            .unwrap_or_else(|e| panic!("{e}"))
            .library_path()
            .to_path_buf()
    };
    assert_ne!(model(&cfg), model(&HwConfig::default()));
}

/// The model directories under `root` (the cache's own temporary directories excluded).
fn model_dirs(root: &Path, module: &str) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root)
        .map(|rd| {
            rd.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| {
                    p.file_name()
                        .is_some_and(|n| n.to_string_lossy().starts_with(&format!("{module}-")))
                })
                .collect()
        })
        .unwrap_or_default();
    dirs.sort();
    dirs
}

#[test]
fn the_same_parameters_reuse_the_same_build() {
    let cfg = small_rt();
    let kind = BlockKind::RemoteTracker;
    let t0 = std::time::Instant::now();
    let first = VerilatorModel::<RtIn, RtOut>::new(kind, &cfg).unwrap_or_else(|e| panic!("{e}"));
    let first_time = t0.elapsed();
    let path = first.library_path().to_path_buf();
    let root = cache_root();
    assert!(
        path.starts_with(&root),
        "{} not under {}",
        path.display(),
        root.display()
    );
    let before = model_dirs(&root, "remote_tracker");
    // Threads asking at once all get the same library.
    let paths = ask_at_once(kind, &cfg, 4);
    assert!(paths.iter().all(|p| *p == path));
    // On disk, past the in-process table: found, not rebuilt.
    let block = BlockPorts::of::<RtIn, RtOut>(kind);
    let src = Sources::generate(&block, &cfg, false).unwrap_or_else(|e| panic!("{e}"));
    let t1 = std::time::Instant::now();
    let cached =
        verilator_cache::model(&src, &Tools::default(), &root).unwrap_or_else(|e| panic!("{e}"));
    println!(
        "first request {:.3} s (a build, or a load from an earlier run's cache); lookup on \
         disk {:.3} s",
        first_time.as_secs_f64(),
        t1.elapsed().as_secs_f64()
    );
    assert!(!cached.built);
    assert_eq!(cached.library, path);
    assert!(cached.dir.join("warnings.txt").is_file());
    // Other tests may build other configurations into the same cache meanwhile: only
    // this configuration's directory must be the one it had.
    let after = model_dirs(&root, "remote_tracker");
    assert!(
        before.iter().all(|d| after.contains(d)),
        "no directory lost"
    );
    assert_eq!(
        after.iter().filter(|d| **d == cached.dir).count(),
        1,
        "one directory for these parameters"
    );
    // A model from the second request runs like the twin, moved to another thread too.
    let second = VerilatorModel::<RtIn, RtOut>::new(kind, &cfg).unwrap_or_else(|e| panic!("{e}"));
    agrees_with_the_twin_on_another_thread(second, &cfg);
}

/// The library paths `n` threads get when they ask for the same model at once.
fn ask_at_once(kind: BlockKind, cfg: &HwConfig, n: usize) -> Vec<PathBuf> {
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..n)
            .map(|_| {
                s.spawn(|| {
                    VerilatorModel::<RtIn, RtOut>::new(kind, cfg)
                        .map(|m| m.library_path().to_path_buf())
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .expect("no panic")
                    .unwrap_or_else(|e| panic!("{e}"))
            })
            .collect()
    })
}

/// `model`, moved to a thread of its own, steps like the RT twin for 500 random cycles.
fn agrees_with_the_twin_on_another_thread(mut model: VerilatorModel<RtIn, RtOut>, cfg: &HwConfig) {
    let mut twin = mcmvm_models::blocks::remote_tracker::RemoteTracker::new(&cfg.remote_tracker);
    std::thread::spawn(move || {
        for (cycle, input) in rt_stimulus(3).take(500).enumerate() {
            assert_eq!(model.step(&input), twin.step(&input), "cycle {cycle}");
        }
    })
    .join()
    .expect("the moved model agrees with the twin");
}

/// A directory of its own under the system's temporary directory, removed on drop.
pub(super) struct TempDir(pub(super) PathBuf);

impl TempDir {
    pub(super) fn new(name: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!("mcmvm-cosim-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("temp dir");
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn an_unusable_cache_root_is_an_error_naming_it() {
    let tmp = TempDir::new("bad-root");
    let file = tmp.0.join("a-file");
    std::fs::write(&file, "not a directory").expect("write");
    // A directory below a regular file cannot be created, whoever runs the test (root too).
    let root = file.join("cache");
    let result = VerilatorModel::<AttIn, AttOut>::new_in(
        BlockKind::AccessTimeTracker,
        &att16(),
        &root,
        &Tools::default(),
    );
    match result {
        Err(CosimError::Cache { path, .. }) => assert_eq!(path, root),
        Err(e) => panic!("unexpected error {e}"),
        Ok(_) => panic!("a model was built in {}", root.display()),
    }
}

#[test]
fn missing_tools_say_what_to_install() {
    let tmp = TempDir::new("no-tools");
    let cfg = HwConfig::default();
    let no_verilator = Tools {
        verilator: "mcmvm-no-such-verilator".to_string(),
        ..Tools::default()
    };
    let err = VerilatorModel::<RtIn, RtOut>::new_in(
        BlockKind::RemoteTracker,
        &cfg,
        &tmp.0,
        &no_verilator,
    )
    .err()
    .map(|e| e.to_string());
    assert_eq!(
        err.as_deref(),
        Some("verilator not found: apt-get install verilator (or make deps)")
    );
    let no_gxx = Tools {
        gxx: "mcmvm-no-such-g++".to_string(),
        ..Tools::default()
    };
    let err =
        VerilatorModel::<RtIn, RtOut>::new_in(BlockKind::RemoteTracker, &cfg, &tmp.0, &no_gxx)
            .err()
            .map(|e| e.to_string());
    assert_eq!(
        err.as_deref(),
        Some("g++ not found: apt-get install g++ (or make deps)")
    );
    // The failed builds left nothing behind.
    assert!(model_dirs(&tmp.0, "remote_tracker").is_empty());
}

#[test]
fn a_verilator_failure_carries_the_command_and_its_messages() {
    let tmp = TempDir::new("bad-verilog");
    let block = BlockPorts::of::<RtIn, RtOut>(BlockKind::RemoteTracker);
    let mut src = Sources::generate(&block, &small_rt(), false).unwrap_or_else(|e| panic!("{e}"));
    src.verilog = "module remote_tracker(input wire clock; endmodule\n".to_string();
    match verilator_cache::model(&src, &Tools::default(), &tmp.0) {
        Err(CosimError::ToolFailed {
            command, stderr, ..
        }) => {
            assert!(command.starts_with("verilator --cc"), "{command}");
            assert!(stderr.contains("%Error"), "{stderr}");
        }
        Err(e) => panic!("unexpected error {e}"),
        Ok(c) => panic!("broken Verilog was built into {}", c.dir.display()),
    }
    assert!(model_dirs(&tmp.0, "remote_tracker").is_empty());
    // The memo of `verilator --version` and the entry's lock file may stay; no build
    // directory may.
    let left: Vec<_> = std::fs::read_dir(&tmp.0)
        .expect("read")
        .filter_map(Result::ok)
        .map(|e| e.file_name())
        .filter(|name| name != "memo" && name != "locks")
        .collect();
    assert!(
        left.is_empty(),
        "temporary build directories left: {left:?}"
    );
}

#[test]
fn verilator_warnings_are_kept_not_silenced() {
    let tmp = TempDir::new("width-warning");
    let block = BlockPorts::of::<RtIn, RtOut>(BlockKind::RemoteTracker);
    let mut src = Sources::generate(&block, &small_rt(), false).unwrap_or_else(|e| panic!("{e}"));
    // An 8-bit constant into a 4-bit wire, right after the top module's port list.
    let header = src
        .verilog
        .find("module remote_tracker(")
        .expect("top module");
    let body = header + src.verilog[header..].find(");\n").expect("port list") + 3;
    src.verilog
        .insert_str(body, "wire [3:0] mcmvm_narrow = 8'hff;\n");
    let warnings = crate::verilator_build::verilate(&src, &Tools::default(), &tmp.0)
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        warnings.iter().any(|w| w.starts_with("%Warning-WIDTH")),
        "{warnings:?}"
    );
    let kept = std::fs::read_to_string(tmp.0.join("warnings.txt")).expect("warnings.txt");
    assert_eq!(kept.lines().collect::<Vec<_>>(), warnings);
}
