//! The TLB coalescer monitor (written from `rtl/src/tlb_coalescer.md`, with its own PTE
//! decode) against the behavioural twin: directed cases, seeded random stimulus, default
//! and two other page sizes, and port-level mutants of the twin.

use crate::common;

use common::{assert_agrees, assert_caught, seed, Corruption, Mutant, RANDOM_CYCLES, SHORT_CYCLES};
use mcmvm_models::blocks::tlb_coalescer::TlbCoalescer;
use mcmvm_protocol::config::{CoalescerConfig, HwConfig};
use mcmvm_protocol::protocol::{CoalIn, CoalOut};
use mcmvm_refcheck::CoalescerMonitor;
use mcmvm_testbenches::tlb_coalescer as tb;

/// The seed of the testbench's own random run (`testbenches/tests/tlb_coalescer.rs`).
const DEFAULT_SEED: u64 = 0xC0A1_E5CE;

fn config(page_frames_log2: u32) -> HwConfig {
    HwConfig {
        tlb_coalescer: CoalescerConfig {
            page_frames_log2,
            ..CoalescerConfig::default()
        },
        ..HwConfig::default()
    }
}

fn stimulus(cfg: &HwConfig, seed: u64, cycles: usize) -> Vec<CoalIn> {
    let mut s = tb::directed(cfg);
    s.extend(tb::random(cfg, seed).take(cycles));
    s
}

/// Coverage: full, partial and empty merge masks; lookup hits and misses.
fn coverage(outs: &[CoalOut]) -> [usize; 5] {
    let merges = outs.iter().filter(|o| o.merge_done == 1);
    let full = merges.clone().filter(|o| o.merge_mask == 0xFFFF).count();
    let empty = merges.clone().filter(|o| o.merge_mask == 0).count();
    let partial = merges.count() - full - empty;
    let hits = outs.iter().filter(|o| o.lookup_hit == 1).count();
    let misses = outs
        .iter()
        .filter(|o| o.lookup_done == 1 && o.lookup_hit == 0)
        .count();
    println!(
        "  merges full {full} partial {partial} empty {empty}; lookups hit {hits} miss {misses}"
    );
    [full, partial, empty, hits, misses]
}

fn check(cfg: &HwConfig, what: &str, seed: u64, cycles: usize) {
    let c = &cfg.tlb_coalescer;
    for case in tb::directed_cases(cfg) {
        let mut twin = TlbCoalescer::new(c);
        let what = format!("{what} directed {}", case.name);
        assert_agrees(
            &what,
            &mut CoalescerMonitor::new(c),
            &mut twin,
            &case.inputs,
        );
    }
    let s = stimulus(cfg, seed, cycles);
    let mut twin = TlbCoalescer::new(c);
    let outs = assert_agrees(what, &mut CoalescerMonitor::new(c), &mut twin, &s);
    let cov = coverage(&outs);
    assert!(
        cov.iter().all(|&n| n > 0),
        "every outcome must occur: {cov:?}"
    );
}

#[test]
fn twin_agrees_with_the_readme_default_config() {
    let seed = seed("coalescer default", DEFAULT_SEED);
    check(
        &HwConfig::default(),
        "coalescer default",
        seed,
        RANDOM_CYCLES,
    );
}

#[test]
fn twin_agrees_with_the_readme_4k_and_2m_pages() {
    // 4 KB pages: the PPN is the whole 36-bit PFN, so "fits the 32-bit ports" matters.
    let seed = seed("coalescer page_frames_log2=0/9", DEFAULT_SEED ^ 0x09);
    check(
        &config(0),
        "coalescer page_frames_log2=0",
        seed,
        SHORT_CYCLES,
    );
    check(
        &config(9),
        "coalescer page_frames_log2=9",
        seed,
        SHORT_CYCLES,
    );
}

#[test]
fn twin_agrees_with_the_readme_combinational_unit() {
    let seed = seed("coalescer combinational", DEFAULT_SEED ^ 0xC0);
    for frames_log2 in [4, 0] {
        let mut cfg = config(frames_log2);
        cfg.tlb_coalescer.output_registers = false;
        let what = format!("coalescer combinational page_frames_log2={frames_log2}");
        check(&cfg, &what, seed, SHORT_CYCLES);
    }
}

/// Which cycle a violation is reported at, naming `signal`, when the monitor of `monitored`
/// watches an engine built for `served`.
fn first_violation(monitored: &HwConfig, served: &HwConfig, s: &[CoalIn]) -> (u64, &'static str) {
    use mcmvm_protocol::protocol::CycleModel;
    use mcmvm_refcheck::Monitor;
    let mut monitor = CoalescerMonitor::new(&monitored.tlb_coalescer);
    let mut twin = TlbCoalescer::new(&served.tlb_coalescer);
    for (cycle, input) in s.iter().enumerate() {
        let out = twin.step(input);
        if let Err(v) = monitor.observe(cycle as u64, input, &out) {
            return (v.cycle, v.signal);
        }
    }
    panic!("the wrong variant was not caught");
}

