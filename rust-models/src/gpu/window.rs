//! A [`Budget`](super::bandwidth::Budget)'s window: the requests a later-processed request
//! could still arrive before, in arrival order, kept in chunks of at most `CHUNK` slots.
//!
//! At the default scale a saturated ring or L2 TLB port holds hundreds to thousands of
//! requests, and an out-of-order one lands tens to hundreds of slots before the end: in one
//! `Vec` each such insertion moved every slot behind it (`memmove` was 13 % of `dc`/`s4k`).
//! In chunks an insertion moves at most one chunk's slots (a full chunk is split in two
//! first), and the chunks' list moves only when one is split or dropped. Emptied chunks'
//! blocks are kept for reuse, so a request allocates nothing once the window has grown.
//!
//! The finishes are a scan (`max(previous finish, arrival) + cost`, the first's previous
//! being the resource's `free_at`); they are current before the cursor `fresh` and
//! recomputed only when read (see `Budget`).

use std::collections::VecDeque;

/// Slots per chunk: an insertion moves at most this many (2 KB). On `dc`/`s4k` the window's
/// share of the run against the loop's was 1.16 at 16 slots, 1.09 at 32, 0.99–1.00 at 64 and
/// 1.02 at 128: smaller chunks cost more boundaries to walk, larger ones more to move.
const CHUNK: usize = 64;

/// One request in the window: arrival cycle, service cycles, finish (fractional; current
/// only before the window's `fresh` cursor) and the finish it was answered with.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Slot {
    pub arrival: u64,
    pub cost: f64,
    pub finish: f64,
    pub answered: f64,
}

/// A place between slots: before `chunks[chunk][idx]`. Kept normalized (`idx` is below the
/// chunk's length unless it is the last chunk), so places compare as `(chunk, idx)`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord)]
struct Cursor {
    chunk: usize,
    idx: usize,
}

/// One chunk in the window's order: its first slot's arrival (so a search from the end
/// reads only this list), its length and its block of slots. Each block is an allocation
/// of its own: one growing buffer of blocks reallocated and faulted in fresh (huge) pages
/// as windows grew, 3 % of a run in the kernel's page clearing.
#[derive(Debug, Clone)]
struct Head {
    first: u64,
    len: u32,
    block: Box<[Slot; CHUNK]>,
}

/// The slots in arrival order (ties in insertion order), chunk by chunk; every chunk in
/// `heads` holds at least one slot. Emptied chunks' blocks are reused through `free`.
#[derive(Debug, Clone)]
pub(super) struct Window {
    heads: VecDeque<Head>,
    /// Boxed: the blocks move between `heads` and here, not their slots.
    #[allow(clippy::vec_box)]
    free: Vec<Box<[Slot; CHUNK]>>,
    /// The first and last slots' arrivals (`u64::MAX`, 0 when empty), kept beside the
    /// list: most requests retire nothing and arrive last, which these answer without a
    /// host cache miss on the chunks.
    front: u64,
    last: u64,
    /// Slots before it hold current finishes; those from it on are stale.
    fresh: Cursor,
}

/// What [`Window::admit`] did with a request.
pub(super) struct Admitted {
    /// The fractional cycle it starts.
    pub start: f64,
    /// It went before requests already in the window.
    pub out_of_order: bool,
}

impl Default for Window {
    fn default() -> Window {
        Window {
            heads: VecDeque::new(),
            free: Vec::new(),
            front: u64::MAX,
            last: 0,
            fresh: Cursor::default(),
        }
    }
}

const EMPTY: Slot = Slot {
    arrival: 0,
    cost: 0.0,
    finish: 0.0,
    answered: 0.0,
};

impl Window {
    pub fn is_empty(&self) -> bool {
        self.heads.is_empty()
    }

    /// The slots of chunk `c`.
    #[inline]
    fn chunk(&self, c: usize) -> &[Slot] {
        let h = &self.heads[c];
        &h.block[..h.len as usize]
    }

    #[inline]
    fn chunk_mut(&mut self, c: usize) -> &mut [Slot] {
        let h = &mut self.heads[c];
        &mut h.block[..h.len as usize]
    }

