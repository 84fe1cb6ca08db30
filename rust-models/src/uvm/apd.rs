//! Forest's access-pattern detector (APD): classifies one object from the ATT's
//! (page, access-time) records at each profiling interrupt.
//!
//! One profiling step looks at the window of records since the last decided step:
//! 1. fewer than `min_pages` distinct pages in the window → undecided, keep the window;
//! 2. **LS** when the linear regression of page number on access time has R² > `r2`;
//! 3. coverage = touched VPN span / object pages (all steps so far);
//!    coverage < `coverage` → **LC**;
//! 4. otherwise the object is high-coverage and intensity decides HCHI vs HCLI.
//!    Intensity = the fraction of the touched span that the object's access set fills.
//!    Early windows of a random pattern see only a sample of that set, so the detector
//!    estimates its size by capture–recapture: the share of this window's pages already
//!    touched in earlier windows estimates touched / final-set, hence final-set ≈
//!    touched / share. Once at least `min_recaptures` pages were seen again, estimated
//!    intensity ≥ `intensity` → **HCHI**, else **HCLI**; with fewer recaptures the step
//!    is undecided (the set is still growing and looks sparse whatever it will become);
//! 5. after `max_steps` undecided steps the object falls back to **LC**.

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

/// Profiling state of one object (the driver's copy of its access counters).
#[derive(Debug, Clone)]
pub struct ObjectProfile {
    pages: usize,
    /// Step (1-based) at which each page was first touched; 0 = never.
    first_touch_step: Vec<u32>,
    /// Last window (1-based) that saw the page; 0 = none.
    window_stamp: Vec<u32>,
    touched: usize,
    min_page: usize,
    max_page: usize,
    /// Steps taken (profiling interrupts serviced) and undecided ones.
    pub steps: u32,
    undecided: u32,
    window: Window,
}

#[derive(Debug, Clone, Default)]
struct Window {
    /// 1-based window number.
    id: u32,
    distinct: usize,
    recaptured: usize,
    /// Regression sums: x = access time, y = page.
    n: f64,
    sx: f64,
    sy: f64,
    sxx: f64,
    syy: f64,
    sxy: f64,
}

impl ObjectProfile {
    pub fn new(pages: usize) -> ObjectProfile {
        ObjectProfile {
            pages,
            first_touch_step: vec![0; pages],
            window_stamp: vec![0; pages],
            touched: 0,
            min_page: usize::MAX,
            max_page: 0,
            steps: 0,
            undecided: 0,
            window: Window {
                id: 1,
                ..Default::default()
            },
        }
    }

    /// One ATT record: `page` relative to the object start, `timer` its access time.
    pub fn record(&mut self, page: usize, timer: u32) {
        if page >= self.pages {
            return;
        }
        let w = &mut self.window;
        if self.window_stamp[page] != w.id {
            self.window_stamp[page] = w.id;
            w.distinct += 1;
            let first = self.first_touch_step[page];
            if first != 0 && first < w.id {
                w.recaptured += 1;
            }
        }
        if self.first_touch_step[page] == 0 {
            self.first_touch_step[page] = w.id;
            self.touched += 1;
            self.min_page = self.min_page.min(page);
            self.max_page = self.max_page.max(page);
        }
        let (x, y) = (timer as f64, page as f64);
        w.n += 1.0;
        w.sx += x;
        w.sy += y;
        w.sxx += x * x;
        w.syy += y * y;
        w.sxy += x * y;
    }

    /// R² of the window's regression of page on time (0 when either is constant).
    pub fn window_r2(&self) -> f64 {
        let w = &self.window;
        let vx = w.n * w.sxx - w.sx * w.sx;
        let vy = w.n * w.syy - w.sy * w.sy;
        if vx <= 0.0 || vy <= 0.0 {
            return 0.0;
        }
        let c = w.n * w.sxy - w.sx * w.sy;
        (c * c) / (vx * vy)
    }

    /// Touched VPN span / object pages.
    pub fn coverage(&self) -> f64 {
        if self.touched == 0 {
            return 0.0;
        }
        (self.max_page - self.min_page + 1) as f64 / self.pages as f64
    }

    /// Estimated final access-set size / touched span, or None without enough recaptures.
    pub fn estimated_intensity(&self, min_recaptures: usize) -> Option<f64> {
        let w = &self.window;
        if w.recaptured < min_recaptures.max(1) || self.touched == 0 {
            return None;
        }
        let before = self.touched - (w.distinct - w.recaptured);
        let share = w.recaptured as f64 / w.distinct as f64;
        let set = (before as f64 / share).max(self.touched as f64);
        let span = (self.max_page - self.min_page + 1) as f64;
        Some((set / span).min(1.0))
    }

    /// One profiling step (an ATT interrupt for this object).
    pub fn step(&mut self, t: &ApdThresholds) -> StepOutcome {
        self.steps += 1;
        let outcome = self.classify(t);
        match outcome {
            StepOutcome::Decided(..) => {}
            StepOutcome::Undecided => {
                self.undecided += 1;
                if self.undecided >= t.max_steps {
                    return StepOutcome::Decided(AccessClass::Lc, ClassSource::Fallback);
                }
            }
        }
        outcome
    }

    fn classify(&mut self, t: &ApdThresholds) -> StepOutcome {
        if self.window.distinct < t.min_pages {
            // Too little to say anything; the window keeps growing.
            return StepOutcome::Undecided;
        }
        let decided = |c| StepOutcome::Decided(c, ClassSource::Profiled);
        let outcome = if self.window_r2() > t.r2 {
            decided(AccessClass::Ls)
        } else if self.coverage() < t.coverage {
            decided(AccessClass::Lc)
        } else {
            match self.estimated_intensity(t.min_recaptures) {
                Some(i) if i >= t.intensity => decided(AccessClass::Hchi),
                Some(_) => decided(AccessClass::Hcli),
                None => StepOutcome::Undecided,
            }
        };
        // A new window starts after every evaluated step.
        self.window = Window {
            id: self.window.id + 1,
            ..Default::default()
        };
        outcome
    }
}
