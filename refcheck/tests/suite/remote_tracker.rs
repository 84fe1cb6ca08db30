//! The Remote Tracker monitor (written from `rtl/src/remote_tracker.md`) against the
//! behavioural twin: the testbench's directed cases and seeded random stimulus, the default
//! and a small saturating configuration, and port-level mutants of the twin.

use crate::common;

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

/// The twin agrees with the README under `order` at each (label, entries, cycles), with
/// evictions reported so every victim choice shows at the ports.
fn agrees_under(order: RtReplacement, tag: &str, salt: u64, sizes: &[(&str, usize, usize)]) {
    for &(label, entries, cycles) in sizes {
        let mut cfg = small();
        cfg.remote_tracker.entries = entries;
        cfg.remote_tracker.replacement = order;
        check_directed(&cfg);
        let seed = seed(&format!("rt {tag} {label}"), tb::DEFAULT_SEED ^ salt);
        let s = stimulus(&cfg, seed, cycles);
        let rt = &cfg.remote_tracker;
        let mut twin = RemoteTracker::new(rt);
        let name = format!("rt {tag} {label} random");
        let outs = assert_agrees(&name, &mut RtMonitor::new(rt), &mut twin, &s);
        let (_, _, _, evicts) = coverage(rt, &outs);
        assert!(
            evicts > 100,
            "{label}: the random traffic must replace rows"
        );
    }
}

/// A twin replacing by `twin_order` is caught by the monitor of `order`: the two pick
/// different victims on this traffic.
fn wrong_order_is_caught(order: RtReplacement, twin_order: RtReplacement) {
    let mut cfg = small();
    cfg.remote_tracker.replacement = order;
    let s = stimulus(&cfg, tb::DEFAULT_SEED, SHORT_CYCLES);
    let mut wrong = cfg.remote_tracker.clone();
    wrong.replacement = twin_order;
    let mut monitor = RtMonitor::new(&cfg.remote_tracker);
    let mut twin = RemoteTracker::new(&wrong);
    let caught = s.iter().enumerate().find_map(|(c, i)| {
        let o = mcmvm_protocol::protocol::CycleModel::step(&mut twin, i);
        mcmvm_refcheck::Monitor::observe(&mut monitor, c as u64, i, &o).err()
    });
    let v = caught.unwrap_or_else(|| panic!("a {twin_order:?} twin passed the {order:?} monitor"));
    assert!(v.signal.starts_with("evict"), "{v}");
}

/// `nru` at the small and the default size.
#[test]
fn twin_agrees_with_the_readme_under_nru() {
    let sizes = [("small", 8, SHORT_CYCLES), ("default", 32, RANDOM_CYCLES)];
    agrees_under(RtReplacement::Nru, "nru", 0x9, &sizes);
}

#[test]
fn a_ranks_twin_is_caught_by_the_nru_monitor() {
    wrong_order_is_caught(RtReplacement::Nru, RtReplacement::Ranks);
}

/// `tree-plru` at three sizes (a full tree, one with rowless subtrees, the paper's).
#[test]
fn twin_agrees_with_the_readme_under_tree_plru() {
    let sizes = [
        ("small", 8, SHORT_CYCLES),
        ("odd", 5, SHORT_CYCLES),
        ("default", 32, RANDOM_CYCLES),
    ];
    agrees_under(RtReplacement::TreePlru, "plru", 0xa, &sizes);
}

#[test]
fn an_nru_twin_is_caught_by_the_tree_plru_monitor() {
    wrong_order_is_caught(RtReplacement::TreePlru, RtReplacement::Nru);
}
