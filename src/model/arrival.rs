//! Open-loop arrival times: Poisson or evenly spaced, scaled by a load profile.
//!
//! A Poisson process with a time-varying rate is drawn by thinning, one profile segment
//! at a time: candidates at the segment's highest rate `λ_max`, each kept with
//! probability `λ(t)/λ_max`; a segment of rate 0 is skipped, so the work per arrival is
//! bounded however far the profile drops below its peak. Constant arrivals are
//! computed from the arrival index, so no rounding accumulates: `t_k = k / rate`, and
//! under a load profile `t_k` is where the integrated rate `Λ(t)` reaches `k`, so a
//! step takes effect at once rather than after the gap in progress.
//!
//! A replayed trace ([`Replay`]) holds one arrival read ahead of the clock, and the
//! stream it reads from: its memory is bounded whatever the trace's length.

use crate::engine::variate::Exp1;
use rand::distr::Distribution;
use rand::Rng;
use rand::RngExt;

use crate::engine::time::{from_f64_ns, SECOND};
use crate::engine::Nanos;
use crate::model::config::{Arrival, ArrivalStream, LoadProfile, Replayed, TraceSource};

/// Generates a fleet's open-loop arrival times in `[0, end)`.
#[derive(Debug, Clone)]
pub(crate) struct OpenArrivals {
    poisson: bool,
    rate: f64,
    profile: Option<LoadProfile>,
    peak: f64,
    end: Nanos,
    index: u64,
    /// Constant arrivals under a profile: the start of the profile segment reached so
    /// far, and the integrated rate `Λ` (in arrivals) over `[0, seg_start)`.
    seg_start: Nanos,
    seg_lambda: f64,
    /// `SECOND / peak`: the mean gap in ns of a poisson process without a profile.
    mean_gap: f64,
}

impl OpenArrivals {
    /// For a poisson or constant arrival; `None` for closed or burst.
    pub(crate) fn new(arrival: &Arrival, profile: Option<LoadProfile>, end: Nanos) -> Option<Self> {
        let (poisson, rate) = match *arrival {
            Arrival::Poisson { rate } => (true, rate),
            Arrival::Constant { rate } => (false, rate),
            _ => return None,
        };
        let peak = rate * profile.as_ref().map_or(1.0, |p| p.max());
        Some(OpenArrivals {
            poisson,
            rate,
            profile,
            peak,
            end,
            index: 0,
            seg_start: 0,
            seg_lambda: 0.0,
            mean_gap: SECOND as f64 / peak,
        })
    }

    fn rate_at(&self, t: Nanos) -> f64 {
        self.rate * self.profile.as_ref().map_or(1.0, |p| p.at(t))
    }

    /// The first arrival after `now` (the first call gives the first arrival of the run,
    /// with `now = 0`), or `None` when the window is over.
    pub(crate) fn next<R: Rng + ?Sized>(&mut self, now: Nanos, rng: &mut R) -> Option<Nanos> {
        let t = if self.poisson {
            self.next_poisson(now, rng)?
        } else {
            self.next_constant()?
        };
        self.index += 1;
        (t < self.end).then_some(t)
    }

    /// The profile segment `[t, until)` holding `t` and the highest rate in it: the
    /// rate is constant (steps) or linear (ramp) between two changes.
    fn segment(&self, t: Nanos) -> (f64, Nanos) {
        let Some(p) = &self.profile else {
            return (self.peak, Nanos::MAX);
        };
        let until = p.next_change(t).unwrap_or(Nanos::MAX);
        let bound = match p {
            LoadProfile::Steps(_) => self.rate_at(t),
            LoadProfile::Ramp(_) if until == Nanos::MAX => self.rate_at(t),
            LoadProfile::Ramp(_) => self.rate_at(t).max(self.rate_at(until)),
        };
        (bound, until)
    }

    /// Thinning segment by segment: candidates at the segment's highest rate, each kept
    /// with probability `λ(t)/bound`. A candidate past the segment's end is dropped and
    /// drawing restarts there (exact: the process is memoryless). A segment of rate 0
    /// is skipped whole, so work per arrival is bounded however low the profile goes.
    fn next_poisson<R: Rng + ?Sized>(&mut self, now: Nanos, rng: &mut R) -> Option<Nanos> {
        if self.peak <= 0.0 {
            return None;
        }
        if self.profile.is_none() {
            // One rate: the same arithmetic as the loop below (`SECOND / bound * x`,
            // left to right), without its segment lookups.
            let x: f64 = Exp1.sample(rng);
            let t = now.saturating_add(from_f64_ns(self.mean_gap * x));
            return (t < self.end).then_some(t);
        }
        let mut t = now;
        loop {
            let (bound, until) = self.segment(t);
            if bound <= 0.0 {
                if until >= self.end {
                    return None;
                }
                t = until;
                continue;
            }
            let x: f64 = Exp1.sample(rng);
            let candidate = t.saturating_add(from_f64_ns(SECOND as f64 / bound * x));
            if candidate >= until {
                if until >= self.end {
                    return None;
                }
                t = until;
                continue;
            }
            if candidate >= self.end {
                return None;
            }
            t = candidate;
            if self.profile.is_none() {
                return Some(t);
            }
            let u: f64 = rng.random();
            if u * bound < self.rate_at(t) {
                return Some(t);
            }
        }
    }

