//! Unit tests of the TLB coalescing RTL against its behavioural twin.

use super::*;
use mcmvm_models::blocks::tlb_coalescer::TlbCoalescer;
use std::path::PathBuf;
use std::process::Command;

fn tool_present(tool: &str) -> bool {
    Command::new(tool).arg("--version").output().is_ok()
}

/// Write the emitted Verilog of the default configuration to a scratch directory.
fn emitted_verilog(name: &str) -> PathBuf {
    let mut uut = TlbCoalescerRtl::new(&CoalescerConfig::default());
    uut.connect_all();
    let dir = std::env::temp_dir().join(format!("mcmvm-coal-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch directory");
    let path = dir.join("tlb_coalescer.v");
    std::fs::write(&path, generate_verilog(&uut)).expect("write Verilog");
    path
}

#[test]
fn emitted_verilog_is_lint_clean() {
    if !tool_present("verilator") {
        eprintln!("SKIPPED: verilator not installed (apt-get install verilator)");
        return;
    }
    let v = emitted_verilog("lint");
    let out = Command::new("verilator")
        .args([
            "--lint-only",
            "-Wall",
            "-Wno-DECLFILENAME",
            "--top-module",
            "top",
        ])
        .arg(&v)
        .output()
        .expect("run verilator");
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && !log.contains("%Warning"), "{log}");
    let _ = std::fs::remove_dir_all(v.parent().expect("scratch directory"));
}

#[test]
fn block_synthesises_with_yosys() {
    if !tool_present("yosys") {
        eprintln!("SKIPPED: yosys not installed (apt-get install yosys)");
        return;
    }
    let v = emitted_verilog("synth");
    let script = format!(
        "read_verilog {}; hierarchy -check -top top; proc; check -assert; synth -flatten -top top; stat",
        v.display()
    );
    let out = Command::new("yosys")
        .args(["-q", "-p", &script])
        .output()
        .expect("run yosys");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let _ = std::fs::remove_dir_all(v.parent().expect("scratch directory"));
}

/// A line mapping PPN `first + i` in slot `i` with readable+writeable permissions.
fn contiguous_line(first: u64) -> [u64; SLOTS] {
    core::array::from_fn(|i| PTE_VALID | 0x60 | (((first + i as u64) & 0xFFFF_FFFF) << 16))
}

#[test]
fn rust_hdl_simulation_matches_the_twin_cycle_by_cycle() {
    let cfg = CoalescerConfig::default();
    let mut twin = TlbCoalescer::new(&cfg);
    let mut sim = TlbCoalescerHdlSim::new(&cfg);
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
        assert_eq!(twin.step(input), sim.step(input), "cycle {cycle}");
    }
}
