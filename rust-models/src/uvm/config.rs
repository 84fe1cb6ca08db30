//! UVM configuration (`configs/uvm-turing.toml`): the clock the fault path's µs convert at,
//! the host link, the fault path, TBNp, Forest's detector thresholds and tree shapes,
//! SpecForest. The GPU itself is a GPU config (`configs/gpu-turing.toml`).
//!
//! Loading goes through `config::parse_toml` after `key=value` overrides are applied to the
//! TOML tree, so `--set forest.apd.r2=0.8` and the file share one validation path.

use crate::config::{AttConfig, Bounds, ConfigError, InvalidKey, Number};
use serde::{Deserialize, Serialize};
use std::path::Path;

use super::tbnp::{TreeShape, TreeShapeError};

/// Everything the UVM path needs, validated once.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields, default)]
pub struct UvmConfig {
    pub gpu: GpuTiming,
    pub host_link: HostLink,
    pub fault: FaultPath,
    pub memory: MemoryConfig,
    pub tbnp: TbnpConfig,
    pub forest: ForestConfig,
    pub att: AttConfig,
    /// Which engine serves the ATT (`--hw`); not a TOML key.
    #[serde(skip)]
    pub engines: crate::blocks::Hardware,
}

/// The GPU clock the driver's µs are converted to cycles at. A run on the GPU model
/// (`run_on_gpu`) replaces it with its GPU config's clock.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GpuTiming {
    pub clock_mhz: f64,
}

impl Default for GpuTiming {
    fn default() -> Self {
        GpuTiming { clock_mhz: 1365.0 }
    }
}

/// The CPU–GPU link that migrations and write-backs cross.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HostLink {
    /// Sustained bandwidth in GB/s (10^9 bytes per second).
    pub bandwidth_gb_s: f64,
    /// Fixed cost of one DMA transfer (one contiguous run of pages), µs.
    pub transfer_latency_us: f64,
}

impl Default for HostLink {
    fn default() -> Self {
        HostLink {
            bandwidth_gb_s: 15.75,
            transfer_latency_us: 1.0,
        }
    }
}

/// The far-fault path of the driver.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FaultPath {
    /// Fixed handling latency of one fault batch (interrupt, fetch, dedup, replay), µs.
    pub far_fault_latency_us: f64,
    /// Fault-buffer entries the driver fetches per batch.
    pub batch_size: usize,
    /// Time between the first fault's interrupt and the driver reading the buffer, µs.
    pub interrupt_delay_us: f64,
    /// Per-VA-block service cost (locking, page-table update, TLB invalidate), µs.
    pub block_update_us: f64,
    /// Driver cost of one Forest profiling step (copying the access counters), µs.
    pub profiling_step_us: f64,
}

impl Default for FaultPath {
    fn default() -> Self {
        FaultPath {
            far_fault_latency_us: 45.0,
            batch_size: 256,
            interrupt_delay_us: 1.0,
            block_update_us: 2.0,
            profiling_step_us: 2.0,
        }
    }
}

/// GPU memory size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MemoryConfig {
    /// Base page size in KB (the model supports 4).
    pub page_kb: u64,
    /// Footprint / GPU memory; 1.5 = 150 % oversubscription. Must be ≥ 1.0.
    pub oversubscription: f64,
}

impl Default for MemoryConfig {
    fn default() -> Self {
        MemoryConfig {
            page_kb: 4,
            oversubscription: 1.5,
        }
    }
}

/// The baseline prefetcher.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TbnpConfig {
    /// Percent; a subtree is prefetched when occupied × 100 > pages × threshold.
    pub threshold: u32,
    /// Big page (leaf) a fault is widened to, KB.
    pub big_page_kb: u64,
    /// Tree span, KB (the driver's VA block).
    pub tree_kb: u64,
    /// Treat every allocation as preferred-location = GPU (the driver's attribute, off).
    pub all_preferred_gpu: bool,
}