#[test]
fn each_variant_is_caught_serving_for_the_other() {
    let registered = HwConfig::default();
    let mut combinational = HwConfig::default();
    combinational.tlb_coalescer.output_registers = false;
    // Every directed case is a reset then its first request in cycle 1.
    let s = tb::directed(&registered);
    // The registered twin answers cycle 1's merge in cycle 2, the README's combinational
    // unit in cycle 1 itself.
    assert_eq!(
        first_violation(&combinational, &registered, &s),
        (1, "merge_done")
    );
    assert_eq!(
        first_violation(&registered, &combinational, &s),
        (1, "merge_done")
    );
}

const EXECUTABLE: u64 = 1 << 4;

/// The executable bit (PTE bit 4) is left out of the permission compare: the adapter gives
/// every slot the requested slot's bit before the twin sees the line.
struct IgnoreExecutable;

impl Corruption<CoalIn, CoalOut> for IgnoreExecutable {
    fn input(&mut self, input: &CoalIn) -> CoalIn {
        let mut fed = *input;
        let mut line = input.ptes();
        let bit = line[(input.merge_vpn & 15) as usize] & EXECUTABLE;
        for p in &mut line {
            *p = (*p & !EXECUTABLE) | bit;
        }
        fed.set_ptes(&line);
        fed
    }
}

/// Misaligned frames are not excluded: the adapter clears the PFN's low
/// `page_frames_log2` bits (bits 12..16 with the default 64 KB pages).
struct MisalignedAccepted;

impl Corruption<CoalIn, CoalOut> for MisalignedAccepted {
    fn input(&mut self, input: &CoalIn) -> CoalIn {
        let mut fed = *input;
        let line = input.ptes().map(|p| p & !(0xF << 12));
        fed.set_ptes(&line);
        fed
    }
}

/// The lookup rebuilds the PPN by concatenation instead of addition.
#[derive(Default)]
struct LookupConcatenates {
    last: CoalIn,
}

impl Corruption<CoalIn, CoalOut> for LookupConcatenates {
    fn output(&mut self, input: &CoalIn, mut out: CoalOut) -> CoalOut {
        if out.lookup_done == 1 && out.lookup_hit == 1 {
            out.lookup_ppn = (self.last.entry_base_ppn & !15) | (self.last.lookup_vpn & 15);
        }
        self.last = *input;
        out
    }
}

/// The merge data registers read 0 in idle cycles instead of holding.
struct NoHold;

impl Corruption<CoalIn, CoalOut> for NoHold {
    fn output(&mut self, _: &CoalIn, mut out: CoalOut) -> CoalOut {
        if out.merge_done == 0 {
            out.merge_base_vpn = 0;
            out.merge_base_ppn = 0;
            out.merge_mask = 0;
        }
        out
    }
}

/// The combinational unit with its data outputs held in idle cycles (as the registered
/// variant's registers do).
#[derive(Default)]
struct CombinationalHolds {
    held: CoalOut,
}

impl Corruption<CoalIn, CoalOut> for CombinationalHolds {
    fn output(&mut self, input: &CoalIn, mut out: CoalOut) -> CoalOut {
        if input.reset == 0 && out.merge_done == 0 {
            out.merge_base_vpn = self.held.merge_base_vpn;
            out.merge_base_ppn = self.held.merge_base_ppn;
            out.merge_mask = self.held.merge_mask;
        }
        self.held = out;
        out
    }
}

#[test]
fn a_combinational_unit_that_holds_is_caught() {
    let mut cfg = HwConfig::default();
    cfg.tlb_coalescer.output_registers = false;
    let c = &cfg.tlb_coalescer;
    let s = stimulus(
        &cfg,
        seed("coalescer comb mutants", DEFAULT_SEED),
        SHORT_CYCLES,
    );
    assert_caught(
        "combinational merge outputs hold",
        TlbCoalescer::new(c),
        Mutant {
            inner: TlbCoalescer::new(c),
            corruption: CombinationalHolds::default(),
        },
        &mut CoalescerMonitor::new(c),
        &s,
        &["merge_base_vpn", "merge_base_ppn", "merge_mask"],
    );
}

#[test]
fn mutants_are_caught() {
    let cfg = HwConfig::default();
    let c = &cfg.tlb_coalescer;
    let seed = seed("coalescer mutants", DEFAULT_SEED);
    let s = stimulus(&cfg, seed, SHORT_CYCLES);
    let twin = || TlbCoalescer::new(c);
    let mon = || CoalescerMonitor::new(c);
    let merge_data = &["merge_base_ppn", "merge_mask"];
    assert_caught(
        "executable bit ignored",
        twin(),
        Mutant {
            inner: twin(),
            corruption: IgnoreExecutable,
        },
        &mut mon(),
        &s,
        &["merge_mask"],
    );
    assert_caught(
        "misaligned frame accepted",
        twin(),
        Mutant {
            inner: twin(),
            corruption: MisalignedAccepted,
        },
        &mut mon(),
        &s,
        merge_data,
    );
    assert_caught(
        "lookup PPN by concatenation",
        twin(),
        Mutant {
            inner: twin(),
            corruption: LookupConcatenates::default(),
        },
        &mut mon(),
        &s,
        &["lookup_ppn"],
    );
    assert_caught(
        "merge data registers do not hold",
        twin(),
        Mutant {
            inner: twin(),
            corruption: NoHold,
        },
        &mut mon(),
        &s,
        &["merge_base_vpn", "merge_base_ppn", "merge_mask"],
    );
}
