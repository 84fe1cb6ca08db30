//! Memory-level parallelism of one warp: the accesses it has issued and not yet waited for.
//!
//! A warp does not wait for a load at issue; it waits where an instruction depends on
//! earlier loads (their values form its address, or a store writes them). The workload
//! marks that dependence per instruction ([`WarpInstr::independent`](crate::workload::WarpInstr)):
//! an *independent* instruction issues at once and the warp goes on to its next one; a
//! *dependent* one first waits for every access in flight and then blocks the warp until it
//! completes itself (what every instruction did before the flag existed). At most
//! `gpu.loads_in_flight_per_warp` independent accesses are in flight per warp; one more
//! waits for the oldest (the scoreboard's back-pressure on issue). A limit of 1 keeps
//! every warp blocking.

//!
//! An access whose page waits for a walk completes only when its pending page has run
//! (`pending.rs`): until then it is in flight with its completion *unknown*, named by its
//! instruction's token. A dependent instruction, or a warp's end, waits for such an access
//! by parking the warp until the access completes ([`IssueAt::Park`]). An independent one
//! at the limit waits for the earliest *known* completion when there is one: an unknown
//! one completing earlier does not wake it sooner (a warp has one queue entry).

/// Largest `gpu.loads_in_flight_per_warp` a config may set.
pub const MAX_IN_FLIGHT: usize = 16;

/// A completion not known yet.
const UNKNOWN: u64 = u64::MAX;

/// Completion cycles of a warp's independent accesses still in flight.
///
/// `len` first and the tokens last (`repr(C)`): with the default two loads in flight, what
/// an issue reads is in one host cache line.
#[derive(Debug, Clone, Default)]
#[repr(C)]
pub(super) struct InFlight {
    len: u8,
    done: [u64; MAX_IN_FLIGHT],
    /// The pending instruction's token of an entry whose completion is unknown.
    token: [u32; MAX_IN_FLIGHT],
}

/// Bytes from an `InFlight`'s start that an issue with two loads in flight reads.
#[cfg(test)]
pub(super) const HOT_BYTES: usize = std::mem::offset_of!(InFlight, done) + 2 * 8;

/// When an instruction may issue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum IssueAt {
    /// At this cycle.
    At(u64),
    /// When an access whose completion is unknown completes.
    Park,
}

impl InFlight {
    /// When, at or after `t`, an instruction may issue: a dependent one (`independent`
    /// false) waits for every access in flight; an independent one waits for the oldest
    /// only when `limit` are in flight. Forgets what completed by then.
    #[inline]
    pub fn issue_at(&mut self, t: u64, independent: bool, limit: usize) -> IssueAt {
        if self.len == 0 {
            return IssueAt::At(t);
        }
        let at = if independent {
            let live = &self.done[..self.len as usize];
            if live.iter().filter(|&&d| d > t).count() < limit {
                t
            } else {
                // The earliest known completion among those still in flight after `t`.
                match live
                    .iter()
                    .copied()
                    .filter(|&d| d > t && d != UNKNOWN)
                    .min()
                {
                    Some(d) => d,
                    None => return IssueAt::Park,
                }
            }
        } else {
            match self.drained(t) {
                IssueAt::At(d) => d,
                IssueAt::Park => return IssueAt::Park,
            }
        };
        self.retire(at);
        IssueAt::At(at)
    }

    /// Record an independent access that completes at `done`. Call after
    /// [`InFlight::issue_at`] allowed it, so there is room.
    #[inline]
    pub fn push(&mut self, done: u64) {
        self.push_entry(done, 0);
    }

    /// Record an independent access whose completion the pending instruction `token`
    /// will tell ([`InFlight::resolve`]).
    pub fn push_pending(&mut self, token: u32) {
        self.push_entry(UNKNOWN, token);
    }

    #[inline]
    fn push_entry(&mut self, done: u64, token: u32) {
        let n = self.len as usize;
        if n < MAX_IN_FLIGHT {
            self.done[n] = done;
            self.token[n] = token;
            self.len += 1;
        }
    }

    /// The pending instruction `token` completed at `done`.
    pub fn resolve(&mut self, token: u32, done: u64) {
        let n = self.len as usize;
        if let Some(i) = (0..n).find(|&i| self.done[i] == UNKNOWN && self.token[i] == token) {
            self.done[i] = done;
        }
    }

    /// When every access in flight has completed (at least `t`).
    #[inline]
    pub fn drained(&self, t: u64) -> IssueAt {
        let last = self.done[..self.len as usize]
            .iter()
            .copied()
            .fold(t, u64::max);
        if last == UNKNOWN {
            IssueAt::Park
        } else {
            IssueAt::At(last)
        }
    }

    /// Forget the accesses complete by `t`.
    fn retire(&mut self, t: u64) {
        let mut k = 0;
        for i in 0..self.len as usize {
            if self.done[i] > t {
                self.done[k] = self.done[i];
                self.token[k] = self.token[i];
                k += 1;
            }
        }
        self.len = k as u8;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn independent_loads_overlap_up_to_the_limit_then_wait_for_the_oldest() {
        let mut f = InFlight::default();
        assert_eq!(
            f.issue_at(10, true, 2),
            IssueAt::At(10),
            "nothing in flight"
        );
        f.push(500);
        assert_eq!(
            f.issue_at(11, true, 2),
            IssueAt::At(11),
            "one in flight, limit 2"
        );
        f.push(300);
        assert_eq!(
            f.issue_at(12, true, 2),
            IssueAt::At(300),
            "two in flight: waits for the earlier completion (300), not the first issued"
        );
        f.push(700);
        assert_eq!(f.drained(301), IssueAt::At(700));
        assert_eq!(
            f.issue_at(301, false, 2),
            IssueAt::At(700),
            "a dependent one waits for all"
        );
        assert_eq!(
            f.issue_at(701, true, 2),
            IssueAt::At(701),
            "and nothing is left in flight"
        );
    }

    #[test]
    fn completed_accesses_do_not_count_against_the_limit() {
        let mut f = InFlight::default();
        f.push(100);
        assert_eq!(
            f.issue_at(150, true, 1),
            IssueAt::At(150),
            "the access completed at 100"
        );
        f.push(400);
        assert_eq!(
            f.issue_at(151, true, 1),
            IssueAt::At(400),
            "limit 1: one in flight blocks"
        );
        assert_eq!(
            f.issue_at(90, false, 1),
            IssueAt::At(90),
            "nothing left after 400 was retired"
        );
    }

    #[test]
    fn an_unknown_completion_parks_what_must_wait_for_it() {
        let mut f = InFlight::default();
        f.push_pending(3);
        assert_eq!(
            f.issue_at(10, true, 2),
            IssueAt::At(10),
            "room for one more"
        );
        f.push(200);
        assert_eq!(
            f.issue_at(11, true, 2),
            IssueAt::At(200),
            "at the limit: the known completion"
        );
        f.push_pending(4);
        assert_eq!(f.issue_at(201, true, 2), IssueAt::Park, "both unknown");
        assert_eq!(f.drained(201), IssueAt::Park);
        f.resolve(4, 650);
        assert_eq!(f.issue_at(201, true, 2), IssueAt::At(650));
        assert_eq!(
            f.issue_at(651, false, 2),
            IssueAt::Park,
            "3 is still unknown"
        );
        f.resolve(3, 900);
        assert_eq!(f.issue_at(651, false, 2), IssueAt::At(900));
        assert_eq!(f.drained(901), IssueAt::At(901), "nothing left");
    }
}
