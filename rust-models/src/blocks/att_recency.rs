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

/// The list's sentinel: the node before the oldest and after the newest slot.
const SENTINEL: usize = MAX_OBJECTS;
/// Slots plus the sentinel.
const NODES: usize = MAX_OBJECTS + 1;

/// A circular doubly linked list through the sentinel. An unlisted slot links to itself,
/// so unlinking it changes nothing, and the sentinel stands in for both ends: a touch and
/// a remove are the same few loads and stores whatever the slot's place, with no branch
/// (a program alternating between objects made the branches of a list with "none" ends
/// mispredict on most accesses).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct RecencyList {
    /// Per node: the next older node (the sentinel's is the newest slot).
    older: [u8; NODES],
    /// Per node: the next newer node (the sentinel's is the oldest slot).
    newer: [u8; NODES],
}

impl RecencyList {
    pub(super) fn empty() -> RecencyList {
        RecencyList {
            older: std::array::from_fn(|i| i as u8),
            newer: std::array::from_fn(|i| i as u8),
        }
    }

    /// The least recently touched listed slot.
    #[inline]
    pub(super) fn oldest(&self) -> Option<usize> {
        let k = self.newer[SENTINEL] as usize;
        (k != SENTINEL).then_some(k)
    }

    /// Make `k` the most recently touched slot (listing it if it was not).
    #[inline]
    pub(super) fn touch(&mut self, k: usize) {
        self.remove(k);
        let last = self.older[SENTINEL];
        self.older[k] = last;
        self.newer[k] = SENTINEL as u8;
        self.newer[last as usize] = k as u8;
        self.older[SENTINEL] = k as u8;
    }

    /// Take `k` out of the order (nothing if it is not listed).
    #[inline]
    pub(super) fn remove(&mut self, k: usize) {
        // The sentinel is no slot: unlinking it would lose both ends.
        debug_assert!(k < SENTINEL, "slot {k} out of range");
        let (o, n) = (self.older[k], self.newer[k]);
        // An unlisted `k` has o == n == k: both stores rewrite its own links.
        self.newer[o as usize] = n;
        self.older[n as usize] = o;
        self.older[k] = k as u8;
        self.newer[k] = k as u8;
    }

    /// The listed slots, least recently touched first.
    pub(super) fn order(&self) -> Vec<usize> {
        let mut slots = Vec::new();
        let mut k = self.newer[SENTINEL] as usize;
        while k != SENTINEL {
            slots.push(k);
            k = self.newer[k] as usize;
        }
        slots
    }

    /// Slots in the list (bit i = slot i).
    #[cfg(test)]
    fn listed(&self) -> u32 {
        self.order().iter().fold(0, |m, &k| m | 1 << k)
    }
}

/// `recency = "tree-plru"`: the RTL's pseudo-LRU tree, one bit per node of a binary tree
/// over the 32 slot positions in heap order (node `n` has the children `2n` and `2n + 1`;
/// leaf `32 + k` is slot `k`). Bit `n` set: the upper half under node `n` is the older one.
/// Unlike [`RecencyList`] it keeps no order among the slots, only one direction per node,
/// so the object it names as oldest can be a more recently touched one.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct PlruTree {
    bits: u32,
}

impl PlruTree {
    /// Point every node above slot `k` at the half that does not hold `k`.
    #[inline]
    pub(super) fn touch(&mut self, k: usize) {
        let mut node = MAX_OBJECTS + k;
        while node > 1 {
            let parent = node / 2;
            if node.is_multiple_of(2) {
                self.bits |= 1 << parent;
            } else {
                self.bits &= !(1u32 << parent);
            }
            node = parent;
        }
    }

    /// The slot the tree leads to from the root among the `valid` slots: at each node the
    /// older half if it holds a valid slot, else the other.
    #[inline]
    pub(super) fn oldest(&self, valid: u32) -> Option<usize> {
        if valid == 0 {
            return None;
        }
        let mut node = 1usize;
        // Exactly log2(MAX_OBJECTS) levels, as the RTL's tree has: a fixed walk, so a wrong
        // child index reads a wrong leaf (which the lockstep catches) rather than never
        // reaching one.
        for _ in 0..MAX_OBJECTS.trailing_zeros() {
            let depth = node.ilog2();
            let half = (MAX_OBJECTS >> depth) / 2;
            let lower_first = (node - (1 << depth)) * 2 * half;
            let lower = (((1u64 << half) - 1) << lower_first) as u32;
            let upper = (((1u64 << half) - 1) << (lower_first + half)) as u32;
            let go_upper =
                valid & upper != 0 && ((self.bits >> node) & 1 == 1 || valid & lower == 0);
            node = 2 * node + usize::from(go_upper);
        }
        Some(node - MAX_OBJECTS)
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
                assert_eq!(list.listed(), valid);
            }
        }
    }

    /// The tree on a hand-worked case: touching 0, 1, 2, 3 in turn leaves 0 oldest (every
    /// node above it points away from the later touches); touching 0 again makes the tree
    /// lead to 2 — the half {2, 3} was touched longer ago than {0, 1} as a whole — although
    /// 1 is the least recently touched slot. Removing 2 and 3 leads to 1.
    #[test]
    fn tree_plru_follows_the_node_bits_not_the_exact_order() {
        let mut t = PlruTree::default();
        for k in 0..4 {
            t.touch(k);
        }
        assert_eq!(t.oldest(0b1111), Some(0));
        t.touch(0);
        assert_eq!(t.oldest(0b1111), Some(2));
        assert_eq!(t.oldest(0b0011), Some(1));
        assert_eq!(t.oldest(0), None);
        // A slot in the upper half of the root: 31 touched last, 16 alone in that half.
        t.touch(16);
        t.touch(31);
        assert_eq!(t.oldest(1 << 16 | 1 << 31 | 0b1111), Some(2));
        assert_eq!(t.oldest(1 << 16 | 1 << 31), Some(16));
    }
}
