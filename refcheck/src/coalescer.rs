//! Reference monitor of the TLB coalescing logic, from `rtl/src/tlb_coalescer.md` alone.
//!
//! The PTE decode below is written from the README's "PTE fields" table, not taken from the
//! twin (whose `MergeUnit` the RTL shares, so the two cannot disagree on it by
//! construction):
//!
//! | bits | field | here |
//! | --- | --- | --- |
//! | 0 | valid | required |
//! | 1..=6 | permissions | compared with the requested slot's |
//! | 7..=11, 48..=55, 56 | FRAG, allocation ID, PDE-as-PTE | ignored |
//! | 12..=47 | PFN (36 bits, 4 KB frames) | PPN = PFN >> `page_frames_log2` |
//!
//! My readings where the README leaves room:
//! * Bits 57..=63 are not in the table at all; the monitor ignores them (they are neither a
//!   permission nor part of the PFN). The README's RTL formula `(pte & (valid |
//!   must_be_zero)) == valid` does not list them either.
//! * "PPN fits the 32-bit ports": the whole PPN (PFN >> `page_frames_log2`, up to
//!   36 − `page_frames_log2` bits) must be below 2^32; a PPN with higher bits set makes the
//!   slot non-coalescable (not truncated).
//! * Power-on state equals the reset state (stated for this block).
//!
//! Both units are fully specified, so every output is predicted exactly. With
//! `output_registers = true`: `merge_done` / `lookup_done` / `lookup_hit` are 1 only in the
//! cycle after a request, and the data registers hold their last value otherwise (they are
//! *not* zero when `*_done` is 0). With `output_registers = false` (the README's
//! combinational unit): every output is a function of the same cycle's inputs, `*_done =
//! *_valid & !reset`, and every other output is its result when its `*_done` is 1, else 0.

use crate::coverage::{bins, Coverage, Covered};
use crate::{bits, compare, Monitor, Violation};
use mcmvm_protocol::config::CoalescerConfig;
use mcmvm_protocol::protocol::{CoalIn, CoalOut};

const VALID: u64 = 1;
/// Bits 1..=6: system, snooped, (3), executable, readable, writeable.
const PERMISSIONS: u64 = 0b111_1110;
const PFN_SHIFT: u32 = 12;
const PFN_BITS: u32 = 36;

/// One slot of a line as the merge unit sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slot {
    /// Valid, PFN aligned to the coalesced page, PPN within 32 bits.
    pub coalescable: bool,
    /// PTE bits 1..=6, in place.
    pub permissions: u64,
    /// `PPN - slot` mod 2^32: slots with equal values share one VPN-to-PPN offset.
    pub implied_base: u32,
}

/// Decode PTE `pte` sitting in slot `slot` of its line, for coalesced pages of
/// 2^`page_frames_log2` 4 KB frames.
pub fn decode(pte: u64, slot: u32, page_frames_log2: u32) -> Slot {
    let pfn = (pte >> PFN_SHIFT) & mcmvm_protocol::protocol::mask(PFN_BITS);
    let low = mcmvm_protocol::protocol::mask(page_frames_log2.min(PFN_BITS));
    let ppn = pfn >> page_frames_log2.min(PFN_BITS);
    let coalescable = pte & VALID != 0 && pfn & low == 0 && ppn >> 32 == 0;
    Slot {
        coalescable,
        permissions: pte & PERMISSIONS,
        implied_base: (ppn as u32).wrapping_sub(slot),
    }
}

/// The merge of a line around requested VPN `vpn`: (mask, base PPN).
pub fn merge(line: &[u64; 16], vpn: u64, page_frames_log2: u32) -> (u64, u64) {
    let slots: [Slot; 16] = core::array::from_fn(|i| decode(line[i], i as u32, page_frames_log2));
    let r = slots[(vpn & 15) as usize];
    if !r.coalescable {
        return (0, 0);
    }
    let mask = slots.iter().enumerate().fold(0u64, |m, (i, s)| {
        let same =
            s.coalescable && s.permissions == r.permissions && s.implied_base == r.implied_base;
        m | (u64::from(same) << i)
    });
    (mask, u64::from(r.implied_base))
}

