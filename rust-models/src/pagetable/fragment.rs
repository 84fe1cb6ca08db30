//! amdgpu's fragment computation (`amdgpu_vm_pte_fragment`) and the choice of the level a
//! fragment is written at (`amdgpu_vm_ptes_update`), as pure functions of VPNs.

use super::Level;

/// One fragment of a mapping: VPNs `start..end` written with fragment `frag`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fragment {
    pub start: u64,
    pub end: u64,
    pub frag: u32,
}

/// The next fragment of the range `start..end` (VPNs, `start < end`).
///
/// The fragment is the largest power of two allowed by both the alignment of `start` and
/// the remaining length (`min(ffs(start) - 1, fls64(end - start) - 1)`). When it reaches
/// `max_frag` it is capped and, as amdgpu does, one fragment then runs to `end` rounded
/// down to a `max_frag` boundary (several max-size runs in one step). System memory is
/// physically scattered, so it always gets fragment 0 for the whole range.
pub fn next_fragment(start: u64, end: u64, max_frag: u32, system: bool) -> Fragment {
    debug_assert!(start < end);
    if system {
        return Fragment {
            start,
            end,
            frag: 0,
        };
    }
    // trailing_zeros(0) = 64, so a start of 0 is limited by the length alone.
    let align = start.trailing_zeros();
    let fits = 63 - (end - start).leading_zeros();
    let frag = align.min(fits);
    if frag >= max_frag {
        Fragment {
            start,
            end: end & !((1u64 << max_frag) - 1),
            frag: max_frag,
        }
    } else {
        Fragment {
            start,
            end: start + (1u64 << frag),
            frag,
        }
    }
}

/// All fragments of `start..end`, in order.
pub fn fragments(start: u64, end: u64, max_frag: u32, system: bool) -> Vec<Fragment> {
    let mut out = Vec::new();
    let mut s = start;
    while s < end {
        let f = next_fragment(s, end, max_frag, system);
        out.push(f);
        s = f.end;
    }
    out
}

/// The level a fragment is written at: the one whose entry size fits it, i.e. the level
/// with `shift <= frag < parent_shift` (2 MB and up at PDB0, 1 GB and up at PDB1, smaller
/// at the PTB). PDB2 entries (512 GB) are never leaves here. Without huge pages (GPUs
/// before GMC v9) every mapping descends to the PTB.
pub fn leaf_level(frag: u32, no_huge: bool) -> Level {
    if no_huge {
        Level::Ptb
    } else if frag >= Level::Pdb1.shift() {
        Level::Pdb1
    } else if frag >= Level::Pdb0.shift() {
        Level::Pdb0
    } else {
        Level::Ptb
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fragment_is_limited_by_alignment_and_by_length() {
        // 16 KB-aligned 4 pages: min(ffs - 1 >= 2, fls(4) - 1 = 2) = 2.
        assert_eq!(next_fragment(0x104, 0x108, 31, false).frag, 2);
        // 2 MB-aligned, 2 MB long: 9.
        assert_eq!(next_fragment(0x200, 0x400, 31, false).frag, 9);
        // Aligned to 2 MB but only 3 pages long: 1 (two pages), then 0.
        let f = fragments(0x200, 0x203, 31, false);
        assert_eq!(f.iter().map(|f| f.frag).collect::<Vec<_>>(), vec![1, 0]);
        // Odd start: one single page first.
        assert_eq!(next_fragment(0x1ff, 0x400, 31, false).frag, 0);
    }

    #[test]
    fn capped_fragment_runs_to_the_last_max_frag_boundary() {
        // 8 MB at a 4 MB-aligned start with the old fragment_size = 9: one step of frag 9
        // covering all four 2 MB runs.
        let f = next_fragment(0x400, 0xC00, 9, false);
        assert_eq!(
            f,
            Fragment {
                start: 0x400,
                end: 0xC00,
                frag: 9
            }
        );
    }

    #[test]
    fn levels_follow_the_entry_sizes() {
        assert_eq!(leaf_level(8, false), Level::Ptb);
        assert_eq!(leaf_level(9, false), Level::Pdb0);
        assert_eq!(leaf_level(17, false), Level::Pdb0);
        assert_eq!(leaf_level(18, false), Level::Pdb1);
        assert_eq!(leaf_level(30, false), Level::Pdb1);
        assert_eq!(leaf_level(18, true), Level::Ptb);
    }
}
