//! Generated CSR graphs for BFS and SSSP, and the traversal each kernel sequence follows.
//!
//! The graph is implicit: out-degrees follow a power law (Pareto, shape 1.5, minimum 4,
//! capped at 1024, so the mean is about 11), and each edge's destination is drawn R-MAT
//! style, one biased coin per address bit from the most significant down (probability 0.24
//! of a 1, the column marginal b + d of the classic R-MAT parameters a = 0.57, b = c = 0.19,
//! d = 0.05), so low vertex ids are the in-degree hubs, as in R-MAT. Only the row offsets are
//! stored; an edge's destination and weight are recomputed from (seed, edge index) whenever
//! the traversal or a warp stream needs them. That keeps the generator's memory at a few
//! bytes per vertex, not per edge.
//!
//! The traversal itself is precomputed once (a level per vertex for BFS, a 64-bit mask of
//! active rounds per vertex for SSSP), because which lanes of a warp take which branch in
//! each kernel is what the warp streams must reproduce.

use super::rng::{hash2, hash2_prefix, hash2_rest, mix64, unit};

/// Minimum out-degree.
const MIN_DEGREE: f64 = 4.0;
/// Pareto shape of the out-degree distribution.
const DEGREE_SHAPE: f64 = 1.5;
/// Cap on out-degree (keeps one lane from serialising a whole kernel).
const MAX_DEGREE: u32 = 1024;
/// R-MAT: probability that a destination address bit is 1 (b + d).
const RMAT_ONE: f64 = 0.24;
/// Largest BFS level stored (u8, with 255 = unreached).
pub(crate) const UNREACHED: u8 = u8::MAX;
/// SSSP rounds are tracked in a u64 mask per vertex.
pub(crate) const MAX_SSSP_ROUNDS: u32 = 63;

/// Bit 7 - i set for each byte i of `h` below `c` (c < 128): eight coins of the R-MAT
/// draw at once instead of a loop over the bytes.
#[inline]
fn bytes_below(h: u64, c: u8) -> u8 {
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    debug_assert!(c < 128);
    // Bit 7 of byte i of `t` is set when the byte's low seven bits reach `c`; no byte
    // carries into the next (at most 127 + 127).
    let t = (h & LOW7) + (128 - c as u64) * 0x0101_0101_0101_0101;
    let below = !(h | t) & HIGH;
    // Move bit 7 of byte i to bit 63 - i: the multiplier's terms land on distinct bits.
    ((below >> 7).wrapping_mul(0x8040_2010_0804_0201) >> 56) as u8
}

/// An implicit power-law graph in CSR form.
pub(crate) struct Graph {
    pub n: u32,
    /// Row offsets, `n + 1` entries (the program's 4-byte `row_offsets` array).
    pub offsets: Vec<u32>,
    seed: u64,
    /// Address bits of a vertex id.
    bits: u32,
    /// A destination bit is 1 when a hash byte is below this (RMAT_ONE × 256).
    one_below: u8,
    /// Hash prefixes of the destination bits, one per 8 bits (a vertex id has at most 32),
    /// so a destination costs one mix per byte of coins.
    dest_prefix: [u64; 4],
}

impl Graph {
    /// Generate the degree table of an `n`-vertex graph. `None` when the edge count would
    /// not fit the program's 32-bit row offsets.
    pub fn generate(n: u32, seed: u64) -> Option<Graph> {
        let mut offsets = Vec::with_capacity(n as usize + 1);
        let mut acc: u64 = 0;
        offsets.push(0);
        for v in 0..n {
            let u = unit(hash2(seed, 1, v as u64));
            let d = (MIN_DEGREE * (1.0 - u).powf(-1.0 / DEGREE_SHAPE)).floor();
            acc += (d as u32).min(MAX_DEGREE) as u64;
            offsets.push(u32::try_from(acc).ok()?);
        }
        Some(Graph {
            n,
            offsets,
            seed,
            bits: 32 - (n.max(2) - 1).leading_zeros(),
            one_below: (RMAT_ONE * 256.0) as u8,
            dest_prefix: std::array::from_fn(|i| hash2_prefix(seed, 2 + i as u64)),
        })
    }

    /// Number of edges.
    pub fn m(&self) -> u64 {
        self.offsets[self.n as usize] as u64
    }

    /// First edge of `v` and its out-degree.
    #[inline]
    pub fn edges(&self, v: u32) -> (u64, u32) {
        let s = self.offsets[v as usize];
        (s as u64, self.offsets[v as usize + 1] - s)
    }

    /// Destination of edge `e`: its [`Graph::coins`] modulo `n`.
    #[inline]
    pub fn dest(&self, e: u64) -> u32 {
        let v = self.coins(e);
        // `v` < 2^bits < 2n, so the remainder is at most one subtraction (a 64-bit
        // division by the run-time `n` was a few percent of the generator).
        let n = self.n as u64;
        debug_assert!(v < 2 * n);
        (if v >= n { v - n } else { v }) as u32
    }

