//! Memory-mapping analysis (CLAP §4.4): the chiplet-locality tree of a VA region and the
//! choice of a page size from it.
//!
//! The tree's leaves are the 64 KB pages of a region (32 for a 2 MB VA block); each leaf
//! holds the chiplet its page was mapped to, and each internal node counts, per chiplet,
//! the mapped leaves below it. Mapping a page updates one leaf and its ancestors
//! (`log2(leaves)` increments), which is the incremental per-page update the paper times
//! at ~0.4 µs.
//!
//! **Locality score of a node (Eq. 1).** A node at level `l` covers `2^l` leaves; its score
//! is the share of them mapped to its busiest chiplet,
//!
//! ```text
//! score(node) = max over chiplets c = 1..C_n of count_c(node) / 2^l
//! ```
//!
//! so 1 means every 64 KB page below it sits on one chiplet, and the average over a level,
//! `score_avg(l)`, is the fraction of 64 KB pages that would stay on their chiplet if pages
//! of `64 KB << l` were used (each placed on its busiest chiplet) — the paper's reading of
//! `score_avg`. The chosen level is the highest with `score_avg(l) >= thres` (Eq. 2), where
//! Eq. 4 lowers `thres` by the Remote Tracker's ratio: `thres - (ratio_rt + ratio_target) / k`.
//! A structure every chiplet shares evenly has `ratio_rt = 1 - 1/C_n`, and no level can
//! score below `1/C_n`, so such a structure always gets the largest size: the paper's
//! "larger pages for inherently remote data" (GEMM's matrix B).

use crate::addr::ChipletId;

/// Leaves of a 2 MB VA block (64 KB pages).
pub const BLOCK_LEAVES: usize = 32;
/// A leaf not mapped yet.
const UNMAPPED: u8 = u8::MAX;

/// Chiplet-locality tree over `leaves` 64 KB pages. See the module documentation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocalityTree {
    chiplets: u8,
    leaves: Vec<u8>,
    mapped: u16,
    /// Per internal node (level 1 first, left to right) and chiplet: mapped leaves below.
    counts: Vec<u16>,
}

impl LocalityTree {
    /// A tree over `leaves` (a power of two, at most 256) 64 KB pages for `chiplets` chiplets.
    pub fn new(leaves: usize, chiplets: u32) -> Self {
        debug_assert!(leaves.is_power_of_two() && leaves <= 256 && chiplets >= 1);
        LocalityTree {
            chiplets: chiplets as u8,
            leaves: vec![UNMAPPED; leaves],
            mapped: 0,
            counts: vec![0; (leaves - 1) * chiplets as usize],
        }
    }

    /// Levels from the leaves (0) to the root (`log2(leaves)`), inclusive.
    pub fn levels(&self) -> usize {
        self.leaves.len().trailing_zeros() as usize + 1
    }

    /// Whether every leaf is mapped.
    pub fn full(&self) -> bool {
        self.mapped as usize == self.leaves.len()
    }

    /// Chiplet of a leaf, if mapped.
    pub fn leaf(&self, leaf: usize) -> Option<ChipletId> {
        let c = self.leaves[leaf];
        (c != UNMAPPED).then_some(ChipletId(c))
    }

    fn node_offset(&self, level: usize) -> usize {
        // Level l >= 1 holds n >> l nodes, after the n/2 + n/4 + ... of the levels below.
        self.leaves.len() - (self.leaves.len() >> (level - 1))
    }

    /// Record that 64 KB page `leaf` was mapped on `chiplet` (incremental update).
    #[inline]
    pub fn record(&mut self, leaf: usize, chiplet: ChipletId) {
        if self.leaves[leaf] != UNMAPPED {
            self.remove(leaf);
        }
        self.leaves[leaf] = chiplet.0;
        self.mapped += 1;
        self.adjust(leaf, chiplet.0, true);
    }

    /// Forget leaf `leaf` (its page was unmapped).
    pub fn remove(&mut self, leaf: usize) {
        let c = self.leaves[leaf];
        if c == UNMAPPED {
            return;
        }
        self.leaves[leaf] = UNMAPPED;
        self.mapped -= 1;
        self.adjust(leaf, c, false);
    }

