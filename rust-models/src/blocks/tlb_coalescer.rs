//! PLACEHOLDER behavioural twin of the tlb_coalescer block: correct ports, no behaviour yet.
//! The block's engineer replaces this file.

use crate::config::CoalescerConfig;
use crate::protocol::{CoalIn, CoalOut, CycleModel};

/// Behavioural twin (placeholder: outputs are always idle).
#[derive(Debug, Clone)]
pub struct TlbCoalescer {
    _cfg: CoalescerConfig,
}

impl TlbCoalescer {
    pub fn new(cfg: &CoalescerConfig) -> Self {
        TlbCoalescer { _cfg: cfg.clone() }
    }
}

impl CycleModel for TlbCoalescer {
    type In = CoalIn;
    type Out = CoalOut;
    fn step(&mut self, _input: &CoalIn) -> CoalOut {
        CoalOut::default()
    }
}
