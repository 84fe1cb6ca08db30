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
///
/// The window is a gap buffer: `window[head..gap_start]` then `window[gap_end..]`, in
/// arrival order. An out-of-order request is written into the gap, which is first moved
/// to its place, so it moves only the slots between the last insertion and this one (a
/// `Vec::insert` moved every slot behind it: 13 % of `dc`/`s4k` at the default scale, where
/// windows are long); a request arriving last is pushed at the buffer's end, behind the gap.
#[derive(Debug, Clone, Default)]
pub struct Budget {
    /// Serve in arrival order; `false`: in the order requests are processed (one
    /// "free from" time, `memory.serve_in_arrival_order = false`).
    pub arrival_order: bool,
    /// The buffer: its retired front (before `head`) is skipped, not a `VecDeque`, so a
    /// search, an insertion and a push-back each see at most two slices.
    window: Vec<Slot>,
    head: usize,
    /// The gap, `window[gap_start..gap_end]`, holds no request. Invariants: `head <=
    /// gap_start <= gap_end <= window.len()`, and a non-empty gap has requests on both
    /// sides (so the request before `gap_end` is the one before `gap_start`).
    gap_start: usize,
    gap_end: usize,
    /// The requests stored before `fresh` hold current finishes; those from it on are
    /// stale. Never `gap_end` of a non-empty gap (`gap_start` says the same), so the
    /// request before `fresh` is `window[fresh - 1]` unless `fresh == head`.
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

/// Slots a gap is opened with: an insertion into a full buffer moves the requests behind
/// it once, then the next this many insertions only move the gap.
const GAP: usize = 64;

/// What a gap's slots hold (never read).
const EMPTY: Slot = Slot {
    arrival: 0,
    cost: 0.0,
    finish: 0.0,
    answered: 0.0,
};

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
        // Processing order (an SM's issue slots, on every warp instruction): a few
        // instructions, inlined where the window's path is a call.
        if !self.arrival_order {
            return self.serve_now(now, cost);
        }
        self.consume_in_arrival_order(now, cost, floor)
    }

    /// Serve after everything served so far: the "free from" time moves on.
    #[inline(always)]
    fn serve_now(&mut self, now: u64, cost: f64) -> u64 {
        let now_f = cycles(now);
        let start = self.free_at.max(now_f);
        self.free_at = start + cost;
        self.waited(start - now_f)
    }

    /// [`Budget::consume`] serving in arrival order.
    fn consume_in_arrival_order(&mut self, now: u64, cost: f64, floor: u64) -> u64 {
        let now_f = cycles(now);
        self.retire(floor);
        // Nothing left in the window and a request at the floor (a pending page's L1
        // port): every later request arrives at or after it and would retire it first
        // thing, so it need not enter the window — the same `free_at`, without touching
        // the window's buffer.
        if now == floor && self.head == self.window.len() {
            return self.serve_now(now, cost);
        }
        // Position in arrival order: usually the end; else before the first later arrival.
        let len = self.window.len();
        let pos = match self.window.last() {
            Some(last) if last.arrival > now => self.position(now),
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
            self.fresh = len + 1;
        } else {
            // The requests behind it start later; what they answered stands.
            self.insert(pos, slot);
            self.out_of_order += 1;
            // Every request before it was refreshed, and its finish is current.
            self.fresh = self.gap_start;
        }
        self.waited(start - now_f)
    }

    /// Where a request arriving at `now` goes, the last request arriving after it: before
    /// the first later arrival, as an index into `window`; `gap_start` if that is at the
    /// gap (never `gap_end` of a non-empty gap).
    #[inline]
    fn position(&self, now: u64) -> usize {
        let (gs, ge) = (self.gap_start, self.gap_end);
        if ge < self.window.len() && self.window[ge].arrival <= now {
            // Behind the gap: the tail's last arrives after `now`, its first not.
            return ge + position(&self.window[ge..], now);
        }
        match gs.checked_sub(1) {
            Some(last) if gs > self.head && self.window[last].arrival > now => {
                self.head + position(&self.window[self.head..gs], now)
            }
            _ => gs,
        }
    }

    /// Write `slot` before the request stored at `pos` (as [`Budget::position`] gives it),
    /// moving the gap there first; the gap then starts right behind `slot`.
    #[inline]
    fn insert(&mut self, pos: usize, slot: Slot) {
        let (gs, ge) = (self.gap_start, self.gap_end);
        if gs == ge {
            // No gap: open one at `pos`, moving the requests behind it once.
            let len = self.window.len();
            self.window.resize(len + GAP, EMPTY);
            self.window.copy_within(pos..len, pos + GAP);
            self.gap_start = pos;
            self.gap_end = pos + GAP;
        } else if pos > ge {
            // Behind the gap: the requests between come before it.
            self.window.copy_within(ge..pos, gs);
            self.gap_start = gs + (pos - ge);
            self.gap_end = pos;
        } else if pos < gs {
            // Before the gap: the requests between go behind it.
            let n = gs - pos;
            self.window.copy_within(pos..gs, ge - n);
            self.gap_start = pos;
            self.gap_end = ge - n;
        }
        self.window[self.gap_start] = slot;
        self.gap_start += 1;
    }

    /// Bring the finishes of the requests stored before `upto` up to date (`upto` is a
    /// request's index, the buffer's end or `gap_start`; never `gap_end` of a non-empty gap).
    ///
    /// `max(finish, arrival) + cost` rounded is `max(finish + cost, arrival + cost)` with
    /// each sum rounded (rounding is monotone), so the same values come out while only the
    /// addition carries the chain from one request to the next; the idle gap is a branch,
    /// not a `max` on that chain (`arrival` as i64: exact, one conversion instruction).
    #[inline(always)]
    fn refresh(&mut self, upto: usize) {
        // Nearly always current already (a request arriving last after another): the
        // check stays in `consume`, the walk is a call.
        if self.fresh < upto {
            self.refresh_stale(upto);
        }
    }

    /// [`Budget::refresh`] with `fresh < upto`.
    fn refresh_stale(&mut self, upto: usize) {
        let mut from = self.fresh;
        let mut finish = if from == self.head {
            self.free_at
        } else {
            self.window[from - 1].finish
        };
        let (gs, ge) = (self.gap_start, self.gap_end);
        if from < gs {
            let end = upto.min(gs);
            finish = scan(&mut self.window[from..end], finish);
            from = end;
        }
        if upto > gs {
            scan(&mut self.window[from.max(ge)..upto], finish);
        }
        self.fresh = upto;
    }

    /// Retire what no later request can precede (arrived at or before `floor`); the
    /// retired front is dropped once it is at least half of the buffer, so each slot is
    /// moved at most once more on average.
    #[inline]
    fn retire(&mut self, floor: u64) {
        // The first request is `window[head]` (a non-empty gap has requests before it):
        // when it is not retired, nothing is, and the walk over the gap's sides is spared.
        if self.window.get(self.head).is_none_or(|s| s.arrival > floor) {
            return;
        }
        let (gs, ge) = (self.gap_start, self.gap_end);
        let arrived = |s: &Slot| s.arrival <= floor;
        let front_end = self.head
            + self.window[self.head..gs]
                .iter()
                .take_while(|s| arrived(s))
                .count();
        // All before the gap retired: on behind it (an empty gap is no boundary).
        let end = if front_end == gs {
            ge + self.window[ge..].iter().take_while(|s| arrived(s)).count()
        } else {
            front_end
        };
        if end == self.head {
            return;
        }
        let crossed = front_end == gs;
        self.refresh(if end == ge { gs } else { end });
        let mut late = self.overbooked_retired;
        for s in &self.window[self.head..front_end] {
            late += s.finish - s.answered;
        }
        if crossed {
            for s in &self.window[ge..end] {
                late += s.finish - s.answered;
            }
        }
        self.overbooked_retired = late;
        self.free_at = if end > ge || !crossed {
            self.window[end - 1].finish
        } else {
            self.window[gs - 1].finish
        };
        self.head = end;
        if crossed {
            // The gap is now part of the retired front.
            self.gap_start = end;
            self.gap_end = end;
            self.fresh = self.fresh.max(end);
        }
        if self.head == self.window.len() {
            self.window.clear();
            (self.head, self.gap_start, self.gap_end, self.fresh) = (0, 0, 0, 0);
        } else if self.head >= 64 && 2 * self.head >= self.window.len() {
            self.window.drain(..self.head);
            self.gap_start -= self.head;
            self.gap_end -= self.head;
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
        let stored = (self.head..self.gap_start).chain(self.gap_end..self.window.len());
        for i in stored {
            let s = &self.window[i];
            if i >= self.fresh {
                finish = finish.max(s.arrival as f64) + s.cost;
            } else {
                finish = s.finish;
            }
            late += finish - s.answered;
        }
        late
    }

    /// Requests in the window.
    #[cfg(test)]
    fn live(&self) -> usize {
        self.window.len() - self.head - (self.gap_end - self.gap_start)
    }

    /// Count a wait of `wait` cycles; returns it in whole cycles.
    #[inline]
    fn waited(&mut self, wait: f64) -> u64 {
        if wait <= 0.0 {
            return 0;
        }
        self.queued_cycles += wait;
        // ceil() without a libm call (`wait` is finite, positive and a difference of cycle
        // times, far below 2^63): the signed conversions are one instruction each where
        // the unsigned ones were a sequence each (9 % of `consume` on `gemm-gpt3`).
        let whole = wait as i64;
        (whole + ((whole as f64) < wait) as i64) as u64
    }
}

/// A cycle count as `f64`: the same value as `c as f64` for any count below 2^63 (every
/// cycle of a run), through the one-instruction signed conversion.
#[inline(always)]
fn cycles(c: u64) -> f64 {
    debug_assert!(c < 1 << 63, "cycle {c} beyond 2^63");
    c as i64 as f64
}

/// Recompute the finishes of `slots` from the finish before them; returns the last.
#[inline]
fn scan(slots: &mut [Slot], mut finish: f64) -> f64 {
    for s in slots {
        let pushed = finish + s.cost;
        let alone = s.arrival as i64 as f64 + s.cost;
        finish = if alone > pushed { alone } else { pushed };
        s.finish = finish;
    }
    finish
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
        now + self.budget.consume(now, cycles(lines), floor)
    }

    /// Requests that arrived before one processed earlier.
    pub fn out_of_order(&self) -> u64 {
        self.budget.out_of_order
    }
}

#[cfg(test)]
#[path = "bandwidth_tests.rs"]
mod tests;
