//! The ATT's original structure (age matrix, interval counters, priority-mux read-out),
//! kept so its cost stays measurable against the default [`super::AccessTimeTrackerRtl`]
//! (`access_time_tracker.md`, "Cost"). Select it with [`super::AttRecency::AgeMatrix`]
//! (`super::verilog_with`) or use [`super::AccessTimeTrackerAgeMatrixHdlSim`].
//!
//! Per-slot registers are 32 bits wide and every value written to them is masked with a
//! constant, so bits a configuration can never set have a constant-zero input and yosys
//! removes their flip-flops.

use crate::params::{AttParamError, AttParams};
use mcmvm_protocol::config::AttConfig;
use mcmvm_protocol::protocol::mask;
use rust_hdl::prelude::*;

/// The ATT's first RTL, kept as the costed alternative: per-object interval counters, a
/// 32 x 31 age matrix for the recency order, and priority-mux read-out of the hit slot.
/// Same ports and cycle behaviour as [`super::AccessTimeTrackerRtl`].
#[derive(LogicBlock)]
pub struct AccessTimeTrackerAgeMatrixRtl {
    /// Synchronous reset: clears the valid bits and the output registers; blocks every
    /// other update in its cycle.
    pub reset: Signal<In, Bit>,
    /// A GPU memory access to `acc_vpn` this cycle.
    pub acc_valid: Signal<In, Bit>,
    /// 4 KB virtual page number of the access.
    pub acc_vpn: Signal<In, Bits<32>>,
    /// Driver: register slot `reg_obj` for `reg_start_vpn ..= reg_end_vpn`.
    pub reg_valid: Signal<In, Bit>,
    /// Slot to register (values at or above `objects` are ignored).
    pub reg_obj: Signal<In, Bits<5>>,
    /// First VPN of the registered range.
    pub reg_start_vpn: Signal<In, Bits<32>>,
    /// Last VPN of the registered range (inclusive).
    pub reg_end_vpn: Signal<In, Bits<32>>,
    /// Driver: remove slot `rm_obj`.
    pub rm_valid: Signal<In, Bit>,
    /// Slot to remove.
    pub rm_obj: Signal<In, Bits<5>>,
    /// Driver: set the cease bit of slot `cease_obj`.
    pub cease_valid: Signal<In, Bit>,
    /// Slot whose profiling interrupts stop.
    pub cease_obj: Signal<In, Bits<5>>,
    /// A (page, timer) record for the access-counter store (the access of the last cycle).
    pub rec_valid: Signal<Out, Bit>,
    /// Object the recorded access hit.
    pub rec_obj: Signal<Out, Bits<5>>,
    /// VPN of the recorded access.
    pub rec_vpn: Signal<Out, Bits<32>>,
    /// The object's timer after the access (its access count, saturating).
    pub rec_timer: Signal<Out, Bits<32>>,
    /// Profiling interrupt: the recorded access completed a profiling interval.
    pub irq_valid: Signal<Out, Bit>,
    /// Object the interrupt names.
    pub irq_obj: Signal<Out, Bits<5>>,
    /// Some object is registered.
    pub oldest_valid: Signal<Out, Bit>,
    /// Least recently accessed (or registered) object.
    pub oldest_obj: Signal<Out, Bits<5>>,
    /// The clock; every flip-flop updates on its rising edge.
    pub clock: Signal<In, Clock>,

    // --- state ---
    /// Valid bit per slot.
    valid: DFF<Bits<32>>,
    /// Cease bit per slot.
    cease: DFF<Bits<32>>,
    start_vpn: Vec<DFF<Bits<32>>>,
    end_vpn: Vec<DFF<Bits<32>>>,
    /// Object-local access timer, saturating at `timer_max`.
    timer: Vec<DFF<Bits<32>>>,
    /// Accesses since the last profiling interrupt, wrapping at `threshold`.
    interval: Vec<DFF<Bits<32>>>,
    /// Age-matrix row: the slots touched more recently than this one.
    newer: Vec<DFF<Bits<32>>>,
    rec_valid_q: DFF<Bit>,
    rec_obj_q: DFF<Bits<5>>,
    rec_vpn_q: DFF<Bits<32>>,
    rec_timer_q: DFF<Bits<32>>,
    irq_valid_q: DFF<Bit>,
    irq_obj_q: DFF<Bits<5>>,

