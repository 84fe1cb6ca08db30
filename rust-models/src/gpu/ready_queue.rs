//! The warps' ready-time queue: a monotone radix heap.
//!
//! The event loop pops the warp with the smallest key `(cycle << SLOT_BITS) | slot` and
//! pushes it back at a later cycle, so keys grow with time. A binary heap over the ~16 k
//! resident warps of a 4-chiplet GPU spent most of its time in cache-missing sift-downs; a
//! radix heap files every key in the bucket of the highest bit where it differs from the
//! last popped key, and only ever re-sorts the smallest non-empty bucket.
//!
//! A key may be pushed below the last popped one (a thread block launched at the current
//! cycle into a lower warp slot). It is then the smallest key in the queue, so it waits in
//! bucket 0, whose minimum is always popped first: the pop order is exactly the order of a
//! binary min-heap over the same keys, which keeps runs bit-identical.

/// Min-queue of distinct `u64` keys that are popped in (almost) non-decreasing order.
#[derive(Debug)]
pub(super) struct ReadyQueue {
    /// Bucket 0: keys not above `last`; bucket i > 0: keys whose highest bit differing
    /// from `last` is bit i - 1.
    buckets: Vec<Vec<u64>>,
    last: u64,
    len: usize,
}

impl ReadyQueue {
    pub(super) fn new() -> ReadyQueue {
        ReadyQueue {
            buckets: (0..=64).map(|_| Vec::new()).collect(),
            last: 0,
            len: 0,
        }
    }

    #[inline]
    fn bucket_of(&self, key: u64) -> usize {
        if key <= self.last {
            0
        } else {
            64 - (key ^ self.last).leading_zeros() as usize
        }
    }

    #[inline]
    pub(super) fn push(&mut self, key: u64) {
        let b = self.bucket_of(key);
        self.buckets[b].push(key);
        self.len += 1;
    }

    /// Remove and return the smallest key.
    pub(super) fn pop(&mut self) -> Option<u64> {
        if self.len == 0 {
            return None;
        }
        if self.buckets[0].is_empty() {
            // Refill bucket 0 from the first non-empty bucket: its minimum becomes `last`,
            // and every key of it moves to a lower bucket (it shares more high bits with
            // the new `last`).
            let i = (1..=64).find(|&i| !self.buckets[i].is_empty())?;
            let keys = std::mem::take(&mut self.buckets[i]);
            self.last = keys.iter().copied().min()?;
            for &k in &keys {
                let b = self.bucket_of(k);
                self.buckets[b].push(k);
            }
            // Hand the emptied vector's capacity back to bucket i.
            let mut keys = keys;
            keys.clear();
            self.buckets[i] = keys;
        }
        let b0 = &mut self.buckets[0];
        let (at, &min) = b0.iter().enumerate().min_by_key(|&(_, k)| *k)?;
        b0.swap_remove(at);
        self.len -= 1;
        Some(min)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;

    /// Same pop order as a binary min-heap under the event loop's access pattern: pop the
    /// minimum, push it back later, sometimes push a key just below the popped one.
    #[test]
    fn pops_in_the_order_of_a_binary_heap() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64; // fixed seed
        let mut rng = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut q = ReadyQueue::new();
        let mut h = BinaryHeap::new();
        for slot in 0..1000u64 {
            let k = ((rng() % 50) << 20) | slot;
            q.push(k);
            h.push(Reverse(k));
        }
        let mut free_slot = 1000u64;
        for _ in 0..200_000 {
            let a = q.pop();
            let b = h.pop().map(|r| r.0);
            assert_eq!(a, b);
            let Some(k) = a else { break };
            let (t, slot) = (k >> 20, k & 0xfffff);
            match rng() % 10 {
                // The warp finishes; a new warp launches now in another slot.
                0 => {
                    free_slot += 1;
                    let nk = (t << 20) | (free_slot % 1000);
                    if nk != k {
                        q.push(nk);
                        h.push(Reverse(nk));
                    }
                }
                _ => {
                    let nk = ((t + 1 + rng() % 5000) << 20) | slot;
                    q.push(nk);
                    h.push(Reverse(nk));
                }
            }
        }
        while let Some(Reverse(k)) = h.pop() {
            assert_eq!(q.pop(), Some(k));
        }
        assert_eq!(q.pop(), None);
    }
}
