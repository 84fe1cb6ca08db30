//! Behavioural twin of the TLB coalescing logic (CLAP §4.6, Fig. 17).
//!
//! CLAP maps the pages of a reserved, physically contiguous frame one 64 KB page at a time,
//! so the PTEs of such a region keep one VPN-to-PPN offset even while the region is only
//! partly mapped. When the walker brings a 128-byte line of sixteen PTEs into the L2 cache,
//! the coalescing logic in the TLB controller turns that line into a single TLB entry:
//!
//! * **merge unit** — line + requested VPN → (base VPN, base PPN, 16-bit valid mask). A slot
//!   is in the mask when its PTE is valid, maps a page-aligned frame, has the requested PTE's
//!   permissions and the requested PTE's VPN-to-PPN offset (holes are allowed);
//! * **lookup unit** — entry + VPN → hit and PPN, rebuilt by concatenation and addition.
//!
//! By default both units register their results: inputs applied in cycle `t` appear on the
//! outputs in cycle `t + 1` together with `merge_done` / `lookup_done` (see `protocol` for
//! the cycle convention). With `output_registers = false` the block is the paper's purely
//! combinational unit: cycle `t`'s outputs are a function of cycle `t`'s inputs alone, and
//! every output is 0 in a cycle without its request (nothing holds). The RTL module `mcmvm_rtl::tlb_coalescer::TlbCoalescerRtl` has the same
//! cycle-by-cycle behaviour; `rtl/src/tlb_coalescer.md` walks through it.
//!
//! # PTE fields read (SPEC §3 layout; the decode is private to the block on purpose)
//! | bits | field | use here |
//! | --- | --- | --- |
//! | 0 | valid | a slot must be valid |
//! | 1..=6 | system, snooped, (3), executable, readable, writeable | must equal the requested PTE's |
//! | 7..=11 | FRAG | ignored: the merge finds contiguity itself, whatever the driver wrote |
//! | 12..=47 | PFN of 4 KB frames | PPN = PFN >> `page_frames_log2`; the low bits must be 0 |
//! | 48..=55 | allocation ID | ignored (the Remote Tracker's field) |
//! | 56 | PDE-as-PTE | ignored: such entries live in directory lines, never in a PTB line |
//!
//! A PFN whose low `page_frames_log2` bits are not zero is not a valid mapping of a whole
//! coalesced-size page, so it is excluded from the mask exactly like an invalid PTE. With
//! `page_frames_log2 < 4` a PPN can need more than the 32 bits of the ports; such PTEs are
//! excluded as well, so every PPN the block reports is exact.

use crate::config::CoalescerConfig;
use crate::protocol::{CoalIn, CoalOut, CycleModel};

/// PTEs in one 128-byte line, and so slots in a coalesced entry.
pub const SLOTS: usize = 16;
/// log2 of [`SLOTS`]: the low VPN bits that index a slot.
pub const SLOT_BITS: u32 = 4;
/// PTE bit 0: the entry maps a page.
pub const PTE_VALID: u64 = 1;
/// PTE bits 1..=6: the permission bits that must agree across a coalesced entry.
pub const PTE_PERMISSIONS: u64 = 0x7E;
/// First bit of the PFN field (4 KB frames).
pub const PTE_PFN_SHIFT: u32 = 12;
/// Width of the PFN field, bits 12..=47.
pub const PTE_PFN_BITS: u32 = 36;
/// Width of the VPN and PPN ports.
pub const PAGE_NUMBER_BITS: u32 = 32;

const SLOT_MASK: u32 = (SLOTS as u32) - 1;

/// One coalesced TLB entry: slot `i` maps VPN `base_vpn + i` to PPN `base_ppn + i`
/// (32-bit wrapping) when bit `i` of `mask` is set.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CoalescedEntry {
    /// First VPN of the sixteen-page group (low four bits zero).
    pub base_vpn: u32,
    /// PPN that VPN `base_vpn` would map to; 0 when `mask` is 0.
    pub base_ppn: u32,
    /// Slots that the entry translates.
    pub mask: u16,
}

