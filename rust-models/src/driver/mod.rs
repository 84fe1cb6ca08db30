//! The GPU driver's memory manager (CLAP §4.1–4.5): where every page of every data
//! structure goes, at which size, and how the page table says so.
//!
//! Mechanisms, all modelled:
//! - **Blocks** (§4.1). VA space and physical memory are cut into 2 MB VA blocks and PF
//!   blocks. Each VA block gets one [`BlockMode`] on first touch; each PF block is split
//!   into frames of one size, on free lists per chiplet, frame size and structure
//!   ([`phys`]).
//! - **Reservation.** A region (64 KB … 2 MB) gets a contiguous, aligned frame on its first
//!   toucher's chiplet; its 64 KB pages are mapped into it on demand; when the region is
//!   full it is remapped in one call, so amdgpu's fragment logic writes FRAG = region (and a
//!   full 2 MB region becomes a PDE-as-PTE huge page: promotion).
//! - **OLP** (§4.2). A 2 MB reservation kept while one chiplet touches the block, released
//!   (unused 64 KB frames back to the free list) when another chiplet touches it; disabled
//!   for a structure once more than 5 % of its VA blocks released.
//! - **PMM + MMA** (§4.2, §4.4). CLAP maps a structure with 64 KB pages (and OLP) until
//!   20 % of it is mapped, then drains the Remote Trackers, scores the locality tree of each
//!   fully mapped VA block, lowers the threshold by the remote ratio (Eq. 4), and applies the
//!   dominant level's size to the rest of the structure (§4.5). With fewer fully mapped
//!   VA blocks than `mma_min_full_blocks` (1) — a small structure, or a sample spread over
//!   too many blocks — CLAP falls back to OLP ([`table4`]).
//! - **Chiplet full** (§4.7): frames come from the emptiest other chiplet. **GPU full**: the
//!   least recently mapped VA block migrates to host ([`MemoryManager::evict_block`]).
//!
//! Policies ([`PolicyKind`]) are one trait ([`policy::Policy`]) chosen by name.

mod analysis;
mod evict;
mod manager;
mod migrate;
pub mod mma;
pub mod phys;
pub mod policy;
mod pt_home;
mod state;
pub mod table4;
mod uvm_map;

pub use evict::FrameAuditError;
pub use manager::MemoryManager;
pub use policy::{BlockMode, Policy};
pub use table4::{HugeBlocks, MmaFallback};

use crate::addr::{ChipletId, Pa, Va};
use crate::pagetable::{Level, PageTableError};
use crate::pte::Pte;
use crate::workload::AllocIndex;
use serde::{Deserialize, Serialize};

/// The placement policies of the CLAP study.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum PolicyKind {
    /// Static 4 KB pages, first-touch placement per page.
    S4k,
    /// Static 64 KB pages, first-touch placement per page.
    S64k,
    /// Static 2 MB pages: a 2 MB reservation on first touch, 64 KB sub-pages on demand,
    /// promoted to a real 2 MB page when full (the paper's baseline paging, §3.1).
    S2m,
    /// Opportunistic large pages alone, for every structure, all run long.
    Olp,
    /// CLAP: PMM with OLP, MMA, the chosen size for the rest.
    Clap,
    /// 64 KB placement with 2 MB translation cost (an upper bound).
    Ideal,
    /// S-64KB with CLAP's TLB coalescing hardware (§4.6): what the coalescer alone buys,
    /// without CLAP's placement.
    S64kCoal,
    /// Static 128 KB pages (CLAP Fig. 6): a 128 KB reservation on first touch, 64 KB
    /// sub-pages on demand, remapped as one 128 KB fragment when full, which its own
    /// TLB (L1 16, L2 512 entries) then holds as one entry. No coalescer.
    S128k,
    /// Static 256 KB pages, as `s128k`.
    S256k,
    /// Static 512 KB pages, as `s128k`.
    S512k,
    /// Static 1 MB pages, as `s128k`.
    S1m,
    /// MGvm-style page-table placement (MICRO 2022, CLAP's baseline [87]) over S-64KB
    /// data placement: each leaf page-table page lives on the chiplet holding most of the
    /// data it maps (re-homed as its pages are mapped), not on its first toucher.
    Mgvm,
    /// Ideal C-NUMA (Carrefour-style, CLAP §3.5 and §5): S-64KB first-touch placement, then
    /// reactive migration of each 64 KB page to the chiplet that accessed it most in the
    /// last epoch, with zero-cost migration and TLB shootdown (`gpu/cnuma.rs`).
    Cnuma,
}

