//! Forest's registration rule: at each kernel launch the driver registers the kernel's
//! objects in the ATT through its ports, replacing the least recently accessed object when
//! the table is full; every access of a running kernel then reaches a registered object.

use std::path::Path;

use crate::workload::{by_name, Allocation};

use super::forest::ForestState;
use super::gpu_tests::small_turing;
use super::layout::Layout;
use super::{UvmConfig, UvmPolicy};

fn cfg(sets: &[&str]) -> UvmConfig {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    UvmConfig::from_text("", Path::new("test"), &sets).expect("test overrides are valid")
}

fn sorted(mut v: Vec<usize>) -> Vec<usize> {
    v.sort_unstable();
    v
}

/// A four-slot table: the kernel's objects are registered, those already in the table keep
/// their slots, and a new object takes the slot of the least recently accessed one.
#[test]
fn a_launch_registers_its_objects_replacing_the_least_recently_accessed() {
    let cfg = cfg(&["att.objects=4"]);
    let allocs: Vec<Allocation> = (0..6)
        .map(|i| Allocation::new(format!("o{i}"), 8 * 4096))
        .collect();
    let layout = Layout::new(&allocs);
    let mut f = ForestState::new(&cfg, &layout, false).expect("twin ATT");
    let mut at = 0u64;
    let mut touch = |f: &mut ForestState, o: usize| {
        at += 10;
        let vpn = layout.objects[o].first_vpn().0 + 3;
        f.att.access(at, vpn, &mut f.tracker);
    };

    f.kernel_launch("k0", &[0, 1, 2, 3], &layout);
    assert_eq!(sorted(f.registered()), [0, 1, 2, 3]);
    for o in [2, 0, 3, 1] {
        touch(&mut f, o);
    }
    f.kernel_end();
    assert_eq!(f.tracker.records, 4, "every access hit a registered object");

    // 1 is in the table (re-registered first), 4 takes the oldest: 2.
    f.kernel_launch("k1", &[4, 1], &layout);
    assert_eq!(sorted(f.registered()), [0, 1, 3, 4]);
    touch(&mut f, 4);
    touch(&mut f, 1);
    f.kernel_end();
    // Least to most recent now: 0, 3, 4, 1. Object 5 replaces 0; 3 and 4 stay.
    f.kernel_launch("k2", &[5, 3, 4], &layout);
    assert_eq!(sorted(f.registered()), [1, 3, 4, 5]);
    for o in [5, 3, 4] {
        touch(&mut f, o);
    }
    f.kernel_end();
    assert_eq!(f.tracker.records, 9);
    // Fresh timers for the re-registered objects: each saw one access in k2.
    assert_eq!(f.tracker.objects[3].timer, 1);
    assert_eq!(f.tracker.objects[3].epoch, 2);
}

/// More objects than slots: as many as fit, in argument order.
#[test]
fn a_kernel_with_more_objects_than_slots_gets_the_capacity() {
    let cfg = cfg(&["att.objects=2"]);
    let allocs: Vec<Allocation> = (0..3)
        .map(|i| Allocation::new(format!("o{i}"), 4096))
        .collect();
    let layout = Layout::new(&allocs);
    let mut f = ForestState::new(&cfg, &layout, false).expect("twin ATT");
    f.kernel_launch("k", &[2, 1, 0], &layout);
    assert_eq!(sorted(f.registered()), [1, 2]);
}

/// Whole runs of the DL networks, which have 101–158 objects, on a small Turing GPU: every
/// page access of every kernel hits an object registered in the ATT (its record arrives), so every object a
/// kernel touches is registered while that kernel runs. Registering objects 0–31 by
/// allocation index (the old rule) left most of these accesses without a record.
#[test]
fn every_object_a_kernel_touches_is_registered_while_it_runs() {
    let (cfg, gpu) = (cfg(&[]), small_turing());
    for (name, scale) in [
        ("resnet50", 0.02),
        ("bert", 0.02),
        ("whisper", 0.02),
        ("mixed", 0.02),
    ] {
        let wl = by_name(name, scale, 1).expect("builds");
        assert!(name == "mixed" || wl.allocations().len() > cfg.att.objects);
        for policy in [UvmPolicy::Forest, UvmPolicy::SpecForest] {
            let m = gpu.run(wl.as_ref(), &cfg, policy, scale, 1).expect("runs");
            assert!(m.page_accesses > 0);
            assert_eq!(m.att_records, m.page_accesses, "{name} under {policy:?}");
        }
    }
}
