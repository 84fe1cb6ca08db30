//! How a warp instruction whose far fault was deferred replays (UVM mode, where the
//! memory service [defers replays](super::service::MemoryService::defers_replays)).
//!
//! A replay re-executes the whole instruction: every page it touches is translated and
//! every line accessed again, from its first line — the SM re-issues the faulted
//! instruction when the driver's replay arrives, and the pages that were already resident
//! hit in the TLBs and caches (the Forest paper's GPGPU-Sim UVM baseline, issue #21).
//!
//! No-progress safety. A whole-instruction replay can lose ground: between two attempts a
//! batch may evict a page the instruction had already reached (its access is repeated
//! too, so nothing holds that page), and under heavy thrashing that could repeat forever.
//! Each replay therefore remembers the furthest line any attempt reached; an attempt that
//! faults before it is a *regression*. After [`MAX_REGRESSIONS`] regressions the replay
//! resumes at that furthest line instead (what the event loop did for every replay before),
//! which cannot lose ground: the lines before it were accessed, the faulting page is the
//! one the batch brought, and the service holds a batch's pages against the next batch's
//! eviction until they are accessed (`uvm::gpu_service`). NVIDIA's driver has the same
//! kind of guarantee (it pins pages it detects thrashing); the bound stands in for it.

use crate::workload::WarpInstr;

impl super::Gpu<'_> {
    /// How the deferred replays went so far.
    pub fn replay_counters(&self) -> ReplayCounters {
        self.replays
    }
}

/// Regressions a replay tolerates before it resumes at its furthest line (not from the
/// paper: an assumption; 0 would be the old resume-at-the-fault semantics). Counted per
/// instruction, see [`ReplayCounters`].
pub const MAX_REGRESSIONS: u32 = 4;

/// A warp instruction waiting to replay.
pub(super) struct Replay {
    /// The instruction (its compute instructions already issued: `compute_cycles` 0).
    pub instr: WarpInstr,
    /// The furthest line (index into the instruction's sorted lines) an attempt reached.
    reached: usize,
    regressions: u32,
}

/// How replays went over a run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct ReplayCounters {
    /// Replay attempts (each re-execution of a deferred instruction).
    pub attempts: u64,
    /// Attempts that faulted before their instruction's furthest line (a page it had
    /// reached was evicted meanwhile).
    pub regressions: u64,
    /// Attempts that resumed at the furthest line after [`MAX_REGRESSIONS`] regressions.
    pub resumed: u64,
}

impl Replay {
    /// `instr` faulted at line `line` of its first attempt.
    pub fn new(instr: WarpInstr, line: usize) -> Replay {
        Replay {
            instr,
            reached: line,
            regressions: 0,
        }
    }

    /// The line the next attempt starts at: 0 (the whole instruction), or the furthest
    /// line once the replay has regressed [`MAX_REGRESSIONS`] times. Counts the attempt.
    pub fn start_line(&self, counters: &mut ReplayCounters) -> usize {
        counters.attempts += 1;
        if self.regressions >= MAX_REGRESSIONS {
            counters.resumed += 1;
            self.reached
        } else {
            0
        }
    }

    /// The attempt faulted again at line `line`.
    pub fn faulted_at(&mut self, line: usize, counters: &mut ReplayCounters) {
        if line < self.reached {
            self.regressions += 1;
            counters.regressions += 1;
        }
        self.reached = self.reached.max(line);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_replay_starts_over_until_it_regressed_too_often() {
        let mut c = ReplayCounters::default();
        let lanes = crate::workload::Lanes::Strided {
            offset: 0,
            stride: crate::addr::PAGE_4K,
            lanes: 32,
            elem: 4,
        };
        let instr = WarpInstr {
            alloc: 0,
            write: false,
            lanes,
            compute_cycles: 0,
            independent: false,
        };
        let mut r = Replay::new(instr, 5);
        assert_eq!(
            r.start_line(&mut c),
            0,
            "a replay redoes the whole instruction"
        );
        r.faulted_at(5, &mut c);
        r.faulted_at(7, &mut c);
        assert_eq!(
            c.regressions, 0,
            "the same or a later line is no regression"
        );
        for k in 1..=MAX_REGRESSIONS {
            assert_eq!(r.start_line(&mut c), 0);
            r.faulted_at(2, &mut c);
            assert_eq!(c.regressions, k as u64);
        }
        assert_eq!(
            r.start_line(&mut c),
            7,
            "then it resumes at the furthest line"
        );
        assert_eq!(c.resumed, 1);
        assert_eq!(c.attempts, MAX_REGRESSIONS as u64 + 2);
    }
}
