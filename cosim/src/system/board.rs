//! Which fault a `--hw check` run reports: the earliest over every checked block instance
//! of the run, ordered by system cycle and then by instance (creation order), the same on
//! every run.
//!
//! Each instance checks on a thread of its own, fed in batches ([`super::check_thread`]), so
//! the checkers find their faults in no fixed order: a busy instance fills its batches and
//! fails at once, a quiet one holds an earlier fault in a half-full batch for a long time.
//! Reporting whichever fails first blamed a different instance on every run. So:
//!
//! 1. A fault is *parked* here, never returned at once; [`Seat::horizon`] (the earliest
//!    parked system cycle) is the one word a passing run reads per block cycle.
//! 2. While a fault is parked, an instance stepped at a system cycle at or past the horizon
//!    waits for its checker ([`Seat::checked`]): every cycle of it up to there is then
//!    checked, and any fault it holds is parked too (the horizon can only move earlier).
//! 3. The instance whose fault is earliest returns it once every other instance is
//!    *decided* — it has a fault of its own, is checked up to the horizon, or has been
//!    synced — and only it: the system names the instance that returns a fault.
//! 4. [`SystemEngine::sync`](mcmvm_protocol::system::SystemEngine::sync) (a run's end)
//!    decides the instance synced, and the earliest fault's instance returns it from its
//!    own sync even if an instance synced after it is undecided, so a fault is never lost.
//!
//! The instances of one run are those built on one thread (the system builds and steps all
//! of a run's blocks on its thread; a sweep runs several runs at once, each on its own).

use mcmvm_protocol::system::BlockFault;
use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};

/// No fault parked.
pub(super) const NO_FAULT: u64 = u64::MAX;

/// One checked block instance of the run.
struct Member {
    /// Every cycle of the instance up to this system cycle has been checked.
    checked: u64,
    /// Synced since its last cycle (the end of a run).
    synced: bool,
    /// The instance's earliest fault and its system cycle: every earlier cycle of the
    /// instance was checked and clean.
    fault: Option<(u64, BlockFault)>,
    /// Dropped instances no longer hold up or win a report.
    alive: bool,
}

impl Member {
    fn decided(&self, horizon: u64) -> bool {
        !self.alive || self.synced || self.fault.is_some() || self.checked >= horizon
    }
}

/// The checked block instances of one run.
pub(super) struct Board {
    horizon: AtomicU64,
    members: Mutex<Vec<Member>>,
}

thread_local! {
    /// The board of the run being built on this thread; a new one once every instance of
    /// the last run is dropped.
    static RUN: RefCell<Weak<Board>> = const { RefCell::new(Weak::new()) };
}

/// One instance's place on its run's board.
pub(super) struct Seat {
    board: Arc<Board>,
    id: usize,
}

impl Seat {
    /// A seat on the board of the run being built on this thread.
    pub(super) fn join() -> Arc<Seat> {
        let board = RUN.with(|run| {
            let mut run = run.borrow_mut();
            run.upgrade().unwrap_or_else(|| {
                let b = Arc::new(Board {
                    horizon: AtomicU64::new(NO_FAULT),
                    members: Mutex::new(Vec::new()),
                });
                *run = Arc::downgrade(&b);
                b
            })
        });
        let id = {
            let mut m = lock(&board);
            m.push(Member {
                checked: 0,
                synced: false,
                fault: None,
                alive: true,
            });
            m.len() - 1
        };
        Arc::new(Seat { board, id })
    }

    /// The earliest parked fault's system cycle, [`NO_FAULT`] while the run passes.
    #[inline]
    pub(super) fn horizon(&self) -> u64 {
        // Relaxed: a fault parked by another thread may be seen a few cycles late, which
        // only delays the report (step 2 waits for the checker before deciding anything).
        self.board.horizon.load(Ordering::Relaxed)
    }

    /// This instance's fault at `system_cycle`, kept if earlier than the one it has.
    pub(super) fn park(&self, system_cycle: u64, fault: BlockFault) {
        let mut m = lock(&self.board);
        let me = &mut m[self.id];
        if me.fault.as_ref().is_none_or(|(c, _)| system_cycle < *c) {
            me.fault = Some((system_cycle, fault));
        }
        self.board
            .horizon
            .fetch_min(system_cycle, Ordering::Release);
    }

    /// Every cycle of this instance up to `system_cycle` is checked.
    pub(super) fn checked(&self, system_cycle: u64) {
        let mut m = lock(&self.board);
        let me = &mut m[self.id];
        me.checked = me.checked.max(system_cycle);
        me.synced = false;
    }

    /// Every cycle of this instance so far is checked, and the run is ending.
    pub(super) fn synced(&self) {
        lock(&self.board)[self.id].synced = true;
    }

    /// The run's fault, if it is this instance's to report now (module docs, steps 3–4).
    pub(super) fn verdict(&self, at_sync: bool) -> Result<(), BlockFault> {
        let m = lock(&self.board);
        let earliest = m
            .iter()
            .enumerate()
            .filter(|(_, mem)| mem.alive)
            .filter_map(|(id, mem)| mem.fault.as_ref().map(|(c, f)| ((*c, id), f)))
            .min_by_key(|(key, _)| *key);
        match earliest {
            Some(((cycle, id), f))
                if id == self.id && (at_sync || m.iter().all(|mem| mem.decided(cycle))) =>
            {
                Err(f.clone())
            }
            _ => Ok(()),
        }
    }
}

impl Drop for Seat {
    fn drop(&mut self) {
        lock(&self.board)[self.id].alive = false;
    }
}

fn lock(board: &Board) -> MutexGuard<'_, Vec<Member>> {
    // A checker that panicked mid-update leaves whole members behind (each field is set
    // in one store), so the board stays usable.
    board
        .members
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}
