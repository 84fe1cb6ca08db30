//! Shared harness of the refcheck tests: run a monitor beside an engine, and wrap an engine
//! in a port-level mutant to show the monitor catches it.

#![allow(dead_code)] // each test file uses its own subset

use mcmvm_protocol::protocol::{CycleModel, Ports};
use mcmvm_refcheck::{Monitor, Violation};

/// Cycles of random stimulus behind each default-config run (the brief asks >= 100,000).
pub const RANDOM_CYCLES: usize = 200_000;
/// Cycles of random stimulus behind each non-default-config and mutant run.
pub const SHORT_CYCLES: usize = 50_000;
/// Cycles between the first divergence of a mutant from the twin and the monitor's report.
/// Zero: every monitor predicts every output exactly, so the first wrong output is the one
/// reported.
pub const DETECTION_BOUND: u64 = 0;

/// `MCMVM_SEED` (decimal or 0x-hex) if set, else `default`; printed either way so a failure
/// can be replayed.
pub fn seed(what: &str, default: u64) -> u64 {
    let seed = std::env::var("MCMVM_SEED")
        .ok()
        .and_then(|s| {
            let s = s.trim();
            match s.strip_prefix("0x") {
                Some(hex) => u64::from_str_radix(hex, 16).ok(),
                None => s.parse().ok(),
            }
        })
        .unwrap_or(default);
    println!("{what}: seed {seed:#x} (override with MCMVM_SEED)");
    seed
}

/// Step `engine` through `stimulus`, checking every cycle with `monitor`. The outputs of
/// every cycle on success (for coverage counts), the first violation otherwise.
pub fn watch<E: CycleModel>(
    monitor: &mut dyn Monitor<E::In, E::Out>,
    engine: &mut E,
    stimulus: &[E::In],
) -> Result<Vec<E::Out>, Violation> {
    let mut outs = Vec::with_capacity(stimulus.len());
    for (cycle, input) in stimulus.iter().enumerate() {
        let out = engine.step(input);
        monitor.observe(cycle as u64, input, &out)?;
        outs.push(out);
    }
    Ok(outs)
}

/// [`watch`] that panics with the violation (the assertion of the agreement tests).
pub fn assert_agrees<E: CycleModel>(
    what: &str,
    monitor: &mut dyn Monitor<E::In, E::Out>,
    engine: &mut E,
    stimulus: &[E::In],
) -> Vec<E::Out> {
    match watch(monitor, engine, stimulus) {
        Ok(outs) => {
            println!("{what}: {} cycles, 0 violations", stimulus.len());
            outs
        }
        Err(v) => panic!("{what}: {v}"),
    }
}

/// One corrupted update rule, seen from the ports: the adapter may change what the wrapped
/// engine is fed and what it answers.
pub trait Corruption<I: Ports, O: Ports> {
    /// What the wrapped engine sees this cycle.
    fn input(&mut self, input: &I) -> I {
        *input
    }
    /// What the mutant answers this cycle (`input` is what the harness applied).
    fn output(&mut self, _input: &I, out: O) -> O {
        out
    }
}

/// An engine with one corrupted rule.
pub struct Mutant<E, C> {
    pub inner: E,
    pub corruption: C,
}

impl<E: CycleModel, C: Corruption<E::In, E::Out>> CycleModel for Mutant<E, C> {
    type In = E::In;
    type Out = E::Out;
    fn step(&mut self, input: &E::In) -> E::Out {
        let fed = self.corruption.input(input);
        let out = self.inner.step(&fed);
        self.corruption.output(input, out)
    }
}

/// The outputs changed by `corrupt(cycle, out)`, cycles counted from 0; inputs untouched.
pub struct CorruptOutputs<F> {
    corrupt: F,
    cycle: u64,
}

impl<I: Ports, O: Ports, F: FnMut(u64, &mut O)> Corruption<I, O> for CorruptOutputs<F> {
    fn output(&mut self, _input: &I, mut out: O) -> O {
        (self.corrupt)(self.cycle, &mut out);
        self.cycle += 1;
        out
    }
}

/// The first violation `monitor` reports on `engine` whose outputs `corrupt(cycle, out)`
/// changes; a panic if there is none.
pub fn first_violation<E: CycleModel>(
    monitor: &mut dyn Monitor<E::In, E::Out>,
    engine: E,
    stimulus: &[E::In],
    corrupt: impl FnMut(u64, &mut E::Out),
) -> Violation {
    let corruption = CorruptOutputs { corrupt, cycle: 0 };
    let mut mutant = Mutant {
        inner: engine,
        corruption,
    };
    match watch(monitor, &mut mutant, stimulus) {
        Ok(_) => panic!("no violation on the corrupted outputs"),
        Err(v) => v,
    }
}

/// First port (protocol order) on which two output sets differ.
fn first_diff<O: Ports>(a: &O, b: &O) -> Option<&'static str> {
    (0..O::PORTS.len())
        .find(|&i| a.get(i) != b.get(i))
        .map(|i| O::PORTS[i].name)
}

/// Run the true twin `good` and `mutant` side by side on `stimulus`, with `monitor` watching
/// the mutant, and assert: the mutant diverges from the twin (else the test proves
/// nothing); the monitor says nothing before that cycle; it reports a violation within
/// [`DETECTION_BOUND`] cycles of it, naming one of `signals`.
pub fn assert_caught<E: CycleModel, C: Corruption<E::In, E::Out>>(
    name: &str,
    mut good: E,
    mut mutant: Mutant<E, C>,
    monitor: &mut dyn Monitor<E::In, E::Out>,
    stimulus: &[E::In],
    signals: &[&str],
) {
    let mut divergence: Option<(u64, &'static str)> = None;
    for (cycle, input) in stimulus.iter().enumerate() {
        let cycle = cycle as u64;
        let want = good.step(input);
        let got = mutant.step(input);
        if divergence.is_none() {
            divergence = first_diff(&want, &got).map(|s| (cycle, s));
        }
        if let Err(v) = monitor.observe(cycle, input, &got) {
            let Some((at, signal)) = divergence else {
                panic!("mutant {name}: violation before any divergence from the twin: {v}");
            };
            assert!(
                v.cycle <= at + DETECTION_BOUND,
                "mutant {name}: diverged in cycle {at} ({signal}) but reported in {}: {v}",
                v.cycle
            );
            assert!(
                signals.contains(&v.signal),
                "mutant {name}: violation names {} (divergence on {signal}), expected one of \
                 {signals:?}: {v}",
                v.signal
            );
            println!("mutant {name}: diverged in cycle {at} on {signal}; caught: {v}");
            return;
        }
        if let Some((at, signal)) = divergence {
            assert!(
                cycle < at + DETECTION_BOUND + 1,
                "mutant {name}: diverged in cycle {at} on {signal}, not reported by cycle {cycle}"
            );
        }
    }
    panic!(
        "mutant {name}: never diverged from the twin in {} cycles",
        stimulus.len()
    );
}
