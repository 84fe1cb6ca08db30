//! A cheap host clock for attributing simulator time to the fault path.
//!
//! Under UVM a run makes millions of faulting attempts. Time-stamping every one cost 8 %
//! of a bfs Forest run on the development VM even with the x86-64 time-stamp counter
//! (~35 ns per read in the loop, 10 ns in isolation), so [`FaultTimer`] times a random
//! one in eight and scales by the count. Ticks are converted to seconds by calibrating
//! against an `Instant` measured over the same region ([`Stopwatch`]), so no TSC
//! frequency is assumed.
//!
//! A timed interval also holds part of its own time stamps' cost, which the episodes
//! nobody timed did not pay; scaled by eight it would be counted as fault handling eight
//! times over. [`FaultTimer::new`] measures what a stamp adds to an interval and every
//! timed interval has it taken out.

use std::time::Instant;

use crate::workload::rng::mix64;

/// The current host tick: the time-stamp counter on x86-64, else nanoseconds since the
/// first call.
#[inline(always)]
pub fn ticks() -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: RDTSC is part of the x86-64 baseline and has no memory effects.
        unsafe { core::arch::x86_64::_rdtsc() }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        use std::sync::OnceLock;
        static ORIGIN: OnceLock<Instant> = OnceLock::new();
        ORIGIN.get_or_init(Instant::now).elapsed().as_nanos() as u64
    }
}

/// Wall time of a region and its length in ticks, so tick counts taken inside it can be
/// turned into seconds.
#[derive(Debug, Clone, Copy)]
pub struct Stopwatch {
    wall: Instant,
    t0: u64,
}

impl Stopwatch {
    pub fn start() -> Stopwatch {
        Stopwatch {
            wall: Instant::now(),
            t0: ticks(),
        }
    }

    /// Seconds since the start, and a converter from ticks counted since then to seconds.
    pub fn stop(&self) -> (f64, TickRate) {
        let secs = self.wall.elapsed().as_secs_f64();
        let ticks = ticks().saturating_sub(self.t0);
        (
            secs,
            TickRate {
                secs_per_tick: if ticks == 0 { 0.0 } else { secs / ticks as f64 },
            },
        )
    }
}

/// Seconds per tick over a measured region.
#[derive(Debug, Clone, Copy)]
pub struct TickRate {
    secs_per_tick: f64,
}

impl TickRate {
    pub fn seconds(&self, ticks: u64) -> f64 {
        ticks as f64 * self.secs_per_tick
    }
}

/// One in `1 << SAMPLE_SHIFT` fault episodes is timed.
const SAMPLE_SHIFT: u32 = 3;

/// Mean number of event-loop events between two sampled ones, whose start and translation
/// attempts are time-stamped for a fault's discovery and a replay's dequeue or re-issue.
/// An event is sampled before anyone knows whether a fault follows, so most samples are
/// thrown away; sparse, so their stamps cost little.
const START_PERIOD: u64 = 32;

/// The kinds of fault episode, estimated separately: a fresh access whose walk found no
/// mapping (timed from that walk), and a deferred replay that faulted again (timed
/// whole, from its issue).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Episode {
    Fault = 0,
    Replay = 1,
}