impl PolicyKind {
    /// Every policy, in the order of the paper's figures.
    pub const ALL: [PolicyKind; 13] = [
        PolicyKind::S4k,
        PolicyKind::S64k,
        PolicyKind::S2m,
        PolicyKind::Olp,
        PolicyKind::Clap,
        PolicyKind::Ideal,
        PolicyKind::S64kCoal,
        PolicyKind::S128k,
        PolicyKind::S256k,
        PolicyKind::S512k,
        PolicyKind::S1m,
        PolicyKind::Mgvm,
        PolicyKind::Cnuma,
    ];
    /// The command-line names, comma-separated (for messages).
    pub const NAMES: &'static str =
        "s4k, s64k, s2m, olp, clap, ideal, s64k-coal, s128k, s256k, s512k, s1m, mgvm, cnuma";
    /// Command-line name.
    pub const fn name(self) -> &'static str {
        match self {
            PolicyKind::S4k => "s4k",
            PolicyKind::S64k => "s64k",
            PolicyKind::S2m => "s2m",
            PolicyKind::Olp => "olp",
            PolicyKind::Clap => "clap",
            PolicyKind::Ideal => "ideal",
            PolicyKind::S64kCoal => "s64k-coal",
            PolicyKind::S128k => "s128k",
            PolicyKind::S256k => "s256k",
            PolicyKind::S512k => "s512k",
            PolicyKind::S1m => "s1m",
            PolicyKind::Mgvm => "mgvm",
            PolicyKind::Cnuma => "cnuma",
        }
    }
    /// The static intermediate page size of `s128k` … `s1m`, in bytes (None otherwise).
    /// Its full pages are translated by a TLB of their own size class (CLAP Fig. 6), not
    /// by the 64 KB TLB's masked entries as CLAP's regions are.
    pub const fn static_intermediate_bytes(self) -> Option<u64> {
        match self {
            PolicyKind::S128k => Some(128 << 10),
            PolicyKind::S256k => Some(256 << 10),
            PolicyKind::S512k => Some(512 << 10),
            PolicyKind::S1m => Some(1 << 20),
            _ => None,
        }
    }
    /// Where leaf page-table pages live: on the chiplet holding most of the data they map
    /// (`mgvm`), or on the chiplet whose fault created them (every other policy).
    pub const fn ptes_follow_data(self) -> bool {
        matches!(self, PolicyKind::Mgvm)
    }
    /// Whether the GPU's TLB coalescing hardware is in use (CLAP §4.6): the GMMU's
    /// coalescer merges each 64 KB leaf's PTE line into one entry, and a TLB widens an
    /// entry of the same group and VA-to-PA offset instead of taking another way. It is
    /// CLAP's hardware, so the paper's baselines (S-4KB, S-64KB, S-2MB, OLP) and `ideal`
    /// run without it; `s64k-coal` adds it to S-64KB.
    pub const fn tlb_coalescing(self) -> bool {
        matches!(self, PolicyKind::Clap | PolicyKind::S64kCoal)
    }
    /// Whether the driver drains the Remote Trackers (CLAP §4.3): CLAP's MMA reads each
    /// structure's remote-access ratio from them when its PMM phase ends.
    pub const fn drains_remote_tracker(self) -> bool {
        matches!(self, PolicyKind::Clap)
    }
}

impl core::fmt::Display for PolicyKind {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.name())
    }
}

impl core::str::FromStr for PolicyKind {
    type Err = DriverError;
    fn from_str(s: &str) -> Result<Self, DriverError> {
        PolicyKind::ALL
            .into_iter()
            .find(|p| p.name() == s)
            .ok_or_else(|| DriverError::UnknownPolicy(s.to_string()))
    }
}

