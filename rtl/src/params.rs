//! Parameters the RTL derives from the block configurations, written from the blocks'
//! READMEs (`tlb_coalescer.md`: "PTE fields"; `access_time_tracker.md`: "Parameters") and
//! not taken from the behavioural twins, so a misreading of the PTE layout or of a
//! parameter's range in one does not silently repeat in the other: the lockstep compares
//! two independent derivations.

use mcmvm_protocol::config::{AttConfig, CoalescerConfig};

/// PTE bit 0: the slot holds a mapping.
pub const PTE_VALID: u64 = 1 << 0;
/// PTE bits 1..=6: system, snooped, bit 3, executable, readable, writeable — must match the
/// requested PTE's for a slot to be merged.
pub const PTE_PERMISSIONS: u64 = 0b111_1110;
/// PTE bits 12..=47: the PFN in 4 KB frames.
const PTE_PFN_LSB: u32 = 12;
const PTE_PFN_WIDTH: u32 = 36;
/// The coalescer's page-number ports are 32 bits wide.
const PORT_PAGE_BITS: u32 = 32;
/// PTEs in a 128-byte line: the merge unit's slots.
pub const LINE_SLOTS: usize = 16;

/// Where the merge unit finds a PPN in a PTE, and which bits exclude a slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PteDecode {
    /// First PTE bit of the PPN: the PFN's LSB plus `page_frames_log2`.
    pub ppn_lsb: u32,
    /// The PPN bits the PFN field holds (all 32 up to 64 KB pages; fewer above, where the
    /// 36-bit PFN field runs out).
    pub ppn_field_mask: u32,
    /// Bits that must be zero: the PFN bits below the coalesced page (a misaligned frame)
    /// and the PFN bits above what a 32-bit PPN port can carry.
    pub must_be_zero: u64,
}

impl PteDecode {
    /// `page_frames_log2` is validated to 0..=9 by the configuration.
    pub fn new(cfg: &CoalescerConfig) -> PteDecode {
        let k = cfg.page_frames_log2.min(PTE_PFN_WIDTH - 1);
        let ppn_lsb = PTE_PFN_LSB + k;
        // PPN bits present in the PFN field above the page offset.
        let ppn_in_field = PTE_PFN_WIDTH - k;
        let ppn_field_mask = if ppn_in_field >= PORT_PAGE_BITS {
            u32::MAX
        } else {
            (1u32 << ppn_in_field) - 1
        };
        let below_page = ((1u64 << k) - 1) << PTE_PFN_LSB;
        let field_end = PTE_PFN_LSB + PTE_PFN_WIDTH;
        let port_end = ppn_lsb + PORT_PAGE_BITS;
        let above_port = if port_end < field_end {
            ((1u64 << (field_end - port_end)) - 1) << port_end
        } else {
            0
        };
        PteDecode {
            ppn_lsb,
            ppn_field_mask,
            must_be_zero: below_page | above_port,
        }
    }
}

/// An ATT configuration the RTL cannot be elaborated for.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AttParamError {
    #[error("access_time_tracker.objects: the 5-bit object ports name 1..=32 slots, got {0}")]
    Objects(usize),
    #[error("access_time_tracker.timer_bits: expected 2..=32, got {0}")]
    TimerBits(u32),
    #[error("access_time_tracker.profiling_threshold: expected 1..2^timer_bits, got {0}")]
    Threshold(u64),
}

/// The ATT's elaboration parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AttParams {
    pub objects: usize,
    /// Saturation value of the per-object timers.
    pub timer_max: u32,
    /// Accesses per profiling interrupt.
    pub threshold: u32,
}

impl AttParams {
    pub fn new(cfg: &AttConfig) -> Result<AttParams, AttParamError> {
        if cfg.objects == 0 || cfg.objects > 32 {
            return Err(AttParamError::Objects(cfg.objects));
        }
        if cfg.timer_bits < 2 || cfg.timer_bits > 32 {
            return Err(AttParamError::TimerBits(cfg.timer_bits));
        }
        let timer_max = u32::MAX >> (32 - cfg.timer_bits);
        if cfg.profiling_threshold == 0 || cfg.profiling_threshold > u64::from(timer_max) {
            return Err(AttParamError::Threshold(cfg.profiling_threshold));
        }
        Ok(AttParams {
            objects: cfg.objects,
            timer_max,
            threshold: cfg.profiling_threshold as u32,
        })
    }

    /// One bit per live object slot.
    pub fn slot_mask(&self) -> u32 {
        u32::MAX >> (32 - self.objects)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_64k_decode_reads_the_ppn_from_bit_16_and_excludes_misaligned_frames() {
        let d = PteDecode::new(&CoalescerConfig::default());
        assert_eq!(d.ppn_lsb, 16);
        assert_eq!(
            d.ppn_field_mask,
            u32::MAX,
            "36 - 4 = 32 PPN bits: all of them"
        );
        assert_eq!(d.must_be_zero, 0xF000, "PFN bits 12..=15");
    }

    #[test]
    fn a_4k_page_cannot_carry_the_top_pfn_bits_on_32_bit_ports() {
        let d = PteDecode::new(&CoalescerConfig {
            page_frames_log2: 0,
            ..CoalescerConfig::default()
        });
        assert_eq!(d.ppn_lsb, 12);
        assert_eq!(d.must_be_zero, 0xF << 44, "PFN bits 44..=47");
    }

    #[test]
    fn att_ranges_follow_the_readme() {
        let ok = AttParams::new(&AttConfig::default()).unwrap();
        assert_eq!(
            (ok.objects, ok.timer_max, ok.threshold),
            (32, u32::MAX, 256)
        );
        assert_eq!(ok.slot_mask(), u32::MAX);
        let bad = |objects, timer_bits, profiling_threshold| {
            AttParams::new(&AttConfig {
                objects,
                timer_bits,
                profiling_threshold,
                ..AttConfig::default()
            })
        };
        assert_eq!(bad(33, 32, 256), Err(AttParamError::Objects(33)));
        assert_eq!(bad(8, 1, 1), Err(AttParamError::TimerBits(1)));
        assert_eq!(bad(8, 8, 256), Err(AttParamError::Threshold(256)));
        assert_eq!(bad(8, 8, 255).unwrap().slot_mask(), 0xFF);
    }
}
