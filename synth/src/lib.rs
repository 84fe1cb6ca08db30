//! # mcmvm-synth — what the hardware blocks cost in silicon
//!
//! Runs yosys on the Verilog that `mcmvm-rtl` emits: flatten, map flip-flops and logic to
//! the osu018 0.18 µm standard-cell library, and read back `stat`: area in µm² (osu018's
//! Liberty file has no area unit line; its areas are cell width × height in µm²), cells,
//! flip-flops (cells whose Liberty group holds an `ff`), and a transistor estimate from
//! `stat -tech cmos` after legalising flip-flops. Also lints the Verilog with
//! `verilator --lint-only -Wall` and yosys `check`.
//!
//! Node scaling to 28 nm is the ideal-shrink rule, area ∝ (feature size)²:
//! `A28 = A180 × (28 / 180)²`. It ignores that wires, SRAM and standard-cell heights do not
//! shrink ideally, so it is an estimate to sit beside the paper's 28 nm figures, not a
//! replacement for synthesis at 28 nm.

pub mod area;
pub mod cache;
pub mod formal;
pub mod library;
pub mod lint;
pub mod lint_cache;
pub mod timing;
pub mod tools;

pub use area::{synthesize, AreaReport};
pub use lint::{lint, LintReport};
pub use tools::{SynthError, Tools};

/// Feature size of the osu018 library, nm.
pub const OSU018_NM: f64 = 180.0;
/// Node the papers report at, nm.
pub const TARGET_NM: f64 = 28.0;

/// Ideal-shrink estimate of a 180 nm area at 28 nm, in mm².
pub fn scale_to_28nm_mm2(area_um2_180nm: f64) -> f64 {
    area_um2_180nm * (TARGET_NM / OSU018_NM).powi(2) / 1.0e6
}

#[cfg(test)]
mod tests {
    #[test]
    fn ideal_shrink_is_quadratic_in_feature_size() {
        // 1 mm² at 180 nm → (28/180)² mm² at 28 nm.
        let a = super::scale_to_28nm_mm2(1.0e6);
        assert!((a - 0.024197530864).abs() < 1e-9, "{a}");
    }
}
