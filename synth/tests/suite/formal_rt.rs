//! Bounded model check of the Remote Tracker's port properties (`synth/formal/rt_props.sv`,
//! from `rtl/src/remote_tracker.md`) on the Verilog emitted from the current RTL source,
//! and two mutants of that Verilog that the same check must reject.
//!
//! `make test` runs the small configuration below (2 entries, 2-bit counters, 12 cycles,
//! bounded: ABC bmc3); `make formal` runs the `#[ignore]`d deeper and bigger ones (up to
//! the default 32 entries / 32-bit counters at 8 cycles, and an unbounded `pdr` proof of
//! the 2-entry table) and prints depth and time. A missing yosys / yosys-abc fails the
//! test with the install command (Debian: `apt-get install yosys`, which ships yosys-abc).

use mcmvm_synth::formal::{
    check_rt, mutant_drop_remote, mutant_reset_keeps_row, rt_verilog, BmcOutcome, RtBmc,
};
use std::path::PathBuf;

/// `make test`: 2 entries, 2-bit counters (saturation at 3 is reachable), every DUT
/// flip-flop free at power-up, 12 cycles.
const SMALL: RtBmc = RtBmc {
    entries: 2,
    counter_bits: 2,
    depth: 12,
    free_power_up: true,
    timeout_s: 300,
    unbounded: false,
};

fn work(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../out/test-synth/formal")
        .join(name);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn verilog(check: &RtBmc) -> String {
    rt_verilog(check.entries, check.counter_bits).unwrap_or_else(|e| panic!("{e}"))
}

/// Run one check; panics with the tool error's own text (which names the apt package).
fn bmc(text: &str, check: &RtBmc, name: &str) -> BmcOutcome {
    check_rt(text, check, &work(name)).unwrap_or_else(|e| panic!("{e}"))
}

fn describe(check: &RtBmc, r: &BmcOutcome) -> String {
    let cfg = format!(
        "RT {} entries, {}-bit counters, {} power-up",
        check.entries,
        check.counter_bits,
        if check.free_power_up { "free" } else { "zero" }
    );
    match r {
        BmcOutcome::Pass { depth, seconds } => {
            format!("{cfg}: PASS, no assertion fails in {depth} cycles ({seconds:.1} s)")
        }
        BmcOutcome::Proved { seconds } => {
            format!("{cfg}: PROVED for every depth by pdr ({seconds:.1} s)")
        }
        BmcOutcome::Fail {
            cycle,
            seconds,
            trace,
        } => format!(
            "{cfg}: FAIL in cycle {cycle} ({seconds:.1} s)\n  {}",
            trace.join("\n  ")
        ),
    }
}

fn assert_passes(check: &RtBmc, name: &str) {
    let r = bmc(&verilog(check), check, name);
    let msg = describe(check, &r);
    println!("{msg}");
    let ok = match r {
        BmcOutcome::Pass { depth, .. } => !check.unbounded && depth >= check.depth,
        BmcOutcome::Proved { .. } => check.unbounded,
        BmcOutcome::Fail { .. } => false,
    };
    assert!(ok, "{msg}");
}

#[test]
fn rt_port_properties_hold_for_12_cycles_on_a_2_entry_rt() {
    assert_passes(&SMALL, "small");
}

#[test]
fn the_check_rejects_an_rt_that_drops_remote_walks_or_keeps_a_row_across_reset() {
    let text = verilog(&SMALL);
    let mutants = [
        (
            "drop-remote",
            mutant_drop_remote(&text)
                .expect("walk lane's remote register not found: update the mutant"),
        ),
        (
            "reset-keeps-row",
            mutant_reset_keeps_row(&text, SMALL.entries - 1)
                .expect("reset clearing of a valid bit not found: update the mutant"),
        ),
    ];
    for (name, m) in mutants {
        assert_ne!(m, text);
        let r = bmc(&m, &SMALL, name);
        let msg = describe(&SMALL, &r);
        println!("mutant {name}: {msg}");
        match r {
            BmcOutcome::Fail { cycle, trace, .. } => {
                assert!(cycle < SMALL.depth && !trace.is_empty(), "{msg}");
            }
            _ => panic!("mutant {name} passed the check: {msg}"),
        }
    }
}

/// `make formal`: bigger tables and the default configuration, shallower where the state
/// space forces it.
#[test]
#[ignore = "minutes; run by `make formal`"]
fn rt_port_properties_deeper_and_bigger() {
    for check in [
        RtBmc { depth: 16, ..SMALL },
        RtBmc {
            entries: 4,
            counter_bits: 4,
            depth: 9,
            free_power_up: true,
            timeout_s: 600,
            unbounded: false,
        },
        RtBmc {
            entries: 32,
            counter_bits: 32,
            depth: 8,
            free_power_up: true,
            timeout_s: 900,
            unbounded: false,
        },
        // Every depth, 2-entry table: pdr finds an inductive invariant.
        RtBmc {
            unbounded: true,
            ..SMALL
        },
    ] {
        let name = format!(
            "deep-{}x{}{}",
            check.entries,
            check.counter_bits,
            if check.unbounded { "-pdr" } else { "" }
        );
        assert_passes(&check, &name);
    }
}
