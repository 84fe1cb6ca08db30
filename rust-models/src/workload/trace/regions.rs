//! Allocations of an external trace, which records raw virtual addresses where mcmvm needs
//! (allocation, byte offset) pairs.
//!
//! Two sources: buffers the trace declares (`cudaMalloc` / `MemcpyHtoD` records of an
//! Accel-Sim `kernelslist.g`), and, for every address outside them, regions derived from
//! the addresses themselves: the touched 4 KB pages, sorted, split wherever two touched
//! pages are more than 2 MB apart (or a declared buffer lies between them). 2 MB because
//! the CUDA allocator hands out 2 MB-aligned chunks: a gap that large is almost surely
//! two allocations, a smaller one almost surely padding inside one.

use super::LineError;
use crate::workload::{AllocIndex, Allocation, LaneOffsets, Lanes, WarpInstr, WARP_LANES};
use std::collections::{HashSet, VecDeque};

pub(crate) const PAGE: u64 = 4096;
/// Touched pages further apart than this start a new derived region.
pub(crate) const GAP: u64 = 2 << 20;

/// A buffer a trace declares.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Declared {
    pub base: u64,
    pub bytes: u64,
    /// `cudaMalloc*` (an allocation) rather than a `MemcpyHtoD` (a copy into one).
    pub malloc: bool,
    pub name: Option<String>,
}

/// An address interval mapped onto one allocation.
#[derive(Debug, Clone, Copy)]
struct Span {
    start: u64,
    end: u64,
    alloc: AllocIndex,
}

/// Pass one: gathers what the warps touch.
pub(crate) struct Touches {
    /// Merged declared buffers, sorted and disjoint, with their names.
    declared: Vec<(Span, String)>,
    /// Per declared buffer, one past the last byte touched (accesses may run past a copy).
    max_end: Vec<u64>,
    /// Touched 4 KB pages outside every declared buffer.
    pages: HashSet<u64>,
    last_page: Option<u64>,
}

impl Touches {
    /// Merge overlapping declarations (a copy into an allocated buffer is that buffer) and
    /// name them: a declared name, else `mallocN` or `memcpyN` in address order.
    pub fn new(mut decl: Vec<Declared>) -> Touches {
        decl.sort_by_key(|d| d.base);
        let mut merged: Vec<(u64, u64, Option<Declared>)> = Vec::new();
        for d in decl.into_iter().filter(|d| d.bytes > 0) {
            let end = d.base.saturating_add(d.bytes);
            match merged.last_mut() {
                Some((_, e, first)) if d.base < *e => {
                    *e = (*e).max(end);
                    // The name comes from an allocation record over a copy record.
                    let better = match first {
                        Some(f) => {
                            d.malloc && (!f.malloc || (f.name.is_none() && d.name.is_some()))
                        }
                        None => true,
                    };
                    if better {
                        *first = Some(d);
                    }
                }
                _ => merged.push((d.base, end, Some(d))),
            }
        }
        let mut taken: HashSet<String> = merged
            .iter()
            .filter_map(|(_, _, d)| d.as_ref().and_then(|d| d.name.clone()))
            .collect();
        let (mut mallocs, mut copies) = (0, 0);
        let mut declared = Vec::with_capacity(merged.len());
        for (start, end, d) in merged {
            let d = d.expect("every merged buffer has a record");
            let name = match d.name {
                Some(n) => n,
                None if d.malloc => fresh("malloc", &mut mallocs, &mut taken),
                None => fresh("memcpy", &mut copies, &mut taken),
            };
            declared.push((
                Span {
                    start,
                    end,
                    alloc: 0,
                },
                name,
            ));
        }
        let max_end = declared.iter().map(|(s, _)| s.end).collect();
        Touches {
            declared,
            max_end,
            pages: HashSet::new(),
            last_page: None,
        }
    }

    /// Record that `elem` bytes at `addr` are accessed.
    pub fn touch(&mut self, addr: u64, elem: u8) {
        let end = addr.saturating_add(elem as u64);
        if let Some(i) = find(&self.declared, addr, |(s, _)| *s) {
            self.max_end[i] = self.max_end[i].max(end);
            return;
        }
        for page in addr / PAGE..=(end - 1) / PAGE {
            // Consecutive lanes mostly share a page: skip the hash for repeats.
            if self.last_page != Some(page) {
                self.pages.insert(page);
                self.last_page = Some(page);
            }
        }
    }

