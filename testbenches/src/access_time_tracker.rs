//! Stimulus for the Access Time Tracker: named directed cases (one per documented
//! behaviour, each starting with a reset), their concatenation [`directed`], and a seeded,
//! endless random stream [`random`].
//!
//! The directed cases adapt to the configuration: object slots are taken modulo
//! `objects`, the threshold case runs exactly `profiling_threshold` accesses, and the
//! saturation case is only included when the timer is small enough to saturate quickly.

use mcmvm_models::config::HwConfig;
use mcmvm_models::protocol::{mask, AttIn};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Seed of the random stimulus unless the caller picks another (printed by the tests).
pub const DEFAULT_SEED: u64 = 0x4154_5425;

/// Largest timer the saturation case will count up to (cycles it would take).
pub const SATURATION_CASE_MAX_TIMER: u64 = 4096;

/// A directed sequence under construction, one [`AttIn`] per cycle.
#[derive(Debug, Default, Clone)]
pub struct Script {
    cycles: Vec<AttIn>,
}

impl Script {
    /// A script that starts with one reset cycle.
    pub fn after_reset() -> Script {
        let mut s = Script::default();
        s.push(AttIn {
            reset: 1,
            ..AttIn::default()
        });
        s
    }
    /// Append one raw cycle.
    pub fn push(&mut self, input: AttIn) -> &mut Self {
        self.cycles.push(input);
        self
    }
    /// `n` cycles with every port idle.
    pub fn idle(&mut self, n: usize) -> &mut Self {
        for _ in 0..n {
            self.push(AttIn::default());
        }
        self
    }
    /// Register `slot` for `start ..= end`.
    pub fn register(&mut self, slot: u64, start: u64, end: u64) -> &mut Self {
        self.push(register(slot, start, end))
    }
    /// One access to `vpn`.
    pub fn access(&mut self, vpn: u64) -> &mut Self {
        self.push(access(vpn))
    }
    /// Remove `slot`.
    pub fn remove(&mut self, slot: u64) -> &mut Self {
        self.push(AttIn {
            rm_valid: 1,
            rm_obj: slot,
            ..AttIn::default()
        })
    }
    /// Set the cease bit of `slot`.
    pub fn cease(&mut self, slot: u64) -> &mut Self {
        self.push(AttIn {
            cease_valid: 1,
            cease_obj: slot,
            ..AttIn::default()
        })
    }
    /// The cycles.
    pub fn build(&self) -> Vec<AttIn> {
        self.cycles.clone()
    }
}

/// One cycle registering `slot` for `start ..= end`.
pub fn register(slot: u64, start: u64, end: u64) -> AttIn {
    AttIn {
        reg_valid: 1,
        reg_obj: slot,
        reg_start_vpn: start,
        reg_end_vpn: end,
        ..AttIn::default()
    }
}

/// One cycle with an access to `vpn`.
pub fn access(vpn: u64) -> AttIn {
    AttIn {
        acc_valid: 1,
        acc_vpn: vpn,
        ..AttIn::default()
    }
}

/// Base VPN of the range the directed cases give `slot` (1 MB = 256 pages apart).
pub fn base(slot: u64) -> u64 {
    0x1_0000 + slot * 0x100
}

/// The named directed cases for `cfg`, in a fixed order. Each starts with a reset.
pub fn cases(cfg: &HwConfig) -> Vec<(&'static str, Vec<AttIn>)> {
    let a = &cfg.access_time_tracker;
    let n = a.objects as u64;
    let threshold = a.profiling_threshold;
    let timer_max = mask(a.timer_bits);
    let mut cases = vec![
        ("ranges", ranges_case(n)),
        (
            "threshold_and_cease",
            threshold_and_cease_case(n, threshold),
        ),
        ("reregister", reregister_case(n, threshold)),
        ("recency", recency_case(n)),
        ("same_cycle_and_bounds", same_cycle_and_bounds_case(n)),
        ("full_table", full_table_case(n)),
        ("reset", reset_case(n)),
    ];
    if timer_max <= SATURATION_CASE_MAX_TIMER {
        let mut s = Script::after_reset();
        s.register(3 % n, base(3), base(3));
        for _ in 0..timer_max + 3 {
            s.access(base(3));
        }
        s.idle(2);
        cases.push(("saturation", s.build()));
    }
    cases
}

