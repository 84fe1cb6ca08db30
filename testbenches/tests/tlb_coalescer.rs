//! TLB coalescing logic (CLAP §4.6): exact directed results on the behavioural twin, and the
//! same stimulus in lockstep through every engine.

use mcmvm_models::blocks::tlb_coalescer::TlbCoalescer;
use mcmvm_models::config::HwConfig;
use mcmvm_models::protocol::{CoalIn, CoalOut, CycleModel};
use mcmvm_rtl::tlb_coalescer::TlbCoalescerHdlSim;
use mcmvm_testbenches::tlb_coalescer::{directed, directed_cases, random, DirectedCase};

/// Default seed of the random runs; override with MCMVM_SEED.
const DEFAULT_SEED: u64 = 0xC0A1_E5CE;

fn seed() -> u64 {
    std::env::var("MCMVM_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(DEFAULT_SEED)
}

fn run_twin(cfg: &HwConfig, inputs: &[CoalIn]) -> Vec<CoalOut> {
    let mut twin = TlbCoalescer::new(&cfg.tlb_coalescer);
    inputs.iter().map(|i| twin.step(i)).collect()
}

fn case(cfg: &HwConfig, name: &str) -> DirectedCase {
    directed_cases(cfg)
        .into_iter()
        .find(|c| c.name == name)
        .unwrap_or_else(|| panic!("no directed case {name}"))
}

/// Outputs of a case; `out[k]` answers the operation in cycle `k - 1`.
fn outputs(name: &str) -> Vec<CoalOut> {
    let cfg = HwConfig::default();
    run_twin(&cfg, &case(&cfg, name).inputs)
}

fn merged(base_vpn: u64, base_ppn: u64, mask: u64) -> CoalOut {
    CoalOut {
        merge_done: 1,
        merge_base_vpn: base_vpn,
        merge_base_ppn: base_ppn,
        merge_mask: mask,
        ..Default::default()
    }
}

fn looked_up(before: CoalOut, ppn: Option<u64>) -> CoalOut {
    CoalOut {
        merge_done: 0,
        lookup_done: 1,
        lookup_hit: u64::from(ppn.is_some()),
        lookup_ppn: ppn.unwrap_or(0),
        ..before
    }
}

#[test]
fn merge_result_appears_exactly_one_cycle_later() {
    let out = outputs("full_contiguity");
    assert_eq!(out[1], CoalOut::default(), "nothing in the request cycle");
    assert_eq!(out[2], merged(0x1_0100, 0x500, 0xFFFF));
}

#[test]
fn full_contiguity_gives_a_full_mask() {
    assert_eq!(outputs("full_contiguity")[2].merge_mask, 0xFFFF);
}

#[test]
fn partial_contiguity_is_coalesced_with_holes() {
    // Slots 2, 3 and 10 are unmapped.
    assert_eq!(outputs("partial_contiguity")[2], merged(0x5_0030, 0x2_0040, 0xFBF3));
}

#[test]
fn permission_mismatch_drops_only_that_slot() {
    // Slot 5 executable, slot 6 read-only, slot 7 system.
    assert_eq!(outputs("permission_mismatch")[2], merged(0x20, 0x80, 0xFF1F));
}

#[test]
fn different_offset_drops_only_that_slot() {
    // Slot 9 is another reservation, slot 12 maps one page too far.
    assert_eq!(outputs("offset_mismatch")[2], merged(0x7_0F00, 0x1000, 0xEDFF));
}

#[test]
fn invalid_or_misaligned_requested_pte_gives_mask_zero() {
    let out = outputs("invalid_requested");
    assert_eq!(out[2], merged(0x90, 0, 0), "requested PTE invalid");
    assert_eq!(out[3], merged(0x90, 0, 0), "requested PFN not 64 KB aligned");
    assert_eq!(out[4], merged(0x90, 0x300, 0xFFBF), "misaligned slot 6 excluded");
}

#[test]
fn frag_alloc_id_and_pde_bits_are_ignored() {
    // Slot 1 (requested) carries FRAG, allocation ID and PDE-as-PTE; slot 14 is misaligned.
    assert_eq!(outputs("ignored_fields")[2], merged(0xABC0, 0x640, 0xBFFF));
}

#[test]
fn base_ppn_and_rebuilt_ppn_wrap_at_32_bits() {
    let out = outputs("ppn_wrap");
    let m = merged(0xFFFF_FFF0, 0xFFFF_FFFB, 0xFFFF);
    assert_eq!(out[2], m);
    assert_eq!(out[3], looked_up(m, Some(0xA)), "0xFFFF_FFFB + 15 wraps to 0xA");
    assert_eq!(out[4], looked_up(m, Some(0xFFFF_FFFF)));
}

#[test]
fn lookup_hits_and_misses_at_the_group_boundaries() {
    let out = outputs("lookup_boundaries");
    let got: Vec<(u64, u64, u64)> = out[2..10]
        .iter()
        .map(|o| (o.lookup_done, o.lookup_hit, o.lookup_ppn))
        .collect();
    assert_eq!(
        got,
        vec![
            (1, 1, 0x4000), // slot 0
            (1, 1, 0x400F), // slot 15
            (1, 0, 0),      // VPN below the group
            (1, 0, 0),      // VPN above the group
            (1, 0, 0),      // slot 1 not in the mask
            (1, 1, 0x4008), // entry base VPN low bits ignored
            (1, 0, 0),      // tag differs in bit 16
            (1, 0, 0),      // empty entry
        ]
    );
}

#[test]
fn units_work_in_parallel_and_data_registers_hold_while_idle() {
    let out = outputs("back_to_back");
    let first = merged(0x1_0100, 0x500, 0xFFFF);
    assert_eq!(out[2], looked_up(first, Some(0x505)), "merge and lookup together");
    let second = CoalOut {
        lookup_ppn: 0x505,
        ..merged(0x5_0030, 0x2_0040, 0xFBF3)
    };
    assert_eq!(out[3], second);
    let idle = CoalOut {
        merge_done: 0,
        ..second
    };
    assert_eq!(out[4], idle);
    assert_eq!(out[5], idle);
    assert_eq!(out[6], looked_up(idle, None));
}

#[test]
fn reset_clears_outputs_and_blocks_the_units() {
    let out = outputs("reset_blocks_updates");
    assert_eq!(out[2], merged(0x1_0100, 0x500, 0xFFFF));
    assert_eq!(out[3], CoalOut::default());
}

/// Twin and rust-hdl simulation in lockstep; returns the cycles run.
fn lockstep_model_rusthdl(cfg: &HwConfig, stimulus: impl Iterator<Item = CoalIn>) -> u64 {
    let mut twin = TlbCoalescer::new(&cfg.tlb_coalescer);
    let mut rtl = TlbCoalescerHdlSim::new(&cfg.tlb_coalescer);
    let mut cycles = 0;
    for (cycle, input) in stimulus.enumerate() {
        let (a, b) = (twin.step(&input), rtl.step(&input));
        assert_eq!(a, b, "cycle {cycle}: model vs rusthdl on {input:x?}");
        cycles += 1;
    }
    cycles
}

#[test]
fn directed_stimulus_agrees_on_every_engine() {
    let cfg = HwConfig::default();
    let cycles = lockstep_model_rusthdl(&cfg, directed(&cfg).into_iter());
    assert!(cycles > 30);
}

#[test]
fn directed_stimulus_agrees_for_other_page_sizes() {
    for frames_log2 in [0, 2, 5, 9] {
        let mut cfg = HwConfig::default();
        cfg.tlb_coalescer.page_frames_log2 = frames_log2;
        let stimulus = directed(&cfg).into_iter().chain(random(&cfg, seed()).take(2_000));
        lockstep_model_rusthdl(&cfg, stimulus);
    }
}

#[test]
fn random_stimulus_agrees_on_every_engine() {
    let cfg = HwConfig::default();
    let seed = seed();
    println!("tlb_coalescer random seed: {seed} (set MCMVM_SEED to change)");
    lockstep_model_rusthdl(&cfg, random(&cfg, seed).take(20_000));
}

#[test]
#[ignore = "slow: one million cycles"]
fn random_stimulus_agrees_for_a_million_cycles() {
    let cfg = HwConfig::default();
    let seed = seed();
    println!("tlb_coalescer random seed: {seed}");
    lockstep_model_rusthdl(&cfg, random(&cfg, seed).take(1_000_000));
}

#[test]
fn random_stimulus_exercises_hits_misses_empty_and_full_entries() {
    let cfg = HwConfig::default();
    let inputs: Vec<CoalIn> = random(&cfg, seed()).take(20_000).collect();
    let out = run_twin(&cfg, &inputs);
    let count = |f: &dyn Fn(&CoalOut) -> bool| out.iter().filter(|o| f(o)).count();
    assert!(count(&|o| o.lookup_hit == 1) > 1_000);
    assert!(count(&|o| o.lookup_done == 1 && o.lookup_hit == 0) > 1_000);
    assert!(count(&|o| o.merge_done == 1 && o.merge_mask == 0xFFFF) > 500);
    assert!(count(&|o| o.merge_done == 1 && o.merge_mask == 0) > 100);
    assert!(count(&|o| o.merge_done == 1 && o.merge_mask != 0 && o.merge_mask != 0xFFFF) > 500);
    assert!(inputs.iter().filter(|i| i.reset == 1).count() > 10);
}