    /// The allocations: declared buffers first (address order), then derived regions
    /// `region0`, `region1`, … in address order.
    pub fn finish(self) -> Result<Regions, LineError> {
        let mut pages: Vec<u64> = self.pages.into_iter().collect();
        pages.sort_unstable();
        let mut derived: Vec<(u64, u64)> = Vec::new();
        for p in pages {
            let start = p * PAGE;
            // The last page of the address space ends at 2^64, which a u64 cannot hold; its
            // byte 2^64 - 1 is never accessed (an access must end inside the space), so
            // ending the region one byte short loses nothing.
            let page_end = start.saturating_add(PAGE);
            match derived.last_mut() {
                Some((_, end))
                    if start - *end <= GAP && !declared_between(&self.declared, *end, start) =>
                {
                    *end = page_end
                }
                _ => derived.push((start, page_end)),
            }
        }
        let total = self.declared.len() + derived.len();
        if total > AllocIndex::MAX as usize + 1 {
            return Err(LineError::rule(format!(
                "the trace needs {total} allocations; mcmvm supports at most {}",
                AllocIndex::MAX as usize + 1
            )));
        }
        let mut taken: HashSet<String> = self.declared.iter().map(|(_, n)| n.clone()).collect();
        let mut allocations = Vec::with_capacity(total);
        let mut declared = Vec::with_capacity(self.declared.len());
        for (i, ((span, name), max_end)) in self.declared.into_iter().zip(self.max_end).enumerate()
        {
            allocations.push(Allocation::new(name, max_end - span.start));
            declared.push(Span {
                alloc: i as AllocIndex,
                ..span
            });
        }
        let mut n = 0;
        let mut spans = Vec::with_capacity(derived.len());
        for (start, end) in derived {
            spans.push(Span {
                start,
                end,
                alloc: allocations.len() as AllocIndex,
            });
            allocations.push(Allocation::new(
                fresh("region", &mut n, &mut taken),
                end - start,
            ));
        }
        Ok(Regions {
            allocations,
            declared,
            derived: spans,
        })
    }
}

/// `prefix` followed by the first number from `*n` on that names no other allocation.
fn fresh(prefix: &str, n: &mut usize, taken: &mut HashSet<String>) -> String {
    loop {
        let name = format!("{prefix}{n}");
        *n += 1;
        if taken.insert(name.clone()) {
            return name;
        }
    }
}

/// Index of the span containing `addr` in sorted disjoint spans.
fn find<T>(spans: &[T], addr: u64, span: impl Fn(&T) -> Span) -> Option<usize> {
    let i = spans
        .partition_point(|s| span(s).start <= addr)
        .checked_sub(1)?;
    (addr < span(&spans[i]).end).then_some(i)
}

/// Whether a declared buffer overlaps the gap `[from, to)` between two touched pages.
fn declared_between(declared: &[(Span, String)], from: u64, to: u64) -> bool {
    // Disjoint and sorted, so the ends are sorted too.
    let i = declared.partition_point(|(s, _)| s.end <= from);
    declared.get(i).is_some_and(|(s, _)| s.start < to)
}

/// The address map of a trace once pass one is done.
pub(crate) struct Regions {
    pub allocations: Vec<Allocation>,
    declared: Vec<Span>,
    derived: Vec<Span>,
}

impl Regions {
    /// The allocation and byte offset of `addr`. Declared buffers win over derived regions,
    /// which may share a partly declared page with them.
    fn locate(&self, addr: u64) -> Option<(AllocIndex, u64)> {
        find(&self.declared, addr, |s| *s)
            .map(|i| self.declared[i])
            .or_else(|| find(&self.derived, addr, |s| *s).map(|i| self.derived[i]))
            .map(|s| (s.alloc, addr - s.start))
    }

    /// The (allocation, offset) of each lane's address, in lane order; on the stack, since
    /// this runs for every instruction streamed.
    fn locate_lanes(&self, addrs: &[u64]) -> Result<[(AllocIndex, u64); WARP_LANES], LineError> {
        if addrs.len() > WARP_LANES {
            return Err(LineError::rule(format!(
                "{} lanes: a warp has 32",
                addrs.len()
            )));
        }
        let mut located = [(0 as AllocIndex, 0u64); WARP_LANES];
        for (slot, &a) in located.iter_mut().zip(addrs) {
            *slot = self
                .locate(a)
                .ok_or_else(|| LineError::rule(format!("address {a:#x} lies in no allocation")))?;
        }
        Ok(located)
    }

