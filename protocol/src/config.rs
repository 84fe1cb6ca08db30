//! Configuration loading shared by every model: TOML files under `configs/`, parsed with
//! `serde` into validated types. Unknown keys and wrong types are errors that name the file
//! and the key; nothing here panics on user input.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::path::Path;

pub use crate::config_error::{Bounds, ConfigError, InvalidKey, Number, OverrideError};

/// Read and parse a TOML file into `T`. The error names the file, and toml's message names
/// the line, column and key.
pub fn load_toml<T: DeserializeOwned>(path: &Path) -> Result<T, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    parse_toml(&text, path)
}

/// Parse TOML text (already read from `path`, used for messages only).
pub fn parse_toml<T: DeserializeOwned>(text: &str, path: &Path) -> Result<T, ConfigError> {
    toml::from_str(text).map_err(|e| ConfigError::toml(path, e))
}

/// Parameters of the three hardware blocks (`configs/hw.toml`). Defaults are the papers'.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields, default)]
pub struct HwConfig {
    pub remote_tracker: RtConfig,
    pub tlb_coalescer: CoalescerConfig,
    pub access_time_tracker: AttConfig,
}

/// Remote Tracker parameters (CLAP §4.3).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RtConfig {
    /// Table entries per chiplet (paper: 32; 16 sufficed for its workloads).
    pub entries: usize,
    /// Allocation-ID width in bits (paper: 8).
    pub alloc_id_bits: u32,
    /// Access and remote counter width in bits (paper: 32); counters saturate.
    pub counter_bits: u32,
    /// Report replaced entries to the driver (paper baseline: disabled).
    pub report_evictions: bool,
    /// Which row a miss replaces when the table is full (`rtl/src/remote_tracker.md`).
    pub replacement: RtReplacement,
}

/// The RT's replacement order among rows, by the time their remote counter was last
/// written (CLAP: "least recently updated entry with respect to the remote counter").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum RtReplacement {
    /// Exact ranks: the row written longest ago (5 bits a row, one adder a row).
    Ranks,
    /// Not recently used (the default: half the RT's logic of exact ranks on sky130hd, the
    /// same CLAP results on every workload measured; `rtl/src/remote_tracker.md`): one bit a row, set when the row's remote counter is written;
    /// when that would leave no other valid row's bit clear, the others are cleared. The
    /// victim is the highest-numbered row whose bit is clear.
    #[default]
    Nru,
    /// Tree pseudo-LRU: 31 bits in a binary tree over the 32 row numbers, one per inner
    /// node, pointing away from the half that holds the row touched last; the victim is
    /// the row reached by following the pointers from the root (halves without rows of
    /// the table are skipped).
    TreePlru,
}

impl Default for RtConfig {
    fn default() -> Self {
        RtConfig {
            entries: 32,
            alloc_id_bits: 8,
            counter_bits: 32,
            report_evictions: false,
            replacement: RtReplacement::Nru,
        }
    }
}

/// TLB coalescing logic parameters (CLAP §4.6).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CoalescerConfig {
    /// PTEs per 128-byte line (8-byte PTEs).
    pub ptes_per_line: usize,
    /// log2 of 4 KB frames per coalesced page: 4 for 64 KB pages.
    pub page_frames_log2: u32,
    /// Both units end in output registers (the default): inputs of cycle `t` are answered
    /// in cycle `t + 1`. False: the paper's purely combinational unit, answered in cycle
    /// `t` itself, with no state (`rtl/src/tlb_coalescer.md`, "What happens in a cycle").
    pub output_registers: bool,
}

impl Default for CoalescerConfig {
    fn default() -> Self {
        CoalescerConfig {
            ptes_per_line: 16,
            page_frames_log2: 4,
            output_registers: true,
        }
    }
}

impl CoalescerConfig {
    /// Block cycles from a merge or lookup request to its answer: 1 with output registers,
    /// 0 for the combinational unit (the answer is on the request cycle's outputs).
    pub fn answer_latency(&self) -> u32 {
        u32::from(self.output_registers)
    }
}

/// Access Time Tracker parameters (Forest).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AttConfig {
    /// Object-table entries (default 32).
    pub objects: usize,
    /// Per-object access timer width in bits; timers saturate.
    pub timer_bits: u32,
    /// Accesses to an object that raise the profiling interrupt (the paper gives no number;
    /// 256 is the notification granularity of NVIDIA's access counters).
    pub profiling_threshold: u64,
    /// How the RTL keeps the recency order among objects (`rtl/src/access_time_tracker.md`,
    /// "Recency"); `ranks` and `age-matrix` are exact, so the ports behave the same under
    /// either; `tree-plru` is an approximation and changes which object is oldest.
    pub recency: AttRecency,
}

