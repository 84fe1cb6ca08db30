//! Data side of the model: set-associative tag caches and bandwidth budgets.
//!
//! Timing is data (ChampSim style): a cache lookup answers hit or miss and the caller adds
//! the configured latency; a bandwidth budget is a resource with a "free from" time that a
//! transfer consumes, so queueing delay appears when requests arrive faster than the
//! resource drains them. Budgets serve in arrival order ([`super::bandwidth`]).

use super::config::{CacheSpec, LINE_BYTES};

/// Tags of a set-associative, LRU, write-allocate cache of 128-byte lines.
///
/// Each set keeps its tags in recency order (most recent first), so LRU needs no
/// timestamps: a hit rotates its tag to the front, a miss shifts the set and drops the
/// last (least recent) tag. That halves the state the simulator walks on every line
/// (256 SMs' L1s are megabytes of tags) and, with sets aligned to 64 bytes, an 8- or
/// 16-way set is one host cache line.
#[derive(Debug, Clone)]
pub struct TagCache {
    /// Line number + 1 per way (0 = empty; empty ways sit at the end of a set). 32 bits
    /// cover the largest physical memory a config may declare (`MAX_PHYSICAL_BYTES`).
    tags: Vec<u32>,
    /// Index of set 0 in `tags` (skips to a 64-byte boundary).
    first: usize,
    set_mask: u64,
    ways: usize,
    /// Hit latency in cycles.
    pub latency: u64,
}

/// Host cache-line size the sets are aligned to, in tags.
const ALIGN_TAGS: usize = 64 / std::mem::size_of::<u32>();

impl TagCache {
    /// Build from a validated spec.
    pub fn new(spec: &CacheSpec) -> TagCache {
        let lines = (spec.bytes / LINE_BYTES) as usize;
        let ways = spec.ways as usize;
        let tags = vec![0u32; lines + ALIGN_TAGS];
        let misalign = (tags.as_ptr() as usize / std::mem::size_of::<u32>()) % ALIGN_TAGS;
        TagCache {
            tags,
            first: (ALIGN_TAGS - misalign) % ALIGN_TAGS,
            set_mask: (lines / ways) as u64 - 1,
            ways,
            latency: spec.latency,
        }
    }

    /// Ask the host cache for the set of the line holding `pa` (before the access, so the
    /// fetch overlaps the work in between; changes nothing).
    #[inline(always)]
    pub fn prefetch_set(&self, pa: u64) {
        if let Some(t) = self.tags.get(self.set_start(pa / LINE_BYTES)) {
            super::prefetch::prefetch(t);
        }
    }

    /// Look up the line holding physical address `pa`; a miss allocates it (LRU victim).
    /// Returns whether it hit. Inlined at every call site, where the associativity is
    /// the same on every call and its dispatch below predicts perfectly.
    #[inline(always)]
    pub fn access(&mut self, pa: u64) -> bool {
        let line = pa / LINE_BYTES;
        debug_assert!(line < u32::MAX as u64, "PA beyond MAX_PHYSICAL_BYTES");
        let key = (line + 1) as u32;
        let set = self.set_start(line);
        match self.ways {
            // The common associativities without data-dependent branches: a tag compare
            // that exits at a random way and a shift of random length mispredict on
            // nearly every line.
            8 => recency_update::<8>(&mut self.tags[set..set + 8], key),
            16 => recency_update::<16>(&mut self.tags[set..set + 16], key),
            _ => recency_update_any(&mut self.tags[set..set + self.ways], key),
        }
    }

    /// Index in `tags` of the first way of `line`'s set. The set index is hashed so that
    /// power-of-two strides do not all land in one set.
    #[inline(always)]
    fn set_start(&self, line: u64) -> usize {
        self.first + ((line ^ (line >> 7) ^ (line >> 13)) & self.set_mask) as usize * self.ways
    }
}

/// Find `key` in the recency-ordered `set` and move it to the front (a miss drops the last,
/// least recent, tag); returns whether it hit. Fixed `N`, branch-free past the check of
/// the most recent line on x86-64 (elsewhere the general loop).
#[inline(always)]
fn recency_update<const N: usize>(set: &mut [u32], key: u32) -> bool {
    let set: &mut [u32; N] = set.try_into().expect("set of N ways");
    // The most recent line again (streaming and tiled kernels, nearly every access):
    // nothing moves.
    if set[0] == key {
        return true;
    }
    #[cfg(target_arch = "x86_64")]
    {
        sse2::recency_update(set, key)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        recency_update_any(set, key)
    }
}

/// [`recency_update`]'s compare and shift four ways per SSE2 instruction (x86-64
/// baseline): the scalar loops were a tenth of a `bfs` run's instructions.
#[cfg(target_arch = "x86_64")]
mod sse2 {
    use std::arch::x86_64::*;

