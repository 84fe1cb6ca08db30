//! Reference monitor of the Access Time Tracker, from `rtl/src/access_time_tracker.md`
//! alone.
//!
//! # Model (my reading of the README)
//! Per slot: valid, range, timer, interval counter, cease bit and a last-touch stamp (the
//! README's age matrix orders valid slots exactly like "touched later", so a stamp per slot
//! is an equivalent state for the ports). Output registers `rec_*` / `irq_*`. One cycle,
//! in the README's order:
//! 1. the lowest valid slot with `start <= vpn <= end` (table at the start of the cycle);
//! 2. its timer advances unless saturated; the interval counter advances with it and wraps
//!    to 0 on reaching `profiling_threshold` (the wrap is the interrupt condition); the
//!    record carries the timer *after* the access (the saturated value when it could not
//!    advance);
//! 3. driver writes after the access, per slot: register, then cease, then remove;
//! 4. interrupt when the interval wrapped, the cease bit was clear and no driver write
//!    (register, remove or cease) names the hit slot this cycle;
//! 5. touches: the access hit, then the register (newer);
//! 6. `oldest_*` from the stored state (so it is one cycle behind the inputs like the rest).
//!
//! Readings where the README leaves room:
//! * Object numbers `>= objects` are ignored for `rm_obj` and `cease_obj` too (the README
//!   says so for `reg_obj` only).
//! * The record of an access is emitted even when a driver write to the same slot in the
//!   same cycle overwrites or removes the slot (the match uses the table at the start of
//!   the cycle and the writes come "after the access").
//! * Power-on state equals the reset state (all slots invalid, output registers 0); the
//!   README states it for the coalescer, not for this block.
//!
//! Under `recency = "tree-plru"` (README, "Option: tree pseudo-LRU") `oldest_*` comes from a
//! tree of "older half" bits instead, kept here per level and position (level `l` has the
//! nodes of width `32 >> l`), walked from the whole table down.
//!
//! Every output is predicted exactly.

use crate::coverage::{bins, Coverage, Covered};
use crate::{bits, compare, Monitor, Violation};
use mcmvm_protocol::config::{AttConfig, AttRecency};
use mcmvm_protocol::protocol::{AttIn, AttOut};

#[derive(Debug, Clone, Copy, Default)]
struct Slot {
    valid: bool,
    start: u64,
    end: u64,
    timer: u64,
    interval: u64,
    cease: bool,
    /// Value of the monitor's touch counter at the slot's last touch.
    touched: u64,
    /// Cycle of the last register of this slot (for the violation text).
    registered: u64,
}

/// What the previous cycle did: only used to explain a violation.
#[derive(Debug, Clone, Copy, Default)]
struct Why {
    cycle: u64,
    reset: bool,
    access: Option<u64>,
    hit: Option<usize>,
    wrapped: bool,
    ceased: bool,
    named: bool,
}

bins! {
    /// What a cycle of the tracker did, per the README.
    pub enum AttBin {
        /// The interval wrapped, cease clear, no driver write named the slot: interrupt.
        IrqAtThreshold = "irq_at_threshold",
        /// The interval wrapped on a ceased slot: no interrupt.
        CeaseSuppressesIrq = "cease_then_no_irq",
        /// The interval wrapped while a driver write named the slot: no interrupt.
        WriteSuppressesIrq = "driver_write_suppresses_irq",
        /// An access hit a slot registered in the same cycle (record emitted, register after).
        AccessRegisterSameSlot = "access_and_register_same_slot",
        AccessRemoveSameSlot = "access_and_remove_same_slot",
        AccessCeaseSameSlot = "access_and_cease_same_slot",
        /// Register and remove of one slot in one cycle: remove wins.
        RegisterRemoveSameSlot = "register_and_remove_same_slot",
        /// An access that no valid range holds: nothing emitted.
        RangeMiss = "range_miss",
        /// An access held by two or more valid ranges: the lowest slot wins.
        OverlapLowestWins = "overlap_lowest_slot_wins",
        /// An access hit and a register of another slot in one cycle: the register is the
        /// newer touch (the only way two touches meet, so the only recency "tie").
        RegisterNewerThanAccess = "register_newer_than_access",
        /// A cycle that starts with every slot valid.
        TableFull = "table_full",
        /// An access hit on a saturated timer (held, no interval step, no interrupt).
        TimerSaturated = "timer_saturated",
        /// A driver write naming an object number beyond the table (ignored).
        ObjectBeyondTable = "object_beyond_table",
        Reset = "reset",
    }
}

/// Levels of the pseudo-LRU tree: nodes of width 32, 16, 8, 4 and 2 slots.
const TREE_LEVELS: usize = 5;
/// Slot positions the tree spans (the 5-bit object ports).
const TREE_SLOTS: usize = 32;

