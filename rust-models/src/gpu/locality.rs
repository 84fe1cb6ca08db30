//! Which chiplets access each 64 KB page of a structure, and where the page lives: the
//! measurements behind CLAP's chiplet-locality figure (§3.4, Fig. 10: 93.5 % of each
//! structure's range is accessed mainly by one chiplet) and the split of a structure's
//! remote accesses into what its sharing forces and what its placement adds.
//!
//! A remote ratio alone cannot tell a stencil's halo rows (the sharing any placement
//! pays) from a first-touch race that homed a whole page on the neighbour that touched it
//! first, or from a page size too coarse for the chiplets' slices. Counting each page's
//! line accesses per chiplet can: the *floor* at a granularity is the remote ratio left if
//! every page (or region) of that size lived on the chiplet that accesses it most.

use crate::addr::PAGE_64K;
use serde::Serialize;

/// Share of a page's accesses its busiest chiplet must issue for the page to count as
/// accessed "mainly by one chiplet" (the paper's wording; it gives no number).
pub const MAJORITY: f64 = 0.5;

/// Structures smaller than this are left out of the locality mean, as in the paper.
pub const MIN_STRUCTURE_BYTES: u64 = 2 << 20;

/// Per-chiplet line accesses and the home of every 64 KB page of one structure.
#[derive(Debug, Clone, Default)]
pub struct PageLocality {
    chiplets: usize,
    /// `pages × chiplets` line counts, allocated at the first access.
    counts: Vec<u64>,
    /// Home chiplet of each page at its last access (`u8::MAX`: never accessed).
    homes: Vec<u8>,
    pages: usize,
}

impl PageLocality {
    pub fn new(bytes: u64, chiplets: u32) -> PageLocality {
        PageLocality {
            chiplets: chiplets as usize,
            counts: Vec::new(),
            homes: Vec::new(),
            pages: bytes.div_ceil(PAGE_64K) as usize,
        }
    }

    /// `lines` line accesses from `chiplet` to the page at byte `offset` of the structure,
    /// whose frame lives on chiplet `home`.
    #[inline]
    pub fn record(&mut self, offset: u64, chiplet: u32, home: u32, lines: u64) {
        let page = (offset / PAGE_64K) as usize;
        if page >= self.pages || chiplet as usize >= self.chiplets {
            return;
        }
        if self.counts.is_empty() {
            self.counts = vec![0; self.pages * self.chiplets];
            self.homes = vec![u8::MAX; self.pages];
        }
        self.counts[page * self.chiplets + chiplet as usize] += lines;
        self.homes[page] = home.min(u8::MAX as u32 - 1) as u8;
    }

    fn page_counts(&self, page: usize) -> &[u64] {
        &self.counts[page * self.chiplets..(page + 1) * self.chiplets]
    }

    /// The summary, with the floor also at `region_bytes` (the page size the policy gave
    /// the structure; 64 KB or more).
    pub fn summary(&self, region_bytes: u64) -> LocalitySummary {
        let mut s = LocalitySummary::default();
        if self.counts.is_empty() || self.chiplets == 0 {
            return s;
        }
        let (mut total, mut floor64, mut misplaced) = (0u64, 0u64, 0u64);
        for page in 0..self.pages {
            let c = self.page_counts(page);
            let sum: u64 = c.iter().sum();
            if sum == 0 {
                continue;
            }
            s.pages += 1;
            total += sum;
            let (busiest, max) = busiest(c);
            floor64 += sum - max;
            let uniform = c
                .iter()
                .all(|&n| n as f64 >= sum as f64 / (2 * c.len()) as f64);
            if max as f64 >= MAJORITY * sum as f64 || uniform {
                s.local_pages += 1;
            }
            if self.homes[page] as usize != busiest {
                s.misplaced_pages += 1;
                misplaced += sum;
            }
        }
        let per_region = (region_bytes.max(PAGE_64K) / PAGE_64K) as usize;
        let floor_region: u64 = (0..self.pages)
            .step_by(per_region)
            .map(|first| {
                let mut sums = vec![0u64; self.chiplets];
                for page in first..(first + per_region).min(self.pages) {
                    for (acc, n) in sums.iter_mut().zip(self.page_counts(page)) {
                        *acc += n;
                    }
                }
                sums.iter().sum::<u64>() - busiest(&sums).1
            })
            .sum();
        let share = |n: u64| {
            if total == 0 {
                0.0
            } else {
                n as f64 / total as f64
            }
        };
        s.chiplet_locality = if s.pages == 0 {
            0.0
        } else {
            s.local_pages as f64 / s.pages as f64
        };
        s.floor_64k = share(floor64);
        s.floor_region = share(floor_region);
        s.misplaced_line_share = share(misplaced);
        s
    }
}

