//! rust-hdl simulation adapter of the Remote Tracker: the module behind `CycleModel`.

use super::RemoteTrackerRtl;
use mcmvm_protocol::config::RtConfig;
use mcmvm_protocol::protocol::{CycleModel, RtIn, RtOut};
use rust_hdl::prelude::*;

/// Number of settle passes `simulate` may take per clock phase before the design is
/// declared combinationally unstable.
const SETTLE_ITERATIONS: usize = 200;

/// Runs [`RemoteTrackerRtl`] cycle by cycle in rust-hdl's own simulator, calling
/// `simulate()` directly (the threaded `Simulation` harness is far slower).
pub struct RemoteTrackerHdlSim {
    uut: RemoteTrackerRtl,
}

impl RemoteTrackerHdlSim {
    /// A connected, settled instance for a validated `cfg`.
    pub fn new(cfg: &RtConfig) -> Self {
        let mut uut = RemoteTrackerRtl::new(cfg);
        uut.connect_all();
        let settled = simulate(&mut uut, SETTLE_ITERATIONS);
        assert!(settled, "remote_tracker: power-on state does not settle");
        RemoteTrackerHdlSim { uut }
    }

    /// The module itself (for probing or VCD).
    pub fn module(&self) -> &RemoteTrackerRtl {
        &self.uut
    }
}

impl CycleModel for RemoteTrackerHdlSim {
    type In = RtIn;
    type Out = RtOut;

    fn step(&mut self, input: &RtIn) -> RtOut {
        let u = &mut self.uut;
        u.reset.next = input.reset != 0;
        u.walk_valid.next = input.walk_valid != 0;
        u.walk_alloc_id.next = input.walk_alloc_id.to_bits();
        u.walk_remote.next = input.walk_remote != 0;
        u.drain_valid.next = input.drain_valid != 0;
        u.drain_alloc_id.next = input.drain_alloc_id.to_bits();
        // Inputs change with the clock low; a DFF only samples on the low-to-high change of
        // its clock signal, which it sees one pass after the top copies the clock to it.
        u.clock.next = false.into();
        let settled = simulate(u, SETTLE_ITERATIONS);
        assert!(
            settled,
            "remote_tracker: combinational logic does not settle"
        );
        let out = RtOut {
            drain_done: u.drain_done.val() as u64,
            drain_hit: u.drain_hit.val() as u64,
            drain_access: u.drain_access.val().to_u64(),
            drain_remote: u.drain_remote.val().to_u64(),
            evict_valid: u.evict_valid.val() as u64,
            evict_alloc_id: u.evict_alloc_id.val().to_u64(),
            evict_access: u.evict_access.val().to_u64(),
            evict_remote: u.evict_remote.val().to_u64(),
        };
        u.clock.next = true.into();
        let settled = simulate(u, SETTLE_ITERATIONS);
        assert!(
            settled,
            "remote_tracker: state does not settle after the clock edge"
        );
        out
    }
}
