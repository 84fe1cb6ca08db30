//! Forest's access-pattern detector (APD): classifies one object from its page access
//! counters at each profiling interrupt.
//!
//! The ATT writes the object-local access time of every access into the page's access
//! counter (its `rec_*` records feed that store, [`ObjectProfile::record`]), so each touched
//! page holds the time of its *latest* access. A profiling step (an ATT interrupt) copies the
//! object's counters — one point per touched page since the object's registration — and
//! compares them with the driver's copy from the previous step:
//! 1. fewer than `min_pages` touched pages → undecided;
//! 2. **LS** when the linear regression of page number on latest access time over all
//!    touched pages has R² > `r2`. One point per page, not per access: a wide front of warps
//!    makes the order of accesses inside an interval scheduling noise, but the time each
//!    page was last touched still grows with the page as the front moves on;
//! 3. coverage = touched VPN span / object pages; coverage < `coverage` → **LC**, but only
//!    once the object has stopped growing: its touched span did not change since the
//!    previous step *and* it has no outstanding far faults on pages it has not touched yet
//!    (the driver's fault buffer and the pages faulted in that no access has reached yet,
//!    [`ObjectProfile::step_with_pending`]). The front of a streaming object that is not yet
//!    linear enough — or whose new pages are all still faulting while its resident pages
//!    take the accesses — is not filed as LC. `lc_stable_steps` consecutive steps must
//!    find it so (one still interval can be a wave of loads that has not come back yet);
//! 4. otherwise the object is high-coverage and intensity decides HCHI vs HCLI.
//!    Intensity = the fraction of the touched span that the object's access set fills.
//!    Early intervals of a random pattern see only a sample of that set, so the detector
//!    estimates its size by capture–recapture: the share of the pages touched since the
//!    previous step that were already touched before it (the driver's copy says which)
//!    estimates touched / final-set, hence final-set ≈ touched before / share. Once at least
//!    `min_recaptures` pages were seen again, estimated intensity ≥ `intensity` → **HCHI**,
//!    else **HCLI**; with fewer recaptures the step is undecided (the set is still growing
//!    and looks sparse whatever it will become);
//! 5. after `max_steps` undecided steps the object falls back to **LC** at the first step
//!    whose touched span did not grow (outstanding faults do not hold the fallback back, so
//!    a thrashing object's profiling still ends).

use super::config::ApdThresholds;
use serde::Serialize;

/// Forest's four access patterns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, PartialOrd, Ord)]
pub enum AccessClass {
    /// Linear / streaming.
    Ls,
    /// Non-linear, high coverage, high intensity.
    Hchi,
    /// Non-linear, high coverage, low intensity.
    Hcli,
    /// Low coverage (and the fallback).
    Lc,
}

impl AccessClass {
    pub const ALL: [AccessClass; 4] = [
        AccessClass::Ls,
        AccessClass::Hchi,
        AccessClass::Hcli,
        AccessClass::Lc,
    ];
    pub fn name(self) -> &'static str {
        match self {
            AccessClass::Ls => "LS",
            AccessClass::Hchi => "HCHI",
            AccessClass::Hcli => "HCLI",
            AccessClass::Lc => "LC",
        }
    }
}

/// Why an object has its class.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum ClassSource {
    /// Decided by the APD from profiling.
    Profiled,
    /// No class emerged within `max_steps`: LC.
    Fallback,
    /// SpecForest: the last run of the same kernel.
    Recorded,
    /// SpecForest: a static stride hint on the allocation.
    StaticHint,
    /// SpecForest: another object of the same similarity group.
    SimilarityGroup,
}

/// The outcome of one profiling step.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum StepOutcome {
    Decided(AccessClass, ClassSource),
    Undecided,
}

/// Profiling state of one object: its page access counters (what the ATT's records wrote)
/// and the driver's copy of them from the previous profiling step.
#[derive(Debug, Clone)]
pub struct ObjectProfile {
    pages: usize,
    /// Page access counters: object-local time of each page's latest access; 0 = untouched.
    latest: Vec<u32>,
    /// Touched pages in first-touch order (the counters worth reading).
    touched: Vec<u32>,
    /// The object's latest timer (the counters hold nothing newer).
    timer: u32,
    min_page: usize,
    max_page: usize,
    /// Driver's copy: whether the previous reads saw the page, how many they saw, the timer
    /// at the last read and the span it found.
    seen: Vec<bool>,
    seen_count: usize,
    read_timer: u32,
    read_span: Option<(usize, usize)>,
    /// Steps taken (profiling interrupts serviced) and undecided ones.
    pub steps: u32,
    undecided: u32,
    /// Consecutive steps, up to this one, whose span did not grow with no faults pending.
    still: u32,
}

/// What one read of the counters found.
#[derive(Debug, Clone, Copy, Default)]
struct Read {
    r2: f64,
    /// Pages touched since the previous read, and of those, pages that read had seen.
    interval: usize,
    recaptured: usize,
    /// Pages the previous reads had seen.
    before: usize,
}

impl ObjectProfile {
    pub fn new(pages: usize) -> ObjectProfile {
        ObjectProfile {
            pages,
            latest: vec![0; pages],
            touched: Vec::new(),
            timer: 0,
            min_page: usize::MAX,
            max_page: 0,
            seen: vec![false; pages],
            seen_count: 0,
            read_timer: 0,
            read_span: None,
            steps: 0,
            undecided: 0,
            still: 0,
        }
    }

