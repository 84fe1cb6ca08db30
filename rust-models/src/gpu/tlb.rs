//! TLBs: one structure per page-size class, probed in parallel (CLAP §3.2 gives each page
//! size its own TLB).
//!
//! An entry covers an aligned *group* of pages of its class and carries a 16-bit mask of
//! the pages in the group it translates. A plain page sets one bit; an intermediate-size
//! region (a FRAG field wider than the page, or a line merged by the TLB coalescing twin,
//! CLAP §4.6) sets several, so one entry covers the whole region. Inside a group every
//! covered page keeps the same VA-to-PA offset, so the PA is rebuilt from the entry by
//! addition — except for entries whose reach exceeds the contiguity of the mapping (the
//! `ideal` policy's 2 MB translation over 64 KB placement), which say so with `exact_pa`.
//!
//! Each entry also carries the cycle its fill completes: a lookup that hits an entry still
//! being filled waits for it, which is how the model merges misses to the same page
//! (an MSHR) without tracking in-flight walks separately.
//!
//! Widening an entry with a later fill (CLAP's same-offset merging, on only where the
//! policy has CLAP's coalescing hardware, [`Tlb::with_merging`]) must not make the new
//! pages usable at the entry's earlier ready cycle, nor delay the pages it already had:
//! the pages a fill added while it is in flight are its *late* pages, usable from the
//! fill's own ready cycle.

use super::config::TlbSpec;
use super::tlb_ways::{candidate_ways, least_recent, ways_in_range};

pub use super::size_class::{SizeClass, CLASSES};

/// What a TLB fill or hit knows about a translation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TlbFill {
    pub class: SizeClass,
    /// Pages of the group this entry translates (bit i = page i of the group).
    pub mask: u16,
    /// PA of the group's first byte, if every covered page keeps the same VA-to-PA offset.
    pub pa_base: Option<u64>,
    /// Cycle the fill completes (for the pages outside `late_mask`).
    pub ready: u64,
    /// Pages of `mask` usable only from `late_ready` (a later fill widened the entry).
    pub late_mask: u16,
    /// Cycle the pages of `late_mask` are usable (>= `ready`; meaningless without any).
    pub late_ready: u64,
}

impl TlbFill {
    /// A fill whose pages are all usable from `ready`.
    pub fn new(class: SizeClass, mask: u16, pa_base: Option<u64>, ready: u64) -> TlbFill {
        TlbFill {
            class,
            mask,
            pa_base,
            ready,
            late_mask: 0,
            late_ready: 0,
        }
    }

    /// The same entry as seen no earlier than cycle `t` (an L1 fill from an L2 hit).
    pub fn not_before(mut self, t: u64) -> TlbFill {
        self.ready = self.ready.max(t);
        self.late_ready = self.late_ready.max(t);
        if self.late_ready <= self.ready {
            self.late_mask = 0;
        }
        self
    }
}

/// A TLB hit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TlbHit {
    pub class: SizeClass,
    /// The PA of the looked-up VA, when the entry can rebuild it.
    pub pa: Option<u64>,
    /// Cycle the entry translates the looked-up page (may be later than the lookup).
    pub ready: u64,
    /// The whole entry, to fill the level above with.
    pub entry: TlbFill,
}

/// What a way holds besides the fields a probe scans (those sit in arrays of their own,
/// [`TlbArray`]).
#[derive(Debug, Clone, Copy)]
struct Entry {
    /// VA >> group_shift (of no meaning in an empty way, whose mask is 0).
    tag: u64,
    pa_base: u64,
    ready: u64,
    exact_pa: bool,
    /// Pages (of the way's mask) usable only from `late_ready`.
    late_mask: u16,
    late_ready: u64,
}

const EMPTY: Entry = Entry {
    tag: 0,
    pa_base: 0,
    ready: 0,
    exact_pa: false,
    late_mask: 0,
    late_ready: 0,
};

impl Entry {
    /// Make the pages `pages` usable from cycle `ready` at the latest, given the way's
    /// current `mask`: never earlier than a fill that brought them, never later for
    /// the pages the entry already had. Returns the new mask.
    fn widen(&mut self, mask: u16, pages: u16, ready: u64) -> u16 {
        let early = mask & !self.late_mask;
        if ready <= self.ready {
            // Usable by the entry's own ready cycle (a little later than the fill's).
            self.late_mask &= !pages;
            return mask | pages;
        }
        let added = pages & !early;
        if added == 0 {
            return mask;
        }
        self.late_ready = if self.late_mask == 0 {
            ready
        } else {
            self.late_ready.max(ready)
        };
        self.late_mask |= added;
        mask | added
    }
}

