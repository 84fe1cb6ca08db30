//! The warps' ready-time queue: a timing wheel over warp slots.
//!
//! The event loop pops the warp that is ready first — the smallest (cycle, slot) — and
//! pushes it back at a later cycle, so time only moves forward, and every warp slot has
//! at most one pending event. A binary heap over the ~16 k resident warps of a 4-chiplet
//! GPU spent most of its time in cache-missing sift-downs, and a radix heap over
//! `(cycle << 20) | slot` keys still moved each key through the twenty slot bits.
//!
//! Here a wheel of [`WHEEL_CYCLES`] buckets, one per cycle of the window after the current
//! cycle, holds intrusive lists of slots (a `next` link per slot, so a push writes two
//! words and allocates nothing); a bitmap finds the next non-empty bucket. Events beyond
//! the window wait in a few per-cycle groups (under UVM, thousands of warps wait for one
//! fault batch's end: one group instead of thousands of heap sift-downs), the rest in a
//! binary heap. When a cycle becomes current, its slots are sorted
//! once; a push at the current cycle (a thread block launched into a free slot) is
//! inserted in order. The pop order is therefore exactly (cycle, slot) ascending — the
//! order of a binary min-heap over the same keys, which keeps runs bit-identical.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Cycles the wheel covers ahead of the current cycle (a power of two).
const WHEEL_CYCLES: usize = 1 << 16;
const WHEEL_MASK: u64 = WHEEL_CYCLES as u64 - 1;
/// Wheel buckets one summary bit stands for: one `occupied` word of 64 bucket bits.
const BUCKETS_PER_SUMMARY_BIT: usize = 64 * 64;
/// End of a slot list.
const NIL: u32 = u32::MAX;

/// Min-queue of (cycle, warp slot) events; time never goes back, a slot is queued at most
/// once.
#[derive(Debug)]
pub(super) struct ReadyQueue {
    /// The current cycle: every queued event is at or after it.
    now: u64,
    /// Slots ready at `now`, sorted descending (the next to pop is last).
    current: Vec<u32>,
    /// First slot of each bucket's list; bucket `c & WHEEL_MASK` holds cycle `c` for
    /// `now < c < now + WHEEL_CYCLES`.
    head: Vec<u32>,
    /// Next slot in the same bucket, per slot.
    next: Vec<u32>,
    /// Bit per non-empty bucket, and a bit per non-zero word of that (the wheel is sparse
    /// at a kernel's tail: a search skips `BUCKETS_PER_SUMMARY_BIT` empty cycles per summary bit).
    occupied: Vec<u64>,
    summary: Vec<u64>,
    /// The first cycle after `now` with a non-empty bucket, kept up to date on every push
    /// and advance so the queue can name the next warps before they are due.
    next_wheel: Option<u64>,
    /// Events at or beyond `now + WHEEL_CYCLES` when pushed: grouped by cycle while
    /// there are at most [`FAR_GROUPS`] such cycles, else as (cycle, slot) in a heap.
    far_groups: Vec<(u64, Vec<u32>)>,
    /// Earliest cycle of `far_groups` (`u64::MAX` when there is none).
    far_groups_min: u64,
    /// Emptied group vectors, reused.
    spare: Vec<Vec<u32>>,
    far: BinaryHeap<Reverse<(u64, u32)>>,
    len: usize,
    /// Reused bitmap of [`ReadyQueue::sort_current_by_bitmap`].
    sort_bits: Vec<u64>,
}

/// Slots ready in one cycle from which they are sorted through a bitmap, not by
/// comparisons (below it the comparison sort of a few slots is cheaper than a pass over
/// the bitmap of all slot numbers).
const BITMAP_SORT_MIN: usize = 256;

/// Distinct far cycles kept as groups (a UVM batch's start and end, with room to spare).
const FAR_GROUPS: usize = 8;

