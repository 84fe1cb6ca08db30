//! The batch service's timing and eviction rules (`service.rs`), driven directly on a
//! `UvmCore` with hand-placed faults: the batch time is the far-fault latency plus one
//! page-table update per 2 MB block plus one host-link transfer per contiguous run; a
//! contiguous dirty run is written back in one transfer; the fault-order LRU never picks a
//! block whose resident pages all arrived in the batch being serviced.

use std::path::Path;

use super::core::UvmCore;
use super::mask::PAGES_PER_BLOCK;
use super::{UvmConfig, UvmPolicy};
use crate::workload::{Allocation, Kernel, WarpStream, Workload};

/// Allocations only: the batch service never asks for a warp's instructions.
struct Objects(Vec<Allocation>);

impl Workload for Objects {
    fn name(&self) -> &str {
        "objects"
    }
    fn allocations(&self) -> &[Allocation] {
        &self.0
    }
    fn kernels(&self) -> &[Kernel] {
        &[]
    }
    fn warp_stream(&self, _kernel: usize, _tb: u32, _warp: u32) -> WarpStream<'_> {
        Box::new(std::iter::empty())
    }
}

const BIG_PAGE: usize = 16; // 64 KB in 4 KB pages: TBNp widens a fault to it.
const BIG_PAGE_BYTES: u64 = (BIG_PAGE * 4096) as u64;
const BLOCK_BYTES: u64 = (PAGES_PER_BLOCK * 4096) as u64;

/// `n` objects of one 64 KB big page each (each in its own 2 MB block), TBNp, invariants
/// checked after every batch.
/// Overrides of the first-touch tests: no oversubscription, every object's preferred
/// location this GPU.
const FIRST_TOUCH: &[&str] = &["memory.oversubscription=1", "tbnp.all_preferred_gpu=true"];

fn core(n: usize, sets: &[&str]) -> UvmCore {
    core_of(
        (0..n)
            .map(|i| Allocation::new(format!("o{i}"), BIG_PAGE_BYTES))
            .collect(),
        sets,
    )
}

/// These objects (each 2 MB-aligned) under TBNp with the overrides `sets`, invariants
/// checked after every batch.
fn core_of(objects: Vec<Allocation>, sets: &[&str]) -> UvmCore {
    core_under(UvmPolicy::Tbnp, objects, sets)
}

/// [`core_of`] under `policy`.
fn core_under(policy: UvmPolicy, objects: Vec<Allocation>, sets: &[&str]) -> UvmCore {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    let cfg = UvmConfig::from_text("", Path::new("test"), &sets).expect("valid overrides");
    UvmCore::new(&Objects(objects), &cfg, policy, true).expect("the core builds")
}

fn first_page(c: &UvmCore, o: usize) -> usize {
    c.layout.objects[o].first_page
}

/// One fault in each of two fresh objects: each becomes one block update and one 64 KB
/// transfer (the fault widened to its big page), after the fixed far-fault latency. GPU
/// memory holds both (no oversubscription).
#[test]
fn a_batch_takes_the_latency_one_update_per_block_and_one_transfer_per_run() {
    let mut c = core(2, &["memory.oversubscription=1"]);
    let (a, b) = (first_page(&c, 0), first_page(&c, 1));
    assert_ne!(
        a / PAGES_PER_BLOCK,
        b / PAGES_PER_BLOCK,
        "2 MB-aligned objects"
    );
    c.queue_fault(a + 3, 0);
    c.queue_fault(b, 0);
    let start = 1000;
    let end = c.service_batch(start).unwrap();

    let run = c.cfg.transfer_us(BIG_PAGE_BYTES);
    let (latency, update) = (
        c.cfg.fault.far_fault_latency_us,
        c.cfg.fault.block_update_us,
    );
    assert_eq!((latency, update), (45.0, 2.0), "configs' defaults");
    assert_eq!(
        end,
        start + c.cfg.us_to_cycles(latency + update + run + update + run)
    );
    let s = &c.metrics.service;
    assert_eq!(s.fault_handling_us, latency);
    assert_eq!(s.block_update_us, 2.0 * update);
    assert_eq!(s.migration_us, 2.0 * run);
    assert_eq!(c.metrics.pages_migrated, 2 * BIG_PAGE as u64);
    assert_eq!(c.metrics.pages_prefetched, 2 * (BIG_PAGE as u64 - 1));
    assert_eq!(c.metrics.host_to_gpu_bytes, 2 * BIG_PAGE_BYTES);
    assert_eq!(c.obj_migrated, [BIG_PAGE as u64; 2], "per object");
    for p in (a..a + BIG_PAGE).chain(b..b + BIG_PAGE) {
        assert_eq!(
            c.ready_at[p], end,
            "page {p} usable at the end of the batch"
        );
    }
}