    /// Append to `out` the warp instruction(s) of one access: its active lanes' addresses
    /// in lane order, `stride` when the trace gave them as base + stride. Lanes in several
    /// allocations become one instruction per allocation (in order of first lane), as the
    /// coalescer would issue them; the compute cycles go to the first.
    pub fn push(
        &self,
        addrs: &[u64],
        elem: u8,
        write: bool,
        stride: Option<u64>,
        compute_cycles: u32,
        out: &mut VecDeque<WarpInstr>,
    ) -> Result<(), LineError> {
        let located = self.locate_lanes(addrs)?;
        let located = &located[..addrs.len()];
        let mut cycles = compute_cycles;
        let mut done: u64 = 0;
        for (i, &(alloc, first)) in located.iter().enumerate() {
            if done & (1 << i) != 0 {
                continue;
            }
            let mut n = 0;
            for (j, (a, _)) in located.iter().enumerate().skip(i) {
                if *a == alloc {
                    done |= 1 << j;
                    n += 1;
                }
            }
            let lanes = match stride {
                // A monotonic progression's lanes inside one interval are consecutive.
                Some(stride) => Lanes::Strided {
                    offset: first,
                    stride,
                    lanes: n as u8,
                    elem,
                },
                None => Lanes::Gather {
                    offsets: LaneOffsets::from_exact(
                        n,
                        located[i..]
                            .iter()
                            .filter(|(a, _)| *a == alloc)
                            .map(|(_, o)| *o),
                    ),
                    elem,
                },
            };
            out.push_back(WarpInstr {
                alloc,
                write,
                lanes,
                compute_cycles: cycles,
                // A recorded trace says nothing of dependences: every access blocks.
                independent: false,
            });
            cycles = 0;
        }
        Ok(())
    }
}

/// `Some(stride)` when the addresses form a non-negative arithmetic progression of at least
/// two lanes (NVBit lists every lane; a strided access is cheaper to simulate).
pub(crate) fn progression(addrs: &[u64]) -> Option<u64> {
    if addrs.len() < 2 || addrs[1] < addrs[0] {
        return None;
    }
    let s = addrs[1] - addrs[0];
    addrs
        .windows(2)
        .all(|w| w[1].checked_sub(w[0]) == Some(s))
        .then_some(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regions_split_at_large_gaps_and_declared_buffers() {
        let mut t = Touches::new(vec![
            Declared {
                base: 0x10_0000,
                bytes: 100,
                malloc: false,
                name: None,
            },
            Declared {
                base: 0x10_0010,
                bytes: 0x1000,
                malloc: true,
                name: Some("A".into()),
            },
        ]);
        // Inside A, and 2 bytes past its end.
        t.touch(0x10_0000, 4);
        t.touch(0x10_100e, 4);
        // Undeclared, just below A, and 1 MB above: one region across A? No: A splits it.
        t.touch(0x0f_f000, 8);
        t.touch(0x20_0000, 8);
        // 3 MB higher: another region.
        t.touch(0x50_0ff8, 16);
        let r = t.finish().unwrap();
        let names: Vec<&str> = r.allocations.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(names, ["A", "region0", "region1", "region2"]);
        assert_eq!(r.allocations[0].bytes, 0x1012);
        assert_eq!(r.allocations[1].bytes, PAGE);
        assert_eq!(r.allocations[3].bytes, 2 * PAGE);
        assert_eq!(r.locate(0x10_0004), Some((0, 4)));
        assert_eq!(r.locate(0x20_0010), Some((2, 0x10)));
        assert_eq!(r.locate(0x50_1000), Some((3, PAGE)));
        assert_eq!(r.locate(0x90_0000), None);
        let mut out = VecDeque::new();
        r.push(
            &[0x10_0000, 0x20_0000, 0x10_0008],
            4,
            true,
            None,
            7,
            &mut out,
        )
        .unwrap();
        assert_eq!(out.len(), 2);
        assert_eq!(out[0].compute_cycles, 7);
        assert_eq!(out[1].compute_cycles, 0);
        assert_eq!(
            &*match &out[0].lanes {
                Lanes::Gather { offsets, .. } => offsets.clone(),
                l => panic!("{l:?}"),
            },
            &[0, 8]
        );
    }

    #[test]
    fn the_last_page_of_the_address_space_is_a_region() {
        let mut t = Touches::new(Vec::new());
        let top = u64::MAX - 7;
        t.touch(top, 4);
        let r = t.finish().unwrap();
        assert_eq!(r.allocations.len(), 1);
        assert_eq!(r.locate(top), Some((0, PAGE - 8)));
        let mut out = VecDeque::new();
        r.push(&[top, top + 4], 4, false, Some(4), 0, &mut out)
            .unwrap();
        assert_eq!(out.len(), 1);
    }

    #[test]
    fn progressions() {
        assert_eq!(progression(&[8, 12, 16]), Some(4));
        assert_eq!(progression(&[8, 8]), Some(0));
        assert_eq!(progression(&[8]), None);
        assert_eq!(progression(&[8, 4]), None);
        assert_eq!(progression(&[0, 4, 9]), None);
    }
}