    /// One ATT record: `page` relative to the object start, `timer` its access time.
    pub fn record(&mut self, page: usize, timer: u32) {
        let Some(slot) = self.latest.get_mut(page) else {
            return;
        };
        if *slot == 0 {
            self.touched.push(page as u32);
            self.min_page = self.min_page.min(page);
            self.max_page = self.max_page.max(page);
        }
        *slot = timer.max(1);
        self.timer = self.timer.max(timer);
    }

    /// Whether object-local page `page` has been touched since registration.
    pub fn is_touched(&self, page: usize) -> bool {
        self.latest.get(page).is_some_and(|&t| t != 0)
    }

    /// Pages touched since registration.
    pub fn touched_pages(&self) -> usize {
        self.touched.len()
    }

    /// Touched VPN span / object pages.
    pub fn coverage(&self) -> f64 {
        match self.span() {
            Some((lo, hi)) => (hi - lo + 1) as f64 / self.pages as f64,
            None => 0.0,
        }
    }

    fn span(&self) -> Option<(usize, usize)> {
        (!self.touched.is_empty()).then_some((self.min_page, self.max_page))
    }

    /// R² of the regression of page on latest access time over every touched page (0 when
    /// either is constant).
    pub fn r2(&self) -> f64 {
        let (mut n, mut sx, mut sy, mut sxx, mut syy, mut sxy) = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
        for &p in &self.touched {
            let (x, y) = (self.latest[p as usize] as f64, p as f64);
            n += 1.0;
            sx += x;
            sy += y;
            sxx += x * x;
            syy += y * y;
            sxy += x * y;
        }
        let vx = n * sxx - sx * sx;
        let vy = n * syy - sy * sy;
        if vx <= 0.0 || vy <= 0.0 {
            return 0.0;
        }
        let c = n * sxy - sx * sy;
        (c * c) / (vx * vy)
    }

    /// Copy the counters: the regression, and which touched pages are new since the last
    /// read; the copy becomes the driver's.
    fn read(&mut self) -> Read {
        let mut r = Read {
            r2: self.r2(),
            before: self.seen_count,
            ..Read::default()
        };
        for &p in &self.touched {
            let p = p as usize;
            if self.latest[p] > self.read_timer {
                r.interval += 1;
                if self.seen[p] {
                    r.recaptured += 1;
                }
            }
            if !self.seen[p] {
                self.seen[p] = true;
                self.seen_count += 1;
            }
        }
        self.read_timer = self.timer;
        r
    }

    /// Estimated final access-set size / touched span, or None without enough recaptures.
    fn estimated_intensity(&self, r: &Read, min_recaptures: usize) -> Option<f64> {
        let (lo, hi) = self.span()?;
        if r.recaptured < min_recaptures.max(1) {
            return None;
        }
        let share = r.recaptured as f64 / r.interval as f64;
        let set = (r.before as f64 / share).max(self.touched.len() as f64);
        Some((set / (hi - lo + 1) as f64).min(1.0))
    }

    /// One profiling step (an ATT interrupt for this object) with no outstanding faults.
    pub fn step(&mut self, t: &ApdThresholds) -> StepOutcome {
        self.step_with_pending(t, 0)
    }

    /// One profiling step; `pending` is the number of the object's untouched pages with an
    /// outstanding far fault (queued in the fault buffer, or faulted in and not yet
    /// accessed). While it is non-zero the object's front is still growing, so it is not
    /// decided LC (rule 3).
    pub fn step_with_pending(&mut self, t: &ApdThresholds, pending: usize) -> StepOutcome {
        self.steps += 1;
        let read = self.read();
        let span = self.span();
        let span_grew = span != self.read_span;
        self.read_span = span;
        if span_grew || pending > 0 {
            self.still = 0;
        } else {
            self.still += 1;
        }
        // One still interval is not proof the front stopped: with several loads in flight
        // per warp the first wave can take longer than one interval to come back, leaving a
        // step that saw no new page although the object is still streaming.
        let growing = self.still < t.lc_stable_steps.max(1);
        let outcome = self.classify(t, &read, growing);
        if outcome == StepOutcome::Undecided {
            self.undecided += 1;
            if self.undecided >= t.max_steps && !span_grew {
                return StepOutcome::Decided(AccessClass::Lc, ClassSource::Fallback);
            }
        }
        outcome
    }

    fn classify(&self, t: &ApdThresholds, read: &Read, growing: bool) -> StepOutcome {
        if self.touched.len() < t.min_pages {
            return StepOutcome::Undecided;
        }
        let decided = |c| StepOutcome::Decided(c, ClassSource::Profiled);
        if read.r2 > t.r2 {
            decided(AccessClass::Ls)
        } else if self.coverage() < t.coverage {
            if growing {
                StepOutcome::Undecided
            } else {
                decided(AccessClass::Lc)
            }
        } else {
            match self.estimated_intensity(read, t.min_recaptures) {
                Some(i) if i >= t.intensity => decided(AccessClass::Hchi),
                Some(_) => decided(AccessClass::Hcli),
                None => StepOutcome::Undecided,
            }
        }
    }
}
