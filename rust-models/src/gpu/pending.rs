//! Pages whose data access waits for a late translation, as events of their own.
//!
//! The event loop computes a warp instruction when the warp issues it. A page whose
//! translation is ready soon after (an L1 or unloaded L2 TLB hit) sends its lines to the
//! L1 port, the ring and the HBM channels at once, a few tens of cycles ahead of the
//! loop's clock. A page that needed a walk or a fault would put its lines on those
//! resources hundreds to thousands of cycles ahead, while the loop still has to process
//! other warps' earlier requests: the arrival-order resources then serve the early
//! requests ahead of the late ones without charging the late ones the wait
//! (`bandwidth.rs`, "uncharged queueing"), which favoured whichever policy walks more.
//!
//! The same holds for a remote line that queues at its home chiplet's ring port: its L2
//! and HBM requests would be made as far ahead as the ring's queue is long.
//!
//! Such a page's lines become a [`PendingPage`] (a group of lines at one stage): the loop
//! queues it at the cycle its translation is ready, or at the cycle its first line
//! reaches the home L2, when it goes on in time order with every other request of that
//! cycle. The instruction's completion is then known only when its last group has run:
//! an [`InstrToken`] counts its groups and keeps the latest completion, and names the
//! warp to tell.

/// Where a pending page's lines go on.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) enum Stage {
    /// At the SM's L1 port, one line per cycle from the event's cycle (after a late
    /// translation).
    #[default]
    L1,
    /// At chiplet `home`'s L2, each line at its own arrival cycle (after the ring).
    Home { home: u32 },
}

/// One line of a pending page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct PendingLine {
    pub pa: u64,
    /// When it reaches its stage (`Stage::Home`; unused at `Stage::L1`).
    pub at: u64,
    /// When its L1 MSHR was granted (`Stage::Home`), held until its data is back.
    pub grant: u64,
}

/// A group of one page's lines waiting at one stage.
#[derive(Debug, Default)]
pub(super) struct PendingPage {
    pub token: u32,
    pub sm: u32,
    pub chiplet: u32,
    pub stage: Stage,
    /// In the order they take the L1 port (`Stage::L1`) or arrive (`Stage::Home`).
    pub lines: Vec<PendingLine>,
}

/// Who waits for a pending instruction's completion.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Owner {
    /// Nobody yet (the instruction is being executed).
    Unset,
    /// The warp in this slot: blocked on it, or holding it among its loads in flight.
    Warp(u32),
    /// The instruction faulted on a later page and replays whole; its earlier pages still
    /// access memory (as they did when they issued) but complete nothing.
    Abandoned,
}

/// One warp instruction with pages still pending.
#[derive(Debug, Clone, Copy)]
pub(super) struct InstrToken {
    pub pages_left: u32,
    /// The latest completion of its lines so far.
    pub done: u64,
    pub owner: Owner,
}

/// A completed instruction: its warp's slot, its token and the cycle its last line arrived.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Completed {
    pub warp: u32,
    pub token: u32,
    pub done: u64,
}

/// The pending pages and instruction tokens, in slabs reused without allocating.
#[derive(Debug, Default)]
pub(super) struct Pending {
    pages: Vec<PendingPage>,
    free_pages: Vec<u32>,
    tokens: Vec<InstrToken>,
    free_tokens: Vec<u32>,
    /// Pages the last executed instruction made pending, with their ready cycles: the
    /// event loop queues them.
    pub queued: Vec<(u64, u32)>,
}

impl Pending {
    /// A token for an instruction whose lines so far complete by `done`.
    pub fn new_token(&mut self, done: u64) -> u32 {
        let t = InstrToken {
            pages_left: 0,
            done,
            owner: Owner::Unset,
        };
        match self.free_tokens.pop() {
            Some(i) => {
                self.tokens[i as usize] = t;
                i
            }
            None => {
                self.tokens.push(t);
                self.tokens.len() as u32 - 1
            }
        }
    }

    /// A group of `token`'s instruction's lines that goes on at `stage` from `ready`:
    /// swapped with `lines` (which comes back empty, with the slot's old capacity).
    pub fn add_page(
        &mut self,
        token: u32,
        ready: u64,
        (sm, chiplet): (u32, u32),
        stage: Stage,
        lines: &mut Vec<PendingLine>,
    ) {
        self.tokens[token as usize].pages_left += 1;
        let id = match self.free_pages.pop() {
            Some(i) => i,
            None => {
                self.pages.push(PendingPage::default());
                self.pages.len() as u32 - 1
            }
        };
        self.queued.push((ready, id));
        let p = &mut self.pages[id as usize];
        p.token = token;
        p.sm = sm;
        p.chiplet = chiplet;
        p.stage = stage;
        std::mem::swap(&mut p.lines, lines);
        lines.clear();
    }