/// One set-associative (or fully associative) array of one size class, LRU.
///
/// A probe compares the low 32 bits of every way's tag and its page mask at once (SIMD,
/// `tlb_ways.rs`), then confirms the full tag of the candidate: under 64 KB pages mapped
/// one by one, up to sixteen ways share a 1 MB group's tag and differ only in their
/// masks, and a way-by-way scan mispredicted its way through them.
#[derive(Debug, Clone)]
struct TlbArray {
    class: SizeClass,
    set_mask: u64,
    ways: usize,
    /// Low 32 bits of each way's tag.
    tag_lo: Vec<u32>,
    /// Pages of the group each way translates (bit i = page i); 0 for an empty way.
    masks: Vec<u16>,
    /// Recency per way (the lookup or insert count when last used): LRU picks the least.
    stamps: Vec<u64>,
    entries: Vec<Entry>,
    /// Ways holding an entry: an array nothing was installed in (the 4 KB array under a
    /// 64 KB policy) is skipped without a scan.
    occupied: usize,
    /// Widen an entry of the same group and offset instead of taking another way.
    merging: bool,
    /// Inserts that widened an existing entry with new pages.
    merges: u64,
}

impl TlbArray {
    fn new(class: SizeClass, entries: u32, ways: u32) -> TlbArray {
        // ways == 0 means fully associative: one set holding every entry.
        let ways = if ways == 0 { entries } else { ways } as usize;
        let sets = (entries as usize / ways).max(1);
        let n = sets * ways;
        TlbArray {
            class,
            set_mask: sets as u64 - 1,
            ways,
            tag_lo: vec![0; n],
            masks: vec![0; n],
            stamps: vec![0; n],
            entries: vec![EMPTY; n],
            occupied: 0,
            merging: false,
            merges: 0,
        }
    }

    /// First way of the set `tag` maps to.
    #[inline]
    fn set_start(&self, tag: u64) -> usize {
        (tag & self.set_mask) as usize * self.ways
    }

    /// The first way of the set at `s` that holds `tag` with a page in `pages` and
    /// satisfies `also` (in way order, as a scan would find it).
    #[inline(always)]
    fn find(&self, s: usize, tag: u64, pages: u16, also: impl Fn(&Entry) -> bool) -> Option<usize> {
        // The configured associativities get a compare of fixed width (no loop over rows,
        // no per-row bounds checks); any other takes the general scan.
        match self.ways {
            8 => self.find_in::<8>(s, tag, pages, also),
            16 => self.find_in::<16>(s, tag, pages, also),
            32 => self.find_in::<32>(s, tag, pages, also),
            _ => self.find_any(s, tag, pages, also),
        }
    }

    /// [`TlbArray::find`] for sets of exactly `N` (at most 64) ways.
    #[inline(always)]
    fn find_in<const N: usize>(
        &self,
        s: usize,
        tag: u64,
        pages: u16,
        also: impl Fn(&Entry) -> bool,
    ) -> Option<usize> {
        let lo: &[u32; N] = self.tag_lo[s..s + N].try_into().expect("a set of N ways");
        let masks: &[u16; N] = self.masks[s..s + N].try_into().expect("a set of N ways");
        self.confirm(s, candidate_ways(lo, masks, tag as u32, pages), tag, &also)
    }

    /// [`TlbArray::find`] for any set size.
    fn find_any(
        &self,
        s: usize,
        tag: u64,
        pages: u16,
        also: impl Fn(&Entry) -> bool,
    ) -> Option<usize> {
        let lo = &self.tag_lo[s..s + self.ways];
        let masks = &self.masks[s..s + self.ways];
        // Sixty-four ways per compare (one pass for any set of a real TLB).
        let mut base = 0;
        while base < lo.len() {
            let end = (base + 64).min(lo.len());
            let found = candidate_ways(&lo[base..end], &masks[base..end], tag as u32, pages);
            if let Some(w) = self.confirm(s + base, found, tag, &also) {
                return Some(w);
            }
            base = end;
        }
        None
    }

    /// The first of the candidate ways `found` (bit k: way `first + k`) whose full tag is
    /// `tag` and that satisfies `also`.
    #[inline(always)]
    fn confirm(
        &self,
        first: usize,
        mut found: u64,
        tag: u64,
        also: &impl Fn(&Entry) -> bool,
    ) -> Option<usize> {
        while found != 0 {
            let w = first + found.trailing_zeros() as usize;
            found &= found - 1;
            let e = &self.entries[w];
            if e.tag == tag && also(e) {
                return Some(w);
            }
        }
        None
    }

