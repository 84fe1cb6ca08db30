//! One run, start to finish: build the driver's memory manager for a policy, the GPU, run
//! every kernel, and turn the counters into a [`RunReport`].

use super::event_loop::Gpu;
use super::locality::MIN_STRUCTURE_BYTES;
use super::metrics::{class_stats, ratio, AllocReport, KernelReport, RunReport};
use super::rt_bank::RtBank;
use super::service::{FirstTouchService, MemoryService};
use super::{GpuConfig, GpuError};
use crate::driver::{DriverConfig, MemoryManager, PolicyKind, RtDrain};
use crate::workload::Workload;
use std::time::Instant;

/// What to run besides the GPU and the workload.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunSpec {
    pub policy: PolicyKind,
    /// Recorded in the report (the workload was built with them).
    pub scale: f64,
    pub seed: u64,
}

/// The driver's configuration for this GPU: its chiplets and memory per chiplet, and the
/// `[driver]` thresholds.
pub fn driver_config(cfg: &GpuConfig) -> DriverConfig {
    cfg.driver.apply(DriverConfig {
        chiplets: cfg.gpu.chiplets,
        frames_per_chiplet: cfg.memory.bytes_per_chiplet / crate::addr::PAGE_4K,
        ..DriverConfig::default()
    })
}

/// Run `workload` on the GPU under `spec.policy` with first-touch demand paging.
pub fn simulate(
    cfg: &GpuConfig,
    workload: &dyn Workload,
    spec: RunSpec,
) -> Result<RunReport, GpuError> {
    let (mut report, repeated) = cfg.engines.serve(
        |repeat| match repeat {
            None => simulate_once(cfg, workload, spec),
            Some(engines) => simulate_once(
                &GpuConfig {
                    engines,
                    ..cfg.clone()
                },
                workload,
                spec,
            ),
        },
        GpuError::block_fault,
    )?;
    report.hardware.repeated_after = repeated;
    Ok(report)
}

fn simulate_once(
    cfg: &GpuConfig,
    workload: &dyn Workload,
    spec: RunSpec,
) -> Result<RunReport, GpuError> {
    let latency = cfg.derived().fault_latency;
    if spec.policy == PolicyKind::Cnuma {
        // Ideal C-NUMA counts every access and migrates at faults (`gpu/cnuma.rs`).
        let mm = MemoryManager::new(driver_config(cfg), spec.policy, workload.allocations())?;
        let service = super::cnuma::CnumaService::new(latency, cfg.gpu.chiplets, mm.va_span());
        return simulate_built(cfg, workload, spec, mm, Box::new(service));
    }
    simulate_with(cfg, workload, spec, Box::new(FirstTouchService { latency }))
}

/// Run `workload` with a caller-supplied memory service (the UVM path's entry point).
pub fn simulate_with<'w>(
    cfg: &GpuConfig,
    workload: &'w dyn Workload,
    spec: RunSpec,
    service: Box<dyn MemoryService + 'w>,
) -> Result<RunReport, GpuError> {
    let mm = MemoryManager::new(driver_config(cfg), spec.policy, workload.allocations())?;
    simulate_built(cfg, workload, spec, mm, service)
}

/// Run `workload` with a memory manager and service already built.
fn simulate_built<'w>(
    cfg: &GpuConfig,
    workload: &'w dyn Workload,
    spec: RunSpec,
    mm: MemoryManager,
    service: Box<dyn MemoryService + 'w>,
) -> Result<RunReport, GpuError> {
    let mut gpu = Gpu::new(cfg, workload, mm, service)?;
    let t0 = Instant::now();
    gpu.run_all()?;
    let secs = t0.elapsed().as_secs_f64();
    gpu.finish(spec, secs)
}

