//! Tests of the bandwidth windows: arrival order, push-back, the gap buffer.

use super::*;

#[test]
fn in_processing_order_a_later_arrival_delays_an_earlier_one() {
    let mut b = Budget::new(false);
    assert_eq!(b.consume(500, 10.0, 0), 0);
    assert_eq!(
        b.consume(100, 10.0, 0),
        410,
        "queued behind the request at 500"
    );
}

#[test]
fn in_order_requests_queue_beyond_the_rate() {
    let mut b = Budget::new(true);
    assert_eq!(b.consume(10, 4.0, 10), 0);
    assert_eq!(b.consume(10, 4.0, 10), 4);
    assert_eq!(b.consume(10, 4.0, 10), 8);
    assert_eq!(b.consume(100, 4.0, 100), 0, "idle resource: no wait");
    assert_eq!(b.out_of_order, 0);
}

/// A request processed after a later-arriving one is served first: it does not wait,
/// and the one that arrived later is pushed behind it for every request after.
#[test]
fn an_earlier_arrival_processed_later_is_not_delayed() {
    let mut b = Budget::new(true);
    assert_eq!(b.consume(500, 10.0, 0), 0, "busy 500..510");
    assert_eq!(b.consume(100, 10.0, 0), 0, "arrives first: served at once");
    assert_eq!(
        b.consume(495, 10.0, 0),
        0,
        "495..505 goes ahead of the one at 500"
    );
    assert_eq!(b.out_of_order, 2);
    // The one at 500 now finishes at 515 (505 + 10): a request at 505 waits for it.
    // Its answer (no wait, done at 510) stands: 5 cycles of queueing never charged.
    assert_eq!(b.overbooked_cycles(), 5.0);
    assert_eq!(b.consume(505, 10.0, 0), 10);
    assert_eq!(b.out_of_order, 2);
}

#[test]
fn ties_go_in_processing_order_and_the_floor_retires() {
    let mut b = Budget::new(true);
    assert_eq!(b.consume(20, 5.0, 0), 0);
    assert_eq!(
        b.consume(20, 5.0, 0),
        5,
        "same cycle: behind the first processed"
    );
    assert_eq!(
        b.consume(21, 5.0, 21),
        9,
        "both retired at floor 21; free at 30"
    );
    assert_eq!(
        b.live(),
        0,
        "a request at the floor of an empty window does not enter it"
    );
    assert_eq!(b.out_of_order, 0);
}

#[test]
fn a_line_port_takes_one_line_per_cycle_in_arrival_order() {
    let mut p = LinePort::new(true);
    assert_eq!(p.take(10, 3, 10), 10, "idle: the first line starts at once");
    assert_eq!(p.take(11, 1, 10), 13, "behind the three lines before it");
    assert_eq!(p.take(50, 2, 10), 50);
    assert_eq!(
        p.take(40, 2, 10),
        40,
        "arrives before the pair at 50: not delayed"
    );
    assert_eq!(p.take(50, 1, 10), 52, "behind the pair that arrived at 50");
    assert_eq!(p.out_of_order(), 1);
}

/// The rule step by step, as first written: a Vec in arrival order, every request
/// behind an out-of-order one pushed back with `max(previous finish, arrival) + cost`.
struct Reference {
    window: Vec<Slot>,
    free_at: f64,
    overbooked: f64,
    /// Final minus answered finish of the retired requests, summed in arrival order (as
    /// [`Budget::overbooked_cycles`] sums them: the same value bit for bit).
    retired_late: f64,
}

impl Reference {
    fn consume(&mut self, now: u64, cost: f64, floor: u64) -> f64 {
        while self.window.first().is_some_and(|s| s.arrival <= floor) {
            let s = self.window.remove(0);
            self.retired_late += s.finish - s.answered;
            self.free_at = s.finish;
        }
        let pos = self.window.partition_point(|s| s.arrival <= now);
        let before = pos
            .checked_sub(1)
            .map_or(self.free_at, |p| self.window[p].finish);
        let start = before.max(now as f64);
        let mut finish = start + cost;
        let slot = Slot {
            arrival: now,
            cost,
            finish,
            answered: finish,
        };
        self.window.insert(pos, slot);
        for s in &mut self.window[pos + 1..] {
            let pushed = finish.max(s.arrival as f64) + s.cost;
            if pushed == s.finish {
                break;
            }
            self.overbooked += pushed - s.finish;
            s.finish = pushed;
            finish = pushed;
        }
        start - now as f64
    }

