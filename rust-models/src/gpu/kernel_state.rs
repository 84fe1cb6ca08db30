//! The running kernel's scheduling state: its warps, thread blocks and ready queue.

use super::event_loop::{warp_event, Sm};
use super::in_flight::InFlight;
use super::pending::{Completed, Pending};
use super::prefetch::{prefetch, prefetch_addr, prefetch_all};
use super::ready_queue::ReadyQueue;
use super::replay::Replay;
use crate::workload::{WarpInstr, WarpStream, Workload};

/// The fields every event reads come first, in the slot's first two host cache lines
/// (a slot starts on a line, `align(64)`), which the event loop prefetches for the warp
/// after next: a slot is 320 bytes and was read at four scattered lines.
#[repr(C, align(64))]
pub(super) struct Warp<'w> {
    pub stream: WarpStream<'w>,
    /// An instruction whose fault deferred it; issued again (whole, see [`Replay`])
    /// before the stream goes on. Boxed: a fault is rare and the slot's hot lines few.
    pub replay: Option<Box<Replay>>,
    pub sm: u32,
    pub tb: u32,
    /// Its stream has ended; it waits for its last accesses.
    pub ended: bool,
    /// Not queued: it waits for a pending instruction to complete, either the one it
    /// issued last (dependent) or one of its loads in flight ([`IssueAt::Park`]).
    pub parked: bool,
    /// The next instruction, waiting (in the queue) for accesses in flight.
    pub held: Option<WarpInstr>,
    /// Its independent accesses still in flight.
    pub in_flight: InFlight,
    /// The cycle its thread block launched it.
    pub launched: u64,
}

/// Host cache lines of a warp slot the event loop reads on every event.
pub(super) const WARP_HOT_LINES: usize = 2;

pub(super) struct ThreadBlock {
    pub warps_left: u32,
    pub sm: u32,
}

/// Scheduling state of the running kernel.
pub(super) struct KernelState<'w> {
    pub kernel: usize,
    pub warps_per_tb: u32,
    pub heap: ReadyQueue,
    pub warps: Vec<Option<Warp<'w>>>,
    pub free_warps: Vec<u32>,
    pub tbs: Vec<ThreadBlock>,
    pub free_tbs: Vec<u32>,
    /// Next unlaunched block and end of each chiplet's chunk of the grid.
    pub next_tb: Vec<u32>,
    pub end_tb: Vec<u32>,
}

impl<'w> KernelState<'w> {
    /// A pending instruction completed: its warp, if parked on it, is queued at its
    /// completion; one of its loads in flight is known from now.
    pub(super) fn complete(&mut self, c: Completed) {
        let Some(w) = self.warps[c.warp as usize].as_mut() else {
            return;
        };
        w.in_flight.resolve(c.token, c.done);
        if w.parked {
            w.parked = false;
            self.heap.push(c.done, warp_event(c.warp as usize));
        }
    }

    /// Fetch ahead: the slot of the warp or pending page after next, and the generator
    /// state and SM of the next warp, or the lines of the next page (whose slot was
    /// fetched one event ago).
    #[inline(always)]
    pub(super) fn prefetch_upcoming(&self, sms: &[Sm], pending: &Pending) {
        let [next, after] = self.heap.upcoming();
        match after {
            Some(a) if a & 1 == 0 => {
                let slot: *const Option<Warp> = &self.warps[(a >> 1) as usize];
                for line in 0..WARP_HOT_LINES {
                    prefetch_addr(slot.cast::<u8>().wrapping_add(64 * line));
                }
            }
            Some(a) => pending.prefetch_slot(a >> 1),
            None => {}
        }
        match next {
            Some(n) if n & 1 == 0 => {
                if let Some(w) = &self.warps[(n >> 1) as usize] {
                    prefetch_all(&*w.stream);
                    prefetch(&sms[w.sm as usize]);
                }
            }
            Some(n) => pending.prefetch_lines(n >> 1),
            None => {}
        }
    }

    /// Launch the chiplet's next thread block (if any is left) on `sm` at cycle `t`.
    pub(super) fn launch_next(
        &mut self,
        workload: &'w dyn Workload,
        chiplet: u32,
        sm: u32,
        t: u64,
        sms: &mut [Sm],
    ) {
        let c = chiplet as usize;
        if self.next_tb[c] >= self.end_tb[c] {
            return;
        }
        let tb = self.next_tb[c];
        self.next_tb[c] += 1;
        let block = ThreadBlock {
            warps_left: self.warps_per_tb,
            sm,
        };
        let slot = match self.free_tbs.pop() {
            Some(i) => {
                self.tbs[i as usize] = block;
                i
            }
            None => {
                self.tbs.push(block);
                self.tbs.len() as u32 - 1
            }
        };
        sms[sm as usize].resident_tbs += 1;
        for w in 0..self.warps_per_tb {
            let warp = Warp {
                stream: workload.warp_stream(self.kernel, tb, w),
                sm,
                tb: slot,
                replay: None,
                in_flight: InFlight::default(),
                held: None,
                ended: false,
                parked: false,
                launched: t,
            };
            let ws = match self.free_warps.pop() {
                Some(i) => {
                    self.warps[i as usize] = Some(warp);
                    i
                }
                None => {
                    self.warps.push(Some(warp));
                    self.warps.len() as u32 - 1
                }
            };
            self.heap.push(t, warp_event(ws as usize));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The prefetched lines hold what every event reads (a layout change that moved a
    /// field out would only slow the loop down, so it is checked here).
    #[test]
    fn an_events_fields_sit_in_the_slots_prefetched_lines() {
        assert_eq!(std::mem::align_of::<Option<Warp>>(), 64);
        let in_flight = std::mem::offset_of!(Warp, in_flight);
        assert!(in_flight + super::super::in_flight::HOT_BYTES <= 64 * WARP_HOT_LINES);
        assert!(std::mem::offset_of!(Warp, held) < in_flight);
    }
}
