//! The Remote Tracker monitor (written from `rtl/src/remote_tracker.md`) against the
//! behavioural twin: the testbench's directed cases and seeded random stimulus, the default
//! and a small saturating configuration, and port-level mutants of the twin.

mod common;

use common::{assert_agrees, assert_caught, seed, Corruption, Mutant, RANDOM_CYCLES, SHORT_CYCLES};
use mcmvm_models::blocks::remote_tracker::RemoteTracker;
use mcmvm_protocol::config::{HwConfig, RtConfig, RtReplacement};
use mcmvm_protocol::protocol::{RtIn, RtOut};
use mcmvm_refcheck::RtMonitor;
use mcmvm_testbenches::remote_tracker as tb;

/// The 8-entry, 8-bit-counter, eviction-reporting configuration.
fn small() -> HwConfig {
    HwConfig {
        remote_tracker: RtConfig {
            entries: 8,
            alloc_id_bits: 8,
            counter_bits: 8,
            report_evictions: true,
            replacement: RtReplacement::Ranks,
        },
        ..HwConfig::default()
    }
}

/// The directed cases one after the other, then `cycles` of seeded random traffic.
fn stimulus(cfg: &HwConfig, seed: u64, cycles: usize) -> Vec<RtIn> {
    let mut s = tb::directed(cfg);
    s.extend(tb::random(cfg, seed).take(cycles));
    s
}

fn check_directed(cfg: &HwConfig) {
    for (name, case) in tb::cases(cfg) {
        let rt = &cfg.remote_tracker;
        let mut twin = RemoteTracker::new(rt);
        assert_agrees(
            &format!("directed {name}"),
            &mut RtMonitor::new(rt),
            &mut twin,
            &case,
        );
    }
}

/// Coverage of a run: drains, drain hits, saturated drains, reported evictions.
fn coverage(cfg: &RtConfig, outs: &[RtOut]) -> (usize, usize, usize, usize) {
    let sat = (1u64 << cfg.counter_bits) - 1;
    let drains = outs.iter().filter(|o| o.drain_done == 1).count();
    let hits = outs.iter().filter(|o| o.drain_hit == 1).count();
    let saturated = outs.iter().filter(|o| o.drain_access == sat).count();
    let evicts = outs.iter().filter(|o| o.evict_valid == 1).count();
    println!("  drains {drains}, hits {hits}, saturated {saturated}, evictions {evicts}");
    (drains, hits, saturated, evicts)
}

#[test]
fn twin_agrees_with_the_readme_default_config() {
    let cfg = HwConfig::default();
    check_directed(&cfg);
    let seed = seed("rt default", tb::DEFAULT_SEED);
    let s = stimulus(&cfg, seed, RANDOM_CYCLES);
    let rt = &cfg.remote_tracker;
    let mut twin = RemoteTracker::new(rt);
    let outs = assert_agrees("rt default random", &mut RtMonitor::new(rt), &mut twin, &s);
    let (drains, hits, _, _) = coverage(rt, &outs);
    assert!(
        drains > 1000 && hits > 500,
        "the random traffic must exercise drains"
    );
}

#[test]
fn twin_agrees_with_the_readme_8_entries_8_bit_counters_evictions() {
    let cfg = small();
    check_directed(&cfg);
    let seed = seed("rt small", tb::DEFAULT_SEED ^ 0x8);
    let s = stimulus(&cfg, seed, SHORT_CYCLES);
    let rt = &cfg.remote_tracker;
    let mut twin = RemoteTracker::new(rt);
    let outs = assert_agrees("rt small random", &mut RtMonitor::new(rt), &mut twin, &s);
    let (_, _, saturated, evicts) = coverage(rt, &outs);
    assert!(saturated >= 1, "counters must reach saturation");
    assert!(evicts > 100, "the 8-row table must replace rows");
}

/// A remote walk is counted twice: the adapter feeds the twin the same walk again in the
/// next cycle when that cycle has no walk of its own.
#[derive(Default)]
struct RemoteTwice {
    last: Option<RtIn>,
}

