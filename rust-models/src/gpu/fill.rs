//! The TLB entry a completed walk installs: its size class, the pages it covers (a
//! fragment, a huge page, or a line merged by the coalescer) and only pages whose
//! mapping had completed when the walker read their PTEs.
//!
//! A region the driver remapped as one fragment (or promoted to a huge page) at the fault
//! of its last page is, until that fault completes, still the pages' earlier PTEs for the
//! walker: a walk that ends before then installs the walked page alone. The PTE line the
//! coalescer merges holds only PTEs whose mapping had completed by the walk's end.
//!
//! The coalescer's PTEs are read from the leaf table page the walk ended in — the PTB's
//! entries as stored, at the walk's end — not rebuilt by translating each page
//! (`docs/pte-layout.md` gives the layout: the 1 MB group's sixteen 64 KB PTEs sit at a
//! 128 B stride in our amdgpu PTB, in one line of a 64 KB-PTE table).
//!
//! The static intermediate sizes (`s128k` … `s1m`) fill a TLB of their own size class
//! with one entry per full page (a run of 64 KB PTEs whose FRAG covers it); a page still
//! partly mapped is its 64 KB pages, one entry each, in the 64 KB TLB.

use super::event_loop::Gpu;
use super::tlb::{SizeClass, TlbFill};
use super::GpuError;
use crate::addr::{Va, PAGE_2M, PAGE_4K, PAGE_64K};
use crate::driver::Translation;
use crate::pagetable::{LeafEntry, Level};