/// The lookup of `vpn` in entry (base VPN, base PPN, mask): (hit, PPN).
pub fn lookup(vpn: u64, base_vpn: u64, base_ppn: u64, mask: u64) -> (bool, u64) {
    let s = vpn & 15;
    let hit = vpn >> 4 == base_vpn >> 4 && (mask >> s) & 1 == 1;
    // Addition, not concatenation: a reserved frame need not be 16-page aligned.
    let ppn = if hit { (base_ppn + s) & 0xFFFF_FFFF } else { 0 };
    (hit, ppn)
}

bins! {
    /// What a merge or lookup request was, per the README. The mask classes partition the
    /// merges: empty, only the requested slot, all 16, one contiguous run (partial), holes.
    pub enum CoalBin {
        /// The requested slot is not coalescable: mask and base 0.
        MaskEmpty = "mask_empty",
        MaskOnlyRequested = "mask_only_requested_slot",
        MaskAll16 = "mask_all_16",
        MaskContiguousPartial = "mask_contiguous_partial",
        MaskHoles = "mask_with_holes",
        /// A coalescable slot with the requested slot's implied base but other permissions.
        PermissionMismatch = "permission_mismatch_excluded",
        /// A coalescable slot with the requested slot's permissions but another `PPN - i`.
        OffsetMismatch = "offset_mismatch_excluded",
        /// A valid slot whose PFN is not aligned to the coalesced page.
        MisalignedFrame = "misaligned_frame",
        /// A merged slot's PPN (`base + i`) wraps mod 2^32.
        PpnWrap = "merge_ppn_wrap",
        LookupHit = "lookup_hit",
        /// Tag (`vpn[31:4]`) differs from the entry's.
        LookupMissTag = "lookup_miss_tag",
        /// Tag matches, the slot's mask bit is 0.
        LookupMissMask = "lookup_miss_mask_bit",
        /// A hit whose PPN (`base_ppn + vpn[3:0]`) wraps mod 2^32.
        LookupPpnWrap = "lookup_ppn_wrap",
        MergeAndLookup = "merge_and_lookup_same_cycle",
        /// Reset with a merge or a lookup request in the same cycle (dropped).
        ResetWithRequest = "reset_with_request",
        /// A cycle without request or reset right after one with a request: the request's
        /// answer shows (registered) or every output reads 0 (combinational: no hold).
        IdleAfterRequest = "idle_cycle_after_request",
        /// A request in the cycle right after a reset: answered as usual (the combinational
        /// unit's reset reaches no other cycle).
        RequestAfterReset = "request_right_after_reset",
    }
}

/// The mask-shape and exclusion bins of the merge of `line` around `vpn`.
fn cover_merge(c: &mut Coverage, line: &[u64; 16], vpn: u64, page_frames_log2: u32) {
    let r = (vpn & 15) as usize;
    let slots: [Slot; 16] = core::array::from_fn(|i| decode(line[i], i as u32, page_frames_log2));
    let (mask, base) = merge(line, vpn, page_frames_log2);
    let run = mask >> mask.trailing_zeros().min(63);
    c.hit(match mask {
        0 => CoalBin::MaskEmpty,
        0xFFFF => CoalBin::MaskAll16,
        m if m == 1 << r => CoalBin::MaskOnlyRequested,
        _ if run & (run + 1) == 0 => CoalBin::MaskContiguousPartial,
        _ => CoalBin::MaskHoles,
    });
    let req = slots[r];
    let low = mcmvm_protocol::protocol::mask(page_frames_log2.min(PFN_BITS));
    let misaligned = line
        .iter()
        .any(|&p| p & VALID != 0 && (p >> PFN_SHIFT) & low != 0);
    c.hit_if(misaligned, CoalBin::MisalignedFrame);
    if !req.coalescable {
        return;
    }
    let others = slots
        .iter()
        .enumerate()
        .filter(|&(i, s)| i != r && s.coalescable);
    let (mut perms, mut offset) = (false, false);
    for (_, s) in others {
        let same_perms = s.permissions == req.permissions;
        let same_base = s.implied_base == req.implied_base;
        perms |= same_base && !same_perms;
        offset |= same_perms && !same_base;
    }
    c.hit_if(perms, CoalBin::PermissionMismatch);
    c.hit_if(offset, CoalBin::OffsetMismatch);
    // The highest merged slot's PPN is the one that wraps first.
    let top = 63 - u64::from(mask.leading_zeros());
    c.hit_if(base + top > 0xFFFF_FFFF, CoalBin::PpnWrap);
}

