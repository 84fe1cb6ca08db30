//! The 64-bit GPU page-table entry (amdgpu-style, extended with CLAP's allocation ID).
//!
//! ```text
//!  63      57 56  55        48 47                          12 11   7  6  5  4  3  2  1  0
//! +----------+---+------------+------------------------------+------+--+--+--+--+--+--+--+
//! | reserved |PDE| alloc ID   | PFN (4 KB frame number)      | FRAG |W |R |X |- |S |Y |V |
//! +----------+---+------------+------------------------------+------+--+--+--+--+--+--+--+
//! ```
//! - bit 0 `V` valid; bit 1 `Y` system (host) memory; bit 2 `S` snooped; bit 3 reserved
//!   (amdgpu's TMZ, always 0 here); bit 4 `X` executable; bit 5 `R` readable; bit 6 `W`
//!   writeable. Bits 1..=6 are the "permissions" the TLB coalescing logic compares.
//! - bits 7–11 `FRAG` (amdgpu `AMDGPU_PTE_FRAG`): the entry belongs to a naturally aligned,
//!   physically contiguous run of `4 KB << FRAG` with identical flags, so one L1 TLB entry
//!   may cover the whole run. FRAG is a hint; it never changes the number of entries.
//! - bits 12–47 PFN of a 4 KB frame (a 48-bit physical address). For a directory entry it
//!   is the frame of the next-level table; for a leaf, the first frame it maps.
//! - bits 48–55 allocation ID (allocation index + 1, 0 = none). The translation hardware
//!   ignores these bits; the Remote Tracker reads them after every walk (CLAP §4.3).
//! - bit 56 `PDE` PDE-as-PTE: a directory entry (PDB0 / PDB1) used as a leaf, i.e. a
//!   2 MB / 1 GB huge page with no table below it (amdgpu `AMDGPU_PDE_PTE`).

use crate::addr::{ChipletId, Pfn};

/// Valid bit.
pub const VALID: u64 = 1 << 0;
/// The frame is in system (host) memory, not VRAM.
pub const SYSTEM: u64 = 1 << 1;
/// Accesses snoop the CPU caches (host memory).
pub const SNOOPED: u64 = 1 << 2;
/// Executable.
pub const EXECUTABLE: u64 = 1 << 4;
/// Readable.
pub const READABLE: u64 = 1 << 5;
/// Writeable.
pub const WRITEABLE: u64 = 1 << 6;
/// Bits 1..=6: what must match for two PTEs to be coalesced into one TLB entry.
pub const PERMISSION_MASK: u64 = 0x7e;
/// First bit of the fragment field.
pub const FRAG_SHIFT: u32 = 7;
/// The 5-bit fragment field, in place.
pub const FRAG_MASK: u64 = 0x1f << FRAG_SHIFT;
/// Largest value the fragment field holds.
pub const FRAG_MAX: u32 = 31;
/// First bit of the PFN field.
pub const PFN_SHIFT: u32 = 12;
/// Width of the PFN field: 36 bits of 4 KB frames = 48-bit physical addresses.
pub const PFN_BITS: u32 = 36;
/// The PFN field, in place.
pub const PFN_MASK: u64 = ((1u64 << PFN_BITS) - 1) << PFN_SHIFT;
/// First bit of the allocation-ID field.
pub const ALLOC_ID_SHIFT: u32 = 48;
/// The 8-bit allocation-ID field, in place.
pub const ALLOC_ID_MASK: u64 = 0xff << ALLOC_ID_SHIFT;
/// Directory entry used as a leaf (huge page).
pub const PDE_AS_PTE: u64 = 1 << 56;

/// Access rights and memory kind of a mapping (the flag bits 1..=6 of a PTE).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PteFlags {
    pub system: bool,
    pub snooped: bool,
    pub executable: bool,
    pub readable: bool,
    pub writeable: bool,
}

impl PteFlags {
    /// GPU-local VRAM, read/write/execute: what the driver maps for a data structure.
    pub const VRAM_RWX: PteFlags = PteFlags {
        system: false,
        snooped: false,
        executable: true,
        readable: true,
        writeable: true,
    };
    /// Host memory reached over the link, snooped, read/write.
    pub const SYSTEM_RW: PteFlags = PteFlags {
        system: true,
        snooped: true,
        executable: false,
        readable: true,
        writeable: true,
    };

    /// The flags as PTE bits (without the valid bit).
    pub const fn bits(self) -> u64 {
        ((self.system as u64) * SYSTEM)
            | ((self.snooped as u64) * SNOOPED)
            | ((self.executable as u64) * EXECUTABLE)
            | ((self.readable as u64) * READABLE)
            | ((self.writeable as u64) * WRITEABLE)
    }
}

/// One 64-bit page-table entry; see the module documentation for the layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Pte(pub u64);

impl Pte {
    /// The all-zero, invalid entry.
    pub const INVALID: Pte = Pte(0);

    /// A valid leaf mapping `pfn` with `flags`, fragment `frag` (masked to 5 bits) and
    /// allocation ID `alloc_id`. A PFN wider than 36 bits is truncated: callers pass frames
    /// of a 48-bit physical address space.
    pub fn leaf(pfn: Pfn, flags: PteFlags, frag: u32, alloc_id: u8) -> Pte {
        debug_assert!(frag <= FRAG_MAX, "fragment {frag} exceeds the 5-bit field");
        debug_assert!(pfn.0 >> PFN_BITS == 0, "PFN {pfn} exceeds 36 bits");
        Pte(VALID
            | flags.bits()
            | ((frag as u64 & 0x1f) << FRAG_SHIFT)
            | ((pfn.0 << PFN_SHIFT) & PFN_MASK)
            | ((alloc_id as u64) << ALLOC_ID_SHIFT))
    }

