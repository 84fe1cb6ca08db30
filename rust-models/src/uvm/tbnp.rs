//! The tree-based neighbourhood prefetcher (TBNp) of NVIDIA's UVM driver
//! (`uvm_perf_prefetch.c`), generalised to any tree and leaf size so Forest can reuse it.
//!
//! The driver's rule, for one 2 MB VA block (a full binary tree over its 512 4 KB pages):
//! 1. occupied = pages resident on the GPU | pages faulted in this batch;
//! 2. every leaf (big page, 64 KB) holding a faulted page is filled in `occupied`
//!    ("grow fault granularity": the fault is widened to its big page);
//! 3. for each faulted page, walk from the page up to the root; every subtree whose
//!    occupied count × 100 is STRICTLY greater than its page count × threshold qualifies,
//!    and the largest qualifying subtree becomes that fault's prefetch region (a page
//!    already inside the previous region is skipped, as in the driver's loop);
//! 4. prefetch = union of regions, minus the faulted pages (they migrate as faults, not
//!    prefetches) and minus pages already resident.
//!
//! Subtrees are clipped to the valid pages of the tree (a block at an allocation's tail
//! is shorter), and the clipped size is what the threshold is compared against.
//!
//! Not modelled: the driver's thrashing detector, which stops step 2 for thrashing pages.

use bitvec::prelude::*;
use serde::Serialize;

/// Shape of one prefetch tree in 4 KB pages: the span of its root and of its leaf (the
/// unit a fault is widened to). Both are powers of two, leaf ≤ tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct TreeShape {
    pub tree_pages: usize,
    pub leaf_pages: usize,
}

impl TreeShape {
    /// The driver's default: a 2 MB tree with 64 KB big pages.
    pub const TBNP_DEFAULT: TreeShape = TreeShape {
        tree_pages: 512,
        leaf_pages: 16,
    };

    /// A shape, or what is wrong with the sizes.
    pub fn new(tree_pages: usize, leaf_pages: usize) -> Result<TreeShape, TreeShapeError> {
        if !tree_pages.is_power_of_two() || !leaf_pages.is_power_of_two() {
            return Err(TreeShapeError::NotPowerOfTwo {
                tree_pages,
                leaf_pages,
            });
        }
        if leaf_pages > tree_pages {
            return Err(TreeShapeError::LeafLargerThanTree {
                tree_pages,
                leaf_pages,
            });
        }
        Ok(TreeShape {
            tree_pages,
            leaf_pages,
        })
    }
}

/// Why a tree and leaf size make no [`TreeShape`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum TreeShapeError {
    #[error("tree ({tree_pages} pages) and leaf ({leaf_pages} pages) must be powers of two")]
    NotPowerOfTwo {
        tree_pages: usize,
        leaf_pages: usize,
    },
    #[error("leaf ({leaf_pages} pages) is larger than the tree ({tree_pages} pages)")]
    LeafLargerThanTree {
        tree_pages: usize,
        leaf_pages: usize,
    },
}

/// One chosen prefetch region, in pages relative to the tree's first page.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct PrefetchRegion {
    pub first: usize,
    pub pages: usize,
}

/// The outcome of one prefetch decision over one tree.
#[derive(Debug, Clone, PartialEq)]
pub struct PrefetchDecision {
    /// Pages to migrate as prefetches (never faulted, never already resident).
    pub prefetch: BitVec<u64, Lsb0>,
    /// The regions chosen, one per fault that was not inside an earlier region.
    pub regions: Vec<PrefetchRegion>,
}

/// The TBNp decision for one tree. `resident` and `faulted` hold `valid_pages` bits or
/// more (bits beyond `valid_pages` are ignored); `threshold` is in percent.
pub fn compute_prefetch(
    resident: &BitSlice<u64, Lsb0>,
    faulted: &BitSlice<u64, Lsb0>,
    valid_pages: usize,
    shape: TreeShape,
    threshold: u32,
) -> PrefetchDecision {
    let n = valid_pages.min(shape.tree_pages);
    let mut prefetch = bitvec![u64, Lsb0; 0; n];
    let mut regions = Vec::new();
    if n == 0 {
        return PrefetchDecision { prefetch, regions };
    }
    let resident = &resident[..n];
    let faulted = &faulted[..n];

    // Steps 1–2: occupied pages, faults widened to their leaf.
    let mut occupied: BitVec<u64, Lsb0> = resident.to_bitvec();
    occupied |= faulted;
    for leaf_start in (0..n).step_by(shape.leaf_pages) {
        let leaf_end = (leaf_start + shape.leaf_pages).min(n);
        if faulted[leaf_start..leaf_end].any() {
            occupied[leaf_start..leaf_end].fill(true);
        }
    }

    // Step 3: the upward walk from each faulted page.
    let levels = shape.tree_pages.trailing_zeros() as usize;
    let mut last_region: Option<PrefetchRegion> = None;
    for page in faulted.iter_ones() {
        if let Some(r) = last_region {
            if page >= r.first && page < r.first + r.pages {
                continue;
            }
        }
        let mut chosen: Option<PrefetchRegion> = None;
        for level in 0..=levels {
            let span = 1usize << level;
            let first = page & !(span - 1);
            let pages = span.min(n - first);
            let count = occupied[first..first + pages].count_ones();
            // Strictly greater, as the driver compares.
            if count * 100 > pages * threshold as usize {
                chosen = Some(PrefetchRegion { first, pages });
            }
        }
        if let Some(r) = chosen {
            prefetch[r.first..r.first + r.pages].fill(true);
            regions.push(r);
            last_region = Some(r);
        }
    }

    // Step 4: faulted and resident pages are not prefetches.
    let mut not_needed: BitVec<u64, Lsb0> = resident.to_bitvec();
    not_needed |= faulted;
    prefetch &= !not_needed;
    PrefetchDecision { prefetch, regions }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mask(n: usize, pages: &[usize]) -> BitVec<u64, Lsb0> {
        let mut m = bitvec![u64, Lsb0; 0; n];
        for &p in pages {
            m.set(p, true);
        }
        m
    }

    #[test]
    fn a_lone_fault_prefetches_its_big_page() {
        let d = compute_prefetch(
            &mask(512, &[]),
            &mask(512, &[5]),
            512,
            TreeShape::TBNP_DEFAULT,
            51,
        );
        assert_eq!(
            d.regions,
            vec![PrefetchRegion {
                first: 0,
                pages: 16
            }]
        );
        assert_eq!(d.prefetch.count_ones(), 15);
        assert!(!d.prefetch[5]);
    }

    #[test]
    fn a_short_tail_block_compares_against_its_clipped_size() {
        // 20 valid pages: the 32-page subtree is clipped to 20; 16 (big page) + 2 faults
        // in the second leaf → occupied 20 of 20 > 51 %.
        let d = compute_prefetch(
            &mask(512, &[]),
            &mask(512, &[0, 17]),
            20,
            TreeShape::TBNP_DEFAULT,
            51,
        );
        assert_eq!(
            d.regions,
            vec![PrefetchRegion {
                first: 0,
                pages: 20
            }]
        );
        assert_eq!(d.prefetch.len(), 20);
    }
}
