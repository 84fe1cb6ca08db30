//! The memory manager: VA layout, per-block state, fault handling and translation.

use super::mma::{LocalityTree, BLOCK_LEAVES};
use super::phys::{PhysMem, BLOCK_FRAMES, LOG_2M};
use super::policy::{BlockMode, Phase, Policy};
use super::state::{
    all_bits, bit, set_bits, validate, AllocState, Counters, Reservation, TableFrames, VaBlock,
};
use super::{alloc_id, DriverConfig, DriverError, FaultOutcome, PolicyKind, RtDrain, Translation};
use crate::addr::{ChipletId, Pa, Pfn, Va, Vpn, PAGE_2M, PAGE_4K, PAGE_64K};
use crate::pagetable::{Level, MapOpts, MapTarget, PageTable, PageTableError};
use crate::pte::PteFlags;
use crate::workload::{AllocIndex, Allocation};
use std::collections::BTreeMap;

/// The driver's memory manager. See the module documentation of [`crate::driver`].
pub struct MemoryManager {
    pub(super) cfg: DriverConfig,
    pub(super) policy: Box<dyn Policy>,
    pub(super) pt: PageTable,
    pub(super) phys: PhysMem,
    pub(super) allocs: Vec<AllocState>,
    pub(super) blocks: Vec<VaBlock>,
    /// Mapped blocks by the sequence number of their last mapping.
    pub(super) lru: BTreeMap<u64, u32>,
    pub(super) seq: u64,
    pub(super) n: Counters,
    /// Runs of 4 KB pages mapped since the last [`MemoryManager::take_new_mappings`]
    /// (first VPN, pages); kept only once [`MemoryManager::log_new_mappings`] asked.
    pub(super) new_mappings: Option<Vec<(Vpn, u64)>>,
}

impl MemoryManager {
    /// A manager for `allocs` under `policy`; lays the allocations out from `cfg.va_base`,
    /// each starting on a 2 MB boundary.
    pub fn new(
        cfg: DriverConfig,
        policy: PolicyKind,
        allocs: &[Allocation],
    ) -> Result<Self, DriverError> {
        validate(&cfg)?;
        let mut phys = PhysMem::new(cfg.chiplets, cfg.frames_per_chiplet / BLOCK_FRAMES);
        let pt = PageTable::new(&mut TableFrames {
            phys: &mut phys,
            chiplet: ChipletId(0),
        })?;
        let policy = policy.build();
        let mut states = Vec::with_capacity(allocs.len());
        let mut blocks = Vec::new();
        for (i, a) in allocs.iter().enumerate() {
            let n = a.bytes.div_ceil(PAGE_2M) as u32;
            states.push(AllocState {
                name: a.name.clone(),
                bytes: a.bytes,
                first_block: blocks.len() as u32,
                blocks: n,
                mapped_bytes: 0,
                phase: policy.initial_phase(),
                olp_releases: 0,
                olp_disabled: false,
                pmm_end_fault: None,
                mma: None,
            });
            for _ in 0..n {
                blocks.push(VaBlock {
                    alloc: i as AllocIndex,
                    mode: None,
                    mapped: [0; 8],
                    mapped_pages: 0,
                    reservations: Vec::new(),
                    tree: None,
                    seq: 0,
                });
            }
        }
        let span = blocks.len() as u64 * PAGE_2M;
        if cfg.va_base.checked_add(span).is_none_or(|e| e > 1u64 << 48) {
            return Err(DriverError::VaSpace(span));
        }
        Ok(MemoryManager {
            cfg,
            policy,
            pt,
            phys,
            allocs: states,
            blocks,
            lru: BTreeMap::new(),
            seq: 0,
            n: Counters::default(),
            new_mappings: None,
        })
    }

