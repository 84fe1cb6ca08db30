//! Bandwidth resources served in the order requests *arrive*, not the order the event loop
//! processes them.
//!
//! The event loop computes a whole warp instruction per event, so one event may put a line on
//! an HBM channel thousands of cycles after its issue (behind a walk or a fault) while the
//! next events put lines there earlier. A resource that served in processing order (one
//! "free from" time) would make those earlier arrivals queue behind the later one. Here a
//! resource keeps the requests that a later-processed request could still arrive before,
//! in arrival order, and serves first come first served *by arrival cycle*: a request
//! starts when every request that arrived before it has been served (ties: the one
//! processed first goes first). A request that arrives earlier is never delayed by one
//! that arrives later.
//!
//! What a model computing completions at processing time cannot do is take back an answer
//! already given: when a request lands before requests already answered, those keep
//! their times (each would have waited up to this request's cost longer) and the
//! resource's schedule behind it is pushed back, so the bandwidth is still accounted for
//! every later request. Such requests are counted ([`Budget::out_of_order`]).
//!
//! The event loop passes a *floor* with every request: the cycle of the event being processed,
//! before which no later request can arrive. Requests that arrived at or before it are
//! final and are retired, so the kept window is only as long as the event loop looks ahead.

/// One request still in the window: arrival cycle, service cycles, finish (fractional;
/// current only below [`Budget::fresh`]) and the finish it was answered with.
#[derive(Debug, Clone, Copy)]
struct Slot {
    arrival: u64,
    cost: f64,
    finish: f64,
    answered: f64,
}

/// A resource that moves one line at a time at a fixed rate: a memory channel, a ring
/// port, an SM's issue slots. Time is kept in fractional cycles so sub-cycle rates add up
/// exactly.
///
/// The window's finishes are a scan: each is `max(previous finish, arrival) + cost`, the
/// first's previous being `free_at`. A request landing before others moves every finish
/// behind it, so they are recomputed only when read (the finish before a new request, the
/// last one retired): a saturated window took each out-of-order request a walk over all
/// requests behind it, now one walk per stretch read. The values are the same bit for bit.
#[derive(Debug, Clone, Default)]
pub struct Budget {
    /// Serve in arrival order; `false`: in the order requests are processed (one
    /// "free from" time, `memory.serve_in_arrival_order = false`).
    pub arrival_order: bool,
    /// The window is `window[head..]`: a `Vec` with its retired front skipped, not a
    /// `VecDeque`, so a search, an insertion and a push-back each see one slice (a ring's
    /// two halves cost a wrap-around copy and split every pass).
    window: Vec<Slot>,
    head: usize,
    /// `window[head..fresh]` hold current finishes; those from `fresh` on are stale.
    fresh: usize,
    /// Finish of the last request retired from the window.
    free_at: f64,
    /// Cycles spent waiting for this resource, summed over all requests.
    pub queued_cycles: f64,
    /// Lines moved.
    pub lines: u64,
    /// Requests that arrived before a request processed earlier (served ahead of it).
    pub out_of_order: u64,
    /// Waiting never charged of the retired requests (see [`Budget::overbooked_cycles`]).
    overbooked_retired: f64,
}

impl Budget {
    /// A resource serving in arrival order (`true`) or in processing order.
    pub fn new(arrival_order: bool) -> Budget {
        Budget {
            arrival_order,
            ..Budget::default()
        }
    }

    /// Move one request that arrives at `now` and occupies the resource for `cost`
    /// cycles; returns the (whole) cycles it waits before it starts. `floor`: no request
    /// processed later arrives before this cycle (`floor <= now`).
    #[inline]
    pub fn consume(&mut self, now: u64, cost: f64, floor: u64) -> u64 {
        debug_assert!(floor <= now, "request at {now} below the floor {floor}");
        self.lines += 1;
        let now_f = now as f64;
        if self.arrival_order {
            self.retire(floor);
        }
        // Processing order; or arrival order with nothing left in the window and a
        // request at the floor (an SM's issue slots, nearly always): every later request
        // arrives at or after it and would retire it first thing, so it need not enter
        // the window — the same `free_at`, without touching the window's buffer.
        if !self.arrival_order || (now == floor && self.head == self.window.len()) {
            let start = self.free_at.max(now_f);
            self.free_at = start + cost;
            return self.waited(start - now_f);
        }
        // Position in arrival order: usually the end; else the first later arrival.
        let len = self.window.len();
        let pos = match self.window.last() {
            Some(last) if last.arrival > now => {
                self.head + position(&self.window[self.head..], now)
            }
            _ => len,
        };
        let before = if pos == self.head {
            self.free_at
        } else {
            self.refresh(pos);
            self.window[pos - 1].finish
        };
        let start = before.max(now_f);
        let finish = start + cost;
        let slot = Slot {
            arrival: now,
            cost,
            finish,
            answered: finish,
        };
        if pos == len {
            self.window.push(slot);
        } else {
            // The requests behind it start later; what they answered stands.
            self.window.insert(pos, slot);
            self.out_of_order += 1;
        }
        // `window[head..pos]` was refreshed (or is empty), and the new finish is current.
        self.fresh = pos + 1;
        self.waited(start - now_f)
    }