    /// A valid directory entry pointing at the next-level table held in frame `table`.
    pub fn directory(table: Pfn) -> Pte {
        Pte(VALID | ((table.0 << PFN_SHIFT) & PFN_MASK))
    }

    /// The same entry with the PDE-as-PTE bit set (a directory entry used as a leaf).
    pub fn as_huge_leaf(self) -> Pte {
        Pte(self.0 | PDE_AS_PTE)
    }

    pub fn valid(self) -> bool {
        self.0 & VALID != 0
    }
    pub fn system(self) -> bool {
        self.0 & SYSTEM != 0
    }
    pub fn snooped(self) -> bool {
        self.0 & SNOOPED != 0
    }
    pub fn executable(self) -> bool {
        self.0 & EXECUTABLE != 0
    }
    pub fn readable(self) -> bool {
        self.0 & READABLE != 0
    }
    pub fn writeable(self) -> bool {
        self.0 & WRITEABLE != 0
    }
    /// The fragment field: the entry lies in an aligned contiguous run of `4 KB << frag`.
    pub fn frag(self) -> u32 {
        ((self.0 & FRAG_MASK) >> FRAG_SHIFT) as u32
    }
    /// Bytes of the contiguous run the fragment field announces.
    pub fn frag_bytes(self) -> u64 {
        crate::addr::PAGE_4K << self.frag()
    }
    /// The 4 KB frame number.
    pub fn pfn(self) -> Pfn {
        Pfn((self.0 & PFN_MASK) >> PFN_SHIFT)
    }
    /// Allocation ID (allocation index + 1; 0 = none), ignored by the walker.
    pub fn alloc_id(self) -> u8 {
        ((self.0 & ALLOC_ID_MASK) >> ALLOC_ID_SHIFT) as u8
    }
    /// Directory entry used as a leaf (huge page).
    pub fn pde_as_pte(self) -> bool {
        self.0 & PDE_AS_PTE != 0
    }
    /// Bits 1..=6, in place: system, snooped, (reserved), executable, readable, writeable.
    pub fn permissions(self) -> u64 {
        self.0 & PERMISSION_MASK
    }
    /// Chiplet holding the frame: the physical-address bits just above the 2 MB offset
    /// (CLAP Fig. 4), with `chiplets` a power of two.
    pub fn chiplet(self, chiplets: u32) -> ChipletId {
        self.pfn().chiplet(chiplets)
    }
}

impl core::fmt::Display for Pte {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        if !self.valid() {
            return write!(f, "invalid");
        }
        write!(
            f,
            "pfn={} frag={} perm={:#04x} id={}{}",
            self.pfn(),
            self.frag(),
            self.permissions(),
            self.alloc_id(),
            if self.pde_as_pte() { " pde-as-pte" } else { "" }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_land_in_their_documented_bits() {
        let pte = Pte::leaf(Pfn(0xA_BCDE_F012), PteFlags::VRAM_RWX, 9, 0x5a).as_huge_leaf();
        assert_eq!(pte.0 & 1, 1);
        assert_eq!((pte.0 >> 7) & 0x1f, 9);
        assert_eq!((pte.0 >> 12) & ((1 << 36) - 1), 0xA_BCDE_F012);
        assert_eq!((pte.0 >> 48) & 0xff, 0x5a);
        assert_eq!((pte.0 >> 56) & 1, 1);
        assert_eq!(pte.0 & 0b111_0000, 0b111_0000, "X, R, W in bits 4..=6");
        assert_eq!(pte.frag(), 9);
        assert_eq!(pte.pfn(), Pfn(0xA_BCDE_F012));
        assert_eq!(pte.alloc_id(), 0x5a);
        assert!(pte.pde_as_pte() && pte.executable() && pte.readable() && pte.writeable());
        assert!(!pte.system() && !pte.snooped());
        assert_eq!(pte.frag_bytes(), 2 << 20);
    }

    #[test]
    fn permissions_ignore_frag_pfn_and_alloc_id() {
        let a = Pte::leaf(Pfn(1), PteFlags::VRAM_RWX, 0, 1);
        let b = Pte::leaf(Pfn(99), PteFlags::VRAM_RWX, 4, 7);
        let c = Pte::leaf(Pfn(1), PteFlags::SYSTEM_RW, 0, 1);
        assert_eq!(a.permissions(), b.permissions());
        assert_ne!(a.permissions(), c.permissions());
        assert_eq!(c.permissions(), SYSTEM | SNOOPED | READABLE | WRITEABLE);
    }

    #[test]
    fn chiplet_comes_from_the_bits_above_the_2mb_offset() {
        // Frame 512 * 6 + 17 lies in 2 MB PF block 6: chiplet 6 % 4 = 2 of 4, 6 of 8.
        let pte = Pte::leaf(Pfn(512 * 6 + 17), PteFlags::VRAM_RWX, 0, 0);
        assert_eq!(pte.chiplet(4), ChipletId(2));
        assert_eq!(pte.chiplet(8), ChipletId(6));
    }

    #[test]
    fn directory_entries_are_valid_pointers_not_leaves() {
        let d = Pte::directory(Pfn(0x1234));
        assert!(d.valid() && !d.pde_as_pte());
        assert_eq!(d.pfn(), Pfn(0x1234));
        assert_eq!(d.permissions(), 0);
        assert!(!Pte::INVALID.valid());
    }
}
