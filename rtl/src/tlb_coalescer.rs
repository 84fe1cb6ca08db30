//! The TLB coalescing logic (CLAP §4.6) as a RustHDL module, and its rust-hdl simulation
//! adapter (`tlb_coalescer/hdl_sim.rs`).
//!
//! Merge unit and lookup unit side by side. With `output_registers` (the default) each ends
//! in output registers, so inputs of cycle `t` appear on the outputs in cycle `t + 1`;
//! without, the outputs are the units' combinational results of cycle `t` (the paper's
//! unit). One module serves both: the flag is a typed constant, the output assignments
//! select on it, and synthesis drops the registers nothing reads. The PTE decode parameters
//! (PPN position, the bits that exclude a slot) come from `params::PteDecode`, written from
//! the README's PTE table independently of the twin's decode, so the lockstep checks one
//! against the other. `tlb_coalescer.md` next to this file lists the ports and walks
//! through a cycle.
//!
//! The sixteen slots are written once, as loops over arrays of local signals: a copy of each
//! PTE port, then per slot "coalescable", permissions and the base PPN the slot implies.
//! The shape serves rust-hdl's simulator, which sets the adapter's speed: it keeps signals
//! over 32 bits as arrays of bools (a mask and a compare are cheap, a 64-to-32-bit select
//! walks every bit) and shifts 32-bit values through a bignum. So each PTE sees one select
//! (its PPN) and otherwise only masks and compares against typed 64-bit constants, no
//! shifts appear anywhere, and the module is flat so the settle loop has no boundary to cross.

use crate::params::{PteDecode, LINE_SLOTS as SLOTS, PTE_PERMISSIONS, PTE_VALID};
use mcmvm_protocol::config::CoalescerConfig;
use rust_hdl::prelude::*;

/// RustHDL module of the TLB coalescing logic. Port names and widths are those of
/// `mcmvm_protocol::protocol::{CoalIn, CoalOut}`.
#[derive(LogicBlock)]
pub struct TlbCoalescerRtl {
    /// Synchronous reset: clears the output registers; blocks every other update (and,
    /// without output registers, zeroes this cycle's outputs).
    pub reset: Signal<In, Bit>,
    /// A 128-byte line of sixteen PTEs is on `pte0..pte15` this cycle.
    pub merge_valid: Signal<In, Bit>,
    /// Requested VPN (64 KB pages); its low four bits select the requested PTE.
    pub merge_vpn: Signal<In, Bits<32>>,
    /// PTE of slot 0 (VPN `merge_vpn & !15`).
    pub pte0: Signal<In, Bits<64>>,
    /// PTE of slot 1.
    pub pte1: Signal<In, Bits<64>>,
    /// PTE of slot 2.
    pub pte2: Signal<In, Bits<64>>,
    /// PTE of slot 3.
    pub pte3: Signal<In, Bits<64>>,
    /// PTE of slot 4.
    pub pte4: Signal<In, Bits<64>>,
    /// PTE of slot 5.
    pub pte5: Signal<In, Bits<64>>,
    /// PTE of slot 6.
    pub pte6: Signal<In, Bits<64>>,
    /// PTE of slot 7.
    pub pte7: Signal<In, Bits<64>>,
    /// PTE of slot 8.
    pub pte8: Signal<In, Bits<64>>,
    /// PTE of slot 9.
    pub pte9: Signal<In, Bits<64>>,
    /// PTE of slot 10.
    pub pte10: Signal<In, Bits<64>>,
    /// PTE of slot 11.
    pub pte11: Signal<In, Bits<64>>,
    /// PTE of slot 12.
    pub pte12: Signal<In, Bits<64>>,
    /// PTE of slot 13.
    pub pte13: Signal<In, Bits<64>>,
    /// PTE of slot 14.
    pub pte14: Signal<In, Bits<64>>,
    /// PTE of slot 15.
    pub pte15: Signal<In, Bits<64>>,
    /// Probe the coalesced entry on `entry_*` with `lookup_vpn` this cycle.
    pub lookup_valid: Signal<In, Bit>,
    /// VPN to translate.
    pub lookup_vpn: Signal<In, Bits<32>>,
    /// Entry's base VPN (only bits 31..4 are compared).
    pub entry_base_vpn: Signal<In, Bits<32>>,
    /// Entry's base PPN.
    pub entry_base_ppn: Signal<In, Bits<32>>,
    /// Entry's slot mask.
    pub entry_mask: Signal<In, Bits<16>>,
    /// A merge result is on `merge_base_*` / `merge_mask` (the line arrived last cycle, or
    /// this cycle without output registers).
    pub merge_done: Signal<Out, Bit>,
    /// Base VPN of the coalesced entry (requested VPN with the low four bits cleared).
    pub merge_base_vpn: Signal<Out, Bits<32>>,
    /// Base PPN: the requested PTE's PPN minus its slot (32-bit wrap); 0 for an empty entry.
    pub merge_base_ppn: Signal<Out, Bits<32>>,
    /// Slots with the requested PTE's permissions and VPN-to-PPN offset.
    pub merge_mask: Signal<Out, Bits<16>>,
    /// A lookup result is on `lookup_hit` / `lookup_ppn` (the probe came last cycle, or
    /// this cycle without output registers).
    pub lookup_done: Signal<Out, Bit>,
    /// The probed VPN is in the entry's group and its slot bit is set.
    pub lookup_hit: Signal<Out, Bit>,
    /// `entry_base_ppn + slot` on a hit, 0 on a miss.
    pub lookup_ppn: Signal<Out, Bits<32>>,
    /// Clock; every register updates on its rising edge.
    pub clock: Signal<In, Clock>,