    #[inline]
    fn lookup(&mut self, va: u64, stamp: u64) -> Option<TlbHit> {
        if self.occupied == 0 {
            return None;
        }
        let class = self.class;
        let gs = class.group_shift();
        let tag = va >> gs;
        // Page index inside the group: 0 when the group is a single page.
        let pages_mask = (1u64 << (gs - class.page_shift())) - 1;
        let bit = 1u16 << ((va >> class.page_shift()) & pages_mask);
        let w = self.find(self.set_start(tag), tag, bit, |_| true)?;
        self.stamps[w] = stamp;
        let (e, mask) = (&self.entries[w], self.masks[w]);
        let off = va & ((1u64 << gs) - 1);
        let ready = if e.late_mask & bit != 0 {
            e.late_ready
        } else {
            e.ready
        };
        Some(TlbHit {
            class,
            pa: e.exact_pa.then(|| e.pa_base.wrapping_add(off)),
            ready,
            entry: TlbFill {
                class,
                mask,
                pa_base: e.exact_pa.then_some(e.pa_base),
                ready: e.ready,
                late_mask: e.late_mask,
                late_ready: e.late_ready,
            },
        })
    }

    fn insert(&mut self, va: u64, fill: &TlbFill, stamp: u64) {
        // An entry translating no page would only take a way.
        if fill.mask == 0 {
            return;
        }
        let tag = va >> self.class.group_shift();
        let pa_base = fill.pa_base.unwrap_or(0);
        let exact = fill.pa_base.is_some();
        let s = self.set_start(tag);
        // With merging, the same group with the same offset widens the entry (a later
        // coalesced line adds pages mapped since the last walk).
        let same = |e: &Entry| e.exact_pa == exact && e.pa_base == pa_base;
        if let Some(w) = self
            .merging
            .then(|| self.find(s, tag, u16::MAX, same))
            .flatten()
        {
            let (old, e) = (self.masks[w], &mut self.entries[w]);
            let early = fill.mask & !fill.late_mask;
            let mut mask = e.widen(old, early, fill.ready);
            if fill.late_mask != 0 {
                mask = e.widen(mask, fill.late_mask, fill.late_ready);
            }
            self.merges += (mask != old) as u64;
            self.masks[w] = mask;
            self.stamps[w] = stamp;
            return;
        }
        // Victim: an empty way if any (the first), else the least recently used. A full
        // array (nearly every insertion once warm) has no empty way to look for.
        let (masks, stamps) = (
            &self.masks[s..s + self.ways],
            &self.stamps[s..s + self.ways],
        );
        let empty = if self.occupied == self.masks.len() {
            None
        } else {
            masks.iter().position(|&m| m == 0)
        };
        let victim = s + empty.unwrap_or_else(|| least_recent(stamps));
        if self.masks[victim] == 0 {
            self.occupied += 1;
        }
        self.tag_lo[victim] = tag as u32;
        self.masks[victim] = fill.mask;
        self.stamps[victim] = stamp;
        self.entries[victim] = Entry {
            tag,
            pa_base,
            ready: fill.ready,
            exact_pa: exact,
            late_mask: fill.late_mask & fill.mask,
            late_ready: fill.late_ready,
        };
    }

    fn invalidate(&mut self, start: u64, end: u64) {
        if self.occupied == 0 || end <= start {
            return;
        }
        // An entry overlaps `start..end` exactly when its tag is in `first..=last`.
        let gs = self.class.group_shift();
        let (first, last) = (start >> gs, (end - 1) >> gs);
        let tags = last - first + 1;
        if tags <= self.set_mask {
            // Fewer tags than sets: only their sets can hold them.
            for tag in first..=last {
                let s = self.set_start(tag);
                self.invalidate_ways(s, s + self.ways, first, last);
            }
        } else {
            self.invalidate_ways(0, self.entries.len(), first, last);
        }
    }

