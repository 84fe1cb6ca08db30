//! The driver's far-fault service of one batch:
//! 1. fetch up to `batch_size` entries from the fault buffer, de-duplicate, drop pages
//!    that became resident meanwhile (fixed cost: `far_fault_latency_us` per batch);
//! 2. group the faults by prefetch tree (TBNp: the 2 MB VA block; Forest: the object's
//!    own tree) and decide each tree's prefetch;
//! 3. make room: evict (TBNp: the 2 MB chunk migrated longest ago; Forest: the ATT's
//!    least recently accessed object, then the leaf holding its oldest page), writing
//!    dirty pages back over the host link first;
//! 4. per 2 MB block: page-table update (`block_update_us`), then one host-link transfer
//!    per contiguous run of pages (`transfer_latency_us` + bytes / bandwidth);
//! 5. the pages become usable, and stalled warps replay, at the end of the batch.
//!
//! A batch never evicts what it migrates; TBNp prefers chunks the batch does not touch.

use bitvec::prelude::*;

use super::core::UvmCore;
use super::mask::PAGES_PER_BLOCK;
use super::residency::Residency;
use super::tbnp::{compute_prefetch, TreeShape};
use super::UvmError;

const PAGE_BYTES: u64 = 4096;

/// A page eviction may take: resident, and not migrated by the batch being serviced
/// (those carry `ready_at == u64::MAX` until the batch ends).
fn evictable(res: &Residency, ready_at: &[u64], p: usize) -> bool {
    res.is_resident(p) && ready_at[p] != u64::MAX
}

/// Per-batch cache of one object's eviction candidates: (ATT page key, page), oldest
/// first.
struct VictimQueue {
    object: usize,
    pages: AscendingDrain,
}

/// Distinct keys handed out in ascending order, sorted a chunk at a time: a batch evicts
/// a few leaves of an object that may hold tens of thousands of resident pages, so
/// ordering them all (a heap of every page, rebuilt per batch, was most of a dense
/// irregular run's service time) is wasted work. Keys are distinct (page numbers break
/// ties), so the order is the fully sorted one.
struct AscendingDrain {
    items: Vec<(u64, usize)>,
    /// `items[next..sorted_to]` are the smallest remaining, in order.
    next: usize,
    sorted_to: usize,
}

impl AscendingDrain {
    /// Candidates ordered per call to `peek` that runs out of sorted ones.
    const CHUNK: usize = 256;

    fn new(items: Vec<(u64, usize)>) -> AscendingDrain {
        AscendingDrain {
            items,
            next: 0,
            sorted_to: 0,
        }
    }

    fn peek(&mut self) -> Option<(u64, usize)> {
        if self.next == self.sorted_to && self.next < self.items.len() {
            let rest = &mut self.items[self.next..];
            let k = Self::CHUNK.min(rest.len());
            if k < rest.len() {
                rest.select_nth_unstable(k - 1);
            }
            rest[..k].sort_unstable();
            self.sorted_to = self.next + k;
        }
        self.items.get(self.next).copied()
    }

    fn pop(&mut self) {
        self.next = (self.next + 1).min(self.items.len());
    }

    fn is_empty(&self) -> bool {
        self.next >= self.items.len()
    }
}

impl UvmCore {
    fn shape_for(&self, object: usize) -> TreeShape {
        match &self.forest {
            Some(f) if self.policy.forest_trees() => f.shape_of(object),
            _ => self.tbnp_shape,
        }
    }

    /// Service one batch starting at cycle `start`; returns its end cycle.
    pub(super) fn service_batch(&mut self, start: u64) -> Result<u64, UvmError> {
        let faults = self.fetch_faults();
        let mut us = self.cfg.fault.far_fault_latency_us;
        self.metrics.service.fault_handling_us += us;
        let trees = self.group_by_tree(&faults);
        let pinned = self.pin_trees(&trees);
        let mut migrated: Vec<usize> = Vec::new();
        let mut victims: Option<VictimQueue> = None;
        for (o, tree, tree_faults) in trees {
            let mut moves = self.tree_moves(o, tree, &tree_faults);
            self.make_room(&mut moves, &mut us, start, &mut victims)?;
            self.migrate_moves(o, &moves, &mut us, start, &mut migrated);
        }
        if let Some(q) = victims {
            self.victim_scratch = q.pages.items;
        }
        self.finish_batch(start, us, &migrated, pinned)
    }

