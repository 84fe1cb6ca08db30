//! The state invariants can fail: a register mutated in the emitted Verilog (one flip-flop
//! of the RT's ranks or the ATT's recency stuck at zero) is reported by name, while the
//! unmutated model runs the same stimulus without a report; the ATT's range-disjointness
//! rule counts only in a system run.
//!
//! The models come from the shared cache: Verilator's runtime is built once for all of
//! them, and a later `make test` finds them built. A mutant's entry is keyed by the hash of
//! its own (mutated) Verilog, so it is never served for the unmutated block.

use super::*;
use crate::verilator_build::Sources;
use mcmvm_models::config::AttRecency;
use mcmvm_models::protocol::{AttIn, AttOut, RtIn, RtOut};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Make the flip-flop module `module` (one register of the emitted block) load zero on
/// every edge: `q <= d & ~d` keeps every width as it is.
fn stuck_at_zero(verilog: &str, module: &str) -> String {
    let start = verilog
        .find(&format!("module {module}("))
        .unwrap_or_else(|| panic!("no module {module} in the emitted Verilog"));
    let end = start + verilog[start..].find("endmodule").expect("the module ends");
    let body = &verilog[start..end];
    assert!(
        body.contains("q <= d;"),
        "{module} is not a plain flip-flop:\n{body}"
    );
    format!(
        "{}{}{}",
        &verilog[..start],
        body.replace("q <= d;", "q <= d & ~d;"),
        &verilog[end..]
    )
}

/// A checked model of `src` from the shared cache; `in_system` as in [`VerilatorModel::checked`].
fn model_of<I: Ports, O: Ports>(
    block: &BlockPorts,
    src: &Sources,
    in_system: bool,
) -> VerilatorModel<I, O> {
    let cached = verilator_cache::model(src, &Tools::default(), &cache_root())
        .unwrap_or_else(|e| panic!("{e}"));
    let loaded = open(block, &cached).unwrap_or_else(|e| panic!("{e}"));
    VerilatorModel::from_loaded(loaded, Some(in_system))
}

/// The first cycle whose state `model` reports broken, with the invariant's name.
fn first_violation<I: Ports, O: Ports>(
    model: &mut VerilatorModel<I, O>,
    stimulus: impl Iterator<Item = I>,
) -> Option<(u64, String)> {
    for (cycle, input) in (0u64..).zip(stimulus) {
        model.step(&input);
        if let Some(name) = model.state_violation() {
            return Some((cycle, name));
        }
    }
    None
}

fn rt_walks(seed: u64, cycles: usize) -> impl Iterator<Item = RtIn> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut first = true;
    std::iter::from_fn(move || {
        if std::mem::take(&mut first) {
            return Some(RtIn::reset());
        }
        // More IDs than the 4 rows: every row gets allocated and replaced.
        let mut input = RtIn::walk(rng.gen_range(0..12), rng.gen_bool(0.5));
        if rng.gen_bool(0.1) {
            input = input.with_drain(rng.gen_range(0..12));
        }
        Some(input)
    })
    .take(cycles)
}

#[test]
fn a_stuck_rank_register_of_the_remote_tracker_breaks_the_permutation_invariant() {
    let mut cfg = HwConfig::default();
    // 4 rows: a small table verilates and compiles in a fraction of the default's time.
    cfg.remote_tracker.entries = 4;
    // The exact-rank order (the default, nru, keeps no ranks).
    cfg.remote_tracker.replacement = mcmvm_protocol::config::RtReplacement::Ranks;
    let block = BlockPorts::of::<RtIn, RtOut>(BlockKind::RemoteTracker);
    let good = Sources::generate(&block, &cfg, true).unwrap_or_else(|e| panic!("{e}"));
    let mut clean = model_of::<RtIn, RtOut>(&block, &good, false);
    assert_eq!(first_violation(&mut clean, rt_walks(7, 5_000)), None);

    let mut bad = good.clone();
    bad.verilog = stuck_at_zero(&good.verilog, "remote_tracker$rank$1");
    let mut mutant = model_of::<RtIn, RtOut>(&block, &bad, false);
    let (cycle, name) =
        first_violation(&mut mutant, rt_walks(7, 5_000)).expect("the stuck rank is caught");
    assert!(name.contains("ranks are a permutation"), "{name}");
    assert!(cycle < 100, "caught only at cycle {cycle}");
}