impl Default for TbnpConfig {
    fn default() -> Self {
        TbnpConfig {
            threshold: 51,
            big_page_kb: 64,
            tree_kb: 2048,
            all_preferred_gpu: false,
        }
    }
}

/// Forest: detector thresholds, tree shapes per class, SpecForest switches.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields, default)]
pub struct ForestConfig {
    pub apd: ApdThresholds,
    pub trees: ClassTrees,
    pub spec: SpecForestSwitches,
}

/// Access-pattern detector thresholds (documented in configs/uvm-turing.toml).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ApdThresholds {
    /// LS when R² of page number on latest access time (one point per touched page)
    /// exceeds this.
    pub r2: f64,
    /// Fewer touched pages than this: the step decides nothing.
    pub min_pages: usize,
    /// High coverage when the touched VPN span / object pages reaches this; below it LC,
    /// once the span has stopped growing.
    pub coverage: f64,
    /// High intensity when touched pages / touched span reaches this.
    pub intensity: f64,
    /// Pages touched since the previous step that an earlier step had seen, needed before
    /// the capture–recapture estimate of intensity is trusted.
    pub min_recaptures: usize,
    /// Undecided steps before the object falls back to LC (at a step whose span did not
    /// grow).
    pub max_steps: u32,
    /// Consecutive steps whose span did not grow (with no outstanding far faults) before a
    /// low-coverage object is decided LC. Not in the paper: 2 is an assumption (1 = decide
    /// at the first still step).
    pub lc_stable_steps: u32,
}

impl Default for ApdThresholds {
    fn default() -> Self {
        ApdThresholds {
            r2: 0.9,
            min_pages: 16,
            coverage: 0.5,
            intensity: 0.5,
            min_recaptures: 8,
            max_steps: 16,
            lc_stable_steps: 2,
        }
    }
}

/// Tree and leaf size per class, KB; the leaf must be ≥ the 16 KB base partition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ClassTrees {
    pub partition_kb: u64,
    pub ls_tree_kb: u64,
    pub ls_leaf_kb: u64,
    pub hchi_tree_kb: u64,
    pub hchi_leaf_kb: u64,
    pub hcli_tree_kb: u64,
    pub hcli_leaf_kb: u64,
    pub lc_tree_kb: u64,
    pub lc_leaf_kb: u64,
}

impl Default for ClassTrees {
    fn default() -> Self {
        ClassTrees {
            partition_kb: 16,
            ls_tree_kb: 8192,
            ls_leaf_kb: 256,
            hchi_tree_kb: 256,
            hchi_leaf_kb: 64,
            hcli_tree_kb: 128,
            hcli_leaf_kb: 16,
            lc_tree_kb: 2048,
            lc_leaf_kb: 64,
        }
    }
}

/// Which SpecForest mechanisms are on (each can be switched off to measure it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SpecForestSwitches {
    pub pattern_recording: bool,
    pub static_stride_hints: bool,
    pub similarity_groups: bool,
}

impl Default for SpecForestSwitches {
    fn default() -> Self {
        SpecForestSwitches {
            pattern_recording: true,
            static_stride_hints: true,
            similarity_groups: true,
        }
    }
}