    /// A block for a new chunk holding `slots`, before chunk `at` in the order.
    fn new_chunk(&mut self, at: usize, slots: &[Slot]) {
        let mut block = self.free.pop().unwrap_or_else(|| Box::new([EMPTY; CHUNK]));
        block[..slots.len()].copy_from_slice(slots);
        let head = Head {
            first: slots[0].arrival,
            len: slots.len() as u32,
            block,
        };
        self.heads.insert(at, head);
        if at == 0 {
            self.front = slots[0].arrival;
        }
    }

    /// Put a request arriving at `now` with `cost` after every request that arrived at or
    /// before `now`; it starts at the finish before it (`free_at` if first) or `now`.
    #[inline]
    pub fn admit(&mut self, now: u64, cost: f64, free_at: f64) -> Admitted {
        let out_of_order = self.last > now;
        let pos = if out_of_order {
            self.position(now)
        } else {
            self.last = now;
            self.end()
        };
        self.refresh(pos, free_at);
        let before = self.before(pos).map_or(free_at, |s| s.finish);
        let start = before.max(now as f64);
        let finish = start + cost;
        let slot = Slot {
            arrival: now,
            cost,
            finish,
            answered: finish,
        };
        // The slots before `pos` were refreshed and the new finish is current; those
        // behind it start later now (what they answered stands).
        self.fresh = self.put(pos, slot);
        Admitted {
            start,
            out_of_order,
        }
    }

    /// Remove the requests that arrived at or before `floor`, oldest first, adding each
    /// one's final minus answered finish to `late`; `free_at` becomes the last one's finish.
    #[inline]
    pub fn retire(&mut self, floor: u64, free_at: &mut f64, late: &mut f64) {
        if self.front > floor {
            return;
        }
        let mut chunk = 0;
        while chunk + 1 < self.heads.len() && self.heads[chunk + 1].first <= floor {
            chunk += 1;
        }
        // A few slots retire at a time: counted from the front, not bisected.
        let idx = self
            .chunk(chunk)
            .iter()
            .take_while(|s| s.arrival <= floor)
            .count();
        let end = self.norm(Cursor { chunk, idx });
        self.refresh(end, *free_at);
        let mut sum = *late;
        for c in 0..chunk {
            for s in self.chunk(c) {
                sum += s.finish - s.answered;
            }
        }
        for s in &self.chunk(chunk)[..idx] {
            sum += s.finish - s.answered;
        }
        *late = sum;
        *free_at = self.chunk(chunk)[idx - 1].finish;
        self.drop_front(chunk, idx);
    }

    /// Remove the first `chunk` chunks and `idx` slots of the one after them, keeping the
    /// cursor `fresh` (at or after them) on the same slot.
    fn drop_front(&mut self, chunk: usize, idx: usize) {
        let whole = chunk + (idx == self.heads[chunk].len as usize) as usize;
        for h in self.heads.drain(..whole) {
            self.free.push(h.block);
        }
        if self.heads.is_empty() {
            self.fresh = Cursor::default();
            self.front = u64::MAX;
            self.last = 0;
        } else if whole == chunk {
            let h = &mut self.heads[0];
            let slots = &mut h.block[..h.len as usize];
            slots.copy_within(idx.., 0);
            h.len -= idx as u32;
            h.first = slots[0].arrival;
            self.front = h.first;
            self.fresh.chunk -= chunk;
            if self.fresh.chunk == 0 {
                self.fresh.idx -= idx;
            }
        } else {
            self.fresh.chunk -= whole;
            self.front = self.heads[0].first;
        }
    }

    /// Uncharged waiting of the requests in the window: each one's current finish (the scan
    /// from `free_at`) minus its answer, added to `late` in arrival order.
    pub fn overbooked(&self, free_at: f64, mut late: f64) -> f64 {
        let mut finish = free_at;
        for c in 0..self.heads.len() {
            for (idx, s) in self.chunk(c).iter().enumerate() {
                if (Cursor { chunk: c, idx }) >= self.fresh {
                    finish = finish.max(s.arrival as f64) + s.cost;
                } else {
                    finish = s.finish;
                }
                late += finish - s.answered;
            }
        }
        late
    }

