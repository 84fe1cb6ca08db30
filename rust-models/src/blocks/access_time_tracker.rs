//! Behavioural twin of the Access Time Tracker (ATT, Forest ISCA 2025), bit- and
//! cycle-exact with `mcmvm_rtl::access_time_tracker::AccessTimeTrackerRtl`.
//!
//! Forest puts an object table next to the GMMU. The UVM driver registers the VPN range of
//! every managed object at kernel launch; each GPU memory access then advances the
//! object-local access timer of the object that holds the page and writes the timer value
//! (instead of an access count) into the page access-counter store, so the driver can read
//! the *order* in which an object's pages were touched. The table also keeps a recency order
//! among objects (eviction picks the least recently accessed object first) and raises a
//! profiling interrupt every `profiling_threshold` accesses to an object until the driver
//! sets the object's cease bit.
//!
//! # Cycle behaviour (one pipeline stage; see `rtl/src/access_time_tracker.md`)
//! * Cycle t: the access VPN is compared with every valid range (lowest slot wins when
//!   ranges overlap); the hit object's timer and interval counter, the recency order and the
//!   driver writes are all applied at the rising edge that ends cycle t.
//! * Cycle t+1: `rec_*` (and `irq_*` if the profiling interval wrapped) show the access.
//! * `oldest_*` is derived from the state only, so it always reflects every edge so far.
//!
//! No output depends on the inputs of the same cycle: the ATT is a Moore machine.
//!
//! # Same-cycle rules
//! The access is matched against the table as it stood at the start of the cycle. Then the
//! writes apply in this order, a later one winning for the slot it names: access update,
//! register, cease, remove. A driver write (register, remove or cease) to the slot the
//! access hit suppresses that access's interrupt, so no interrupt is ever raised for an
//! object in the cycle its cease bit is set or after. Object numbers at or above `objects`
//! name no slot and are ignored.
//!
//! # Recency: a pseudo-LRU tree (default) or an exact order
//! With `recency = "tree-plru"` (the default) `oldest_*` comes from a tree of 31 "older
//! half" bits over the slot positions (`att_recency.rs`, [`PlruTree`]; the README's
//! "Recency"): a touch points every node above the slot at the other half, and the walk
//! takes the older half that holds a valid slot. A touch of a slot removed in the same
//! cycle is dropped, and reset clears the tree. With `ranks` or `age-matrix` the order is
//! exact, as below.
//!
//! In the age-matrix RTL, row `newer[i]` is the set of slots touched more recently than slot `i` (bit
//! j set: j is newer). Touching slot k (an access hit, or a register, which counts as the
//! newer touch when both happen in one cycle) clears row k and sets bit k in every other
//! row. The oldest valid slot is the valid `i` whose row holds every other valid slot. This
//! costs `objects × (objects − 1)` flip-flops and one AND-reduction per slot, no
//! comparators, and it never saturates. Every valid slot was registered (touched) after the
//! last reset, so the order among valid slots is total — there are no ties — and reset
//! only clears the valid bits.
//!
//! The twin keeps the same order more cheaply for software: the valid slots as a linked
//! list in order of last touch (access first, then register, within a cycle; a remove
//! unlinks), whose head is the oldest (`att_recency.rs`). Among valid slots, "j is in row
//! i" is exactly "j comes after i in the list", so both give the same oldest object on
//! every cycle; the lockstep tests check it against the RTL.
//!
//! # Cost
//! Every GPU page access of a Forest run steps the twin, so a cycle with only an access
//! (no driver write) takes a short path, and the range match stops at the highest valid
//! slot; neither changes what any port shows.

use super::att_recency::{PlruTree, RecencyList};
use crate::config::{AttConfig, AttRecency};
use crate::protocol::{mask, AttIn, AttOut, CycleModel};

/// Most object slots the 5-bit object ports can name.
pub const MAX_OBJECTS: usize = 32;

/// A configuration the tracker cannot be built from.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AttConfigError {
    #[error("access_time_tracker.objects: expected 1..=32, got {0}")]
    Objects(usize),
    #[error("access_time_tracker.timer_bits: expected 2..=32, got {0}")]
    TimerBits(u32),
    #[error("access_time_tracker.profiling_threshold: expected 1..2^timer_bits, got {0}")]
    Threshold(u64),
}

