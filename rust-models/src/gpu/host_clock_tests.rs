//! Tests of the host clock and the fault timer's sampling.

use super::*;

/// Ticks counted over part of a region convert to what the wall clock measured for
/// that part, whatever the tick frequency (both clocks see the same interval, so host
/// load does not matter).
#[test]
fn ticks_inside_a_region_convert_to_the_wall_time_of_that_part() {
    let sw = Stopwatch::start();
    std::thread::sleep(std::time::Duration::from_millis(10));
    let (wall, a) = (Instant::now(), ticks());
    std::thread::sleep(std::time::Duration::from_millis(20));
    let (inner, inner_wall) = (ticks() - a, wall.elapsed().as_secs_f64());
    std::thread::sleep(std::time::Duration::from_millis(10));
    let (secs, rate) = sw.stop();
    assert!(secs >= 0.04, "{secs}");
    let converted = rate.seconds(inner);
    assert!(
        (converted - inner_wall).abs() <= 0.02 * inner_wall + 1e-4,
        "{converted} s by ticks, {inner_wall} s by the wall clock"
    );
}

/// Every episode is counted, about one in eight is timed, replays that complete are
/// neither, and the estimate scales the timed time, less the driver's, by the count.
#[test]
fn fault_timer_counts_every_episode_and_times_a_sample() {
    let mut f = FaultTimer::default();
    let driver = std::cell::Cell::new(0.0);
    let now = || driver.get();
    for i in 0..8000 {
        f.fault_found(now);
        driver.set(driver.get() + 1.0); // a batch inside the fault call
        f.handled(now);
        f.replay_start(now);
        f.replay_end(i % 2 == 0);
        f.handled(now);
    }
    let (episodes, timed) = f.counts();
    assert_eq!(episodes, [8000, 4000]);
    assert!((800..1200).contains(&timed[0]), "{timed:?}");
    assert!((350..650).contains(&timed[1]), "{timed:?}");
    assert_eq!(f.driver_secs, [timed[0] as f64, 0.0]);
    // At one second per tick the driver's second per fresh fault is all there was.
    let rate = TickRate { secs_per_tick: 1.0 };
    let gpu = |k: usize, n: f64| (f.ticks[k] as f64 - f.driver_secs[k]).max(0.0) * n;
    let expect = gpu(0, 8000.0 / timed[0] as f64) + gpu(1, 4000.0 / timed[1] as f64);
    // The same sum in another rounding order: equal to the last few bits.
    let got = f.estimated_seconds(&rate);
    assert!((got - expect).abs() <= 1e-12 * expect, "{got} vs {expect}");
}

/// About one event-loop event in `START_PERIOD` is sampled, whatever follows: a fresh
/// fault in a sampled event has its discovery timed (from its attempt's start), a
/// replay in one that faults again its dequeue (from the event's start); attempts
/// inside a replay are not stamped (the replay is timed whole); each estimate scales
/// its samples to every fresh fault or refaulting replay.
#[test]
fn discovery_and_dequeue_are_sampled_per_event_and_scaled_to_every_fault() {
    let mut f = FaultTimer {
        enabled: true,
        ..FaultTimer::default()
    };
    let none = || 0.0;
    for i in 0..64_000u32 {
        // A fresh instruction: every fourth faults, the others translate.
        f.event_start();
        f.attempt_start();
        if i % 4 == 0 {
            f.fault_found(none);
            f.handled(none);
        }
        // A replay that faults again, and one that completes.
        for refaults in [true, false] {
            f.event_start();
            f.replay_start(none);
            f.attempt_start();
            if refaults {
                f.fault_found(none);
            }
            f.replay_end(refaults);
            f.handled(none);
        }
    }
    let (episodes, _) = f.counts();
    assert_eq!(episodes, [16_000, 64_000]);
    let within = |timed: u64, of: u64| {
        let per = of / START_PERIOD;
        (per * 7 / 10..=per * 13 / 10).contains(&timed)
    };
    assert_eq!(f.replays_completed, 64_000);
    let rate = TickRate { secs_per_tick: 1.0 };
    let parts = f.prelude_parts(&rate);
    let samples = [
        (f.discovery, 16_000),
        (f.dequeue, 64_000),
        (f.reissue, 64_000),
    ];
    for (k, (part, of)) in samples.into_iter().enumerate() {
        assert!(
            within(part.timed, of),
            "part {k}: {} timed of {of}",
            part.timed
        );
        let expect = part.ticks as f64 * of as f64 / part.timed as f64;
        assert_eq!(parts[k], (expect, part.timed), "part {k}");
    }
    // A timer that is not enabled samples nothing.
    let mut off = FaultTimer::new(false);
    for _ in 0..1000 {
        off.event_start();
        off.attempt_start();
        off.fault_found(none);
        off.handled(none);
    }
    assert_eq!(off.discovery.timed, 0);
}

/// What a stamp adds to an interval is taken out of every timed one (here all of it,
/// so every interval counts zero), and the calibrated cost on this host is below what
/// any real episode takes (a µs).
#[test]
fn stamp_cost_is_taken_out_of_timed_intervals() {
    let mut f = FaultTimer {
        enabled: true,
        stamp_ticks: u64::MAX,
        ..FaultTimer::default()
    };
    for _ in 0..4000 {
        f.event_start();
        f.attempt_start();
        f.fault_found(|| 0.0);
        f.handled(|| 0.0);
    }
    assert!(f.discovery.timed > 0 && f.timed[0] > 0);
    assert_eq!((f.discovery.ticks, f.ticks[0]), (0, 0));
    let rate = {
        let sw = Stopwatch::start();
        std::thread::sleep(std::time::Duration::from_millis(5));
        sw.stop().1
    };
    let cost = FaultTimer::new(true).stamp_ticks;
    assert!(rate.seconds(cost) < 1e-6, "{cost} ticks per stamp");
}
