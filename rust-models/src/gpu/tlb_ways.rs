//! The TLB probe's inner step: which ways of a set may hold a translation, found for eight
//! ways at a time.
//!
//! Every simulated memory instruction probes a TLB or two, so this compare is among the
//! hottest code of a run. A loop that stops at the first matching tag mispredicts its exit
//! on nearly every probe; comparing whole rows of 32-bit tag halves and 16-bit page masks
//! with SSE2 (part of every x86-64) costs a handful of instructions and no branch per way.
//! Elsewhere a plain loop computes the same bits.

/// Bit `k` set when way `k` has `lo[k] == tag_lo` and a page of `pages` in `masks[k]`
/// (at most 64 ways). A candidate still needs its full tag checked.
#[inline(always)]
pub(super) fn candidate_ways(lo: &[u32], masks: &[u16], tag_lo: u32, pages: u16) -> u64 {
    let way = |l: u32, m: u16| l == tag_lo && m & pages != 0;
    #[cfg(target_arch = "x86_64")]
    let row = |r: &[u32; 8], m: &[u16; 8]| sse2::row_of_8(r, m, tag_lo, pages);
    #[cfg(not(target_arch = "x86_64"))]
    let row = |r: &[u32; 8], m: &[u16; 8]| by_way(r, m, &way);
    select_ways(lo, masks, row, way)
}

/// Bit `k` set when way `k` is valid (`masks[k] != 0`) and `lo[k] - first` (wrapping) is
/// at most `span`: the ways whose tag may lie in a shootdown's tag range `first ..=
/// first + span` (at most 64 ways). A candidate still needs its full tag checked.
///
/// Why: a shootdown under UVM eviction scans every TLB of every SM (fourteen thousand L1
/// ways on four chiplets); a way-by-way loop made it the costliest part of a Forest run.
#[inline]
pub(super) fn ways_in_range(lo: &[u32], masks: &[u16], first: u32, span: u32) -> u64 {
    let way = |l: u32, m: u16| m != 0 && l.wrapping_sub(first) <= span;
    #[cfg(target_arch = "x86_64")]
    let row = |r: &[u32; 8], m: &[u16; 8]| sse2::in_range_of_8(r, m, first, span);
    #[cfg(not(target_arch = "x86_64"))]
    let row = |r: &[u32; 8], m: &[u16; 8]| by_way(r, m, &way);
    select_ways(lo, masks, row, way)
}

/// The ways (at most 64) that pass a test, as a bit mask: `row` answers for eight ways at
/// a time, `way` for the ways past the last full row (none for 8-, 16- and 32-way sets).
#[inline(always)]
fn select_ways(
    lo: &[u32],
    masks: &[u16],
    row: impl Fn(&[u32; 8], &[u16; 8]) -> u32,
    way: impl Fn(u32, u16) -> bool,
) -> u64 {
    debug_assert!(lo.len() == masks.len() && lo.len() <= 64);
    let mut found = 0u64;
    let mut k = 0;
    while k + 8 <= lo.len() {
        let rows: &[u32; 8] = lo[k..k + 8].try_into().expect("eight tags");
        let m: &[u16; 8] = masks[k..k + 8].try_into().expect("eight masks");
        found |= (row(rows, m) as u64) << k;
        k += 8;
    }
    for w in k..lo.len() {
        found |= (way(lo[w], masks[w]) as u64) << w;
    }
    found
}

/// A row's bits from the per-way test (targets without SSE2).
#[cfg(not(target_arch = "x86_64"))]
fn by_way(lo: &[u32; 8], masks: &[u16; 8], way: &impl Fn(u32, u16) -> bool) -> u32 {
    (0..8).fold(0, |f, w| f | (way(lo[w], masks[w]) as u32) << w)
}

#[cfg(target_arch = "x86_64")]
mod sse2 {
    use std::arch::x86_64::*;

    /// [`super::ways_in_range`] for one row of eight ways.
    #[inline(always)]
    pub(super) fn in_range_of_8(lo: &[u32; 8], masks: &[u16; 8], first: u32, span: u32) -> u32 {
        // SAFETY: SSE2 is part of the x86-64 baseline; the unaligned loads read exactly
        // the 32 bytes of `lo` and the 16 bytes of `masks`.
        unsafe {
            // Unsigned `d <= span` with signed compares: flip both sign bits.
            let bias = _mm_set1_epi32(i32::MIN);
            let f = _mm_set1_epi32(first as i32);
            let sp = _mm_xor_si128(_mm_set1_epi32(span as i32), bias);
            let p = lo.as_ptr() as *const __m128i;
            let out = |v: __m128i| {
                let d = _mm_xor_si128(_mm_sub_epi32(v, f), bias);
                _mm_cmpgt_epi32(d, sp)
            };
            let out_lo = out(_mm_loadu_si128(p));
            let out_hi = out(_mm_loadu_si128(p.add(1)));
            let outside = _mm_packs_epi32(out_lo, out_hi);
            let m = _mm_loadu_si128(masks.as_ptr() as *const __m128i);
            let empty = _mm_cmpeq_epi16(m, _mm_setzero_si128());
            let miss = _mm_or_si128(outside, empty);
            // A byte per way, then a bit per way; set bits are the ways that stay out.
            let bits = _mm_movemask_epi8(_mm_packs_epi16(miss, _mm_setzero_si128())) & 0xff;
            (!bits & 0xff) as u32
        }
    }