    /// Uncharged queueing summed per request, retired ones first, in arrival order.
    fn late(&self) -> f64 {
        let mut late = self.retired_late;
        for s in &self.window {
            late += s.finish - s.answered;
        }
        late
    }
}

/// Waits, uncharged queueing and charged queueing are bit for bit the step-by-step
/// rule's on a saturated resource with a non-dyadic cost, arrivals up to 300 cycles
/// ahead of a rising floor (or up to 2, so many arrive at the floor of an empty
/// window) and idle gaps (fixed seed).
#[test]
fn pushing_back_gives_the_step_by_step_rules_values() {
    let mut draws = crate::workload::rng::XorShift::new(0x005e_ed0f_ba5e);
    for (cost, ahead) in [5.152_213, 0.191_7, 1.0, 0.25]
        .into_iter()
        .flat_map(|c| [(c, 300), (c, 3)])
    {
        let mut b = Budget::new(true);
        let mut r = Reference {
            window: Vec::new(),
            free_at: 0.0,
            overbooked: 0.0,
            retired_late: 0.0,
        };
        let (mut floor, mut queued) = (0u64, 0.0f64);
        for i in 0..40_000u64 {
            floor += draws.next_u64() % 3 * (1 + (i % 5000 == 0) as u64 * 4000);
            let now = floor + draws.next_u64() % ahead;
            let wait = r.consume(now, cost, floor);
            if wait > 0.0 {
                queued += wait;
            }
            assert_eq!(
                b.consume(now, cost, floor),
                wait.ceil() as u64,
                "request {i}"
            );
        }
        // The same delays, summed per request rather than per push: equal to rounding.
        let (lazy, stepwise) = (b.overbooked_cycles(), r.overbooked);
        assert!(
            (lazy - stepwise).abs() <= 1e-9 * stepwise.max(1.0),
            "uncharged {lazy} against {stepwise}"
        );
        assert_eq!(b.queued_cycles.to_bits(), queued.to_bits());
        if ahead == 300 {
            assert!(b.out_of_order > 10_000 && b.overbooked_cycles() > 0.0);
        }
    }
}

/// A request for the property test: how far the floor rises before it, how far ahead of
/// the floor it arrives, and its cost (a few costs, so ties and idle gaps both occur).
fn request() -> impl proptest::strategy::Strategy<Value = (u64, u64, f64)> {
    use proptest::prelude::*;
    (
        prop_oneof![Just(0u64), 0..3u64, 0..400u64],
        prop_oneof![Just(0u64), 0..4u64, 0..200u64, 0..3000u64],
        prop_oneof![Just(1.0f64), Just(0.191_7), Just(5.152_213), 0.05..40.0f64],
    )
}

proptest::proptest! {
    /// The gap buffer against a plain `Vec` in arrival order: insertions anywhere (before
    /// the gap, behind it, at the front, into a full buffer), retirements across the gap
    /// and compactions give the same waits, queueing and uncharged queueing, bit for bit.
    #[test]
    fn the_gap_buffer_gives_the_plain_vectors_values(
        requests in proptest::collection::vec(request(), 1..600),
    ) {
        let mut b = Budget::new(true);
        let mut r = Reference {
            window: Vec::new(),
            free_at: 0.0,
            overbooked: 0.0,
            retired_late: 0.0,
        };
        let (mut floor, mut queued) = (0u64, 0.0f64);
        for (i, &(rise, ahead, cost)) in requests.iter().enumerate() {
            floor += rise;
            let now = floor + ahead;
            let wait = r.consume(now, cost, floor);
            if wait > 0.0 {
                queued += wait;
            }
            let got = b.consume(now, cost, floor);
            proptest::prop_assert_eq!(got, wait.ceil() as u64, "request {}", i);
            proptest::prop_assert_eq!(b.overbooked_cycles().to_bits(), r.late().to_bits());
        }
        proptest::prop_assert_eq!(b.queued_cycles.to_bits(), queued.to_bits());
    }
}
