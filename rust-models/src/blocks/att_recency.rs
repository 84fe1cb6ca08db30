//! The ATT twin's recency order: the valid object slots as a doubly linked list, least
//! recently touched first.
//!
//! The RTL keeps an age matrix (row `i` = the slots touched after slot `i`) and finds the
//! oldest valid slot by an AND-reduction per row. Software would have to rescan all slots
//! whenever the oldest one is touched — on most accesses of a program that cycles through
//! a few objects. The list answers the same question in O(1): a touch moves a slot to the
//! newest end, a remove unlinks it, and the head is the oldest. Among valid slots this is
//! exactly the matrix's order (both are the order of last touch); the lockstep tests
//! check it against the RTL on every cycle.

use super::access_time_tracker::MAX_OBJECTS;

/// "No slot" in a link.
const NONE: u8 = MAX_OBJECTS as u8;

#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct RecencyList {
    /// Per slot: the next older listed slot, or `NONE`.
    older: [u8; MAX_OBJECTS],
    /// Per slot: the next newer listed slot, or `NONE`.
    newer: [u8; MAX_OBJECTS],
    /// Head and tail (`NONE` when empty), word-sized: `step` reads the head right after
    /// a touch wrote it, and a load wider than the store would not be forwarded.
    oldest: u32,
    newest: u32,
    /// Slots in the list (bit i = slot i).
    listed: u32,
}

impl RecencyList {
    pub(super) fn empty() -> RecencyList {
        RecencyList {
            older: [NONE; MAX_OBJECTS],
            newer: [NONE; MAX_OBJECTS],
            oldest: NONE as u32,
            newest: NONE as u32,
            listed: 0,
        }
    }

    /// The least recently touched listed slot.
    #[inline]
    pub(super) fn oldest(&self) -> Option<usize> {
        (self.oldest != NONE as u32).then_some(self.oldest as usize)
    }

    /// Make `k` the most recently touched slot (listing it if it was not).
    #[inline]
    pub(super) fn touch(&mut self, k: usize) {
        if self.newest as usize == k {
            return;
        }
        self.remove(k);
        let last = self.newest as u8;
        self.older[k] = last;
        self.newer[k] = NONE;
        match last {
            NONE => self.oldest = k as u32,
            t => self.newer[t as usize] = k as u8,
        }
        self.newest = k as u32;
        self.listed |= 1 << k;
    }

    /// Take `k` out of the order (nothing if it is not listed).
    #[inline]
    pub(super) fn remove(&mut self, k: usize) {
        if self.listed >> k & 1 == 0 {
            return;
        }
        let (o, n) = (self.older[k], self.newer[k]);
        match o {
            NONE => self.oldest = n as u32,
            o => self.newer[o as usize] = n,
        }
        match n {
            NONE => self.newest = o as u32,
            n => self.older[n as usize] = o,
        }
        self.listed &= !(1 << k);
    }

    /// The listed slots, least recently touched first.
    pub(super) fn order(&self) -> Vec<usize> {
        let mut slots = Vec::with_capacity(self.listed.count_ones() as usize);
        let mut k = self.oldest as u8;
        while k != NONE {
            slots.push(k as usize);
            k = self.newer[k as usize];
        }
        slots
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Against a last-touch stamp per slot (the order the RTL's age matrix encodes), over
    /// random touches and removes (fixed seed).
    #[test]
    fn order_is_the_order_of_last_touch() {
        let mut draws = crate::workload::rng::XorShift::new(0x0dd_b1a5_e5ca_1ab1); // fixed seed
        for _ in 0..200 {
            let mut list = RecencyList::empty();
            let mut stamp = [0u64; MAX_OBJECTS];
            let mut valid = 0u32;
            let slots = 1 + draws.next_u64() as usize % MAX_OBJECTS;
            for t in 1..500u64 {
                let r = draws.next_u64();
                let k = (r >> 8) as usize % slots;
                if r.is_multiple_of(5) {
                    list.remove(k);
                    valid &= !(1 << k);
                } else {
                    list.touch(k);
                    valid |= 1 << k;
                    stamp[k] = t;
                }
                let mut expect: Vec<usize> = (0..slots).filter(|&i| valid >> i & 1 == 1).collect();
                expect.sort_by_key(|&i| stamp[i]);
                assert_eq!(list.order(), expect);
                assert_eq!(list.oldest(), expect.first().copied());
                assert_eq!(list.listed, valid);
            }
        }
    }
}
