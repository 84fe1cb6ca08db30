//! The end of a structure's PMM phase (MMA, CLAP §4.4) and the driver's statistics.

use super::manager::MemoryManager;
use super::mma::{dominant_level, effective_threshold};
use super::policy::{BlockMode, Phase};
use super::{alloc_id, AllocStats, DriverStats, MmaReport, RtDrain};
use crate::addr::{PAGE_2M, PAGE_4K, PAGE_64K};
use crate::workload::AllocIndex;

/// Region size of an MMA level: 64 KB << level.
fn level_bytes(level: usize) -> u64 {
    PAGE_64K << level
}

fn size_label(bytes: u64) -> String {
    if bytes >= 1 << 20 {
        format!("{}MB", bytes >> 20)
    } else {
        format!("{}KB", bytes >> 10)
    }
}

impl MemoryManager {
    /// PMM ended for allocation `a`: drain the Remote Trackers, analyse every fully mapped
    /// VA block's locality tree and pick the region size for the rest of the structure,
    /// or fall back to OLP (small structure, no fully mapped block).
    pub(super) fn run_mma(&mut self, a: usize, rt: &mut dyn RtDrain) -> MmaReport {
        let (access, remote) = rt.drain(alloc_id(a as AllocIndex));
        let ratio = if access == 0 {
            0.0
        } else {
            remote as f64 / access as f64
        };
        let threshold = effective_threshold(
            self.cfg.mma_threshold,
            ratio,
            self.cfg.ratio_target,
            self.cfg.rt_k,
        );
        let st = &self.allocs[a];
        let mut report = MmaReport {
            alloc: a as AllocIndex,
            rt_access: access,
            rt_remote: remote,
            rt_ratio: ratio,
            threshold,
            blocks_analysed: 0,
            level_histogram: [0; 6],
            chosen_bytes: None,
            fallback: None,
        };
        let blocks = st.first_block as usize..(st.first_block + st.blocks) as usize;
        if st.bytes < self.cfg.small_structure_bytes {
            report.fallback = Some("structure under the small-structure size");
        } else {
            for blk in &self.blocks[blocks] {
                if let Some(tree) = blk.tree.as_ref().filter(|t| t.full()) {
                    report.level_histogram[tree.select_level(threshold)] += 1;
                    report.blocks_analysed += 1;
                }
            }
            match dominant_level(&report.level_histogram) {
                Some(level) => report.chosen_bytes = Some(level_bytes(level)),
                None => report.fallback = Some("no fully mapped VA block"),
            }
        }
        let st = &mut self.allocs[a];
        st.phase = match report.chosen_bytes {
            Some(bytes) => Phase::Analysed {
                region_log: (bytes / PAGE_4K).trailing_zeros() as u8,
            },
            None => Phase::OlpFallback(report.fallback.unwrap_or("")),
        };
        st.pmm_end_fault = Some(self.n.faults);
        st.mma = Some(report.clone());
        report
    }

    /// Statistics: PF blocks, page-table pages, per-structure placement, OLP, MMA.
    pub fn stats(&self) -> DriverStats {
        let allocs = self
            .allocs
            .iter()
            .map(|st| {
                let mode = self.policy.block_mode(st.view());
                let (placement, page_bytes) = match mode {
                    BlockMode::Opportunistic => ("OLP".to_string(), PAGE_2M),
                    BlockMode::Fixed {
                        page_log,
                        region_log,
                    } => {
                        let bytes = PAGE_4K << region_log.max(page_log);
                        (size_label(bytes), bytes)
                    }
                };
                AllocStats {
                    name: st.name.clone(),
                    bytes: st.bytes,
                    mapped_bytes: st.mapped_bytes,
                    placement,
                    page_bytes,
                    pmm_end_fault: st.pmm_end_fault,
                    olp_releases: st.olp_releases,
                    olp_disabled: st.olp_disabled,
                    rt_ratio: st.mma.as_ref().map(|m| m.rt_ratio),
                    mma: st.mma.clone(),
                }
            })
            .collect();
        DriverStats {
            policy: self.policy.kind().name(),
            faults: self.n.faults,
            pf_blocks_used: self.phys.used_blocks(),
            pt_pages: self.pt.pt_pages(),
            free_frames: self.phys.free_frames(),
            promotions: self.n.promotions,
            olp_releases: self.n.olp_releases,
            evictions: self.n.evictions,
            chiplet_fallbacks: self.n.fallbacks,
            pt_rehomes: self.n.pt_rehomes,
            migrations: self.n.migrations,
            allocs,
        }
    }
}