impl UvmConfig {
    /// Load a file, apply `key=value` overrides (dotted keys, TOML values), validate.
    pub fn load(path: &Path, overrides: &[String]) -> Result<UvmConfig, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Self::from_text(&text, path, overrides)
    }

    /// Whether `path` is a UVM configuration (it has a `[host_link]` or `[tbnp]` table,
    /// which no GPU config has) rather than a GPU config: `mcmvm run` refuses one given as
    /// `--config`.
    pub fn is_uvm_file(path: &Path) -> Result<bool, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Self::is_uvm_text(&text, path)
    }

    /// As [`UvmConfig::is_uvm_file`], on text already read.
    pub fn is_uvm_text(text: &str, path: &Path) -> Result<bool, ConfigError> {
        let tree: toml::Table = crate::config::parse_toml(text, path)?;
        Ok(tree.contains_key("host_link") || tree.contains_key("tbnp"))
    }

    /// As [`UvmConfig::load`], from text already read (`path` names it in messages).
    pub fn from_text(
        text: &str,
        path: &Path,
        overrides: &[String],
    ) -> Result<UvmConfig, ConfigError> {
        let cfg: UvmConfig = crate::config::parse_with_overrides(text, path, overrides)?;
        cfg.validate(path)?;
        Ok(cfg)
    }

    /// Check every value the models rely on.
    pub fn validate(&self, path: &Path) -> Result<(), ConfigError> {
        self.check().map_err(|e| ConfigError::invalid(path, e))
    }

    /// The first rule a value breaks, section by section.
    pub fn check(&self) -> Result<(), InvalidKey> {
        self.check_fault_path()?;
        self.check_memory()?;
        self.check_apd()?;
        self.check_trees()?;
        // The ATT block's own limits (same checks as configs/hw.toml), named as this file
        // names them (`att.`, not hw.toml's `access_time_tracker.`).
        let hw = crate::config::HwConfig {
            access_time_tracker: self.att.clone(),
            ..Default::default()
        };
        hw.check()
            .map_err(|e| e.in_section("access_time_tracker", "att"))
    }

    /// The clock, the host link and the fault path's times.
    fn check_fault_path(&self) -> Result<(), InvalidKey> {
        for (key, v) in [
            ("gpu.clock_mhz", self.gpu.clock_mhz),
            ("host_link.bandwidth_gb_s", self.host_link.bandwidth_gb_s),
        ] {
            // Infinity passes, as it always has: an infinitely fast clock or link.
            if v.is_nan() || v <= 0.0 {
                return Err(InvalidKey::NotPositive {
                    key: key.into(),
                    value: v,
                });
            }
        }
        let f = &self.fault;
        for (key, v) in [
            ("fault.far_fault_latency_us", f.far_fault_latency_us),
            ("fault.interrupt_delay_us", f.interrupt_delay_us),
            ("fault.block_update_us", f.block_update_us),
            ("fault.profiling_step_us", f.profiling_step_us),
            (
                "host_link.transfer_latency_us",
                self.host_link.transfer_latency_us,
            ),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(InvalidKey::out_of_range(key, v, Bounds::at_least(0.0)));
            }
        }
        if f.batch_size == 0 {
            return Err(at_least_one("fault.batch_size", f.batch_size));
        }
        Ok(())
    }

    /// Page size, oversubscription and the baseline TBNp.
    fn check_memory(&self) -> Result<(), InvalidKey> {
        let m = &self.memory;
        if m.page_kb != 4 {
            return Err(InvalidKey::Unsupported {
                key: "memory.page_kb".into(),
                value: m.page_kb.into(),
                expected: 4u32.into(),
                reason: "the UVM model uses 4 KB base pages",
            });
        }
        if !(m.oversubscription.is_finite() && m.oversubscription >= 1.0) {
            return Err(InvalidKey::out_of_range(
                "memory.oversubscription",
                m.oversubscription,
                Bounds::at_least(1.0),
            ));
        }
        if self.tbnp.threshold > 100 {
            return Err(InvalidKey::out_of_range(
                "tbnp.threshold",
                self.tbnp.threshold,
                Bounds::between(0u32, 100u32),
            ));
        }
        self.tbnp_shape().map_err(|e| InvalidKey::Model {
            key: "tbnp.tree_kb / tbnp.big_page_kb".into(),
            source: Box::new(e),
        })?;
        Ok(())
    }

    /// The detector's thresholds.
    fn check_apd(&self) -> Result<(), InvalidKey> {
        let a = &self.forest.apd;
        for (key, v) in [
            ("forest.apd.r2", a.r2),
            ("forest.apd.coverage", a.coverage),
            ("forest.apd.intensity", a.intensity),
        ] {
            if !(0.0..=1.0).contains(&v) {
                return Err(InvalidKey::out_of_range(key, v, Bounds::between(0.0, 1.0)));
            }
        }
        if a.max_steps == 0 {
            return Err(at_least_one("forest.apd.max_steps", a.max_steps));
        }
        if a.lc_stable_steps == 0 {
            return Err(at_least_one(
                "forest.apd.lc_stable_steps",
                a.lc_stable_steps,
            ));
        }
        Ok(())
    }

    /// Forest's per-class tree shapes over its base partition.
    fn check_trees(&self) -> Result<(), InvalidKey> {
        let t = &self.forest.trees;
        if t.partition_kb < 4 || !t.partition_kb.is_power_of_two() {
            return Err(InvalidKey::NotPowerOfTwo {
                key: "forest.trees.partition_kb".into(),
                value: t.partition_kb,
                bounds: Bounds::at_least(4u32),
            });
        }
        for (class, tree, leaf) in [
            ("ls", t.ls_tree_kb, t.ls_leaf_kb),
            ("hchi", t.hchi_tree_kb, t.hchi_leaf_kb),
            ("hcli", t.hcli_tree_kb, t.hcli_leaf_kb),
            ("lc", t.lc_tree_kb, t.lc_leaf_kb),
        ] {
            if leaf < t.partition_kb {
                return Err(InvalidKey::BetweenKeys {
                    key: format!("forest.trees.{class}_leaf_kb"),
                    value: leaf.into(),
                    other: "forest.trees.partition_kb".into(),
                    other_value: t.partition_kb.into(),
                    expected: "at least the base partition".into(),
                });
            }
            TreeShape::new((tree / 4) as usize, (leaf / 4) as usize).map_err(|e| {
                InvalidKey::Model {
                    key: format!("forest.trees.{class}_tree_kb / {class}_leaf_kb"),
                    source: Box::new(e),
                }
            })?;
        }
        Ok(())
    }

    /// The baseline tree shape in 4 KB pages.
    pub fn tbnp_shape(&self) -> Result<TreeShape, TreeShapeError> {
        TreeShape::new(
            (self.tbnp.tree_kb / 4) as usize,
            (self.tbnp.big_page_kb / 4) as usize,
        )
    }

    /// Host-link time of one transfer of `bytes`, µs.
    pub fn transfer_us(&self, bytes: u64) -> f64 {
        self.host_link.transfer_latency_us + bytes as f64 / (self.host_link.bandwidth_gb_s * 1e3)
    }

    /// Microseconds to GPU cycles (rounded up).
    pub fn us_to_cycles(&self, us: f64) -> u64 {
        (us * self.gpu.clock_mhz).ceil() as u64
    }
}

