//! `GpuConfig`: the MCM GPU's parameters (`configs/mcm-4chiplet.toml`, CLAP Table 1).
//!
//! One validated type: serde rejects unknown keys and wrong types (the message names the
//! file, line and key), [`GpuConfig::validate`] rejects values the model cannot use (the
//! message names the key). Every latency is in GPU core cycles unless its name says `_ns`;
//! bandwidths in GB/s are converted to bytes per cycle once, by [`GpuConfig::derived`].

use crate::config::{load_toml, ConfigError, HwConfig};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// Whole-GPU parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GpuConfig {
    pub gpu: CoreSpec,
    pub l1_tlb: TlbSpec,
    pub l2_tlb: TlbSpec,
    pub l1_cache: CacheSpec,
    pub l2_cache: CacheSpec,
    pub memory: MemorySpec,
    pub interconnect: InterconnectSpec,
    pub walker: WalkerSpec,
    pub fault: FaultSpec,
    /// Parameters of the Remote Tracker and TLB coalescing twins (same keys as `hw.toml`).
    #[serde(default)]
    pub hw: HwConfig,
    /// The driver's PMM, OLP and MMA thresholds (optional; the paper's by default).
    #[serde(default)]
    pub driver: super::driver_spec::DriverSpec,
    /// Which engines serve the blocks (`--hw`); not a TOML key.
    #[serde(skip)]
    pub engines: crate::blocks::Hardware,
}

/// Chiplets, SMs and warps.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CoreSpec {
    /// Chiplets in the package (a power of two: the chiplet ID is a field of the PA).
    pub chiplets: u32,
    /// Streaming multiprocessors per chiplet.
    pub sms_per_chiplet: u32,
    /// Core clock in MHz; converts ns and GB/s into cycles.
    pub clock_mhz: f64,
    /// Resident warps per SM.
    pub warps_per_sm: u32,
    /// Resident thread blocks per SM.
    pub max_tbs_per_sm: u32,
    /// Warp instructions an SM issues per cycle (its warp schedulers).
    pub issue_width: u32,
    /// Independent memory instructions a warp may have in flight (memory-level
    /// parallelism, [`super::in_flight`]); 1 blocks every warp at every access. Optional
    /// (configs older than the key get the default).
    #[serde(default = "default_loads_in_flight")]
    pub loads_in_flight_per_warp: u32,
    /// L1 miss-status holding registers per SM: lines that may miss the L1 and be in
    /// flight at once ([`super::mshr`]); 0 = unbounded. Optional (configs older than the
    /// key get the default).
    #[serde(default)]
    pub l1_mshrs_per_sm: u32,
}

/// Not in CLAP's table: 4 is an assumption (a V100 warp's scoreboard tracks a handful of
/// pending loads).
fn default_loads_in_flight() -> u32 {
    4
}

/// One TLB level: one structure per page-size class.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TlbSpec {
    /// Entries of the 4 KB TLB.
    pub entries_4k: u32,
    /// Entries of the 64 KB TLB (an entry may be a coalesced group of up to 16 pages).
    pub entries_64k: u32,
    /// Entries of the 2 MB TLB.
    pub entries_2m: u32,
    /// Entries of each static intermediate-size TLB (128 KB, 256 KB, 512 KB, 1 MB), used
    /// only by the `s128k` … `s1m` policies. CLAP's page-size study gives each size an
    /// extra TLB of 16 entries in L1 and 512 in L2 (Fig. 6), the 64 KB TLB's sizes, so the
    /// key defaults to `entries_64k`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entries_intermediate: Option<u32>,
    /// Associativity; 0 means fully associative.
    pub ways: u32,
    /// Lookup latency in cycles (all classes are probed in parallel).
    pub latency: u64,
    /// Lookups the TLB starts per cycle (its ports); 0 = unlimited.
    #[serde(default)]
    pub lookups_per_cycle: u32,
    /// Misses it may have outstanding at once (its miss registers or miss queue); a
    /// request that finds them all held waits. 0 = unbounded.
    #[serde(default)]
    pub misses_in_flight: u32,
}

impl TlbSpec {
    /// Entries of each intermediate-size TLB (`entries_intermediate`, else `entries_64k`).
    pub fn intermediate_entries(&self) -> u32 {
        self.entries_intermediate.unwrap_or(self.entries_64k)
    }
}

/// A data cache (tags only: the model needs hits and misses, not data).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CacheSpec {
    /// Capacity in bytes (per SM for L1, per chiplet for L2).
    pub bytes: u64,
    /// Associativity.
    pub ways: u32,
    /// Hit latency in cycles.
    pub latency: u64,
}

/// HBM per chiplet.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MemorySpec {
    /// Memory channels per chiplet; lines interleave over them at `channel_interleave_bytes`.
    pub channels_per_chiplet: u32,
    /// Bytes that go to one channel before the next (sub-page interleaving, CLAP §2.6).
    pub channel_interleave_bytes: u64,
    /// Memory bandwidth of the whole GPU in GB/s, split evenly over all channels.
    pub total_bandwidth_gbs: f64,
    /// DRAM access latency added to an L2 miss, in cycles.
    pub dram_latency: u64,
    /// Physical memory per chiplet in bytes (a multiple of 2 MB: whole PF blocks).
    pub bytes_per_chiplet: u64,
    /// The L1 ports, HBM channels and ring ports serve requests in the order they arrive
    /// ([`super::bandwidth`]) instead of the order the event loop computes them. Optional,
    /// default `true`.
    #[serde(default = "default_true")]
    pub serve_in_arrival_order: bool,
}