/// Checks `CoalOut` against the coalescer README.
pub struct CoalescerMonitor {
    page_frames_log2: u32,
    /// `output_registers`: answers one cycle late and data outputs hold (true), or answers
    /// in the request's cycle with no state (false).
    registered: bool,
    /// The seven output registers as the README says they are now (unused, all zero, for
    /// the combinational unit).
    regs: CoalOut,
    /// The previous cycle's input and number (what the registers were loaded from).
    last: Option<(u64, CoalIn)>,
    /// Cycle and input of the last merge / lookup (the source of held data registers).
    last_merge: Option<(u64, CoalIn)>,
    last_lookup: Option<(u64, CoalIn)>,
    coverage: Coverage,
}

impl CoalescerMonitor {
    /// A monitor of the coalescer with parameters `cfg`, in its power-on (= reset) state.
    pub fn new(cfg: &CoalescerConfig) -> Self {
        CoalescerMonitor {
            page_frames_log2: cfg.page_frames_log2,
            registered: cfg.output_registers,
            regs: CoalOut::default(),
            last: None,
            last_merge: None,
            last_lookup: None,
            coverage: Coverage::new("coalescer", CoalBin::NAMES),
        }
    }

    /// The rule behind a combinational prediction for `input` of this cycle.
    fn explain_combinational(&self, signal: &'static str, input: &CoalIn) -> String {
        let head = "output_registers = false: outputs are this cycle's results, 0 without \
                    the request or under reset (no hold)";
        if bits(input.reset, 1) != 0 {
            return format!("{head}; reset is high this cycle: every output reads 0");
        }
        if signal.starts_with("merge") {
            if bits(input.merge_valid, 1) == 0 {
                return format!("{head}; no merge_valid this cycle: merge outputs read 0");
            }
            format!("{head}; merge this cycle: {}", self.merge_detail(input))
        } else {
            if bits(input.lookup_valid, 1) == 0 {
                return format!("{head}; no lookup_valid this cycle: lookup outputs read 0");
            }
            let (hit, ppn) = lookup(
                bits(input.lookup_vpn, 32),
                bits(input.entry_base_vpn, 32),
                bits(input.entry_base_ppn, 32),
                bits(input.entry_mask, 16),
            );
            format!(
                "{head}; lookup this cycle: vpn {:#x}, entry base vpn {:#x} ppn {:#x} mask \
                 {:#06x} -> hit {hit}, ppn {ppn:#x}",
                input.lookup_vpn, input.entry_base_vpn, input.entry_base_ppn, input.entry_mask
            )
        }
    }

    fn explain(&self, signal: &'static str) -> String {
        let prev = self.last.map(|(c, i)| (c, i.reset != 0));
        if let Some((c, true)) = prev {
            return format!("reset in cycle {c}: all seven output registers read 0 after it");
        }
        if signal.starts_with("merge") {
            let Some((c, input)) = self.last_merge else {
                return "no merge since power-on/reset: merge registers read 0".into();
            };
            let fresh = matches!(self.last, Some((p, _)) if p == c);
            let head = if fresh {
                format!("merge issued in cycle {c} (registered one cycle later)")
            } else if signal == "merge_done" {
                "no merge the cycle before: merge_done reads 0".to_string()
            } else {
                format!("data registers hold the merge of cycle {c}")
            };
            format!("{head}; {}", self.merge_detail(&input))
        } else {
            let Some((c, input)) = self.last_lookup else {
                return "no lookup since power-on/reset: lookup registers read 0".into();
            };
            let fresh = matches!(self.last, Some((p, _)) if p == c);
            let (hit, ppn) = lookup(
                input.lookup_vpn,
                input.entry_base_vpn,
                input.entry_base_ppn,
                input.entry_mask,
            );
            let head = if fresh {
                format!("lookup issued in cycle {c}")
            } else if signal == "lookup_ppn" {
                format!("lookup_ppn holds the lookup of cycle {c}")
            } else {
                "no lookup the cycle before: lookup_done and lookup_hit read 0".to_string()
            };
            format!(
                "{head}: vpn {:#x}, entry base vpn {:#x} ppn {:#x} mask {:#06x} -> hit = \
                 (vpn[31:4] = base[31:4]) & mask[vpn[3:0]] = {hit}, ppn = hit ? base_ppn + \
                 vpn[3:0] : 0 = {ppn:#x}",
                input.lookup_vpn, input.entry_base_vpn, input.entry_base_ppn, input.entry_mask
            )
        }
    }