/// Checks `AttOut` against the Access Time Tracker README.
pub struct AttMonitor {
    timer_max: u64,
    threshold: u64,
    slots: Vec<Slot>,
    touches: u64,
    /// `rec_*` / `irq_*` output registers.
    regs: AttOut,
    /// `tree-plru` only: `tree[l][p]` = the upper half of the node of width `32 >> l`
    /// starting at slot `p * (32 >> l)` is the older one.
    tree: Option<[[bool; 16]; TREE_LEVELS]>,
    why: Option<Why>,
    coverage: Coverage,
}

impl AttMonitor {
    /// A monitor of a tracker with parameters `cfg`, in its power-on (= reset) state.
    pub fn new(cfg: &AttConfig) -> Self {
        // The object ports are 5 bits: more than 32 slots could never be addressed.
        let objects = cfg.objects.min(32);
        AttMonitor {
            timer_max: mcmvm_protocol::protocol::mask(cfg.timer_bits.min(32)),
            threshold: cfg.profiling_threshold,
            slots: vec![Slot::default(); objects],
            touches: 0,
            regs: AttOut::default(),
            tree: (cfg.recency == AttRecency::TreePlru).then_some([[false; 16]; TREE_LEVELS]),
            why: None,
            coverage: Coverage::new("att", AttBin::NAMES),
        }
    }

    /// The valid slot touched longest ago (lowest index on a tie, which the README says
    /// cannot happen); under `tree-plru` the slot the tree walk reaches.
    fn oldest(&self) -> Option<usize> {
        if let Some(tree) = &self.tree {
            return self.tree_walk(tree);
        }
        self.slots
            .iter()
            .enumerate()
            .filter(|(_, s)| s.valid)
            .min_by_key(|(i, s)| (s.touched, *i))
            .map(|(i, _)| i)
    }

    /// README: from the whole table down, the older half if it holds a valid slot, else
    /// the other one.
    fn tree_walk(&self, tree: &[[bool; 16]; TREE_LEVELS]) -> Option<usize> {
        // Positions past the table hold no slot (and bound the range, so a wrong bound
        // ends the walk instead of counting towards 2^64).
        let valid_in =
            |lo: usize, hi: usize| (lo..hi.min(self.slots.len())).any(|i| self.slots[i].valid);
        if !valid_in(0, TREE_SLOTS) {
            return None;
        }
        let mut lo = 0;
        for (level, nodes) in tree.iter().enumerate() {
            let half = (TREE_SLOTS >> level) / 2;
            let upper_older = nodes[lo / (2 * half)];
            let take_upper = if upper_older {
                valid_in(lo + half, lo + 2 * half)
            } else {
                !valid_in(lo, lo + half)
            };
            if take_upper {
                lo += half;
            }
        }
        Some(lo)
    }

    /// README: every node holding `slot` names the half that does not hold it as older.
    fn tree_touch(&mut self, slot: usize) {
        if let Some(tree) = &mut self.tree {
            for (level, nodes) in tree.iter_mut().enumerate() {
                let width = TREE_SLOTS >> level;
                nodes[slot / width] = slot % width < width / 2;
            }
        }
    }

    fn touch(&mut self, slot: usize) {
        self.touches += 1;
        self.slots[slot].touched = self.touches;
    }

    /// A driver object number, if it names a slot of the table.
    fn slot_of(&self, valid: u64, obj: u64) -> Option<usize> {
        let obj = bits(obj, 5) as usize;
        (bits(valid, 1) != 0 && obj < self.slots.len()).then_some(obj)
    }

    fn clock_edge(&mut self, cycle: u64, input: &AttIn) {
        let mut why = Why {
            cycle,
            ..Why::default()
        };
        if bits(input.reset, 1) != 0 {
            self.reset();
            why.reset = true;
            self.why = Some(why);
            return;
        }
        // 1. The access: the lowest valid slot whose range holds it.
        let mut rec = AttOut::default();
        let vpn = bits(input.acc_vpn, 32);
        self.coverage
            .hit_if(self.slots.iter().all(|s| s.valid), AttBin::TableFull);
        let hit = if bits(input.acc_valid, 1) != 0 {
            why.access = Some(vpn);
            self.lookup(vpn)
        } else {
            None
        };
        // 2. The hit counts and is recorded.
        let (wrapped, ceased_before) = match hit {
            Some(h) => self.count_hit(h, vpn, &mut rec),
            None => (false, false),
        };
        // 3. The driver's writes, then the tree.
        let [reg, cease, rm] = self.apply_writes(cycle, input, hit);
        // 4. The interrupt: the interval wrapped, no cease, no write named the slot.
        if let Some(h) = hit {
            let named = [reg, cease, rm].contains(&Some(h));
            if wrapped && !ceased_before && !named {
                rec.irq_valid = 1;
                rec.irq_obj = h as u64;
                self.coverage.hit(AttBin::IrqAtThreshold);
            }
            let c = &mut self.coverage;
            c.hit_if(wrapped && ceased_before, AttBin::CeaseSuppressesIrq);
            c.hit_if(
                wrapped && !ceased_before && named,
                AttBin::WriteSuppressesIrq,
            );
            why.named = named;
        }
        why.hit = hit;
        why.wrapped = wrapped;
        why.ceased = ceased_before;
        self.regs = rec;
        self.why = Some(why);
    }