/// Parameters derived once from [`AttConfig`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AttSpec {
    /// Number of object slots.
    pub objects: usize,
    /// Largest timer value; the timer saturates here.
    pub timer_max: u32,
    /// Accesses per profiling interval (the interrupt period).
    pub threshold: u32,
    /// `oldest_*` comes from the pseudo-LRU tree (`recency = "tree-plru"`), not the exact
    /// order.
    pub tree_plru: bool,
}

impl AttSpec {
    /// Check a configuration and derive the spec.
    pub fn from_config(cfg: &AttConfig) -> Result<AttSpec, AttConfigError> {
        if !(1..=MAX_OBJECTS).contains(&cfg.objects) {
            return Err(AttConfigError::Objects(cfg.objects));
        }
        if !(2..=32).contains(&cfg.timer_bits) {
            return Err(AttConfigError::TimerBits(cfg.timer_bits));
        }
        let timer_max = mask(cfg.timer_bits);
        if cfg.profiling_threshold == 0 || cfg.profiling_threshold > timer_max {
            return Err(AttConfigError::Threshold(cfg.profiling_threshold));
        }
        Ok(AttSpec {
            objects: cfg.objects,
            timer_max: timer_max as u32,
            threshold: cfg.profiling_threshold as u32,
            tree_plru: cfg.recency == AttRecency::TreePlru,
        })
    }
}

/// One registered object, as the driver would read it back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ObjectView {
    /// Table slot (the object number on the ports).
    pub slot: usize,
    /// First VPN of the range.
    pub start_vpn: u32,
    /// Last VPN of the range (inclusive).
    pub end_vpn: u32,
    /// Object-local access timer: accesses since registration, saturating.
    pub timer: u32,
    /// Accesses since the last profiling interrupt (or registration).
    pub interval: u32,
    /// No more profiling interrupts for this object.
    pub cease: bool,
}

/// The table's state: what the flip-flops of the RTL hold, slot by slot.
#[derive(Debug, Clone, PartialEq, Eq)]
struct AttState {
    valid: u32,
    cease: u32,
    start: [u32; MAX_OBJECTS],
    end: [u32; MAX_OBJECTS],
    timer: [u32; MAX_OBJECTS],
    interval: [u32; MAX_OBJECTS],
    /// Valid slots in order of last touch (the twin's form of the RTL's exact order; kept
    /// only under `ranks` / `age-matrix`).
    recency: RecencyList,
    /// The pseudo-LRU tree (kept only under `tree-plru`).
    tree: PlruTree,
}

impl AttState {
    /// Power-on state: every flip-flop zero (rust-hdl's `initial` values).
    fn power_on() -> AttState {
        AttState {
            valid: 0,
            cease: 0,
            start: [0; MAX_OBJECTS],
            end: [0; MAX_OBJECTS],
            timer: [0; MAX_OBJECTS],
            interval: [0; MAX_OBJECTS],
            recency: RecencyList::empty(),
            tree: PlruTree::default(),
        }
    }
}

/// The `rec_*` / `irq_*` output registers packed in two words, each written whole at an
/// edge and read whole at the next: an `AttOut` (64 bytes) stored field by field and
/// read back with wider loads stalled every step on store-to-load forwarding.
#[derive(Debug, Clone, Copy, Default)]
struct OutputRegisters {
    /// `rec_vpn` (bits 0..32) and `rec_timer` (32..64).
    rec: u64,
    /// `rec_valid` (bit 0), `irq_valid` (1), `rec_obj` (8..16), `irq_obj` (16..24).
    flags: u64,
}

impl OutputRegisters {
    fn record(vpn: u32, timer: u32, obj: usize) -> OutputRegisters {
        OutputRegisters {
            rec: vpn as u64 | (timer as u64) << 32,
            flags: 1 | (obj as u64) << 8,
        }
    }

    fn with_interrupt(self, obj: usize) -> OutputRegisters {
        OutputRegisters {
            flags: self.flags | 2 | (obj as u64) << 16,
            ..self
        }
    }

    fn ports(self, oldest: Option<usize>) -> AttOut {
        AttOut {
            rec_valid: self.flags & 1,
            rec_obj: self.flags >> 8 & 0xff,
            rec_vpn: self.rec & 0xffff_ffff,
            rec_timer: self.rec >> 32,
            irq_valid: self.flags >> 1 & 1,
            irq_obj: self.flags >> 16 & 0xff,
            oldest_valid: oldest.is_some() as u64,
            oldest_obj: oldest.unwrap_or(0) as u64,
        }
    }
}

