//! A reference Access Time Tracker with the block's port semantics (protocol.rs `AttIn` /
//! `AttOut`), used by the UVM path when the hardware block's twin does not answer (the
//! workspace starts with a placeholder twin). Same contract as SPEC §3; timing: the
//! access record and the interrupt leave in the same cycle as the access (combinational),
//! `oldest_*` shows the state before this cycle's update.

use crate::config::AttConfig;
use crate::protocol::{AttIn, AttOut, CycleModel};

#[derive(Debug, Clone, Copy, Default)]
struct Entry {
    valid: bool,
    start_vpn: u64,
    end_vpn: u64,
    timer: u64,
    cease: bool,
    /// Larger = more recently accessed (or registered).
    last_use: u64,
}

/// Behavioural reference of the ATT object table.
#[derive(Debug, Clone)]
pub struct ReferenceAtt {
    entries: Vec<Entry>,
    timer_max: u64,
    profiling_threshold: u64,
    use_clock: u64,
}

impl ReferenceAtt {
    pub fn new(cfg: &AttConfig) -> Self {
        ReferenceAtt {
            entries: vec![Entry::default(); cfg.objects],
            timer_max: (1u64 << cfg.timer_bits) - 1,
            profiling_threshold: cfg.profiling_threshold.max(1),
            use_clock: 0,
        }
    }

    fn oldest(&self) -> Option<usize> {
        (0..self.entries.len())
            .filter(|&i| self.entries[i].valid)
            .min_by_key(|&i| self.entries[i].last_use)
    }
}

impl CycleModel for ReferenceAtt {
    type In = AttIn;
    type Out = AttOut;

    fn step(&mut self, input: &AttIn) -> AttOut {
        let mut out = AttOut::default();
        if let Some(o) = self.oldest() {
            out.oldest_valid = 1;
            out.oldest_obj = o as u64;
        }
        if input.reset == 1 {
            self.entries.iter_mut().for_each(|e| *e = Entry::default());
            self.use_clock = 0;
            return out;
        }
        if input.acc_valid == 1 {
            let hit = self.entries.iter().position(|e| {
                e.valid && e.start_vpn <= input.acc_vpn && input.acc_vpn <= e.end_vpn
            });
            if let Some(i) = hit {
                self.use_clock += 1;
                let e = &mut self.entries[i];
                e.timer = (e.timer + 1).min(self.timer_max);
                e.last_use = self.use_clock;
                out.rec_valid = 1;
                out.rec_obj = i as u64;
                out.rec_vpn = input.acc_vpn;
                out.rec_timer = e.timer;
                // One interrupt per `profiling_threshold` accesses until the driver ceases it.
                if !e.cease && e.timer.is_multiple_of(self.profiling_threshold) {
                    out.irq_valid = 1;
                    out.irq_obj = i as u64;
                }
            }
        }
        let n = self.entries.len() as u64;
        if input.reg_valid == 1 && input.reg_obj < n {
            self.use_clock += 1;
            self.entries[input.reg_obj as usize] = Entry {
                valid: true,
                start_vpn: input.reg_start_vpn,
                end_vpn: input.reg_end_vpn,
                timer: 0,
                cease: false,
                last_use: self.use_clock,
            };
        }
        if input.rm_valid == 1 && input.rm_obj < n {
            self.entries[input.rm_obj as usize].valid = false;
        }
        if input.cease_valid == 1 && input.cease_obj < n {
            self.entries[input.cease_obj as usize].cease = true;
        }
        out
    }
}