impl Corruption<RtIn, RtOut> for RemoteTwice {
    fn input(&mut self, input: &RtIn) -> RtIn {
        let mut fed = *input;
        if let Some(w) = self.last.take() {
            if input.walk_valid == 0 && input.reset == 0 {
                fed.walk_valid = 1;
                fed.walk_alloc_id = w.walk_alloc_id;
                fed.walk_remote = 1;
            }
        }
        if input.walk_valid == 1 && input.walk_remote == 1 && input.reset == 0 {
            self.last = Some(*input);
        }
        fed
    }
}

/// Every walk reaches the table one cycle late, so a drain misses the walk of the
/// previous cycle (it sees only walks issued before `d - 1`).
#[derive(Default)]
struct DrainMissesPreviousWalk {
    held: Option<RtIn>,
}

impl Corruption<RtIn, RtOut> for DrainMissesPreviousWalk {
    fn input(&mut self, input: &RtIn) -> RtIn {
        let mut fed = *input;
        fed.walk_valid = 0;
        if let Some(w) = self.held.take() {
            fed.walk_valid = 1;
            fed.walk_alloc_id = w.walk_alloc_id;
            fed.walk_remote = w.walk_remote;
        }
        if input.reset == 0 && input.walk_valid == 1 {
            self.held = Some(*input);
        }
        fed
    }
}

/// The drain in flight is answered in a reset cycle instead of being cancelled.
#[derive(Default)]
struct ResetKeepsDrain {
    drain_before: bool,
}

impl Corruption<RtIn, RtOut> for ResetKeepsDrain {
    fn output(&mut self, input: &RtIn, mut out: RtOut) -> RtOut {
        if input.reset == 1 && self.drain_before {
            out.drain_done = 1;
        }
        self.drain_before = input.drain_valid == 1;
        out
    }
}

/// Replacements happen but are not reported.
struct EvictionsDropped;

impl Corruption<RtIn, RtOut> for EvictionsDropped {
    fn output(&mut self, _: &RtIn, mut out: RtOut) -> RtOut {
        out.evict_valid = 0;
        out
    }
}

const COUNTERS: &[&str] = &[
    "drain_hit",
    "drain_access",
    "drain_remote",
    "evict_valid",
    "evict_alloc_id",
    "evict_access",
    "evict_remote",
];

#[test]
fn mutants_are_caught() {
    let cfg = HwConfig::default();
    let rt = &cfg.remote_tracker;
    let seed = seed("rt mutants", tb::DEFAULT_SEED);
    let s = stimulus(&cfg, seed, SHORT_CYCLES);
    let twin = || RemoteTracker::new(rt);
    let mon = || RtMonitor::new(rt);
    assert_caught(
        "remote walk counted twice",
        twin(),
        Mutant {
            inner: twin(),
            corruption: RemoteTwice::default(),
        },
        &mut mon(),
        &s,
        COUNTERS,
    );
    assert_caught(
        "drain misses the walk of the previous cycle",
        twin(),
        Mutant {
            inner: twin(),
            corruption: DrainMissesPreviousWalk::default(),
        },
        &mut mon(),
        &s,
        COUNTERS,
    );
    assert_caught(
        "reset does not cancel the drain in flight",
        twin(),
        Mutant {
            inner: twin(),
            corruption: ResetKeepsDrain::default(),
        },
        &mut mon(),
        &s,
        &["drain_done"],
    );
    let cfg = small();
    let rt = &cfg.remote_tracker;
    let s = stimulus(&cfg, seed, SHORT_CYCLES);
    assert_caught(
        "evictions not reported",
        RemoteTracker::new(rt),
        Mutant {
            inner: RemoteTracker::new(rt),
            corruption: EvictionsDropped,
        },
        &mut RtMonitor::new(rt),
        &s,
        &["evict_valid"],
    );
}

