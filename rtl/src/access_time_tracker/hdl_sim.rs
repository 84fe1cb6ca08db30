//! rust-hdl `simulate()` adapters: a [`CycleModel`] over each ATT RTL structure.

use super::AccessTimeTrackerRtl;
use mcmvm_protocol::config::AttConfig;
use mcmvm_protocol::protocol::{AttIn, AttOut, CycleModel};
use rust_hdl::prelude::*;

/// Most `simulate` iterations one clock phase may take before the design is declared
/// oscillating (a settled phase takes about five).
const MAX_SETTLE_ITERATIONS: usize = 100;

/// A [`CycleModel`] over one of the ATT RTL structures using rust-hdl's `simulate()`.
macro_rules! hdl_sim_adapter {
    ($(#[$doc:meta])* $sim:ident, $rtl:ty) => {
        $(#[$doc])*
        pub struct $sim {
            uut: Box<$rtl>,
        }

        impl $sim {
            /// The RTL for `cfg`, connected and settled with the clock low.
            ///
            /// # Panics
            /// On a configuration that `HwConfig::validate` rejects.
            pub fn new(cfg: &AttConfig) -> Self {
                let mut uut = Box::new(<$rtl>::new(cfg));
                uut.connect_all();
                uut.clock.next = Clock { clk: false };
                settle(&mut *uut);
                $sim { uut }
            }
        }

        impl CycleModel for $sim {
            type In = AttIn;
            type Out = AttOut;

            fn step(&mut self, input: &AttIn) -> AttOut {
                let u = &mut self.uut;
                u.reset.next = input.reset != 0;
                u.acc_valid.next = input.acc_valid != 0;
                u.acc_vpn.next = input.acc_vpn.into();
                u.reg_valid.next = input.reg_valid != 0;
                u.reg_obj.next = input.reg_obj.into();
                u.reg_start_vpn.next = input.reg_start_vpn.into();
                u.reg_end_vpn.next = input.reg_end_vpn.into();
                u.rm_valid.next = input.rm_valid != 0;
                u.rm_obj.next = input.rm_obj.into();
                u.cease_valid.next = input.cease_valid != 0;
                u.cease_obj.next = input.cease_obj.into();
                u.clock.next = Clock { clk: false };
                settle(&mut **u);
                let out = AttOut {
                    rec_valid: u64::from(u.rec_valid.val()),
                    rec_obj: u.rec_obj.val().to_u64(),
                    rec_vpn: u.rec_vpn.val().to_u64(),
                    rec_timer: u.rec_timer.val().to_u64(),
                    irq_valid: u64::from(u.irq_valid.val()),
                    irq_obj: u.irq_obj.val().to_u64(),
                    oldest_valid: u64::from(u.oldest_valid.val()),
                    oldest_obj: u.oldest_obj.val().to_u64(),
                };
                // The DFFs see the edge a couple of delta cycles after the top-level clock
                // changes; settle() runs until the new state has propagated.
                u.clock.next = Clock { clk: true };
                settle(&mut **u);
                out
            }
        }
    };
}

hdl_sim_adapter!(
    /// [`CycleModel`] over [`AccessTimeTrackerRtl`] using rust-hdl's `simulate()` directly.
    AccessTimeTrackerHdlSim,
    AccessTimeTrackerRtl
);

/// Run rust-hdl's delta cycles until nothing changes.
fn settle<B: Block>(uut: &mut B) {
    // Not user input: a design that does not settle is a bug in this file.
    assert!(
        simulate(uut, MAX_SETTLE_ITERATIONS),
        "access_time_tracker RTL did not settle in {MAX_SETTLE_ITERATIONS} iterations"
    );
}