    #[inline]
    fn adjust(&mut self, leaf: usize, chiplet: u8, up: bool) {
        let c = self.chiplets as usize;
        let n = self.leaves.len();
        let mut offset = 0;
        let mut width = n >> 1;
        let mut node = leaf >> 1;
        while width >= 1 {
            let slot = &mut self.counts[(offset + node) * c + chiplet as usize];
            if up {
                *slot += 1;
            } else {
                *slot -= 1;
            }
            offset += width;
            width >>= 1;
            node >>= 1;
        }
    }

    /// Locality score of node `node` of level `level` (>= 1), Eq. 1.
    pub fn node_score(&self, level: usize, node: usize) -> f64 {
        let c = self.chiplets as usize;
        let base = (self.node_offset(level) + node) * c;
        let max = *self.counts[base..base + c].iter().max().unwrap_or(&0) as u64;
        locality_score(max, 1 << level)
    }

    /// `score_avg(l)` for every level, leaves (always 1) first.
    pub fn level_scores(&self) -> Vec<f64> {
        let mut out = vec![1.0];
        for level in 1..self.levels() {
            let nodes = self.leaves.len() >> level;
            let sum: f64 = (0..nodes).map(|i| self.node_score(level, i)).sum();
            out.push(sum / nodes as f64);
        }
        out
    }

    /// The highest level whose average score reaches `threshold` (Eq. 2 / Eq. 4).
    pub fn select_level(&self, threshold: f64) -> usize {
        select_level(&self.level_scores(), threshold)
    }
}

/// Eq. 1: locality of a node with `leaves` leaves whose busiest chiplet holds `max`.
pub fn locality_score(max: u64, leaves: u64) -> f64 {
    max as f64 / leaves as f64
}

/// The highest level whose score reaches `threshold`; level 0 (64 KB) always qualifies.
pub fn select_level(scores: &[f64], threshold: f64) -> usize {
    // A tiny tolerance keeps exact fractions (e.g. 0.25 vs 1 - 0.75) from flipping.
    (0..scores.len())
        .rev()
        .find(|&l| scores[l] >= threshold - 1e-9)
        .unwrap_or(0)
}

/// Eq. 4: the threshold lowered by the Remote Tracker's remote ratio.
pub fn effective_threshold(thres: f64, ratio_rt: f64, ratio_target: f64, k: f64) -> f64 {
    thres - (ratio_rt + ratio_target) / k
}

/// The most frequent level among the analysed VA blocks; ties go to the smaller level,
/// the choice that keeps locality.
pub fn dominant_level(histogram: &[u32]) -> Option<usize> {
    let best = *histogram.iter().max()?;
    if best == 0 {
        return None;
    }
    histogram.iter().position(|&n| n == best)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uniform_chiplet_scores_one_and_even_spread_scores_one_over_chiplets() {
        let mut t = LocalityTree::new(BLOCK_LEAVES, 4);
        for i in 0..32 {
            t.record(i, ChipletId(2));
        }
        assert!(t.full());
        assert!(t.level_scores().iter().all(|&s| s == 1.0));
        assert_eq!(t.select_level(1.0), 5);
        let mut r = LocalityTree::new(BLOCK_LEAVES, 4);
        for i in 0..32 {
            r.record(i, ChipletId((i % 4) as u8));
        }
        let s = r.level_scores();
        assert_eq!(s[1], 0.5);
        assert_eq!(s[2], 0.25);
        assert_eq!(s[5], 0.25);
        assert_eq!(r.select_level(1.0), 0);
        assert_eq!(r.select_level(0.5), 1);
        assert_eq!(r.select_level(0.25), 5);
    }

    #[test]
    fn remove_undoes_record() {
        let mut t = LocalityTree::new(8, 4);
        let empty = t.clone();
        t.record(3, ChipletId(1));
        t.record(3, ChipletId(2));
        t.remove(3);
        assert_eq!(t, empty);
    }
}
