//! Where the UVM driver places a workload's allocations in virtual memory: each at
//! a 2 MB-aligned base (as the driver lays out managed allocations), one after another
//! from `BASE_VPN`. Pages are numbered globally from 0 so per-page state is a flat array.

use crate::addr::{Vpn, PAGE_4K};
use crate::workload::Allocation;

use super::mask::PAGES_PER_BLOCK;

/// First VPN of the first allocation (VA 4 GB), well inside the ATT's 32-bit VPN ports.
pub const BASE_VPN: u64 = 0x10_0000;

/// One managed allocation as the UVM path sees it.
#[derive(Debug, Clone)]
pub struct UvmObject {
    pub name: String,
    /// Global page index of its first page (2 MB aligned).
    pub first_page: usize,
    /// Pages it really holds (its bytes rounded up to 4 KB).
    pub pages: usize,
    pub stride_hint: Option<u64>,
    pub preferred_gpu: bool,
    pub similarity_group: Option<u32>,
}

impl UvmObject {
    pub fn first_vpn(&self) -> Vpn {
        Vpn(BASE_VPN + self.first_page as u64)
    }
    pub fn contains(&self, page: usize) -> bool {
        page >= self.first_page && page < self.first_page + self.pages
    }
}

/// All objects and the block → object map.
#[derive(Debug, Clone)]
pub struct Layout {
    pub objects: Vec<UvmObject>,
    /// Object of each 2 MB block (u16::MAX for none); blocks are never shared.
    block_object: Vec<u16>,
    /// Pages the global numbering spans (padded blocks included).
    pub span_pages: usize,
    /// Pages really allocated: the footprint.
    pub footprint_pages: usize,
}

impl Layout {
    pub fn new(allocs: &[Allocation]) -> Layout {
        let mut objects = Vec::with_capacity(allocs.len());
        let mut next = 0usize;
        for a in allocs {
            let pages = a.bytes.div_ceil(4096).max(1) as usize;
            objects.push(UvmObject {
                name: a.name.clone(),
                first_page: next,
                pages,
                stride_hint: a.stride_hint,
                preferred_gpu: a.preferred_gpu,
                similarity_group: a.similarity_group,
            });
            next += pages.div_ceil(PAGES_PER_BLOCK) * PAGES_PER_BLOCK;
        }
        let mut block_object = vec![u16::MAX; next / PAGES_PER_BLOCK];
        for (i, o) in objects.iter().enumerate() {
            let b0 = o.first_page / PAGES_PER_BLOCK;
            let n = o.pages.div_ceil(PAGES_PER_BLOCK);
            block_object[b0..b0 + n].fill(i as u16);
        }
        let footprint_pages = objects.iter().map(|o| o.pages).sum();
        Layout {
            objects,
            block_object,
            span_pages: next,
            footprint_pages,
        }
    }

    /// The object holding a global page, if any.
    #[inline]
    pub fn object_of(&self, page: usize) -> Option<usize> {
        let o = *self.block_object.get(page / PAGES_PER_BLOCK)?;
        (o != u16::MAX && self.objects[o as usize].contains(page)).then_some(o as usize)
    }

    /// Global page of byte `offset` in allocation `alloc`.
    #[inline]
    pub fn page_of(&self, alloc: usize, offset: u64) -> usize {
        self.objects[alloc].first_page + (offset / PAGE_4K) as usize
    }

    pub fn blocks(&self) -> usize {
        self.block_object.len()
    }
}