impl Gpu<'_> {
    /// Drain what the Remote Trackers still hold (at the last cycle) and build the report,
    /// part by part: the run, the queues, translation, the caches, the structures.
    pub fn finish(mut self, spec: RunSpec, sim_seconds: f64) -> Result<RunReport, GpuError> {
        self.final_drains()?;
        let stats = self.mm.stats();
        let mut report = self.run_part(spec, sim_seconds);
        self.queueing_part(&mut report);
        self.translation_part(&mut report);
        self.cache_part(&mut report);
        self.structure_part(&mut report, &stats);
        Ok(report)
    }

    /// Flush the GMMUs, drain every structure's Remote Tracker counts into the driver at
    /// the last cycle, and check the blocks agree with their engines (unless one already
    /// faulted: that fault is the error).
    fn final_drains(&mut self) -> Result<(), GpuError> {
        let n = self.per_alloc.len();
        for g in self.gmmus.iter_mut() {
            g.flush()?;
        }
        let mut bank = RtBank {
            gmmus: &mut self.gmmus,
            per_alloc: &mut self.per_alloc,
            now: self.cycles,
            fault: &mut self.block_fault,
        };
        for i in 0..n.min(255) {
            bank.drain(i as u8 + 1);
        }
        if self.block_fault.is_none() {
            for g in self.gmmus.iter_mut() {
                g.sync_blocks()?;
            }
        }
        match self.block_fault.take() {
            Some(f) => Err(f.into()),
            None => Ok(()),
        }
    }

    /// What ran, for how long, how fast; the other parts start from it.
    fn run_part(&self, spec: RunSpec, sim_seconds: f64) -> RunReport {
        let c = &self.counters;
        RunReport {
            workload: self.workload.name().to_string(),
            policy: spec.policy.name().to_string(),
            chiplets: self.cfg.gpu.chiplets,
            scale: spec.scale,
            seed: spec.seed,
            cycles: self.cycles,
            warp_mem_instrs: c.warp_mem_instrs,
            overlapped_instrs: c.overlapped_instrs,
            warp_instrs: c.warp_instrs,
            lines: c.lines,
            remote_ratio: ratio(c.remote_lines, c.lines),
            kernels: self.kernel_reports(),
            sim_seconds,
            speed: if sim_seconds > 0.0 {
                c.warp_mem_instrs as f64 / sim_seconds
            } else {
                0.0
            },
            service: self.service.report(),
            hardware: mcmvm_protocol::system::HardwareReport {
                engine: self.cfg.engines.name().to_string(),
                blocks: self.gmmus.iter().flat_map(|g| g.block_reports()).collect(),
                ..Default::default()
            },
            ..RunReport::default()
        }
    }

    /// Every kernel launched, in order, with its warp instructions and cycles.
    fn kernel_reports(&self) -> Vec<KernelReport> {
        self.workload
            .kernels()
            .iter()
            .zip(&self.counters.kernels)
            .map(|(k, &(warp_instrs, cycles))| KernelReport {
                name: k.name.clone(),
                thread_blocks: k.grid,
                warp_instrs,
                cycles,
            })
            .collect()
    }

    /// Out-of-order service, uncharged queueing, MSHR waits, HBM and ring queueing.
    fn queueing_part(&self, r: &mut RunReport) {
        let (overbooked, queued) = self.mem.overbooking();
        let mshr_waits: u64 = self.sms.iter().map(|s| s.mshrs.waits).sum();
        let mshr_wait_cycles: u64 = self.sms.iter().map(|s| s.mshrs.wait_cycles).sum();
        let l1_out_of_order: u64 = self.sms.iter().map(|s| s.l1_port.out_of_order()).sum();
        r.out_of_order_requests = self.mem.out_of_order() + l1_out_of_order;
        r.served_in_arrival_order = self.cfg.memory.serve_in_arrival_order;
        r.uncharged_queue_cycles = overbooked;
        r.uncharged_queue_share = if overbooked > 0.0 {
            overbooked / (overbooked + queued)
        } else {
            0.0
        };
        r.mshr_waits = mshr_waits;
        r.mshr_overbooked = self.sms.iter().map(|s| s.mshrs.overbooked).sum();
        r.mshr_mean_wait = if mshr_waits == 0 {
            0.0
        } else {
            mshr_wait_cycles as f64 / mshr_waits as f64
        };
        (r.hbm_queue_cycles, r.ring_queue_cycles) = self.mem.queueing();
    }

    /// TLBs per size class, walks, coalescing, faults, translation stalls.
    fn translation_part(&self, r: &mut RunReport) {
        let c = &self.counters;
        let sum = |v: &[u64]| v.iter().sum::<u64>();
        r.l1_tlb = class_stats(&c.l1_tlb_hits, &c.l1_tlb_misses, c.warp_instrs);
        r.l2_tlb = class_stats(&c.l2_tlb_hits, &c.l2_tlb_misses, c.warp_instrs);
        r.l1_tlb_hit_rate = ratio(
            sum(&c.l1_tlb_hits),
            sum(&c.l1_tlb_hits) + sum(&c.l1_tlb_misses),
        );
        r.l2_tlb_hit_rate = ratio(
            sum(&c.l2_tlb_hits),
            sum(&c.l2_tlb_hits) + sum(&c.l2_tlb_misses),
        );
        r.l2_tlb_mpki = ratio(sum(&c.l2_tlb_misses) * 1000, c.warp_instrs);
        r.walks = c.walks;
        r.walk_levels_read = c.walk_levels_read;
        r.walk_remote_levels = c.walk_remote_levels;
        r.walks_with_remote_level = c.walks_with_remote_level;
        r.pwc_hits = c.pwc_hits;
        r.coalesced_fills = c.coalesced_fills;
        r.merged_tlb_entries = self.tlbs.merges();
        r.coalescer_mismatches = c.coalescer_mismatches;
        r.faults = c.faults;
        r.translations_before_mapping = c.translations_before_mapping;
        r.fault_joins = c.fault_joins;
        r.shootdowns = c.shootdowns;
        r.translation = self.tlbs.report(
            c.translation_stall_cycles,
            c.warp_cycles,
            self.gmmus.iter().map(|g| g.walker_wait_cycles).sum(),
        );
    }

    /// L1 and L2 cache hit rates, L2 misses and MPKI.
    fn cache_part(&self, r: &mut RunReport) {
        let c = &self.counters;
        r.l1_cache_hit_rate = ratio(c.l1_cache_hits, c.l1_cache_hits + c.l1_cache_misses);
        r.l2_cache_hit_rate = ratio(self.mem.l2_hits, self.mem.l2_hits + self.mem.l2_misses);
        r.l2_cache_misses = self.mem.l2_misses;
        r.l2_cache_mpki = ratio(self.mem.l2_misses * 1000, c.warp_instrs);
    }

    /// Per data structure, the Remote Tracker's estimate, locality, and the driver's view.
    fn structure_part(&self, r: &mut RunReport, stats: &crate::driver::DriverStats) {
        let c = &self.counters;
        let allocs = self.alloc_reports(stats);
        let (rt_a, rt_r) = self
            .per_alloc
            .iter()
            .fold((0, 0), |(a, r), p| (a + p.rt_access, r + p.rt_remote));
        r.page_table_pages = self.mm.page_table().pt_pages();
        r.pf_blocks_used = stats.pf_blocks_used;
        r.pmm_end_pct = c.pmm_end_instr.map(|i| 100.0 * ratio(i, c.warp_mem_instrs));
        r.rt_remote_ratio = (rt_a > 0).then(|| ratio(rt_r, rt_a));
        r.rt_similarity = rt_similarity(&allocs);
        r.chiplet_locality = chiplet_locality(&allocs);
        r.allocs = allocs;
        r.driver = serde_json::to_value(stats).unwrap_or(serde_json::Value::Null);
    }
}