/// Object 0 (`big_pages` big pages) resident with pages `written` dirty, then a fault in
/// object 1 (one big page) that needs its frames (GPU memory holds object 0 exactly).
/// Returns the core after the second batch and that batch's start and end.
fn evict_written(big_pages: usize, written: &[usize]) -> (UvmCore, u64, u64) {
    let oversub = (big_pages + 1) as f64 / big_pages as f64;
    let mut c = core_of(
        vec![
            Allocation::new("a".to_string(), big_pages as u64 * BIG_PAGE_BYTES),
            Allocation::new("b".to_string(), BIG_PAGE_BYTES),
        ],
        &[&format!("memory.oversubscription={oversub}")],
    );
    assert_eq!(c.res.capacity(), big_pages * BIG_PAGE);
    let (a, b) = (first_page(&c, 0), first_page(&c, 1));
    for k in 0..big_pages {
        c.queue_fault(a + k * BIG_PAGE, 0);
    }
    let first_end = c.service_batch(0).unwrap();
    for &p in written {
        c.access_page(first_end, a + p, true);
    }
    c.queue_fault(b, first_end);
    let start = first_end + 10;
    let end = c.service_batch(start).unwrap();
    assert_eq!(c.metrics.pages_evicted, (big_pages * BIG_PAGE) as u64);
    assert_eq!(c.res.resident_pages(), BIG_PAGE);
    assert!((b..b + BIG_PAGE).all(|p| c.res.is_resident(p)));
    (c, start, end)
}

#[test]
fn a_contiguous_dirty_run_is_written_back_in_one_transfer() {
    let all: Vec<usize> = (0..BIG_PAGE).collect();
    let (c, start, end) = evict_written(1, &all);
    let whole = c.cfg.transfer_us(BIG_PAGE_BYTES);
    assert_eq!(c.metrics.service.writeback_us, whole);
    assert_eq!(c.metrics.gpu_to_host_bytes, BIG_PAGE_BYTES);
    assert_eq!(c.metrics.dirty_writebacks, BIG_PAGE as u64);
    let (latency, update) = (
        c.cfg.fault.far_fault_latency_us,
        c.cfg.fault.block_update_us,
    );
    // The write-back precedes the migration into the freed frames.
    assert_eq!(
        end,
        start + c.cfg.us_to_cycles(latency + whole + update + whole)
    );
}

/// A dirty page's frame is reusable only once its write-back ends. GPU memory holds 32
/// pages: object 0's two big pages, all written; a fault in object 1 evicts the whole
/// 2 MB chunk (32 pages, one write-back transfer) and brings 16, so 16 freed frames stay
/// free, ready at the batch start + fault latency + that write-back.
#[test]
fn freed_frames_are_ready_when_their_write_back_ends() {
    let all: Vec<usize> = (0..2 * BIG_PAGE).collect();
    let (c, start, _) = evict_written(2, &all);
    assert_eq!(c.metrics.dirty_writebacks, 2 * BIG_PAGE as u64);
    assert_eq!(c.res.free_frames(), BIG_PAGE);
    let write_back = c.cfg.transfer_us(2 * BIG_PAGE_BYTES);
    assert_eq!(
        c.res.next_frame_ready_at(),
        start
            + c.cfg
                .us_to_cycles(c.cfg.fault.far_fault_latency_us + write_back)
    );
}

#[test]
fn dirty_runs_split_by_clean_pages_are_one_transfer_each() {
    let (c, _, _) = evict_written(1, &[0, 1, 2, 3, 8, 9, 10, 11]);
    let run = c.cfg.transfer_us(4 * 4096);
    assert_eq!(c.metrics.service.writeback_us, 2.0 * run);
    assert_eq!(c.metrics.gpu_to_host_bytes, 8 * 4096);
    assert_eq!(c.metrics.dirty_writebacks, 8);
}