    /// Arrival `k` at `t_k = k / rate`, or, under a profile, where `Λ(t) = k`: found
    /// segment by segment from the segment reached so far (steps have a constant rate
    /// in a segment, a ramp a linear one), so the cost per arrival is bounded and
    /// nothing is accumulated from one arrival to the next.
    fn next_constant(&mut self) -> Option<Nanos> {
        let Some(p) = &self.profile else {
            return Some(from_f64_ns(self.index as f64 * SECOND as f64 / self.rate));
        };
        let target = self.index as f64;
        loop {
            let t0 = self.seg_start;
            let until = p.next_change(t0).unwrap_or(Nanos::MAX);
            let r0 = self.rate_at(t0);
            let r1 = match p {
                LoadProfile::Ramp(_) if until != Nanos::MAX => self.rate_at(until),
                _ => r0,
            };
            let len_s = (until - t0) as f64 / SECOND as f64;
            let seg = if until == Nanos::MAX {
                if r0 > 0.0 {
                    f64::INFINITY
                } else {
                    0.0
                }
            } else {
                (r0 + r1) / 2.0 * len_s
            };
            let need = target - self.seg_lambda;
            if need < seg {
                // Solve r0·x + (r1 − r0)/(2·len)·x² = need for x in seconds, in the
                // form that stays exact when the rate is (nearly) constant.
                let a = if until == Nanos::MAX {
                    0.0
                } else {
                    (r1 - r0) / (2.0 * len_s)
                };
                let x = 2.0 * need / (r0 + (r0 * r0 + 4.0 * a * need).max(0.0).sqrt());
                let x = if x.is_finite() { x.max(0.0) } else { 0.0 };
                return Some(t0.saturating_add(from_f64_ns(x * SECOND as f64)).min(until));
            }
            if until >= self.end {
                return None;
            }
            self.seg_lambda += seg;
            self.seg_start = until;
        }
    }
}

/// A fleet's replayed trace: the stream and the one arrival read ahead (due next).
pub(crate) struct Replay {
    /// The open stream; `None` once the replay is over (the file is then closed).
    stream: Option<Box<dyn ArrivalStream>>,
    /// The arrival scheduled next.
    due: Option<Replayed>,
    /// The end of arrivals: later rows are not read.
    end: Nanos,
    /// Why the replay stopped early, if it did.
    failed: Option<String>,
}

impl Replay {
    /// Opens `source` for arrivals in `[0, end)`.
    pub(crate) fn new(source: &dyn TraceSource, end: Nanos) -> Replay {
        let (stream, failed) = match source.open() {
            Ok(s) => (Some(s), None),
            Err(e) => (None, Some(e)),
        };
        Replay {
            stream,
            due: None,
            end,
            failed,
        }
    }

    /// Reads the next arrival: its time, or `None` when the replay is over (the end
    /// of the trace, a row at or past the end of arrivals, or a failure).
    pub(crate) fn advance(&mut self) -> Option<Nanos> {
        let stream = self.stream.as_mut()?;
        let last = self.due.map_or(0, |d| d.at);
        match stream.next_arrival() {
            Ok(Some(r)) if r.at < last => {
                self.failed = Some(format!(
                    "gave an arrival at {} ns after one at {last} ns",
                    r.at
                ));
            }
            Ok(Some(r)) if r.at < self.end => {
                self.due = Some(r);
                return Some(r.at);
            }
            Ok(Some(_)) => {
                if let Err(e) = stream.stop() {
                    self.failed = Some(e);
                }
            }
            Ok(None) => {}
            Err(e) => self.failed = Some(e),
        }
        self.stream = None;
        self.due = None;
        None
    }

    /// The arrival due now (read by the last [`Self::advance`]).
    pub(crate) fn due(&self) -> Option<Replayed> {
        self.due
    }

