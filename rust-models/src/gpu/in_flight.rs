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

/// Largest `gpu.loads_in_flight_per_warp` a config may set.
pub const MAX_IN_FLIGHT: usize = 16;

/// Completion cycles of a warp's independent accesses still in flight.
#[derive(Debug, Clone, Default)]
pub(super) struct InFlight {
    done: [u64; MAX_IN_FLIGHT],
    len: u8,
}

impl InFlight {
    /// The cycle at or after `t` at which an instruction may issue: a dependent one
    /// (`independent` false) waits for every access in flight; an independent one waits
    /// for the oldest only when `limit` are in flight. Forgets what completed by then.
    #[inline]
    pub fn issue_at(&mut self, t: u64, independent: bool, limit: usize) -> u64 {
        if self.len == 0 {
            return t;
        }
        let at = if independent {
            let live = &self.done[..self.len as usize];
            if live.iter().filter(|&&d| d > t).count() < limit {
                t
            } else {
                // The earliest completion among those still in flight after `t`.
                live.iter().copied().filter(|&d| d > t).min().unwrap_or(t)
            }
        } else {
            self.drained(t)
        };
        self.retire(at);
        at
    }

    /// Record an independent access that completes at `done`. Call after
    /// [`InFlight::issue_at`] allowed it, so there is room.
    #[inline]
    pub fn push(&mut self, done: u64) {
        let n = self.len as usize;
        if n < MAX_IN_FLIGHT {
            self.done[n] = done;
            self.len += 1;
        }
    }

    /// The cycle every access in flight has completed (at least `t`).
    #[inline]
    pub fn drained(&self, t: u64) -> u64 {
        self.done[..self.len as usize]
            .iter()
            .copied()
            .fold(t, u64::max)
    }

    /// Forget the accesses complete by `t`.
    fn retire(&mut self, t: u64) {
        let mut k = 0;
        for i in 0..self.len as usize {
            if self.done[i] > t {
                self.done[k] = self.done[i];
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
        assert_eq!(f.issue_at(10, true, 2), 10, "nothing in flight");
        f.push(500);
        assert_eq!(f.issue_at(11, true, 2), 11, "one in flight, limit 2");
        f.push(300);
        assert_eq!(
            f.issue_at(12, true, 2),
            300,
            "two in flight: waits for the earlier completion (300), not the first issued"
        );
        f.push(700);
        assert_eq!(f.drained(301), 700);
        assert_eq!(
            f.issue_at(301, false, 2),
            700,
            "a dependent one waits for all"
        );
        assert_eq!(
            f.issue_at(701, true, 2),
            701,
            "and nothing is left in flight"
        );
    }

    #[test]
    fn completed_accesses_do_not_count_against_the_limit() {
        let mut f = InFlight::default();
        f.push(100);
        assert_eq!(f.issue_at(150, true, 1), 150, "the access completed at 100");
        f.push(400);
        assert_eq!(
            f.issue_at(151, true, 1),
            400,
            "limit 1: one in flight blocks"
        );
        assert_eq!(
            f.issue_at(90, false, 1),
            90,
            "nothing left after 400 was retired"
        );
    }
}
