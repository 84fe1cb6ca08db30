//! Placement policies: one trait, one implementation per family, chosen by [`PolicyKind`].
//!
//! A policy answers three questions for the memory manager: which [`BlockMode`] a VA block
//! touched for the first time gets, whether a structure's PMM phase ends in an MMA run,
//! and whether a translation's cost is idealised.

use super::{PolicyKind, Translation};
use crate::addr::PAGE_64K;
use crate::pagetable::Level;

/// How the pages of one 2 MB VA block are placed (log2 sizes in 4 KB pages).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockMode {
    /// Pages of `2^page_log` 4 KB pages. Each aligned region of `2^region_log` pages is
    /// reserved as one contiguous frame on the chiplet of its first toucher and its pages
    /// are mapped into it on demand (every toucher's pages go there, as with a large page);
    /// a full region is remapped as one fragment. `region_log == page_log`: no reservation,
    /// every page is placed on its own first toucher's chiplet.
    Fixed { page_log: u8, region_log: u8 },
    /// OLP: 64 KB pages in a 2 MB reservation held while one chiplet touches the block;
    /// another chiplet's touch releases it and the block continues as `Fixed { 4, 4 }`.
    Opportunistic,
}

impl BlockMode {
    /// 64 KB pages, no reservation.
    pub const PAGES_64K: BlockMode = BlockMode::Fixed {
        page_log: 4,
        region_log: 4,
    };
    /// Log2 of the page size in 4 KB pages.
    pub fn page_log(self) -> u8 {
        match self {
            BlockMode::Fixed { page_log, .. } => page_log,
            BlockMode::Opportunistic => 4,
        }
    }
    /// Log2 of the reserved region, if regions are reserved.
    pub fn region_log(self) -> Option<u8> {
        match self {
            BlockMode::Fixed {
                page_log,
                region_log,
            } => (region_log > page_log).then_some(region_log),
            BlockMode::Opportunistic => Some(super::phys::LOG_2M),
        }
    }
}

/// Where a structure is in CLAP's life cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// A static policy: no phases.
    Static,
    /// Partial memory mapping (64 KB pages with OLP) until the PMM fraction is mapped.
    Pmm,
    /// MMA chose regions of `2^region_log` 4 KB pages for the rest.
    Analysed { region_log: u8 },
    /// MMA could not run (small structure, no fully mapped VA block): OLP for the rest.
    OlpFallback(&'static str),
}

/// What a policy sees of a structure when it decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AllocView {
    pub phase: Phase,
    pub olp_disabled: bool,
}

/// A placement policy. See the module documentation.
pub trait Policy: Send + Sync {
    fn kind(&self) -> PolicyKind;
    /// The phase a structure starts in.
    fn initial_phase(&self) -> Phase {
        Phase::Static
    }
    /// The mode of a VA block of a structure in state `alloc`, at its first touch.
    fn block_mode(&self, alloc: AllocView) -> BlockMode;
    /// Idealise a translation's cost (the `ideal` upper bound); placement is untouched.
    fn adjust_translation(&self, _t: &mut Translation) {}
}

/// Fixed page and region sizes for every block: S-4KB, S-64KB, S-2MB, the static
/// intermediate sizes S-128KB … S-1MB (reservation-based like S-2MB, CLAP §3.1: the
/// region's frame is reserved on its first toucher's chiplet, so every toucher's pages of
/// it go there), and MGvm's data placement (S-64KB).
#[derive(Debug, Clone, Copy)]
pub struct StaticPolicy {
    pub kind: PolicyKind,
    pub mode: BlockMode,
}

impl Policy for StaticPolicy {
    fn kind(&self) -> PolicyKind {
        self.kind
    }
    fn block_mode(&self, _alloc: AllocView) -> BlockMode {
        self.mode
    }
}

/// OLP for every structure, for the whole run.
#[derive(Debug, Clone, Copy)]
pub struct OlpPolicy;

fn olp_mode(alloc: AllocView) -> BlockMode {
    if alloc.olp_disabled {
        BlockMode::PAGES_64K
    } else {
        BlockMode::Opportunistic
    }
}

impl Policy for OlpPolicy {
    fn kind(&self) -> PolicyKind {
        PolicyKind::Olp
    }
    fn block_mode(&self, alloc: AllocView) -> BlockMode {
        olp_mode(alloc)
    }
}

/// CLAP: PMM (with OLP), then the size MMA chose, or OLP as the fallback.
#[derive(Debug, Clone, Copy)]
pub struct ClapPolicy;

impl Policy for ClapPolicy {
    fn kind(&self) -> PolicyKind {
        PolicyKind::Clap
    }
    fn initial_phase(&self) -> Phase {
        Phase::Pmm
    }
    fn block_mode(&self, alloc: AllocView) -> BlockMode {
        match alloc.phase {
            Phase::Analysed { region_log } => BlockMode::Fixed {
                page_log: 4,
                region_log,
            },
            _ => olp_mode(alloc),
        }
    }
}

/// 64 KB placement, translated as if every page were 2 MB: one TLB entry reaches 2 MB and
/// a walk ends at PDB0.
#[derive(Debug, Clone, Copy)]
pub struct IdealPolicy;

impl Policy for IdealPolicy {
    fn kind(&self) -> PolicyKind {
        PolicyKind::Ideal
    }
    fn block_mode(&self, _alloc: AllocView) -> BlockMode {
        BlockMode::PAGES_64K
    }
    fn adjust_translation(&self, t: &mut Translation) {
        t.tlb_reach_bytes = t.tlb_reach_bytes.max(crate::addr::PAGE_2M);
        if t.leaf_level == Level::Ptb {
            t.leaf_level = Level::Pdb0;
        }
    }
}

impl PolicyKind {
    /// The policy object for this name.
    pub fn build(self) -> Box<dyn Policy> {
        match self {
            PolicyKind::S4k => Box::new(StaticPolicy {
                kind: self,
                mode: BlockMode::Fixed {
                    page_log: 0,
                    region_log: 0,
                },
            }),
            PolicyKind::S64k | PolicyKind::S64kCoal | PolicyKind::Mgvm | PolicyKind::Cnuma => {
                Box::new(StaticPolicy {
                    kind: self,
                    mode: BlockMode::PAGES_64K,
                })
            }
            PolicyKind::S2m => Box::new(StaticPolicy {
                kind: self,
                mode: BlockMode::Fixed {
                    page_log: 4,
                    region_log: super::phys::LOG_2M,
                },
            }),
            PolicyKind::S128k | PolicyKind::S256k | PolicyKind::S512k | PolicyKind::S1m => {
                let bytes = self.static_intermediate_bytes().unwrap_or(PAGE_64K);
                // Log2 of the page in 4 KB pages: 5 (128 KB) … 8 (1 MB).
                let region_log = (bytes / crate::addr::PAGE_4K).trailing_zeros() as u8;
                Box::new(StaticPolicy {
                    kind: self,
                    mode: BlockMode::Fixed {
                        page_log: 4,
                        region_log,
                    },
                })
            }
            PolicyKind::Olp => Box::new(OlpPolicy),
            PolicyKind::Clap => Box::new(ClapPolicy),
            PolicyKind::Ideal => Box::new(IdealPolicy),
        }
    }
}