    /// `set` has `N` (a multiple of four) ways; `set[0]` is not `key`.
    #[inline(always)]
    pub(super) fn recency_update<const N: usize>(set: &mut [u32; N], key: u32) -> bool {
        debug_assert!(N.is_multiple_of(4) && N <= 32);
        // SAFETY: SSE2 is part of the x86-64 baseline; every load and store stays inside
        // the `N` ways of `set` (four per register).
        unsafe {
            let p = set.as_mut_ptr() as *mut __m128i;
            let k = _mm_set1_epi32(key as i32);
            let mut rows = [_mm_setzero_si128(); 8];
            let mut found = 0u32;
            for (r, row) in rows.iter_mut().enumerate().take(N / 4) {
                *row = _mm_loadu_si128(p.add(r));
                let eq = _mm_castsi128_ps(_mm_cmpeq_epi32(*row, k));
                found |= (_mm_movemask_ps(eq) as u32) << (4 * r);
            }
            // The hit way, or the last way on a miss; ways 1..=w take their predecessor.
            let w = if found != 0 {
                found.trailing_zeros() as i32
            } else {
                N as i32 - 1
            };
            let limit = _mm_set1_epi32(w + 1);
            let mut carry = _mm_setzero_si128();
            for (r, &row) in rows.iter().enumerate().take(N / 4) {
                let shifted = _mm_or_si128(_mm_slli_si128::<4>(row), carry);
                carry = _mm_srli_si128::<12>(row);
                let base = 4 * r as i32;
                let idx = _mm_setr_epi32(base, base + 1, base + 2, base + 3);
                let take = _mm_cmpgt_epi32(limit, idx);
                let v = _mm_or_si128(_mm_and_si128(take, shifted), _mm_andnot_si128(take, row));
                _mm_storeu_si128(p.add(r), v);
            }
            set[0] = key;
            found != 0
        }
    }
}

/// [`recency_update`] for any associativity.
fn recency_update_any(tags: &mut [u32], key: u32) -> bool {
    let (hit, w) = match tags.iter().position(|&t| t == key) {
        Some(w) => (true, w),
        // The last way is the least recently used (or empty).
        None => (false, tags.len() - 1),
    };
    // A plain shift: `rotate_right` calls memmove, slower for a handful of tags.
    for k in (1..=w).rev() {
        tags[k] = tags[k - 1];
    }
    tags[0] = key;
    hit
}

pub use super::bandwidth::{Budget, LinePort};

/// The memory side shared by every SM and walker: each chiplet's memory-side L2 (it
/// caches only its own chiplet's memory, so remote data is not cached at the requester),
/// its HBM channels, and its port on the ring.
#[derive(Debug, Clone)]
pub struct MemSystem {
    l2: Vec<TagCache>,
    channels: Vec<Budget>,
    ring_ports: Vec<Budget>,
    chiplets: u32,
    channels_per_chiplet: u64,
    channel_shift: u32,
    channel_cycles: f64,
    ring_cycles: f64,
    ring_latency: u64,
    dram_latency: u64,
    /// L2 hits and misses, summed over chiplets.
    pub l2_hits: u64,
    pub l2_misses: u64,
    /// The cycle of the event being processed: no request processed later arrives
    /// before it ([`Budget::consume`]).
    pub floor: u64,
}

/// Where a line was served from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineRead {
    /// Cycle the line arrives at the requester.
    pub done: u64,
    /// The line's memory lives on another chiplet.
    pub remote: bool,
}

impl MemSystem {
    /// Build from a validated config.
    pub fn new(cfg: &super::GpuConfig) -> MemSystem {
        let d = cfg.derived();
        let n = cfg.gpu.chiplets as usize;
        let ch = cfg.memory.channels_per_chiplet as usize;
        MemSystem {
            l2: (0..n).map(|_| TagCache::new(&cfg.l2_cache)).collect(),
            channels: vec![Budget::new(cfg.memory.serve_in_arrival_order); n * ch],
            ring_ports: vec![Budget::new(cfg.memory.serve_in_arrival_order); n],
            chiplets: cfg.gpu.chiplets,
            channels_per_chiplet: ch as u64,
            channel_shift: cfg.memory.channel_interleave_bytes.trailing_zeros(),
            channel_cycles: d.channel_cycles_per_line,
            ring_cycles: d.ring_cycles_per_line,
            ring_latency: d.ring_latency,
            dram_latency: cfg.memory.dram_latency,
            l2_hits: 0,
            l2_misses: 0,
            floor: 0,
        }
    }

    /// Ask the host cache for the home L2's set of the line holding `pa` (changes
    /// nothing; see [`TagCache::prefetch_set`]).
    #[inline(always)]
    pub fn prefetch_l2_set(&self, pa: u64) {
        self.l2[self.home(pa) as usize].prefetch_set(pa);
    }

    /// Chiplet whose memory holds `pa` (the PA bits above the 2 MB offset, CLAP Fig. 4).
    #[inline]
    pub fn home(&self, pa: u64) -> u32 {
        ((pa >> crate::addr::CHIPLET_INTERLEAVE_SHIFT) & (self.chiplets as u64 - 1)) as u32
    }