/// Objects 0..4 registered over disjoint ranges, then accesses to them in random order.
fn att_accesses(seed: u64, cycles: usize) -> impl Iterator<Item = AttIn> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut cycle = 0u64;
    std::iter::from_fn(move || {
        cycle += 1;
        let mut input = AttIn::default();
        if cycle <= 4 {
            let obj = cycle - 1;
            input.reg_valid = 1;
            input.reg_obj = obj;
            input.reg_start_vpn = obj * 100;
            input.reg_end_vpn = obj * 100 + 99;
        } else {
            input.acc_valid = 1;
            input.acc_vpn = rng.gen_range(0..4u64) * 100 + rng.gen_range(0..100);
        }
        Some(input)
    })
    .take(cycles)
}

#[test]
fn a_stuck_recency_register_of_the_access_time_tracker_breaks_the_total_order() {
    // An exact order (the pseudo-LRU tree has no order invariant to break).
    let mut cfg = HwConfig::default();
    cfg.access_time_tracker.recency = AttRecency::Ranks;
    // 8 objects (the stimulus registers 4): a small table compiles far faster than 32.
    cfg.access_time_tracker.objects = 8;
    let block = BlockPorts::of::<AttIn, AttOut>(BlockKind::AccessTimeTracker);
    let good = Sources::generate(&block, &cfg, true).unwrap_or_else(|e| panic!("{e}"));
    let mut clean = model_of::<AttIn, AttOut>(&block, &good, true);
    assert_eq!(first_violation(&mut clean, att_accesses(3, 2_000)), None);

    // Whichever form the RTL keeps recency in: the second slot's row of it.
    let register = ["access_time_tracker$newer$1", "access_time_tracker$rank$1"]
        .into_iter()
        .find(|m| good.verilog.contains(&format!("module {m}(")))
        .expect("the ATT keeps recency in an age matrix or in ranks");
    let mut bad = good.clone();
    bad.verilog = stuck_at_zero(&good.verilog, register);
    let mut mutant = model_of::<AttIn, AttOut>(&block, &bad, true);
    let (_, name) =
        first_violation(&mut mutant, att_accesses(3, 2_000)).expect("the stuck recency is caught");
    assert!(
        name.contains("recency") || name.contains("touched more recently"),
        "{name}"
    );
}

#[test]
fn overlapping_att_ranges_break_an_invariant_only_in_a_system_run() {
    // 8 objects (two are registered): a small table compiles far faster than 32.
    let mut cfg = HwConfig::default();
    cfg.access_time_tracker.objects = 8;
    let block = BlockPorts::of::<AttIn, AttOut>(BlockKind::AccessTimeTracker);
    let src = Sources::generate(&block, &cfg, true).unwrap_or_else(|e| panic!("{e}"));
    // Two registrations, then an idle cycle: the state a cycle shows is the one its
    // outputs come from, after the edges of the cycles before it.
    let overlapping = || {
        (0..2u64)
            .map(|obj| AttIn {
                reg_valid: 1,
                reg_obj: obj,
                reg_start_vpn: 10 + obj * 5,
                reg_end_vpn: 20 + obj * 5,
                ..AttIn::default()
            })
            .chain([AttIn::default()])
    };
    let mut random = model_of::<AttIn, AttOut>(&block, &src, false);
    assert_eq!(first_violation(&mut random, overlapping()), None);
    let mut system = model_of::<AttIn, AttOut>(&block, &src, true);
    let (cycle, name) =
        first_violation(&mut system, overlapping()).expect("a system run counts the rule");
    assert_eq!(
        cycle, 2,
        "the second registration (cycle 1) makes the ranges overlap"
    );
    assert!(name.contains("disjoint"), "{name}");
}
