//! The model cache serves only entries that match their manifest: a corrupted file, a
//! truncated library, a missing manifest or another Verilator version's build is rebuilt
//! (and says why), and two threads asking for a new entry get one build.
//!
//! Each test has a Remote Tracker configuration no other test uses (its `counter_bits`),
//! so it can damage its own entry in the shared cache while other tests run.

use super::*;
use crate::verilator_build::Sources;
use crate::verilator_shim::BlockPorts;
use mcmvm_models::config::HwConfig;
use mcmvm_models::protocol::{BlockKind, RtIn, RtOut};

/// The sources of a 2-entry RT with `counter_bits` (the smallest table builds fastest; the
/// cache does not care what it holds).
fn sources(counter_bits: u32) -> Sources {
    let mut cfg = HwConfig::default();
    cfg.remote_tracker.entries = 2;
    cfg.remote_tracker.counter_bits = counter_bits;
    let block = BlockPorts::of::<RtIn, RtOut>(BlockKind::RemoteTracker);
    Sources::generate(&block, &cfg, false).unwrap_or_else(|e| panic!("{e}"))
}

fn get(src: &Sources) -> Cached {
    model(src, &Tools::default(), &cache_root()).unwrap_or_else(|e| panic!("{e}"))
}

/// The entry of `src`, present and checked; a second request finds it.
fn entry(src: &Sources) -> Cached {
    let cached = get(src);
    assert!(cached.library.is_file());
    assert_eq!(get(src).stale, None);
    cached
}

/// `damage` done to `src`'s entry makes the next request rebuild it, saying why; the
/// rebuilt entry is served from then on.
fn rebuilt_after(counter_bits: u32, damage: impl FnOnce(&Cached)) -> Stale {
    let src = sources(counter_bits);
    let cached = entry(&src);
    damage(&cached);
    let again = get(&src);
    assert!(again.built, "a damaged entry is rebuilt");
    let again_again = get(&src);
    assert!(!again_again.built && again_again.stale.is_none());
    again.stale.expect("the rebuild says why")
}

fn manifest_text(c: &Cached) -> String {
    std::fs::read_to_string(c.dir.join(crate::verilator_manifest::MANIFEST)).expect("manifest")
}

#[test]
fn a_corrupted_file_is_rebuilt() {
    let why = rebuilt_after(3, |c| {
        // Same length, one byte changed: only the hash sees it.
        let file = c.dir.join("params.txt");
        let mut log = std::fs::read(&file).expect("params.txt");
        log[0] ^= 0x20;
        std::fs::write(&file, log).expect("corrupt");
    });
    assert_eq!(why, Stale::Corrupted("params.txt".into()));
}

#[test]
fn a_truncated_library_is_rebuilt() {
    let why = rebuilt_after(5, |c| {
        let f = std::fs::OpenOptions::new()
            .write(true)
            .open(&c.library)
            .expect("library");
        f.set_len(100).expect("truncate");
    });
    assert!(
        matches!(&why, Stale::Length { found: 100, file, .. } if file.ends_with(".so")),
        "{why}"
    );
}

#[test]
fn an_entry_without_its_manifest_is_rebuilt() {
    let why = rebuilt_after(6, |c| {
        std::fs::remove_file(c.dir.join(crate::verilator_manifest::MANIFEST)).expect("rm");
    });
    assert_eq!(why, Stale::NoManifest);
}

#[test]
fn another_verilator_versions_build_is_rebuilt() {
    let why = rebuilt_after(7, |c| {
        let text = manifest_text(c);
        let faked: String = text
            .lines()
            .map(|l| match l.strip_prefix("verilator\t") {
                Some(_) => "verilator\tVerilator 0.001 (faked)\n".to_string(),
                None => format!("{l}\n"),
            })
            .collect();
        assert_ne!(faked, text);
        std::fs::write(c.dir.join(crate::verilator_manifest::MANIFEST), faked).expect("fake");
    });
    assert!(
        matches!(&why, Stale::OtherVerilator { found, .. } if found.contains("faked")),
        "{why}"
    );
}

#[test]
fn two_threads_asking_for_a_new_entry_get_one_build() {
    let src = sources(9);
    // Make the entry new (an earlier run of this test may have left it).
    let dir = get(&src).dir;
    std::fs::remove_dir_all(&dir).expect("remove the entry");
    let got: Vec<Cached> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..2).map(|_| s.spawn(|| get(&src))).collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("no panic"))
            .collect()
    });
    assert_eq!(got.iter().filter(|c| c.built).count(), 1, "{got:?}");
    assert!(got
        .iter()
        .all(|c| c.library == got[0].library && c.stale.is_none()));
    assert_eq!(
        crate::verilator_manifest::verify(&dir, &verilator_version_for_test(&src)),
        Ok(())
    );
}

fn verilator_version_for_test(src: &Sources) -> String {
    crate::verilator_memo::verilator_version(&Tools::default(), &cache_root(), src.module)
        .unwrap_or_else(|e| panic!("{e}"))
}