    /// Step 1: fetch up to `batch_size` faults, de-duplicated, without the pages that
    /// became resident meanwhile.
    fn fetch_faults(&mut self) -> Vec<usize> {
        let take = self.buffer.len().min(self.cfg.fault.batch_size);
        let mut faults: Vec<usize> = Vec::with_capacity(take);
        for _ in 0..take {
            if let Some((p, _)) = self.buffer.pop_front() {
                self.queued.set(p as usize, false);
                faults.push(p as usize);
            }
        }
        faults.sort_unstable();
        faults.dedup();
        faults.retain(|&p| !self.res.is_resident(p));
        self.metrics.batches += 1;
        self.metrics.far_faults += faults.len() as u64;
        faults
    }

    /// Step 2: the sorted faults grouped by (object, tree index), in page order.
    fn group_by_tree(&mut self, faults: &[usize]) -> Vec<(usize, usize, Vec<usize>)> {
        let mut trees: Vec<(usize, usize, Vec<usize>)> = Vec::new();
        for &p in faults {
            let Some(o) = self.layout.object_of(p) else {
                continue;
            };
            self.obj_faults[o] += 1;
            let rel = p - self.layout.objects[o].first_page;
            let tree = rel / self.shape_for(o).tree_pages;
            match trees.last_mut() {
                Some((lo, lt, list)) if *lo == o && *lt == tree => list.push(p),
                _ => trees.push((o, tree, vec![p])),
            }
        }
        trees
    }

    /// Step 2: pin the 2 MB blocks the batch's trees span (never a TBNp victim during the
    /// batch); returns the blocks this call pinned.
    fn pin_trees(&mut self, trees: &[(usize, usize, Vec<usize>)]) -> Vec<usize> {
        let mut pinned: Vec<usize> = Vec::new();
        for &(o, tree, _) in trees {
            let obj = &self.layout.objects[o];
            let tp = self.shape_for(o).tree_pages;
            let first = obj.first_page + tree * tp;
            let last = (first + tp).min(obj.first_page + obj.pages) - 1;
            for b in first / PAGES_PER_BLOCK..=last / PAGES_PER_BLOCK {
                if !self.pinned_blocks[b] {
                    self.pinned_blocks.set(b, true);
                    pinned.push(b);
                }
            }
        }
        pinned
    }

    /// Step 2: one tree's moves, (page, is a prefetch) in page order: its faulted pages and
    /// the tree's prefetch decision.
    fn tree_moves(&self, o: usize, tree: usize, tree_faults: &[usize]) -> Vec<(usize, bool)> {
        let shape = self.shape_for(o);
        let obj = &self.layout.objects[o];
        let tree_first = obj.first_page + tree * shape.tree_pages;
        let valid = shape
            .tree_pages
            .min(obj.first_page + obj.pages - tree_first);
        let mut resident = bitvec![u64, Lsb0; 0; valid];
        let mut faulted = bitvec![u64, Lsb0; 0; valid];
        for i in 0..valid {
            if self.res.is_resident(tree_first + i) {
                resident.set(i, true);
            }
        }
        for &p in tree_faults {
            faulted.set(p - tree_first, true);
        }
        let mut prefetch =
            compute_prefetch(&resident, &faulted, valid, shape, self.cfg.tbnp.threshold).prefetch;
        if obj.preferred_gpu || self.cfg.tbnp.all_preferred_gpu {
            // The driver's first touch with preferred location = this GPU: a block no
            // processor holds yet is populated whole.
            for &p in tree_faults {
                let b = p / PAGES_PER_BLOCK;
                if !self.block_populated[b] {
                    let lo = (b * PAGES_PER_BLOCK).max(tree_first);
                    let hi = ((b + 1) * PAGES_PER_BLOCK).min(tree_first + valid);
                    for q in lo..hi {
                        if !faulted[q - tree_first] && !resident[q - tree_first] {
                            prefetch.set(q - tree_first, true);
                        }
                    }
                }
            }
        }
        (0..valid)
            .filter(|&i| faulted[i] || prefetch[i])
            .map(|i| (tree_first + i, prefetch[i]))
            .collect()
    }

    /// Step 3: evict until `moves` fit. When nothing is evictable (GPU memory holds only
    /// this batch's pages), keep the faulted pages that fit and give the rest back to the
    /// fault buffer. The pages kept are marked "migrated in this batch" (never a victim
    /// before the batch ends). An eviction that frees no frame is a [`UvmError::Stall`].
    fn make_room(
        &mut self,
        moves: &mut Vec<(usize, bool)>,
        us: &mut f64,
        start: u64,
        victims: &mut Option<VictimQueue>,
    ) -> Result<(), UvmError> {
        while self.res.free_frames() < moves.len() {
            let free = self.res.free_frames();
            if self.evict_one(us, start, victims) {
                // An eviction that frees nothing would loop here forever.
                if self.res.free_frames() <= free {
                    return Err(UvmError::Stall {
                        cycle: start,
                        detail: format!(
                            "an eviction freed no frame ({free} free, {} needed)",
                            moves.len()
                        ),
                    });
                }
            } else {
                moves.retain(|&(_, pf)| !pf);
                let fit = self.res.free_frames();
                for &(p, _) in moves.iter().skip(fit).rev() {
                    self.queued.set(p, true);
                    self.buffer.push_front((p as u32, start));
                }
                moves.truncate(fit);
                break;
            }
        }
        for &(p, _) in moves.iter() {
            self.ready_at[p] = u64::MAX;
        }
        Ok(())
    }