    /// The instruction of `token` has issued all its pages; lines not pending complete by
    /// `done`. Its warp is set by [`Pending::own`] or [`Pending::abandon`].
    pub fn issued(&mut self, token: u32, done: u64) {
        let t = &mut self.tokens[token as usize];
        t.done = t.done.max(done);
    }

    /// The warp in `warp` waits for `token`.
    pub fn own(&mut self, token: u32, warp: u32) {
        self.tokens[token as usize].owner = Owner::Warp(warp);
    }

    /// The instruction of `token` replays whole: its pending pages complete nothing.
    pub fn abandon(&mut self, token: u32) {
        self.tokens[token as usize].owner = Owner::Abandoned;
    }

    /// Take page `id` out to run it; give its buffer back with [`Pending::finish_page`].
    pub fn take_page(&mut self, id: u32) -> PendingPage {
        std::mem::take(&mut self.pages[id as usize])
    }

    /// Page `id` ran and its lines completed by `done`: returns the instruction's
    /// completion if it was the instruction's last page and a warp waits for it.
    pub fn finish_page(&mut self, id: u32, page: PendingPage, done: u64) -> Option<Completed> {
        let token = page.token;
        self.pages[id as usize] = page;
        self.free_pages.push(id);
        let t = &mut self.tokens[token as usize];
        t.done = t.done.max(done);
        t.pages_left -= 1;
        if t.pages_left > 0 {
            return None;
        }
        let (owner, done) = (t.owner, t.done);
        self.free_tokens.push(token);
        match owner {
            Owner::Warp(warp) => Some(Completed { warp, token, done }),
            Owner::Abandoned => None,
            Owner::Unset => unreachable!("a page ran before its instruction finished issuing"),
        }
    }

    /// Fetch ahead the slot of page `id`, whose event comes after the next one.
    #[inline(always)]
    pub fn prefetch_slot(&self, id: u32) {
        if let Some(p) = self.pages.get(id as usize) {
            super::prefetch::prefetch(p);
        }
    }

    /// Fetch ahead the lines of page `id`, whose event is next (its slot was fetched one
    /// event ago): they were written when the page went pending, hundreds of events back,
    /// and reading the first of them was a host cache miss on every page's event.
    #[inline(always)]
    pub fn prefetch_lines(&self, id: u32) {
        if let Some(p) = self.pages.get(id as usize) {
            let lines = &p.lines[..p.lines.len().min(8)];
            if !lines.is_empty() {
                super::prefetch::prefetch_all(lines);
            }
        }
    }

    /// Pages and tokens outstanding (0 and 0 once every event has run).
    pub fn outstanding(&self) -> (usize, usize) {
        (
            self.pages.len() - self.free_pages.len(),
            self.tokens.len() - self.free_tokens.len(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_instruction_completes_with_its_last_page_at_its_latest_line() {
        let mut p = Pending::default();
        let tok = p.new_token(100);
        let line = |pa| PendingLine {
            pa,
            at: 0,
            grant: 0,
        };
        p.add_page(tok, 500, (0, 0), Stage::L1, &mut vec![line(0x1000)]);
        p.add_page(tok, 700, (0, 0), Stage::L1, &mut vec![line(0x2000)]);
        p.issued(tok, 120);
        p.own(tok, 7);
        let ids: Vec<u32> = p.queued.drain(..).map(|(_, id)| id).collect();
        let a = p.take_page(ids[0]);
        assert_eq!(a.lines, vec![line(0x1000)]);
        assert_eq!(p.finish_page(ids[0], a, 900), None, "one page left");
        let b = p.take_page(ids[1]);
        assert_eq!(
            p.finish_page(ids[1], b, 800),
            Some(Completed {
                warp: 7,
                token: tok,
                done: 900
            }),
            "the latest line of either page"
        );
        assert_eq!(p.outstanding(), (0, 0));
    }

    #[test]
    fn an_abandoned_instruction_completes_nothing_and_frees_its_token() {
        let mut p = Pending::default();
        let tok = p.new_token(0);
        let mut lines = vec![PendingLine {
            pa: 0x40,
            at: 50,
            grant: 30,
        }];
        p.add_page(tok, 50, (1, 0), Stage::Home { home: 2 }, &mut lines);
        assert!(lines.is_empty(), "the caller's buffer comes back empty");
        p.abandon(tok);
        let (_, id) = p.queued.pop().unwrap();
        let page = p.take_page(id);
        assert_eq!(p.finish_page(id, page, 60), None);
        assert_eq!(p.outstanding(), (0, 0));
        assert_eq!(p.new_token(0), tok, "the token is reused");
    }
}