/// Hits at both range boundaries, misses just outside, an access with acc_valid low,
/// overlapping ranges (lowest slot wins).
fn ranges_case(n: u64) -> Vec<AttIn> {
    let slot = |i: u64| i % n;
    let mut s = Script::after_reset();
    s.register(slot(1), base(1), base(1) + 0xFF)
        .register(slot(0), base(1) + 0x80, base(1) + 0x17F)
        .access(base(1))
        .access(base(1) + 0xFF)
        .access(base(1) + 0x80)
        .access(base(1) + 0x17F)
        .access(base(1) - 1)
        .access(base(1) + 0x180)
        .push(AttIn {
            acc_valid: 0,
            acc_vpn: base(1),
            ..AttIn::default()
        })
        .access(0)
        .access(u64::from(u32::MAX))
        .idle(2);
    s.build()
}

/// Profiling interrupts: exactly at the threshold, again one interval later; a cease in
/// the same cycle as the crossing suppresses it, and none come after the cease.
fn threshold_and_cease_case(n: u64, threshold: u64) -> Vec<AttIn> {
    let obj = 2 % n;
    let mut s = Script::after_reset();
    s.register(obj, base(2), base(2) + 0xFF);
    for k in 0..2 * threshold {
        s.access(base(2) + k % 0x100);
    }
    for k in 0..threshold - 1 {
        s.access(base(2) + k % 0x100);
    }
    s.push(AttIn {
        cease_valid: 1,
        cease_obj: obj,
        ..access(base(2))
    });
    for k in 0..threshold + 1 {
        s.access(base(2) + k % 0x100);
    }
    s.idle(2);
    s.build()
}

/// Re-registering clears the timer, the interval and the cease bit.
fn reregister_case(n: u64, threshold: u64) -> Vec<AttIn> {
    let obj = 2 % n;
    let mut s = Script::after_reset();
    s.register(obj, base(2), base(2) + 0xFF).cease(obj);
    for _ in 0..threshold {
        s.access(base(2) + 1);
    }
    s.register(obj, base(3), base(3) + 0xF);
    s.access(base(2) + 1);
    for _ in 0..threshold {
        s.access(base(3));
    }
    s.idle(2);
    s.build()
}

/// Recency: registration order, then accesses reorder; removal drops an object;
/// same-cycle register + access (the register is newer).
fn recency_case(n: u64) -> Vec<AttIn> {
    let slot = |i: u64| i % n;
    let mut s = Script::after_reset();
    for i in 0..n.min(4) {
        s.register(i, base(i), base(i) + 0xF);
    }
    s.idle(1)
        .access(base(0))
        .access(base(2))
        .idle(1)
        .remove(slot(1))
        .idle(1);
    s.push(AttIn {
        acc_valid: 1,
        acc_vpn: base(slot(3)),
        ..register(slot(1), base(1), base(1) + 0xF)
    });
    s.idle(1)
        .remove(0)
        .remove(slot(2))
        .remove(slot(3))
        .remove(slot(1))
        .idle(2);
    s.build()
}

/// Driver writes and an access to the same slot in one cycle; object numbers beyond
/// the table; an empty range (start > end).
fn same_cycle_and_bounds_case(n: u64) -> Vec<AttIn> {
    let mut s = Script::after_reset();
    s.register(0, base(0), base(0) + 0xF).access(base(0));
    s.push(AttIn {
        acc_valid: 1,
        acc_vpn: base(0),
        ..register(0, base(5), base(5))
    });
    s.access(base(0)).access(base(5));
    s.push(AttIn {
        rm_valid: 1,
        rm_obj: 0,
        ..register(0, base(6), base(6))
    });
    s.access(base(6));
    s.register(31, base(7), base(7))
        .access(base(7))
        .remove(31)
        .cease(31);
    s.register(1 % n, base(8) + 5, base(8))
        .access(base(8) + 2)
        .idle(2);
    s.build()
}

/// Every slot registered (the table is full), then an access and a remove of one slot
/// in the same cycle: the record is emitted, the slot is gone for the next access.
/// 0 reset · 1..=n register slot i · n+1 access slot 0 · n+2 access slot 1 + remove 1
/// · n+3 access slot 1 (miss) · 2 idle.
fn full_table_case(n: u64) -> Vec<AttIn> {
    let one = 1 % n;
    let mut s = Script::after_reset();
    for i in 0..n {
        s.register(i, base(i), base(i) + 0xF);
    }
    s.access(base(0));
    s.push(AttIn {
        rm_valid: 1,
        rm_obj: one,
        ..access(base(one))
    });
    s.access(base(one)).idle(2);
    s.build()
}

/// Synchronous reset in the middle of activity, with other inputs asserted.
fn reset_case(n: u64) -> Vec<AttIn> {
    let mut s = Script::after_reset();
    s.register(0, base(0), base(0) + 0xF).access(base(0));
    s.push(AttIn {
        reset: 1,
        ..register(1 % n, base(1), base(1))
    });
    s.access(base(0)).access(base(1)).idle(2);
    s.build()
}