    // Per-slot combinational values (the loops below index these).
    line: [Signal<Local, Bits<64>>; SLOTS],
    pte_ppn_window: [Signal<Local, Bits<32>>; SLOTS],
    slot_coalescable: [Signal<Local, Bit>; SLOTS],
    slot_permissions: [Signal<Local, Bits<64>>; SLOTS],
    slot_base_ppn: [Signal<Local, Bits<32>>; SLOTS],
    // The requested slot's values, selected by `merge_vpn[3:0]`.
    requested_coalescable: Signal<Local, Bit>,
    requested_permissions: Signal<Local, Bits<64>>,
    requested_base_ppn: Signal<Local, Bits<32>>,
    merged_mask: Signal<Local, Bits<16>>,
    lookup_slot: Signal<Local, Bits<32>>,
    lookup_slot_set: Signal<Local, Bit>,
    lookup_hits: Signal<Local, Bit>,
    // This cycle's results: a request's, 0 without it or under reset: the outputs of the
    // combinational variant.
    merge_now_done: Signal<Local, Bit>,
    merge_now_base_vpn: Signal<Local, Bits<32>>,
    merge_now_base_ppn: Signal<Local, Bits<32>>,
    merge_now_mask: Signal<Local, Bits<16>>,
    lookup_now_done: Signal<Local, Bit>,
    lookup_now_hit: Signal<Local, Bit>,
    lookup_now_ppn: Signal<Local, Bits<32>>,

    // Typed constants: rust-hdl prints bare literals as 32-bit numbers, so every operand
    // that is not 32 bits wide gets a constant of its own width.
    slot_offset: [Constant<Bits<32>>; SLOTS],
    slot_bit: [Constant<Bits<16>>; SLOTS],
    coalescable_bits: Constant<Bits<64>>,
    coalescable_value: Constant<Bits<64>>,
    permission_bits: Constant<Bits<64>>,
    ppn_lsb: Constant<Bits<6>>,
    ppn_field_mask: Constant<Bits<32>>,
    group_bits: Constant<Bits<32>>,
    slot_bits: Constant<Bits<32>>,
    zero16: Constant<Bits<16>>,
    zero32: Constant<Bits<32>>,
    /// `CoalescerConfig::output_registers`: fixed at construction, so the emitted Verilog
    /// carries it as a parameter and yosys folds the output select.
    output_registers: Constant<Bit>,

    // Output registers (unread, and removed by synthesis, without `output_registers`).
    merge_done_q: DFF<Bit>,
    merge_base_vpn_q: DFF<Bits<32>>,
    merge_base_ppn_q: DFF<Bits<32>>,
    merge_mask_q: DFF<Bits<16>>,
    lookup_done_q: DFF<Bit>,
    lookup_hit_q: DFF<Bit>,
    lookup_ppn_q: DFF<Bits<32>>,
}

