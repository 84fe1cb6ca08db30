//! The UVM batch service's progress watch: a run whose batches keep giving the same faults
//! back stops with [`super::UvmError::Stall`] instead of servicing them for ever
//! (`gpu_service.rs`, `close`).

/// How many batches in a row may make no progress before the run stops as stalled. A
/// batch that moves nothing gives its faults back only when every resident page is this
/// batch's or the last one's (held until accessed, see `close`), and the warps' accesses
/// release those by the next batch; so a correct service repeats it a few times at most.
pub(super) const STALLED_BATCHES: u32 = 1000;

/// Counts the batches in a row that made no progress: moved no page (migrated or evicted)
/// and did not shrink the fault buffer (faults found resident meanwhile shrink it).
#[derive(Debug, Default)]
pub(super) struct StallWatch {
    idle: u32,
}

impl StallWatch {
    /// After a batch that moved `moved` pages, with `before` and `after` faults waiting in
    /// the buffer: the number of idle batches in a row once it reaches [`STALLED_BATCHES`].
    pub(super) fn after_batch(&mut self, moved: usize, before: usize, after: usize) -> Option<u32> {
        if moved > 0 || after < before {
            self.idle = 0;
            return None;
        }
        self.idle += 1;
        (self.idle >= STALLED_BATCHES).then_some(self.idle)
    }
}

#[cfg(test)]
mod tests {
    use super::{StallWatch, STALLED_BATCHES};

    #[test]
    fn a_stall_is_reported_at_the_bound_and_progress_resets_it() {
        let mut w = StallWatch::default();
        for _ in 1..STALLED_BATCHES {
            assert_eq!(w.after_batch(0, 5, 5), None);
        }
        assert_eq!(w.after_batch(0, 5, 5), Some(STALLED_BATCHES));
        assert_eq!(w.after_batch(1, 5, 5), None, "a page moved");
        for _ in 1..STALLED_BATCHES {
            assert_eq!(w.after_batch(0, 5, 6), None, "a fault joined, none served");
        }
        assert_eq!(w.after_batch(0, 5, 4), None, "a fault found resident");
        for _ in 1..STALLED_BATCHES {
            assert_eq!(w.after_batch(0, 3, 3), None);
        }
        assert_eq!(w.after_batch(0, 3, 3), Some(STALLED_BATCHES));
    }
}