    // --- constants (typed, so the emitted Verilog has the right widths) ---
    /// Slot number `i` as an object port value.
    slot_id: Vec<Constant<Bits<5>>>,
    /// Slot `i` as a one-hot mask.
    slot_bit: Vec<Constant<Bits<32>>>,
    /// The `objects` low bits.
    live_slots: Constant<Bits<32>>,
    /// Bits age-matrix row `i` can hold: every live slot but `i` itself.
    row_mask: Vec<Constant<Bits<32>>>,
    timer_max: Constant<Bits<32>>,
    threshold: Constant<Bits<32>>,
    /// Covers every interval value below `threshold`.
    interval_mask: Constant<Bits<32>>,
    one: Constant<Bits<32>>,
    zero: Constant<Bits<32>>,
    zero_obj: Constant<Bits<5>>,

    // --- combinational values ---
    hit: Signal<Local, Bit>,
    hit_obj: Signal<Local, Bits<5>>,
    hit_bit: Signal<Local, Bits<32>>,
    hit_timer: Signal<Local, Bits<32>>,
    hit_interval: Signal<Local, Bits<32>>,
    hit_cease: Signal<Local, Bit>,
    advanced: Signal<Local, Bit>,
    timer_after: Signal<Local, Bits<32>>,
    interval_inc: Signal<Local, Bits<32>>,
    interval_after: Signal<Local, Bits<32>>,
    wrapped: Signal<Local, Bit>,
    reg_bit: Signal<Local, Bits<32>>,
    rm_bit: Signal<Local, Bits<32>>,
    cease_bit: Signal<Local, Bits<32>>,
    driver_writes_hit: Signal<Local, Bit>,
    touched: Signal<Local, Bits<32>>,
    oldest_found: Signal<Local, Bit>,
    oldest_slot: Signal<Local, Bits<5>>,
}

impl AccessTimeTrackerAgeMatrixRtl {
    /// The RTL for `cfg`.
    ///
    /// # Panics
    /// On a configuration that `HwConfig::validate` rejects; see [`Self::try_new`].
    pub fn new(cfg: &AttConfig) -> Self {
        match Self::try_new(cfg) {
            Ok(rtl) => rtl,
            Err(e) => panic!("invalid ATT configuration (validate the config first): {e}"),
        }
    }

    /// The RTL for `cfg`, or why the configuration cannot be built.
    pub fn try_new(cfg: &AttConfig) -> Result<Self, AttParamError> {
        let spec = AttParams::new(cfg)?;
        let n = spec.objects;
        let dffs = || {
            (0..n)
                .map(|_| DFF::default())
                .collect::<Vec<DFF<Bits<32>>>>()
        };
        let word = |v: u64| Constant::new(Bits::<32>::from(v));
        // Values 0..threshold need the bits of threshold - 1.
        let interval_bits = 64 - u64::from(spec.threshold - 1).leading_zeros();
        Ok(fill_fields! { AccessTimeTrackerAgeMatrixRtl {
            slot_id: (0..n as u64)
                .map(|i| Constant::new(Bits::<5>::from(i)))
                .collect(),
            slot_bit: (0..n).map(|i| word(1 << i)).collect(),
            live_slots: word(u64::from(spec.slot_mask())),
            row_mask: (0..n)
                .map(|i| word(u64::from(spec.slot_mask()) & !(1 << i)))
                .collect(),
            timer_max: word(u64::from(spec.timer_max)),
            threshold: word(u64::from(spec.threshold)),
            interval_mask: word(mask(interval_bits)),
            one: word(1),
            zero: word(0),
            zero_obj: Constant::new(Bits::<5>::from(0)),
        }
        // The ports, then the registers and locals.
        Default::default() => [
            reset, acc_valid, acc_vpn, reg_valid, reg_obj, reg_start_vpn, reg_end_vpn,
            rm_valid, rm_obj, cease_valid, cease_obj, rec_valid, rec_obj, rec_vpn, rec_timer,
            irq_valid, irq_obj, oldest_valid, oldest_obj, clock,
        ]
        Default::default() => [
            valid, cease, rec_valid_q, rec_obj_q, rec_vpn_q, rec_timer_q, irq_valid_q,
            irq_obj_q, hit, hit_obj, hit_bit, hit_timer, hit_interval, hit_cease, advanced,
            timer_after, interval_inc, interval_after, wrapped, reg_bit, rm_bit, cease_bit,
            driver_writes_hit, touched, oldest_found, oldest_slot,
        ]
        // One row of registers per slot (`newer`: the slot's row of the age matrix).
        dffs() => [start_vpn, end_vpn, timer, interval, newer]
        })
    }
}

