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
    let plru = |cfg: RtConfig| RtConfig {
        replacement: RtReplacement::TreePlru,
        ..cfg
    };
    for (tag, cfg) in [
        ("small", small_cfg()),
        ("paper", RtConfig::default()),
        ("small_nru", nru(small_cfg())),
        ("paper_nru", nru(RtConfig::default())),
        ("small_plru", plru(small_cfg())),
        ("paper_plru", plru(RtConfig::default())),
        (
            "odd_plru",
            RtConfig {
                entries: 5,
                ..plru(small_cfg())
            },
        ),
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
    let ranks = RemoteTrackerRtl::new(&RtConfig {
        replacement: RtReplacement::Ranks,
        ..RtConfig::default()
    });
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
    assert!(nru.plru.is_empty() && nru.plru_slot_tree.is_empty());
    let plru = RemoteTrackerRtl::new(&RtConfig {
        replacement: RtReplacement::TreePlru,
        entries: 5,
        ..RtConfig::default()
    });
    assert_eq!(
        (plru.rank.len(), plru.used.len(), plru.plru.len()),
        (0, 0, 31)
    );
    assert_eq!(plru.plru_leaf.len(), 5);
    // Five rows. Node 32 + j has the upper child 2j + 1: node 33 (j = 1) holds rows 2, 3
    // of the upper child row 3; node 34 (j = 2) rows 4, 5, upper row 5 missing; node 48
    // (j = 16) has the upper child 33 (rows 2, 3); node 56 (j = 24) has 49 (rows 4..=7);
    // node 60 (j = 28) has 57 (rows 8..=15) and the root (j = 30) has 61 (rows 16..=31).
    let live: Vec<bool> = plru.plru_upper_live.iter().map(|c| c.val()).collect();
    assert!(live[16] && live[24] && !live[28] && !live[30]);
    assert!(live[0] && live[1] && !live[2] && !live[3]);
    assert!(plru.target_rank_tree.is_empty() && plru.victim_any_tree.is_empty());
}