/// The ATT's behavioural twin. Talk to it through [`CycleModel::step`]; the other methods
/// only inspect.
#[derive(Debug, Clone)]
pub struct AccessTimeTracker {
    spec: AttSpec,
    state: AttState,
    /// `rec_*` / `irq_*` output registers, loaded at each edge.
    registered: OutputRegisters,
    /// Four-slot groups of the range match up to the highest valid slot, derived from
    /// `state.valid` whenever it changes (deriving it on every access instead measured
    /// 1.5–3 % slower on a bfs Forest run).
    match_groups: usize,
}

impl AccessTimeTracker {
    /// A tracker in its power-on state.
    ///
    /// # Panics
    /// On a configuration that [`crate::config::HwConfig::validate`] rejects; use
    /// [`AccessTimeTracker::try_new`] for unvalidated input.
    pub fn new(cfg: &AttConfig) -> Self {
        match Self::try_new(cfg) {
            Ok(att) => att,
            Err(e) => panic!("invalid ATT configuration (validate the config first): {e}"),
        }
    }

    /// A tracker in its power-on state, or why the configuration cannot be built.
    pub fn try_new(cfg: &AttConfig) -> Result<Self, AttConfigError> {
        Ok(AccessTimeTracker {
            spec: AttSpec::from_config(cfg)?,
            state: AttState::power_on(),
            registered: OutputRegisters::default(),
            match_groups: 0,
        })
    }

    /// The derived parameters.
    pub fn spec(&self) -> AttSpec {
        self.spec
    }

    /// The registered objects, lowest slot first.
    pub fn objects(&self) -> Vec<ObjectView> {
        let s = &self.state;
        (0..self.spec.objects)
            .filter(|&i| s.valid >> i & 1 == 1)
            .map(|i| ObjectView {
                slot: i,
                start_vpn: s.start[i],
                end_vpn: s.end[i],
                timer: s.timer[i],
                interval: s.interval[i],
                cease: s.cease >> i & 1 == 1,
            })
            .collect()
    }

    /// The registered objects' slots from least to most recently accessed (or registered),
    /// under the exact structures; `None` under `tree-plru`, which keeps no order.
    pub fn recency_order(&self) -> Option<Vec<usize>> {
        (!self.spec.tree_plru).then(|| self.state.recency.order())
    }

    /// The object `oldest_*` shows: the least recently accessed (or registered) one, or
    /// under `tree-plru` the one the tree leads to.
    #[inline]
    pub fn oldest(&self) -> Option<usize> {
        if self.spec.tree_plru {
            self.state.tree.oldest(self.state.valid)
        } else {
            self.state.recency.oldest()
        }
    }

    /// Slots whose range holds `vpn`, as a bit mask (valid slots only).
    #[inline]
    fn range_hits(&self, vpn: u32) -> u32 {
        let s = &self.state;
        super::att_ranges::range_hits(&s.start, &s.end, vpn, self.match_groups) & s.valid
    }

    /// The slot an object port names, if it names one.
    #[inline]
    fn slot(&self, valid: u64, obj: u64) -> Option<usize> {
        (valid != 0 && (obj as usize) < self.spec.objects).then_some(obj as usize)
    }

    /// The access port's half of an edge: advance the timer of the slot holding `vpn`
    /// (matched against the table as it stands) and load the record (and interrupt)
    /// registers into `out`. `driver_slots` are the slots a driver write names this cycle,
    /// whose interrupt the write suppresses. Returns the slot hit, if any.
    #[inline]
    fn access_edge(
        &mut self,
        vpn: u32,
        driver_slots: u32,
        out: &mut OutputRegisters,
    ) -> Option<usize> {
        let hits = self.range_hits(vpn);
        if hits == 0 {
            return None;
        }
        let k = hits.trailing_zeros() as usize;
        let s = &mut self.state;
        let mut wrapped = false;
        if s.timer[k] != self.spec.timer_max {
            s.timer[k] += 1;
            let interval = s.interval[k] + 1;
            wrapped = interval == self.spec.threshold;
            s.interval[k] = if wrapped { 0 } else { interval };
        }
        *out = OutputRegisters::record(vpn, s.timer[k], k);
        if wrapped && (s.cease | driver_slots) >> k & 1 == 0 {
            *out = out.with_interrupt(k);
        }
        Some(k)
    }

