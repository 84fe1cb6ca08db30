//! Free-frame conservation and "no frame mapped twice", checked after every fault of a
//! synthetic multi-chiplet fault stream, under every policy — with plenty of memory, and
//! with so little that chiplets fill up and blocks migrate to host.

use mcmvm_models::addr::{ChipletId, Va, PAGE_4K};
use mcmvm_models::driver::{DriverConfig, DriverError, MemoryManager, PolicyKind, RtDrain};
use mcmvm_models::workload::Allocation;

const SEED: u64 = 0x5eed_c1a9;

/// xorshift64*: a fixed, printed seed; no dependency.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Remote Trackers that report a fixed remote ratio.
struct FixedRatio(u64, u64);
impl RtDrain for FixedRatio {
    fn drain(&mut self, _id: u8) -> (u64, u64) {
        (self.0, self.1)
    }
}

fn allocs() -> Vec<Allocation> {
    vec![
        Allocation::new("big", 24 << 20),
        Allocation::new("medium", 12 << 20),
        Allocation::new("small", 3 << 20),
        Allocation::new("odd", (5 << 20) + 12345),
    ]
}

/// One fault: mostly chiplet-owned 256 KB chunks (chiplet-locality), some random sharing.
fn next_fault(rng: &mut Rng, mm: &MemoryManager, sizes: &[u64], chiplets: u64) -> (Va, ChipletId) {
    let a = rng.below(sizes.len() as u64) as u16;
    let off = rng.below(sizes[a as usize]) & !(PAGE_4K - 1);
    let owner = (off >> 18) % chiplets;
    let chiplet = if rng.below(10) < 8 {
        owner
    } else {
        rng.below(chiplets)
    };
    (Va(mm.alloc_base(a).0 + off), ChipletId(chiplet as u8))
}

fn drive(policy: PolicyKind, cfg: DriverConfig, faults: usize) -> MemoryManager {
    println!("policy {policy}, seed {SEED:#x}");
    let allocs = allocs();
    let sizes: Vec<u64> = allocs.iter().map(|a| a.bytes).collect();
    let chiplets = cfg.chiplets as u64;
    let mut mm = MemoryManager::new(cfg, policy, &allocs).unwrap();
    let mut rng = Rng(SEED);
    let mut rt = FixedRatio(100, 30);
    mm.check_invariants().unwrap();
    for i in 0..faults {
        let (va, chiplet) = next_fault(&mut rng, &mm, &sizes, chiplets);
        let out = mm
            .handle_fault(va, chiplet, &mut rt)
            .unwrap_or_else(|e| panic!("fault {i}: {e}"));
        let t = mm
            .translate(va)
            .unwrap_or_else(|| panic!("fault {i}: {va} still unmapped"));
        assert_eq!(t.alloc_id as usize, mm.alloc_of(va).unwrap() as usize + 1);
        if out.bytes > 0 {
            assert_eq!(t.chiplet, out.chiplet);
        }
        if let Err(e) = mm.check_invariants() {
            panic!("{policy}, fault {i} ({va} from chiplet {}): {e}", chiplet.0);
        }
    }
    mm
}

#[test]
fn frames_are_conserved_and_never_mapped_twice_under_every_policy() {
    for policy in PolicyKind::ALL {
        let cfg = DriverConfig {
            frames_per_chiplet: 64 * 512,
            ..DriverConfig::default()
        };
        let mm = drive(policy, cfg, 800);
        let s = mm.stats();
        assert!(s.faults > 0 && s.pt_pages >= 4);
        assert_eq!(s.evictions, 0, "{policy}: memory was plentiful");
    }
}

#[test]
fn full_chiplets_fall_back_and_a_full_gpu_migrates_blocks_to_host() {
    for policy in PolicyKind::ALL {
        // 4 chiplets × 2 PF blocks = 16 MB for 44 MB of structures.
        let cfg = DriverConfig {
            frames_per_chiplet: 2 * 512,
            ..DriverConfig::default()
        };
        let mm = drive(policy, cfg, 1500);
        let s = mm.stats();
        assert!(s.evictions > 0, "{policy}: the GPU should have filled up");
        assert!(
            s.chiplet_fallbacks > 0 || policy == PolicyKind::Olp || policy == PolicyKind::Clap,
            "{policy}: some chiplet should have run out first"
        );
    }
}

#[test]
fn without_eviction_a_full_gpu_is_an_error_not_a_panic() {
    let cfg = DriverConfig {
        frames_per_chiplet: 512,
        chiplets: 1,
        evict_when_full: false,
        ..DriverConfig::default()
    };
    let mut mm =
        MemoryManager::new(cfg, PolicyKind::S64k, &[Allocation::new("a", 4 << 20)]).unwrap();
    let base = mm.alloc_base(0).0;
    let mut rt = FixedRatio(0, 0);
    let mut result = Ok(());
    for page in 0..64u64 {
        if let Err(e) = mm.handle_fault(Va(base + page * 65536), ChipletId(0), &mut rt) {
            result = Err(e);
            break;
        }
        mm.check_invariants().unwrap();
    }
    assert_eq!(result, Err(DriverError::OutOfMemory));
    mm.check_invariants().unwrap();
}

#[test]
fn evicting_a_block_returns_every_frame() {
    for policy in PolicyKind::ALL {
        let cfg = DriverConfig {
            frames_per_chiplet: 64 * 512,
            ..DriverConfig::default()
        };
        let mut mm = drive(policy, cfg, 600);
        let before = mm.stats();
        let free_before = before.free_frames;
        let victim = mm.least_recently_mapped_block(None).unwrap();
        let ev = mm.evict_block(victim).unwrap();
        assert!(ev.bytes > 0);
        // Exactly one more eviction is counted (a `> 0` check would pass a counter that
        // wrapped below zero).
        assert_eq!(mm.stats().evictions, before.evictions + 1, "{policy}");
        assert!(mm.translate(victim).is_none() || mm.translate(Va(victim.0 + 0x1f_f000)).is_none());
        mm.check_invariants().unwrap();
        assert!(
            mm.stats().free_frames >= free_before + ev.bytes / PAGE_4K,
            "{policy}"
        );
    }
}