impl CoalescedEntry {
    /// The lookup unit: `Some(ppn)` when `vpn` falls in this entry's group and its slot is
    /// set. The slot is the VPN's low four bits (the tag is compared on the bits above, so
    /// the VPN is the concatenation tag ‖ slot); the PPN is `base_ppn + slot`, an addition
    /// because a reserved frame need not be aligned to sixteen pages. Wraps at 32 bits.
    #[inline]
    pub fn lookup(&self, vpn: u32) -> Option<u32> {
        let slot = vpn & SLOT_MASK;
        let same_group = (vpn & !SLOT_MASK) == (self.base_vpn & !SLOT_MASK);
        if same_group && (self.mask >> slot) & 1 == 1 {
            Some(self.base_ppn.wrapping_add(slot))
        } else {
            None
        }
    }

    /// Pages this entry translates (0..=16).
    pub fn pages(&self) -> u32 {
        self.mask.count_ones()
    }
}

/// The merge unit's view of a PTE, derived once from the configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MergeUnit {
    /// First PTE bit of the PPN: 12 + `page_frames_log2`.
    ppn_lsb: u32,
    /// PPN bits that exist in the PFN field (fewer than 32 for pages above 64 KB).
    ppn_field_mask: u32,
    /// PTE bits that must be zero for a slot to be coalescable: the PFN bits below the page
    /// size (misaligned frame) and the PFN bits a 32-bit PPN cannot hold.
    must_be_zero: u64,
}

impl MergeUnit {
    /// Derive the decode from `page_frames_log2` (validated to 0..=9 by `HwConfig`).
    pub fn new(cfg: &CoalescerConfig) -> Self {
        let frames_log2 = cfg.page_frames_log2.min(PTE_PFN_BITS - 1);
        let ppn_bits_in_field = PTE_PFN_BITS - frames_log2;
        let ppn_field_mask = if ppn_bits_in_field >= PAGE_NUMBER_BITS {
            u32::MAX
        } else {
            (1u32 << ppn_bits_in_field) - 1
        };
        let misaligned = ((1u64 << frames_log2) - 1) << PTE_PFN_SHIFT;
        let pfn_top = PTE_PFN_SHIFT + PTE_PFN_BITS;
        let ppn_top = PTE_PFN_SHIFT + frames_log2 + PAGE_NUMBER_BITS;
        let unrepresentable = if ppn_top < pfn_top {
            ((1u64 << (pfn_top - ppn_top)) - 1) << ppn_top
        } else {
            0
        };
        MergeUnit {
            ppn_lsb: PTE_PFN_SHIFT + frames_log2,
            ppn_field_mask,
            must_be_zero: misaligned | unrepresentable,
        }
    }

    /// First PTE bit of the PPN.
    pub fn ppn_lsb(&self) -> u32 {
        self.ppn_lsb
    }

    /// Mask applied to the 32 PTE bits starting at [`MergeUnit::ppn_lsb`].
    pub fn ppn_field_mask(&self) -> u32 {
        self.ppn_field_mask
    }

    /// PTE bits that exclude a slot when any is set.
    pub fn must_be_zero(&self) -> u64 {
        self.must_be_zero
    }

    /// Valid, page-aligned, and its PPN fits the 32-bit ports.
    #[inline]
    pub fn coalescable(&self, pte: u64) -> bool {
        pte & PTE_VALID != 0 && pte & self.must_be_zero == 0
    }

    /// The PPN a PTE maps (meaningful only when [`MergeUnit::coalescable`]).
    #[inline]
    pub fn ppn(&self, pte: u64) -> u32 {
        ((pte >> self.ppn_lsb) as u32) & self.ppn_field_mask
    }

    /// Coalesce a line of sixteen PTEs around the PTE of `vpn` (slot `vpn & 15`).
    pub fn merge(&self, vpn: u32, line: &[u64; SLOTS]) -> CoalescedEntry {
        let requested_slot = vpn & SLOT_MASK;
        let base_vpn = vpn & !SLOT_MASK;
        let requested = line[requested_slot as usize];
        if !self.coalescable(requested) {
            return CoalescedEntry {
                base_vpn,
                base_ppn: 0,
                mask: 0,
            };
        }
        // Equal offsets VPN − PPN is the same as equal "PPN − slot", which is the base PPN.
        let base_ppn = self.ppn(requested).wrapping_sub(requested_slot);
        let permissions = requested & PTE_PERMISSIONS;
        let mut mask = 0u16;
        for (slot, &pte) in line.iter().enumerate() {
            let same_offset = self.ppn(pte).wrapping_sub(slot as u32) == base_ppn;
            if self.coalescable(pte) && pte & PTE_PERMISSIONS == permissions && same_offset {
                mask |= 1 << slot;
            }
        }
        CoalescedEntry {
            base_vpn,
            base_ppn,
            mask,
        }
    }
}