/// `nru` at the small and the default size, evictions reported so every victim choice
/// shows at the ports.
#[test]
fn twin_agrees_with_the_readme_under_nru() {
    for (label, entries, cycles) in [("small", 8, SHORT_CYCLES), ("default", 32, RANDOM_CYCLES)] {
        let mut cfg = small();
        cfg.remote_tracker.entries = entries;
        cfg.remote_tracker.replacement = RtReplacement::Nru;
        check_directed(&cfg);
        let seed = seed(&format!("rt nru {label}"), tb::DEFAULT_SEED ^ 0x9);
        let s = stimulus(&cfg, seed, cycles);
        let rt = &cfg.remote_tracker;
        let mut twin = RemoteTracker::new(rt);
        let name = format!("rt nru {label} random");
        let outs = assert_agrees(&name, &mut RtMonitor::new(rt), &mut twin, &s);
        let (_, _, _, evicts) = coverage(rt, &outs);
        assert!(
            evicts > 100,
            "{label}: the random traffic must replace rows"
        );
    }
}

/// The NRU twin's victim choice differs from the exact ranks': a twin that replaces by
/// rank under `nru` is caught by the monitor.
#[test]
fn a_ranks_twin_is_caught_by_the_nru_monitor() {
    let mut cfg = small();
    cfg.remote_tracker.replacement = RtReplacement::Nru;
    let s = stimulus(&cfg, tb::DEFAULT_SEED, SHORT_CYCLES);
    let mut ranks = cfg.remote_tracker.clone();
    ranks.replacement = RtReplacement::Ranks;
    let mut monitor = RtMonitor::new(&cfg.remote_tracker);
    let mut twin = RemoteTracker::new(&ranks);
    let caught = s.iter().enumerate().find_map(|(c, i)| {
        let o = mcmvm_protocol::protocol::CycleModel::step(&mut twin, i);
        mcmvm_refcheck::Monitor::observe(&mut monitor, c as u64, i, &o).err()
    });
    let v = caught.unwrap_or_else(|| panic!("a ranks twin passed the NRU monitor"));
    assert!(v.signal.starts_with("evict"), "{v}");
}

/// `tree-plru` at three sizes (a full tree, one with rowless subtrees, the paper's),
/// evictions reported so every victim choice shows at the ports.
#[test]
fn twin_agrees_with_the_readme_under_tree_plru() {
    for (label, entries, cycles) in [
        ("small", 8, SHORT_CYCLES),
        ("odd", 5, SHORT_CYCLES),
        ("default", 32, RANDOM_CYCLES),
    ] {
        let mut cfg = small();
        cfg.remote_tracker.entries = entries;
        cfg.remote_tracker.replacement = RtReplacement::TreePlru;
        check_directed(&cfg);
        let seed = seed(&format!("rt plru {label}"), tb::DEFAULT_SEED ^ 0xa);
        let s = stimulus(&cfg, seed, cycles);
        let rt = &cfg.remote_tracker;
        let mut twin = RemoteTracker::new(rt);
        let name = format!("rt plru {label} random");
        let outs = assert_agrees(&name, &mut RtMonitor::new(rt), &mut twin, &s);
        let (_, _, _, evicts) = coverage(rt, &outs);
        assert!(
            evicts > 100,
            "{label}: the random traffic must replace rows"
        );
    }
}

/// A twin that replaces by NRU under `tree-plru` is caught by the monitor (the two orders
/// pick different victims on this traffic).
#[test]
fn an_nru_twin_is_caught_by_the_tree_plru_monitor() {
    let mut cfg = small();
    cfg.remote_tracker.replacement = RtReplacement::TreePlru;
    let s = stimulus(&cfg, tb::DEFAULT_SEED, SHORT_CYCLES);
    let mut nru = cfg.remote_tracker.clone();
    nru.replacement = RtReplacement::Nru;
    let mut monitor = RtMonitor::new(&cfg.remote_tracker);
    let mut twin = RemoteTracker::new(&nru);
    let caught = s.iter().enumerate().find_map(|(c, i)| {
        let o = mcmvm_protocol::protocol::CycleModel::step(&mut twin, i);
        mcmvm_refcheck::Monitor::observe(&mut monitor, c as u64, i, &o).err()
    });
    let v = caught.unwrap_or_else(|| panic!("an NRU twin passed the tree-PLRU monitor"));
    assert!(v.signal.starts_with("evict"), "{v}");
}
