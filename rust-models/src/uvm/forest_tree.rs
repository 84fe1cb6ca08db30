//! Forest's per-object prefetch trees: isolation and motion bits over 16 KB base partitions.
//!
//! Every object is covered by full binary trees whose level-0 nodes are base partitions
//! (16 KB) and whose roots span the largest configured tree. Each non-leaf node carries:
//! - an **isolation bit**: its two children are roots of independent prefetch trees, so
//!   the TBNp walk never climbs past it (this shrinks the tree);
//! - a **motion bit**: its whole subtree moves as one basic block, so a fault anywhere
//!   under it migrates all of it (this grows the leaf).
//!
//! The prefetcher keeps the driver's TBNp walk and threshold; the bits only change
//! where the walk starts (the motion block) and where it stops (below an isolated node).
//! Forest configures a whole object at once, so every node of a level holds the same bits;
//! they are stored once per level, which is the same information, compactly.

use super::apd::AccessClass;
use super::config::ClassTrees;
use super::tbnp::TreeShape;
use bitvec::prelude::*;

/// The isolation and motion bits of one object's trees, per level (level 0 = partition).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectTreeBits {
    /// 4 KB pages per base partition.
    pub partition_pages: usize,
    /// Bit `l`: nodes at level `l` (span `partition << l`) isolate their children.
    pub isolation: BitVec<u8, Lsb0>,
    /// Bit `l`: nodes at level `l` move as one block.
    pub motion: BitVec<u8, Lsb0>,
}

impl ObjectTreeBits {
    /// Bits that realise `tree_pages` / `leaf_pages` over roots of `root_pages`.
    pub fn for_shape(partition_pages: usize, root_pages: usize, shape: TreeShape) -> Self {
        let levels = (root_pages / partition_pages).trailing_zeros() as usize + 1;
        let mut isolation = bitvec![u8, Lsb0; 0; levels];
        let mut motion = bitvec![u8, Lsb0; 0; levels];
        for l in 1..levels {
            let span = partition_pages << l;
            motion.set(l, span <= shape.leaf_pages);
            isolation.set(l, span > shape.tree_pages);
        }
        ObjectTreeBits {
            partition_pages,
            isolation,
            motion,
        }
    }

    /// The tree and leaf the prefetch walk sees: the leaf is the highest motion block
    /// reached from a partition, the tree stops below the first isolating ancestor.
    pub fn shape(&self) -> TreeShape {
        let levels = self.isolation.len();
        let mut leaf_level = 0;
        while leaf_level + 1 < levels && self.motion[leaf_level + 1] {
            leaf_level += 1;
        }
        let mut root_level = 0;
        while root_level + 1 < levels && !self.isolation[root_level + 1] {
            root_level += 1;
        }
        TreeShape {
            tree_pages: self.partition_pages << root_level,
            leaf_pages: self.partition_pages << leaf_level.min(root_level),
        }
    }
}

/// The configured tree of each class, in 4 KB pages.
pub fn class_shape(trees: &ClassTrees, class: AccessClass) -> TreeShape {
    let (tree_kb, leaf_kb) = match class {
        AccessClass::Ls => (trees.ls_tree_kb, trees.ls_leaf_kb),
        AccessClass::Hchi => (trees.hchi_tree_kb, trees.hchi_leaf_kb),
        AccessClass::Hcli => (trees.hcli_tree_kb, trees.hcli_leaf_kb),
        AccessClass::Lc => (trees.lc_tree_kb, trees.lc_leaf_kb),
    };
    TreeShape {
        tree_pages: (tree_kb / 4) as usize,
        leaf_pages: (leaf_kb / 4) as usize,
    }
}

/// Root span (pages) over which every class's bits are laid out: the largest tree.
pub fn root_pages(trees: &ClassTrees) -> usize {
    AccessClass::ALL
        .iter()
        .map(|&c| class_shape(trees, c).tree_pages)
        .max()
        .unwrap_or(512)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bits_realise_every_class_shape() {
        let trees = ClassTrees::default();
        let root = root_pages(&trees);
        for class in AccessClass::ALL {
            let want = class_shape(&trees, class);
            let bits = ObjectTreeBits::for_shape(4, root, want);
            assert_eq!(bits.shape(), want, "{class:?}");
        }
    }

    #[test]
    fn hcli_isolates_small_trees_and_moves_single_partitions() {
        let trees = ClassTrees::default();
        let bits = ObjectTreeBits::for_shape(
            4,
            root_pages(&trees),
            class_shape(&trees, AccessClass::Hcli),
        );
        // 128 KB tree over 16 KB partitions: levels 1..=3 joined, 4.. isolate.
        assert!(!bits.isolation[3] && bits.isolation[4]);
        assert!(!bits.motion[1]);
    }
}