    /// Per-slot decode of a line, for the violation text.
    fn merge_detail(&self, input: &CoalIn) -> String {
        let line = input.ptes();
        let r = (input.merge_vpn & 15) as u32;
        let slots: Vec<String> = line
            .iter()
            .enumerate()
            .map(|(i, &p)| {
                let s = decode(p, i as u32, self.page_frames_log2);
                format!(
                    "{i}:{}{:#x}/{:#x}",
                    if s.coalescable { "" } else { "!" },
                    s.permissions >> 1,
                    s.implied_base
                )
            })
            .collect();
        let (mask, base) = merge(&line, input.merge_vpn, self.page_frames_log2);
        format!(
            "requested slot {r} of vpn {:#x}; slots as i:[! = not coalescable]pte[6:1]/implied \
             base: {}; mask bit i = coalescable_i & perms_i = perms_r & base_i = base_r -> \
             mask {mask:#06x}, base ppn {base:#x} (0/0 when slot r is not coalescable)",
            input.merge_vpn,
            slots.join(" ")
        )
    }

    /// The README's results of `input` (steps 1-4 of both units): each unit's fields when
    /// its valid is high and reset low, else 0. Counts the cycle's coverage bins.
    fn results(&mut self, input: &CoalIn) -> CoalOut {
        let merging = bits(input.merge_valid, 1) != 0;
        let looking = bits(input.lookup_valid, 1) != 0;
        let mut now = CoalOut::default();
        let after = self.last.map(|(_, i)| {
            let requested = (bits(i.merge_valid, 1) | bits(i.lookup_valid, 1)) != 0;
            (bits(i.reset, 1) != 0, requested && bits(i.reset, 1) == 0)
        });
        let (after_reset, after_request) = after.unwrap_or((false, false));
        if bits(input.reset, 1) != 0 {
            self.coverage
                .hit_if(merging || looking, CoalBin::ResetWithRequest);
            // Reset blocks both units.
            return now;
        }
        self.coverage
            .hit_if(merging && looking, CoalBin::MergeAndLookup);
        self.coverage.hit_if(
            after_request && !merging && !looking,
            CoalBin::IdleAfterRequest,
        );
        self.coverage.hit_if(
            after_reset && (merging || looking),
            CoalBin::RequestAfterReset,
        );
        if merging {
            let mut line = input.ptes();
            for p in &mut line {
                *p = bits(*p, 64);
            }
            let vpn = bits(input.merge_vpn, 32);
            let (mask, base) = merge(&line, vpn, self.page_frames_log2);
            cover_merge(&mut self.coverage, &line, vpn, self.page_frames_log2);
            now.merge_done = 1;
            now.merge_base_vpn = vpn & !15;
            now.merge_base_ppn = base;
            now.merge_mask = mask;
        }
        if looking {
            let vpn = bits(input.lookup_vpn, 32);
            let base_vpn = bits(input.entry_base_vpn, 32);
            let base_ppn = bits(input.entry_base_ppn, 32);
            let (hit, ppn) = lookup(vpn, base_vpn, base_ppn, bits(input.entry_mask, 16));
            self.coverage.hit(if hit {
                CoalBin::LookupHit
            } else if vpn >> 4 != base_vpn >> 4 {
                CoalBin::LookupMissTag
            } else {
                CoalBin::LookupMissMask
            });
            self.coverage.hit_if(
                hit && base_ppn + (vpn & 15) > 0xFFFF_FFFF,
                CoalBin::LookupPpnWrap,
            );
            now.lookup_done = 1;
            now.lookup_hit = u64::from(hit);
            now.lookup_ppn = ppn;
        }
        now
    }

