//! Unit tests of the Access Time Tracker twin.

use super::*;

fn cfg(objects: usize, timer_bits: u32, threshold: u64) -> AttConfig {
    AttConfig {
        objects,
        timer_bits,
        profiling_threshold: threshold,
        ..AttConfig::default()
    }
}

fn register(obj: u64, start: u64, end: u64) -> AttIn {
    AttIn {
        reg_valid: 1,
        reg_obj: obj,
        reg_start_vpn: start,
        reg_end_vpn: end,
        ..AttIn::default()
    }
}

fn access(vpn: u64) -> AttIn {
    AttIn {
        acc_valid: 1,
        acc_vpn: vpn,
        ..AttIn::default()
    }
}

#[test]
fn record_appears_one_cycle_after_the_access_with_the_advanced_timer() {
    let mut att = AccessTimeTracker::new(&cfg(4, 32, 256));
    att.step(&register(2, 100, 199));
    let same_cycle = att.step(&access(150));
    assert_eq!(same_cycle.rec_valid, 0, "outputs are registered");
    let next = att.step(&AttIn::default());
    assert_eq!(
        (next.rec_valid, next.rec_obj, next.rec_vpn, next.rec_timer),
        (1, 2, 150, 1)
    );
    assert_eq!(att.step(&AttIn::default()).rec_valid, 0);
}

/// README rule 4: a driver write naming the hit object in its wrap cycle suppresses
/// the interrupt — also when two writes both name it (the writes' slots are OR-ed, not
/// toggled).
#[test]
fn two_driver_writes_of_the_wrapping_object_together_suppress_its_interrupt() {
    let wrap_with = |writes: AttIn| {
        let mut att = AccessTimeTracker::new(&cfg(4, 32, 2));
        att.step(&register(1, 100, 199));
        att.step(&access(150));
        att.step(&AttIn {
            acc_valid: 1,
            acc_vpn: 150,
            ..writes
        });
        let out = att.step(&AttIn::default());
        (out.rec_valid, out.irq_valid)
    };
    assert_eq!(wrap_with(AttIn::default()), (1, 1), "the wrap interrupts");
    let both = AttIn {
        rm_valid: 1,
        rm_obj: 1,
        cease_valid: 1,
        cease_obj: 1,
        ..AttIn::default()
    };
    assert_eq!(wrap_with(both), (1, 0));
    // A register and a remove of it in the same cycle (remove wins, rule 3).
    let reg_and_rm = AttIn {
        rm_valid: 1,
        rm_obj: 1,
        ..register(1, 300, 399)
    };
    assert_eq!(wrap_with(reg_and_rm), (1, 0));
}

#[test]
fn the_read_back_shows_the_cease_bit_of_the_ceased_slot_only() {
    let mut att = AccessTimeTracker::new(&cfg(4, 32, 256));
    for (obj, base) in [(0u64, 0u64), (1, 100), (2, 200)] {
        att.step(&register(obj, base, base + 9));
    }
    att.step(&AttIn {
        cease_valid: 1,
        cease_obj: 1,
        ..AttIn::default()
    });
    let ceased: Vec<(usize, bool)> = att.objects().iter().map(|o| (o.slot, o.cease)).collect();
    assert_eq!(ceased, vec![(0, false), (1, true), (2, false)]);
}

#[test]
fn overlapping_ranges_go_to_the_lowest_slot() {
    let mut att = AccessTimeTracker::new(&cfg(4, 32, 256));
    att.step(&register(3, 0, 1000));
    att.step(&register(1, 500, 600));
    att.step(&access(550));
    assert_eq!(att.step(&access(700)).rec_obj, 1);
    assert_eq!(att.step(&AttIn::default()).rec_obj, 3);
}

#[test]
fn bad_configurations_are_refused_with_the_key() {
    let e = AccessTimeTracker::try_new(&cfg(33, 32, 256)).unwrap_err();
    assert!(e.to_string().contains("objects"), "{e}");
    let e = AccessTimeTracker::try_new(&cfg(4, 4, 16)).unwrap_err();
    assert!(e.to_string().contains("profiling_threshold"), "{e}");
    assert!(AccessTimeTracker::try_new(&cfg(4, 4, 15)).is_ok());
}

#[test]
fn recency_order_follows_the_last_touch() {
    let exact = AttConfig {
        recency: AttRecency::Ranks,
        ..cfg(8, 32, 256)
    };
    let mut att = AccessTimeTracker::new(&exact);
    for (obj, base) in [(0u64, 0u64), (5, 100), (2, 200)] {
        att.step(&register(obj, base, base + 9));
    }
    assert_eq!(att.recency_order(), Some(vec![0, 5, 2]));
    att.step(&access(3));
    assert_eq!(att.recency_order(), Some(vec![5, 2, 0]));
    assert_eq!(att.oldest(), Some(5));
    // Access and register in one cycle: the register is the newer touch.
    let both = AttIn {
        acc_valid: 1,
        acc_vpn: 105,
        ..register(7, 300, 309)
    };
    att.step(&both);
    assert_eq!(att.recency_order(), Some(vec![2, 0, 5, 7]));
}

/// Under the exact orders a remove unlinks the slot: the next oldest is shown, and a
/// slot registered again later enters as the newest.
#[test]
fn a_removed_slot_leaves_the_exact_recency_order() {
    for recency in [AttRecency::Ranks, AttRecency::AgeMatrix] {
        let exact = AttConfig {
            recency,
            ..cfg(8, 32, 256)
        };
        let mut att = AccessTimeTracker::new(&exact);
        for (obj, base) in [(4u64, 0u64), (1, 100), (6, 200)] {
            att.step(&register(obj, base, base + 9));
        }
        let remove = |obj| AttIn {
            rm_valid: 1,
            rm_obj: obj,
            ..AttIn::default()
        };
        let out = att.step(&remove(4));
        assert_eq!((out.oldest_valid, out.oldest_obj), (1, 4), "{recency:?}");
        assert_eq!(att.recency_order(), Some(vec![1, 6]), "{recency:?}");
        let out = att.step(&AttIn::default());
        assert_eq!((out.oldest_valid, out.oldest_obj), (1, 1), "{recency:?}");
        att.step(&register(4, 300, 309));
        assert_eq!(att.recency_order(), Some(vec![1, 6, 4]), "{recency:?}");
        att.step(&remove(1));
        att.step(&remove(6));
        att.step(&remove(4));
        assert_eq!(att.recency_order(), Some(vec![]), "{recency:?}");
        assert_eq!(att.step(&AttIn::default()).oldest_valid, 0, "{recency:?}");
    }
}
