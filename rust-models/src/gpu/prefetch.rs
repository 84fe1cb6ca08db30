//! Host-cache prefetch hints for the event loop.
//!
//! The event loop touches a different warp's state on nearly every instruction (its slot, its
//! generator, its SM's TLB and cache), tens of megabytes in all, so most of a run's time is
//! host cache misses. The ready queue knows which warps come next; asking the host to fetch
//! their state early overlaps those misses with the current instruction. A hint changes no
//! result: it only moves data into the cache sooner.

/// Ask the host to bring the cache line holding `*r` closer (a no-op off x86-64).
#[inline(always)]
pub(super) fn prefetch<T: ?Sized>(r: &T) {
    prefetch_addr(r as *const T as *const u8);
}

/// Host cache lines [`prefetch_all`] fetches at most (a warp's generator state is a few
/// hundred bytes; beyond that the hints would only evict useful data).
const MAX_PREFETCH_LINES: usize = 8;

/// [`prefetch`] every host cache line `*r` occupies, up to [`MAX_PREFETCH_LINES`]: the
/// fields a warp's next instruction reads may lie anywhere in its generator state.
#[inline(always)]
pub(super) fn prefetch_all<T: ?Sized>(r: &T) {
    let base = r as *const T as *const u8;
    let bytes = std::mem::size_of_val(r).min(64 * MAX_PREFETCH_LINES);
    let first = base as usize & !63;
    let mut line = first;
    while line < base as usize + bytes {
        prefetch_addr(base.wrapping_add(line.wrapping_sub(base as usize)));
        line += 64;
    }
}

/// The hint itself: any address will do, as a prefetch never faults.
#[inline(always)]
pub(super) fn prefetch_addr(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: a prefetch never faults and reads nothing architecturally, whatever the
        // address. SSE is part of the x86-64 baseline.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(p as *const i8) }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}
