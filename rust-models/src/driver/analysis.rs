//! The end of a structure's PMM phase (MMA, CLAP §4.4) and the driver's statistics.

use super::manager::MemoryManager;
use super::mma::{dominant_level, effective_threshold};
use super::policy::{BlockMode, Phase};
use super::state::AllocState;
use super::table4::{HugeBlocks, MmaFallback, OlpWhy, Table4};
use super::{alloc_id, AllocStats, DriverStats, MmaReport, PolicyKind, RtDrain};
use crate::addr::{Vpn, PAGE_2M, PAGE_4K, PAGE_64K};
use crate::pagetable::Level;
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
    /// or fall back to OLP with fewer than `mma_min_full_blocks` fully mapped blocks
    /// ([`MmaFallback`]).
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
        let needed = self.cfg.mma_min_full_blocks.max(1);
        let mut report = MmaReport {
            alloc: a as AllocIndex,
            rt_access: access,
            rt_remote: remote,
            rt_ratio: ratio,
            threshold,
            blocks_analysed: 0,
            blocks_touched: 0,
            blocks_needed: needed,
            level_histogram: [0; 6],
            chosen_bytes: None,
            fallback: None,
        };
        self.analyse_blocks(a, &mut report);
        self.choose_region(a, &mut report);
        let st = &mut self.allocs[a];
        st.phase = match (report.chosen_bytes, report.fallback) {
            (Some(bytes), _) => Phase::Analysed {
                region_log: (bytes / PAGE_4K).trailing_zeros() as u8,
            },
            (None, reason) => Phase::OlpFallback(reason.map_or("", MmaFallback::short)),
        };
        st.pmm_end_fault = Some(self.n.faults);
        st.mma = Some(report.clone());
        report
    }

    /// Step 1 of MMA: each fully mapped VA block of allocation `a` votes for the level its
    /// locality tree selects at `report.threshold`.
    fn analyse_blocks(&self, a: usize, report: &mut MmaReport) {
        let st = &self.allocs[a];
        let blocks = st.first_block as usize..(st.first_block + st.blocks) as usize;
        for blk in &self.blocks[blocks] {
            let Some(tree) = blk.tree.as_ref() else {
                continue;
            };
            report.blocks_touched += 1;
            if tree.full() {
                report.level_histogram[tree.select_level(report.threshold)] += 1;
                report.blocks_analysed += 1;
            }
        }
    }

    /// Step 2 of MMA: the dominant level with enough votes, else why it falls back to OLP.
    fn choose_region(&self, a: usize, report: &mut MmaReport) {
        let st = &self.allocs[a];
        let needed = report.blocks_needed;
        if report.blocks_analysed >= needed {
            report.chosen_bytes = dominant_level(&report.level_histogram).map(level_bytes);
        } else {
            // However the sample is laid out, it fills at most this many whole blocks.
            let capacity = (st.mapped_bytes / PAGE_2M) as u32;
            report.fallback = Some(if capacity < needed {
                MmaFallback::SmallStructure {
                    mapped_bytes: st.mapped_bytes,
                    capacity,
                    needed,
                }
            } else {
                MmaFallback::InsufficientlyMapped {
                    full: report.blocks_analysed,
                    touched: report.blocks_touched,
                    needed,
                }
            });
        }
    }

    /// Statistics: PF blocks, page-table pages, per-structure placement, OLP, MMA.
    pub fn stats(&self) -> DriverStats {
        let allocs = self.allocs.iter().map(|st| self.alloc_stats(st)).collect();
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

    /// One structure's placement, its Table 4 entry and its MMA outcome.
    fn alloc_stats(&self, st: &AllocState) -> AllocStats {
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
        let blocks = self.huge_blocks(st.first_block, st.blocks);
        let olp = |why| Table4::Olp {
            disabled: st.olp_disabled,
            why,
            result: blocks,
        };
        let table4 = match st.phase {
            Phase::Analysed { region_log } => Table4::Mma(size_label(PAGE_4K << region_log)),
            Phase::Pmm => olp(OlpWhy::PmmNotEnded),
            Phase::OlpFallback(_) => match st.mma.as_ref().and_then(|m| m.fallback) {
                Some(reason) => olp(OlpWhy::Fallback(reason)),
                None => olp(OlpWhy::Policy),
            },
            Phase::Static if self.policy.kind() == PolicyKind::Olp => olp(OlpWhy::Policy),
            Phase::Static => Table4::Static(placement.clone()),
        };
        AllocStats {
            name: st.name.clone(),
            bytes: st.bytes,
            mapped_bytes: st.mapped_bytes,
            placement,
            table4: table4.to_string(),
            blocks,
            page_bytes,
            pmm_end_fault: st.pmm_end_fault,
            olp_releases: st.olp_releases,
            olp_disabled: st.olp_disabled,
            rt_ratio: st.mma.as_ref().map(|m| m.rt_ratio),
            mma: st.mma.clone(),
        }
    }

    /// VA blocks `first .. first + n` touched, and of them mapped as one 2 MB page.
    fn huge_blocks(&self, first: u32, n: u32) -> HugeBlocks {
        let mut out = HugeBlocks::default();
        for b in first as usize..(first + n) as usize {
            if self.blocks[b].mapped_pages == 0 {
                continue;
            }
            out.touched_blocks += 1;
            let vpn = Vpn(self.block_first_vpn(b));
            if self.pt.lookup(vpn).is_some_and(|l| l.level != Level::Ptb) {
                out.huge_blocks += 1;
            }
        }
        out
    }
}
