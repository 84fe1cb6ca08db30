//! Hand-written mutants of the emitted Verilog: each one a small textual edit of one block's
//! `mcmvm_rtl::emit` output (a wrong increment, a wrong victim, a lost interrupt, a wrong
//! merge offset), built under Verilator like the real Verilog (cached by the hash of the
//! mutated text, so each mutant has a model of its own).
//!
//! They test the checks, not the design: a mutant the README monitors and `--hw check` do
//! not report is a hole in the verification. `mcmvm cosim --mutants` runs each one under
//! the reference monitor on the testbench stimulus and inside a short `--hw check` system
//! run (`HwOptions::mutant`); `docs/verification.md` lists which check caught which.
//!
//! An edit names the exact text it replaces: when the emitted Verilog changes so that the
//! text is gone, applying the mutant fails ([`CosimError::MutantStale`]) instead of
//! silently testing the unmutated block.

use crate::error::CosimError;
use crate::verilator::VerilatorModel;
use mcmvm_models::config::HwConfig;
use mcmvm_models::protocol::{BlockKind, Ports};

/// One mutant: a block, what it breaks, and the text edits that break it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RtlMutant {
    /// Short name (`rt-access-plus-two`).
    pub name: &'static str,
    pub block: BlockKind,
    /// The behaviour it breaks, in README terms.
    pub breaks: &'static str,
    /// (text, replacement) pairs; every occurrence of each text is replaced, and each text
    /// must occur at least once.
    pub edits: &'static [(&'static str, &'static str)],
    /// The README behaviour needs narrow counters or timers to show (the monitor's
    /// stimulus then runs on the narrow configuration).
    pub needs_narrow: bool,
}

/// Every mutant, by block.
pub const MUTANTS: &[RtlMutant] = &[
    RtlMutant {
        name: "rt-access-plus-two",
        block: BlockKind::RemoteTracker,
        breaks: "wrong counter increment: a walk hit adds 2 to the access counter",
        edits: &[(
            "new_access = target_access_tree$62 + counter_one;",
            "new_access = target_access_tree$62 + counter_one + counter_one;",
        )],
        needs_narrow: false,
    },
    RtlMutant {
        name: "rt-wrong-victim",
        block: BlockKind::RemoteTracker,
        breaks: "wrong slot on eviction: the victim search prefers the lower half of the rows",
        edits: &[(
            "        victim_slot_tree$62 = victim_slot_tree$60;\n        if (victim_any_tree$61) begin\n            victim_slot_tree$62 = victim_slot_tree$61;",
            "        victim_slot_tree$62 = victim_slot_tree$61;\n        if (victim_any_tree$60) begin\n            victim_slot_tree$62 = victim_slot_tree$60;",
        )],
        needs_narrow: false,
    },
    RtlMutant {
        name: "rt-access-wraps",
        block: BlockKind::RemoteTracker,
        breaks: "counters wrap instead of saturating at 2^counter_bits - 1",
        edits: &[(
            "if (target_access_tree$62 != counter_max) begin",
            "if (1'b1) begin",
        )],
        needs_narrow: true,
    },
    RtlMutant {
        name: "rt-remote-hit-not-counted",
        block: BlockKind::RemoteTracker,
        breaks: "a remote walk hit leaves the remote counter as it was",
        edits: &[(
            "new_remote = target_remote_tree$62 + counter_one;",
            "new_remote = target_remote_tree$62;",
        )],
        needs_narrow: false,
    },
    RtlMutant {
        name: "coalescer-merge-offset",
        block: BlockKind::TlbCoalescer,
        breaks: "wrong merge offset: slot 1's implied base PPN subtracts 2, not 1",
        edits: &[(
            "slot_base_ppn$1 = (pte_ppn_window$1 & ppn_field_mask) - slot_offset$1;",
            "slot_base_ppn$1 = (pte_ppn_window$1 & ppn_field_mask) - slot_offset$2;",
        )],
        needs_narrow: false,
    },
    RtlMutant {
        name: "coalescer-lookup-ppn-plus-one",
        block: BlockKind::TlbCoalescer,
        breaks: "a coalesced lookup hit answers entry_base_ppn + slot + 1",
        edits: &[(
            "lookup_ppn_q$d = entry_base_ppn + lookup_slot;",
            "lookup_ppn_q$d = entry_base_ppn + lookup_slot + 32'h1;",
        )],
        needs_narrow: false,
    },
    RtlMutant {
        name: "att-irq-lost-on-wrap",
        block: BlockKind::AccessTimeTracker,
        breaks: "interrupt lost in the wrap cycle: every second wrap of the interval \
                 counter (timer bit 8 set) raises none",
        edits: &[(
            "if (hit & wrapped & ~hit_cease & ~driver_writes_hit) begin",
            "if (hit & wrapped & ~hit_cease & ~driver_writes_hit & ~timer_after[8]) begin",
        )],
        needs_narrow: false,
    },
    RtlMutant {
        name: "att-record-old-timer",
        block: BlockKind::AccessTimeTracker,
        breaks: "the access record carries the timer before the access, not after",
        edits: &[(
            "rec_timer_q$d = timer_after;",
            "rec_timer_q$d = hit_timer;",
        )],
        needs_narrow: false,
    },
];