impl ReadyQueue {
    pub(super) fn new() -> ReadyQueue {
        ReadyQueue {
            now: 0,
            current: Vec::new(),
            head: vec![NIL; WHEEL_CYCLES],
            next: Vec::new(),
            occupied: vec![0; WHEEL_CYCLES / 64],
            summary: vec![0; WHEEL_CYCLES / 64 / 64],
            next_wheel: None,
            far_groups: Vec::with_capacity(FAR_GROUPS),
            far_groups_min: u64::MAX,
            spare: Vec::new(),
            far: BinaryHeap::new(),
            len: 0,
            sort_bits: Vec::new(),
        }
    }

    /// Queue `slot` to become ready at `cycle` (not before the last popped cycle).
    #[inline]
    pub(super) fn push(&mut self, cycle: u64, slot: u32) {
        debug_assert!(cycle >= self.now, "time went back: {cycle} < {}", self.now);
        self.len += 1;
        if cycle <= self.now {
            // Keep `current` descending: the new slot goes after every larger one.
            let at = self.current.partition_point(|&s| s > slot);
            self.current.insert(at, slot);
        } else if cycle - self.now < WHEEL_CYCLES as u64 {
            let b = (cycle & WHEEL_MASK) as usize;
            let s = slot as usize;
            if s >= self.next.len() {
                self.next.resize(s + 1, NIL);
            }
            self.next[s] = self.head[b];
            self.head[b] = slot;
            self.occupied[b / 64] |= 1 << (b % 64);
            self.summary[b / BUCKETS_PER_SUMMARY_BIT] |= 1 << (b / 64 % 64);
            if self.next_wheel.is_none_or(|n| cycle < n) {
                self.next_wheel = Some(cycle);
            }
        } else {
            self.push_far(cycle, slot);
        }
    }

    /// An event beyond the wheel: into its cycle's group, a new group, or the heap.
    #[cold]
    fn push_far(&mut self, cycle: u64, slot: u32) {
        if let Some(g) = self.far_groups.iter_mut().find(|g| g.0 == cycle) {
            g.1.push(slot);
        } else if self.far_groups.len() < FAR_GROUPS {
            let mut slots = self.spare.pop().unwrap_or_default();
            slots.push(slot);
            self.far_groups.push((cycle, slots));
            self.far_groups_min = self.far_groups_min.min(cycle);
        } else {
            self.far.push(Reverse((cycle, slot)));
        }
    }

    /// Remove and return the earliest event: (cycle, slot).
    #[inline]
    pub(super) fn pop(&mut self) -> Option<(u64, u32)> {
        if self.current.is_empty() {
            if self.len == 0 {
                return None;
            }
            self.advance();
        }
        let slot = self.current.pop()?;
        self.len -= 1;
        Some((self.now, slot))
    }

    /// The slots the next two pops are likely to return (those ready at the current cycle,
    /// then those of the next non-empty cycles), for prefetching their state. Within a
    /// later cycle the order is the bucket's, not the pop order (a hint needs no more);
    /// events beyond the wheel are not looked at.
    #[inline]
    pub(super) fn upcoming(&self) -> [Option<u32>; 2] {
        let n = self.current.len();
        let bucket = |c: u64| self.head[(c & WHEEL_MASK) as usize];
        match n {
            0 => {
                // Usually fewer than one warp per cycle: the next two may sit in the next
                // bucket or the one after.
                let Some(c) = self.next_wheel else {
                    return [None, None];
                };
                let first = bucket(c);
                let second = match self.next[first as usize] {
                    NIL => self.first_bucket_after(c).map(bucket),
                    s => Some(s),
                };
                [Some(first), second]
            }
            1 => [Some(self.current[0]), self.next_wheel.map(bucket)],
            _ => [Some(self.current[n - 1]), Some(self.current[n - 2])],
        }
    }