    /// Bring the finishes of `window[..upto]` up to date.
    ///
    /// `max(finish, arrival) + cost` rounded is `max(finish + cost, arrival + cost)` with
    /// each sum rounded (rounding is monotone), so the same values come out while only the
    /// addition carries the chain from one request to the next; the idle gap is a branch,
    /// not a `max` on that chain (`arrival` as i64: exact, one conversion instruction).
    #[inline]
    fn refresh(&mut self, upto: usize) {
        if self.fresh >= upto {
            return;
        }
        let mut finish = if self.fresh == self.head {
            self.free_at
        } else {
            self.window[self.fresh - 1].finish
        };
        for s in &mut self.window[self.fresh..upto] {
            let pushed = finish + s.cost;
            let alone = s.arrival as i64 as f64 + s.cost;
            finish = if alone > pushed { alone } else { pushed };
            s.finish = finish;
        }
        self.fresh = upto;
    }

    /// Retire what no later request can precede (arrived at or before `floor`); the
    /// retired front is dropped once it is at least half of the buffer, so each slot is
    /// moved at most once more on average.
    #[inline]
    fn retire(&mut self, floor: u64) {
        let live = &self.window[self.head..];
        let n = live.iter().take_while(|s| s.arrival <= floor).count();
        if n == 0 {
            return;
        }
        let end = self.head + n;
        self.refresh(end);
        let mut late = self.overbooked_retired;
        for s in &self.window[self.head..end] {
            late += s.finish - s.answered;
        }
        self.overbooked_retired = late;
        self.free_at = self.window[end - 1].finish;
        self.head = end;
        if self.head == self.window.len() {
            self.window.clear();
            self.head = 0;
            self.fresh = 0;
        } else if self.head >= 64 && 2 * self.head >= self.window.len() {
            self.window.drain(..self.head);
            self.fresh -= self.head;
            self.head = 0;
        }
    }

    /// Waiting never charged: when an out-of-order request is served ahead of requests
    /// already answered, each keeps its answer although it would finish later; this sums
    /// those delays (the resource served beyond its rate by as much), over the retired
    /// requests and those still in the window.
    pub fn overbooked_cycles(&self) -> f64 {
        let mut late = self.overbooked_retired;
        let mut finish = self.free_at;
        for (i, s) in self.window.iter().enumerate().skip(self.head) {
            if i >= self.fresh {
                finish = finish.max(s.arrival as f64) + s.cost;
            } else {
                finish = s.finish;
            }
            late += finish - s.answered;
        }
        late
    }

    /// Count a wait of `wait` cycles; returns it in whole cycles.
    #[inline]
    fn waited(&mut self, wait: f64) -> u64 {
        if wait <= 0.0 {
            return 0;
        }
        self.queued_cycles += wait;
        // ceil() without a libm call (`wait` is finite and positive).
        let whole = wait as u64;
        whole + ((whole as f64) < wait) as u64
    }
}

/// Where a request arriving at `now` goes in `live` (in arrival order, its last arriving
/// after `now`): before the first later arrival. A request lands close to the end (it
/// arrives a few cycles before those processed just before it), so the range is found
/// from the end in doubling steps, then halved: a few probes of cached slots where a
/// search of the whole window took ten of mostly cold ones.
#[inline]
fn position(live: &[Slot], now: u64) -> usize {
    let mut hi = live.len() - 1; // `live[hi]` arrived after `now`.
    let mut step = 1;
    let lo = loop {
        if step > hi {
            break 0;
        }
        let probe = hi - step;
        if live[probe].arrival <= now {
            break probe + 1;
        }
        hi = probe;
        step *= 2;
    };
    lo + live[lo..hi].partition_point(|s| s.arrival <= now)
}

/// A port that takes one line per cycle (an SM's L1), served in arrival order.
#[derive(Debug, Clone, Default)]
pub struct LinePort {
    budget: Budget,
}

impl LinePort {
    /// A port serving in arrival order (`true`) or in processing order.
    pub fn new(arrival_order: bool) -> LinePort {
        LinePort {
            budget: Budget::new(arrival_order),
        }
    }

    /// Take `lines` consecutive lines arriving at `now`; returns the cycle the first one
    /// starts (line k starts k cycles later). `floor` as for [`Budget::consume`].
    #[inline]
    pub fn take(&mut self, now: u64, lines: u64, floor: u64) -> u64 {
        now + self.budget.consume(now, lines as f64, floor)
    }

    /// Requests that arrived before one processed earlier.
    pub fn out_of_order(&self) -> u64 {
        self.budget.out_of_order
    }
}

#[cfg(test)]
mod tests {
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
            b.window.len() - b.head,
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
    }

    impl Reference {
        fn consume(&mut self, now: u64, cost: f64, floor: u64) -> f64 {
            while self.window.first().is_some_and(|s| s.arrival <= floor) {
                self.free_at = self.window.remove(0).finish;
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
}