    /// Empty the valid ways of `from..to` whose tag is in `first..=last`.
    fn invalidate_ways(&mut self, from: usize, to: usize, first: u64, last: u64) {
        let span = (last - first).min(u32::MAX as u64) as u32;
        let mut base = from;
        while base < to {
            let end = (base + 64).min(to);
            let lo = &self.tag_lo[base..end];
            let mut found = ways_in_range(lo, &self.masks[base..end], first as u32, span);
            while found != 0 {
                let w = base + found.trailing_zeros() as usize;
                found &= found - 1;
                if (first..=last).contains(&self.entries[w].tag) {
                    self.entries[w] = EMPTY;
                    self.masks[w] = 0;
                    self.occupied -= 1;
                }
            }
            base = end;
        }
    }
}

/// The order a lookup probes the arrays (all in parallel in hardware): largest first.
const LOOKUP_ORDER: [SizeClass; CLASSES] = [
    SizeClass::M2,
    SizeClass::M1,
    SizeClass::K512,
    SizeClass::K256,
    SizeClass::K128,
    SizeClass::K64,
    SizeClass::K4,
];

/// Each class's place in [`LOOKUP_ORDER`], indexed by `SizeClass as usize`.
const LOOKUP_RANK: [u8; CLASSES] = {
    let mut rank = [0u8; CLASSES];
    let mut k = 0;
    while k < CLASSES {
        rank[LOOKUP_ORDER[k] as usize] = k as u8;
        k += 1;
    }
    rank
};

/// One TLB level of one SM (L1) or one chiplet (L2): a structure per size class.
#[derive(Debug, Clone)]
pub struct Tlb {
    /// One array per class, indexed by `SizeClass as usize`.
    arrays: [TlbArray; CLASSES],
    /// Bit `k` set when the array of `LOOKUP_ORDER[k]` holds an entry: a lookup reads
    /// only those arrays (each is a few host cache lines apart, and a 256-SM GPU's L1 TLBs
    /// are cold at every lookup), in the same order.
    live: u8,
    stamp: u64,
    /// Lookup latency in cycles.
    pub latency: u64,
}

impl Tlb {
    /// Build from a validated spec.
    pub fn new(spec: &TlbSpec) -> Tlb {
        let entries = |c: SizeClass| match c {
            SizeClass::K4 => spec.entries_4k,
            SizeClass::K64 => spec.entries_64k,
            SizeClass::M2 => spec.entries_2m,
            _ => spec.intermediate_entries(),
        };
        Tlb {
            arrays: SizeClass::ALL.map(|c| TlbArray::new(c, entries(c), spec.ways)),
            live: 0,
            stamp: 0,
            latency: spec.latency,
        }
    }

    /// Turn CLAP's same-offset entry merging on or off (off when built).
    pub fn set_merging(&mut self, on: bool) {
        for a in self.arrays.iter_mut() {
            a.merging = on;
        }
    }

    /// Inserts so far that widened an existing entry (merging on).
    pub fn merges(&self) -> u64 {
        self.arrays.iter().map(|a| a.merges).sum()
    }

    /// Probe every class for `va`; hardware probes them in parallel, so the cost is one
    /// `latency` whatever the outcome.
    #[inline]
    pub fn lookup(&mut self, va: u64) -> Option<TlbHit> {
        self.stamp += 1;
        let stamp = self.stamp;
        // Largest class first: the 2 MB array is the smallest to scan; the intermediate
        // arrays are empty (not read) except under `s128k` … `s1m`.
        let mut live = self.live;
        while live != 0 {
            let c = LOOKUP_ORDER[live.trailing_zeros() as usize];
            live &= live - 1;
            if let Some(h) = self.arrays[c as usize].lookup(va, stamp) {
                return Some(h);
            }
        }
        None
    }

    /// Recount which arrays hold an entry (after an invalidation).
    fn update_live(&mut self) {
        self.live = LOOKUP_ORDER.iter().enumerate().fold(0, |live, (k, &c)| {
            live | (((self.arrays[c as usize].occupied > 0) as u8) << k)
        });
    }

    /// Install a translation for the group holding `va`.
    pub fn insert(&mut self, va: u64, fill: &TlbFill) {
        self.stamp += 1;
        let stamp = self.stamp;
        let c = fill.class as usize;
        self.arrays[c].insert(va, fill, stamp);
        if self.arrays[c].occupied > 0 {
            self.live |= 1 << LOOKUP_RANK[c];
        }
    }

    /// Drop every entry overlapping `[start, end)` (a TLB shootdown).
    pub fn invalidate(&mut self, start: u64, end: u64) {
        for a in self.arrays.iter_mut() {
            a.invalidate(start, end);
        }
        self.update_live();
    }
}

#[cfg(test)]
#[path = "tlb_tests.rs"]
mod tests;
