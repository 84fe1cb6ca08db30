//! Address and time newtypes. A number's unit is in its type: a byte address (`Va`, `Pa`),
//! a 4 KB page number (`Vpn`, `Pfn`), a chiplet, a cycle. Conversions say what they do.

use serde::{Deserialize, Serialize};

/// Base page: 4 KB.
pub const PAGE_SHIFT: u32 = 12;
pub const PAGE_4K: u64 = 1 << 12;
pub const PAGE_64K: u64 = 1 << 16;
pub const PAGE_2M: u64 = 1 << 21;
pub const PAGE_1G: u64 = 1 << 30;
/// Physical addresses interleave chiplets at 2 MB (CLAP Fig. 4): the chiplet of a frame is
/// taken from the address bits just above the 2 MB offset.
pub const CHIPLET_INTERLEAVE_SHIFT: u32 = 21;

macro_rules! newtype {
    ($(#[$m:meta])* $name:ident($t:ty)) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize)]
        pub struct $name(pub $t);
        impl core::fmt::Display for $name {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                write!(f, "{:#x}", self.0)
            }
        }
    };
}

newtype!(
    /// Virtual byte address.
    Va(u64)
);
newtype!(
    /// Physical byte address.
    Pa(u64)
);
newtype!(
    /// Virtual page number in 4 KB pages.
    Vpn(u64)
);
newtype!(
    /// Physical frame number in 4 KB frames.
    Pfn(u64)
);

/// A chiplet of the MCM GPU.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize,
)]
pub struct ChipletId(pub u8);

/// A GPU core-clock cycle count.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize,
)]
pub struct Cycle(pub u64);

impl Va {
    pub fn vpn(self) -> Vpn {
        Vpn(self.0 >> PAGE_SHIFT)
    }
    pub fn offset_in(self, page_bytes: u64) -> u64 {
        self.0 & (page_bytes - 1)
    }
    pub fn align_down(self, bytes: u64) -> Va {
        Va(self.0 & !(bytes - 1))
    }
}

impl Pa {
    pub fn pfn(self) -> Pfn {
        Pfn(self.0 >> PAGE_SHIFT)
    }
    /// Chiplet holding this address, with `chiplets` a power of two.
    pub fn chiplet(self, chiplets: u32) -> ChipletId {
        debug_assert!(chiplets.is_power_of_two());
        ChipletId(((self.0 >> CHIPLET_INTERLEAVE_SHIFT) & (chiplets as u64 - 1)) as u8)
    }
}

impl Vpn {
    pub fn va(self) -> Va {
        Va(self.0 << PAGE_SHIFT)
    }
}

impl Pfn {
    pub fn pa(self) -> Pa {
        Pa(self.0 << PAGE_SHIFT)
    }
    /// Chiplet of the frame: the PA bits just above the 2 MB offset.
    pub fn chiplet(self, chiplets: u32) -> ChipletId {
        self.pa().chiplet(chiplets)
    }
}

impl core::ops::Add<u64> for Cycle {
    type Output = Cycle;
    fn add(self, rhs: u64) -> Cycle {
        Cycle(self.0 + rhs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_2mb_frame_block_belongs_to_one_chiplet() {
        for block in 0..16u64 {
            let first = Pfn(block * 512).chiplet(4);
            let last = Pfn(block * 512 + 511).chiplet(4);
            assert_eq!(first, last);
            assert_eq!(first, ChipletId((block % 4) as u8));
        }
    }
}
