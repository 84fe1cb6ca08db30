//! Where page-table pages come from. The page table itself does not own physical memory:
//! it asks a [`TablePageSource`] for a 4 KB frame whenever it creates a table and returns
//! the frame when the table is freed, so table pages are counted against the same frames
//! as data (the driver's source places them on the faulting chiplet).

use crate::addr::Pfn;

/// A supplier of 4 KB frames for page-table pages.
pub trait TablePageSource {
    /// A free 4 KB frame for a new table, or `None` when memory is exhausted.
    fn alloc_table_page(&mut self) -> Option<Pfn>;
    /// Return the frame of a freed table.
    fn free_table_page(&mut self, pfn: Pfn);
}

/// Hands out consecutive frames from `next` (reusing freed ones first); for the standalone
/// page table (`mcmvm pagetable`, tests) where no memory manager is present.
#[derive(Debug, Clone)]
pub struct SequentialTablePages {
    next: Pfn,
    freed: Vec<Pfn>,
}

impl SequentialTablePages {
    /// Table pages start at frame `first`.
    pub fn new(first: Pfn) -> Self {
        SequentialTablePages {
            next: first,
            freed: Vec::new(),
        }
    }
}

impl TablePageSource for SequentialTablePages {
    fn alloc_table_page(&mut self) -> Option<Pfn> {
        if let Some(p) = self.freed.pop() {
            return Some(p);
        }
        let p = self.next;
        self.next = Pfn(p.0.checked_add(1)?);
        Some(p)
    }
    fn free_table_page(&mut self, pfn: Pfn) {
        self.freed.push(pfn);
    }
}