impl Gpu<'_> {
    /// Whether every 4 KB page of the 64 KB page `vpn64` was mapped by cycle `at`.
    fn page64_mapped_by(&self, vpn64: u64, at: u64) -> bool {
        let first = Va(vpn64 * PAGE_64K).vpn();
        self.map_times.latest_in(first, PAGE_64K / PAGE_4K) <= at
    }

    /// The TLB entry for a translation, and the cycles the coalescing logic took (its
    /// PTEs arrive at `walked`, the walk's end, from the PTB entry `leaf` it read).
    pub(super) fn make_fill(
        &mut self,
        va: u64,
        tr: &Translation,
        reach: u64,
        chiplet: u32,
        walked: u64,
        leaf: Option<LeafEntry>,
    ) -> Result<(TlbFill, u64), GpuError> {
        let class = SizeClass::for_reach(reach);
        let group = 1u64 << class.group_shift();
        // The entry may rebuild PAs only across a physically contiguous run.
        let contiguous = tr.pte.frag_bytes().max(tr.leaf_bytes) >= reach.min(group);
        if let Some(fill) = self.static_intermediate_fill(va, tr, reach, contiguous, walked) {
            return Ok((fill, 0));
        }
        let pa_base = contiguous.then(|| tr.pa.0.wrapping_sub(va & (group - 1)));
        let fill = TlbFill::new(class, 1, pa_base, 0);
        if class == SizeClass::M2 {
            let block_pages = PAGE_2M / PAGE_4K;
            let block = Va(va).align_down(PAGE_2M).vpn();
            let block_done = self.map_times.latest_in(block, block_pages) <= walked;
            if contiguous && !block_done {
                // A huge page whose promotion is still in flight: the walked page alone.
                return Ok((self.page_fill(va, tr.pa.0, walked), 0));
            }
            return Ok((fill, 0));
        }
        if class != SizeClass::K64 {
            return Ok((fill, 0));
        }
        let fill = self.fragment_fill(va, reach.min(group), contiguous, walked, fill);
        if !(self.coalescing && tr.leaf_bytes == PAGE_64K && tr.leaf_level == Level::Ptb) {
            return Ok((fill, 0));
        }
        match leaf {
            Some(leaf) => self.coalesced_fill(va, tr, chiplet, walked, leaf, fill),
            None => Ok((fill, 0)),
        }
    }

    /// A 64 KB entry: the 64 KB pages of the fragment (`span` bytes) around `va`, if it is
    /// contiguous and all of it was mapped by `walked`, else the walked 64 KB page alone.
    fn fragment_fill(
        &self,
        va: u64,
        span: u64,
        contiguous: bool,
        walked: u64,
        mut fill: TlbFill,
    ) -> TlbFill {
        let vpn64 = va >> 16;
        let pages = (span / PAGE_64K).max(1) as u32;
        let idx = (vpn64 & 15) as u32;
        let first = idx & !(pages - 1);
        fill.mask = ((((1u32 << pages) - 1) << first) & 0xffff) as u16;
        let group_vpn64 = vpn64 & !15;
        let region_done = (0..16u64)
            .filter(|i| fill.mask & (1 << i) != 0)
            .all(|i| self.page64_mapped_by(group_vpn64 + i, walked));
        if !contiguous || !region_done {
            fill.mask = 1 << idx;
        }
        fill
    }

    /// CLAP's coalescer on a 64 KB entry: the PTE line of the walked 1 MB group goes to the
    /// chiplet's merge unit, whose result widens `fill` if it agrees with the walk.
    fn coalesced_fill(
        &mut self,
        va: u64,
        tr: &Translation,
        chiplet: u32,
        walked: u64,
        leaf: LeafEntry,
        mut fill: TlbFill,
    ) -> Result<(TlbFill, u64), GpuError> {
        let group = 1u64 << fill.class.group_shift();
        let vpn64 = va >> 16;
        let idx = (vpn64 & 15) as u32;
        let group_vpn64 = vpn64 & !15;
        // The PTEs the merge unit sees: one per 64 KB page of the 1 MB group, read from the
        // PTB the walk ended in, each as it was at `walked` (the model writes a fault's
        // PTEs when the driver handles it, so one whose mapping is not yet complete is
        // still invalid for the walker).
        let ptes = self.mm.page_table().group_ptes(leaf);
        // Only 64 KB PTEs (FRAG >= 4) belong in the line: the UVM path maps single 4 KB
        // pages into 64 KB frames, and such a PTE at a 64 KB boundary is not a 64 KB page.
        let line: [u64; 16] = std::array::from_fn(|i| {
            let pte = ptes[i];
            let complete = self.page64_mapped_by(group_vpn64 + i as u64, walked);
            if complete && pte.valid() && pte.frag() >= 4 {
                pte.0
            } else {
                0
            }
        });
        let Some(m) = self.gmmus[chiplet as usize].coalesce(walked, vpn64, &line)? else {
            return Ok((fill, 0));
        };
        let pa_base = m.base_ppn64 << 16;
        let covers = m.base_vpn64 == group_vpn64 && m.mask & (1 << idx) != 0;
        if !covers || pa_base.wrapping_add(va & (group - 1)) != tr.pa.0 {
            self.counters.coalescer_mismatches += 1;
            return Ok((fill, m.cycles));
        }
        self.counters.coalesced_fills += (m.mask & !(1 << idx) != 0) as u64;
        fill.mask = m.mask;
        fill.pa_base = Some(pa_base);
        Ok((fill, m.cycles))
    }

    /// Under `s128k` … `s1m`, the entry of a full static intermediate page: one entry of
    /// its size class covering the page. None for any other translation (a page still
    /// partly mapped, or still being remapped, goes the 64 KB way).
    fn static_intermediate_fill(
        &self,
        va: u64,
        tr: &Translation,
        reach: u64,
        contiguous: bool,
        walked: u64,
    ) -> Option<TlbFill> {
        let bytes = self.mm.policy().static_intermediate_bytes()?;
        let class = SizeClass::intermediate(reach).filter(|_| reach == bytes)?;
        let first = Va(va).align_down(bytes).vpn();
        let remapped = self.map_times.latest_in(first, bytes / PAGE_4K) <= walked;
        if !(contiguous && remapped) {
            return None;
        }
        let base = tr.pa.0.wrapping_sub(va & (bytes - 1));
        Some(TlbFill::new(class, 1, Some(base), 0))
    }

    /// The entry of the walked page alone, as its PTE read before a remap: its 64 KB page
    /// if all of it was mapped by `walked`, else its 4 KB page.
    fn page_fill(&self, va: u64, pa: u64, walked: u64) -> TlbFill {
        if self.page64_mapped_by(va >> 16, walked) {
            let base = pa.wrapping_sub(va & ((1 << 20) - 1));
            TlbFill::new(SizeClass::K64, 1 << ((va >> 16) & 15), Some(base), 0)
        } else {
            TlbFill::new(SizeClass::K4, 1, Some(pa & !0xfff), 0)
        }
    }
}