/// Host time of the GPU model's fault path, estimated from a random sample of its
/// episodes: each kind's timed time × its episodes / its timed episodes. The memory
/// service's own driver work inside a timed episode (a batch it closed, measured by the
/// service) is taken out, so the estimate is of the GPU side only and a rare heavy batch
/// does not get multiplied by eight.
///
/// Two parts are estimated apart, for the reason a replay that faults again is timed
/// whole (the work is repeated only because a page has not arrived), from event-loop events
/// sampled at their start — one in about [`START_PERIOD`], at random — because no one
/// knows at that start whether a fault will follow: a fresh fault's *discovery*, its
/// translation attempt's TLB probes and page-table lookup before the walk that found no
/// mapping (the completing replay probes the page again); the *dequeue* of a replay that
/// faults again, from before the event loop's pop that took it off the ready queue to its
/// start; and the *re-issue* of a replay that completes, from before its pop to its first
/// translation attempt (a fault-free access has one event, not two; the replay's
/// translation and data access are the access's own work and stay counted).
#[derive(Debug, Clone, Default)]
pub struct FaultTimer {
    episodes: [u64; 2],
    timed: [u64; 2],
    ticks: [u64; 2],
    /// Seconds of driver work inside the timed episodes.
    driver_secs: [f64; 2],
    draws: u64,
    /// A replay attempt is being issued, and its start (tick, driver seconds) if timed.
    in_replay: bool,
    replay_t0: Option<(u64, f64)>,
    /// The running episode, if timed: its kind and start.
    running: Option<(Episode, u64, f64)>,
    /// Ticks a time stamp adds to an interval it bounds, taken out of each timed one.
    stamp_ticks: u64,
    /// Whether the run is timed at all (a memory service that defers replays).
    enabled: bool,
    /// Event-loop events until the next sampled one; within a sampled event its start and
    /// its latest translation attempt's start.
    countdown: u64,
    event_t0: Option<u64>,
    attempt_t0: Option<u64>,
    /// The running replay's dequeue (from before the event loop's pop to its start) and its
    /// re-issue (to its first translation attempt), if timed.
    running_dequeue: Option<u64>,
    running_reissue: Option<u64>,
    /// Replays that completed.
    replays_completed: u64,
    /// Fresh faults' discovery, refaulting replays' dequeue, completed replays' re-issue.
    discovery: SampledPart,
    dequeue: SampledPart,
    reissue: SampledPart,
}

/// One part of the fault path estimated from a sample of its intervals.
#[derive(Debug, Clone, Copy, Default)]
struct SampledPart {
    timed: u64,
    ticks: u64,
}

impl SampledPart {
    fn add(&mut self, ticks: u64) {
        self.timed += 1;
        self.ticks += ticks;
    }

    /// Seconds of all `of` intervals: the timed ones' mean, scaled.
    fn seconds(&self, rate: &TickRate, of: u64) -> f64 {
        if self.timed == 0 {
            return 0.0;
        }
        rate.seconds(self.ticks) * of as f64 / self.timed as f64
    }
}

impl FaultTimer {
    /// A timer whose stamp cost is measured on this host; `enabled` when the memory
    /// service defers replays (a UVM run, whose speed excludes fault handling), else
    /// nothing is timed and the hooks cost a branch.
    pub fn new(enabled: bool) -> FaultTimer {
        FaultTimer {
            enabled,
            stamp_ticks: if enabled { stamp_cost() } else { 0 },
            ..FaultTimer::default()
        }
    }

    /// The event loop is about to take its next event from the ready queue (which may be a
    /// replay: its dequeue is part of the replay attempt). One in about [`START_PERIOD`]
    /// events, at random intervals so no periodic pattern lines up with them, is sampled:
    /// its start is stamped, and so is each of its translation attempts'.
    #[inline]
    pub fn event_start(&mut self) {
        if !self.enabled {
            return;
        }
        if self.countdown > 1 {
            self.countdown -= 1;
            self.event_t0 = None;
            return;
        }
        // Uniform in 1 ..= 2 * PERIOD - 1: mean PERIOD.
        self.countdown = 1 + self.random() % (2 * START_PERIOD - 1);
        self.event_t0 = Some(ticks());
    }

    /// A translation attempt starts: stamped in a sampled event, outside a replay (which
    /// is timed whole if it faults); a replay's first attempt ends its re-issue.
    #[inline]
    pub fn attempt_start(&mut self) {
        let Some(t0) = self.event_t0 else {
            return;
        };
        if !self.in_replay {
            self.attempt_t0 = Some(ticks());
        } else if self.running_reissue.is_none() {
            self.running_reissue = Some(self.interval(t0));
        }
    }

    /// The next pseudo-random word (SplitMix64: a Weyl sequence through the project's
    /// mixer, so no period of the event order lines up with it).
    #[inline]
    fn random(&mut self) -> u64 {
        self.draws = self.draws.wrapping_add(0x9e37_79b9_7f4a_7c15);
        mix64(self.draws)
    }

    /// Pseudo-random one-in-eight choice of an episode to time.
    #[inline]
    fn draw(&mut self) -> bool {
        self.random() >> (64 - SAMPLE_SHIFT) == 0
    }

    /// A deferred replay attempt starts; `driver_secs` reads the service's driver time.
    #[inline]
    pub fn replay_start(&mut self, driver_secs: impl FnOnce() -> f64) {
        self.in_replay = true;
        self.running_dequeue = self.event_t0.map(|t0| self.interval(t0));
        self.running_reissue = None;
        self.replay_t0 = if self.draw() {
            Some((ticks(), driver_secs()))
        } else {
            None
        };
    }