fn default_true() -> bool {
    true
}

/// Largest physical memory the model addresses (32-bit cache line tags).
pub const MAX_PHYSICAL_BYTES: u64 = ((1u64 << 32) - 1) * LINE_BYTES;

/// The inter-chiplet ring.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InterconnectSpec {
    /// Ring bandwidth of the whole GPU in GB/s, split evenly over the chiplets' ports.
    pub total_bandwidth_gbs: f64,
    /// Latency a remote access pays for crossing the ring, in ns.
    pub latency_ns: f64,
}

/// The GMMU's page-table walker (one per chiplet).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WalkerSpec {
    /// Concurrent walks per GMMU (multi-threaded walker).
    pub walkers_per_chiplet: u32,
    /// Page-walk-cache entries per GMMU for upper-level (PDB) entries; 0 disables it.
    pub pwc_entries: u32,
    /// Cycles of a page-walk-cache hit.
    pub pwc_latency: u64,
    /// The GMMUs have CLAP's Remote Tracker (§4.3), stepped by every completed walk and
    /// drained by the driver when PMM ends. Optional, default true; the Forest study's
    /// one-chiplet GPU has none. A policy that drains it (`clap`) needs it.
    #[serde(default = "has_remote_tracker")]
    pub remote_tracker: bool,
    /// The GMMUs have CLAP's TLB coalescing hardware (§4.6): a coalescer block that
    /// merges each 64 KB leaf's PTE line, and same-offset entry merging in the TLBs. Only
    /// the policies that use it (`clap`, `s64k-coal`) feed it; under the others the
    /// blocks get no traffic.
    pub coalescing: bool,
}

/// `walker.remote_tracker` when a config leaves it out.
fn has_remote_tracker() -> bool {
    true
}

/// First-touch page faults serviced by the driver.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FaultSpec {
    /// Time from a fault to the warp's replay, in ns (mapping, page-table update, zeroing).
    pub latency_ns: f64,
}

/// Values computed once from a validated config.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Derived {
    /// Cycles a 128-byte line occupies one memory channel.
    pub channel_cycles_per_line: f64,
    /// Cycles a 128-byte line occupies one chiplet's ring port.
    pub ring_cycles_per_line: f64,
    /// Ring latency in cycles.
    pub ring_latency: u64,
    /// Fault service latency in cycles.
    pub fault_latency: u64,
    /// Total SMs.
    pub sms: u32,
}

/// Bytes of one cache line / coalescing unit.
pub const LINE_BYTES: u64 = 128;

impl GpuConfig {
    /// Load and validate a GPU config file.
    pub fn load(path: &Path) -> Result<GpuConfig, ConfigError> {
        let cfg: GpuConfig = load_toml(path)?;
        cfg.validate(path)?;
        Ok(cfg)
    }

    /// Parse and validate TOML text (`path` names it in messages).
    pub fn parse(text: &str, path: &Path) -> Result<GpuConfig, ConfigError> {
        Self::parse_with(text, path, &[])
    }

    /// As [`GpuConfig::parse`], with `key=value` overrides (dotted keys, TOML values)
    /// applied before validation.
    pub fn parse_with(
        text: &str,
        path: &Path,
        overrides: &[String],
    ) -> Result<GpuConfig, ConfigError> {
        let cfg: GpuConfig = crate::config::parse_with_overrides(text, path, overrides)?;
        cfg.validate(path)?;
        Ok(cfg)
    }

    /// Cycles of `ns` nanoseconds at the core clock, rounded to the nearest cycle.
    pub fn ns_to_cycles(&self, ns: f64) -> u64 {
        (ns * self.gpu.clock_mhz / 1000.0).round() as u64
    }

    /// Unit conversions, done once.
    pub fn derived(&self) -> Derived {
        let bytes_per_cycle = |gbs: f64| gbs * 1e9 / (self.gpu.clock_mhz * 1e6);
        let channels = (self.gpu.chiplets * self.memory.channels_per_chiplet) as f64;
        let channel_bpc = bytes_per_cycle(self.memory.total_bandwidth_gbs) / channels;
        let ring_bpc =
            bytes_per_cycle(self.interconnect.total_bandwidth_gbs) / self.gpu.chiplets as f64;
        Derived {
            channel_cycles_per_line: LINE_BYTES as f64 / channel_bpc,
            ring_cycles_per_line: LINE_BYTES as f64 / ring_bpc,
            ring_latency: self.ns_to_cycles(self.interconnect.latency_ns),
            fault_latency: self.ns_to_cycles(self.fault.latency_ns),
            sms: self.gpu.chiplets * self.gpu.sms_per_chiplet,
        }
    }

    /// Check every value the model depends on; the error names the key. The rules run in
    /// the order of `config_rules::RULES`; the first that fails is reported.
    pub fn validate(&self, path: &Path) -> Result<(), ConfigError> {
        for rule in super::config_rules::RULES {
            rule(self).map_err(|e| ConfigError::invalid(path, e))?;
        }
        // The twins' keys are reported as in hw.toml (`remote_tracker.entries`, …).
        self.hw.validate(path)
    }
}
