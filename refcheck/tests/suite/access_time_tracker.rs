//! The Access Time Tracker monitor (written from `rtl/src/access_time_tracker.md`) against
//! the behavioural twin: directed cases, seeded random stimulus, default and small
//! configurations, and port-level mutants of the twin.

use crate::common;

use common::{assert_agrees, assert_caught, seed, Corruption, Mutant, RANDOM_CYCLES, SHORT_CYCLES};
use mcmvm_models::blocks::access_time_tracker::AccessTimeTracker;
use mcmvm_protocol::config::{AttConfig, AttRecency, HwConfig};
use mcmvm_protocol::protocol::{AttIn, AttOut};
use mcmvm_refcheck::AttMonitor;
use mcmvm_testbenches::access_time_tracker as tb;

fn config(objects: usize, timer_bits: u32, profiling_threshold: u64) -> HwConfig {
    HwConfig {
        access_time_tracker: AttConfig {
            objects,
            timer_bits,
            profiling_threshold,
            ..AttConfig::default()
        },
        ..HwConfig::default()
    }
}

fn stimulus(cfg: &HwConfig, seed: u64, cycles: usize) -> Vec<AttIn> {
    let mut s = tb::directed(cfg);
    s.extend(tb::random(cfg, seed).take(cycles));
    s
}

/// Coverage: records, interrupts, saturated records, cycles with an oldest object.
fn coverage(cfg: &AttConfig, outs: &[AttOut]) -> [usize; 4] {
    let max = (1u64 << cfg.timer_bits) - 1;
    let recs = outs.iter().filter(|o| o.rec_valid == 1).count();
    let irqs = outs.iter().filter(|o| o.irq_valid == 1).count();
    let saturated = outs.iter().filter(|o| o.rec_timer == max).count();
    let oldest = outs.iter().filter(|o| o.oldest_valid == 1).count();
    println!("  records {recs}, interrupts {irqs}, saturated {saturated}, oldest {oldest}");
    [recs, irqs, saturated, oldest]
}

fn check(cfg: &HwConfig, what: &str, seed: u64, cycles: usize) -> [usize; 4] {
    let a = &cfg.access_time_tracker;
    for (name, case) in tb::cases(cfg) {
        let mut twin = AccessTimeTracker::new(a);
        let what = format!("{what} directed {name}");
        assert_agrees(&what, &mut AttMonitor::new(a), &mut twin, &case);
    }
    let s = stimulus(cfg, seed, cycles);
    let mut twin = AccessTimeTracker::new(a);
    let outs = assert_agrees(what, &mut AttMonitor::new(a), &mut twin, &s);
    coverage(a, &outs)
}

#[test]
fn twin_agrees_with_the_readme_default_config() {
    let seed = seed("att default", tb::DEFAULT_SEED);
    let [recs, irqs, _, oldest] = check(&HwConfig::default(), "att default", seed, RANDOM_CYCLES);
    assert!(recs > 10_000 && irqs > 10 && oldest > 10_000);
}

#[test]
fn twin_agrees_with_the_readme_16_objects_threshold_5() {
    let seed = seed("att 16 objects threshold 5", tb::DEFAULT_SEED ^ 0x16);
    let cfg = config(16, 32, 5);
    let [_, irqs, _, _] = check(&cfg, "att 16/32/5", seed, SHORT_CYCLES);
    assert!(irqs > 1000);
}

#[test]
fn twin_agrees_with_the_readme_4_bit_timers() {
    // Timers saturate at 15: the directed saturation case runs, random traffic saturates.
    let seed = seed(
        "att 4 objects 4-bit timers threshold 5",
        tb::DEFAULT_SEED ^ 0x4,
    );
    let [_, _, saturated, _] = check(&config(4, 4, 5), "att 4/4/5", seed, SHORT_CYCLES);
    assert!(saturated > 100);
}

fn tree_plru(objects: usize, timer_bits: u32, profiling_threshold: u64) -> HwConfig {
    let mut cfg = config(objects, timer_bits, profiling_threshold);
    cfg.access_time_tracker.recency = AttRecency::TreePlru;
    cfg
}

/// `recency = "tree-plru"` (README, "Option: tree pseudo-LRU"): 32 slots, 5 slots (halves
/// with no live slot) and 4 slots with 4-bit timers.
#[test]
fn twin_agrees_with_the_readme_tree_plru() {
    let seed = seed("att tree-plru", tb::DEFAULT_SEED ^ 0x7ee);
    let [_, _, _, oldest] = check(&tree_plru(32, 32, 256), "att tree 32", seed, RANDOM_CYCLES);
    assert!(oldest > 10_000);
    check(&tree_plru(5, 32, 5), "att tree 5", seed, SHORT_CYCLES);
    check(&tree_plru(4, 4, 5), "att tree 4/4/5", seed, SHORT_CYCLES);
}