/// A count that must be at least 1.
fn at_least_one(key: &str, value: impl Into<Number>) -> InvalidKey {
    InvalidKey::out_of_range(key, value, Bounds::at_least(1u32))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overrides_reach_nested_keys_and_unknown_keys_fail() {
        let p = Path::new("t.toml");
        let c = UvmConfig::from_text(
            "",
            p,
            &[
                "forest.apd.r2=0.8".into(),
                "memory.oversubscription=2".into(),
            ],
        )
        .unwrap();
        assert_eq!(c.forest.apd.r2, 0.8);
        assert_eq!(c.memory.oversubscription, 2.0);
        let e = UvmConfig::from_text("", p, &["forest.apd.bogus=1".into()]).unwrap_err();
        assert!(e.to_string().contains("bogus"), "{e}");
        let e = UvmConfig::from_text("", p, &["memory.oversubscription=0.5".into()]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "t.toml: key `memory.oversubscription`: expected >= 1, got 0.5"
        );
        // The ATT's keys are named as this file spells them.
        let e = UvmConfig::from_text("", p, &["att.timer_bits=40".into()]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "t.toml: key `att.timer_bits`: expected 2..=32, got 40"
        );
        let e = UvmConfig::from_text("", p, &["att".into()]).unwrap_err();
        assert!(matches!(e, ConfigError::Override { .. }), "{e}");
    }
}
