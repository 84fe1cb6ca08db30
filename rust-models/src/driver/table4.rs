//! What happened to a structure, in words (CLAP's Table 4): the size MMA chose, OLP as
//! MMA's fallback and why, OLP disabled, or a static policy's size.
//!
//! **MMA's fallback (CLAP §4.5).** MMA analyses the *fully mapped VA blocks* of a
//! structure — 2 MB VA blocks (§4.1) whose 32 64 KB sub-pages are all mapped when PMM
//! ends (§4.4). With fewer than `mma_min_full_blocks` of them it cannot run and CLAP keeps
//! OLP for the rest of the structure. The paper names two such cases (§4.5, §5.1), and
//! the driver tells them apart by what the PMM sample could have held:
//! - **small structure** (PAF, SC): the bytes PMM mapped fill fewer than
//!   `mma_min_full_blocks` whole 2 MB blocks even if laid out contiguously — with the
//!   20 % PMM threshold and one block needed, every structure under 10 MB, the paper's
//!   "small allocations (typically under 10 MB)";
//! - **insufficiently mapped** (LUD): the sample was large enough but spread over more
//!   VA blocks than it could fill.

use serde::Serialize;

/// Why MMA fell back to OLP. See the module documentation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum MmaFallback {
    /// The PMM sample (`mapped_bytes`) holds at most `capacity` whole 2 MB VA blocks,
    /// fewer than `needed`.
    SmallStructure {
        mapped_bytes: u64,
        capacity: u32,
        needed: u32,
    },
    /// `full` of the `touched` VA blocks were fully mapped, fewer than `needed`, although
    /// the sample could have filled `needed`.
    InsufficientlyMapped {
        full: u32,
        touched: u32,
        needed: u32,
    },
}

impl MmaFallback {
    /// The short reason of a Table 4 label.
    pub const fn short(self) -> &'static str {
        match self {
            MmaFallback::SmallStructure { .. } => "small structure",
            MmaFallback::InsufficientlyMapped { .. } => "insufficiently mapped",
        }
    }
}

impl core::fmt::Display for MmaFallback {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match *self {
            MmaFallback::SmallStructure {
                mapped_bytes,
                capacity,
                needed,
            } => write!(
                f,
                "small structure: the {:.1} MB PMM mapped fill {capacity} whole 2 MB VA \
                 block(s); MMA needs {needed}",
                mapped_bytes as f64 / 1048576.0
            ),
            MmaFallback::InsufficientlyMapped {
                full,
                touched,
                needed,
            } => write!(
                f,
                "insufficiently mapped: {full} of {touched} touched VA blocks fully mapped; \
                 MMA needs {needed}"
            ),
        }
    }
}

/// A structure's VA blocks at the end of the run: touched, and mapped as one 2 MB page.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct HugeBlocks {
    /// VA blocks with at least one mapped page.
    pub touched_blocks: u32,
    /// Of them, mapped as one 2 MB page (an OLP reservation that filled).
    pub huge_blocks: u32,
}

impl HugeBlocks {
    /// The page size OLP produced (the paper's italic cells): "2MB", "64KB", or
    /// "2MB in k of n blocks".
    pub fn size(self) -> String {
        match (self.huge_blocks, self.touched_blocks) {
            (_, 0) => "nothing mapped".into(),
            (h, t) if h == t => "2MB".into(),
            (0, _) => "64KB".into(),
            (h, t) => format!("2MB in {h} of {t} blocks"),
        }
    }
}

/// How a structure was placed, for Table 4.
#[derive(Debug, Clone, PartialEq)]
pub enum Table4 {
    /// A static policy's size ("4KB", "64KB", "2MB").
    Static(String),
    /// MMA chose this region size for the rest of the structure.
    Mma(String),
    /// OLP (`olp` policy, or CLAP during a PMM phase that never ended, or MMA's fallback).
    Olp {
        disabled: bool,
        why: OlpWhy,
        result: HugeBlocks,
    },
}

/// Why a structure is under OLP.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum OlpWhy {
    /// The `olp` policy: OLP all run long.
    Policy,
    /// CLAP: the structure never reached the PMM threshold, so MMA never ran.
    PmmNotEnded,
    /// CLAP: MMA fell back.
    Fallback(MmaFallback),
}

impl core::fmt::Display for Table4 {
    /// `128KB (MMA)`, `OLP (fallback: small structure): 2MB`, `OLP disabled (fallback:
    /// insufficiently mapped): 64KB`, `OLP: 64KB`, `64KB`.
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Table4::Static(s) => f.write_str(s),
            Table4::Mma(s) => write!(f, "{s} (MMA)"),
            Table4::Olp {
                disabled,
                why,
                result,
            } => {
                f.write_str(if *disabled { "OLP disabled" } else { "OLP" })?;
                match why {
                    OlpWhy::Policy => {}
                    OlpWhy::PmmNotEnded => f.write_str(" (PMM not ended)")?,
                    OlpWhy::Fallback(r) => write!(f, " (fallback: {})", r.short())?,
                }
                write!(f, ": {}", result.size())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_say_what_happened() {
        let r = |h, t| HugeBlocks {
            touched_blocks: t,
            huge_blocks: h,
        };
        let small = MmaFallback::SmallStructure {
            mapped_bytes: 3 << 19,
            capacity: 0,
            needed: 1,
        };
        let spread = MmaFallback::InsufficientlyMapped {
            full: 0,
            touched: 5,
            needed: 1,
        };
        let olp = |disabled, why, result| Table4::Olp {
            disabled,
            why,
            result,
        };
        assert_eq!(Table4::Mma("128KB".into()).to_string(), "128KB (MMA)");
        assert_eq!(Table4::Static("2MB".into()).to_string(), "2MB");
        assert_eq!(
            olp(false, OlpWhy::Fallback(small), r(3, 3)).to_string(),
            "OLP (fallback: small structure): 2MB"
        );
        assert_eq!(
            olp(true, OlpWhy::Fallback(spread), r(0, 4)).to_string(),
            "OLP disabled (fallback: insufficiently mapped): 64KB"
        );
        assert_eq!(
            olp(false, OlpWhy::PmmNotEnded, r(1, 4)).to_string(),
            "OLP (PMM not ended): 2MB in 1 of 4 blocks"
        );
        assert_eq!(
            olp(false, OlpWhy::Policy, r(0, 0)).to_string(),
            "OLP: nothing mapped"
        );
        assert_eq!(
            small.to_string(),
            "small structure: the 1.5 MB PMM mapped fill 0 whole 2 MB VA block(s); MMA needs 1"
        );
        assert_eq!(
            spread.to_string(),
            "insufficiently mapped: 0 of 5 touched VA blocks fully mapped; MMA needs 1"
        );
    }
}