/// Driver parameters. Defaults are the paper's (CLAP §4.2–4.4).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DriverConfig {
    /// Chiplets (a power of two: the chiplet is read from PA bits above 2 MB).
    pub chiplets: u32,
    /// GPU memory per chiplet in 4 KB frames (a multiple of 512: whole 2 MB PF blocks).
    pub frames_per_chiplet: u64,
    /// PMM ends for a structure when this fraction of it is mapped (0.20).
    pub pmm_fraction: f64,
    /// OLP is disabled for a structure once more than this fraction of its VA blocks
    /// released their reservation (0.05).
    pub olp_disable_fraction: f64,
    /// MMA's locality threshold before the Remote Tracker lowers it (1.0).
    pub mma_threshold: f64,
    /// Eq. 4 scaling parameter `k` (1).
    pub rt_k: f64,
    /// Eq. 4 target remote ratio (0).
    pub ratio_target: f64,
    /// MMA runs only with at least this many fully mapped 2 MB VA blocks at the end of
    /// PMM; with fewer, CLAP falls back to OLP (§4.5). The paper gives no count: 1 is its
    /// "no VA block fully mapped" case, and at the 20 % PMM threshold it also covers its
    /// "small allocations (typically under 10 MB)", whose 20 % fills no 2 MB block.
    pub mma_min_full_blocks: u32,
    /// amdgpu fragment cap for mappings (31 on modern GPUs).
    pub max_frag: u32,
    /// Virtual address of the first allocation (2 MB aligned).
    pub va_base: u64,
    /// When no chiplet has a free frame, migrate the least recently mapped VA block to
    /// host and retry (CLAP §4.7); otherwise the fault fails with `OutOfMemory`.
    pub evict_when_full: bool,
}

impl Default for DriverConfig {
    fn default() -> Self {
        DriverConfig {
            chiplets: 4,
            // 8 GB per chiplet.
            frames_per_chiplet: 2 << 20,
            pmm_fraction: 0.20,
            olp_disable_fraction: 0.05,
            mma_threshold: 1.0,
            rt_k: 1.0,
            ratio_target: 0.0,
            mma_min_full_blocks: 1,
            max_frag: crate::pte::FRAG_MAX,
            va_base: 1 << 32,
            evict_when_full: true,
        }
    }
}

/// Why the driver refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DriverError {
    #[error("driver config key `{key}`: {message}")]
    Config { key: &'static str, message: String },
    #[error("unknown policy `{0}` (valid: {names})", names = PolicyKind::NAMES)]
    UnknownPolicy(String),
    #[error("virtual address {0} lies in no allocation")]
    Unallocated(Va),
    #[error("GPU memory exhausted: no chiplet has a free frame")]
    OutOfMemory,
    #[error("the allocations ({0} bytes) do not fit the 48-bit virtual address space")]
    VaSpace(u64),
    #[error("page table: {0}")]
    PageTable(#[from] PageTableError),
    /// The UVM path asked for a mapping the manager cannot make (a bug in the caller).
    #[error("UVM mapping: {0}")]
    UvmMapping(String),
}

/// What one TLB entry / page walk for a VA looks like.
///
/// The data location of any VA is always `translate(va).pa`; `tlb_reach_bytes` is timing
/// only: the VA span one TLB entry may cover (pick the TLB array by it), and `leaf_level`
/// is where the walk ends (PDB0 = a 3-read walk).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Translation {
    pub pa: Pa,
    /// Chiplet holding the data (from the PFN).
    pub chiplet: ChipletId,
    /// Allocation ID from the PTE (allocation index + 1; 0 = none).
    pub alloc_id: u8,
    /// Size of the mapped page: 4 KB, 64 KB (FRAG >= 4 at the PTB) or the huge-page size.
    pub leaf_bytes: u64,
    /// VA span one TLB entry covers: the fragment (an intermediate region once full,
    /// 2 MB for a huge page), or 2 MB for `ideal`.
    pub tlb_reach_bytes: u64,
    pub pte: Pte,
    pub leaf_level: Level,
}

/// The Remote Trackers as the driver sees them. The GPU model implements it over the
/// per-chiplet RT twins' drain port, summing (access, remote) over chiplets; draining
/// clears the entries.
pub trait RtDrain {
    /// `(accesses, remote accesses)` counted for `alloc_id` since the last drain.
    fn drain(&mut self, alloc_id: u8) -> (u64, u64);
}

/// An `RtDrain` that has seen nothing (for tools and tests without a GPU).
#[derive(Debug, Clone, Copy, Default)]
pub struct NoRemoteTrackers;

