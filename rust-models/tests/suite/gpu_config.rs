//! The GPU config: the shipped files load, bad keys and values are refused by name.

use mcmvm_models::gpu::GpuConfig;
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