    /// The replay attempt returned; `refaulted` if it deferred again.
    #[inline]
    pub fn replay_end(&mut self, refaulted: bool) {
        self.in_replay = false;
        let (dequeue, reissue) = (self.running_dequeue.take(), self.running_reissue.take());
        let timed = self.replay_t0.take();
        if refaulted {
            self.episodes[Episode::Replay as usize] += 1;
            if let Some(d) = dequeue {
                self.dequeue.add(d);
            }
            if let Some((t0, d0)) = timed {
                self.running = Some((Episode::Replay, t0, d0));
            }
        } else {
            self.replays_completed += 1;
            if let Some(r) = reissue {
                self.reissue.add(r);
            }
        }
    }

    /// A walk found no mapping (a replay attempt's fault is part of that attempt).
    #[inline]
    pub fn fault_found(&mut self, driver_secs: impl FnOnce() -> f64) {
        if self.in_replay {
            return;
        }
        self.episodes[Episode::Fault as usize] += 1;
        if let Some(t0) = self.attempt_t0.take().filter(|_| self.event_t0.is_some()) {
            let d = self.interval(t0);
            self.discovery.add(d);
        }
        if self.draw() {
            self.running = Some((Episode::Fault, ticks(), driver_secs()));
        }
    }

    /// The fault is handled and the warp waits for its replay: the running episode ends.
    #[inline]
    pub fn handled(&mut self, driver_secs: impl FnOnce() -> f64) {
        if let Some((k, t0, d0)) = self.running.take() {
            let k = k as usize;
            self.timed[k] += 1;
            self.ticks[k] += self.interval(t0);
            self.driver_secs[k] += driver_secs() - d0;
        }
    }

    /// Ticks since `t0`, less what the stamps bounding the interval added to it.
    #[inline]
    fn interval(&self, t0: u64) -> u64 {
        ticks().saturating_sub(t0).saturating_sub(self.stamp_ticks)
    }

    /// Estimated host seconds of all episodes, driver work excluded, of the fresh faults'
    /// discovery, of the dequeue of the replays that faulted again and of the re-issue of
    /// those that completed.
    pub fn estimated_seconds(&self, rate: &TickRate) -> f64 {
        let episodes: f64 = (0..2)
            .filter(|&k| self.timed[k] > 0)
            .map(|k| {
                let gpu_side = (rate.seconds(self.ticks[k]) - self.driver_secs[k]).max(0.0);
                gpu_side * self.episodes[k] as f64 / self.timed[k] as f64
            })
            .sum();
        episodes + self.prelude_parts(rate).iter().map(|p| p.0).sum::<f64>()
    }

    /// The parts estimated from sampled event-loop events, each as (seconds, intervals
    /// timed): the fresh faults' discovery, the dequeue of the replays that faulted again,
    /// and the dequeue and re-issue of those that completed up to their first translation
    /// attempt (a fault-free access has no second event, so this is the fault's too; the
    /// replay's translation and data access are the access's own work and stay counted).
    pub fn prelude_parts(&self, rate: &TickRate) -> [(f64, u64); 3] {
        let [fresh, refaulted] = self.episodes;
        [
            (self.discovery.seconds(rate, fresh), self.discovery.timed),
            (self.dequeue.seconds(rate, refaulted), self.dequeue.timed),
            (
                self.reissue.seconds(rate, self.replays_completed),
                self.reissue.timed,
            ),
        ]
    }

    /// Episodes (fresh faults, replays that faulted again) and how many were timed.
    pub fn counts(&self) -> ([u64; 2], [u64; 2]) {
        (self.episodes, self.timed)
    }
}

/// Ticks a pair of time stamps adds to the interval between them: the median of many
/// back-to-back pairs (what an empty interval measures).
fn stamp_cost() -> u64 {
    let mut d: Vec<u64> = (0..1001)
        .map(|_| {
            let a = ticks();
            ticks().saturating_sub(a)
        })
        .collect();
    d.sort_unstable();
    d[d.len() / 2]
}

#[cfg(test)]
#[path = "host_clock_tests.rs"]
mod tests;