/// `recency = "ranks"` and `"age-matrix"` (README, the exact orders): `oldest_*` is the
/// valid slot touched longest ago, a register newer than an access in its cycle.
#[test]
fn twin_agrees_with_the_readme_exact_recency() {
    for (recency, name) in [
        (AttRecency::Ranks, "ranks"),
        (AttRecency::AgeMatrix, "age-matrix"),
    ] {
        let mut cfg = config(32, 32, 256);
        cfg.access_time_tracker.recency = recency;
        let seed = seed(&format!("att {name}"), tb::DEFAULT_SEED ^ 0xe4);
        let [_, _, _, oldest] = check(&cfg, &format!("att {name}"), seed, SHORT_CYCLES);
        assert!(oldest > 10_000, "{name}: {oldest}");
    }
}

/// A twin that keeps the exact order while the configuration asks for the tree is caught on
/// `oldest_obj`, and so is the tree twin under the exact-order README rule.
#[test]
fn the_wrong_recency_structure_is_caught_on_oldest() {
    let seed = seed("att tree-plru vs exact", tb::DEFAULT_SEED ^ 0x7ee);
    let mut exact = config(32, 32, 256);
    exact.access_time_tracker.recency = AttRecency::Ranks;
    let tree = tree_plru(32, 32, 256);
    let s = stimulus(&exact, seed, SHORT_CYCLES);
    for (monitored, served) in [(&tree, &exact), (&exact, &tree)] {
        let mut mon = AttMonitor::new(&monitored.access_time_tracker);
        let mut twin = AccessTimeTracker::new(&served.access_time_tracker);
        let v = common::watch(&mut mon, &mut twin, &s).expect_err("a different oldest object");
        assert_eq!(v.signal, "oldest_obj", "{v}");
    }
}

/// The profiling interrupt comes one access late: held back and raised with the object's
/// next record.
#[derive(Default)]
struct IrqOneAccessLate {
    pending: Option<u64>,
}

impl Corruption<AttIn, AttOut> for IrqOneAccessLate {
    fn output(&mut self, _: &AttIn, mut out: AttOut) -> AttOut {
        let fresh = (out.irq_valid == 1).then_some(out.irq_obj);
        out.irq_valid = 0;
        out.irq_obj = 0;
        if let Some(obj) = self.pending {
            if out.rec_valid == 1 && out.rec_obj == obj {
                out.irq_valid = 1;
                out.irq_obj = obj;
                self.pending = None;
            }
        }
        if fresh.is_some() {
            self.pending = fresh;
        }
        out
    }
}

/// The cease bit is never set.
struct CeaseIgnored;

impl Corruption<AttIn, AttOut> for CeaseIgnored {
    fn input(&mut self, input: &AttIn) -> AttIn {
        AttIn {
            cease_valid: 0,
            ..*input
        }
    }
}

/// `oldest_*` one cycle stale.
#[derive(Default)]
struct OldestLate {
    last: (u64, u64),
}

impl Corruption<AttIn, AttOut> for OldestLate {
    fn output(&mut self, _: &AttIn, mut out: AttOut) -> AttOut {
        let now = (out.oldest_valid, out.oldest_obj);
        (out.oldest_valid, out.oldest_obj) = self.last;
        self.last = now;
        out
    }
}

/// Register wins over remove in the same cycle (the README says remove wins).
struct RegisterBeatsRemove;

impl Corruption<AttIn, AttOut> for RegisterBeatsRemove {
    fn input(&mut self, input: &AttIn) -> AttIn {
        let mut fed = *input;
        if input.reg_valid == 1 && input.rm_valid == 1 && input.reg_obj == input.rm_obj {
            fed.rm_valid = 0;
        }
        fed
    }
}

#[test]
fn mutants_are_caught() {
    let cfg = config(16, 32, 5);
    let a = &cfg.access_time_tracker;
    let seed = seed("att mutants", tb::DEFAULT_SEED);
    let s = stimulus(&cfg, seed, SHORT_CYCLES);
    let twin = || AccessTimeTracker::new(a);
    let mon = || AttMonitor::new(a);
    assert_caught(
        "interrupt one access late",
        twin(),
        Mutant {
            inner: twin(),
            corruption: IrqOneAccessLate::default(),
        },
        &mut mon(),
        &s,
        &["irq_valid"],
    );
    assert_caught(
        "cease ignored",
        twin(),
        Mutant {
            inner: twin(),
            corruption: CeaseIgnored,
        },
        &mut mon(),
        &s,
        &["irq_valid"],
    );
    assert_caught(
        "oldest one cycle late",
        twin(),
        Mutant {
            inner: twin(),
            corruption: OldestLate::default(),
        },
        &mut mon(),
        &s,
        &["oldest_valid", "oldest_obj"],
    );
    // The directed same-cycle case registers and removes slot 0 together; what shows first
    // is the object list (oldest) or a record of the wrongly kept slot.
    assert_caught(
        "register beats remove",
        twin(),
        Mutant {
            inner: twin(),
            corruption: RegisterBeatsRemove,
        },
        &mut mon(),
        &s,
        &["rec_valid", "rec_obj", "oldest_valid", "oldest_obj"],
    );
}