/// GPU memory for two of three big pages. Before the batch, half of object 1 is resident.
/// The batch faults objects 0, 1 and 2 in that order: 0 and 1 fit (both blocks then hold
/// pages of this batch, 0 the least recently migrated), 2 needs room. Block 0 holds only
/// this batch's pages, so the LRU passes over it to object 1's older half; once that is
/// gone nothing is evictable and only object 2's faulted page comes in.
#[test]
fn lru_passes_over_a_block_holding_only_this_batchs_pages() {
    let mut c = core(3, &[]);
    assert_eq!(c.res.capacity(), 2 * BIG_PAGE);
    let (a, b, d) = (first_page(&c, 0), first_page(&c, 1), first_page(&c, 2));
    let half = BIG_PAGE / 2;
    for p in b..b + half {
        assert!(c.res.migrate_in(p, false, 0));
    }
    c.lru.touch_block(b / PAGES_PER_BLOCK);
    c.block_populated.set(b / PAGES_PER_BLOCK, true);

    for p in [a, b + half, d] {
        c.queue_fault(p, 0);
    }
    c.service_batch(0).unwrap();
    assert_eq!(c.metrics.batches, 1);
    assert_eq!(c.metrics.far_faults, 3);
    assert_eq!(c.obj_faults, [1, 1, 1], "one fault in each object");
    assert_eq!(c.metrics.evictions, 1);
    assert_eq!(
        c.metrics.pages_evicted, half as u64,
        "object 1's older half"
    );
    assert!((a..a + BIG_PAGE).all(|p| c.res.is_resident(p)));
    assert!((b..b + half).all(|p| !c.res.is_resident(p)));
    assert!((b + half..b + BIG_PAGE).all(|p| c.res.is_resident(p)));
    assert!(
        c.res.is_resident(d),
        "the faulted page fits in the freed frames"
    );
    assert!(
        (d + 1..d + BIG_PAGE).all(|p| !c.res.is_resident(p)),
        "no prefetch"
    );
    assert!(c.buffer.is_empty());
    assert_eq!(c.metrics.pages_migrated, (BIG_PAGE + half + 1) as u64);
}

/// Makes each `(first page, pages)` run resident (`prefetched` says which pages arrived as
/// prefetches) and touches its 2 MB block, in the order given: the LRU's oldest first.
fn fill_in_lru_order(c: &mut UvmCore, runs: &[(usize, usize)], prefetched: impl Fn(usize) -> bool) {
    for &(first, pages) in runs {
        for p in first..first + pages {
            assert!(c.res.migrate_in(p, prefetched(p), 0));
        }
        c.lru.touch_block(first / PAGES_PER_BLOCK);
        c.block_populated.set(first / PAGES_PER_BLOCK, true);
    }
}

/// GPU memory full: object 1's first half (migrated first), object 0, object 2's first
/// half. A fault in object 1's second half needs 8 frames: the LRU's oldest block is
/// object 1's, but the batch touches it, so the driver evicts the oldest block it does not
/// touch (object 0) and object 1 ends whole. Every other page of object 0 arrived as an
/// unused prefetch: those evicted are counted as prefetched-unused. Object 1's block is not
/// block 0, so the pin is computed from a non-zero page number.
#[test]
fn lru_evicts_the_oldest_block_the_batch_does_not_touch() {
    let mut c = core(3, &[]);
    let (a, b, d) = (first_page(&c, 0), first_page(&c, 1), first_page(&c, 2));
    assert!(b >= PAGES_PER_BLOCK, "object 1 is not in block 0");
    let half = BIG_PAGE / 2;
    fill_in_lru_order(&mut c, &[(b, half), (a, BIG_PAGE), (d, half)], |p| {
        (a..a + BIG_PAGE).contains(&p) && (p - a) % 2 == 0
    });
    assert_eq!(c.res.free_frames(), 0);
    c.queue_fault(b + half, 0);
    c.service_batch(0).unwrap();
    assert_eq!(c.metrics.evictions, 1);
    assert_eq!(c.metrics.pages_evicted, BIG_PAGE as u64, "all of object 0");
    assert_eq!(c.metrics.prefetched_unused, half as u64);
    assert!((b..b + BIG_PAGE).all(|p| c.res.is_resident(p)));
    assert!((a..a + BIG_PAGE).all(|p| !c.res.is_resident(p)));
    assert!((d..d + half).all(|p| c.res.is_resident(p)));
    assert_eq!(
        c.lru.victim(|_| true),
        Some(d / PAGES_PER_BLOCK),
        "the emptied block left the LRU list; object 2's is now the oldest"
    );
}