/// The chiplet with the most accesses (the lowest index of equals) and its count.
fn busiest(counts: &[u64]) -> (usize, u64) {
    counts.iter().enumerate().fold(
        (0, 0),
        |best, (i, &n)| if n > best.1 { (i, n) } else { best },
    )
}

/// What [`PageLocality`] measured of one structure.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct LocalitySummary {
    /// 64 KB pages accessed at all.
    pub pages: u64,
    /// Pages whose busiest chiplet issues at least [`MAJORITY`] of their accesses, or that
    /// every chiplet accesses about evenly (the paper counts GEMM's shared matrix so).
    pub local_pages: u64,
    /// `local_pages / pages`: the paper's chiplet locality of the structure.
    pub chiplet_locality: f64,
    /// Remote ratio if every 64 KB page lived on its busiest chiplet: the sharing that no
    /// 64 KB placement avoids.
    pub floor_64k: f64,
    /// The same with one home per region of the structure's page size.
    pub floor_region: f64,
    /// Pages living elsewhere than on their busiest chiplet, and their share of the
    /// structure's accesses (a first-touch race lost, or a region homed by another page's
    /// first toucher).
    pub misplaced_pages: u64,
    pub misplaced_line_share: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_halo_page_won_by_the_neighbour_is_misplaced_and_the_floor_is_the_halo() {
        // Two pages on 2 chiplets: page 0 is chiplet 0's (30 lines) with a 2-line halo
        // read by chiplet 1; page 1 is chiplet 1's (32 lines) but lives on chiplet 0.
        let mut p = PageLocality::new(2 * PAGE_64K, 2);
        p.record(0, 0, 0, 30);
        p.record(100, 1, 0, 2);
        p.record(PAGE_64K, 1, 0, 32);
        let s = p.summary(PAGE_64K);
        assert_eq!((s.pages, s.local_pages, s.misplaced_pages), (2, 2, 1));
        assert_eq!(s.chiplet_locality, 1.0);
        assert_eq!(s.floor_64k, 2.0 / 64.0);
        assert_eq!(s.floor_region, 2.0 / 64.0);
        assert_eq!(s.misplaced_line_share, 0.5);
        // One 128 KB region: its busiest chiplet is 1 (34 lines), so 30 are remote.
        assert_eq!(p.summary(2 * PAGE_64K).floor_region, 30.0 / 64.0);
    }

    #[test]
    fn an_evenly_shared_page_counts_as_local_and_a_three_way_split_does_not() {
        let mut p = PageLocality::new(2 * PAGE_64K, 4);
        for c in 0..4 {
            p.record(0, c, 0, 10); // GEMM's B: every chiplet alike
        }
        p.record(PAGE_64K, 0, 0, 4);
        p.record(PAGE_64K, 1, 0, 3);
        p.record(PAGE_64K, 2, 0, 3); // busiest 40 %, chiplet 3 never
        let s = p.summary(PAGE_64K);
        assert_eq!((s.pages, s.local_pages), (2, 1));
        assert_eq!(s.chiplet_locality, 0.5);
    }

    #[test]
    fn an_untouched_structure_reports_zeros_and_out_of_range_accesses_are_ignored() {
        let mut p = PageLocality::new(PAGE_64K, 2);
        assert_eq!(p.summary(PAGE_64K), LocalitySummary::default());
        p.record(PAGE_64K, 0, 0, 5);
        p.record(0, 7, 0, 5);
        assert_eq!(p.summary(PAGE_64K).pages, 0);
    }
}
