//! The GPU config: the shipped files load, bad keys and values are refused by name.

use mcmvm_models::driver::PolicyKind;
use mcmvm_models::gpu::{GpuConfig, GpuError};
use std::path::Path;

fn shipped(name: &str) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../configs")
        .join(name);
    std::fs::read_to_string(p).expect("config file exists")
}

#[test]
fn both_shipped_configs_load_with_table_1_values() {
    let c4 = GpuConfig::parse(
        &shipped("mcm-4chiplet.toml"),
        Path::new("mcm-4chiplet.toml"),
    )
    .expect("4-chiplet config is valid");
    assert_eq!(c4.gpu.chiplets * c4.gpu.sms_per_chiplet, 256);
    assert_eq!(
        (
            c4.l1_tlb.entries_4k,
            c4.l1_tlb.entries_64k,
            c4.l1_tlb.entries_2m
        ),
        (32, 16, 8)
    );
    assert_eq!(
        (
            c4.l2_tlb.entries_4k,
            c4.l2_tlb.entries_64k,
            c4.l2_tlb.entries_2m
        ),
        (1024, 512, 256)
    );
    assert_eq!((c4.l1_tlb.latency, c4.l2_tlb.latency), (10, 80));
    assert_eq!((c4.l1_cache.latency, c4.l2_cache.latency), (20, 160));
    let c8 = GpuConfig::parse(
        &shipped("mcm-8chiplet.toml"),
        Path::new("mcm-8chiplet.toml"),
    )
    .expect("8-chiplet config is valid");
    assert_eq!(c8.gpu.chiplets, 8);
    // Per-chiplet bandwidth is the same in both.
    let per = |c: &GpuConfig| c.memory.total_bandwidth_gbs / c.gpu.chiplets as f64;
    assert_eq!(per(&c4), per(&c8));
}

#[test]
fn an_unknown_key_is_named_with_the_file() {
    let text =
        shipped("mcm-4chiplet.toml").replace("issue_width = 4", "issue_width = 4\nwarp_size = 32");
    let e = GpuConfig::parse(&text, Path::new("x.toml"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("x.toml") && e.contains("warp_size"), "{e}");
    assert!(!e.contains('\n'), "one line: {e}");
}

#[test]
fn a_wrong_type_is_named_with_the_key() {
    let text = shipped("mcm-4chiplet.toml").replace("chiplets = 4", "chiplets = \"four\"");
    let e = GpuConfig::parse(&text, Path::new("x.toml"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("x.toml") && e.contains("chiplets"), "{e}");
}

#[test]
fn an_unusable_value_is_named_with_the_key() {
    let text = shipped("mcm-4chiplet.toml").replace("chiplets = 4", "chiplets = 3");
    let e = GpuConfig::parse(&text, Path::new("x.toml"))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("gpu.chiplets") && e.contains("power of two"),
        "{e}"
    );
}

/// The Forest study's GPU has no Remote Tracker (`walker.remote_tracker = false`); the MCM
/// configs leave the key out and have one per chiplet. CLAP, whose MMA drains the RT, is
/// refused on a GPU without one, naming the key.
#[test]
fn the_forest_gpu_has_no_remote_tracker_and_clap_is_refused_on_it() {
    let turing = GpuConfig::parse(&shipped("gpu-turing.toml"), Path::new("gpu-turing.toml"))
        .expect("Turing config is valid");
    assert!(!turing.walker.remote_tracker);
    let c4 = GpuConfig::parse(
        &shipped("mcm-4chiplet.toml"),
        Path::new("mcm-4chiplet.toml"),
    )
    .expect("4-chiplet config is valid");
    assert!(c4.walker.remote_tracker, "the default");
    let w = mcmvm_models::workload::by_name("bfs", 0.02, 1).expect("bfs");
    let spec = |policy| mcmvm_models::gpu::RunSpec {
        policy,
        scale: 0.02,
        seed: 1,
    };
    let err = mcmvm_models::gpu::simulate(&turing, w.as_ref(), spec(PolicyKind::Clap))
        .expect_err("clap needs the RT");
    assert!(matches!(err, GpuError::NoRemoteTracker("clap")), "{err}");
    assert!(
        err.to_string().contains("walker.remote_tracker = false"),
        "{err}"
    );
    mcmvm_models::gpu::simulate(&turing, w.as_ref(), spec(PolicyKind::S4k))
        .expect("a policy that does not drain the RT runs");
}

/// The Remote Tracker only observes walks: without it an S-64KB run on the 4-chiplet GPU
/// takes the same cycles, walks and remote accesses, its report has no RT line and no RT
/// estimate, and with it the RT was stepped.
#[test]
fn the_remote_tracker_observes_without_changing_the_run() {
    let path = Path::new("mcm-4chiplet.toml");
    let with = GpuConfig::parse(&shipped("mcm-4chiplet.toml"), path).expect("valid");
    let mut without = with.clone();
    without.walker.remote_tracker = false;
    let w = mcmvm_models::workload::by_name("bfs", 0.02, 1).expect("bfs");
    let spec = mcmvm_models::gpu::RunSpec {
        policy: PolicyKind::S64k,
        scale: 0.02,
        seed: 1,
    };
    let a = mcmvm_models::gpu::simulate(&with, w.as_ref(), spec).expect("runs");
    let b = mcmvm_models::gpu::simulate(&without, w.as_ref(), spec).expect("runs");
    assert_eq!(
        (a.cycles, a.walks, a.remote_ratio),
        (b.cycles, b.walks, b.remote_ratio)
    );
    let rts = |r: &mcmvm_models::gpu::RunReport| {
        r.hardware
            .blocks
            .iter()
            .filter(|b| b.block == "remote_tracker")
            .map(|b| b.block_cycles)
            .collect::<Vec<_>>()
    };
    assert_eq!(rts(&a).len(), 4, "one RT per chiplet");
    assert!(rts(&a).iter().sum::<u64>() > 0, "walks stepped the RTs");
    assert!(rts(&b).is_empty());
    assert!(a.rt_remote_ratio.is_some());
    assert_eq!(b.rt_remote_ratio, None);
}
