//! TLB coalescing logic (CLAP §4.6): exact directed results on the behavioural twin, and the
//! same stimulus in lockstep through every engine.

use mcmvm_cosim::{lockstep, run_lockstep, Coalescer, CosimBlock, EngineKind, LockstepOptions};
use mcmvm_models::blocks::tlb_coalescer::TlbCoalescer;
use mcmvm_models::config::HwConfig;
use mcmvm_models::protocol::{CoalIn, CoalOut, CycleModel};
use mcmvm_testbenches::tlb_coalescer::{directed, directed_cases, random, DirectedCase};
use std::path::PathBuf;

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

/// `before` with a lookup answered (`None`: a miss).
fn looked_up(before: CoalOut, ppn: Option<u64>) -> CoalOut {
    CoalOut {
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
    assert_eq!(
        outputs("partial_contiguity")[2],
        merged(0x5_0030, 0x2_0040, 0xFBF3)
    );
}

#[test]
fn permission_mismatch_drops_only_that_slot() {
    // Slot 5 executable, slot 6 read-only, slot 7 system.
    assert_eq!(
        outputs("permission_mismatch")[2],
        merged(0x20, 0x80, 0xFF1F)
    );
}

#[test]
fn different_offset_drops_only_that_slot() {
    // Slot 9 is another reservation, slot 12 maps one page too far.
    assert_eq!(
        outputs("offset_mismatch")[2],
        merged(0x7_0F00, 0x1000, 0xEDFF)
    );
}

#[test]
fn a_lone_slot_and_a_partial_run_give_their_own_masks() {
    let out = outputs("mask_shapes");
    // Slot 6 alone keeps its offset (PPN 0x4446 - 6); slots 4..=11 form one run.
    assert_eq!(out[2], merged(0x3_0010, 0x4440, 0x0040));
    assert_eq!(out[3], merged(0x3_0020, 0xA00, 0x0FF0));
}

#[test]
fn invalid_or_misaligned_requested_pte_gives_mask_zero() {
    let out = outputs("invalid_requested");
    assert_eq!(out[2], merged(0x90, 0, 0), "requested PTE invalid");
    assert_eq!(
        out[3],
        merged(0x90, 0, 0),
        "requested PFN not 64 KB aligned"
    );
    assert_eq!(
        out[4],
        merged(0x90, 0x300, 0xFFBF),
        "misaligned slot 6 excluded"
    );
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
    let m = CoalOut { merge_done: 0, ..m };
    assert_eq!(
        out[3],
        looked_up(m, Some(0xA)),
        "0xFFFF_FFFB + 15 wraps to 0xA"
    );
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
    assert_eq!(
        out[2],
        looked_up(first, Some(0x505)),
        "merge and lookup together"
    );
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

fn waves_dir() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../out/waves"))
}

/// Run `stimulus` through `engines` in lockstep, waves to `out/waves/tlb_coalescer_<name>.vcd`;
/// fails on the first mismatch. Returns the cycles run.
fn lockstep_on(cfg: &HwConfig, engines: &[EngineKind], name: &str, stimulus: Vec<CoalIn>) -> u64 {
    let cycles = stimulus.len() as u64;
    let vcd = waves_dir().join(format!("tlb_coalescer_{name}.vcd"));
    let opts = LockstepOptions {
        engines: engines.to_vec(),
        cycles,
        vcd: Some(vcd.clone()),
    };
    let report = lockstep::<Coalescer>(cfg, &opts, stimulus.into_iter())
        .unwrap_or_else(|e| panic!("lockstep {name}: {e}"));
    if let Some(m) = &report.mismatch {
        panic!("{name}: {m} (waves: {})", vcd.display());
    }
    assert_eq!(report.cycles, cycles, "{name}: every cycle ran");
    assert!(vcd.exists(), "{name}: wave file written");
    for (engine, rate) in report.engine_rates() {
        println!("{name}: {engine}: {rate:.0} cycles/s");
    }
    report.cycles
}

#[test]
fn every_directed_case_agrees_on_all_three_engines() {
    let cfg = HwConfig::default();
    for case in directed_cases(&cfg) {
        lockstep_on(&cfg, &EngineKind::ALL, case.name, case.inputs);
    }
    let all = directed(&cfg);
    assert!(all.len() > 30);
    lockstep_on(&cfg, &EngineKind::ALL, "directed", all);
}

#[test]
fn other_page_sizes_agree_between_model_and_rusthdl() {
    // The Verilator models are compiled for configs/hw.toml only.
    for frames_log2 in [0, 2, 5, 9] {
        let mut cfg = HwConfig::default();
        cfg.tlb_coalescer.page_frames_log2 = frames_log2;
        let mut stimulus = directed(&cfg);
        stimulus.extend(random(&cfg, seed()).take(2_000));
        let name = format!("page_frames_log2_{frames_log2}");
        lockstep_on(
            &cfg,
            &[EngineKind::Twin, EngineKind::RustHdl],
            &name,
            stimulus,
        );
    }
}

/// The default parameters with the combinational unit (`output_registers = false`).
fn combinational() -> HwConfig {
    let mut cfg = HwConfig::default();
    cfg.tlb_coalescer.output_registers = false;
    cfg
}

#[test]
fn without_output_registers_results_appear_in_the_request_cycle_and_nothing_holds() {
    let cfg = combinational();
    let out = run_twin(&cfg, &case(&cfg, "full_contiguity").inputs);
    // Cycle 0 is the reset, cycle 1 the merge, cycle 2 idle.
    assert_eq!(out[0], CoalOut::default(), "reset");
    assert_eq!(
        out[1],
        merged(0x1_0100, 0x500, 0xFFFF),
        "the request's cycle"
    );
    assert_eq!(out[2], CoalOut::default(), "idle: no hold");
    let out = run_twin(&cfg, &case(&cfg, "back_to_back").inputs);
    let registered = outputs("back_to_back");
    // Each answer one cycle earlier than the registered variant's, except that idle
    // cycles read 0 where the registered data outputs hold.
    for (k, o) in out.iter().enumerate().take(out.len() - 1) {
        let later = registered[k + 1];
        let want = CoalOut {
            merge_base_vpn: later.merge_base_vpn * later.merge_done,
            merge_base_ppn: later.merge_base_ppn * later.merge_done,
            merge_mask: later.merge_mask * later.merge_done,
            lookup_ppn: later.lookup_ppn * later.lookup_done,
            ..later
        };
        assert_eq!(*o, want, "cycle {k}");
    }
    let out = run_twin(&cfg, &case(&cfg, "reset_blocks_updates").inputs);
    assert_eq!(out[1], merged(0x1_0100, 0x500, 0xFFFF));
    assert_eq!(
        out[2],
        CoalOut::default(),
        "reset with requests: 0 in its own cycle"
    );
}

#[test]
fn without_output_registers_directed_and_random_stimulus_agree_on_all_three_engines() {
    let cfg = combinational();
    for case in directed_cases(&cfg) {
        let name = format!("comb_{}", case.name);
        lockstep_on(&cfg, &EngineKind::ALL, &name, case.inputs);
    }
    let seed = seed();
    println!("tlb_coalescer combinational random seed: {seed} (set MCMVM_SEED to change)");
    let mut stimulus = directed(&cfg);
    stimulus.extend(random(&cfg, seed).take(20_000));
    lockstep_on(&cfg, &EngineKind::ALL, "comb_random", stimulus);
}

#[test]
fn random_stimulus_agrees_on_all_three_engines() {
    let cfg = HwConfig::default();
    let seed = seed();
    println!("tlb_coalescer random seed: {seed} (set MCMVM_SEED to change)");
    let stimulus = random(&cfg, seed).take(20_000).collect();
    lockstep_on(&cfg, &EngineKind::ALL, "random", stimulus);
}

#[test]
#[ignore = "slow: one million cycles"]
fn random_stimulus_agrees_for_a_million_cycles() {
    let cfg = HwConfig::default();
    let seed = seed();
    println!("tlb_coalescer random seed: {seed} (set MCMVM_SEED to change)");
    // No wave file here (it would be about 1 GB); the seed reproduces any failure.
    let stimulus: Vec<CoalIn> = random(&cfg, seed).take(1_000_000).collect();
    let opts = LockstepOptions {
        engines: EngineKind::ALL.to_vec(),
        cycles: stimulus.len() as u64,
        vcd: None,
    };
    let report = lockstep::<Coalescer>(&cfg, &opts, stimulus.into_iter()).expect("lockstep runs");
    assert_eq!(report.mismatch, None, "seed {seed}");
    assert_eq!(report.cycles, 1_000_000);
}

/// The twin with the PPN rebuilt by concatenation (base PPN's bits 31..4 ‖ slot) instead of
/// addition: right only for reservations aligned to sixteen pages.
struct ConcatenatingTwin {
    twin: TlbCoalescer,
    previous: CoalIn,
}

impl CycleModel for ConcatenatingTwin {
    type In = CoalIn;
    type Out = CoalOut;
    fn step(&mut self, input: &CoalIn) -> CoalOut {
        let mut out = self.twin.step(input);
        if out.lookup_hit == 1 {
            let p = &self.previous;
            out.lookup_ppn = (p.entry_base_ppn & !0xF) | (p.lookup_vpn & 0xF);
        }
        self.previous = *input;
        out
    }
}

#[test]
fn a_twin_that_concatenates_the_ppn_is_caught() {
    let cfg = HwConfig::default();
    let wrong = ConcatenatingTwin {
        twin: TlbCoalescer::new(&cfg.tlb_coalescer),
        previous: CoalIn::default(),
    };
    let engines: Vec<(String, Box<dyn CycleModel<In = CoalIn, Out = CoalOut>>)> = vec![
        (
            "rusthdl".into(),
            Coalescer::engine(EngineKind::RustHdl, &cfg).expect("rusthdl"),
        ),
        ("concatenating".into(), Box::new(wrong)),
    ];
    let inputs = case(&cfg, "ppn_wrap").inputs;
    let report = run_lockstep(engines, inputs.len() as u64, None, inputs.into_iter())
        .expect("lockstep runs");
    let m = report.mismatch.expect("the wrong twin must be caught");
    // Cycle 3 answers the lookup of VPN 0xFFFF_FFFF in an entry based at PPN 0xFFFF_FFFB.
    assert_eq!((m.cycle, m.signal), (3, "lookup_ppn"));
    assert_eq!(
        m.values,
        vec![
            ("rusthdl".to_string(), 0xA),
            ("concatenating".to_string(), 0xFFFF_FFFF)
        ]
    );
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