/// Behavioural twin of the coalescing logic: the merge and lookup units, with registered
/// outputs (the default) or without (`output_registers = false`). State is exactly the
/// output registers; the combinational variant has none.
#[derive(Debug, Clone)]
pub struct TlbCoalescer {
    merge_unit: MergeUnit,
    /// Whether the outputs go through the registers (`CoalescerConfig::output_registers`).
    output_registers: bool,
    /// Output registers, visible in the cycle after they were loaded (always the reset
    /// value in the combinational variant).
    registered: CoalOut,
}

impl TlbCoalescer {
    /// A coalescer with cleared output registers (the RTL's power-on state).
    pub fn new(cfg: &CoalescerConfig) -> Self {
        TlbCoalescer {
            merge_unit: MergeUnit::new(cfg),
            output_registers: cfg.output_registers,
            registered: CoalOut::default(),
        }
    }

    /// The merge unit (the PTE decode in use).
    pub fn merge_unit(&self) -> &MergeUnit {
        &self.merge_unit
    }

    /// The outputs the next `step` will return if its inputs are idle: the output
    /// registers, or (combinational variant) all zero.
    pub fn outputs(&self) -> CoalOut {
        self.registered
    }

    /// Whether results appear one cycle after their inputs (`output_registers`).
    pub fn output_registers(&self) -> bool {
        self.output_registers
    }

    /// What both units compute from `input` this cycle: every field is its request's
    /// result when the request is there and `reset` is low, else 0.
    fn combinational(&self, input: &CoalIn) -> CoalOut {
        let mut now = CoalOut::default();
        if input.reset != 0 {
            // Reset blocks both units.
            return now;
        }
        if input.merge_valid & 1 != 0 {
            let entry = self.merge_unit.merge(input.merge_vpn as u32, &input.ptes());
            now.merge_done = 1;
            now.merge_base_vpn = u64::from(entry.base_vpn);
            now.merge_base_ppn = u64::from(entry.base_ppn);
            now.merge_mask = u64::from(entry.mask);
        }
        if input.lookup_valid & 1 != 0 {
            let entry = CoalescedEntry {
                base_vpn: input.entry_base_vpn as u32,
                base_ppn: input.entry_base_ppn as u32,
                mask: input.entry_mask as u16,
            };
            let hit = entry.lookup(input.lookup_vpn as u32);
            now.lookup_done = 1;
            now.lookup_hit = u64::from(hit.is_some());
            now.lookup_ppn = u64::from(hit.unwrap_or(0));
        }
        now
    }
}

impl CycleModel for TlbCoalescer {
    type In = CoalIn;
    type Out = CoalOut;

