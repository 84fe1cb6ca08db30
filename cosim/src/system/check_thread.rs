//! The second engine of a `--hw check` pair on a thread of its own: the system's thread
//! steps the first engine (which serves) and hands each cycle's input and outputs over in
//! batches; this thread steps the second engine on the same inputs and compares. Batches
//! keep the hand-over cost far below a block cycle's (the second engine steps a whole batch
//! in one call: a Verilator model crosses the FFI boundary once per batch), and the
//! emptied batches go back to the system's thread to be filled again; the bounded channel
//! keeps the lag, and the memory it holds, to a few batches. A `--hw check` fault is parked on the run's
//! [`Seat`] (`board.rs` decides which one the run reports); a misprediction (no seat) is
//! returned by the next `push` or `sync`.

use super::board::Seat;
use super::check::Compare;
use super::stream_store;
use super::SendModel;
use mcmvm_models::protocol::Ports;
use mcmvm_protocol::system::BlockFault;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

/// Cycles per hand-over. Not a model constant: only the lag and the hand-over cost
/// depend on it (results do not).
const BATCH: usize = 1024;
/// Batches in flight before the system's thread waits for the checker.
const IN_FLIGHT: usize = 8;

/// Block cycles as the first engine saw them, in order (one hand-over).
struct Batch<I, O> {
    system_cycles: Vec<u64>,
    inputs: Vec<I>,
    firsts: Vec<O>,
    /// The first engine's broken state invariants after a cycle (index into the batch,
    /// name); rare.
    violations: Vec<(usize, String)>,
}

impl<I, O> Batch<I, O> {
    fn new() -> Batch<I, O> {
        Batch {
            system_cycles: Vec::with_capacity(BATCH),
            inputs: Vec::with_capacity(BATCH),
            firsts: Vec::with_capacity(BATCH),
            violations: Vec::new(),
        }
    }

    fn len(&self) -> usize {
        self.system_cycles.len()
    }

    fn clear(&mut self) {
        self.system_cycles.clear();
        self.inputs.clear();
        self.firsts.clear();
        self.violations.clear();
    }
}

enum Message<I, O> {
    Cycles(Batch<I, O>),
    /// Answer once every cycle sent before has been compared.
    Sync(SyncSender<()>),
}

/// What the checker thread tells the system's thread.
#[derive(Default)]
struct Shared {
    failed: AtomicBool,
    fault: Mutex<Option<BlockFault>>,
    compared: AtomicU64,
}

/// The handle the system's thread holds.
pub(super) struct Worker<I: Ports, O: Ports> {
    tx: Option<SyncSender<Message<I, O>>>,
    batch: Batch<I, O>,
    /// Batches the checker has emptied, to fill again.
    emptied: Receiver<Batch<I, O>>,
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
    /// Faults go to the run's board, not back through `push`.
    seated: bool,
}

impl<I: Ports + Send + 'static, O: Ports + Send + 'static> Worker<I, O> {
    pub(super) fn spawn(
        engine: SendModel<I, O>,
        compare: Compare<I, O>,
        seat: Option<Arc<Seat>>,
    ) -> Worker<I, O> {
        let (tx, rx) = sync_channel(IN_FLIGHT);
        let (back, emptied) = sync_channel(IN_FLIGHT + 1);
        let shared = Arc::new(Shared::default());
        let s = shared.clone();
        let seated = seat.is_some();
        let thread = std::thread::Builder::new()
            .name("mcmvm-hw-check".into())
            .spawn(move || check_loop(engine, compare, rx, back, &s, seat.as_deref()))
            .ok();
        let mut w = Worker {
            tx: Some(tx),
            batch: Batch::new(),
            emptied,
            shared,
            thread,
            seated,
        };
        if w.thread.is_none() {
            // No thread to be had: the run cannot be checked, and says so at once.
            w.tx = None;
            *w.fault() = Some(BlockFault::Unavailable {
                block: "check",
                reason: "cannot start the checking thread".into(),
            });
            w.shared.failed.store(true, Ordering::Release);
        }
        w
    }
}

impl<I: Ports, O: Ports> Worker<I, O> {
    fn fault(&self) -> std::sync::MutexGuard<'_, Option<BlockFault>> {
        // A checker that panicked holds no consistent fault; its absence is reported below.
        self.shared
            .fault
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The fault found so far (unless it is parked on the board), or the checker's loss.
    fn found(&self) -> Result<(), BlockFault> {
        if !self.shared.failed.load(Ordering::Acquire) {
            return Ok(());
        }
        let fault = self.fault().clone();
        // The checker's own faults are on the board; a lost checker is not.
        if self.seated && !matches!(fault, None | Some(BlockFault::Unavailable { .. })) {
            return Ok(());
        }
        Err(fault.unwrap_or(BlockFault::Unavailable {
            block: "check",
            reason: "the checking thread stopped".into(),
        }))
    }

