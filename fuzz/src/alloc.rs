//! A counting global allocator: per thread, the bytes live now and the most live at once
//! since the last [`start`], so a worker can tell how much memory one input cost. Counts
//! are thread-local: each input runs on one worker thread, and memory another thread frees
//! only lowers the freeing thread's count.
//!
//! A thread whose live bytes pass [`HARD_CAP`] is stopped before the allocation is made:
//! the hook [`crate::runner::over_cap`] saves the input and exits the process (a failed
//! allocation would abort without saying which input did it).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// Live bytes one thread may hold while fuzzing before the run is stopped.
pub const HARD_CAP: i64 = 2 << 30;

pub struct Counting;

thread_local! {
    static LIVE: Cell<i64> = const { Cell::new(0) };
    static PEAK: Cell<i64> = const { Cell::new(0) };
    /// Set while an input runs: the cap applies; cleared while reporting.
    static CAPPED: Cell<bool> = const { Cell::new(false) };
}

fn add(bytes: i64) {
    let _ = LIVE.try_with(|l| {
        let now = l.get() + bytes;
        l.set(now);
        let _ = PEAK.try_with(|p| {
            if now > p.get() {
                p.set(now)
            }
        });
        if bytes > 0 && now > HARD_CAP && CAPPED.try_with(|c| c.replace(false)) == Ok(true) {
            crate::runner::over_cap(now);
        }
    });
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        add(layout.size() as i64);
        System.alloc(layout)
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        add(layout.size() as i64);
        System.alloc_zeroed(layout)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        add(-(layout.size() as i64));
        System.dealloc(ptr, layout)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        add(new_size as i64 - layout.size() as i64);
        System.realloc(ptr, layout, new_size)
    }
}

/// Begin measuring one input on this thread; returns the live bytes now.
pub fn start() -> i64 {
    let live = LIVE.with(Cell::get);
    PEAK.with(|p| p.set(live));
    CAPPED.with(|c| c.set(true));
    live
}

/// End measuring: the most bytes live at once since [`start`] beyond `base`.
pub fn stop(base: i64) -> u64 {
    CAPPED.with(|c| c.set(false));
    (PEAK.with(Cell::get) - base).max(0) as u64
}
