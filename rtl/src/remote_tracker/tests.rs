//! The Remote Tracker's RTL: it matches its twin on a short random run, its Verilog is
//! lint-clean (Verilator `-Wall`, yosys `check`), and it synthesises.

use super::*;
use crate::test_tools::{assert_lint_clean, remove_scratch, write_verilog, yosys};
use std::path::PathBuf;

fn small_cfg() -> RtConfig {
    RtConfig {
        entries: 4,
        alloc_id_bits: 8,
        counter_bits: 4,
        report_evictions: true,
        replacement: RtReplacement::Ranks,
    }
}

/// Verilog of the module for `cfg`, written to a fresh scratch directory.
fn verilog_file(cfg: &RtConfig, tag: &str) -> PathBuf {
    write_verilog(&mut RemoteTrackerRtl::new(cfg), &format!("rt_{tag}"))
}

#[test]
fn rejects_parameters_the_ports_cannot_carry() {
    let mut cfg = small_cfg();
    cfg.entries = 33;
    assert_eq!(
        RemoteTrackerRtl::try_new(&cfg).err(),
        Some(RtParamError::Entries(33))
    );
    let mut cfg = small_cfg();
    cfg.counter_bits = 33;
    assert!(RemoteTrackerRtl::try_new(&cfg).is_err());
}

#[test]
fn verilog_is_lint_clean() {
    let nru = |cfg: RtConfig| RtConfig {
        replacement: RtReplacement::Nru,
        ..cfg
    };
    for (tag, cfg) in [
        ("small", small_cfg()),
        ("paper", RtConfig::default()),
        ("small_nru", nru(small_cfg())),
        ("paper_nru", nru(RtConfig::default())),
    ] {
        let v = verilog_file(&cfg, tag);
        assert_lint_clean(&v, tag);
        remove_scratch(&v);
    }
}

#[test]
fn verilog_passes_yosys_check_and_synthesises() {
    // Four rows: the same logic as 32, synthesised in a fraction of the time; `mcmvm synth`
    // maps the paper's 32-row table to the standard cells.
    let v = verilog_file(&small_cfg(), "synth");
    let script = format!(
        "read_verilog {}; hierarchy -top top; proc; check -assert; synth -flatten -top top; stat",
        v.display()
    );
    if let Some(log) = yosys(&script, true, "remote_tracker") {
        assert!(
            !log.to_lowercase().contains("latch"),
            "latch inferred: {log}"
        );
    }
    remove_scratch(&v);
}

#[test]
fn each_replacement_order_has_only_its_own_state() {
    let ranks = RemoteTrackerRtl::new(&RtConfig::default());
    assert_eq!((ranks.rank.len(), ranks.used.len()), (32, 0));
    assert_eq!(ranks.target_rank_tree.len(), READ_TREE_NODES);
    assert!(ranks.victim_any_tree.is_empty() && ranks.other_clear_tree.is_empty());
    let nru = RemoteTrackerRtl::new(&RtConfig {
        replacement: RtReplacement::Nru,
        ..RtConfig::default()
    });
    assert_eq!((nru.rank.len(), nru.used.len()), (0, 32));
    assert!(nru.target_rank_tree.is_empty() && nru.oldest_rank.is_empty());
    assert_eq!(nru.victim_slot_tree.len(), READ_TREE_NODES);
}
