//! rust-hdl simulation adapter of the TLB coalescing logic: the module behind `CycleModel`.

use super::TlbCoalescerRtl;
use mcmvm_protocol::config::CoalescerConfig;
use mcmvm_protocol::protocol::{CoalIn, CoalOut, CycleModel};
use rust_hdl::prelude::*;

/// Settle iterations allowed per clock phase; the design needs about five.
const MAX_SETTLE_ITERATIONS: usize = 100;

/// The RTL module run by rust-hdl's simulator, one `simulate()` settle per clock phase
/// (its threaded `Simulation` harness is far slower).
pub struct TlbCoalescerHdlSim {
    uut: TlbCoalescerRtl,
}

impl TlbCoalescerHdlSim {
    /// Build and connect the module; the clock starts high so the first step's low phase
    /// is not mistaken for an edge. `step` reads the outputs after the low-phase settle,
    /// with this cycle's inputs applied and before the edge: the registers' values with
    /// output registers, this cycle's results without.
    pub fn new(cfg: &CoalescerConfig) -> Self {
        let mut uut = TlbCoalescerRtl::new(cfg);
        uut.connect_all();
        uut.clock.next = true.into();
        settle(&mut uut);
        TlbCoalescerHdlSim { uut }
    }

    /// The simulated module (for probes and VCD).
    pub fn module(&self) -> &TlbCoalescerRtl {
        &self.uut
    }
}

fn settle(uut: &mut TlbCoalescerRtl) {
    // A combinational loop would be a design bug, never an input problem.
    assert!(
        simulate(uut, MAX_SETTLE_ITERATIONS),
        "tlb_coalescer RTL did not settle in {MAX_SETTLE_ITERATIONS} iterations"
    );
}

impl CycleModel for TlbCoalescerHdlSim {
    type In = CoalIn;
    type Out = CoalOut;

    fn step(&mut self, input: &CoalIn) -> CoalOut {
        let u = &mut self.uut;
        u.reset.next = input.reset != 0;
        u.merge_valid.next = input.merge_valid != 0;
        u.merge_vpn.next = input.merge_vpn.into();
        u.pte0.next = input.pte0.into();
        u.pte1.next = input.pte1.into();
        u.pte2.next = input.pte2.into();
        u.pte3.next = input.pte3.into();
        u.pte4.next = input.pte4.into();
        u.pte5.next = input.pte5.into();
        u.pte6.next = input.pte6.into();
        u.pte7.next = input.pte7.into();
        u.pte8.next = input.pte8.into();
        u.pte9.next = input.pte9.into();
        u.pte10.next = input.pte10.into();
        u.pte11.next = input.pte11.into();
        u.pte12.next = input.pte12.into();
        u.pte13.next = input.pte13.into();
        u.pte14.next = input.pte14.into();
        u.pte15.next = input.pte15.into();
        u.lookup_valid.next = input.lookup_valid != 0;
        u.lookup_vpn.next = input.lookup_vpn.into();
        u.entry_base_vpn.next = input.entry_base_vpn.into();
        u.entry_base_ppn.next = input.entry_base_ppn.into();
        u.entry_mask.next = input.entry_mask.into();
        u.clock.next = false.into();
        settle(u);
        let out = CoalOut {
            merge_done: u64::from(u.merge_done.val()),
            merge_base_vpn: u.merge_base_vpn.val().to_u64(),
            merge_base_ppn: u.merge_base_ppn.val().to_u64(),
            merge_mask: u.merge_mask.val().to_u64(),
            lookup_done: u64::from(u.lookup_done.val()),
            lookup_hit: u64::from(u.lookup_hit.val()),
            lookup_ppn: u.lookup_ppn.val().to_u64(),
        };
        u.clock.next = true.into();
        settle(u);
        out
    }
}
