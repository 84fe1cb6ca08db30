//! Host-cache prefetch hints for the event loop.
//!
//! The engine touches a different warp's state on nearly every instruction (its slot, its
//! generator, its SM's TLB and cache), tens of megabytes in all, so most of a run's time is
//! host cache misses. The ready queue knows which warps come next; asking the host to fetch
//! their state early overlaps those misses with the current instruction. A hint changes no
//! result: it only moves data into the cache sooner.

/// Ask the host to bring the cache line holding `*r` closer (a no-op off x86-64).
#[inline(always)]
pub(super) fn prefetch<T: ?Sized>(r: &T) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: a prefetch never faults and reads nothing architecturally; the pointer
        // comes from a live reference anyway. SSE is part of the x86-64 baseline.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(r as *const T as *const u8 as *const i8) }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = r;
}
