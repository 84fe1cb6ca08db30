//! `[driver]` of a GPU config: the CLAP driver's thresholds (§4.2–4.5). The section and
//! each key are optional; the defaults are the paper's.

use crate::config::{Bounds, InvalidKey};
use crate::driver::DriverConfig;
use serde::{Deserialize, Serialize};

/// The driver parameters a GPU config may set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DriverSpec {
    /// PMM ends for a structure once this fraction of it is mapped (CLAP: 0.20).
    pub pmm_fraction: f64,
    /// OLP is disabled for a structure once more than this fraction of its VA blocks
    /// released their 2 MB reservation (CLAP: 0.05).
    pub olp_disable_fraction: f64,
    /// MMA's locality threshold before the Remote Tracker lowers it (CLAP: 1.0).
    pub mma_threshold: f64,
    /// Fully mapped 2 MB VA blocks MMA needs at the end of PMM, else OLP (not a number in
    /// CLAP: 1 is its "no VA block fully mapped" case).
    pub mma_min_full_blocks: u32,
}

impl Default for DriverSpec {
    fn default() -> Self {
        let d = DriverConfig::default();
        DriverSpec {
            pmm_fraction: d.pmm_fraction,
            olp_disable_fraction: d.olp_disable_fraction,
            mma_threshold: d.mma_threshold,
            mma_min_full_blocks: d.mma_min_full_blocks,
        }
    }
}

impl DriverSpec {
    /// The first rule a value breaks (its key is under `driver.`).
    pub fn check(&self) -> Result<(), InvalidKey> {
        for (key, v) in [
            ("driver.pmm_fraction", self.pmm_fraction),
            ("driver.olp_disable_fraction", self.olp_disable_fraction),
        ] {
            if !(0.0..=1.0).contains(&v) {
                return Err(InvalidKey::out_of_range(key, v, Bounds::between(0.0, 1.0)));
            }
        }
        if !self.mma_threshold.is_finite() {
            return Err(InvalidKey::NotFinite {
                key: "driver.mma_threshold".into(),
                value: self.mma_threshold,
            });
        }
        if self.mma_min_full_blocks == 0 {
            return Err(InvalidKey::out_of_range(
                "driver.mma_min_full_blocks",
                self.mma_min_full_blocks,
                Bounds::at_least(1u32),
            ));
        }
        Ok(())
    }

    /// `base` with these parameters.
    pub fn apply(&self, base: DriverConfig) -> DriverConfig {
        DriverConfig {
            pmm_fraction: self.pmm_fraction,
            olp_disable_fraction: self.olp_disable_fraction,
            mma_threshold: self.mma_threshold,
            mma_min_full_blocks: self.mma_min_full_blocks,
            ..base
        }
    }
}