    /// Move `now` to the next cycle with an event and gather its slots into `current`.
    fn advance(&mut self) {
        let wheel = self.next_wheel;
        let far = self.far.peek().map_or(u64::MAX, |r| r.0 .0);
        let cycle = wheel.unwrap_or(u64::MAX).min(far).min(self.far_groups_min);
        if cycle == u64::MAX {
            return;
        }
        self.now = cycle;
        if wheel == Some(cycle) {
            let b = (cycle & WHEEL_MASK) as usize;
            let mut s = std::mem::replace(&mut self.head[b], NIL);
            self.occupied[b / 64] &= !(1 << (b % 64));
            if self.occupied[b / 64] == 0 {
                self.summary[b / BUCKETS_PER_SUMMARY_BIT] &= !(1 << (b / 64 % 64));
            }
            while s != NIL {
                self.current.push(s);
                s = self.next[s as usize];
            }
            self.next_wheel = self.next_wheel_cycle();
        }
        while let Some(&Reverse((c, s))) = self.far.peek() {
            if c != cycle {
                break;
            }
            self.far.pop();
            self.current.push(s);
        }
        if self.far_groups_min == cycle {
            let g = self.far_groups.iter().position(|g| g.0 == cycle);
            if let Some(i) = g {
                let (_, mut slots) = self.far_groups.swap_remove(i);
                self.current.extend_from_slice(&slots);
                slots.clear();
                self.spare.push(slots);
            }
            self.far_groups_min = self
                .far_groups
                .iter()
                .map(|g| g.0)
                .min()
                .unwrap_or(u64::MAX);
        }
        if self.current.len() < BITMAP_SORT_MIN {
            self.current.sort_unstable_by(|a, b| b.cmp(a));
        } else {
            self.sort_current_by_bitmap();
        }
    }

    /// Sort `current` descending through a bitmap over the slot numbers: a slot is queued
    /// at most once, so setting its bit and reading the bits back from the top is a
    /// sort. At a fault batch's end thousands of waiting warps become ready in one cycle,
    /// and comparison-sorting them was 4 % of a blk run under UVM.
    #[cold]
    fn sort_current_by_bitmap(&mut self) {
        let max = self.current.iter().copied().max().unwrap_or(0) as usize;
        let words = max / 64 + 1;
        self.sort_bits.clear();
        self.sort_bits.resize(words, 0);
        for &s in &self.current {
            let (w, b) = (s as usize / 64, s % 64);
            debug_assert!(self.sort_bits[w] >> b & 1 == 0, "slot {s} queued twice");
            self.sort_bits[w] |= 1 << b;
        }
        self.current.clear();
        for (w, &word) in self.sort_bits.iter().enumerate().rev() {
            let mut bits = word;
            while bits != 0 {
                let b = 63 - bits.leading_zeros();
                bits &= !(1u64 << b);
                self.current.push((w * 64) as u32 + b);
            }
        }
    }

    /// The first cycle after `now` whose bucket is non-empty, if any.
    fn next_wheel_cycle(&self) -> Option<u64> {
        self.first_bucket_after(self.now)
    }

    /// The first cycle after `c` (`now <= c < now + WHEEL_CYCLES`) whose bucket is
    /// non-empty, if any.
    fn first_bucket_after(&self, c: u64) -> Option<u64> {
        let start = ((c + 1) & WHEEL_MASK) as usize;
        let (w0, bit0) = (start / 64, start % 64);
        // `start`'s own word from its bit; else the next non-empty word around the wheel
        // (found in the summary), which may be `w0` again for its bits below `start`.
        let first = self.occupied[w0] & (!0u64 << bit0);
        let found = if first != 0 {
            w0 * 64 + first.trailing_zeros() as usize
        } else {
            let w = first_set_after(&self.summary, w0)?;
            let mut bits = self.occupied[w];
            if w == w0 {
                bits &= !(!0u64 << bit0);
            }
            if bits == 0 {
                return None;
            }
            w * 64 + bits.trailing_zeros() as usize
        };
        let dist = (found as u64).wrapping_sub(start as u64) & WHEEL_MASK;
        let cycle = c + 1 + dist;
        // Past the window's end the search came round to cycles before `c`.
        (cycle < self.now + WHEEL_CYCLES as u64).then_some(cycle)
    }
}

