//! The ATT's range match: which of the 32 object slots' `[start, end]` VPN ranges hold a
//! page. In hardware it is 64 comparators in parallel; the twin runs it on every GPU
//! memory access of a Forest run, so it compares four slots per SSE2 instruction (a
//! scalar loop of 32 compare-and-shift steps cost half of a gather-heavy replay run).

/// Bit `i` set when `start[i] <= vpn <= end[i]`, for the slots of the first `groups`
/// groups of four (`groups` ≤ 8; the caller passes the groups up to its highest valid
/// slot, so a program with a few objects compares a few slots). No valid-bit masking.
#[inline]
pub(crate) fn range_hits(start: &[u32; 32], end: &[u32; 32], vpn: u32, groups: usize) -> u32 {
    debug_assert!(groups <= 8);
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: SSE2 is part of the x86-64 baseline; the loads stay inside the arrays
        // (at most eight groups of four).
        unsafe { sse2::range_hits(start, end, vpn, groups.min(8)) }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        range_hits_scalar(start, end, vpn) & group_mask(groups)
    }
}

/// The slots of the first `groups` groups of four (other targets, and the test).
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
fn group_mask(groups: usize) -> u32 {
    (((1u64 << (4 * groups.min(8))) - 1) & 0xffff_ffff) as u32
}

/// The same, one slot at a time (other targets, and the test's reference).
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
pub(crate) fn range_hits_scalar(start: &[u32; 32], end: &[u32; 32], vpn: u32) -> u32 {
    let mut hits = 0u32;
    for i in 0..32 {
        hits |= ((start[i] <= vpn && vpn <= end[i]) as u32) << i;
    }
    hits
}

#[cfg(target_arch = "x86_64")]
mod sse2 {
    use std::arch::x86_64::*;

    /// SSE2 has only signed 32-bit compares: flipping the sign bit of both sides turns
    /// them into unsigned ones.
    #[inline]
    pub(super) unsafe fn range_hits(
        start: &[u32; 32],
        end: &[u32; 32],
        vpn: u32,
        groups: usize,
    ) -> u32 {
        let bias = _mm_set1_epi32(i32::MIN);
        let v = _mm_xor_si128(_mm_set1_epi32(vpn as i32), bias);
        let mut hits = 0u32;
        for c in 0..groups {
            let s = _mm_loadu_si128(start.as_ptr().add(4 * c) as *const __m128i);
            let e = _mm_loadu_si128(end.as_ptr().add(4 * c) as *const __m128i);
            let below = _mm_cmpgt_epi32(_mm_xor_si128(s, bias), v);
            let above = _mm_cmpgt_epi32(v, _mm_xor_si128(e, bias));
            let miss = _mm_movemask_ps(_mm_castsi128_ps(_mm_or_si128(below, above))) as u32;
            hits |= (!miss & 0xf) << (4 * c);
        }
        hits
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_the_slot_by_slot_compare_on_random_tables() {
        let mut draws = crate::workload::rng::XorShift::new(0x9e37_79b9_7f4a_7c15); // fixed seed
        let mut next = move || draws.next_u64();
        for _ in 0..20_000 {
            let mut start = [0u32; 32];
            let mut end = [0u32; 32];
            for i in 0..32 {
                // Small values make hits and both edges common; some near u32::MAX and
                // some with start > end (empty ranges) test the unsigned compare.
                let r = next();
                let base = if r & 7 == 0 { u32::MAX - 64 } else { 0 };
                start[i] = base.wrapping_add((r >> 8) as u32 % 64);
                end[i] = base.wrapping_add((r >> 24) as u32 % 64);
            }
            let r = next();
            let vpn = if r & 7 == 0 {
                u32::MAX - (r >> 8) as u32 % 64
            } else {
                (r >> 8) as u32 % 70
            };
            // Every group count: the slots past the last group never hit.
            let groups = (r >> 40) as usize % 9;
            assert_eq!(
                range_hits(&start, &end, vpn, groups),
                range_hits_scalar(&start, &end, vpn) & group_mask(groups),
                "{groups} groups"
            );
        }
    }
}
