//! The per-key rules of [`GpuConfig::validate`]: one function per rule, run in the order
//! of [`RULES`]. A rule returns the [`InvalidKey`] it finds (which names the key and the
//! legal values); `validate` adds the file's path.

use super::config::{GpuConfig, TlbSpec, LINE_BYTES, MAX_PHYSICAL_BYTES};
use super::in_flight::MAX_IN_FLIGHT;
use crate::config::{Bounds, InvalidKey};

/// One rule over the whole configuration.
pub(super) type Rule = fn(&GpuConfig) -> Result<(), InvalidKey>;

/// Every rule, in the order the keys are checked (the first failure is reported).
pub(super) const RULES: &[Rule] = &[
    chiplets,
    loads_in_flight,
    counts_at_least_one,
    rates_positive,
    latencies_non_negative,
    tlb_geometry,
    cache_geometry,
    channel_interleave,
    memory_size,
    driver_thresholds,
];

/// The chiplet ID is a field of the physical address: a power of two, at most 64.
fn chiplets(c: &GpuConfig) -> Result<(), InvalidKey> {
    let n = c.gpu.chiplets;
    if !n.is_power_of_two() || n > 64 {
        return Err(InvalidKey::NotPowerOfTwo {
            key: "gpu.chiplets".into(),
            value: n.into(),
            bounds: Bounds::between(1u32, 64u32),
        });
    }
    Ok(())
}

/// A warp's in-flight slots are a fixed array of `MAX_IN_FLIGHT`.
fn loads_in_flight(c: &GpuConfig) -> Result<(), InvalidKey> {
    let mlp = c.gpu.loads_in_flight_per_warp;
    if mlp == 0 || mlp as usize > MAX_IN_FLIGHT {
        return Err(InvalidKey::out_of_range(
            "gpu.loads_in_flight_per_warp",
            mlp,
            Bounds::between(1u32, MAX_IN_FLIGHT),
        ));
    }
    Ok(())
}

fn counts_at_least_one(c: &GpuConfig) -> Result<(), InvalidKey> {
    let g = &c.gpu;
    for (key, v) in [
        ("gpu.sms_per_chiplet", g.sms_per_chiplet),
        ("gpu.warps_per_sm", g.warps_per_sm),
        ("gpu.max_tbs_per_sm", g.max_tbs_per_sm),
        ("gpu.issue_width", g.issue_width),
        ("memory.channels_per_chiplet", c.memory.channels_per_chiplet),
        ("walker.walkers_per_chiplet", c.walker.walkers_per_chiplet),
    ] {
        if v == 0 {
            return Err(InvalidKey::out_of_range(key, v, Bounds::at_least(1u32)));
        }
    }
    Ok(())
}

fn rates_positive(c: &GpuConfig) -> Result<(), InvalidKey> {
    for (key, v) in [
        ("gpu.clock_mhz", c.gpu.clock_mhz),
        ("memory.total_bandwidth_gbs", c.memory.total_bandwidth_gbs),
        (
            "interconnect.total_bandwidth_gbs",
            c.interconnect.total_bandwidth_gbs,
        ),
    ] {
        if !(v.is_finite() && v > 0.0) {
            return Err(InvalidKey::NotPositive {
                key: key.into(),
                value: v,
            });
        }
    }
    Ok(())
}

fn latencies_non_negative(c: &GpuConfig) -> Result<(), InvalidKey> {
    for (key, v) in [
        ("interconnect.latency_ns", c.interconnect.latency_ns),
        ("fault.latency_ns", c.fault.latency_ns),
    ] {
        if !(v.is_finite() && v >= 0.0) {
            return Err(InvalidKey::out_of_range(key, v, Bounds::at_least(0.0)));
        }
    }
    Ok(())
}

/// Every size class of both TLB levels has entries, in a power-of-two number of sets.
fn tlb_geometry(c: &GpuConfig) -> Result<(), InvalidKey> {
    for (name, t) in [("l1_tlb", &c.l1_tlb), ("l2_tlb", &c.l2_tlb)] {
        tlb_level(name, t)?;
    }
    Ok(())
}

fn tlb_level(name: &str, t: &TlbSpec) -> Result<(), InvalidKey> {
    for (size, n) in [
        ("entries_4k", t.entries_4k),
        ("entries_64k", t.entries_64k),
        ("entries_2m", t.entries_2m),
        ("entries_intermediate", t.intermediate_entries()),
    ] {
        let key = format!("{name}.{size}");
        if n == 0 {
            return Err(InvalidKey::out_of_range(&key, n, Bounds::at_least(1u32)));
        }
        if t.ways != 0 && (n % t.ways != 0 || !(n / t.ways).is_power_of_two()) {
            return Err(InvalidKey::TlbSets {
                key,
                entries: n,
                ways: t.ways,
            });
        }
    }
    Ok(())
}

/// The caches index their sets with a mask: a power-of-two set count of 128-byte lines.
fn cache_geometry(c: &GpuConfig) -> Result<(), InvalidKey> {
    for (name, cache) in [("l1_cache", &c.l1_cache), ("l2_cache", &c.l2_cache)] {
        let lines = cache.bytes / LINE_BYTES;
        if cache.ways == 0
            || cache.bytes % LINE_BYTES != 0
            || !lines.is_multiple_of(cache.ways as u64)
            || !(lines / cache.ways as u64).is_power_of_two()
        {
            return Err(InvalidKey::CacheSets {
                key: format!("{name}.bytes"),
                bytes: cache.bytes,
                ways: cache.ways,
                line_bytes: LINE_BYTES,
            });
        }
    }
    Ok(())
}

fn channel_interleave(c: &GpuConfig) -> Result<(), InvalidKey> {
    let bytes = c.memory.channel_interleave_bytes;
    if !bytes.is_power_of_two() || bytes < LINE_BYTES {
        return Err(InvalidKey::NotPowerOfTwo {
            key: "memory.channel_interleave_bytes".into(),
            value: bytes,
            bounds: Bounds::at_least(LINE_BYTES),
        });
    }
    Ok(())
}

fn memory_size(c: &GpuConfig) -> Result<(), InvalidKey> {
    let m = &c.memory;
    if m.bytes_per_chiplet == 0 || !m.bytes_per_chiplet.is_multiple_of(crate::addr::PAGE_2M) {
        return Err(InvalidKey::NotMultiple {
            key: "memory.bytes_per_chiplet".into(),
            value: m.bytes_per_chiplet,
            multiple: crate::addr::PAGE_2M,
        });
    }
    // The caches keep 32-bit line tags (line number + 1): 2^32 lines of 128 bytes.
    let total = m.bytes_per_chiplet.saturating_mul(c.gpu.chiplets as u64);
    if total > MAX_PHYSICAL_BYTES {
        return Err(InvalidKey::BetweenKeys {
            key: "memory.bytes_per_chiplet".into(),
            value: m.bytes_per_chiplet.into(),
            other: "gpu.chiplets".into(),
            other_value: c.gpu.chiplets.into(),
            expected: format!(
                "at most the model's {} GB of physical memory over all chiplets",
                MAX_PHYSICAL_BYTES >> 30
            ),
        });
    }
    Ok(())
}

fn driver_thresholds(c: &GpuConfig) -> Result<(), InvalidKey> {
    c.driver.check()
}
