//! The replay engine's event queue: events pop in `(cycle, kind, id)` order, exactly as a
//! binary heap of those tuples would pop them, but warp events sit in a timing wheel.
//!
//! Why: a heap of one entry per warp (thousands) cost two thirds of a GEMM replay run in
//! `pop` — a dozen unpredictable compares per event. Warp events fall a few hundred
//! cycles ahead (the memory latency), so a wheel of per-cycle buckets takes them in O(1);
//! the rare batch events, and warp events beyond the wheel's reach, stay in small heaps.
//! Within one cycle warps still pop by slot id: a bucket is sorted when it becomes the
//! earliest, and a warp pushed into it meanwhile (a replay, a new thread block) is
//! inserted in order.
//!
//! Not the GPU model's `ReadyQueue`: merging with the batch events needs the earliest warp
//! event *without* moving time to it (a batch end before it may still queue warps at its
//! own, earlier cycle), and that queue's pop advances its clock to the event it returns.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::gpu::ready_queue::first_set_after;

/// Cycles the wheel covers (a power of two).
const WHEEL: usize = 4096;
const WORDS: usize = WHEEL / 64;

/// Events of the replay engine, popped in `(cycle, kind, id)` order.
pub(super) struct EventQueue {
    /// Kind of the warp events; others are batch events (few, in `batch`).
    warp_kind: u8,
    batch: BinaryHeap<Reverse<(u64, u8, u32)>>,
    warps: WarpWheel,
}

impl EventQueue {
    pub(super) fn new(warp_kind: u8) -> EventQueue {
        EventQueue {
            warp_kind,
            batch: BinaryHeap::new(),
            warps: WarpWheel::new(),
        }
    }

    pub(super) fn push(&mut self, cycle: u64, kind: u8, id: u32) {
        if kind == self.warp_kind {
            self.warps.push(cycle, id);
        } else {
            self.batch.push(Reverse((cycle, kind, id)));
        }
    }

    pub(super) fn pop(&mut self) -> Option<(u64, u8, u32)> {
        let warp = self.warps.peek().map(|(c, id)| (c, self.warp_kind, id));
        let batch = self.batch.peek().map(|r| r.0);
        match (warp, batch) {
            (Some(w), Some(b)) if b < w => self.batch.pop().map(|r| r.0),
            (Some(w), _) => {
                self.warps.pop_peeked(w.0);
                Some(w)
            }
            (None, _) => self.batch.pop().map(|r| r.0),
        }
    }
}

/// Warp events by cycle; within a cycle by id.
struct WarpWheel {
    /// Cycle of the last warp event popped: every event in `buckets` has a cycle in
    /// `base .. base + WHEEL`. `far` holds the rest (pushed beyond the wheel's reach).
    base: u64,
    buckets: Vec<Vec<u32>>,
    occupied: [u64; WORDS],
    in_wheel: usize,
    far: BinaryHeap<Reverse<(u64, u32)>>,
    /// The cycle whose bucket is sorted by descending id (the earliest, being drained).
    sorted: Option<u64>,
    /// Where `peek` found the earliest event.
    peeked_far: bool,
}

impl WarpWheel {
    fn new() -> WarpWheel {
        WarpWheel {
            base: 0,
            buckets: vec![Vec::new(); WHEEL],
            occupied: [0; WORDS],
            in_wheel: 0,
            far: BinaryHeap::new(),
            sorted: None,
            peeked_far: false,
        }
    }

    fn push(&mut self, cycle: u64, id: u32) {
        // The engine never schedules before the last event it popped; anything outside
        // the wheel's window is still ordered correctly through `far`.
        if cycle < self.base || cycle - self.base >= WHEEL as u64 {
            self.far.push(Reverse((cycle, id)));
        } else {
            self.put(cycle, id);
        }
    }

    /// Into the wheel (`cycle` inside its window).
    fn put(&mut self, cycle: u64, id: u32) {
        let b = cycle as usize & (WHEEL - 1);
        let bucket = &mut self.buckets[b];
        if self.sorted == Some(cycle) {
            // Descending ids: the new one goes before every smaller id.
            let at = bucket.partition_point(|&x| x > id);
            bucket.insert(at, id);
        } else {
            bucket.push(id);
        }
        self.occupied[b / 64] |= 1 << (b % 64);
        self.in_wheel += 1;
    }