    /// Bring the finishes before `upto` up to date.
    ///
    /// `max(finish, arrival) + cost` rounded is `max(finish + cost, arrival + cost)` with
    /// each sum rounded (rounding is monotone), so the same values come out while only the
    /// addition carries the chain from one request to the next; the idle gap is a branch,
    /// not a `max` on that chain (`arrival` as i64: exact, one conversion instruction).
    #[inline]
    fn refresh(&mut self, upto: Cursor, free_at: f64) {
        if self.fresh >= upto {
            return;
        }
        let mut finish = self.before(self.fresh).map_or(free_at, |s| s.finish);
        let Cursor { mut chunk, mut idx } = self.fresh;
        while chunk <= upto.chunk {
            let c = self.chunk_mut(chunk);
            let end = if chunk == upto.chunk {
                upto.idx
            } else {
                c.len()
            };
            for s in &mut c[idx..end] {
                let pushed = finish + s.cost;
                let alone = s.arrival as i64 as f64 + s.cost;
                finish = if alone > pushed { alone } else { pushed };
                s.finish = finish;
            }
            chunk += 1;
            idx = 0;
        }
        self.fresh = upto;
    }

    /// The slot just before `at`, if any.
    #[inline]
    fn before(&self, at: Cursor) -> Option<&Slot> {
        if at.idx > 0 {
            Some(&self.chunk(at.chunk)[at.idx - 1])
        } else {
            at.chunk.checked_sub(1).and_then(|c| self.chunk(c).last())
        }
    }

    /// The place after the last slot.
    #[inline]
    fn end(&self) -> Cursor {
        match self.heads.len() {
            0 => Cursor::default(),
            n => Cursor {
                chunk: n - 1,
                idx: self.heads[n - 1].len as usize,
            },
        }
    }

    /// `at` moved past a chunk's end to the next chunk's start, if there is one.
    #[inline]
    fn norm(&self, at: Cursor) -> Cursor {
        if at.chunk + 1 < self.heads.len() && at.idx == self.heads[at.chunk].len as usize {
            Cursor {
                chunk: at.chunk + 1,
                idx: 0,
            }
        } else {
            at
        }
    }

    /// Where a request arriving at `now` goes when the last slot arrived after it: before
    /// the first later arrival. It lands near the end, so the chunks' first arrivals are
    /// walked from there.
    #[inline]
    fn position(&self, now: u64) -> Cursor {
        let mut chunk = self.heads.len() - 1;
        while chunk > 0 && self.heads[chunk].first > now {
            chunk -= 1;
        }
        let idx = self.chunk(chunk).partition_point(|s| s.arrival <= now);
        self.norm(Cursor { chunk, idx })
    }

    /// Insert `slot` at `at`; returns the place just after it. A full chunk is split in
    /// two first (or, at the window's end, a new chunk started), so no chunk outgrows
    /// [`CHUNK`].
    #[inline]
    fn put(&mut self, at: Cursor, slot: Slot) -> Cursor {
        let Cursor { mut chunk, mut idx } = at;
        if at == self.end() && self.heads.back().is_none_or(|h| h.len as usize == CHUNK) {
            self.new_chunk(self.heads.len(), &[slot]);
            return self.end();
        }
        if self.heads[chunk].len as usize == CHUNK {
            let upper: [Slot; CHUNK / 2] = self.chunk(chunk)[CHUNK / 2..].try_into().unwrap();
            self.heads[chunk].len = (CHUNK / 2) as u32;
            self.new_chunk(chunk + 1, &upper);
            if idx > CHUNK / 2 {
                chunk += 1;
                idx -= CHUNK / 2;
            }
        }
        let h = &mut self.heads[chunk];
        let slots = &mut h.block[..=h.len as usize];
        slots.copy_within(idx..h.len as usize, idx + 1);
        slots[idx] = slot;
        h.len += 1;
        h.first = slots[0].arrival;
        if chunk == 0 {
            self.front = h.first;
        }
        self.norm(Cursor {
            chunk,
            idx: idx + 1,
        })
    }
}

#[cfg(test)]
#[path = "window_tests.rs"]
mod tests;
