//! The text tables `mcmvm characterize` prints: measured figures beside what the config
//! implies ([`super::expected`]) and, where a published figure can be named, beside it.

use super::expected::{self, Implied, PageClass};
use super::steps::{self, Step};
use super::{Measured, Section};
use crate::gpu::config::GpuConfig;
use std::fmt::Write;

/// Bytes as `4 KB`, `1.5 MB`, `2 GB`.
pub fn bytes(b: u64) -> String {
    let (v, unit) = match b {
        b if b >= 1 << 30 => (b as f64 / (1u64 << 30) as f64, "GB"),
        b if b >= 1 << 20 => (b as f64 / (1u64 << 20) as f64, "MB"),
        b if b >= 1 << 10 => (b as f64 / 1024.0, "KB"),
        b => (b as f64, "B"),
    };
    format!("{} {unit}", format!("{v:.1}").trim_end_matches(".0"))
}

/// Published measurements of the GPU the CLAP paper's baseline resembles (V100-class),
/// by path label; "—" where none can be named.
fn published(label: &str) -> &'static str {
    match label {
        "L1 TLB hit, L1$ hit" => "28 (V100 L1 hit, Jia et al. 2018)",
        "L1 TLB hit, L2$ hit" => "193 (V100 L2 hit, Jia et al. 2018)",
        _ => "—",
    }
}

/// (footprint, cycles per load) of one staircase, in footprint order.
pub fn staircase(ms: &[Measured], section: Section) -> Vec<(u64, f64)> {
    let mut v: Vec<(u64, f64)> = ms
        .iter()
        .filter(|m| m.bench.section == section)
        .filter_map(|m| match (&m.bench.kind, m.cycles_per_load) {
            (super::Kind::Chase { spec, .. }, Some(c)) => Some((spec.footprint(), c)),
            _ => None,
        })
        .collect();
    v.sort_by_key(|p| p.0);
    v
}

/// The class whose TLB reaches a staircase's steps are compared with.
fn class_of(ms: &[Measured], section: Section) -> Option<PageClass> {
    ms.iter()
        .find_map(|m| match (&m.bench.kind, m.bench.section) {
            (super::Kind::Chase { shape, .. }, s) if s == section => Some(shape.class),
            _ => None,
        })
}

/// One staircase's points and its steps beside the config's reaches.
fn staircase_table(s: &mut String, cfg: &GpuConfig, ms: &[Measured], section: Section) {
    let pts = staircase(ms, section);
    let (Some(class), Some(first), Some(last)) = (class_of(ms, section), pts.first(), pts.last())
    else {
        return;
    };
    let _ = writeln!(
        s,
        "{:>10}  {:>11}  {:>8}  path (expected)",
        "footprint", "cycles/load", "expected"
    );
    for m in ms.iter().filter(|m| m.bench.section == section) {
        if let (super::Kind::Chase { spec, .. }, Some(c), Some(p)) =
            (&m.bench.kind, m.cycles_per_load, &m.expected)
        {
            let _ = writeln!(
                s,
                "{:>10}  {:>11.1}  {:>8.1}  {}",
                bytes(spec.footprint()),
                c,
                p.mean_cycles,
                p.label(class)
            );
        }
    }
    let found = steps::detect(&pts);
    for (name, reach) in expected::reaches(cfg, class) {
        if reach < first.0 || reach >= last.0 {
            continue;
        }
        let _ = match steps::nearest(&found, reach) {
            Some(st) => writeln!(
                s,
                "step  {name} = {}: measured between {} and {} ({:.0} -> {:.0} cycles){}",
                bytes(reach),
                bytes(st.below),
                bytes(st.at),
                st.low,
                st.high,
                if steps::brackets(&st, reach) {
                    ""
                } else {
                    "  <- not where the config puts it"
                }
            ),
            None => writeln!(s, "step  {name} = {}: no step measured", bytes(reach)),
        };
    }
}

/// Steps detected in a staircase (for the JSON and the tests).
pub fn steps_of(ms: &[Measured], section: Section) -> Vec<Step> {
    steps::detect(&staircase(ms, section))
}

/// Every chase grouped by its expected path: the median measured against the sum of the
/// configured latencies.
fn latency_table(s: &mut String, ms: &[Measured]) {
    let mut groups: Vec<(String, u64, String, Vec<f64>)> = Vec::new();
    for m in ms {
        let (super::Kind::Chase { shape, .. }, Some(c), Some(p)) =
            (&m.bench.kind, m.cycles_per_load, &m.expected)
        else {
            continue;
        };
        let label = p.label(shape.class);
        match groups.iter_mut().find(|g| g.0 == label) {
            Some(g) => g.3.push(c),
            None => groups.push((label, p.cycles, p.terms.clone(), vec![c])),
        }
    }
    groups.sort_by_key(|g| g.1);
    let _ = writeln!(
        s,
        "{:<44} {:>8} {:>6} {:>9}  {:<34} published",
        "path", "measured", "points", "configured", "= sum of latencies"
    );
    for (label, cycles, terms, mut v) in groups {
        v.sort_by(f64::total_cmp);
        let med = v[v.len() / 2];
        let _ = writeln!(
            s,
            "{label:<44} {med:>8.1} {:>6} {cycles:>9}  {terms:<34} {}",
            v.len(),
            published(&label)
        );
    }
}