    /// [`super::candidate_ways`] for one row of eight ways.
    #[inline(always)]
    pub(super) fn row_of_8(lo: &[u32; 8], masks: &[u16; 8], tag_lo: u32, pages: u16) -> u32 {
        // SAFETY: SSE2 is part of the x86-64 baseline; the unaligned loads read exactly
        // the 32 bytes of `lo` and the 16 bytes of `masks`.
        unsafe {
            let t = _mm_set1_epi32(tag_lo as i32);
            let p = lo.as_ptr() as *const __m128i;
            let eq_lo = _mm_cmpeq_epi32(_mm_loadu_si128(p), t);
            let eq_hi = _mm_cmpeq_epi32(_mm_loadu_si128(p.add(1)), t);
            // 0 or -1 per way, as 16-bit lanes (saturation keeps both values).
            let tag_eq = _mm_packs_epi32(eq_lo, eq_hi);
            let m = _mm_loadu_si128(masks.as_ptr() as *const __m128i);
            let no_page = _mm_cmpeq_epi16(
                _mm_and_si128(m, _mm_set1_epi16(pages as i16)),
                _mm_setzero_si128(),
            );
            let hit = _mm_andnot_si128(no_page, tag_eq);
            // One byte per way, then one bit per way.
            (_mm_movemask_epi8(_mm_packs_epi16(hit, _mm_setzero_si128())) & 0xff) as u32
        }
    }
}

/// The first of the ways holding the smallest stamp (a set's ways, all valid): one pass
/// with no branch per way (a replacement scan that also tested each way for emptiness
/// branched twice per way, 7 % of `dc`/`s4k`'s instructions).
#[inline]
pub(super) fn least_recent(stamps: &[u64]) -> usize {
    let (mut victim, mut oldest) = (0, u64::MAX);
    for (w, &st) in stamps.iter().enumerate() {
        // Strictly older only: the first of equal stamps.
        let older = st < oldest;
        oldest = if older { st } else { oldest };
        victim = if older { w } else { victim };
    }
    victim
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The SIMD rows and the scalar tail agree with a way-by-way check, for set sizes
    /// that are and are not multiples of eight (fixed seed).
    #[test]
    fn candidates_match_a_way_by_way_check() {
        let mut draws = crate::workload::rng::XorShift::new(0x243f_6a88_85a3_08d3); // fixed seed
        let mut rng = move || draws.next_u64();
        for ways in [1usize, 3, 8, 13, 16, 32, 64] {
            for _ in 0..2000 {
                // Few distinct tags and sparse masks, so matches and near misses are common.
                let lo: Vec<u32> = (0..ways).map(|_| (rng() % 4) as u32).collect();
                let masks: Vec<u16> = (0..ways).map(|_| (rng() & rng()) as u16).collect();
                let tag = (rng() % 4) as u32;
                let pages = if rng() % 4 == 0 {
                    u16::MAX
                } else {
                    1 << (rng() % 16)
                };
                let expect = (0..ways).fold(0u64, |f, w| {
                    f | ((lo[w] == tag && masks[w] & pages != 0) as u64) << w
                });
                assert_eq!(
                    candidate_ways(&lo, &masks, tag, pages),
                    expect,
                    "{ways} ways"
                );
                // Ranges that start below, at and above zero (wrapping) and cover 1-4 tags.
                let first = (rng() % 6) as u32 ^ if rng() % 5 == 0 { u32::MAX - 2 } else { 0 };
                let span = (rng() % 4) as u32;
                let expect = (0..ways).fold(0u64, |f, w| {
                    let inside = lo[w].wrapping_sub(first) <= span;
                    f | ((masks[w] != 0 && inside) as u64) << w
                });
                assert_eq!(
                    ways_in_range(&lo, &masks, first, span),
                    expect,
                    "{ways} ways, range {first}+{span}"
                );
            }
        }
    }

    /// The replacement victim of a full set is the first way with the oldest stamp.
    #[test]
    fn the_least_recent_way_is_the_first_with_the_oldest_stamp() {
        assert_eq!(least_recent(&[9, 4, 7, 4, 12]), 1);
        assert_eq!(least_recent(&[3]), 0);
        assert_eq!(least_recent(&[8, 8, 8]), 0);
        assert_eq!(least_recent(&[u64::MAX, 5]), 1);
    }
}