    /// One cycle of the first engine and its broken state invariant, if any; a fault the
    /// checker found (at an earlier cycle).
    #[inline]
    pub(super) fn push(
        &mut self,
        system_cycle: u64,
        input: &I,
        first: O,
        violation: Option<String>,
    ) -> Result<(), BlockFault> {
        let b = &mut self.batch;
        if let Some(v) = violation {
            b.violations.push((b.system_cycles.len(), v));
        }
        // Streamed past this core's caches: the checker reads them, this thread never
        // does (`stream_store.rs`).
        stream_store::push_word(&mut b.system_cycles, system_cycle);
        stream_store::push(&mut b.inputs, input);
        stream_store::push(&mut b.firsts, &first);
        if b.len() == BATCH {
            self.send();
            self.found()?;
        }
        Ok(())
    }

    fn send(&mut self) {
        if self.batch.len() == 0 {
            return;
        }
        stream_store::fence();
        let next = self.emptied.try_recv().unwrap_or_else(|_| Batch::new());
        let batch = std::mem::replace(&mut self.batch, next);
        if let Some(tx) = &self.tx {
            if tx.send(Message::Cycles(batch)).is_err() {
                self.lost();
            }
        }
    }

    fn lost(&mut self) {
        self.tx = None;
        self.shared.failed.store(true, Ordering::Release);
    }

    /// Every cycle pushed so far compared; the first fault.
    pub(super) fn sync(&mut self) -> Result<(), BlockFault> {
        self.send();
        let (ack_tx, ack_rx) = sync_channel(1);
        let answered = match &self.tx {
            Some(tx) => tx.send(Message::Sync(ack_tx)).is_ok() && ack_rx.recv().is_ok(),
            None => false,
        };
        if !answered && !self.shared.failed.load(Ordering::Acquire) {
            self.lost();
        }
        self.found()
    }

    /// Cycles compared so far.
    pub(super) fn compared(&self) -> u64 {
        self.shared.compared.load(Ordering::Acquire)
    }
}

impl<I: Ports, O: Ports> Drop for Worker<I, O> {
    fn drop(&mut self) {
        self.tx = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The checker thread: the second engine stepped on every cycle, compared with the first;
/// each batch emptied goes `back`. After the first fault it only answers syncs.
fn check_loop<I: Ports, O: Ports>(
    mut engine: SendModel<I, O>,
    mut compare: Compare<I, O>,
    rx: Receiver<Message<I, O>>,
    back: SyncSender<Batch<I, O>>,
    shared: &Shared,
    seat: Option<&Seat>,
) {
    let mut failed = false;
    let mut seconds = Vec::with_capacity(BATCH);
    while let Ok(msg) = rx.recv() {
        match msg {
            Message::Cycles(mut batch) => {
                if !failed {
                    seconds.clear();
                    let broken = engine.step_batch(&batch.inputs, &mut seconds);
                    if let Some((cycle, f)) = compare_batch(&mut compare, &batch, &seconds, broken)
                    {
                        if let Some(seat) = seat {
                            seat.park(cycle, f.clone());
                        }
                        *shared.fault.lock().unwrap_or_else(|p| p.into_inner()) = Some(f);
                        shared.failed.store(true, Ordering::Release);
                        failed = true;
                    }
                    shared.compared.store(compare.compared, Ordering::Release);
                }
                batch.clear();
                // The system's thread may have enough batches already: then this one goes.
                let _ = back.try_send(batch);
            }
            Message::Sync(ack) => {
                let _ = ack.send(());
            }
        }
    }
}

/// One batch compared cycle by cycle, as if each were stepped and compared in turn: the
/// first fault and its system cycle. `broken`: the second engine's first broken state
/// invariant (index into the batch); the first engine's comes first in its cycle.
fn compare_batch<I: Ports, O: Ports>(
    compare: &mut Compare<I, O>,
    batch: &Batch<I, O>,
    seconds: &[O],
    broken: Option<(usize, String)>,
) -> Option<(u64, BlockFault)> {
    let mut firsts_broken = batch.violations.iter().peekable();
    for (k, &second) in seconds.iter().enumerate() {
        let violation = firsts_broken
            .next_if(|(j, _)| *j == k)
            .map(|(_, v)| (0, v.clone()))
            .or_else(|| {
                broken
                    .as_ref()
                    .filter(|(j, _)| *j == k)
                    .map(|(_, v)| (1, v.clone()))
            });
        let cycle = batch.system_cycles[k];
        if let Err(f) = compare.cycle(
            cycle,
            &batch.inputs[k],
            [batch.firsts[k], second],
            violation,
        ) {
            return Some((cycle, f));
        }
    }
    None
}
