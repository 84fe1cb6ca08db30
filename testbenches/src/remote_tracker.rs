//! Stimulus for the Remote Tracker (CLAP §4.3): named directed cases, one sequence of all of
//! them, and an infinite seeded random driver.
//!
//! Every directed case starts with a reset and ends with idle cycles so the last responses
//! (one cycle after their request) are observed. The expected outputs of each case are
//! pinned in `tests/remote_tracker.rs`.

use mcmvm_models::config::{HwConfig, RtConfig};
use mcmvm_models::protocol::RtIn;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Seed of the default random run (printed by the tests; override with `MCMVM_SEED`).
pub const DEFAULT_SEED: u64 = 0x5254_2025;

/// The directed cases, by name (used for the wave file names).
pub fn cases(cfg: &HwConfig) -> Vec<(&'static str, Vec<RtIn>)> {
    let rt = &cfg.remote_tracker;
    vec![
        ("latency", latency()),
        ("back_to_back", back_to_back()),
        ("drain_vs_walk", drain_vs_walk()),
        ("replacement", replacement(rt)),
        ("drain_of_victim", drain_of_victim(rt)),
        ("saturation", saturation(rt)),
        ("reset", reset_clears()),
    ]
}

/// Every directed case, one after the other (each begins with its own reset).
pub fn directed(cfg: &HwConfig) -> Vec<RtIn> {
    cases(cfg).into_iter().flat_map(|(_, seq)| seq).collect()
}

fn idle(n: usize) -> impl Iterator<Item = RtIn> {
    std::iter::repeat_n(RtIn::idle(), n)
}

/// The exact visibility rule: a walk issued in cycle 1 is not counted by a drain issued in
/// the same cycle (the drain is ordered first) but is by a drain issued in cycle 2; every
/// response comes exactly one cycle after its request. Layout (cycle: input):
/// 0 reset · 1 walk(5, remote) + drain(5) · 2 drain(5) · 3 idle · 4 drain(5) · 5 idle.
/// Responses: cycle 2 miss (the walk lands after the drain), cycle 3 (1, 1), cycle 5 miss.
pub fn latency() -> Vec<RtIn> {
    let mut s = vec![
        RtIn::reset(),
        RtIn::walk(5, true).with_drain(5),
        RtIn::drain(5),
    ];
    s.extend([RtIn::idle(), RtIn::drain(5), RtIn::idle()]);
    s
}

/// Walks to one new ID in consecutive cycles, then to two IDs interleaved, then drains.
/// 0 reset · 1-4 walk(7): local, remote, remote, local · 5 walk(8, remote) · 6 walk(7, local)
/// · 7 walk(8, remote) · 8 drain(7) · 9 drain(8) · 10 idle.
/// Responses: cycle 9 (5, 2) for ID 7; cycle 10 (2, 2) for ID 8.
pub fn back_to_back() -> Vec<RtIn> {
    vec![
        RtIn::reset(),
        RtIn::walk(7, false),
        RtIn::walk(7, true),
        RtIn::walk(7, true),
        RtIn::walk(7, false),
        RtIn::walk(8, true),
        RtIn::walk(7, false),
        RtIn::walk(8, true),
        RtIn::drain(7),
        RtIn::drain(8),
        RtIn::idle(),
    ]
}

/// Drains racing walks of the same ID through the pipeline.
/// 0 reset · 1 walk(3, remote) · 2 walk(3, remote) + drain(3) · 3 walk(3, local) + drain(3)
/// · 4 drain(3) · 5 walk(3, remote) · 6 drain(3) · 7 idle · 8 drain(9) · 9 idle.
/// Responses: cycle 3 (1, 1), cycle 4 (1, 1), cycle 5 (1, 0), cycle 7 (1, 1), cycle 9 miss.
pub fn drain_vs_walk() -> Vec<RtIn> {
    vec![
        RtIn::reset(),
        RtIn::walk(3, true),
        RtIn::walk(3, true).with_drain(3),
        RtIn::walk(3, false).with_drain(3),
        RtIn::drain(3),
        RtIn::walk(3, true),
        RtIn::drain(3),
        RtIn::idle(),
        RtIn::drain(9),
        RtIn::idle(),
    ]
}

/// Fill the table with IDs `100..100+entries` (remote walks, in order), refresh every other
/// one with a remote hit and all of them with a local hit, then walk two new IDs.
/// Oldest remote update: entry 101 (refreshes hit 100, 102, ... only), then 103, ...
/// so ID 101 and then ID 103 are replaced (for `entries` >= 4).
pub fn replacement(rt: &RtConfig) -> Vec<RtIn> {
    let n = rt.entries as u8;
    let mut s = vec![RtIn::reset()];
    s.extend((0..n).map(|i| RtIn::walk(100 + i, true)));
    s.extend((0..n).step_by(2).map(|i| RtIn::walk(100 + i, true)));
    s.extend((0..n).map(|i| RtIn::walk(100 + i, false)));
    s.extend([RtIn::walk(200, false), RtIn::walk(201, true)]);
    s.extend(idle(2));
    s.extend((0..n).map(|i| RtIn::drain(100 + i)));
    s.extend([RtIn::drain(200), RtIn::drain(201)]);
    s.extend(idle(1));
    s
}