/// Every directed case, one after another (each begins with its own reset).
pub fn directed(cfg: &HwConfig) -> Vec<AttIn> {
    cases(cfg).into_iter().flat_map(|(_, c)| c).collect()
}

/// Endless seeded stimulus: random gaps, rare resets, driver writes with a bias towards
/// overlapping and boundary ranges, and accesses mostly aimed at registered ranges and
/// their edges so timers advance, intervals wrap and the recency order churns.
pub fn random(cfg: &HwConfig, seed: u64) -> impl Iterator<Item = AttIn> {
    let objects = cfg.access_time_tracker.objects as u64;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    // The generator's own idea of the ranges it registered (it ignores removals: stale
    // ranges give misses, which are wanted too).
    let mut ranges: Vec<(u64, u64)> = Vec::new();
    std::iter::from_fn(move || {
        let mut input = AttIn::default();
        if rng.gen_bool(0.0005) {
            input.reset = 1;
            ranges.clear();
        }
        if rng.gen_bool(0.04) || ranges.is_empty() && rng.gen_bool(0.3) {
            let (slot, start, end) = random_range(&mut rng, objects);
            input.reg_valid = 1;
            input.reg_obj = slot;
            input.reg_start_vpn = start;
            input.reg_end_vpn = end;
            ranges.push((start, end));
            if ranges.len() > 64 {
                ranges.remove(0);
            }
        }
        if rng.gen_bool(0.01) {
            input.rm_valid = 1;
            input.rm_obj = rng.gen_range(0..objects + 1).min(31);
        }
        if rng.gen_bool(0.01) {
            input.cease_valid = 1;
            input.cease_obj = rng.gen_range(0..objects + 1).min(31);
        }
        if rng.gen_bool(0.75) {
            input.acc_valid = 1;
            input.acc_vpn = random_access(&mut rng, &ranges);
        }
        Some(input)
    })
}

/// A registration: `(slot, start, end)`, biased to boundary and overlapping ranges.
fn random_range(rng: &mut ChaCha8Rng, objects: u64) -> (u64, u64, u64) {
    // Slots beyond the table now and then (must be ignored).
    let slot = if rng.gen_bool(0.05) {
        rng.gen_range(0..32)
    } else {
        rng.gen_range(0..objects)
    };
    let start: u64 = match rng.gen_range(0..10) {
        0 => 0,
        1 => u64::from(u32::MAX) - rng.gen_range(0..64),
        _ => rng.gen_range(0..64) * 0x40,
    };
    let len: u64 = match rng.gen_range(0..10) {
        0 => 0,
        1 => rng.gen_range(0x1000..0x10_0000),
        _ => rng.gen_range(1..0x80),
    };
    // Now and then an empty range (start > end).
    let end = if rng.gen_bool(0.03) {
        start.saturating_sub(1)
    } else {
        (start + len).min(u64::from(u32::MAX))
    };
    (slot, start, end)
}

/// An access VPN: mostly inside or at the edges of the recent `ranges`.
fn random_access(rng: &mut ChaCha8Rng, ranges: &[(u64, u64)]) -> u64 {
    if ranges.is_empty() || rng.gen_bool(0.1) {
        return rng.gen_range(0..0x2000);
    }
    // Hot objects: the most recent ranges get most of the accesses.
    let hot = ranges.len() - 1 - rng.gen_range(0..ranges.len().min(4));
    let (start, end) = ranges[if rng.gen_bool(0.8) {
        hot
    } else {
        rng.gen_range(0..ranges.len())
    }];
    match rng.gen_range(0..10) {
        0 => start.saturating_sub(1),
        1 => (end + 1).min(u64::from(u32::MAX)),
        2 => start,
        3 => end,
        _ if end >= start => rng.gen_range(start..=end),
        _ => start,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_is_reproducible_from_its_seed() {
        let cfg = HwConfig::default();
        let a: Vec<AttIn> = random(&cfg, 7).take(500).collect();
        let b: Vec<AttIn> = random(&cfg, 7).take(500).collect();
        let c: Vec<AttIn> = random(&cfg, 8).take(500).collect();
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert!(a.iter().any(|i| i.reg_valid == 1) && a.iter().any(|i| i.acc_valid == 1));
    }

    #[test]
    fn every_case_starts_with_a_reset() {
        for (name, case) in cases(&HwConfig::default()) {
            assert_eq!(case[0].reset, 1, "{name}");
        }
    }
}