    /// Synchronous reset: only the valid bits, the output registers and the tree clear.
    fn reset(&mut self) {
        self.coverage.hit(AttBin::Reset);
        for s in &mut self.slots {
            s.valid = false;
        }
        self.regs = AttOut::default();
        if let Some(tree) = &mut self.tree {
            *tree = [[false; 16]; TREE_LEVELS];
        }
    }

    /// The lowest valid slot holding `vpn`.
    fn lookup(&mut self, vpn: u64) -> Option<usize> {
        let mut holders = self
            .slots
            .iter()
            .enumerate()
            .filter(|(_, s)| s.valid && s.start <= vpn && vpn <= s.end)
            .map(|(i, _)| i);
        let hit = holders.next();
        self.coverage.hit_if(hit.is_none(), AttBin::RangeMiss);
        self.coverage
            .hit_if(holders.next().is_some(), AttBin::OverlapLowestWins);
        hit
    }

    /// Slot `h`'s timer and interval advance (unless saturated) and the record goes into
    /// `rec`; whether the interval wrapped, and whether the slot was ceased before.
    fn count_hit(&mut self, h: usize, vpn: u64, rec: &mut AttOut) -> (bool, bool) {
        let mut wrapped = false;
        let s = &mut self.slots[h];
        let ceased_before = s.cease;
        self.coverage
            .hit_if(s.timer >= self.timer_max, AttBin::TimerSaturated);
        if s.timer < self.timer_max {
            s.timer += 1;
            s.interval += 1;
            if s.interval == self.threshold {
                s.interval = 0;
                wrapped = true;
            }
        }
        rec.rec_valid = 1;
        rec.rec_obj = h as u64;
        rec.rec_vpn = vpn;
        rec.rec_timer = s.timer;
        self.touch(h);
        (wrapped, ceased_before)
    }

    /// Register, cease and remove (in that order: remove wins), then the tree touches of
    /// the access `hit` and the register; the slots `[reg, cease, rm]` named.
    fn apply_writes(
        &mut self,
        cycle: u64,
        input: &AttIn,
        hit: Option<usize>,
    ) -> [Option<usize>; 3] {
        let reg = self.slot_of(input.reg_valid, input.reg_obj);
        let cease = self.slot_of(input.cease_valid, input.cease_obj);
        let rm = self.slot_of(input.rm_valid, input.rm_obj);
        self.cover_writes(input, hit, reg, cease, rm);
        if let Some(r) = reg {
            self.slots[r] = Slot {
                valid: true,
                start: bits(input.reg_start_vpn, 32),
                end: bits(input.reg_end_vpn, 32),
                timer: 0,
                interval: 0,
                cease: false,
                touched: self.slots[r].touched,
                registered: cycle,
            };
            // The register is the newer touch when it meets an access hit.
            self.touch(r);
        }
        if let Some(c) = cease {
            self.slots[c].cease = true;
        }
        if let Some(r) = rm {
            self.slots[r].valid = false;
        }
        // The tree: the access, then the register; a slot removed in this cycle is not
        // touched.
        for t in [hit, reg].into_iter().flatten() {
            if Some(t) != rm {
                self.tree_touch(t);
            }
        }
        [reg, cease, rm]
    }

    /// The bins of the cycle's driver writes (`reg`, `cease`, `rm`: the slots they name)
    /// against its access hit `hit`.
    fn cover_writes(
        &mut self,
        input: &AttIn,
        hit: Option<usize>,
        reg: Option<usize>,
        cease: Option<usize>,
        rm: Option<usize>,
    ) {
        let objects = self.slots.len() as u64;
        let beyond = [
            (input.reg_valid, input.reg_obj),
            (input.rm_valid, input.rm_obj),
            (input.cease_valid, input.cease_obj),
        ]
        .iter()
        .any(|&(valid, obj)| bits(valid, 1) != 0 && bits(obj, 5) >= objects);
        let c = &mut self.coverage;
        c.hit_if(beyond, AttBin::ObjectBeyondTable);
        c.hit_if(reg.is_some() && reg == rm, AttBin::RegisterRemoveSameSlot);
        let Some(h) = hit else {
            return;
        };
        c.hit_if(reg == Some(h), AttBin::AccessRegisterSameSlot);
        c.hit_if(rm == Some(h), AttBin::AccessRemoveSameSlot);
        c.hit_if(cease == Some(h), AttBin::AccessCeaseSameSlot);
        c.hit_if(reg.is_some_and(|r| r != h), AttBin::RegisterNewerThanAccess);
    }

