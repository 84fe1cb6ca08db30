//! Counter-based randomness for generators.
//!
//! Every random choice a generator makes is a pure function of (seed, a few indices), so a
//! warp's stream can be regenerated alone and in any order, and no per-warp generator state
//! has to be stored. The mixer is SplitMix64's finaliser (Steele et al., 2014): cheap (a few
//! multiplies) and well distributed, which is all an address generator needs.

/// SplitMix64 finaliser: a bijective 64-bit mix.
#[inline]
pub fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Hash of a seed and two indices.
#[inline]
pub fn hash2(seed: u64, a: u64, b: u64) -> u64 {
    hash2_rest(hash2_prefix(seed, a), b)
}

/// The part of [`hash2`] that depends only on (seed, a): a generator that hashes many `b`
/// under one `a` computes it once.
#[inline]
pub fn hash2_prefix(seed: u64, a: u64) -> u64 {
    mix64(seed ^ mix64(a.wrapping_add(0x9e37_79b9_7f4a_7c15)))
}

/// [`hash2`] from its prefix: `hash2_rest(hash2_prefix(s, a), b) == hash2(s, a, b)`.
#[inline]
pub fn hash2_rest(prefix: u64, b: u64) -> u64 {
    mix64(prefix ^ b)
}

/// Hash of a seed and four indices (kernel, thread block, warp, step).
#[inline]
pub fn hash4(seed: u64, a: u64, b: u64, c: u64, d: u64) -> u64 {
    hash2(hash2(seed, a, b), c, d)
}

/// A uniform float in [0, 1) from a hash.
#[inline]
pub fn unit(h: u64) -> f64 {
    (h >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// A uniform integer in [0, n) from a hash (Lemire's multiply-shift; n > 0).
#[inline]
pub fn below(h: u64, n: u64) -> u64 {
    ((h as u128 * n as u128) >> 64) as u64
}

/// A small sequential generator (xorshift64*) for loops inside one warp's stream, seeded
/// from a hash so that it never starts at zero.
#[derive(Debug, Clone)]
pub struct XorShift(u64);

impl XorShift {
    /// A generator seeded from `seed` (any value; zero is remapped).
    pub fn new(seed: u64) -> Self {
        XorShift(mix64(seed) | 1)
    }
    /// The next 64 random bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    /// A uniform integer in [0, n).
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        below(self.next_u64(), n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn below_stays_in_range_and_covers_it() {
        let mut seen = [false; 7];
        let mut r = XorShift::new(1);
        for _ in 0..1000 {
            let v = r.below(7) as usize;
            seen[v] = true;
        }
        assert!(seen.iter().all(|&s| s));
    }

    #[test]
    fn hashes_differ_per_index() {
        assert_ne!(hash4(1, 0, 0, 0, 1), hash4(1, 0, 0, 1, 0));
        assert_eq!(hash2(5, 1, 2), hash2(5, 1, 2));
    }
}
