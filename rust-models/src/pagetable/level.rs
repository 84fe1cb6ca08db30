//! The four levels of the amdgpu page table and what one entry of each covers.

use super::ENTRIES;
use serde::Serialize;

/// A page-table level, root first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum Level {
    #[serde(rename = "PDB2")]
    Pdb2,
    #[serde(rename = "PDB1")]
    Pdb1,
    #[serde(rename = "PDB0")]
    Pdb0,
    #[serde(rename = "PTB")]
    Ptb,
}

impl Level {
    /// Root to leaf.
    pub const ALL: [Level; 4] = [Level::Pdb2, Level::Pdb1, Level::Pdb0, Level::Ptb];

    /// VPN bits below one entry of this level (amdgpu `amdgpu_vm_pt_level_shift`).
    pub const fn shift(self) -> u32 {
        match self {
            Level::Pdb2 => 27,
            Level::Pdb1 => 18,
            Level::Pdb0 => 9,
            Level::Ptb => 0,
        }
    }
    /// Bytes one entry of this level maps.
    pub const fn entry_bytes(self) -> u64 {
        crate::addr::PAGE_4K << self.shift()
    }
    /// Position from the root (PDB2 = 0 … PTB = 3): the number of table reads above it.
    pub const fn depth(self) -> usize {
        self as usize
    }
    /// The level below, if any.
    pub const fn child(self) -> Option<Level> {
        match self {
            Level::Pdb2 => Some(Level::Pdb1),
            Level::Pdb1 => Some(Level::Pdb0),
            Level::Pdb0 => Some(Level::Ptb),
            Level::Ptb => None,
        }
    }
    /// amdgpu's name for the level.
    pub const fn name(self) -> &'static str {
        match self {
            Level::Pdb2 => "PDB2",
            Level::Pdb1 => "PDB1",
            Level::Pdb0 => "PDB0",
            Level::Ptb => "PTB",
        }
    }
    /// Entry index of `vpn` in the table of this level that covers it.
    pub(super) fn index(self, vpn: u64) -> usize {
        ((vpn >> self.shift()) & (ENTRIES as u64 - 1)) as usize
    }
}

impl core::fmt::Display for Level {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.name())
    }
}