    /// The rising edge of the registered variant: the results load into the registers.
    fn clock_edge(&mut self, cycle: u64, input: &CoalIn, now: &CoalOut) {
        if bits(input.reset, 1) != 0 {
            // Clears all seven registers (the results are all 0 under reset).
            self.regs = CoalOut::default();
            self.last_merge = None;
            self.last_lookup = None;
            return;
        }
        // Flags load every cycle.
        self.regs.merge_done = now.merge_done;
        self.regs.lookup_done = now.lookup_done;
        self.regs.lookup_hit = now.lookup_hit;
        // Data registers load with their request, else hold: a plain register enable.
        if now.merge_done == 1 {
            self.regs.merge_base_vpn = now.merge_base_vpn;
            self.regs.merge_base_ppn = now.merge_base_ppn;
            self.regs.merge_mask = now.merge_mask;
            self.last_merge = Some((cycle, *input));
        }
        if now.lookup_done == 1 {
            self.regs.lookup_ppn = now.lookup_ppn;
            self.last_lookup = Some((cycle, *input));
        }
    }
}

impl Monitor<CoalIn, CoalOut> for CoalescerMonitor {
    fn observe(&mut self, cycle: u64, input: &CoalIn, output: &CoalOut) -> Result<(), Violation> {
        let now = self.results(input);
        let result = if self.registered {
            // Outputs are the registers: they show the previous cycles' inputs, never this
            // one's.
            let r = compare("coalescer", cycle, &self.regs, output, |s| self.explain(s));
            self.clock_edge(cycle, input, &now);
            r
        } else {
            // The combinational unit: this cycle's results, nothing held.
            compare("coalescer", cycle, &now, output, |s| {
                self.explain_combinational(s, input)
            })
        };
        self.last = Some((cycle, *input));
        result
    }
}

impl Covered for CoalescerMonitor {
    fn coverage(&self) -> &Coverage {
        &self.coverage
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pte(ppn: u64, perms: u64) -> u64 {
        VALID | perms | (ppn << 4 << PFN_SHIFT)
    }

    #[test]
    fn readme_rules_on_a_hand_made_line() {
        // Slot i maps PPN 0x500 + i: one offset, all slots coalesced.
        let mut line: [u64; 16] = core::array::from_fn(|i| pte(0x500 + i as u64, 0b110_0000));
        assert_eq!(merge(&line, 0x1_0103, 4), (0xFFFF, 0x500));
        line[5] ^= 1 << 4; // executable differs
        line[6] = pte(0x777, 0b110_0000); // another offset
        line[7] |= 1 << PFN_SHIFT; // misaligned frame
        line[8] &= !VALID;
        line[9] |= (0x1F << 7) | (0xFF << 48) | (1 << 56); // ignored fields
        assert_eq!(merge(&line, 0x1_0103, 4), (0xFE1F, 0x500));
        // Requested slot not coalescable: mask and base are 0.
        assert_eq!(merge(&line, 0x1_0107, 4), (0, 0));
        // Base PPN wraps: slot 7 maps PPN 2.
        let wrap: [u64; 16] =
            core::array::from_fn(|i| pte((0xFFFF_FFFB + i as u64) & 0xFFFF_FFFF, 0b110_0000));
        assert_eq!(merge(&wrap, 0xFFFF_FFF7, 4).1, 0xFFFF_FFFB);
        assert_eq!(lookup(0x1238, 0x1230, 0x4000, 0x0100), (true, 0x4008));
        assert_eq!(lookup(0x1231, 0x1230, 0x4000, 0x0100), (false, 0));
        assert_eq!(
            lookup(0xFFFF_FFFF, 0xFFFF_FFF0, 0xFFFF_FFFB, 0xFFFF),
            (true, 0xA)
        );
    }

    #[test]
    fn ppn_beyond_32_bits_is_not_coalescable_with_small_pages() {
        // page_frames_log2 = 0: PPN = PFN, 36 bits; bit 32 set does not fit the ports.
        let big = VALID | (1u64 << (32 + PFN_SHIFT));
        assert!(!decode(big, 0, 0).coalescable);
        assert!(decode(big, 0, 4).coalescable);
    }
}