    /// Step 4: per 2 MB block of object `o`'s `moves`, the page-table update, then one
    /// transfer per contiguous run; the pages migrated go into `migrated`.
    fn migrate_moves(
        &mut self,
        o: usize,
        moves: &[(usize, bool)],
        us: &mut f64,
        start: u64,
        migrated: &mut Vec<usize>,
    ) {
        let same_block =
            |a: &(usize, bool), b: &(usize, bool)| a.0 / PAGES_PER_BLOCK == b.0 / PAGES_PER_BLOCK;
        for block_moves in moves.chunk_by(same_block) {
            let block = block_moves[0].0 / PAGES_PER_BLOCK;
            *us += self.cfg.fault.block_update_us;
            self.metrics.service.block_update_us += self.cfg.fault.block_update_us;
            self.lru.touch_block(block);
            self.block_populated.set(block, true);
            for run in block_moves.chunk_by(|a, b| b.0 == a.0 + 1) {
                let arrival = start + self.cfg.us_to_cycles(*us);
                self.migrate_run(o, run, arrival, migrated);
                let bytes = run.len() as u64 * PAGE_BYTES;
                let t = self.cfg.transfer_us(bytes);
                *us += t;
                self.metrics.service.migration_us += t;
                self.metrics.host_to_gpu_bytes += bytes;
            }
        }
        self.metrics.pages_migrated += moves.len() as u64;
        self.obj_migrated[o] += moves.len() as u64;
    }

    /// Step 4: one contiguous run of pages arrives at cycle `arrival`.
    fn migrate_run(
        &mut self,
        o: usize,
        run: &[(usize, bool)],
        arrival: u64,
        migrated: &mut Vec<usize>,
    ) {
        for &(p, pf) in run {
            if self.res.was_evicted(p) {
                self.metrics.thrashed_pages += 1;
            }
            self.res.migrate_in(p, pf, arrival);
            if pf {
                self.metrics.pages_prefetched += 1;
            }
            if let Some(f) = self.forest.as_mut() {
                f.note_migrated(p, o);
                if !pf {
                    f.note_faulted_in(p, o);
                }
            }
            migrated.push(p);
        }
    }

    /// Step 5: the migrated pages are usable at the end of the batch; unpin, and check the
    /// residency invariants when asked.
    fn finish_batch(
        &mut self,
        start: u64,
        us: f64,
        migrated: &[usize],
        pinned: Vec<usize>,
    ) -> Result<u64, UvmError> {
        let end = start + self.cfg.us_to_cycles(us);
        for &p in migrated {
            self.ready_at[p] = end;
        }
        if self.record_changes {
            self.migrated_log.extend_from_slice(migrated);
        }
        for b in pinned {
            self.pinned_blocks.set(b, false);
        }
        if self.check_invariants {
            self.res
                .check_invariants()
                .map_err(|source| UvmError::Invariant {
                    cycle: start,
                    source,
                })?;
        }
        Ok(end)
    }

    /// Evict one unit (TBNp: a 2 MB chunk; Forest: a leaf). False when nothing is
    /// evictable. Dirty pages are written back, advancing the batch time `us`.
    fn evict_one(&mut self, us: &mut f64, start: u64, victims: &mut Option<VictimQueue>) -> bool {
        let pages: Vec<usize> = if self.policy.access_aware_eviction() {
            self.forest_victim(victims)
        } else {
            self.lru_victim()
        };
        if pages.is_empty() {
            return false;
        }
        self.metrics.evictions += 1;
        // Write back dirty runs first; the frame of a dirty page is reusable only after. A
        // run is consecutive dirty pages (one transfer); a clean page is a group of its own.
        let tagged: Vec<(usize, bool)> = pages.iter().map(|&p| (p, self.res.is_dirty(p))).collect();
        for group in tagged.chunk_by(|a, b| a.1 && b.1 && b.0 == a.0 + 1) {
            let (first, dirty) = group[0];
            if !dirty {
                let e = self.res.evict(first, start + self.cfg.us_to_cycles(*us));
                self.account_eviction(first, e);
                continue;
            }
            let bytes = group.len() as u64 * PAGE_BYTES;
            let t = self.cfg.transfer_us(bytes);
            *us += t;
            self.metrics.service.writeback_us += t;
            self.metrics.gpu_to_host_bytes += bytes;
            let done = start + self.cfg.us_to_cycles(*us);
            for &(q, _) in group {
                let e = self.res.evict(q, done);
                self.metrics.dirty_writebacks += 1;
                self.account_eviction(q, e);
            }
        }
        true
    }

