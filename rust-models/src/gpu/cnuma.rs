//! Ideal C-NUMA (`cnuma`): reactive page migration driven by measured access counts.
//!
//! C-NUMA (Carrefour / Carrefour-LP, CLAP refs. [28, 34]) watches which node accesses each
//! page and migrates pages towards it at run time; CLAP evaluates an *ideal* C-NUMA whose
//! migrations and TLB shootdowns cost nothing (§5, "Ideal_C-NUMA"), with one page size
//! for the whole application (its weakness per CLAP §3.5: no per-structure choice, and a
//! reactive policy on stable GPU access patterns).
//!
//! Here: the driver places 64 KB pages on first touch (S-64KB), and this service counts,
//! per 64 KB page and chiplet, the 128 B lines the GMMUs translated for it (the access
//! counters C-NUMA samples; the same events the event loop gives every access observer). At
//! the first fault of each epoch of [`EPOCH_CYCLES`], every page some other chiplet
//! accessed more than its home chiplet in the epoch migrates to that chiplet; the counts
//! then restart. A migration is free: no GPU time, the shootdown of the page's TLB
//! entries is applied before the replay, and the page stays mapped throughout.
//!
//! Not modelled: the intermediate page sizes of `Ideal_C-NUMA+inter`, and Carrefour-LP's
//! choice between 64 KB and 2 MB (with 64 KB everywhere, every split it would make is
//! already made). Migrations happen only at faults, where the driver runs: once every
//! page is mapped, placement stays as the last epoch left it.

use super::service::{AccessEvent, FaultContext, FaultReply, MemoryService};
use super::GpuError;
use crate::addr::{ChipletId, Cycle, Va, PAGE_64K};

/// Cycles per migration epoch: 100 000 core cycles, ~88 µs at 1132 MHz. Not in the CLAP
/// paper (Carrefour samples every second on a CPU; a GPU kernel here runs a few ms); a
/// shorter epoch reacts sooner on fewer samples.
pub const EPOCH_CYCLES: u64 = 100_000;

/// First-touch paging plus ideal C-NUMA migration. See the module documentation.
#[derive(Debug, Clone)]
pub struct CnumaService {
    /// Cycles from a fault to its replay (as [`super::service::FirstTouchService`]).
    pub latency: u64,
    chiplets: usize,
    /// First 64 KB page number of the VA span and its page count.
    first_page: u64,
    pages: u64,
    /// Lines translated in the current epoch, per page and chiplet (`page * chiplets + c`).
    counts: Vec<u32>,
    /// Pages with a count in the current epoch.
    touched: Vec<u32>,
    next_epoch: u64,
    migrations: u64,
    epochs: u64,
}

impl CnumaService {
    /// A service for `chiplets` chiplets over the VA span `(first VA, bytes)`.
    pub fn new(latency: u64, chiplets: u32, span: (Va, u64)) -> CnumaService {
        let pages = span.1 / PAGE_64K;
        CnumaService {
            latency,
            chiplets: chiplets as usize,
            first_page: span.0 .0 / PAGE_64K,
            pages,
            counts: vec![0; (pages as usize) * chiplets as usize],
            touched: Vec::new(),
            next_epoch: EPOCH_CYCLES,
            migrations: 0,
            epochs: 0,
        }
    }

    /// Migrate every page accessed more by another chiplet than by its home chiplet in
    /// the epoch that ended; restart the counts.
    fn end_epoch(&mut self, ctx: &mut FaultContext<'_>) -> Result<(), GpuError> {
        self.epochs += 1;
        let n = self.chiplets;
        for &p in &self.touched {
            let row = &mut self.counts[p as usize * n..(p as usize + 1) * n];
            let va = Va((self.first_page + p as u64) * PAGE_64K);
            let (best, &most) = row
                .iter()
                .enumerate()
                .max_by_key(|&(c, &k)| (k, std::cmp::Reverse(c)))
                .unwrap_or((0, &0));
            let home = ctx.mm.page64_home(va);
            let moves = home.is_some_and(|h| most > row[h.0 as usize]);
            row.fill(0);
            if moves && ctx.mm.migrate_page64(va, ChipletId(best as u8))? {
                self.migrations += 1;
                ctx.shootdowns.push((va, Va(va.0 + PAGE_64K)));
            }
        }
        self.touched.clear();
        Ok(())
    }
}

impl MemoryService for CnumaService {
    fn on_access(&mut self, ev: &AccessEvent) {
        let Some(p) = (ev.va.0 / PAGE_64K)
            .checked_sub(self.first_page)
            .filter(|&p| p < self.pages)
        else {
            return;
        };
        let i = p as usize * self.chiplets + ev.chiplet.0 as usize;
        let Some(c) = self.counts.get_mut(i) else {
            return;
        };
        if *c == 0
            && self.counts[p as usize * self.chiplets..(p as usize + 1) * self.chiplets]
                .iter()
                .all(|&k| k == 0)
        {
            self.touched.push(p as u32);
        }
        let c = &mut self.counts[i];
        *c = c.saturating_add(ev.lines);
    }

    fn mappings_complete_at(&self, _fault_at: Cycle, reply: &FaultReply) -> Cycle {
        reply.replay_at
    }

    fn on_fault(&mut self, mut ctx: FaultContext<'_>) -> Result<FaultReply, GpuError> {
        if ctx.now.0 >= self.next_epoch {
            self.end_epoch(&mut ctx)?;
            self.next_epoch = (ctx.now.0 / EPOCH_CYCLES + 1) * EPOCH_CYCLES;
        }
        let outcome = ctx.mm.handle_fault(ctx.va, ctx.chiplet, ctx.rt)?;
        Ok(FaultReply {
            replay_at: Cycle(ctx.now.0 + self.latency),
            outcome: Some(outcome),
        })
    }

    fn report(&self) -> Option<serde_json::Value> {
        Some(serde_json::json!({
            "cnuma_epochs": self.epochs,
            "cnuma_migrations": self.migrations,
            "epoch_cycles": EPOCH_CYCLES,
        }))
    }
}
