//! Moving a page-table page to another frame (another chiplet's memory): MGvm-style
//! placement of the PTE pages where the data they map lives.

use super::{Level, PageTable, PageTableError, TablePageSource, ROOT};
use crate::addr::{Pfn, Vpn};
use crate::pte::Pte;

impl PageTable {
    /// The frame of the table at `level` on the path to `vpn`, if that table exists.
    pub fn table_frame(&self, vpn: Vpn, level: Level) -> Option<Pfn> {
        self.table_at(vpn, level)
            .map(|t| self.tables[t as usize].pfn)
    }

    /// Move the table at `level` on the path to `vpn` to a frame from `src` and free its
    /// old frame to `src`; the directory entry above points at the new frame (the entries
    /// are copied: translations do not change). Returns the new frame; `Ok(None)` if no
    /// such table exists or it is the root.
    pub fn relocate_table(
        &mut self,
        vpn: Vpn,
        level: Level,
        src: &mut dyn TablePageSource,
    ) -> Result<Option<Pfn>, PageTableError> {
        let Some(tid) = self.table_at(vpn, level).filter(|&t| t != ROOT) else {
            return Ok(None);
        };
        let new = src
            .alloc_table_page()
            .ok_or(PageTableError::OutOfTablePages)?;
        let t = &mut self.tables[tid as usize];
        let old = std::mem::replace(&mut t.pfn, new);
        let (parent, entry) = t.parent;
        self.tables[parent as usize].entries[entry as usize] = Pte::directory(new);
        src.free_table_page(old);
        Ok(Some(new))
    }

    /// Arena index of the table at `level` on the path to `vpn`.
    fn table_at(&self, vpn: Vpn, level: Level) -> Option<u32> {
        let mut tid = ROOT;
        loop {
            let t = &self.tables[tid as usize];
            if t.level == level {
                return Some(tid);
            }
            let i = t.level.index(vpn.0);
            let child = *t.children.get(i)?;
            if child == super::NO_CHILD {
                return None;
            }
            tid = child;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{MapOpts, MapTarget, SequentialTablePages};
    use super::*;

    #[test]
    fn a_relocated_ptb_is_read_at_its_new_frame_and_translates_the_same() {
        let mut src = SequentialTablePages::new(Pfn(0x10_0000));
        let mut pt = PageTable::new(&mut src).unwrap();
        pt.map(
            Vpn(0x210),
            16,
            MapTarget::Frames(Pfn(0x4000)),
            &MapOpts::default(),
            &mut src,
        )
        .unwrap();
        let before = pt.walk(Vpn(0x215));
        let old = pt.table_frame(Vpn(0x215), Level::Ptb).unwrap();
        assert_eq!(before.reads[3].0 >> 12, old.0);
        let mut elsewhere = SequentialTablePages::new(Pfn(0x90_0000));
        let new = pt
            .relocate_table(Vpn(0x215), Level::Ptb, &mut elsewhere)
            .unwrap();
        assert_eq!(new, Some(Pfn(0x90_0000)));
        let after = pt.walk(Vpn(0x215));
        assert_eq!(after.reads[3].0, (0x90_0000 << 12) + 0x15 * 8);
        assert_eq!(after.reads[..3], before.reads[..3]);
        assert_eq!(pt.translate(Vpn(0x215)), Some(Pfn(0x4005)));
        assert_eq!(pt.pt_pages(), 4, "moved, not added");
        assert_eq!(pt.table_frame(Vpn(0x1000_0000), Level::Ptb), None);
        assert_eq!(
            pt.relocate_table(Vpn(0x215), Level::Pdb2, &mut elsewhere),
            Ok(None),
            "the root stays"
        );
    }
}