fn local_remote(s: &mut String, cfg: &GpuConfig, ms: &[Measured]) {
    let imp = Implied::new(cfg);
    let get = |prefix: &str| {
        ms.iter()
            .find(|m| m.bench.section == Section::LocalRemote && m.bench.name.starts_with(prefix))
            .and_then(|m| m.cycles_per_load)
    };
    for level in ["L2$", "DRAM"] {
        if let (Some(l), Some(r)) = (
            get(&format!("{level} local")),
            get(&format!("{level} remote")),
        ) {
            let _ = writeln!(s, "{level:<5} local {l:>7.1}  remote {r:>7.1}  remote - local {:>6.1}  configured ring latency {} (interconnect.latency_ns)", r - l, imp.ring_latency);
        }
    }
}

fn throughput(s: &mut String, cfg: &GpuConfig, ms: &[Measured]) {
    let imp = Implied::new(cfg);
    let gbs = |bytes_per_cycle: f64| bytes_per_cycle * cfg.gpu.clock_mhz / 1000.0;
    for m in ms {
        let Some(f) = m.flood else { continue };
        let c = f.cycles.max(1) as f64;
        let _ = writeln!(s, "{}", m.bench.name);
        if m.bench.name.starts_with("translations") {
            let bound = |b: Option<u32>| b.map_or("unbounded".to_string(), |n| n.to_string());
            let _ = writeln!(s, "    L1 TLB lookups/cycle per SM {:.3} (bound: l1_tlb.lookups_per_cycle {}; L1 port {} line/cycle, a model constant)",
                f.translations as f64 / c / f.active_sms as f64, bound(imp.l1_tlb_lookups_per_cycle), imp.l1_port_lines_per_cycle);
            let _ = writeln!(
                s,
                "    L2 TLB lookups/cycle per chiplet {:.3} (bound: l2_tlb.lookups_per_cycle {})",
                f.l2_lookups as f64 / c / f.active_chiplets as f64,
                bound(imp.l2_tlb_lookups_per_cycle)
            );
            let _ = writeln!(s, "    walks/cycle per chiplet {:.3} (bound: walkers / local 4KB walk latency = {:.3})",
                f.walks as f64 / c / f.active_chiplets as f64, imp.walks_per_cycle_per_chiplet);
        } else {
            let per = gbs(f.lines as f64 * 128.0 / c) / f.active_chiplets as f64;
            let (what, bound) = if f.remote_ratio > 0.5 {
                ("ring GB/s per chiplet port", imp.ring_gbs_per_port)
            } else {
                ("HBM GB/s per chiplet", imp.hbm_gbs_per_chiplet)
            };
            let _ = writeln!(
                s,
                "    {what} {per:.1} (configured {bound:.1}; remote ratio {:.2})",
                f.remote_ratio
            );
        }
    }
}

/// Everything, section by section.
pub fn render(cfg: &GpuConfig, ms: &[Measured]) -> String {
    let mut s = String::new();
    let policy = ms
        .iter()
        .find(|m| m.bench.section == Section::DataCache)
        .map(|m| m.bench.policy.name())
        .unwrap_or("-");
    let _ = writeln!(s, "== Data-cache staircase: one warp, one lane, dependent loads, stride 128 B, policy {policy} ==");
    staircase_table(&mut s, cfg, ms, Section::DataCache);
    for class in PageClass::ALL {
        let _ = writeln!(
            s,
            "\n== TLB staircase {}: stride one page, policy {} ==",
            class.label(),
            class.policy().name()
        );
        staircase_table(&mut s, cfg, ms, Section::Tlb(class));
    }
    let _ = writeln!(
        s,
        "\n== Latency by path (cycles per load; median over the chases on that path) =="
    );
    latency_table(&mut s, ms);
    let _ = writeln!(s, "\n== Local against remote (the same chase, data homed on chiplet 0 or 1, chased from chiplet 0) ==");
    local_remote(&mut s, cfg, ms);
    let _ = writeln!(s, "\n== Throughput (every warp of the scope, independent loads; the measured kernel's counters) ==");
    throughput(&mut s, cfg, ms);
    let _ = writeln!(s, "\n== UVM far faults and host link ==\nnot measured: reachable through uvm::run_on_gpu, but not part of this command yet (see docs/characterize.md)");
    s
}
