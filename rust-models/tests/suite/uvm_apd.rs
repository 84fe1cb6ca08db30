//! The access-pattern detector on synthetic objects of each class, fed interval by interval
//! as the ATT would report them (page, object-local access time).

use mcmvm_models::uvm::apd::{AccessClass, ClassSource, ObjectProfile, StepOutcome};
use mcmvm_models::uvm::config::ApdThresholds;

/// A seeded xorshift64* (the test's own, fixed seeds).
struct Rng(u64);
impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
    }
    fn below(&mut self, n: u64) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        ((x.wrapping_mul(0x2545_f491_4f6c_dd1d) as u128 * n as u128) >> 64) as u64
    }
}

const PAGES: usize = 8192;
const WINDOW: u32 = 256;

/// Feed `page_at(access)` until the profile decides; (class, source, steps).
fn classify(mut page_at: impl FnMut(u32) -> usize) -> (AccessClass, ClassSource, u32) {
    let t = ApdThresholds::default();
    let mut p = ObjectProfile::new(PAGES);
    let mut timer = 0u32;
    loop {
        for _ in 0..WINDOW {
            timer += 1;
            p.record(page_at(timer), timer);
        }
        if let StepOutcome::Decided(c, s) = p.step(&t) {
            return (c, s, p.steps);
        }
        assert!(p.steps < 1000, "never decided");
    }
}

#[test]
fn streaming_is_ls() {
    // 8 accesses per page in page order, with a little jitter.
    let mut rng = Rng::new(7);
    let (c, s, steps) = classify(|t| ((t / 8) as usize + rng.below(3) as usize) % PAGES);
    assert_eq!((c, s), (AccessClass::Ls, ClassSource::Profiled));
    assert!(steps <= 2, "{steps}");
}

#[test]
fn a_wide_front_of_warps_in_scheduling_order_is_ls() {
    // 64 warps each stream their own page (4 accesses), one wave of 64 pages per profiling
    // interval, the warps of a round in a random order (scheduling noise). Inside one
    // interval the access order is a sawtooth over 64 pages; the latest access time of each
    // page still grows with the page from wave to wave. A detector regressing one point per
    // access over the interval filed this LC at the first step (its coverage is low).
    const W: usize = 64;
    let mut rng = Rng::new(11);
    let mut order: Vec<usize> = (0..W).collect();
    let (c, s, steps) = classify(|t| {
        let i = (t - 1) as usize;
        if i.is_multiple_of(W) {
            for k in (1..W).rev() {
                order.swap(k, rng.below(k as u64 + 1) as usize);
            }
        }
        (i / (4 * W)) * W + order[i % W]
    });
    assert_eq!((c, s), (AccessClass::Ls, ClassSource::Profiled));
    assert!(steps <= 8, "{steps}");
}

#[test]
fn uniform_random_over_the_whole_object_is_hchi() {
    let mut rng = Rng::new(1);
    let (c, s, _) = classify(|_| rng.below(PAGES as u64) as usize);
    assert_eq!((c, s), (AccessClass::Hchi, ClassSource::Profiled));
}

#[test]
fn one_page_per_64kb_over_the_whole_object_is_hcli() {
    let mut rng = Rng::new(2);
    let (c, s, _) = classify(|_| rng.below((PAGES / 16) as u64) as usize * 16 + 5);
    assert_eq!((c, s), (AccessClass::Hcli, ClassSource::Profiled));
}

#[test]
fn a_hot_tenth_of_the_object_is_lc() {
    let mut rng = Rng::new(3);
    let (c, s, _) = classify(|_| 3000 + rng.below((PAGES / 10) as u64) as usize);
    assert_eq!((c, s), (AccessClass::Lc, ClassSource::Profiled));
}

#[test]
fn an_object_hammering_a_few_pages_falls_back_to_lc() {
    let (c, s, steps) = classify(|t| (t % 4) as usize);
    assert_eq!((c, s), (AccessClass::Lc, ClassSource::Fallback));
    assert_eq!(steps, ApdThresholds::default().max_steps);
}

/// The second launch of a streaming kernel: 16 pages of the front's 68 are already resident
/// and take every access (in an order with no trend) while the other 52 wait on far faults,
/// so the touched span stays 0–67. The object is not filed LC while its front is still
/// faulting; without outstanding faults the same reads are LC.
#[test]
fn an_object_whose_front_is_still_faulting_is_not_decided_lc() {
    let t = ApdThresholds::default();
    let mut pages: Vec<usize> = (0..15).map(|i| 4 * i).collect();
    pages.push(67);
    // From both ends inwards: page number against access time has no linear trend.
    let mut order = Vec::new();
    let (mut lo, mut hi) = (0usize, pages.len() - 1);
    while lo <= hi {
        order.push(pages[lo]);
        if hi != lo {
            order.push(pages[hi]);
        }
        lo += 1;
        if hi == 0 {
            break;
        }
        hi -= 1;
    }
    let feed = |p: &mut ObjectProfile, timer: &mut u32| {
        for &page in &order {
            *timer += 1;
            p.record(page, *timer);
        }
    };
    let (mut faulting, mut settled) = (ObjectProfile::new(PAGES), ObjectProfile::new(PAGES));
    let (mut t1, mut t2) = (0u32, 0u32);
    for step in 0..6 {
        feed(&mut faulting, &mut t1);
        feed(&mut settled, &mut t2);
        assert!(
            faulting.r2() <= t.r2,
            "no linear trend: R² {}",
            faulting.r2()
        );
        assert_eq!(
            faulting.step_with_pending(&t, 52),
            StepOutcome::Undecided,
            "step {step}: 52 pages of the front still fault"
        );
        let s = settled.step(&t);
        // Step 0 finds the span new; LC once `lc_stable_steps` steps found it unchanged.
        if step == t.lc_stable_steps as usize {
            assert_eq!(
                s,
                StepOutcome::Decided(AccessClass::Lc, ClassSource::Profiled)
            );
            break;
        }
        assert_eq!(s, StepOutcome::Undecided, "step {step}");
    }
}

/// A streaming object whose first wave of 64 pages (random order inside the wave) takes two
/// intervals: the second interval only re-touches the wave's pages as the rest of each
/// warp's loads come back, so that step sees no new page. Then the front moves on one wave
/// per interval. Deciding LC at the first still step (`lc_stable_steps = 1`) files the
/// stream LC at step 2; the default waits for a second still step and sees it is LS.
#[test]
fn a_first_wave_wider_than_one_interval_is_not_decided_lc() {
    const W: usize = 64;
    let run = |t: &ApdThresholds| {
        let mut rng = Rng::new(13);
        let mut p = ObjectProfile::new(PAGES);
        let mut timer = 0u32;
        for interval in 0..40usize {
            let wave = interval.saturating_sub(1);
            let mut order: Vec<usize> = (0..W).collect();
            for k in (1..W).rev() {
                order.swap(k, rng.below(k as u64 + 1) as usize);
            }
            for &o in &order {
                timer += 1;
                p.record(wave * W + o, timer);
            }
            if let StepOutcome::Decided(c, s) = p.step(t) {
                return (c, s, p.steps);
            }
        }
        panic!("never decided");
    };
    let eager = ApdThresholds {
        lc_stable_steps: 1,
        ..ApdThresholds::default()
    };
    assert_eq!(
        run(&eager),
        (AccessClass::Lc, ClassSource::Profiled, 2),
        "one still step decides LC"
    );
    let (c, s, steps) = run(&ApdThresholds::default());
    assert_eq!((c, s), (AccessClass::Ls, ClassSource::Profiled));
    assert!(steps <= 8, "{steps}");
}