impl TlbCoalescerRtl {
    /// Build the module for `cfg`.
    ///
    /// # Panics
    /// If `page_frames_log2 > 9`, which `HwConfig::validate` rejects before any config
    /// reaches here (the PPN select `PTE[12 + page_frames_log2 +: 32]` must stay in the PTE).
    pub fn new(cfg: &CoalescerConfig) -> Self {
        assert!(
            cfg.page_frames_log2 <= 9,
            "tlb_coalescer.page_frames_log2 = {} (expected 0..=9; validate the HwConfig first)",
            cfg.page_frames_log2
        );
        let decode = PteDecode::new(cfg);
        let slot_group = (SLOTS as u64) - 1;
        // The constants carry the PTE decoding for `cfg`; every port, local and output
        // register starts at its default.
        fill_fields! { TlbCoalescerRtl {
            slot_offset: core::array::from_fn(|i| Constant::new((i as u64).into())),
            slot_bit: core::array::from_fn(|i| Constant::new((1u64 << i).into())),
            coalescable_bits: Constant::new((PTE_VALID | decode.must_be_zero).into()),
            coalescable_value: Constant::new(PTE_VALID.into()),
            permission_bits: Constant::new(PTE_PERMISSIONS.into()),
            ppn_lsb: Constant::new(u64::from(decode.ppn_lsb).into()),
            ppn_field_mask: Constant::new(u64::from(decode.ppn_field_mask).into()),
            group_bits: Constant::new((0xFFFF_FFFF & !slot_group).into()),
            slot_bits: Constant::new(slot_group.into()),
            zero16: Constant::new(0u64.into()),
            zero32: Constant::new(0u64.into()),
            output_registers: Constant::new(cfg.output_registers),
        }
        // The ports, then the combinational locals, then the output registers.
        Default::default() => [
            reset, merge_valid, merge_vpn, pte0, pte1, pte2, pte3, pte4, pte5, pte6, pte7,
            pte8, pte9, pte10, pte11, pte12, pte13, pte14, pte15, lookup_valid, lookup_vpn,
            entry_base_vpn, entry_base_ppn, entry_mask, merge_done, merge_base_vpn,
            merge_base_ppn, merge_mask, lookup_done, lookup_hit, lookup_ppn, clock,
        ]
        Default::default() => [
            line, pte_ppn_window, slot_coalescable, slot_permissions, slot_base_ppn,
            requested_coalescable, requested_permissions, requested_base_ppn, merged_mask,
            lookup_slot, lookup_slot_set, lookup_hits, merge_now_done, merge_now_base_vpn,
            merge_now_base_ppn, merge_now_mask, lookup_now_done, lookup_now_hit,
            lookup_now_ppn,
        ]
        Default::default() => [
            merge_done_q, merge_base_vpn_q, merge_base_ppn_q, merge_mask_q, lookup_done_q,
            lookup_hit_q, lookup_ppn_q,
        ]
        }
    }
}