impl Logic for AccessTimeTrackerAgeMatrixRtl {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            valid,
            cease,
            rec_valid_q,
            rec_obj_q,
            rec_vpn_q,
            rec_timer_q,
            irq_valid_q,
            irq_obj_q
        );
        // Per-slot registers hold by default. The masks make bits no configuration can
        // set constant zero, so synthesis drops their flip-flops.
        for i in 0..self.slot_id.len() {
            self.start_vpn[i].clock.next = self.clock.val();
            self.end_vpn[i].clock.next = self.clock.val();
            self.timer[i].clock.next = self.clock.val();
            self.interval[i].clock.next = self.clock.val();
            self.newer[i].clock.next = self.clock.val();
            self.start_vpn[i].d.next = self.start_vpn[i].q.val();
            self.end_vpn[i].d.next = self.end_vpn[i].q.val();
            self.timer[i].d.next = self.timer[i].q.val() & self.timer_max.val();
            self.interval[i].d.next = self.interval[i].q.val() & self.interval_mask.val();
            self.newer[i].d.next = self.newer[i].q.val() & self.row_mask[i].val();
        }

        // 1. Range match: the lowest valid slot whose range holds the VPN.
        self.hit.next = false;
        self.hit_obj.next = self.zero_obj.val();
        self.hit_bit.next = self.zero.val();
        self.hit_timer.next = self.zero.val();
        self.hit_interval.next = self.zero.val();
        self.hit_cease.next = false;
        for i in 0..self.slot_id.len() {
            if self.acc_valid.val()
                & !self.hit.val()
                & self.valid.q.val().get_bit(i)
                & (self.start_vpn[i].q.val() <= self.acc_vpn.val())
                & (self.acc_vpn.val() <= self.end_vpn[i].q.val())
            {
                self.hit.next = true;
                self.hit_obj.next = self.slot_id[i].val();
                self.hit_bit.next = self.slot_bit[i].val();
                self.hit_timer.next = self.timer[i].q.val();
                self.hit_interval.next = self.interval[i].q.val();
                self.hit_cease.next = self.cease.q.val().get_bit(i);
            }
        }

        // 2. One shared incrementer: the timer saturates; the interval counter advances
        //    only with the timer and wraps at the threshold.
        self.advanced.next = self.hit_timer.val() != self.timer_max.val();
        self.timer_after.next = self.hit_timer.val();
        self.interval_inc.next = self.hit_interval.val() + self.one.val();
        self.interval_after.next = self.hit_interval.val();
        self.wrapped.next = false;
        if self.advanced.val() {
            self.timer_after.next = self.hit_timer.val() + self.one.val();
            self.interval_after.next = self.interval_inc.val();
            if self.interval_inc.val() == self.threshold.val() {
                self.wrapped.next = true;
                self.interval_after.next = self.zero.val();
            }
        }

        // 3. Driver ports decoded to one-hot slot masks (object numbers >= objects fall
        //    outside `live_slots` and name no slot).
        self.reg_bit.next = self.zero.val();
        self.rm_bit.next = self.zero.val();
        self.cease_bit.next = self.zero.val();
        if self.reg_valid.val() {
            self.reg_bit.next = (self.one.val() << self.reg_obj.val()) & self.live_slots.val();
        }
        if self.rm_valid.val() {
            self.rm_bit.next = (self.one.val() << self.rm_obj.val()) & self.live_slots.val();
        }
        if self.cease_valid.val() {
            self.cease_bit.next = (self.one.val() << self.cease_obj.val()) & self.live_slots.val();
        }
        self.driver_writes_hit.next =
            ((self.reg_bit.val() | self.rm_bit.val() | self.cease_bit.val()) & self.hit_bit.val())
                != self.zero.val();
        self.touched.next = self.hit_bit.val() | self.reg_bit.val();

        // 4. Oldest valid slot: every other valid slot is newer than it.
        self.oldest_found.next = false;
        self.oldest_slot.next = self.zero_obj.val();
        for i in 0..self.slot_id.len() {
            if !self.oldest_found.val()
                & self.valid.q.val().get_bit(i)
                & (((self.newer[i].q.val() | !self.valid.q.val() | self.slot_bit[i].val())
                    & self.live_slots.val())
                    == self.live_slots.val())
            {
                self.oldest_found.next = true;
                self.oldest_slot.next = self.slot_id[i].val();
            }
        }
        self.oldest_valid.next = self.oldest_found.val();
        self.oldest_obj.next = self.oldest_slot.val();
        self.rec_valid.next = self.rec_valid_q.q.val();
        self.rec_obj.next = self.rec_obj_q.q.val();
        self.rec_vpn.next = self.rec_vpn_q.q.val();
        self.rec_timer.next = self.rec_timer_q.q.val();
        self.irq_valid.next = self.irq_valid_q.q.val();
        self.irq_obj.next = self.irq_obj_q.q.val();

        // 5. State updates at the edge. Order inside a slot: access, register, cease,
        //    remove (the last write wins).
        if self.reset.val() {
            self.valid.d.next = self.zero.val();
            self.rec_valid_q.d.next = false;
            self.rec_obj_q.d.next = self.zero_obj.val();
            self.rec_vpn_q.d.next = self.zero.val();
            self.rec_timer_q.d.next = self.zero.val();
            self.irq_valid_q.d.next = false;
            self.irq_obj_q.d.next = self.zero_obj.val();
        } else {
            for i in 0..self.slot_id.len() {
                if self.hit_bit.val().get_bit(i) {
                    self.timer[i].d.next = self.timer_after.val() & self.timer_max.val();
                    self.interval[i].d.next = self.interval_after.val() & self.interval_mask.val();
                    // Only a register in the same cycle is newer than this access.
                    self.newer[i].d.next = self.reg_bit.val() & self.row_mask[i].val();
                } else {
                    self.newer[i].d.next =
                        (self.newer[i].q.val() | self.touched.val()) & self.row_mask[i].val();
                }
                if self.reg_bit.val().get_bit(i) {
                    self.start_vpn[i].d.next = self.reg_start_vpn.val();
                    self.end_vpn[i].d.next = self.reg_end_vpn.val();
                    self.timer[i].d.next = self.zero.val();
                    self.interval[i].d.next = self.zero.val();
                    self.newer[i].d.next = self.zero.val();
                }
            }
            self.valid.d.next = (self.valid.q.val() | self.reg_bit.val())
                & !self.rm_bit.val()
                & self.live_slots.val();
            self.cease.d.next = ((self.cease.q.val() & !self.reg_bit.val()) | self.cease_bit.val())
                & self.live_slots.val();
            self.rec_valid_q.d.next = self.hit.val();
            self.rec_obj_q.d.next = self.hit_obj.val();
            self.rec_vpn_q.d.next = self.zero.val();
            self.rec_timer_q.d.next = self.zero.val();
            if self.hit.val() {
                self.rec_vpn_q.d.next = self.acc_vpn.val();
                self.rec_timer_q.d.next = self.timer_after.val();
            }
            self.irq_valid_q.d.next = false;
            self.irq_obj_q.d.next = self.zero_obj.val();
            if self.hit.val()
                & self.wrapped.val()
                & !self.hit_cease.val()
                & !self.driver_writes_hit.val()
            {
                self.irq_valid_q.d.next = true;
                self.irq_obj_q.d.next = self.hit_obj.val();
            }
        }
    }
}
