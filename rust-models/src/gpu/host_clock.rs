//! A cheap host clock for attributing simulator time to the fault path.
//!
//! Under UVM a run makes millions of faulting attempts. Time-stamping every one cost 8 %
//! of a bfs Forest run on the development VM even with the x86-64 time-stamp counter
//! (~35 ns per read in the loop, 10 ns in isolation), so [`FaultTimer`] times a random
//! one in eight and scales by the count. Ticks are converted to seconds by calibrating
//! against an `Instant` measured over the same region ([`Stopwatch`]), so no TSC
//! frequency is assumed.

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
}

impl FaultTimer {
    /// Pseudo-random one-in-eight choice (SplitMix64: a Weyl sequence through the
    /// project's mixer, so no period of the event order lines up with it).
    #[inline]
    fn draw(&mut self) -> bool {
        self.draws = self.draws.wrapping_add(0x9e37_79b9_7f4a_7c15);
        mix64(self.draws) >> (64 - SAMPLE_SHIFT) == 0
    }

    /// A deferred replay attempt starts; `driver_secs` reads the service's driver time.
    #[inline]
    pub fn replay_start(&mut self, driver_secs: impl FnOnce() -> f64) {
        self.in_replay = true;
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
        if refaulted {
            self.episodes[Episode::Replay as usize] += 1;
            if let Some((t0, d0)) = self.replay_t0 {
                self.running = Some((Episode::Replay, t0, d0));
            }
        }
        self.replay_t0 = None;
    }

    /// A walk found no mapping (a replay attempt's fault is part of that attempt).
    #[inline]
    pub fn fault_found(&mut self, driver_secs: impl FnOnce() -> f64) {
        if self.in_replay {
            return;
        }
        self.episodes[Episode::Fault as usize] += 1;
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
            self.ticks[k] += ticks().saturating_sub(t0);
            self.driver_secs[k] += driver_secs() - d0;
        }
    }

    /// Estimated host seconds of all episodes, driver work excluded.
    pub fn estimated_seconds(&self, rate: &TickRate) -> f64 {
        (0..2)
            .filter(|&k| self.timed[k] > 0)
            .map(|k| {
                let gpu_side = (rate.seconds(self.ticks[k]) - self.driver_secs[k]).max(0.0);
                gpu_side * self.episodes[k] as f64 / self.timed[k] as f64
            })
            .sum()
    }

    /// Episodes (fresh faults, replays that faulted again) and how many were timed.
    pub fn counts(&self) -> ([u64; 2], [u64; 2]) {
        (self.episodes, self.timed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Ticks counted over part of a region convert to what the wall clock measured for
    /// that part, whatever the tick frequency (both clocks see the same interval, so host
    /// load does not matter).
    #[test]
    fn ticks_inside_a_region_convert_to_the_wall_time_of_that_part() {
        let sw = Stopwatch::start();
        std::thread::sleep(std::time::Duration::from_millis(10));
        let (wall, a) = (Instant::now(), ticks());
        std::thread::sleep(std::time::Duration::from_millis(20));
        let (inner, inner_wall) = (ticks() - a, wall.elapsed().as_secs_f64());
        std::thread::sleep(std::time::Duration::from_millis(10));
        let (secs, rate) = sw.stop();
        assert!(secs >= 0.04, "{secs}");
        let converted = rate.seconds(inner);
        assert!(
            (converted - inner_wall).abs() <= 0.02 * inner_wall + 1e-4,
            "{converted} s by ticks, {inner_wall} s by the wall clock"
        );
    }

    /// Every episode is counted, about one in eight is timed, replays that complete are
    /// neither, and the estimate scales the timed time, less the driver's, by the count.
    #[test]
    fn fault_timer_counts_every_episode_and_times_a_sample() {
        let mut f = FaultTimer::default();
        let driver = std::cell::Cell::new(0.0);
        let now = || driver.get();
        for i in 0..8000 {
            f.fault_found(now);
            driver.set(driver.get() + 1.0); // a batch inside the fault call
            f.handled(now);
            f.replay_start(now);
            f.replay_end(i % 2 == 0);
            f.handled(now);
        }
        let (episodes, timed) = f.counts();
        assert_eq!(episodes, [8000, 4000]);
        assert!((800..1200).contains(&timed[0]), "{timed:?}");
        assert!((350..650).contains(&timed[1]), "{timed:?}");
        assert_eq!(f.driver_secs, [timed[0] as f64, 0.0]);
        // At one second per tick the driver's second per fresh fault is all there was.
        let rate = TickRate { secs_per_tick: 1.0 };
        let gpu = |k: usize, n: f64| (f.ticks[k] as f64 - f.driver_secs[k]).max(0.0) * n;
        let expect = gpu(0, 8000.0 / timed[0] as f64) + gpu(1, 4000.0 / timed[1] as f64);
        // The same sum in another rounding order: equal to the last few bits.
        let got = f.estimated_seconds(&rate);
        assert!((got - expect).abs() <= 1e-12 * expect, "{got} vs {expect}");
    }
}
