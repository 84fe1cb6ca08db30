//! Remote Tracker (CLAP §4.3): exact outputs of every directed case on the behavioural twin,
//! then the same stimulus — and seeded random traffic — in lockstep through the twin,
//! rust-hdl's simulator and the emitted Verilog under Verilator, with waves written to
//! `out/waves/rt_<case>.vcd`.
//!
//! The Verilator model is compiled for `configs/hw.toml` (the paper's parameters), so runs
//! with other parameters (4-bit counters, eviction reports) use the twin and rust-hdl only.

use mcmvm_cosim::{run_lockstep, BoxedEngine, CosimBlock, EngineKind, Rt};
use mcmvm_models::blocks::remote_tracker::RemoteTracker;
use mcmvm_models::config::{HwConfig, RtConfig, RtReplacement};
use mcmvm_models::protocol::{CycleModel, RtIn, RtOut};
use mcmvm_testbenches::remote_tracker::{cases, directed, random, DEFAULT_SEED};
use std::path::PathBuf;

fn seed() -> u64 {
    let seed = std::env::var("MCMVM_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(DEFAULT_SEED);
    println!("remote_tracker random seed: {seed} (override with MCMVM_SEED)");
    seed
}

/// Paper parameters with 4 rows, 4-bit counters and eviction reports: small enough that
/// random traffic keeps the table full and the counters saturated.
fn small() -> HwConfig {
    HwConfig {
        remote_tracker: RtConfig {
            entries: 4,
            alloc_id_bits: 8,
            counter_bits: 4,
            report_evictions: true,
            replacement: RtReplacement::Ranks,
        },
        ..HwConfig::default()
    }
}

fn with_reports() -> HwConfig {
    let mut cfg = HwConfig::default();
    cfg.remote_tracker.report_evictions = true;
    cfg
}

fn case(cfg: &HwConfig, name: &str) -> Vec<RtIn> {
    cases(cfg)
        .into_iter()
        .find(|(n, _)| *n == name)
        .map(|(_, seq)| seq)
        .unwrap_or_else(|| panic!("no directed case {name}"))
}

fn twin_outputs(cfg: &HwConfig, inputs: &[RtIn]) -> Vec<RtOut> {
    let mut twin = RemoteTracker::new(&cfg.remote_tracker);
    inputs
        .iter()
        .map(|i| {
            let out = twin.step(i);
            twin.check_invariants().unwrap();
            out
        })
        .collect()
}

/// (cycle, hit, access, remote) of every drain response.
fn responses(out: &[RtOut]) -> Vec<(usize, bool, u64, u64)> {
    out.iter()
        .enumerate()
        .filter(|(_, o)| o.drain_done == 1)
        .map(|(c, o)| (c, o.drain_hit == 1, o.drain_access, o.drain_remote))
        .collect()
}

/// (cycle, alloc ID, access, remote) of every eviction report.
fn evictions(out: &[RtOut]) -> Vec<(usize, u64, u64, u64)> {
    out.iter()
        .enumerate()
        .filter(|(_, o)| o.evict_valid == 1)
        .map(|(c, o)| (c, o.evict_alloc_id, o.evict_access, o.evict_remote))
        .collect()
}

#[test]
fn a_walk_counts_for_drains_issued_from_the_next_cycle_on() {
    let out = twin_outputs(&HwConfig::default(), &case(&HwConfig::default(), "latency"));
    assert_eq!(out[1], RtOut::default(), "no response in the request cycle");
    assert_eq!(out[4], RtOut::default());
    let miss = |c| (c, false, 0, 0);
    assert_eq!(responses(&out), vec![miss(2), (3, true, 1, 1), miss(5)]);
}

#[test]
fn back_to_back_walks_are_all_counted() {
    let out = twin_outputs(
        &HwConfig::default(),
        &case(&HwConfig::default(), "back_to_back"),
    );
    assert_eq!(responses(&out), vec![(9, true, 5, 2), (10, true, 2, 2)]);
}

#[test]
fn drains_racing_walks_neither_lose_nor_double_count() {
    let out = twin_outputs(
        &HwConfig::default(),
        &case(&HwConfig::default(), "drain_vs_walk"),
    );
    let r = responses(&out);
    assert_eq!(
        r,
        vec![
            (3, true, 1, 1),
            (4, true, 1, 1),
            (5, true, 1, 0),
            (7, true, 1, 1),
            (9, false, 0, 0)
        ]
    );
    // Four walks (remote, remote, local, remote) went in; four came out.
    let (acc, rem) = r.iter().fold((0, 0), |(a, b), x| (a + x.2, b + x.3));
    assert_eq!((acc, rem), (4, 3));
}

#[test]
fn a_full_table_replaces_the_oldest_remote_update() {
    let cfg = with_reports();
    let seq = case(&cfg, "replacement");
    let out = twin_outputs(&cfg, &seq);
    let n = cfg.remote_tracker.entries;
    // reset, n allocations, n/2 remote refreshes of the even rows, n local hits, then the
    // walk of ID 200 in cycle `c` and of 201 in `c + 1`.
    let c = 1 + n + n.div_ceil(2) + n;
    assert_eq!(seq[c], RtIn::walk(200, false));
    // Odd rows were never refreshed remotely: 101 is the oldest, then 103. Local hits do
    // not count as remote updates.
    assert_eq!(
        evictions(&out),
        vec![(c + 1, 101, 2, 1), (c + 2, 103, 2, 1)]
    );
    let r = responses(&out);
    assert_eq!(r.len(), n + 2);
    for (i, &(_, hit, access, remote)) in r[..n].iter().enumerate() {
        let want = match i {
            1 | 3 => (false, 0, 0),
            _ if i % 2 == 0 => (true, 3, 2),
            _ => (true, 2, 1),
        };
        assert_eq!((hit, access, remote), want, "drain of ID {}", 100 + i);
    }
    assert_eq!(
        r[n..].iter().map(|x| (x.1, x.2, x.3)).collect::<Vec<_>>(),
        [(true, 1, 0), (true, 1, 1)]
    );
    // Without reports the same replacement happens silently.
    let quiet = twin_outputs(&HwConfig::default(), &seq);
    assert!(evictions(&quiet).is_empty());
    assert_eq!(responses(&quiet), r);
}

#[test]
fn a_drain_frees_the_row_a_same_cycle_walk_would_replace() {
    let cfg = with_reports();
    let out = twin_outputs(&cfg, &case(&cfg, "drain_of_victim"));
    let n = cfg.remote_tracker.entries;
    // Cycle n+1: walk(200) misses the full table while drain(100) clears rank entries-1;
    // the drain goes first, so 200 takes that row and nothing is evicted then. Walk 201
    // (cycle n+2) then replaces 101, the new oldest.
    assert_eq!(
        responses(&out),
        vec![
            (n + 2, true, 1, 1),
            (n + 5, true, 1, 1),
            (n + 6, false, 0, 0),
            (n + 7, true, 1, 0)
        ]
    );
    assert_eq!(evictions(&out), vec![(n + 3, 101, 1, 1)]);
}

#[test]
fn counters_saturate_at_counter_bits_and_count_exactly_below() {
    let narrow = small();
    let out = twin_outputs(&narrow, &case(&narrow, "saturation"));
    let r = responses(&out);
    assert_eq!(
        r.iter().map(|x| (x.2, x.3)).collect::<Vec<_>>(),
        [(15, 15), (1, 1)]
    );
    let wide = HwConfig::default();
    let out = twin_outputs(&wide, &case(&wide, "saturation"));
    assert_eq!(
        responses(&out)[0].2,
        4100,
        "32-bit counters count every walk"
    );
    assert_eq!(
        RemoteTracker::new(&wide.remote_tracker).counter_max(),
        u32::MAX
    );
}

#[test]
fn reset_cancels_in_flight_work_and_empties_the_table() {
    let out = twin_outputs(&HwConfig::default(), &case(&HwConfig::default(), "reset"));
    assert_eq!(out[3], RtOut::default(), "outputs idle during reset");
    assert_eq!(responses(&out), vec![(5, false, 0, 0), (6, false, 0, 0)]);
}

fn waves(name: &str) -> PathBuf {
    mcmvm_testbenches::waves(&format!("rt_{name}"))
}

fn all_engines() -> Vec<EngineKind> {
    EngineKind::ALL.to_vec()
}

/// Engine `kind` for `cfg`, as the cosim crate builds it.
fn engine(kind: EngineKind, cfg: &HwConfig) -> BoxedEngine<RtIn, RtOut> {
    Rt::engine(kind, cfg).unwrap_or_else(|e| panic!("{kind} engine: {e}"))
}

fn assert_lockstep(
    cfg: &HwConfig,
    engines: Vec<EngineKind>,
    cycles: u64,
    vcd: Option<PathBuf>,
    stimulus: impl Iterator<Item = RtIn>,
) {
    mcmvm_testbenches::assert_block_lockstep::<Rt>(cfg, &engines, cycles, vcd.as_deref(), stimulus);
}

#[test]
fn directed_cases_agree_on_all_three_engines() {
    let cfg = HwConfig::default();
    for (name, seq) in cases(&cfg) {
        println!("case {name}: {} cycles", seq.len());
        let n = seq.len() as u64;
        assert_lockstep(&cfg, all_engines(), n, Some(waves(name)), seq.into_iter());
    }
}

#[test]
fn directed_cases_agree_with_narrow_counters_and_reports() {
    let cfg = small();
    let seq = directed(&cfg);
    let engines = vec![EngineKind::Twin, EngineKind::RustHdl];
    assert_lockstep(
        &cfg,
        engines,
        seq.len() as u64,
        Some(waves("small_directed")),
        seq.into_iter(),
    );
}

#[test]
fn random_traffic_agrees_on_all_three_engines() {
    let cfg = HwConfig::default();
    assert_lockstep(
        &cfg,
        all_engines(),
        20_000,
        Some(waves("random")),
        random(&cfg, seed()),
    );
}

#[test]
fn random_traffic_agrees_on_a_small_saturating_table() {
    let cfg = small();
    let engines = vec![EngineKind::Twin, EngineKind::RustHdl];
    assert_lockstep(&cfg, engines, 20_000, None, random(&cfg, seed()));
}

#[test]
#[ignore = "long: 1 M cycles through all three engines"]
fn random_traffic_agrees_for_a_million_cycles() {
    let cfg = HwConfig::default();
    assert_lockstep(&cfg, all_engines(), 1_000_000, None, random(&cfg, seed()));
}

#[test]
fn a_twin_with_one_row_too_few_is_caught() {
    // Config drift: the model believes in 31 rows, the hardware has 32. The 32nd allocation
    // replaces a row in the model only; a later drain response shows it.
    let cfg = HwConfig::default();
    let mut wrong = cfg.remote_tracker.clone();
    wrong.entries -= 1;
    let engines: Vec<(String, BoxedEngine<RtIn, RtOut>)> = vec![
        ("model-31".to_string(), Box::new(RemoteTracker::new(&wrong))),
        ("rusthdl".to_string(), engine(EngineKind::RustHdl, &cfg)),
    ];
    let seq = case(&cfg, "replacement");
    // The first cycle at which the two twins' outputs differ is where the hardware must be
    // caught too.
    let right = twin_outputs(&cfg, &seq);
    let mut wrong_twin = RemoteTracker::new(&wrong);
    let first_diff = seq
        .iter()
        .zip(&right)
        .position(|(i, r)| wrong_twin.step(i) != *r)
        .expect("the wrong twin must differ somewhere");
    let report = run_lockstep(engines, seq.len() as u64, None, seq.into_iter()).unwrap();
    let m = report
        .mismatch
        .expect("the scoreboard must catch the wrong twin");
    assert_eq!(m.cycle, first_diff as u64);
    assert!(m.signal.starts_with("drain_"), "{}", m.signal);
}

/// Under `order`, with eviction reports (so every victim choice is at the ports): the
/// directed cases and random traffic on all three engines, 32 rows.
fn order_agrees_on_all_three_engines(order: RtReplacement, tag: &str) {
    let mut cfg = with_reports();
    cfg.remote_tracker.replacement = order;
    for (name, seq) in cases(&cfg) {
        let n = seq.len() as u64;
        let wave = Some(waves(&format!("{tag}_{name}")));
        assert_lockstep(&cfg, all_engines(), n, wave, seq.into_iter());
    }
    // 5,000 random cycles fill and replace the 32 rows many times over; rust-hdl's
    // simulator of the full table is what costs (the 1 M-cycle run is `#[ignore]`d).
    let stimulus = random(&cfg, seed());
    assert_lockstep(&cfg, all_engines(), 5_000, None, stimulus);
}

/// Under `order` on small tables, twin and rust-hdl, directed and random.
fn order_agrees_on_small_tables(order: RtReplacement, sizes: &[usize]) {
    for &entries in sizes {
        let mut cfg = small();
        cfg.remote_tracker.entries = entries;
        cfg.remote_tracker.replacement = order;
        let engines = vec![EngineKind::Twin, EngineKind::RustHdl];
        let seq = directed(&cfg);
        assert_lockstep(
            &cfg,
            engines.clone(),
            seq.len() as u64,
            None,
            seq.into_iter(),
        );
        assert_lockstep(&cfg, engines, 20_000, None, random(&cfg, seed()));
    }
}

#[test]
fn nru_agrees_on_all_three_engines() {
    order_agrees_on_all_three_engines(RtReplacement::Nru, "nru");
}

/// 4 rows (replacements most cycles) and the one-row table whose victim is row 0 with its
/// bit set.
#[test]
fn nru_agrees_on_small_tables() {
    order_agrees_on_small_tables(RtReplacement::Nru, &[4, 1]);
}

#[test]
fn tree_plru_agrees_on_all_three_engines() {
    order_agrees_on_all_three_engines(RtReplacement::TreePlru, "plru");
}

/// 4 rows (a full tree of 4), 5 (subtrees without rows skipped), 1 (the victim is always
/// row 0).
#[test]
fn tree_plru_agrees_on_small_tables() {
    order_agrees_on_small_tables(RtReplacement::TreePlru, &[4, 5, 1]);
}
