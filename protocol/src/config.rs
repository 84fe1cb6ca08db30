//! Configuration loading shared by every model: TOML files under `configs/`, parsed with
//! `serde` into validated types. Unknown keys and wrong types are errors that name the file
//! and the key; nothing here panics on user input.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Why a configuration could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    // The io error is shown in the message, not chained as a source, so `{:#}` does not
    // print it twice.
    #[error("{path}: cannot read: {error}")]
    Read {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("{path}: {message}")]
    Parse { path: PathBuf, message: String },
    #[error("{path}: key `{key}`: {message}")]
    Invalid {
        path: PathBuf,
        key: String,
        message: String,
    },
}

/// Read and parse a TOML file into `T`. The error names the file, and toml's message names
/// the line, column and key.
pub fn load_toml<T: DeserializeOwned>(path: &Path) -> Result<T, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|error| ConfigError::Read {
        path: path.to_path_buf(),
        error,
    })?;
    parse_toml(&text, path)
}

/// Parse TOML text (already read from `path`, used for messages only).
pub fn parse_toml<T: DeserializeOwned>(text: &str, path: &Path) -> Result<T, ConfigError> {
    toml::from_str(text).map_err(|e| ConfigError::toml(path, &e))
}

impl ConfigError {
    /// A TOML parse or deserialisation error of `path`, on one line: toml's Display spans
    /// several lines (a source excerpt).
    pub fn toml(path: &Path, e: &toml::de::Error) -> ConfigError {
        ConfigError::Parse {
            path: path.to_path_buf(),
            message: e
                .to_string()
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" "),
        }
    }
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
        let bad = |key: &str, message: String| ConfigError::Invalid {
            path: path.to_path_buf(),
            key: key.to_string(),
            message,
        };
        let rt = &self.remote_tracker;
        if !(1..=32).contains(&rt.entries) {
            return Err(bad(
                "remote_tracker.entries",
                format!("expected 1..=32, got {}", rt.entries),
            ));
        }
        if rt.alloc_id_bits != 8 {
            return Err(bad(
                "remote_tracker.alloc_id_bits",
                format!("the RTL port is 8 bits wide; got {}", rt.alloc_id_bits),
            ));
        }
        if !(2..=32).contains(&rt.counter_bits) {
            return Err(bad(
                "remote_tracker.counter_bits",
                format!("expected 2..=32, got {}", rt.counter_bits),
            ));
        }
        let c = &self.tlb_coalescer;
        if c.ptes_per_line != 16 {
            return Err(bad(
                "tlb_coalescer.ptes_per_line",
                format!("a 128-byte line holds 16 PTEs; got {}", c.ptes_per_line),
            ));
        }
        if c.page_frames_log2 > 9 {
            return Err(bad(
                "tlb_coalescer.page_frames_log2",
                format!("expected 0..=9, got {}", c.page_frames_log2),
            ));
        }
        let a = &self.access_time_tracker;
        if !(1..=32).contains(&a.objects) {
            return Err(bad(
                "access_time_tracker.objects",
                format!("expected 1..=32, got {}", a.objects),
            ));
        }
        if !(2..=32).contains(&a.timer_bits) {
            return Err(bad(
                "access_time_tracker.timer_bits",
                format!("expected 2..=32, got {}", a.timer_bits),
            ));
        }
        if a.profiling_threshold == 0 || a.profiling_threshold >= (1u64 << a.timer_bits) {
            return Err(bad(
                "access_time_tracker.profiling_threshold",
                format!("expected 1..2^timer_bits, got {}", a.profiling_threshold),
            ));
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