    fn account_eviction(&mut self, page: usize, e: super::residency::Evicted) {
        if self.record_changes {
            self.evicted_log.push(page);
        }
        self.metrics.pages_evicted += 1;
        if e.prefetched_unused {
            self.metrics.prefetched_unused += 1;
        }
    }

    fn lru_victim(&mut self) -> Vec<usize> {
        let res = &self.res;
        let pinned = &self.pinned_blocks;
        let ready = &self.ready_at;
        let evictable = |p: usize| evictable(res, ready, p);
        let has_victims = |b: usize| {
            res.block_resident(b) > 0
                && (b * PAGES_PER_BLOCK..(b + 1) * PAGES_PER_BLOCK).any(evictable)
        };
        // Blocks this batch services are evicted only when nothing else is left.
        let Some(b) = self
            .lru
            .victim(|b| !pinned[b] && has_victims(b))
            .or_else(|| self.lru.victim(has_victims))
        else {
            return Vec::new();
        };
        let pages: Vec<usize> = (b * PAGES_PER_BLOCK..(b + 1) * PAGES_PER_BLOCK)
            .filter(|&p| evictable(p))
            .collect();
        if pages.len() == self.res.block_resident(b) {
            self.lru.remove_block(b);
        }
        pages
    }

    /// Forest: least recently accessed object (ATT), then the leaf holding its oldest page.
    fn forest_victim(&mut self, victims: &mut Option<VictimQueue>) -> Vec<usize> {
        loop {
            // Reuse this batch's candidate list while its object still has pages.
            if let Some(q) = victims.as_mut() {
                while let Some((_, p)) = q.pages.peek() {
                    if evictable(&self.res, &self.ready_at, p) {
                        break;
                    }
                    q.pages.pop();
                }
                if let Some((_, p)) = q.pages.peek() {
                    let o = q.object;
                    let obj = &self.layout.objects[o];
                    let leaf = self.shape_for(o).leaf_pages;
                    let rel = p - obj.first_page;
                    let lo = obj.first_page + rel / leaf * leaf;
                    let hi = (lo + leaf).min(obj.first_page + obj.pages);
                    return (lo..hi)
                        .filter(|&x| evictable(&self.res, &self.ready_at, x))
                        .collect();
                }
                if let Some(q) = victims.take() {
                    self.victim_scratch = q.pages.items;
                }
            }
            let Some(f) = self.forest.as_mut() else {
                return Vec::new();
            };
            let order = f.objects_by_recency();
            let mut found = None;
            for o in order {
                let obj = &self.layout.objects[o];
                // One buffer for every batch's candidates (an object can hold tens of
                // thousands of resident pages).
                let mut buf = std::mem::take(&mut self.victim_scratch);
                buf.clear();
                buf.extend(
                    (obj.first_page..obj.first_page + obj.pages)
                        .filter(|&p| evictable(&self.res, &self.ready_at, p))
                        .map(|p| (f.tracker.page_key[p], p)),
                );
                let cands = AscendingDrain::new(buf);
                if cands.is_empty() {
                    self.victim_scratch = cands.items;
                } else {
                    found = Some(VictimQueue {
                        object: o,
                        pages: cands,
                    });
                    break;
                }
            }
            match found {
                Some(q) => *victims = Some(q),
                None => return Vec::new(),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::AscendingDrain;

    /// Drained in fully sorted order across chunk boundaries, whatever the input order.
    #[test]
    fn ascending_drain_yields_sorted_order_across_chunks() {
        let mut x = crate::workload::rng::XorShift::new(0x2545_f491_4f6c_dd1d);
        for n in [0usize, 1, 255, 256, 257, 1000, 5000] {
            let items: Vec<(u64, usize)> = (0..n).map(|p| (x.next_u64() % 97, p)).collect();
            let mut want = items.clone();
            want.sort_unstable();
            let mut d = AscendingDrain::new(items);
            let mut got = Vec::new();
            while let Some(it) = d.peek() {
                assert_eq!(d.peek(), Some(it), "peek does not consume");
                got.push(it);
                d.pop();
            }
            assert!(d.is_empty());
            assert_eq!(got, want, "{n} items");
        }
    }
}
