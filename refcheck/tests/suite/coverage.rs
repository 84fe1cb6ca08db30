//! Functional coverage of the testbench stimulus: every block's directed cases and seeded
//! random stimulus (`mcmvm-testbenches`) run through its reference monitor beside the twin,
//! and every named bin of the monitor must be hit by at least one of them. A bin nobody
//! hits is a README behaviour no test exercises; the failure names each such bin.
//!
//! Two configurations per block: the default one, and one where the default's unreachable
//! corners become reachable (32-bit counters and timers never saturate in a test-sized run;
//! an 8-row table replaces rows constantly). The same "coverage" configurations are what
//! `tests/cli_coverage.rs` gives `mcmvm cosim --coverage`.

use crate::common;

use common::{assert_agrees, seed, RANDOM_CYCLES, SHORT_CYCLES};
use mcmvm_models::blocks::access_time_tracker::AccessTimeTracker;
use mcmvm_models::blocks::remote_tracker::RemoteTracker;
use mcmvm_models::blocks::tlb_coalescer::TlbCoalescer;
use mcmvm_protocol::config::{AttConfig, CoalescerConfig, HwConfig, RtConfig, RtReplacement};
use mcmvm_protocol::protocol::CycleModel;
use mcmvm_refcheck::{AttMonitor, CoalescerMonitor, Coverage, Monitor, RtMonitor};
use mcmvm_testbenches::{access_time_tracker, remote_tracker, tlb_coalescer};

/// Seed of the coalescer testbench's own random run (`testbenches/tests/tlb_coalescer.rs`).
const COALESCER_SEED: u64 = 0xC0A1_E5CE;

/// The narrow configuration: 8 rows, 4-bit counters (the random traffic saturates them; 8
/// bits it does not, drains come too often), evictions reported; 4-bit timers on 4 objects,
/// threshold 5; 4 KB coalescer pages (a second PTE decode).
fn narrow() -> HwConfig {
    HwConfig {
        remote_tracker: RtConfig {
            entries: 8,
            alloc_id_bits: 8,
            counter_bits: 4,
            report_evictions: true,
            replacement: RtReplacement::Ranks,
        },
        tlb_coalescer: CoalescerConfig {
            ptes_per_line: 16,
            page_frames_log2: 0,
            output_registers: true,
        },
        access_time_tracker: AttConfig {
            objects: 4,
            timer_bits: 4,
            profiling_threshold: 5,
            ..AttConfig::default()
        },
    }
}

/// One stimulus run's coverage, named for the report.
struct Run {
    name: String,
    coverage: Coverage,
}

/// `stimulus` through `monitor` beside `engine` (a violation fails the test: coverage of a
/// run that disagrees with the README means nothing), and the monitor's coverage.
fn covered<M, E>(name: String, mut monitor: M, mut engine: E, stimulus: &[E::In]) -> Run
where
    M: Monitor<E::In, E::Out>,
    E: CycleModel,
{
    assert_agrees(&name, &mut monitor, &mut engine, stimulus);
    Run {
        name,
        coverage: monitor.coverage().clone(),
    }
}

/// Print every bin with its count per run, and fail naming every bin no run hit.
fn assert_every_bin_hit(block: &str, runs: &[Run]) {
    let mut total = runs[0].coverage.clone();
    for r in &runs[1..] {
        total.merge(&r.coverage);
    }
    println!("{block} coverage per run:");
    for (i, r) in runs.iter().enumerate() {
        println!("  [{i}] {}: {}", r.name, r.coverage.summary());
    }
    let width = total.bins().iter().map(|(n, _)| n.len()).max().unwrap_or(0);
    for (b, (name, _)) in total.bins().iter().enumerate() {
        let counts: Vec<String> = runs
            .iter()
            .map(|r| format!("{:>8}", r.coverage.bins()[b].1))
            .collect();
        println!("  {name:<width$} {}", counts.join(""));
    }
    println!("{block} {}", total.summary());
    let missed = total.missed();
    assert!(
        missed.is_empty(),
        "{block}: {} bin(s) never hit by the testbench stimulus (directed + random, default \
         and narrow configs): {}",
        missed.len(),
        missed.join(", ")
    );
}

#[test]
fn every_remote_tracker_bin_is_hit() {
    let mut runs = Vec::new();
    for (label, mut cfg, cycles) in [
        ("default", HwConfig::default(), RANDOM_CYCLES),
        ("narrow", narrow(), SHORT_CYCLES),
    ] {
        // The exact-rank order (the default, nru, has its own test below).
        cfg.remote_tracker.replacement = RtReplacement::Ranks;
        let rt = &cfg.remote_tracker;
        let directed = remote_tracker::directed(&cfg);
        let s = seed(&format!("rt {label}"), remote_tracker::DEFAULT_SEED);
        let random: Vec<_> = remote_tracker::random(&cfg, s).take(cycles).collect();
        for (kind, stim) in [("directed", &directed), ("random", &random)] {
            runs.push(covered(
                format!("rt {label} {kind}"),
                RtMonitor::new(rt),
                RemoteTracker::new(rt),
                stim,
            ));
        }
    }
    assert_every_bin_hit("rt", &runs);
}

