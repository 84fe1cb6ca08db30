//! PLACEHOLDER behavioural twin of the remote_tracker block: correct ports, no behaviour yet.
//! The block's engineer replaces this file.

use crate::config::RtConfig;
use crate::protocol::{RtIn, RtOut, CycleModel};

/// Behavioural twin (placeholder: outputs are always idle).
#[derive(Debug, Clone)]
pub struct RemoteTracker {
    _cfg: RtConfig,
}

impl RemoteTracker {
    pub fn new(cfg: &RtConfig) -> Self {
        RemoteTracker { _cfg: cfg.clone() }
    }
}

impl CycleModel for RemoteTracker {
    type In = RtIn;
    type Out = RtOut;
    fn step(&mut self, _input: &RtIn) -> RtOut {
        RtOut::default()
    }
}