impl Gpu<'_> {
    /// Per data structure: what the driver did with it and what its accesses measured.
    fn alloc_reports(&self, stats: &crate::driver::DriverStats) -> Vec<AllocReport> {
        self.workload
            .allocations()
            .iter()
            .zip(&self.per_alloc)
            .enumerate()
            .map(|(i, (a, pc))| {
                let st = stats.allocs.get(i);
                let label = |f: fn(&crate::driver::AllocStats) -> &String| {
                    st.map_or_else(|| "-".to_string(), |s| f(s).clone())
                };
                AllocReport {
                    name: a.name.clone(),
                    bytes: a.bytes,
                    page_size: label(|s| &s.placement),
                    table4: label(|s| &s.table4),
                    mma_fallback: st
                        .and_then(|s| s.mma.as_ref()?.fallback)
                        .map(|f| f.to_string()),
                    lines: pc.lines,
                    remote_lines: pc.remote_lines,
                    remote_ratio: ratio(pc.remote_lines, pc.lines),
                    walks: pc.walks,
                    faults: pc.faults,
                    rt_remote_ratio: (pc.rt_access > 0).then(|| ratio(pc.rt_remote, pc.rt_access)),
                    rt_access: pc.rt_access,
                    rt_remote: pc.rt_remote,
                    locality: pc
                        .pages
                        .summary(st.map_or(crate::addr::PAGE_64K, |s| s.page_bytes)),
                }
            })
            .collect()
    }
}

/// Structures of at least [`MIN_STRUCTURE_BYTES`] that were accessed.
fn measured(allocs: &[AllocReport]) -> impl Iterator<Item = &AllocReport> {
    allocs
        .iter()
        .filter(|a| a.bytes >= MIN_STRUCTURE_BYTES && a.lines > 0)
}

fn mean(xs: impl Iterator<Item = f64>) -> Option<f64> {
    let (n, sum) = xs.fold((0u32, 0.0), |(n, s), x| (n + 1, s + x));
    (n > 0).then(|| sum / n as f64)
}

/// CLAP §4.3's similarity of the Remote Tracker's estimate to the true remote ratio, per
/// structure the RT saw, averaged.
fn rt_similarity(allocs: &[AllocReport]) -> Option<f64> {
    mean(measured(allocs).filter_map(|a| Some(1.0 - (a.rt_remote_ratio? - a.remote_ratio).abs())))
}

/// CLAP §3.4's chiplet locality, per structure, averaged.
fn chiplet_locality(allocs: &[AllocReport]) -> Option<f64> {
    mean(measured(allocs).map(|a| a.locality.chiplet_locality))
}