/// A drain frees the very row a walk of the same cycle would replace. Fill the table with
/// remote walks of `100..100+entries` (ID 100 ends at rank `entries - 1`), then walk a new
/// ID 200 and drain ID 100 in one cycle: the drain is ordered first, so the walk takes the
/// freed row and nothing is evicted; the next new ID (201) replaces ID 101, the new oldest.
/// Layout (n = entries): 0 reset · 1..=n walks · n+1 walk(200, remote) + drain(100)
/// · n+2 walk(201, local) · n+3 idle · n+4 drain(200) · n+5 drain(101) · n+6 drain(201)
/// · n+7 idle. Responses: n+2 (1, 1) and no eviction; n+3 evicts 101 (with
/// `report_evictions`); n+5 (1, 1); n+6 miss (n >= 2); n+7 (1, 0).
pub fn drain_of_victim(rt: &RtConfig) -> Vec<RtIn> {
    let n = rt.entries as u8;
    let mut s = vec![RtIn::reset()];
    s.extend((0..n).map(|i| RtIn::walk(100 + i, true)));
    s.extend([
        RtIn::walk(200, true).with_drain(100),
        RtIn::walk(201, false),
        RtIn::idle(),
        RtIn::drain(200),
        RtIn::drain(101),
        RtIn::drain(201),
        RtIn::idle(),
    ]);
    s
}

/// Enough remote walks to one ID to saturate `counter_bits`-wide counters when they are
/// narrow (at most 12 bits); at 32 bits the counters count them exactly. Then a drain.
pub fn saturation(rt: &RtConfig) -> Vec<RtIn> {
    let walks = if rt.counter_bits <= 12 {
        (1usize << rt.counter_bits) + 3
    } else {
        4100
    };
    let mut s = vec![RtIn::reset()];
    s.extend(std::iter::repeat_n(RtIn::walk(255, true), walks));
    s.extend([
        RtIn::walk(0, true),
        RtIn::drain(255),
        RtIn::drain(0),
        RtIn::idle(),
    ]);
    s
}

/// Reset in the middle of traffic: in-flight work is cancelled, the table is empty after.
/// 0 reset · 1 walk(1, remote) · 2 walk(2, remote) + drain(1) · 3 reset · 4 drain(2)
/// · 5 drain(1) · 6 idle. Responses: cycle 3 nothing (reset), cycles 5 and 6 misses.
pub fn reset_clears() -> Vec<RtIn> {
    vec![
        RtIn::reset(),
        RtIn::walk(1, true),
        RtIn::walk(2, true).with_drain(1),
        RtIn::reset(),
        RtIn::drain(2),
        RtIn::drain(1),
        RtIn::idle(),
    ]
}

/// Infinite seeded random stimulus: a reset first, then walks with random gaps and bursts,
/// drains (sometimes of the ID walked in the same cycle), and an occasional reset. IDs come
/// from a pool 1.5x the table size (so the table fills and replaces) that includes the
/// boundary IDs 0 and 255.
pub fn random(cfg: &HwConfig, seed: u64) -> impl Iterator<Item = RtIn> {
    RtRandom::new(&cfg.remote_tracker, seed)
}

/// The random driver behind [`random`].
#[derive(Debug, Clone)]
pub struct RtRandom {
    rng: ChaCha8Rng,
    pool: Vec<u8>,
    started: bool,
    /// Remaining cycles of the current burst (walk every cycle) or gap (no walks).
    phase_left: u32,
    in_burst: bool,
}

impl RtRandom {
    /// A driver for a tracker with parameters `rt`, seeded with `seed`.
    pub fn new(rt: &RtConfig, seed: u64) -> Self {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let size = (rt.entries * 3 / 2).clamp(2, 256);
        let mut pool: Vec<u8> = vec![0, 255];
        while pool.len() < size {
            let id: u8 = rng.gen();
            if !pool.contains(&id) {
                pool.push(id);
            }
        }
        RtRandom {
            rng,
            pool,
            started: false,
            phase_left: 0,
            in_burst: true,
        }
    }

    /// An ID from the pool, skewed towards its head so some IDs are hot (hits, saturation
    /// with narrow counters) and the tail is cold (misses, replacements).
    fn pick_id(&mut self) -> u8 {
        let n = self.pool.len();
        let a = self.rng.gen_range(0..n);
        let b = self.rng.gen_range(0..n);
        self.pool[a.min(b)]
    }
}

impl Iterator for RtRandom {
    type Item = RtIn;

    fn next(&mut self) -> Option<RtIn> {
        if !self.started {
            self.started = true;
            return Some(RtIn::reset());
        }
        if self.rng.gen_ratio(1, 4000) {
            return Some(RtIn::reset());
        }
        if self.phase_left == 0 {
            self.in_burst = !self.in_burst;
            self.phase_left = if self.in_burst {
                self.rng.gen_range(1..40)
            } else {
                self.rng.gen_range(1..6)
            };
        }
        self.phase_left -= 1;
        let mut input = RtIn::idle();
        let walk_chance = if self.in_burst { 0.9 } else { 0.05 };
        if self.rng.gen_bool(walk_chance) {
            let id = self.pick_id();
            input = RtIn::walk(id, self.rng.gen_bool(0.5));
        }
        if self.rng.gen_bool(0.06) {
            let id = if input.walk_valid != 0 && self.rng.gen_bool(0.3) {
                input.walk_alloc_id as u8
            } else {
                self.pick_id()
            };
            input = input.with_drain(id);
        }
        Some(input)
    }
}
