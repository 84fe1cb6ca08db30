//! The manager's state: per-VA-block and per-structure records, the page-table frame
//! source, bitmap helpers, and configuration checks.

use super::mma::LocalityTree;
use super::phys::{PhysMem, BLOCK_FRAMES, PT_OWNER};
use super::policy::{AllocView, BlockMode, Phase};
use super::{DriverConfig, DriverError, MmaReport};
use crate::addr::{ChipletId, Pfn, PAGE_2M};
use crate::pagetable::TablePageSource;
use crate::workload::AllocIndex;

/// A contiguous frame reserved for one region of a VA block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Reservation {
    pub pfn: Pfn,
    /// Chiplet whose touch made the reservation (OLP compares later touches with it).
    pub toucher: ChipletId,
}

/// One 2 MB VA block.
#[derive(Debug, Clone)]
pub(super) struct VaBlock {
    pub alloc: AllocIndex,
    pub mode: Option<BlockMode>,
    /// One bit per mapped 4 KB page.
    pub mapped: [u64; 8],
    pub mapped_pages: u16,
    /// Live reservations by region index (empty when the mode reserves nothing).
    pub reservations: Vec<Option<Reservation>>,
    /// Chiplet-locality tree over the 64 KB pages (created on the first one).
    pub tree: Option<Box<LocalityTree>>,
    /// Sequence number of the last mapping in the block (LRU key; 0 = none).
    pub seq: u64,
}

/// One data structure.
#[derive(Debug, Clone)]
pub(super) struct AllocState {
    pub name: String,
    pub bytes: u64,
    pub first_block: u32,
    pub blocks: u32,
    pub mapped_bytes: u64,
    pub phase: Phase,
    pub olp_releases: u64,
    pub olp_disabled: bool,
    pub pmm_end_fault: Option<u64>,
    pub mma: Option<MmaReport>,
}

impl AllocState {
    pub fn view(&self) -> AllocView {
        AllocView {
            phase: self.phase,
            olp_disabled: self.olp_disabled,
        }
    }
}

#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Counters {
    pub faults: u64,
    pub promotions: u64,
    pub olp_releases: u64,
    pub evictions: u64,
    pub fallbacks: u64,
    pub pt_rehomes: u64,
    pub migrations: u64,
}

/// Page-table pages come from the faulting chiplet (first toucher), else the emptiest
/// other one: the PTB of a region then usually sits where its data is used.
pub(super) struct TableFrames<'a> {
    pub phys: &'a mut PhysMem,
    pub chiplet: ChipletId,
}

impl TablePageSource for TableFrames<'_> {
    fn alloc_table_page(&mut self) -> Option<Pfn> {
        self.phys.alloc_near(self.chiplet, 0, PT_OWNER)
    }
    fn free_table_page(&mut self, pfn: Pfn) {
        self.phys.free(pfn, 0);
    }
}

pub(super) fn bit(map: &[u64; 8], i: u64) -> bool {
    map[(i / 64) as usize] & (1 << (i % 64)) != 0
}

pub(super) fn set_bits(map: &mut [u64; 8], first: u64, count: u64, on: bool) {
    for i in first..first + count {
        let w = &mut map[(i / 64) as usize];
        if on {
            *w |= 1 << (i % 64);
        } else {
            *w &= !(1 << (i % 64));
        }
    }
}

pub(super) fn all_bits(map: &[u64; 8], first: u64, count: u64) -> bool {
    (first..first + count).all(|i| bit(map, i))
}

pub(super) fn validate(cfg: &DriverConfig) -> Result<(), DriverError> {
    let bad = |key, message: String| Err(DriverError::Config { key, message });
    if !cfg.chiplets.is_power_of_two() || cfg.chiplets > 64 {
        return bad(
            "chiplets",
            format!("{} is not a power of two in 1..=64", cfg.chiplets),
        );
    }
    if cfg.frames_per_chiplet == 0 || !cfg.frames_per_chiplet.is_multiple_of(BLOCK_FRAMES) {
        return bad(
            "frames_per_chiplet",
            format!(
                "{} is not a positive multiple of 512 (whole 2 MB PF blocks)",
                cfg.frames_per_chiplet
            ),
        );
    }
    for (key, v) in [
        ("pmm_fraction", cfg.pmm_fraction),
        ("olp_disable_fraction", cfg.olp_disable_fraction),
    ] {
        if !(0.0..=1.0).contains(&v) {
            return bad(key, format!("{v} is not a fraction in 0..=1"));
        }
    }
    if cfg.rt_k.is_nan()
        || cfg.rt_k <= 0.0
        || !cfg.mma_threshold.is_finite()
        || !cfg.ratio_target.is_finite()
    {
        return bad("rt_k", "k must be positive and thresholds finite".into());
    }
    if cfg.mma_min_full_blocks == 0 {
        return bad(
            "mma_min_full_blocks",
            "expected at least 1 fully mapped VA block".into(),
        );
    }
    if cfg.max_frag > crate::pte::FRAG_MAX {
        return bad("max_frag", format!("{} exceeds 31", cfg.max_frag));
    }
    if !cfg.va_base.is_multiple_of(PAGE_2M) {
        return bad("va_base", format!("{:#x} is not 2 MB aligned", cfg.va_base));
    }
    Ok(())
}