    /// Make slot `k` the newest in whichever recency structure the configuration keeps.
    #[inline]
    fn touch(&mut self, k: usize) {
        if self.spec.tree_plru {
            self.state.tree.touch(k);
        } else {
            self.state.recency.touch(k);
        }
    }

    /// The rising clock edge: every state update of one cycle.
    fn clock_edge(&mut self, input: &AttIn) {
        if input.reset != 0 {
            self.reset_edge();
            return;
        }
        let mut next_out = OutputRegisters::default();
        let vpn = input.acc_vpn as u32;
        if input.reg_valid | input.rm_valid | input.cease_valid == 0 {
            // An access alone (nearly every cycle of a run).
            if input.acc_valid != 0 {
                if let Some(k) = self.access_edge(vpn, 0, &mut next_out) {
                    self.touch(k);
                }
            }
            self.registered = next_out;
            return;
        }
        let reg = self.slot(input.reg_valid, input.reg_obj);
        let rm = self.slot(input.rm_valid, input.rm_obj);
        let cease = self.slot(input.cease_valid, input.cease_obj);
        let bit = |k: Option<usize>| k.map_or(0u32, |k| 1 << k);

        // 1. The access, matched against the table as it stands.
        let acc = if input.acc_valid != 0 {
            self.access_edge(vpn, bit(reg) | bit(rm) | bit(cease), &mut next_out)
        } else {
            None
        };
        // 2.–4. Driver writes: register, then cease, then remove.
        self.driver_writes(input, reg, cease, rm);
        // 5. Recency.
        self.recency_edge(acc, reg, rm);
        self.registered = next_out;
    }

    /// Reset: valid bits and output registers only; everything else is rewritten by a
    /// register before it can be seen (see the module docs).
    fn reset_edge(&mut self) {
        self.state.valid = 0;
        self.state.recency = RecencyList::empty();
        // The RTL clears its tree too (keeps a four-state simulation free of X).
        self.state.tree = PlruTree::default();
        self.match_groups = 0;
        self.registered = OutputRegisters::default();
    }

    /// Steps 2.–4.: the driver's register, cease and remove writes to slots `reg`,
    /// `cease`, `rm`, in that order.
    #[inline]
    fn driver_writes(
        &mut self,
        input: &AttIn,
        reg: Option<usize>,
        cease: Option<usize>,
        rm: Option<usize>,
    ) {
        let s = &mut self.state;
        if let Some(k) = reg {
            s.valid |= 1 << k;
            s.cease &= !(1u32 << k);
            s.start[k] = input.reg_start_vpn as u32;
            s.end[k] = input.reg_end_vpn as u32;
            s.timer[k] = 0;
            s.interval[k] = 0;
        }
        if let Some(k) = cease {
            s.cease |= 1 << k;
        }
        if let Some(k) = rm {
            s.valid &= !(1u32 << k);
        }
    }

    /// Step 5.: the register is the newer touch when both happen; a removed slot leaves
    /// the order (even one touched this cycle). The tree is not touched for a slot
    /// removed in the same cycle (it would only disturb the order of the others); the
    /// exact order unlinks it after the touches.
    #[inline]
    fn recency_edge(&mut self, acc: Option<usize>, reg: Option<usize>, rm: Option<usize>) {
        self.match_groups = (32 - self.state.valid.leading_zeros() as usize).div_ceil(4);
        for k in [acc, reg].into_iter().flatten() {
            if !(self.spec.tree_plru && Some(k) == rm) {
                self.touch(k);
            }
        }
        if let Some(k) = rm {
            if !self.spec.tree_plru {
                self.state.recency.remove(k);
            }
        }
    }
}

impl CycleModel for AccessTimeTracker {
    type In = AttIn;
    type Out = AttOut;

    fn step(&mut self, input: &AttIn) -> AttOut {
        let out = self.registered.ports(self.oldest());
        self.clock_edge(input);
        out
    }
}

#[cfg(test)]
#[path = "access_time_tracker_tests.rs"]
mod tests;
