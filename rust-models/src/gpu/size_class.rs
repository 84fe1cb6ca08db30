//! The page-size classes of the TLB structures: the three base page sizes and the static
//! intermediate sizes of CLAP's page-size study, with their reach and labels.

/// Page-size class of a TLB structure.
///
/// `K128` … `M1` are the static intermediate page sizes of CLAP's page-size study (Fig. 6:
/// "for each size an extra TLB, 16 entries in L1 and 512 in L2"): a 128 KB … 1 MB page is
/// a run of 64 KB PTEs whose FRAG field covers the run, and its TLB holds the run as one
/// entry of one page (no mask, no coalescer: the page size is static). Only the `s128k` …
/// `s1m` policies fill them; CLAP's intermediate regions live in the 64 KB TLB as masked
/// entries instead (§4.6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
pub enum SizeClass {
    K4 = 0,
    K64 = 1,
    M2 = 2,
    K128 = 3,
    K256 = 4,
    K512 = 5,
    M1 = 6,
}

/// Number of size classes (the TLB arrays per level and the per-class counters).
pub const CLASSES: usize = 7;

impl SizeClass {
    /// All classes, in index order: the paper's three sizes, then the intermediate ones.
    pub const ALL: [SizeClass; CLASSES] = [
        SizeClass::K4,
        SizeClass::K64,
        SizeClass::M2,
        SizeClass::K128,
        SizeClass::K256,
        SizeClass::K512,
        SizeClass::M1,
    ];

    /// The intermediate classes, smallest first.
    pub const INTERMEDIATE: [SizeClass; 4] = [
        SizeClass::K128,
        SizeClass::K256,
        SizeClass::K512,
        SizeClass::M1,
    ];

    /// log2 of the class's page size.
    pub const fn page_shift(self) -> u32 {
        match self {
            SizeClass::K4 => 12,
            SizeClass::K64 => 16,
            SizeClass::K128 => 17,
            SizeClass::K256 => 18,
            SizeClass::K512 => 19,
            SizeClass::M1 => 20,
            SizeClass::M2 => 21,
        }
    }

    /// log2 of the group one entry can cover: sixteen 64 KB pages (1 MB, the coalescer's
    /// reach); a single page for the other classes.
    pub const fn group_shift(self) -> u32 {
        match self {
            SizeClass::K64 => 20,
            c => c.page_shift(),
        }
    }

    /// The class whose TLB caches a translation that reaches `reach_bytes`, among the
    /// paper's three sizes (an intermediate reach goes to the 64 KB TLB as a masked
    /// entry).
    pub fn for_reach(reach_bytes: u64) -> SizeClass {
        if reach_bytes >= 1 << 21 {
            SizeClass::M2
        } else if reach_bytes >= 1 << 16 {
            SizeClass::K64
        } else {
            SizeClass::K4
        }
    }

    /// The intermediate class of exactly `reach_bytes` (128 KB … 1 MB), if it is one.
    pub fn intermediate(reach_bytes: u64) -> Option<SizeClass> {
        SizeClass::INTERMEDIATE
            .into_iter()
            .find(|c| 1u64 << c.page_shift() == reach_bytes)
    }

    /// Short label (`4K`, `64K`, `2M`, `128K` …).
    pub fn label(self) -> &'static str {
        match self {
            SizeClass::K4 => "4K",
            SizeClass::K64 => "64K",
            SizeClass::K128 => "128K",
            SizeClass::K256 => "256K",
            SizeClass::K512 => "512K",
            SizeClass::M1 => "1M",
            SizeClass::M2 => "2M",
        }
    }
}