    /// 2 MB-aligned base VA of allocation `a` (panics if `a` is not an allocation index).
    pub fn alloc_base(&self, a: AllocIndex) -> Va {
        Va(self.cfg.va_base + self.allocs[a as usize].first_block as u64 * PAGE_2M)
    }
    /// The allocation holding `va`, if any (padding up to the 2 MB boundary included).
    pub fn alloc_of(&self, va: Va) -> Option<AllocIndex> {
        self.block_index(va).map(|b| self.blocks[b].alloc)
    }
    pub fn policy(&self) -> PolicyKind {
        self.policy.kind()
    }
    /// The VA span the allocations occupy: its first address and its bytes (whole 2 MB
    /// VA blocks).
    pub fn va_span(&self) -> (Va, u64) {
        (Va(self.cfg.va_base), self.blocks.len() as u64 * PAGE_2M)
    }
    /// From now on, remember every run of pages newly mapped (by a fault or a UVM
    /// migration) until [`MemoryManager::take_new_mappings`] takes them: the GPU model
    /// stamps them with the cycle their mapping completes. Remaps of mapped pages (a
    /// region's fragment, a promotion) are not new mappings.
    pub fn log_new_mappings(&mut self) {
        self.new_mappings.get_or_insert_with(Vec::new);
    }
    /// The runs `(first VPN, pages)` mapped since the last call, appended to `out` (none
    /// unless [`MemoryManager::log_new_mappings`] was called).
    pub fn take_new_mappings(&mut self, out: &mut Vec<(Vpn, u64)>) {
        if let Some(log) = self.new_mappings.as_mut() {
            out.append(log);
        }
    }
    /// Note a run of newly mapped pages (if logging).
    pub(super) fn note_mapped(&mut self, first: u64, pages: u64) {
        if let Some(log) = self.new_mappings.as_mut() {
            log.push((Vpn(first), pages));
        }
    }
    pub fn config(&self) -> &DriverConfig {
        &self.cfg
    }
    pub fn page_table(&self) -> &PageTable {
        &self.pt
    }
    /// The mode of the VA block holding `va` (None: untouched or not allocated).
    pub fn block_mode(&self, va: Va) -> Option<BlockMode> {
        self.block_index(va).and_then(|b| self.blocks[b].mode)
    }
    /// Free 4 KB frames on `chiplet`.
    pub fn free_frames_on(&self, chiplet: ChipletId) -> u64 {
        self.phys.free_frames_on(chiplet)
    }

    pub(super) fn block_index(&self, va: Va) -> Option<usize> {
        let off = va.0.checked_sub(self.cfg.va_base)?;
        let b = (off / PAGE_2M) as usize;
        (b < self.blocks.len()).then_some(b)
    }
    pub(super) fn block_first_vpn(&self, b: usize) -> u64 {
        Va(self.cfg.va_base).vpn().0 + b as u64 * BLOCK_FRAMES
    }

    /// Translation of `va`, or None if unmapped (the GPU faults).
    #[inline]
    pub fn translate(&self, va: Va) -> Option<Translation> {
        let vpn = va.vpn();
        let leaf = self.pt.lookup(vpn)?;
        let pfn = leaf.pfn_of(vpn);
        let pte = leaf.pte;
        let leaf_bytes = match leaf.level {
            Level::Ptb if pte.frag() >= 4 => PAGE_64K,
            Level::Ptb => PAGE_4K,
            l => l.entry_bytes(),
        };
        let mut t = Translation {
            pa: Pa(pfn.pa().0 | (va.0 & (PAGE_4K - 1))),
            chiplet: pfn.chiplet(self.cfg.chiplets),
            alloc_id: pte.alloc_id(),
            leaf_bytes,
            tlb_reach_bytes: leaf_bytes.max(pte.frag_bytes()),
            pte,
            leaf_level: leaf.level,
        };
        self.policy.adjust_translation(&mut t);
        Some(t)
    }

    /// First touch of `va` from `chiplet`: map it per the policy. May drain the Remote
    /// Trackers through `rt` (end of a structure's PMM phase) and, with
    /// `evict_when_full`, migrate least recently mapped blocks to host to make room.
    pub fn handle_fault(
        &mut self,
        va: Va,
        chiplet: ChipletId,
        rt: &mut dyn RtDrain,
    ) -> Result<FaultOutcome, DriverError> {
        let b = self.block_index(va).ok_or(DriverError::Unallocated(va))?;
        let mut out = FaultOutcome {
            va,
            bytes: 0,
            chiplet,
            promoted: false,
            olp_released: false,
            analysis: None,
            evicted: Vec::new(),
        };
        if chiplet.0 as u32 >= self.cfg.chiplets {
            return Err(DriverError::Config {
                key: "chiplets",
                message: format!("fault from chiplet {} of {}", chiplet.0, self.cfg.chiplets),
            });
        }
        if self.pt.lookup(va.vpn()).is_some() {
            return Ok(out);
        }
        self.n.faults += 1;
        loop {
            match self.place(b, va.vpn().0, chiplet, &mut out) {
                Err(DriverError::OutOfMemory) if self.cfg.evict_when_full => {
                    match self.evict_lru(Some(b)) {
                        Some(ev) => out.evicted.push(ev),
                        None => return Err(DriverError::OutOfMemory),
                    }
                }
                r => break r?,
            }
        }
        let a = self.blocks[b].alloc as usize;
        let st = &self.allocs[a];
        if st.phase == Phase::Pmm
            && st.mapped_bytes as f64 >= self.cfg.pmm_fraction * st.bytes as f64
        {
            out.analysis = Some(self.run_mma(a, rt));
        }
        Ok(out)
    }