    fn step(&mut self, input: &CoalIn) -> CoalOut {
        let now = self.combinational(input);
        if !self.output_registers {
            // The paper's combinational unit: this cycle's results, nothing kept.
            return now;
        }
        let visible = self.registered;
        let next = &mut self.registered;
        // Reset clears every register (`now` is all zero then). Otherwise the done/hit
        // flags load every cycle and the data registers load only with their valid and
        // hold without it (a register enable, as in the RTL).
        let reset = input.reset != 0;
        next.merge_done = now.merge_done;
        if reset || now.merge_done != 0 {
            next.merge_base_vpn = now.merge_base_vpn;
            next.merge_base_ppn = now.merge_base_ppn;
            next.merge_mask = now.merge_mask;
        }
        next.lookup_done = now.lookup_done;
        next.lookup_hit = now.lookup_hit;
        if reset || now.lookup_done != 0 {
            next.lookup_ppn = now.lookup_ppn;
        }
        visible
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RW: u64 = 0b110_0000; // readable + writeable

    /// A valid PTE mapping 64 KB page `ppn` (default config) with permission bits `perms`.
    fn pte(ppn: u64, perms: u64) -> u64 {
        PTE_VALID | perms | (ppn << (PTE_PFN_SHIFT + 4))
    }

    fn unit() -> MergeUnit {
        MergeUnit::new(&CoalescerConfig::default())
    }

    #[test]
    fn contiguous_line_coalesces_into_a_full_mask() {
        let line: [u64; 16] = core::array::from_fn(|i| pte(0x500 + i as u64, RW));
        let e = unit().merge(0x1_0103, &line);
        assert_eq!(
            e,
            CoalescedEntry {
                base_vpn: 0x1_0100,
                base_ppn: 0x500,
                mask: 0xFFFF
            }
        );
        assert_eq!(e.lookup(0x1_010F), Some(0x50F));
    }

    #[test]
    fn holes_permissions_and_offsets_are_checked_per_slot() {
        let mut line: [u64; 16] = core::array::from_fn(|i| pte(0x23 + i as u64, RW));
        line[2] = 0; // hole: not mapped yet
        line[5] |= 1 << 4; // executable as well: different permissions
        line[9] = pte(0x999, RW); // another reservation: different offset
        line[11] |= 1 << PTE_PFN_SHIFT; // misaligned frame
        line[12] |= (0x3F << 48) | (1 << 56) | (0x1F << 7); // ignored fields
        let e = unit().merge(0x47, &line);
        assert_eq!(e.base_vpn, 0x40);
        assert_eq!(e.base_ppn, 0x23);
        assert_eq!(e.mask, !((1 << 2) | (1 << 5) | (1 << 9) | (1 << 11)));
    }

    #[test]
    fn invalid_or_misaligned_requested_pte_gives_an_empty_entry() {
        let mut line: [u64; 16] = core::array::from_fn(|i| pte(0x100 + i as u64, RW));
        line[3] &= !PTE_VALID;
        assert_eq!(unit().merge(3, &line).mask, 0);
        line[3] = pte(0x103, RW) | (1 << PTE_PFN_SHIFT);
        assert_eq!(unit().merge(3, &line), CoalescedEntry::default());
    }

    #[test]
    fn base_ppn_wraps_at_32_bits_and_lookup_unwraps_it() {
        // Requested slot 7 maps PPN 2, so the base is 2 - 7 = 0xFFFF_FFFB.
        let line: [u64; 16] =
            core::array::from_fn(|i| pte((i as u64 + 0xFFFF_FFFB) & 0xFFFF_FFFF, RW));
        let e = unit().merge(0x7, &line);
        assert_eq!(e.base_ppn, 0xFFFF_FFFB);
        assert_eq!(e.mask, 0xFFFF);
        assert_eq!(e.lookup(0x7), Some(2));
        assert_eq!(e.lookup(0x4), Some(0xFFFF_FFFF));
    }

    #[test]
    fn lookup_hits_only_inside_the_group_on_set_slots() {
        let e = CoalescedEntry {
            base_vpn: 0x120,
            base_ppn: 0x80,
            mask: 0x8001,
        };
        assert_eq!(e.lookup(0x120), Some(0x80));
        assert_eq!(e.lookup(0x12F), Some(0x8F));
        assert_eq!(e.lookup(0x121), None);
        assert_eq!(e.lookup(0x11F), None);
        assert_eq!(e.lookup(0x130), None);
    }

    /// `pages` is the number of set mask bits: exactly the slots `lookup` hits.
    #[test]
    fn pages_counts_the_slots_the_entry_translates() {
        let entry = |mask| CoalescedEntry {
            base_vpn: 0x120,
            base_ppn: 0x80,
            mask,
        };
        assert_eq!(entry(0xFFFF).pages(), 16);
        assert_eq!(entry(0x8005).pages(), 3);
        assert_eq!(entry(0).pages(), 0);
        let hits = (0x120..0x130).filter(|&v| entry(0x8005).lookup(v).is_some());
        assert_eq!(hits.count(), 3);
    }

    #[test]
    fn decode_follows_page_frames_log2() {
        let huge = MergeUnit::new(&CoalescerConfig {
            page_frames_log2: 9,
            ..Default::default()
        });
        assert_eq!(huge.ppn_lsb(), 21);
        assert_eq!(huge.ppn_field_mask(), (1 << 27) - 1);
        assert_eq!(huge.must_be_zero(), 0x1FF << 12);
        let base = MergeUnit::new(&CoalescerConfig {
            page_frames_log2: 0,
            ..Default::default()
        });
        // 4 KB pages: PFN bits 32..=35 (PTE bits 44..=47) do not fit a 32-bit PPN.
        assert_eq!(base.must_be_zero(), 0xF << 44);
        assert!(!base.coalescable(PTE_VALID | (1 << 44)));
    }

    #[test]
    fn outputs_appear_one_cycle_later_and_reset_clears_them() {
        let mut twin = TlbCoalescer::new(&CoalescerConfig::default());
        let mut input = CoalIn {
            merge_valid: 1,
            merge_vpn: 0x31,
            ..Default::default()
        };
        input.set_ptes(&core::array::from_fn(|i| pte(0x70 + i as u64, RW)));
        assert_eq!(twin.step(&input), CoalOut::default());
        // `outputs` reads the registers without a step: what an idle step returns next.
        let pending = twin.outputs();
        let out = twin.step(&CoalIn::default());
        assert_eq!(pending, out);
        assert_eq!((out.merge_done, out.merge_base_vpn), (1, 0x30));
        assert_eq!((out.merge_base_ppn, out.merge_mask), (0x70, 0xFFFF));
        // Data registers hold while idle; the done flag drops.
        let pending = twin.outputs();
        let idle = twin.step(&CoalIn::default());
        assert_eq!(pending, idle);
        assert_eq!((idle.merge_done, idle.merge_mask), (0, 0xFFFF));
        let reset = CoalIn {
            reset: 1,
            merge_valid: 1,
            lookup_valid: 1,
            ..input
        };
        twin.step(&reset);
        assert_eq!(twin.outputs(), CoalOut::default());
    }

    #[test]
    fn combinational_outputs_answer_in_the_same_cycle_and_never_hold() {
        let mut twin = TlbCoalescer::new(&CoalescerConfig {
            output_registers: false,
            ..Default::default()
        });
        let mut merge = CoalIn {
            merge_valid: 1,
            merge_vpn: 0x31,
            ..Default::default()
        };
        merge.set_ptes(&core::array::from_fn(|i| pte(0x70 + i as u64, RW)));
        let lookup = CoalIn {
            lookup_valid: 1,
            lookup_vpn: 0x35,
            entry_base_vpn: 0x30,
            entry_base_ppn: 0x70,
            entry_mask: 0x0020,
            ..Default::default()
        };
        let merged = CoalOut {
            merge_done: 1,
            merge_base_vpn: 0x30,
            merge_base_ppn: 0x70,
            merge_mask: 0xFFFF,
            ..Default::default()
        };
        let hit = CoalOut {
            lookup_done: 1,
            lookup_hit: 1,
            lookup_ppn: 0x75,
            ..Default::default()
        };
        // Cycle 0: the merge's result is on the outputs of its own cycle.
        assert_eq!(twin.step(&merge), merged);
        // Cycle 1: idle, every output 0 (no register holds the merge).
        assert_eq!(twin.step(&CoalIn::default()), CoalOut::default());
        // Cycle 2: a lookup hit, same cycle; the merge outputs stay 0.
        assert_eq!(twin.step(&lookup), hit);
        // Cycle 3: a miss (slot 6 not in the mask) reads hit 0 and PPN 0.
        let miss = CoalIn {
            lookup_vpn: 0x36,
            ..lookup
        };
        let missed = CoalOut {
            lookup_done: 1,
            ..Default::default()
        };
        assert_eq!(twin.step(&miss), missed);
        // Cycle 4: both units at once.
        let both = CoalIn {
            lookup_valid: 1,
            lookup_vpn: 0x35,
            entry_base_vpn: 0x30,
            entry_base_ppn: 0x70,
            entry_mask: 0x0020,
            ..merge
        };
        let answer = CoalOut {
            lookup_done: 1,
            lookup_hit: 1,
            lookup_ppn: 0x75,
            ..merged
        };
        assert_eq!(twin.step(&both), answer);
        // Cycle 5: reset with both requests blocks both units in that very cycle.
        let reset = CoalIn { reset: 1, ..both };
        assert_eq!(twin.step(&reset), CoalOut::default());
        // Cycle 6: the cycle after reset answers its own request, unaffected by cycle 5.
        assert_eq!(twin.step(&both), answer);
        assert_eq!(twin.outputs(), CoalOut::default(), "no state is kept");
    }

    #[test]
    fn output_registers_reports_the_configured_variant() {
        for registered in [true, false] {
            let cfg = CoalescerConfig {
                output_registers: registered,
                ..CoalescerConfig::default()
            };
            assert_eq!(TlbCoalescer::new(&cfg).output_registers(), registered);
        }
    }
}