    fn explain(&self, signal: &'static str) -> String {
        if signal.starts_with("oldest") && self.tree.is_some() {
            return format!(
                "oldest_* = where the tree-plru walk leads (older half if it holds a valid \
                 slot, else the other; touches point every node at the half without the \
                 touched slot; a touch of a slot removed in its cycle is dropped); valid \
                 slots, least recently touched first: {:?}",
                self.recency_order()
            );
        }
        if signal.starts_with("oldest") {
            let order = self.recency_order();
            return format!(
                "oldest_* = the valid slot touched longest ago (access hit or register; the \
                 register is newer in a shared cycle; remove/cease do not touch); valid slots \
                 oldest first: {order:?}"
            );
        }
        let Some(w) = self.why else {
            return "no cycle observed yet: power-on output registers read 0".into();
        };
        if w.reset {
            return format!("reset in cycle {}: rec_*/irq_* registers cleared", w.cycle);
        }
        match (w.access, w.hit) {
            (None, _) => format!("no access in cycle {}: rec_*/irq_* read 0", w.cycle),
            (Some(vpn), None) => format!(
                "access to vpn {vpn:#x} in cycle {} hit no valid range: nothing emitted",
                w.cycle
            ),
            (Some(vpn), Some(h)) => {
                let s = &self.slots[h];
                format!(
                    "access to vpn {vpn:#x} in cycle {} hit slot {h} (lowest valid slot whose \
                     range holds it; registered in cycle {}): rec_timer = timer after the \
                     access, saturating at {:#x}; interval wrapped at threshold {}: {}, cease \
                     bit was set: {}, a driver write named the slot: {} -> irq only when \
                     wrapped, not ceased and not named",
                    w.cycle,
                    s.registered,
                    self.timer_max,
                    self.threshold,
                    w.wrapped,
                    w.ceased,
                    w.named
                )
            }
        }
    }

    fn recency_order(&self) -> Vec<usize> {
        let mut v: Vec<usize> = (0..self.slots.len())
            .filter(|&i| self.slots[i].valid)
            .collect();
        v.sort_by_key(|&i| self.slots[i].touched);
        v
    }
}

impl Monitor<AttIn, AttOut> for AttMonitor {
    fn observe(&mut self, cycle: u64, input: &AttIn, output: &AttOut) -> Result<(), Violation> {
        // Moore machine: every output comes from the state before this cycle's edge.
        let mut expected = self.regs;
        if let Some(o) = self.oldest() {
            expected.oldest_valid = 1;
            expected.oldest_obj = o as u64;
        }
        let result = compare("att", cycle, &expected, output, |s| self.explain(s));
        self.clock_edge(cycle, input);
        result
    }
}

impl Covered for AttMonitor {
    fn coverage(&self) -> &Coverage {
        &self.coverage
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(m: &mut AttMonitor, c: u64, i: AttIn) -> AttOut {
        // The monitor's prediction for this cycle: observe with a deliberately wrong
        // output would advance the state, so read the prediction from the state first.
        let mut o = m.regs;
        if let Some(s) = m.oldest() {
            o.oldest_valid = 1;
            o.oldest_obj = s as u64;
        }
        m.observe(c, &i, &o).unwrap_or_else(|v| panic!("{v}"));
        o
    }

    #[test]
    fn first_interrupt_comes_with_the_access_whose_timer_is_the_threshold() {
        let cfg = AttConfig {
            objects: 4,
            timer_bits: 8,
            profiling_threshold: 3,
            ..AttConfig::default()
        };
        let mut m = AttMonitor::new(&cfg);
        let reg = AttIn {
            reg_valid: 1,
            reg_obj: 2,
            reg_start_vpn: 10,
            reg_end_vpn: 20,
            ..AttIn::default()
        };
        let acc = AttIn {
            acc_valid: 1,
            acc_vpn: 15,
            ..AttIn::default()
        };
        step(
            &mut m,
            0,
            AttIn {
                reset: 1,
                ..AttIn::default()
            },
        );
        step(&mut m, 1, reg);
        let mut irqs = Vec::new();
        for c in 2..12 {
            let o = step(&mut m, c, acc);
            if o.irq_valid == 1 {
                irqs.push(o.rec_timer);
            }
        }
        assert_eq!(irqs, vec![3, 6, 9]);
    }
}