impl RtDrain for NoRemoteTrackers {
    fn drain(&mut self, _alloc_id: u8) -> (u64, u64) {
        (0, 0)
    }
}

/// One VA block migrated to host to make room.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Eviction {
    /// First VA of the 2 MB block; shoot down `va .. va + 2 MB`.
    pub va: Va,
    /// Bytes that were mapped in it.
    pub bytes: u64,
}

/// The result of an MMA run for one structure (or why it fell back to OLP).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MmaReport {
    pub alloc: AllocIndex,
    /// Remote Tracker counters drained for the structure.
    pub rt_access: u64,
    pub rt_remote: u64,
    pub rt_ratio: f64,
    /// Eq. 4 threshold used.
    pub threshold: f64,
    /// Fully mapped VA blocks analysed.
    pub blocks_analysed: u32,
    /// VA blocks of the structure with a mapped 64 KB page when PMM ended.
    pub blocks_touched: u32,
    /// Fully mapped VA blocks MMA needs (`mma_min_full_blocks`).
    pub blocks_needed: u32,
    /// Blocks per chosen level (0 = 64 KB … 5 = 2 MB).
    pub level_histogram: [u32; 6],
    /// Region size applied to the rest of the structure; `None` = OLP fallback.
    pub chosen_bytes: Option<u64>,
    /// Why OLP was kept instead, if it was.
    pub fallback: Option<MmaFallback>,
}

/// What a fault did.
#[derive(Debug, Clone, PartialEq)]
pub struct FaultOutcome {
    /// First VA newly mapped and its bytes (0 if the page was already mapped).
    pub va: Va,
    pub bytes: u64,
    /// Chiplet the page was placed on.
    pub chiplet: ChipletId,
    /// A region filled and was remapped as one fragment (a 2 MB one is a huge page).
    pub promoted: bool,
    /// An OLP reservation was released by this fault.
    pub olp_released: bool,
    /// MMA (or its OLP fallback) ran for the structure: its PMM phase ended here.
    pub analysis: Option<MmaReport>,
    /// Blocks migrated to host to make room (shoot their TLB entries down).
    pub evicted: Vec<Eviction>,
}

/// Per-structure driver statistics.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AllocStats {
    pub name: String,
    pub bytes: u64,
    pub mapped_bytes: u64,
    /// The page size / placement applied: "4KB", "64KB" … "2MB", or "OLP".
    pub placement: String,
    /// What happened, for Table 4: `128KB (MMA)`, `OLP (fallback: small structure): 2MB`,
    /// `OLP disabled: 64KB`, `64KB` ([`table4::Table4`]).
    pub table4: String,
    /// Its VA blocks touched and, of them, mapped as one 2 MB page (what OLP or S-2MB
    /// made of them).
    pub blocks: HugeBlocks,
    /// Region bytes applied (the OLP reservation size, 2 MB, for "OLP").
    pub page_bytes: u64,
    /// The PMM phase ended (CLAP) and at which fault count.
    pub pmm_end_fault: Option<u64>,
    pub olp_releases: u64,
    pub olp_disabled: bool,
    /// Remote ratio estimated by the Remote Trackers when MMA drained them.
    pub rt_ratio: Option<f64>,
    pub mma: Option<MmaReport>,
}

/// Driver-wide statistics.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DriverStats {
    pub policy: &'static str,
    pub faults: u64,
    /// 2 MB PF blocks not free (data, reservations and page-table pages).
    pub pf_blocks_used: u64,
    /// 4 KB page-table pages.
    pub pt_pages: u64,
    pub free_frames: u64,
    pub promotions: u64,
    pub olp_releases: u64,
    pub evictions: u64,
    /// Faults whose frame came from another chiplet because the toucher's was full.
    pub chiplet_fallbacks: u64,
    /// Leaf page-table pages moved to the chiplet holding most of their data (`mgvm`).
    pub pt_rehomes: u64,
    /// 64 KB pages migrated to the chiplet that accessed them most (`cnuma`).
    pub migrations: u64,
    pub allocs: Vec<AllocStats>,
}

/// Allocation ID of allocation `a`: index + 1 in 8 bits; 0 (untracked) past 254.
pub fn alloc_id(a: AllocIndex) -> u8 {
    if a < 255 {
        a as u8 + 1
    } else {
        0
    }
}