    /// Map the page holding `vpn` in block `b`. On `OutOfMemory` nothing changed.
    fn place(
        &mut self,
        b: usize,
        vpn: u64,
        chiplet: ChipletId,
        out: &mut FaultOutcome,
    ) -> Result<(), DriverError> {
        let mode = match self.blocks[b].mode {
            Some(m) => m,
            None => {
                let a = self.blocks[b].alloc as usize;
                let m = self.policy.block_mode(self.allocs[a].view());
                self.blocks[b].mode = Some(m);
                m
            }
        };
        match mode {
            BlockMode::Fixed {
                page_log,
                region_log,
            } => self.place_fixed(b, vpn, chiplet, page_log, region_log, out),
            BlockMode::Opportunistic => self.place_olp(b, vpn, chiplet, out),
        }
    }

    fn place_fixed(
        &mut self,
        b: usize,
        vpn: u64,
        chiplet: ChipletId,
        page_log: u8,
        region_log: u8,
        out: &mut FaultOutcome,
    ) -> Result<(), DriverError> {
        let owner = self.blocks[b].alloc;
        let page_first = vpn & !((1u64 << page_log) - 1);
        if region_log <= page_log {
            let pfn = self.alloc_frame(chiplet, page_log, owner)?;
            if let Err(e) = self.map_pages(b, page_first, page_log, pfn, chiplet, out) {
                self.phys.free(pfn, page_log);
                return Err(e);
            }
            return Ok(());
        }
        let bf = self.block_first_vpn(b);
        let region_first = page_first & !((1u64 << region_log) - 1);
        let r = ((region_first - bf) >> region_log) as usize;
        let regions = (BLOCK_FRAMES >> region_log) as usize;
        if self.blocks[b].reservations.len() != regions {
            self.blocks[b].reservations = vec![None; regions];
        }
        let (res, fresh) = match self.blocks[b].reservations[r] {
            Some(res) => (res, false),
            None => {
                let pfn = self.alloc_frame(chiplet, region_log, owner)?;
                let res = Reservation {
                    pfn,
                    toucher: chiplet,
                };
                self.blocks[b].reservations[r] = Some(res);
                (res, true)
            }
        };
        let pfn = Pfn(res.pfn.0 + (page_first - region_first));
        if let Err(e) = self.map_pages(b, page_first, page_log, pfn, chiplet, out) {
            if fresh {
                self.blocks[b].reservations[r] = None;
                self.phys.free(res.pfn, region_log);
            }
            return Err(e);
        }
        if all_bits(&self.blocks[b].mapped, region_first - bf, 1 << region_log) {
            self.remap_region(b, region_first, region_log, res.pfn, chiplet)?;
            out.promoted = true;
        }
        Ok(())
    }

    fn place_olp(
        &mut self,
        b: usize,
        vpn: u64,
        chiplet: ChipletId,
        out: &mut FaultOutcome,
    ) -> Result<(), DriverError> {
        let bf = self.block_first_vpn(b);
        let page_first = vpn & !15;
        match self.blocks[b].reservations.first().copied().flatten() {
            Some(res) if res.toucher == chiplet => {
                let pfn = Pfn(res.pfn.0 + (page_first - bf));
                self.map_pages(b, page_first, 4, pfn, chiplet, out)?;
                if self.blocks[b].mapped_pages as u64 == BLOCK_FRAMES {
                    self.remap_region(b, bf, LOG_2M, res.pfn, chiplet)?;
                    out.promoted = true;
                }
                Ok(())
            }
            Some(res) => {
                self.release_olp(b, res);
                out.olp_released = true;
                self.place_fixed(b, vpn, chiplet, 4, 4, out)
            }
            None => {
                let a = self.blocks[b].alloc;
                if self.blocks[b].mapped_pages == 0 && !self.allocs[a as usize].olp_disabled {
                    // No fallback chiplet: a reservation elsewhere would defeat its purpose.
                    if let Some(pfn) = self.phys.alloc(chiplet, LOG_2M, a) {
                        self.blocks[b].reservations = vec![Some(Reservation {
                            pfn,
                            toucher: chiplet,
                        })];
                        let page = Pfn(pfn.0 + (page_first - bf));
                        if let Err(e) = self.map_pages(b, page_first, 4, page, chiplet, out) {
                            self.blocks[b].reservations.clear();
                            self.phys.free(pfn, LOG_2M);
                            return Err(e);
                        }
                        return Ok(());
                    }
                }
                self.blocks[b].mode = Some(BlockMode::PAGES_64K);
                self.place_fixed(b, vpn, chiplet, 4, 4, out)
            }
        }
    }