    /// The `bits` coins of edge `e`: one per address bit, most significant first, coin i
    /// being byte i % 8 of hash i / 8 compared with `one_below`.
    #[inline(always)]
    fn coins(&self, e: u64) -> u64 {
        let mut v: u64 = 0;
        let mut left = self.bits;
        for &prefix in &self.dest_prefix {
            if left == 0 {
                break;
            }
            let take = left.min(8);
            let coins = bytes_below(hash2_rest(prefix, e), self.one_below);
            v = (v << take) | (coins >> (8 - take)) as u64;
            left -= take;
        }
        v
    }

    /// Weight of edge `e` (1..=64), for SSSP.
    #[inline]
    pub fn weight(&self, e: u64) -> u32 {
        1 + (mix64(self.seed ^ 0x5eed ^ e.wrapping_mul(0x9e37_79b9)) % 64) as u32
    }

    /// BFS level of every vertex from `source` (`UNREACHED` if not reached within 254
    /// levels).
    pub fn bfs_levels(&self, source: u32) -> Vec<u8> {
        let mut level = vec![UNREACHED; self.n as usize];
        let mut frontier = vec![source];
        level[source as usize] = 0;
        let mut depth: u8 = 0;
        while !frontier.is_empty() && depth < UNREACHED - 1 {
            let mut next = Vec::new();
            for &v in &frontier {
                let (s, d) = self.edges(v);
                for e in s..s + d as u64 {
                    let t = self.dest(e);
                    if level[t as usize] == UNREACHED {
                        level[t as usize] = depth + 1;
                        next.push(t);
                    }
                }
            }
            frontier = next;
            depth += 1;
        }
        level
    }

    /// Frontier-based Bellman-Ford from `source`: bit `r` of a vertex's mask is set when it
    /// is active (its distance improved) in round `r`. Relaxation is in place within a
    /// round, as with the atomics of the GPU kernel. Stops after `MAX_SSSP_ROUNDS` rounds.
    pub fn sssp_rounds(&self, source: u32) -> (Vec<u64>, u32) {
        let mut dist = vec![u32::MAX; self.n as usize];
        let mut active = vec![0u64; self.n as usize];
        dist[source as usize] = 0;
        active[source as usize] = 1;
        let mut frontier = vec![source];
        let mut rounds = 0;
        while !frontier.is_empty() && rounds < MAX_SSSP_ROUNDS {
            let bit = 1u64 << (rounds + 1);
            let mut next = Vec::new();
            for &v in &frontier {
                let (s, d) = self.edges(v);
                let dv = dist[v as usize];
                for e in s..s + d as u64 {
                    let t = self.dest(e) as usize;
                    let nd = dv.saturating_add(self.weight(e));
                    if nd < dist[t] {
                        dist[t] = nd;
                        if active[t] & bit == 0 {
                            active[t] |= bit;
                            next.push(t as u32);
                        }
                    }
                }
            }
            frontier = next;
            rounds += 1;
        }
        // Vertices improved in the last round ran out of rounds: they stay marked for the
        // round after, which no kernel executes.
        (active, rounds)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn degrees_follow_a_capped_power_law() {
        let g = Graph::generate(1 << 14, 7).unwrap();
        let mean = g.m() as f64 / g.n as f64;
        assert!((8.0..14.0).contains(&mean), "mean degree {mean}");
        let max = (0..g.n).map(|v| g.edges(v).1).max().unwrap();
        assert!(max > 100 && max <= MAX_DEGREE, "max degree {max}");
    }

    #[test]
    fn eight_coins_at_once_match_a_loop_over_the_bytes() {
        let mut h = 0x1234_5678_9abc_def0u64;
        for _ in 0..10_000 {
            h = mix64(h);
            for c in [0u8, 1, 61, 127] {
                let mut want = 0u8;
                for i in 0..8 {
                    want = (want << 1) | (((h >> (8 * i)) as u8) < c) as u8;
                }
                assert_eq!(bytes_below(h, c), want, "h {h:#x} c {c}");
            }
        }
    }

    #[test]
    fn destinations_are_the_coins_modulo_n() {
        // The draw folds its coin bits into 0..n by one subtraction: the same vertex as
        // `coins % n`, for powers of two and the sizes between them.
        for n in [1u32, 2, 3, 5, 1000, 4096, 4097, 6000, 8191] {
            let g = Graph::generate(n, 5).unwrap();
            for e in 0..g.m().min(20_000) {
                assert_eq!(g.dest(e) as u64, g.coins(e) % n as u64, "n {n} edge {e}");
            }
        }
    }

    #[test]
    fn low_ids_are_in_degree_hubs() {
        let g = Graph::generate(1 << 12, 3).unwrap();
        let mut indeg = vec![0u32; g.n as usize];
        for e in 0..g.m() {
            indeg[g.dest(e) as usize] += 1;
        }
        let low: u32 = indeg[..64].iter().sum();
        let high: u32 = indeg[indeg.len() - 64..].iter().sum();
        assert!(low > 20 * high.max(1), "low {low} high {high}");
    }

    #[test]
    fn bfs_levels_are_consistent_with_edges() {
        let g = Graph::generate(4096, 11).unwrap();
        let lv = g.bfs_levels(0);
        for v in 0..g.n {
            if lv[v as usize] == UNREACHED {
                continue;
            }
            let (s, d) = g.edges(v);
            for e in s..s + d as u64 {
                let t = lv[g.dest(e) as usize];
                assert!(t <= lv[v as usize] + 1, "edge skips a level");
            }
        }
    }
}