#[test]
fn every_remote_tracker_bin_is_hit_under_nru() {
    let mut runs = Vec::new();
    for (label, mut cfg, cycles) in [
        ("default", HwConfig::default(), RANDOM_CYCLES),
        ("narrow", narrow(), SHORT_CYCLES),
    ] {
        cfg.remote_tracker.replacement = RtReplacement::Nru;
        let rt = &cfg.remote_tracker;
        let directed = remote_tracker::directed(&cfg);
        let s = seed(&format!("rt nru {label}"), remote_tracker::DEFAULT_SEED);
        let random: Vec<_> = remote_tracker::random(&cfg, s).take(cycles).collect();
        for (kind, stim) in [("directed", &directed), ("random", &random)] {
            runs.push(covered(
                format!("rt nru {label} {kind}"),
                RtMonitor::new(rt),
                RemoteTracker::new(rt),
                stim,
            ));
        }
    }
    assert_every_bin_hit("rt nru", &runs);
}

/// The default configuration with the combinational coalescer (`output_registers = false`).
fn combinational() -> HwConfig {
    let mut cfg = HwConfig::default();
    cfg.tlb_coalescer.output_registers = false;
    cfg
}

/// Directed and seeded random runs of the coalescer monitor on each `(label, config,
/// random cycles)`.
fn coalescer_runs(configs: [(&str, HwConfig, usize); 2]) -> Vec<Run> {
    let mut runs = Vec::new();
    for (label, cfg, cycles) in configs {
        let c = &cfg.tlb_coalescer;
        let directed = tlb_coalescer::directed(&cfg);
        let s = seed(&format!("coalescer {label}"), COALESCER_SEED);
        let random: Vec<_> = tlb_coalescer::random(&cfg, s).take(cycles).collect();
        for (kind, stim) in [("directed", &directed), ("random", &random)] {
            runs.push(covered(
                format!("coalescer {label} {kind}"),
                CoalescerMonitor::new(c),
                TlbCoalescer::new(c),
                stim,
            ));
        }
    }
    runs
}

#[test]
fn every_coalescer_bin_is_hit() {
    let runs = coalescer_runs([
        ("default", HwConfig::default(), RANDOM_CYCLES),
        ("narrow", narrow(), SHORT_CYCLES),
    ]);
    assert_every_bin_hit("coalescer", &runs);
}

#[test]
fn every_coalescer_bin_is_hit_by_the_combinational_unit() {
    // The same bins: each also holds for the combinational rule (an idle cycle after a
    // request reads 0 there, a request right after reset is answered in its own cycle).
    let mut narrow_combinational = narrow();
    narrow_combinational.tlb_coalescer.output_registers = false;
    let runs = coalescer_runs([
        ("combinational", combinational(), RANDOM_CYCLES),
        ("narrow combinational", narrow_combinational, SHORT_CYCLES),
    ]);
    assert_every_bin_hit("coalescer combinational", &runs);
}

#[test]
fn every_access_time_tracker_bin_is_hit() {
    let mut runs = Vec::new();
    for (label, cfg, cycles) in [
        ("default", HwConfig::default(), RANDOM_CYCLES),
        ("narrow", narrow(), SHORT_CYCLES),
    ] {
        let a = &cfg.access_time_tracker;
        let directed = access_time_tracker::directed(&cfg);
        let s = seed(&format!("att {label}"), access_time_tracker::DEFAULT_SEED);
        let random: Vec<_> = access_time_tracker::random(&cfg, s).take(cycles).collect();
        for (kind, stim) in [("directed", &directed), ("random", &random)] {
            runs.push(covered(
                format!("att {label} {kind}"),
                AttMonitor::new(a),
                AccessTimeTracker::new(a),
                stim,
            ));
        }
    }
    assert_every_bin_hit("att", &runs);
}

#[test]
fn every_remote_tracker_bin_is_hit_under_tree_plru() {
    let mut runs = Vec::new();
    for (label, mut cfg, cycles) in [
        ("default", HwConfig::default(), RANDOM_CYCLES),
        ("narrow", narrow(), SHORT_CYCLES),
    ] {
        cfg.remote_tracker.replacement = RtReplacement::TreePlru;
        let rt = &cfg.remote_tracker;
        let directed = remote_tracker::directed(&cfg);
        let s = seed(&format!("rt plru {label}"), remote_tracker::DEFAULT_SEED);
        let random: Vec<_> = remote_tracker::random(&cfg, s).take(cycles).collect();
        for (kind, stim) in [("directed", &directed), ("random", &random)] {
            runs.push(covered(
                format!("rt plru {label} {kind}"),
                RtMonitor::new(rt),
                RemoteTracker::new(rt),
                stim,
            ));
        }
    }
    assert_every_bin_hit("rt plru", &runs);
}