    /// Earliest event, without removing it.
    fn peek(&mut self) -> Option<(u64, u32)> {
        let far = self.far.peek().map(|r| r.0);
        let wheel = if self.in_wheel == 0 {
            None
        } else {
            let cycle = self.first_cycle();
            let b = cycle as usize & (WHEEL - 1);
            if self.sorted != Some(cycle) {
                self.buckets[b].sort_unstable_by(|a, b| b.cmp(a));
                self.sorted = Some(cycle);
            }
            self.buckets[b].last().map(|&id| (cycle, id))
        };
        let (earliest, from_far) = match (wheel, far) {
            (Some(w), Some(f)) if f < w => (f, true),
            (Some(w), _) => (w, false),
            (None, Some(f)) => (f, true),
            (None, None) => return None,
        };
        self.peeked_far = from_far;
        Some(earliest)
    }

    /// Remove the event `peek` returned (at `cycle`).
    fn pop_peeked(&mut self, cycle: u64) {
        if self.peeked_far {
            self.far.pop();
        } else {
            let b = cycle as usize & (WHEEL - 1);
            self.buckets[b].pop();
            self.in_wheel -= 1;
            if self.buckets[b].is_empty() {
                self.occupied[b / 64] &= !(1 << (b % 64));
                self.sorted = None;
            }
        }
        if cycle > self.base {
            self.base = cycle;
            self.pull_far();
        }
    }

    /// Cycle of the earliest event in the wheel (not empty).
    fn first_cycle(&self) -> u64 {
        let start = self.base as usize & (WHEEL - 1);
        // The first occupied bucket from `start` on, around the wheel.
        let b = first_set_after(&self.occupied, (start + WHEEL - 1) % WHEEL)
            .expect("first_cycle on an empty wheel");
        self.base + ((b + WHEEL - start) % WHEEL) as u64
    }

    /// Move far events that now fall inside the wheel into it.
    fn pull_far(&mut self) {
        while let Some(&Reverse((c, id))) = self.far.peek() {
            if c < self.base || c - self.base >= WHEEL as u64 {
                break;
            }
            self.far.pop();
            self.put(c, id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::workload::rng::XorShift;

    #[test]
    fn pops_in_the_order_of_a_heap_of_tuples() {
        for seed in [1u64, 7, 42, 1234] {
            let mut s = XorShift::new(seed);
            let mut q = EventQueue::new(1);
            let mut heap = BinaryHeap::new();
            let mut now = 0u64;
            let mut popped = 0;
            for step in 0..200_000 {
                let r = s.next_u64();
                if !r.is_multiple_of(3) || heap.is_empty() {
                    // Pushes at the current cycle, near, past the wheel, and far away.
                    let ahead = match r >> 8 & 7 {
                        0 | 1 => 0,
                        2..=4 => r >> 16 & 511,
                        5 => 4000 + (r >> 16 & 255),
                        6 => r >> 16 & 0x3_ffff,
                        _ => 4096,
                    };
                    let kind = if r >> 40 & 63 == 0 {
                        (r >> 46 & 1) as u8 * 2
                    } else {
                        1
                    };
                    let id = if kind == 1 {
                        (r >> 48 & 2047) as u32
                    } else {
                        0
                    };
                    q.push(now + ahead, kind, id);
                    heap.push(Reverse((now + ahead, kind, id)));
                } else {
                    let want = heap.pop().map(|r| r.0);
                    let got = q.pop();
                    assert_eq!(got, want, "seed {seed} step {step}");
                    now = got.map_or(now, |e| e.0);
                    popped += 1;
                }
            }
            while let Some(Reverse(want)) = heap.pop() {
                assert_eq!(q.pop(), Some(want), "seed {seed} drain");
            }
            assert_eq!(q.pop(), None);
            assert!(popped > 50_000);
        }
    }
}
