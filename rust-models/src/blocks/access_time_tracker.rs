//! PLACEHOLDER behavioural twin of the access_time_tracker block: correct ports, no behaviour yet.
//! The block's engineer replaces this file.

use crate::config::AttConfig;
use crate::protocol::{AttIn, AttOut, CycleModel};

/// Behavioural twin (placeholder: outputs are always idle).
#[derive(Debug, Clone)]
pub struct AccessTimeTracker {
    _cfg: AttConfig,
}

impl AccessTimeTracker {
    pub fn new(cfg: &AttConfig) -> Self {
        AccessTimeTracker { _cfg: cfg.clone() }
    }
}

impl CycleModel for AccessTimeTracker {
    type In = AttIn;
    type Out = AttOut;
    fn step(&mut self, _input: &AttIn) -> AttOut {
        AttOut::default()
    }
}