    /// Why the replay stopped early, if it did.
    pub(crate) fn failure(&self) -> Option<&str> {
        self.failed.as_deref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::rng::stream;

    /// Every arrival time of `arrival` (scaled by `profile`) in `[0, end)`.
    fn times(arrival: Arrival, profile: Option<LoadProfile>, end: Nanos, seed: u64) -> Vec<Nanos> {
        let mut a = OpenArrivals::new(&arrival, profile, end).unwrap();
        let mut r = stream(seed, "a");
        let (mut ts, mut now) = (vec![], 0);
        while let Some(t) = a.next(now, &mut r) {
            ts.push(t);
            now = t;
        }
        ts
    }

    /// A source replaying `times` (ns), counting the streams stopped early.
    #[derive(Debug)]
    struct Times(Vec<Nanos>, std::sync::Arc<std::sync::atomic::AtomicU32>);

    struct TimesStream(
        std::vec::IntoIter<Nanos>,
        std::sync::Arc<std::sync::atomic::AtomicU32>,
    );

    impl TraceSource for Times {
        fn open(&self) -> Result<Box<dyn ArrivalStream>, String> {
            Ok(Box::new(TimesStream(
                self.0.clone().into_iter(),
                self.1.clone(),
            )))
        }
        fn mean_rate(&self, _: Nanos) -> f64 {
            0.0
        }
    }

    impl ArrivalStream for TimesStream {
        fn next_arrival(&mut self) -> Result<Option<Replayed>, String> {
            Ok(self.0.next().map(|at| Replayed {
                at,
                client: None,
                write: None,
            }))
        }
        fn stop(&mut self) -> Result<(), String> {
            self.1.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            Ok(())
        }
    }

    fn replayed(times: Vec<Nanos>, end: Nanos) -> (Vec<Nanos>, Option<String>, u32) {
        let stops = std::sync::Arc::new(std::sync::atomic::AtomicU32::new(0));
        let mut r = Replay::new(&Times(times, stops.clone()), end);
        let mut out = vec![];
        while let Some(t) = r.advance() {
            assert_eq!(r.due().map(|d| d.at), Some(t));
            out.push(t);
        }
        assert_eq!(r.advance(), None, "an ended replay stays ended");
        let stopped = stops.load(std::sync::atomic::Ordering::Relaxed);
        (out, r.failure().map(str::to_string), stopped)
    }

    #[test]
    fn a_replay_gives_its_times_until_the_end_and_stops_reading_there() {
        assert_eq!(replayed(vec![0, 5, 5, 9], 10), (vec![0, 5, 5, 9], None, 0));
        // A row at the end is not replayed, and the stream is stopped (checked).
        assert_eq!(replayed(vec![0, 5, 10, 11], 10), (vec![0, 5], None, 1));
        let (out, why, _) = replayed(vec![0, 5, 4], 10);
        assert_eq!(out, vec![0, 5]);
        assert_eq!(
            why.as_deref(),
            Some("gave an arrival at 4 ns after one at 5 ns")
        );
    }

    /// How many of `ts` fall before `t` and how many at or after it.
    fn split(ts: &[Nanos], t: Nanos) -> (usize, usize) {
        let before = ts.iter().filter(|x| **x < t).count();
        (before, ts.len() - before)
    }

    #[test]
    fn constant_arrivals_are_evenly_spaced_without_drift() {
        let ts = times(Arrival::Constant { rate: 3.0 }, None, 10 * SECOND, 1);
        assert_eq!(ts.len(), 30);
        assert_eq!(ts[0], 0);
        assert_eq!(ts[3], SECOND);
        assert_eq!(ts[29], 9_666_666_667);
    }

    #[test]
    fn poisson_count_matches_rate_times_window() {
        // 100k expected arrivals; sd = 316 (0.3%); allow 1.5%.
        let n = times(Arrival::Poisson { rate: 1000.0 }, None, 100 * SECOND, 2).len();
        assert!((n as f64 / 100_000.0 - 1.0).abs() < 0.015, "{n}");
    }

    #[test]
    fn a_step_profile_scales_the_poisson_rate() {
        let prof = LoadProfile::Steps(vec![(0, 1.0), (50 * SECOND, 3.0)]);
        let ts = times(
            Arrival::Poisson { rate: 500.0 },
            Some(prof),
            100 * SECOND,
            3,
        );
        let (before, after) = split(&ts, 50 * SECOND);
        // Expected 25k and 75k (sd ≈ 160 and 270); allow 2%.
        assert!((before as f64 / 25_000.0 - 1.0).abs() < 0.02, "{before}");
        assert!((after as f64 / 75_000.0 - 1.0).abs() < 0.02, "{after}");
    }

    #[test]
    fn a_poisson_profile_that_drops_to_zero_ends_without_drawing_through_the_gap() {
        // 1e6/s for 1 ms, then nothing for a million seconds: about 1000 arrivals (sd
        // 32). Thinning at the peak rate would draw 1e12 candidates through the gap.
        let prof = LoadProfile::Steps(vec![(0, 1.0), (1_000_000, 0.0)]);
        let ts = times(
            Arrival::Poisson { rate: 1e6 },
            Some(prof),
            1_000_000 * SECOND,
            4,
        );
        for t in &ts {
            assert!(*t < 1_000_000, "an arrival at {t} ns, in the zero segment");
        }
        let n = ts.len();
        assert!((850..1150).contains(&n), "{n}");
    }

    #[test]
    fn a_poisson_profile_far_below_its_peak_draws_at_the_segment_rate() {
        // 1e5/s for 1 s, then 1e-4/s for 10^5 s: the quiet part holds about 10
        // arrivals, and no longer costs 10^10 candidates at the peak rate.
        let prof = LoadProfile::Steps(vec![(0, 1000.0), (SECOND, 1e-6)]);
        let ts = times(
            Arrival::Poisson { rate: 100.0 },
            Some(prof),
            100_001 * SECOND,
            6,
        );
        let (loud, quiet) = split(&ts, SECOND);
        // Expected 100000 (sd 316) and 10 (sd 3.2).
        assert!((98_500..101_500).contains(&loud), "{loud}");
        assert!(quiet <= 30, "{quiet}");
    }

    #[test]
    fn a_poisson_ramp_has_the_rate_of_its_line() {
        // Rate 1000 × a ramp from 0 to 2 over 100 s: 25000 arrivals expected in the first
        // half and 75000 in the second (sd 158 and 274); allow 2%.
        let prof = LoadProfile::Ramp(vec![(0, 0.0), (100 * SECOND, 2.0)]);
        let ts = times(
            Arrival::Poisson { rate: 1000.0 },
            Some(prof),
            100 * SECOND,
            7,
        );
        let (first, second) = split(&ts, 50 * SECOND);
        assert!((first as f64 / 25_000.0 - 1.0).abs() < 0.02, "{first}");
        assert!((second as f64 / 75_000.0 - 1.0).abs() < 0.02, "{second}");
    }

    #[test]
    fn constant_profile_with_a_zero_step_pauses() {
        let prof = LoadProfile::Steps(vec![(0, 1.0), (2 * SECOND, 0.0), (4 * SECOND, 1.0)]);
        let ts = times(Arrival::Constant { rate: 2.0 }, Some(prof), 6 * SECOND, 1);
        let s: Vec<f64> = ts.iter().map(|t| *t as f64 / 1e9).collect();
        assert_eq!(s, vec![0.0, 0.5, 1.0, 1.5, 4.0, 4.5, 5.0, 5.5]);
    }

    #[test]
    fn a_constant_step_takes_effect_at_once() {
        // 1/s, then 100/s over [0.5 s, 1.5 s): Λ = 0.5 at the step, so arrival 1 comes
        // 5 ms after it, not after the 1 s gap in progress; 100 arrivals in the spike.
        let prof = LoadProfile::Steps(vec![(SECOND / 2, 100.0), (3 * SECOND / 2, 1.0)]);
        let ts = times(Arrival::Constant { rate: 1.0 }, Some(prof), 3 * SECOND, 1);
        assert_eq!(ts[0], 0);
        assert_eq!(ts[1], 505_000_000);
        let spike = ts
            .iter()
            .filter(|t| (SECOND / 2..3 * SECOND / 2).contains(*t))
            .count();
        assert_eq!(spike, 100);
        // Λ(1.5 s) = 100.5: arrival 101 at 2.0 s, arrival 102 at 3.0 s is past the end.
        assert_eq!(ts.last(), Some(&(2 * SECOND)));
        assert_eq!(ts.len(), 102);
    }

    #[test]
    fn a_constant_ramp_places_arrivals_on_its_integrated_rate() {
        // 10/s × a ramp from 0 to 2 over 10 s: Λ(t) = t², so arrival k at √k seconds.
        let prof = LoadProfile::Ramp(vec![(0, 0.0), (10 * SECOND, 2.0)]);
        let ts = times(Arrival::Constant { rate: 10.0 }, Some(prof), 10 * SECOND, 1);
        assert_eq!(ts.len(), 100);
        for (k, t) in ts.iter().enumerate() {
            let want = (k as f64).sqrt() * 1e9;
            assert!(
                (*t as f64 - want).abs() <= 2.0,
                "arrival {k} at {t}, want {want}"
            );
        }
    }
}
