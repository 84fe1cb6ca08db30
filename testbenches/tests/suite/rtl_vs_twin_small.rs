//! The RustHDL modules under rust-hdl's simulator against the behavioural twins, on small
//! non-default configurations (the three-engine lockstep tests run the defaults). These
//! live here, not in `rtl/`, because the RTL crate does not depend on the models.

use mcmvm_models::blocks::access_time_tracker::AccessTimeTracker;
use mcmvm_models::blocks::remote_tracker::RemoteTracker;
use mcmvm_models::blocks::tlb_coalescer::TlbCoalescer;
use mcmvm_models::config::{AttConfig, CoalescerConfig, RtConfig, RtReplacement};
use mcmvm_models::protocol::{AttIn, CoalIn, CycleModel, RtIn};
use mcmvm_rtl::access_time_tracker::AccessTimeTrackerHdlSim;
use mcmvm_rtl::remote_tracker::RemoteTrackerHdlSim;
use mcmvm_rtl::tlb_coalescer::TlbCoalescerHdlSim;

const SLOTS: usize = 16;
const PTE_VALID: u64 = 1;

fn small_rt() -> RtConfig {
    RtConfig {
        entries: 4,
        alloc_id_bits: 8,
        counter_bits: 4,
        report_evictions: true,
        replacement: RtReplacement::Ranks,
    }
}

fn small_att() -> AttConfig {
    AttConfig {
        objects: 4,
        timer_bits: 4,
        profiling_threshold: 3,
        ..AttConfig::default()
    }
}

#[test]
fn hdl_sim_matches_twin_on_a_short_random_run() {
    let cfg = small_rt();
    let mut twin = RemoteTracker::new(&cfg);
    let mut hdl = RemoteTrackerHdlSim::new(&cfg);
    for (cycle, input) in stimulus(3000, 6).enumerate() {
        let want = twin.step(&input);
        let got = hdl.step(&input);
        assert_eq!(got, want, "cycle {cycle}, input {input:?}");
    }
}

/// Random inputs over a few IDs (xorshift; no dependency on the testbench crate).
fn stimulus(cycles: u64, ids: u64) -> impl Iterator<Item = RtIn> {
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    (0..cycles).map(move |cycle| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        if cycle == 0 || x.is_multiple_of(500) {
            return RtIn::reset();
        }
        RtIn {
            walk_valid: x & 1,
            walk_alloc_id: (x >> 8) % ids,
            walk_remote: (x >> 16) & 1,
            drain_valid: u64::from((x >> 20).is_multiple_of(5)),
            drain_alloc_id: (x >> 24) % ids,
            ..RtIn::default()
        }
    })
}

#[test]
fn rust_hdl_simulation_matches_the_twin_on_seeded_traffic() {
    for cfg in [small_att(), AttConfig::default()] {
        let mut twin = AccessTimeTracker::new(&cfg);
        let mut rtl = AccessTimeTrackerHdlSim::new(&cfg);
        // A small xorshift keeps this crate free of a rand dependency; seed printed.
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        println!("seed {x:#x}");
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for cycle in 0..3000 {
            let r = next();
            let slot = (r >> 8) % 6;
            let input = AttIn {
                reset: u64::from(cycle == 0 || r % 997 == 0),
                acc_valid: u64::from(r % 4 != 0),
                acc_vpn: (r >> 20) % 64,
                reg_valid: u64::from(r % 17 == 0),
                reg_obj: slot,
                reg_start_vpn: (r >> 32) % 48,
                reg_end_vpn: (r >> 40) % 64,
                rm_valid: u64::from(r % 53 == 0),
                rm_obj: (r >> 48) % 5,
                cease_valid: u64::from(r % 41 == 0),
                cease_obj: (r >> 52) % 5,
            };
            let want = twin.step(&input);
            let got = rtl.step(&input);
            assert_eq!(got, want, "cycle {cycle}, input {input:?}");
        }
    }
}

/// A line mapping PPN `first + i` in slot `i` with readable+writeable permissions.
fn contiguous_line(first: u64) -> [u64; SLOTS] {
    core::array::from_fn(|i| PTE_VALID | 0x60 | (((first + i as u64) & 0xFFFF_FFFF) << 16))
}

#[test]
fn rust_hdl_simulation_matches_the_twin_cycle_by_cycle() {
    for output_registers in [true, false] {
        let cfg = CoalescerConfig {
            output_registers,
            ..CoalescerConfig::default()
        };
        coalescer_matches_the_twin(&cfg);
    }
}

fn coalescer_matches_the_twin(cfg: &CoalescerConfig) {
    let mut twin = TlbCoalescer::new(cfg);
    let mut sim = TlbCoalescerHdlSim::new(cfg);
    let mut line = contiguous_line(0xFFFF_FFFB); // base PPN wraps
    line[4] = 0;
    line[9] |= 1 << 4;
    let mut stimulus = vec![CoalIn {
        reset: 1,
        ..Default::default()
    }];
    let mut merge = CoalIn {
        merge_valid: 1,
        merge_vpn: 0x1237,
        ..Default::default()
    };
    merge.set_ptes(&line);
    stimulus.push(merge);
    for vpn in [0x1230u64, 0x1234, 0x1239, 0x123F, 0x1240, 0x122F] {
        stimulus.push(CoalIn {
            lookup_valid: 1,
            lookup_vpn: vpn,
            entry_base_vpn: 0x1230,
            entry_base_ppn: 0xFFFF_FFFB,
            entry_mask: 0xFDEF,
            ..Default::default()
        });
    }
    stimulus.push(CoalIn {
        merge_valid: 1,
        merge_vpn: 0x1234,
        ..merge
    });
    stimulus.push(CoalIn {
        reset: 1,
        merge_valid: 1,
        ..merge
    });
    stimulus.push(CoalIn::default());
    for (cycle, input) in stimulus.iter().enumerate() {
        let (want, got) = (twin.step(input), sim.step(input));
        assert_eq!(
            want, got,
            "cycle {cycle}, output_registers = {}",
            cfg.output_registers
        );
        if !cfg.output_registers && input.merge_valid == 1 && input.reset == 0 {
            // The same-cycle answer, not a stale register.
            assert_eq!(got.merge_done, 1, "cycle {cycle}");
        }
    }
}
