//! An SM's L1 miss-status holding registers (MSHRs): a bounded number of misses in flight.
//!
//! Every line that misses the L1 holds one MSHR from the cycle the L1 sends it on until the
//! line comes back. When all are held, the miss waits for the first to be released, and the
//! wait pushes back on issue: the warp's next instruction issues no earlier than its
//! instruction's longest MSHR wait later ([`super::access`]). Without that bound, loads in
//! flight per warp times resident warps could have thousands of misses out at once.
//!
//! Time order, as for the bandwidth resources ([`super::bandwidth`]): the event loop computes
//! a whole instruction per event, so a miss processed later may arrive earlier than
//! misses already holding registers. A miss gets a register at the first cycle at or after
//! its arrival at which fewer than `capacity` of the holds already granted cover that
//! cycle; holds that start later than it do not delay it. What cannot be taken back is an
//! answer already given: a hold granted earlier that starts inside the new hold keeps its
//! cycle, so for a while more than `capacity` may be held. Such grants are counted
//! ([`MshrPool::overbooked`]).
//!
//! Merging of misses to one line into one register is not modelled: each missing line
//! holds its own (an upper bound on the pressure; the model's caches allocate on the first
//! miss, so a second miss to a line in flight is rare).

/// One SM's MSHRs: the holds (grant, release) not yet retired.
#[derive(Debug, Clone, Default)]
pub struct MshrPool {
    /// Registers; 0 = unbounded (no bookkeeping at all).
    capacity: usize,
    held: Vec<(u64, u64)>,
    /// Scratch for [`MshrPool::acquire`]'s sweep: (cycle, +1 grant / -1 release).
    events: Vec<(u64, i64)>,
    /// Misses that waited for a register, and their summed wait in cycles.
    pub waits: u64,
    pub wait_cycles: u64,
    /// Grants made while a later-starting hold processed earlier was still counted, so
    /// the registers were briefly over-subscribed.
    pub overbooked: u64,
}

impl MshrPool {
    /// A pool of `capacity` registers (0 = unbounded).
    pub fn new(capacity: u32) -> MshrPool {
        MshrPool {
            capacity: capacity as usize,
            ..MshrPool::default()
        }
    }

    /// The cycle at or after `arrival` at which a miss arriving then gets a register.
    /// `floor`: no miss processed later arrives before it (holds released by then are
    /// retired). Call [`MshrPool::hold`] with the grant once the release is known.
    #[inline]
    pub fn acquire(&mut self, arrival: u64, floor: u64) -> u64 {
        if self.capacity == 0 {
            return arrival;
        }
        if self.held.len() >= self.capacity {
            self.held.retain(|&(_, release)| release > floor);
        }
        if self.held.len() < self.capacity {
            return arrival;
        }
        // Sweep the holds' starts and ends after `arrival` in time order: the count of
        // held registers only falls at a release, so the first moment after all events at
        // one cycle with fewer than `capacity` held is the grant. O(n log n) in the holds
        // kept, however far over capacity earlier grants booked them.
        let mut busy = 0usize;
        self.events.clear();
        for &(grant, release) in &self.held {
            if release <= arrival {
                continue;
            }
            if grant <= arrival {
                busy += 1;
            } else {
                self.events.push((grant, 1));
            }
            self.events.push((release, -1));
        }
        let mut at = arrival;
        if busy >= self.capacity {
            self.events.sort_unstable();
            let mut count = busy as i64;
            let mut i = 0;
            while count >= self.capacity as i64 {
                // Never runs dry: every hold counted in `count` has its release queued.
                let cycle = self.events[i].0;
                while i < self.events.len() && self.events[i].0 == cycle {
                    count += self.events[i].1;
                    i += 1;
                }
                at = cycle;
            }
            busy = count as usize;
        }
        let later = self.held.iter().any(|&(grant, _)| grant > at);
        if later && busy + 1 == self.capacity {
            self.overbooked += 1;
        }
        if at > arrival {
            self.waits += 1;
            self.wait_cycles += at - arrival;
        }
        at
    }

    /// Whether a miss may have to wait for a register (a bounded pool).
    #[inline]
    pub fn bounded(&self) -> bool {
        self.capacity != 0
    }

    /// Hold a register from `grant` (what [`MshrPool::acquire`] returned) to `release`.
    #[inline]
    pub fn hold(&mut self, grant: u64, release: u64) {
        if self.capacity != 0 {
            self.held.push((grant, release));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unbounded_never_waits_and_keeps_nothing() {
        let mut p = MshrPool::new(0);
        for t in 0..100 {
            assert_eq!(p.acquire(t, 0), t);
            p.hold(t, t + 1000);
        }
        assert!(p.held.is_empty());
        assert_eq!(p.waits, 0);
    }

    #[test]
    fn a_full_pool_grants_at_the_first_release() {
        let mut p = MshrPool::new(2);
        assert_eq!(p.acquire(10, 10), 10);
        p.hold(10, 100);
        assert_eq!(p.acquire(10, 10), 10);
        p.hold(10, 50);
        assert_eq!(
            p.acquire(12, 10),
            50,
            "both held: waits for the release at 50"
        );
        p.hold(50, 200);
        assert_eq!(p.acquire(60, 10), 100, "held by 10..100 and 50..200");
        p.hold(100, 120);
        assert_eq!((p.waits, p.wait_cycles), (2, 38 + 40));
    }

    /// A miss processed after a later-arriving one is not delayed by it.
    #[test]
    fn an_earlier_arrival_processed_later_is_not_delayed() {
        let mut p = MshrPool::new(1);
        assert_eq!(p.acquire(100, 0), 100);
        p.hold(100, 200);
        assert_eq!(p.acquire(10, 0), 10, "free at 10: the hold starts at 100");
        p.hold(10, 150);
        assert_eq!(
            p.overbooked, 1,
            "10..150 overlaps the hold granted from 100"
        );
        assert_eq!(
            p.acquire(120, 0),
            200,
            "both cover 120; the later ends at 200"
        );
    }

    #[test]
    fn the_floor_retires_released_holds() {
        let mut p = MshrPool::new(1);
        assert_eq!(p.acquire(0, 0), 0);
        p.hold(0, 30);
        assert_eq!(p.acquire(5, 5), 30);
        p.hold(30, 60);
        assert_eq!(p.acquire(61, 61), 61, "both released by the floor");
        assert_eq!(p.held.len(), 0);
    }
}