    /// OLP release: unused 64 KB frames of the reservation go back to the free list; the
    /// block continues with plain 64 KB pages.
    fn release_olp(&mut self, b: usize, res: Reservation) {
        let used: Vec<bool> = (0..BLOCK_LEAVES as u64)
            .map(|i| bit(&self.blocks[b].mapped, i * 16))
            .collect();
        self.phys.split_whole(res.pfn, 4, &used);
        let blk = &mut self.blocks[b];
        blk.reservations.clear();
        blk.mode = Some(BlockMode::PAGES_64K);
        let st = &mut self.allocs[blk.alloc as usize];
        st.olp_releases += 1;
        self.n.olp_releases += 1;
        if st.olp_releases as f64 > self.cfg.olp_disable_fraction * st.blocks as f64 {
            st.olp_disabled = true;
        }
    }

    fn alloc_frame(&mut self, chiplet: ChipletId, log: u8, owner: u16) -> Result<Pfn, DriverError> {
        if let Some(p) = self.phys.alloc(chiplet, log, owner) {
            return Ok(p);
        }
        let p = self
            .phys
            .alloc_near(chiplet, log, owner)
            .ok_or(DriverError::OutOfMemory)?;
        self.n.fallbacks += 1;
        Ok(p)
    }

    pub(super) fn map_opts(&self, b: usize) -> MapOpts {
        MapOpts {
            max_frag: self.cfg.max_frag,
            no_huge: false,
            flags: PteFlags::VRAM_RWX,
            alloc_id: alloc_id(self.blocks[b].alloc),
        }
    }

    /// Map `2^page_log` pages at `first` to `pfn` and account for them.
    fn map_pages(
        &mut self,
        b: usize,
        first: u64,
        page_log: u8,
        pfn: Pfn,
        toucher: ChipletId,
        out: &mut FaultOutcome,
    ) -> Result<(), DriverError> {
        let opts = self.map_opts(b);
        let pages = 1u64 << page_log;
        let mut src = TableFrames {
            phys: &mut self.phys,
            chiplet: toucher,
        };
        self.pt
            .map(Vpn(first), pages, MapTarget::Frames(pfn), &opts, &mut src)
            .map_err(|e| match e {
                PageTableError::OutOfTablePages => DriverError::OutOfMemory,
                e => DriverError::PageTable(e),
            })?;
        let bf = self.block_first_vpn(b);
        let chiplets = self.cfg.chiplets;
        let placed = pfn.chiplet(chiplets);
        let blk = &mut self.blocks[b];
        set_bits(&mut blk.mapped, first - bf, pages, true);
        blk.mapped_pages += pages as u16;
        if page_log == 4 {
            blk.tree
                .get_or_insert_with(|| Box::new(LocalityTree::new(BLOCK_LEAVES, chiplets)))
                .record(((first - bf) >> 4) as usize, placed);
        }
        self.allocs[blk.alloc as usize].mapped_bytes += pages * PAGE_4K;
        self.lru_touch(b);
        self.note_mapped(first, pages);
        self.rehome_ptb(b)?;
        out.va = Vpn(first).va();
        out.bytes = pages * PAGE_4K;
        out.chiplet = placed;
        Ok(())
    }

    /// A region is full: write it again in one call so its fragment covers it (and a
    /// 2 MB region becomes a PDE-as-PTE huge page, its PTB freed).
    fn remap_region(
        &mut self,
        b: usize,
        first: u64,
        region_log: u8,
        pfn: Pfn,
        toucher: ChipletId,
    ) -> Result<(), DriverError> {
        let opts = self.map_opts(b);
        let mut src = TableFrames {
            phys: &mut self.phys,
            chiplet: toucher,
        };
        self.pt.map(
            Vpn(first),
            1 << region_log,
            MapTarget::Frames(pfn),
            &opts,
            &mut src,
        )?;
        self.n.promotions += 1;
        Ok(())
    }
}

impl MemoryManager {
    /// Block `b` was mapped into just now: it becomes the most recently mapped.
    pub(super) fn lru_touch(&mut self, b: usize) {
        self.lru_forget(b);
        self.seq += 1;
        self.blocks[b].seq = self.seq;
        self.lru.insert(self.seq, b as u32);
    }

    /// Block `b` holds nothing any more: it leaves the mapping-order LRU.
    pub(super) fn lru_forget(&mut self, b: usize) {
        let blk = &mut self.blocks[b];
        if blk.seq != 0 {
            self.lru.remove(&blk.seq);
            blk.seq = 0;
        }
    }
}