/// Pinning covers exactly the blocks the batch's trees span. GPU memory full: object 0
/// whole (the LRU's oldest block), object 2's first half, object 1's first half. A fault in
/// object 1's second half needs 8 frames: the oldest block the batch does not touch is
/// object 0's, so all of object 0 goes and object 2 stays. (Pinning every block up to the
/// batch's, block 0 too, would evict object 2 instead.)
#[test]
fn lru_evicts_an_older_block_before_the_batchs_own() {
    let mut c = core(3, &[]);
    let (a, b, d) = (first_page(&c, 0), first_page(&c, 1), first_page(&c, 2));
    assert!(
        b >= PAGES_PER_BLOCK,
        "object 1 is in a later 2 MB block than object 0"
    );
    let half = BIG_PAGE / 2;
    fill_in_lru_order(&mut c, &[(a, BIG_PAGE), (d, half), (b, half)], |_| false);
    assert_eq!(c.res.free_frames(), 0);
    c.queue_fault(b + half, 0);
    c.service_batch(0).unwrap();
    assert_eq!(c.metrics.evictions, 1);
    assert_eq!(c.metrics.pages_evicted, BIG_PAGE as u64, "all of object 0");
    assert!((a..a + BIG_PAGE).all(|p| !c.res.is_resident(p)));
    assert!(
        (d..d + half).all(|p| c.res.is_resident(p)),
        "object 2 stays"
    );
    assert!((b..b + BIG_PAGE).all(|p| c.res.is_resident(p)));
    assert!(c.pinned_blocks.not_any(), "the batch unpinned its blocks");
}

/// A tree past an object's first is pinned at its own block: object 1 spans two 2 MB
/// trees, and the batch faults in the second. GPU memory (32 frames) holds that tree's
/// first big page (the LRU's oldest) and object 0; the batch's own block is pinned, so
/// object 0 goes and the tree ends with both big pages.
#[test]
fn a_later_tree_of_an_object_pins_its_own_block() {
    let mut c = core_of(
        vec![
            Allocation::new("a".to_string(), BIG_PAGE_BYTES),
            Allocation::new("b".to_string(), 2 * BLOCK_BYTES),
        ],
        &["memory.oversubscription=32.5"],
    );
    assert_eq!(c.res.capacity(), 2 * BIG_PAGE);
    let (a, t) = (first_page(&c, 0), first_page(&c, 1) + PAGES_PER_BLOCK);
    fill_in_lru_order(&mut c, &[(t, BIG_PAGE), (a, BIG_PAGE)], |_| false);
    c.queue_fault(t + BIG_PAGE, 0);
    c.service_batch(0).unwrap();
    assert_eq!(c.metrics.pages_evicted, BIG_PAGE as u64, "object 0");
    assert!((a..a + BIG_PAGE).all(|p| !c.res.is_resident(p)));
    assert!((t..t + 2 * BIG_PAGE).all(|p| c.res.is_resident(p)));
}

/// First touch with preferred location = this GPU (`tbnp.all_preferred_gpu`): one fault in
/// a 2 MB block no processor holds yet populates that whole block — exactly its 512 pages,
/// none of the neighbouring blocks — in the one batch. The object is the second of two, so
/// its block is not block 0 (the block's page range is `b * 512 .. (b + 1) * 512`).
#[test]
fn a_first_touch_with_preferred_location_populates_exactly_the_faulted_block() {
    let mut c = core_of(
        vec![
            Allocation::new("a".to_string(), BLOCK_BYTES),
            Allocation::new("b".to_string(), 2 * BLOCK_BYTES),
        ],
        FIRST_TOUCH,
    );
    let first = first_page(&c, 1) + PAGES_PER_BLOCK; // object b's second block
    let b = first / PAGES_PER_BLOCK;
    assert!(b >= 2, "object b's second block is block {b}");
    c.queue_fault(first + 100, 0);
    let end = c.service_batch(1000).unwrap();
    assert_eq!(c.metrics.pages_migrated, PAGES_PER_BLOCK as u64);
    assert_eq!(
        c.metrics.pages_prefetched,
        PAGES_PER_BLOCK as u64 - 1,
        "every page but the faulted one is a prefetch"
    );
    for p in first..first + PAGES_PER_BLOCK {
        assert_eq!(
            c.ready_at[p], end,
            "page {p} of the faulted block populated"
        );
    }
    let block = first..first + PAGES_PER_BLOCK;
    for p in (0..c.ready_at.len()).filter(|p| !block.contains(p)) {
        assert!(c.ready_at[p] != end, "page {p} outside the block untouched");
    }
}