/// The first set bit of the circular bitset `bits` after position `pos`, wrapping around
/// to `pos` itself last.
pub(crate) fn first_set_after(bits: &[u64], pos: usize) -> Option<usize> {
    let n = bits.len() * 64;
    let (w0, b0) = (pos / 64, pos % 64);
    // Bits above `pos` in its own word.
    let above = if b0 == 63 {
        0
    } else {
        bits[w0] & (!0u64 << (b0 + 1))
    };
    if above != 0 {
        return Some(w0 * 64 + above.trailing_zeros() as usize);
    }
    for i in 1..=bits.len() {
        let w = (w0 + i) % bits.len();
        let mut word = bits[w];
        if i == bits.len() {
            // Back at `pos`'s word: only bits up to `pos`.
            word &= if b0 == 63 { !0 } else { !(!0u64 << (b0 + 1)) };
        }
        if word != 0 {
            return Some((w * 64 + word.trailing_zeros() as usize) % n);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Same pop order as a binary min-heap over (cycle, slot) under the event loop's
    /// access pattern: pop the minimum, push it back later (sometimes beyond the wheel),
    /// or finish the warp and launch another into a free slot at the current cycle.
    #[test]
    fn pops_in_the_order_of_a_binary_heap() {
        let mut draws = crate::workload::rng::XorShift::new(0x9e37_79b9_7f4a_7c15); // fixed seed
        let mut rng = move || draws.next_u64();
        let mut q = ReadyQueue::new();
        let mut h = BinaryHeap::new();
        for slot in 0..1000u32 {
            let t = rng() % 50;
            q.push(t, slot);
            h.push(Reverse((t, slot)));
        }
        let mut free: Vec<u32> = (1000..1100).collect();
        for _ in 0..300_000 {
            let a = q.pop();
            let b = h.pop().map(|r| r.0);
            assert_eq!(a, b);
            let Some((t, slot)) = a else { break };
            let (nt, ns) = match rng() % 20 {
                // The warp finishes; another launches now in the lowest free slot.
                0 => {
                    free.push(slot);
                    free.sort_unstable_by(|a, b| b.cmp(a));
                    (t, free.pop().expect("a free slot"))
                }
                // A long stall: beyond the wheel.
                1 => (t + WHEEL_CYCLES as u64 + rng() % 40_000, slot),
                // Waiting for a fault batch: many warps share one far cycle.
                3 | 4 => (((t >> 17) + 2 + rng() % 2) << 17, slot),
                // Zero latency: ready again this cycle.
                2 => (t, slot),
                _ => (t + 1 + rng() % 5000, slot),
            };
            q.push(nt, ns);
            h.push(Reverse((nt, ns)));
        }
        while let Some(Reverse(k)) = h.pop() {
            assert_eq!(q.pop(), Some(k));
        }
        assert_eq!(q.pop(), None);
    }

    #[test]
    fn circular_bit_search_wraps_to_its_start_last() {
        let mut bits = vec![0u64; 3];
        assert_eq!(first_set_after(&bits, 70), None);
        bits[1] = 1 << 6; // position 70
        assert_eq!(
            first_set_after(&bits, 70),
            Some(70),
            "itself, after a full turn"
        );
        bits[0] = 1 << 3;
        assert_eq!(first_set_after(&bits, 70), Some(3), "wraps past the end");
        bits[2] = 1 << 63; // position 191, the last
        assert_eq!(first_set_after(&bits, 70), Some(191));
        assert_eq!(first_set_after(&bits, 191), Some(3));
        assert_eq!(first_set_after(&bits, 2), Some(3));
    }

    #[test]
    fn the_wheel_wraps_and_far_events_join_their_cycle() {
        let mut q = ReadyQueue::new();
        q.push(5, 3);
        q.push(5 + WHEEL_CYCLES as u64, 1); // far when pushed
        assert_eq!(q.pop(), Some((5, 3)));
        q.push(5 + WHEEL_CYCLES as u64, 2); // now inside the wheel, same cycle
        q.push(4 + WHEEL_CYCLES as u64, 7); // wraps to the bucket before `now`'s
        assert_eq!(q.pop(), Some((4 + WHEEL_CYCLES as u64, 7)));
        assert_eq!(q.pop(), Some((5 + WHEEL_CYCLES as u64, 1)));
        assert_eq!(q.pop(), Some((5 + WHEEL_CYCLES as u64, 2)));
        assert_eq!(q.pop(), None);
    }
}