impl Logic for TlbCoalescerRtl {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            merge_done_q,
            merge_base_vpn_q,
            merge_base_ppn_q,
            merge_mask_q,
            lookup_done_q,
            lookup_hit_q,
            lookup_ppn_q
        );
        // Merge unit, step 1: decode every slot.
        self.line[0].next = self.pte0.val();
        self.line[1].next = self.pte1.val();
        self.line[2].next = self.pte2.val();
        self.line[3].next = self.pte3.val();
        self.line[4].next = self.pte4.val();
        self.line[5].next = self.pte5.val();
        self.line[6].next = self.pte6.val();
        self.line[7].next = self.pte7.val();
        self.line[8].next = self.pte8.val();
        self.line[9].next = self.pte9.val();
        self.line[10].next = self.pte10.val();
        self.line[11].next = self.pte11.val();
        self.line[12].next = self.pte12.val();
        self.line[13].next = self.pte13.val();
        self.line[14].next = self.pte14.val();
        self.line[15].next = self.pte15.val();
        for i in 0..16 {
            // Valid, and every must-be-zero bit (misaligned PFN, PPN beyond 32 bits) clear.
            self.slot_coalescable[i].next =
                (self.line[i].val() & self.coalescable_bits.val()) == self.coalescable_value.val();
            self.slot_permissions[i].next = self.line[i].val() & self.permission_bits.val();
            // The one 64-to-32-bit select per PTE: PTE[ppn_lsb +: 32], the PPN.
            self.pte_ppn_window[i].next = self.line[i]
                .val()
                .get_bits::<32>(self.ppn_lsb.val().index());
            // PPN − slot is equal for every slot that keeps the requested VPN-to-PPN offset.
            self.slot_base_ppn[i].next = (self.pte_ppn_window[i].val() & self.ppn_field_mask.val())
                - self.slot_offset[i].val();
        }

        // Step 2: select the requested slot (a 16-way mux on merge_vpn[3:0]). Slot 0's
        // values are only the default that keeps the locals latch-free.
        self.requested_coalescable.next = self.slot_coalescable[0].val();
        self.requested_permissions.next = self.slot_permissions[0].val();
        self.requested_base_ppn.next = self.slot_base_ppn[0].val();
        for i in 0..16 {
            if (self.merge_vpn.val() & self.slot_bits.val()) == self.slot_offset[i].val() {
                self.requested_coalescable.next = self.slot_coalescable[i].val();
                self.requested_permissions.next = self.slot_permissions[i].val();
                self.requested_base_ppn.next = self.slot_base_ppn[i].val();
            }
        }

        // Step 3: compare every slot with the requested one.
        self.merged_mask.next = self.zero16.val();
        for i in 0..16 {
            if self.slot_coalescable[i].val()
                & (self.slot_permissions[i].val() == self.requested_permissions.val())
                & (self.slot_base_ppn[i].val() == self.requested_base_ppn.val())
            {
                self.merged_mask.next = self.merged_mask.val() | self.slot_bit[i].val();
            }
        }

        // Lookup unit: tag compare on bits 31..4, slot bit from the mask, PPN by addition.
        self.lookup_slot.next = self.lookup_vpn.val() & self.slot_bits.val();
        // entry_mask[slot], written as a 16-way mux (rust-hdl would shift through a bignum).
        self.lookup_slot_set.next = false;
        for i in 0..16 {
            if self.lookup_slot.val() == self.slot_offset[i].val() {
                self.lookup_slot_set.next = (self.entry_mask.val() & self.slot_bit[i].val()).any();
            }
        }
        self.lookup_hits.next = ((self.lookup_vpn.val() & self.group_bits.val())
            == (self.entry_base_vpn.val() & self.group_bits.val()))
            & self.lookup_slot_set.val();

        // This cycle's results; reset blocks both units, so they read 0 under it.
        self.merge_now_done.next = self.merge_valid.val() & !self.reset.val();
        self.merge_now_base_vpn.next = self.zero32.val();
        self.merge_now_base_ppn.next = self.zero32.val();
        self.merge_now_mask.next = self.zero16.val();
        if self.merge_now_done.val() {
            self.merge_now_base_vpn.next = self.merge_vpn.val() & self.group_bits.val();
            if self.requested_coalescable.val() {
                self.merge_now_base_ppn.next = self.requested_base_ppn.val();
                self.merge_now_mask.next = self.merged_mask.val();
            }
        }
        self.lookup_now_done.next = self.lookup_valid.val() & !self.reset.val();
        self.lookup_now_hit.next = self.lookup_now_done.val() & self.lookup_hits.val();
        self.lookup_now_ppn.next = self.zero32.val();
        if self.lookup_now_hit.val() {
            self.lookup_now_ppn.next = self.entry_base_ppn.val() + self.lookup_slot.val();
        }

        // The registers load from the units directly, not from the `*_now_*` results: the
        // same logic as before the combinational variant existed, so the default block
        // synthesises to the same netlist (the results' reset gating is then dead logic).
        if self.reset.val() {
            self.merge_done_q.d.next = false;
            self.merge_base_vpn_q.d.next = self.zero32.val();
            self.merge_base_ppn_q.d.next = self.zero32.val();
            self.merge_mask_q.d.next = self.zero16.val();
            self.lookup_done_q.d.next = false;
            self.lookup_hit_q.d.next = false;
            self.lookup_ppn_q.d.next = self.zero32.val();
        } else {
            // Flags load every cycle; data registers load with their valid, else hold.
            self.merge_done_q.d.next = self.merge_valid.val();
            if self.merge_valid.val() {
                self.merge_base_vpn_q.d.next = self.merge_vpn.val() & self.group_bits.val();
                self.merge_base_ppn_q.d.next = self.zero32.val();
                self.merge_mask_q.d.next = self.zero16.val();
                if self.requested_coalescable.val() {
                    self.merge_base_ppn_q.d.next = self.requested_base_ppn.val();
                    self.merge_mask_q.d.next = self.merged_mask.val();
                }
            }
            self.lookup_done_q.d.next = self.lookup_valid.val();
            self.lookup_hit_q.d.next = self.lookup_valid.val() & self.lookup_hits.val();
            if self.lookup_valid.val() {
                self.lookup_ppn_q.d.next = self.zero32.val();
                if self.lookup_hits.val() {
                    self.lookup_ppn_q.d.next = self.entry_base_ppn.val() + self.lookup_slot.val();
                }
            }
        }

        // The output select, last: rust-hdl's loop check wants every local written before
        // it is read.
        if self.output_registers.val() {
            // The registers drive the outputs: results appear the cycle after their inputs.
            self.merge_done.next = self.merge_done_q.q.val();
            self.merge_base_vpn.next = self.merge_base_vpn_q.q.val();
            self.merge_base_ppn.next = self.merge_base_ppn_q.q.val();
            self.merge_mask.next = self.merge_mask_q.q.val();
            self.lookup_done.next = self.lookup_done_q.q.val();
            self.lookup_hit.next = self.lookup_hit_q.q.val();
            self.lookup_ppn.next = self.lookup_ppn_q.q.val();
        } else {
            // The paper's combinational unit: this cycle's results, nothing held.
            self.merge_done.next = self.merge_now_done.val();
            self.merge_base_vpn.next = self.merge_now_base_vpn.val();
            self.merge_base_ppn.next = self.merge_now_base_ppn.val();
            self.merge_mask.next = self.merge_now_mask.val();
            self.lookup_done.next = self.lookup_now_done.val();
            self.lookup_hit.next = self.lookup_now_hit.val();
            self.lookup_ppn.next = self.lookup_now_ppn.val();
        }
    }
}

mod hdl_sim;
pub use hdl_sim::TlbCoalescerHdlSim;

#[cfg(test)]
mod tests;