/// A first touch with preferred location in block 0 (object 0's first tree starts at page
/// 0) populates the block whole, as in any other block.
#[test]
fn a_first_touch_in_block_0_populates_it_whole() {
    let mut c = core_of(
        vec![Allocation::new("a".to_string(), BLOCK_BYTES)],
        FIRST_TOUCH,
    );
    assert_eq!(first_page(&c, 0), 0);
    c.queue_fault(7, 0);
    let end = c.service_batch(1000).unwrap();
    assert_eq!(c.metrics.pages_migrated, PAGES_PER_BLOCK as u64);
    assert!((0..PAGES_PER_BLOCK).all(|p| c.ready_at[p] == end));
}

/// A first touch with preferred location on an object smaller than its 2 MB block (1 MB,
/// the second object, so its tree starts past page 0) populates the object's 256 pages and
/// stops at the object's end, not the block's.
#[test]
fn a_first_touch_populates_no_further_than_the_objects_end() {
    let mut c = core_of(
        vec![
            Allocation::new("a".to_string(), 4096),
            Allocation::new("small".to_string(), 1 << 20),
        ],
        FIRST_TOUCH,
    );
    let s = first_page(&c, 1);
    assert!(s >= PAGES_PER_BLOCK, "object small is not in block 0");
    c.queue_fault(s + 10, 0);
    let end = c.service_batch(1000).unwrap();
    assert_eq!(c.metrics.pages_migrated, 256);
    assert_eq!(c.metrics.pages_prefetched, 255);
    assert!((s..s + 256).all(|p| c.ready_at[p] == end));
}

/// A first touch in the second 2 MB block of a 4 MB tree populates that block from its own
/// first page (`b * 512`), not from the tree's, and leaves the tree's first block alone.
#[test]
fn a_first_touch_in_a_trees_second_block_starts_at_that_block() {
    let mut c = core_under(
        UvmPolicy::Forest,
        vec![Allocation::new("o".to_string(), 2 * BLOCK_BYTES)],
        FIRST_TOUCH,
    );
    let f = c.forest.as_mut().expect("Forest keeps an ATT state");
    f.tracker.objects[0].shape = super::tbnp::TreeShape {
        tree_pages: 2 * PAGES_PER_BLOCK,
        leaf_pages: 16,
    };
    let a = first_page(&c, 0);
    c.queue_fault(a + PAGES_PER_BLOCK + 10, 0);
    let end = c.service_batch(1000).unwrap();
    assert_eq!(c.metrics.pages_migrated, PAGES_PER_BLOCK as u64);
    assert!((a + PAGES_PER_BLOCK..a + 2 * PAGES_PER_BLOCK).all(|p| c.ready_at[p] == end));
    assert!((a..a + PAGES_PER_BLOCK).all(|p| !c.res.is_resident(p)));
}

/// Forest prefetches with each object's own tree (what the APD programmed), not TBNp's:
/// an object whose tree has 256 KB leaves brings a fault's whole leaf, 64 pages, where
/// TBNp's 64 KB big page would bring 16.
#[test]
fn forest_widens_a_fault_to_its_objects_own_leaf() {
    let mut c = core_under(UvmPolicy::Forest, vec![Allocation::new("o", 2 << 20)], &[]);
    let f = c.forest.as_mut().expect("Forest keeps an ATT state");
    f.tracker.objects[0].shape = super::tbnp::TreeShape {
        tree_pages: 512,
        leaf_pages: 64,
    };
    let a = first_page(&c, 0);
    c.queue_fault(a + 100, 0);
    c.service_batch(0).unwrap();
    assert_eq!(c.metrics.pages_migrated, 64);
    assert!((a + 64..a + 128).all(|p| c.res.is_resident(p)));
}