    /// Read (or write) the line holding `pa` for a requester on `chiplet`, starting at
    /// `now`: a remote line crosses the ring (its latency, and the home chiplet's ring port
    /// for the reply); the home L2 answers a hit after its latency, a miss also pays the
    /// DRAM latency and the line's channel.
    #[inline]
    pub fn read_line(&mut self, pa: u64, now: u64, chiplet: u32) -> LineRead {
        let home = self.home(pa);
        let remote = home != chiplet;
        let t = if remote {
            self.cross_ring(home, now)
        } else {
            now
        };
        LineRead {
            done: self.at_home(pa, home, t),
            remote,
        }
    }

    /// A remote line sent at `now` towards chiplet `home`: the cycle it reaches the home
    /// L2 (the ring's latency, then the home ring port's queue).
    #[inline]
    pub fn cross_ring(&mut self, home: u32, now: u64) -> u64 {
        let t = now + self.ring_latency;
        t + self.ring_ports[home as usize].consume(t, self.ring_cycles, self.floor)
    }

    /// The line holding `pa` reaches its home chiplet's L2 at `now`: the cycle its data
    /// is back (an L2 hit after its latency; a miss also pays the DRAM latency and the
    /// line's channel).
    #[inline]
    pub fn at_home(&mut self, pa: u64, home: u32, now: u64) -> u64 {
        let mut t = now;
        t += self.l2[home as usize].latency;
        if self.l2[home as usize].access(pa) {
            self.l2_hits += 1;
        } else {
            self.l2_misses += 1;
            t += self.dram_latency;
            let ch = (pa >> self.channel_shift) % self.channels_per_chiplet;
            let idx = (home as u64 * self.channels_per_chiplet + ch) as usize;
            t += self.channels[idx].consume(t, self.channel_cycles, self.floor);
        }
        t
    }

    /// Lines that arrived at an HBM channel or ring port before a line processed earlier
    /// (served ahead of it, [`super::bandwidth`]).
    pub fn out_of_order(&self) -> u64 {
        self.channels
            .iter()
            .chain(&self.ring_ports)
            .map(|b| b.out_of_order)
            .sum()
    }

    /// Service cycles the HBM channels and ring ports gave beyond their rate
    /// ([`Budget::overbooked_cycles`]) and the queueing they charged.
    pub fn overbooking(&self) -> (f64, f64) {
        self.channels
            .iter()
            .chain(&self.ring_ports)
            .fold((0.0, 0.0), |(o, q), r| {
                (o + r.overbooked_cycles(), q + r.queued_cycles)
            })
    }

    /// Mean queueing delay per line at the HBM channels and at the ring ports, in cycles.
    pub fn queueing(&self) -> (f64, f64) {
        let mean = |bs: &[Budget]| {
            let lines: u64 = bs.iter().map(|b| b.lines).sum();
            let q: f64 = bs.iter().map(|b| b.queued_cycles).sum();
            if lines == 0 {
                0.0
            } else {
                q / lines as f64
            }
        };
        (mean(&self.channels), mean(&self.ring_ports))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn second_access_to_a_line_hits_and_lru_way_is_evicted() {
        let spec = CacheSpec {
            bytes: 2 * 128,
            ways: 2,
            latency: 20,
        };
        let mut c = TagCache::new(&spec); // one set, two ways
        assert!(!c.access(0));
        assert!(c.access(64), "same 128-byte line");
        assert!(!c.access(128));
        assert!(c.access(0)); // line 0 most recent
        assert!(!c.access(256)); // evicts line 1
        assert!(c.access(0));
        assert!(!c.access(128), "line 1 was the LRU victim");
    }

    /// The recency-ordered sets behave exactly as a timestamped LRU cache with the same
    /// set hash, hit for hit (fixed seed; lines drawn from a range a few times the cache),
    /// for the branch-free 8- and 16-way paths and the general one.
    #[test]
    fn recency_order_is_exact_lru() {
        for ways in [4u64, 8, 16] {
            let sets = 64u64;
            let spec = CacheSpec {
                bytes: sets * ways * 128,
                ways: ways as u32,
                latency: 20,
            };
            let mut c = TagCache::new(&spec);
            let mut reference: Vec<Vec<(u64, u64)>> = vec![Vec::new(); sets as usize]; // (line, stamp)
            let mut x = crate::workload::rng::XorShift::new(0x2545_f491_4f6c_dd1d);
            for now in 0..200_000u64 {
                let line = x.next_u64() % (3 * sets * ways);
                let set = &mut reference[((line ^ (line >> 7) ^ (line >> 13)) % sets) as usize];
                let hit = match set.iter_mut().find(|(l, _)| *l == line) {
                    Some(e) => {
                        e.1 = now;
                        true
                    }
                    None => {
                        if set.len() == ways as usize {
                            let lru = (0..set.len()).min_by_key(|&i| set[i].1).expect("full set");
                            set.swap_remove(lru);
                        }
                        set.push((line, now));
                        false
                    }
                };
                assert_eq!(
                    c.access(line * 128 + 5),
                    hit,
                    "{ways} ways, access {now}, line {line}"
                );
            }
        }
    }
}
