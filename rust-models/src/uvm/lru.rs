//! The baseline driver's eviction order: 2 MB chunks by the time they last received a
//! migration (fault order), not by GPU access recency — the driver never sees accesses
//! that hit in GPU memory.

use std::collections::BTreeSet;

/// LRU list of 2 MB chunks keyed by their latest migration.
#[derive(Debug, Clone, Default)]
pub struct FaultOrderLru {
    seq_of_block: Vec<u64>,
    order: BTreeSet<(u64, u32)>,
    next_seq: u64,
}

impl FaultOrderLru {
    pub fn new(blocks: usize) -> FaultOrderLru {
        FaultOrderLru {
            seq_of_block: vec![0; blocks],
            order: BTreeSet::new(),
            next_seq: 1,
        }
    }

    /// A block received migrated pages: it becomes the most recent.
    pub fn touch_block(&mut self, block: usize) {
        let old = self.seq_of_block[block];
        if old != 0 {
            self.order.remove(&(old, block as u32));
        }
        self.seq_of_block[block] = self.next_seq;
        self.order.insert((self.next_seq, block as u32));
        self.next_seq += 1;
    }

    /// The block was emptied by eviction.
    pub fn remove_block(&mut self, block: usize) {
        let old = self.seq_of_block[block];
        if old != 0 {
            self.order.remove(&(old, block as u32));
            self.seq_of_block[block] = 0;
        }
    }

    /// Least recently migrated block for which `eligible` holds.
    pub fn victim(&self, mut eligible: impl FnMut(usize) -> bool) -> Option<usize> {
        self.order
            .iter()
            .map(|&(_, b)| b as usize)
            .find(|&b| eligible(b))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn victim_is_the_block_migrated_longest_ago() {
        let mut lru = FaultOrderLru::new(8);
        lru.touch_block(3);
        lru.touch_block(5);
        lru.touch_block(1);
        assert_eq!(lru.victim(|_| true), Some(3));
        lru.touch_block(3);
        assert_eq!(lru.victim(|_| true), Some(5));
        assert_eq!(lru.victim(|b| b != 5), Some(1));
        lru.remove_block(5);
        lru.remove_block(1);
        assert_eq!(lru.victim(|_| true), Some(3));
    }
}