impl RtlMutant {
    /// The mutant called `name`.
    pub fn by_name(name: &str) -> Option<&'static RtlMutant> {
        MUTANTS.iter().find(|m| m.name == name)
    }

    /// `verilog` with this mutant's edits applied; an edit whose text is missing is an
    /// error (the emitted Verilog changed under the mutant).
    pub fn apply(&self, verilog: &str) -> Result<String, CosimError> {
        let mut text = verilog.to_string();
        for (from, to) in self.edits {
            if !text.contains(from) {
                return Err(CosimError::MutantStale {
                    mutant: self.name,
                    text: from.lines().next().unwrap_or_default().trim().to_string(),
                });
            }
            text = text.replace(from, to);
        }
        Ok(text)
    }

    /// The mutated Verilog of this mutant's block for `cfg` under Verilator (a plain model,
    /// no state invariants), built on first use and cached by the mutated text's hash.
    pub fn verilator_model<I: Ports, O: Ports>(
        &self,
        cfg: &HwConfig,
    ) -> Result<VerilatorModel<I, O>, CosimError> {
        VerilatorModel::mutated(self, cfg)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every mutant still applies to the Verilog its block emits today, at the default
    /// parameters and (for those that need it) the narrow ones, and changes it.
    #[test]
    fn every_mutant_applies_to_the_emitted_verilog() {
        let mut narrow = HwConfig::default();
        narrow.remote_tracker.entries = 8;
        narrow.remote_tracker.counter_bits = 4;
        narrow.access_time_tracker.objects = 4;
        narrow.access_time_tracker.timer_bits = 4;
        narrow.access_time_tracker.profiling_threshold = 5;
        for cfg in [HwConfig::default(), narrow] {
            for m in MUTANTS {
                let v = mcmvm_rtl::emit::verilog(m.block, &cfg).expect("emits");
                let mutated = m.apply(&v).unwrap_or_else(|e| panic!("{e}"));
                assert_ne!(mutated, v, "{} changes nothing", m.name);
            }
        }
        let names: std::collections::HashSet<_> = MUTANTS.iter().map(|m| m.name).collect();
        assert_eq!(names.len(), MUTANTS.len(), "mutant names are unique");
    }

    #[test]
    fn a_stale_edit_is_an_error_naming_the_mutant() {
        let e = MUTANTS[0]
            .apply("module x; endmodule")
            .expect_err("no such text");
        assert!(e.to_string().contains(MUTANTS[0].name), "{e}");
    }
}