/// The ATT RTL's recency structure. `Ranks` and `AgeMatrix` are exact (the same `oldest_obj`
/// every cycle); `TreePlru` is the cheaper approximation, with its own `oldest_obj`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum AttRecency {
    /// Exact ranks, 5 bits per slot.
    Ranks,
    /// The original `objects x (objects - 1)` age matrix with per-object interval counters.
    AgeMatrix,
    /// Tree pseudo-LRU: one bit per node of a binary tree over the 32 slot positions (31
    /// flip-flops), walked towards the older half that holds a valid object. Not exact: the
    /// oldest object it names can differ from the least recently touched one. The default:
    /// the leanest structure (the exact ones are options, their cost shown beside it).
    #[default]
    TreePlru,
}

impl Default for AttConfig {
    fn default() -> Self {
        AttConfig {
            objects: 32,
            timer_bits: 32,
            profiling_threshold: 256,
            recency: AttRecency::TreePlru,
        }
    }
}

impl HwConfig {
    /// Load `configs/hw.toml` (or another file) and validate it.
    pub fn load(path: &Path) -> Result<HwConfig, ConfigError> {
        let cfg: HwConfig = load_toml(path)?;
        cfg.validate(path)?;
        Ok(cfg)
    }

    /// Check every value against what the models and the RTL support.
    pub fn validate(&self, path: &Path) -> Result<(), ConfigError> {
        self.check().map_err(|e| ConfigError::invalid(path, e))
    }

    /// The first rule a value breaks, keys in file order.
    pub fn check(&self) -> Result<(), InvalidKey> {
        let range = |key: &str, value: u64, min: u64, max: u64| {
            if (min..=max).contains(&value) {
                Ok(())
            } else {
                Err(InvalidKey::out_of_range(
                    key,
                    value,
                    Bounds::between(min, max),
                ))
            }
        };
        let only = |key: &str, value: u64, expected: u64, reason: &'static str| {
            if value == expected {
                Ok(())
            } else {
                Err(InvalidKey::Unsupported {
                    key: key.to_string(),
                    value: value.into(),
                    expected: expected.into(),
                    reason,
                })
            }
        };
        let rt = &self.remote_tracker;
        range("remote_tracker.entries", rt.entries as u64, 1, 32)?;
        only(
            "remote_tracker.alloc_id_bits",
            rt.alloc_id_bits.into(),
            8,
            "the RTL port is 8 bits wide",
        )?;
        range("remote_tracker.counter_bits", rt.counter_bits.into(), 2, 32)?;
        let c = &self.tlb_coalescer;
        only(
            "tlb_coalescer.ptes_per_line",
            c.ptes_per_line as u64,
            16,
            "a 128-byte line holds 16 PTEs",
        )?;
        range(
            "tlb_coalescer.page_frames_log2",
            c.page_frames_log2.into(),
            0,
            9,
        )?;
        let a = &self.access_time_tracker;
        range("access_time_tracker.objects", a.objects as u64, 1, 32)?;
        range("access_time_tracker.timer_bits", a.timer_bits.into(), 2, 32)?;
        if a.profiling_threshold == 0 || a.profiling_threshold >= (1u64 << a.timer_bits) {
            return Err(InvalidKey::BetweenKeys {
                key: "access_time_tracker.profiling_threshold".into(),
                value: a.profiling_threshold.into(),
                other: "access_time_tracker.timer_bits".into(),
                other_value: a.timer_bits.into(),
                expected: "1..2^timer_bits".into(),
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hw_toml_is_the_default_and_output_registers_is_optional() {
        let path = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../configs/hw.toml"));
        let file = HwConfig::load(path).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(file, HwConfig::default());
        assert!(file.tlb_coalescer.output_registers);
        assert_eq!(file.tlb_coalescer.answer_latency(), 1);
        // A file written before the key existed keeps today's registered block.
        let old: HwConfig = parse_toml("[tlb_coalescer]\npage_frames_log2 = 4\n", path)
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(old.tlb_coalescer.output_registers);
        let comb: HwConfig = parse_toml("[tlb_coalescer]\noutput_registers = false\n", path)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(comb.tlb_coalescer.answer_latency(), 0);
        let bad = parse_toml::<HwConfig>("[tlb_coalescer]\noutput_registers = 0\n", path)
            .expect_err("an integer is not a bool");
        assert!(bad.to_string().contains("output_registers"), "{bad}");
    }
}
