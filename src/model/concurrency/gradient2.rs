//! Netflix's Gradient2 limit (`Netflix/concurrency-limits` HEAD 78a74b9,
//! `limit/Gradient2Limit.java` and `limit/measurement/ExpAvgMeasurement.java`), as
//! its code does it:
//!
//! ```text
//! long = ExpAvg(long_window, warmup 10): the first 10 samples → their running mean;
//!        then v = v·(1 − 2/(long_window+1)) + x·2/(long_window+1)
//! on sample(rtt, inflight):
//!   short = rtt; long = long.add(rtt)
//!   if long / short > 2: long.value ·= 0.95         # fast recovery after overload
//!   if inflight < L/2: return                        # app-limited
//!   g = clamp(rtt_tolerance · long / short, 0.5, 1.0)
//!   new = L·g + queue_size; new = L·(1 − smoothing) + new·smoothing
//!   L = clamp(new, min_limit, max_concurrency)
//! ```
//!
//! The limit is `(int) L`, truncated. Defaults `initial_limit 20, min_limit 20,
//! max_concurrency 200, smoothing 0.2, queue_size 4, long_window 600,
//! rtt_tolerance 1.5`. The 0.95 decay during warm-up is lost at the next sample (the
//! running mean is recomputed from the sum), as in the Java. Usually wrapped in a
//! WindowedLimit (`window = { ... }`): then a sample is a window's mean RTT.
//! A zero RTT makes Java's arithmetic NaN and the limit 0 for good; unwindowed, a
//! zero-RTT sample is ignored here.

use serde::{Deserialize, Serialize};

use super::status::{rejected_of, Rejected, StatusFile};
use super::window::{self, WindowFile};
use super::{java_int, ConcurrencyLimitConfig};
use crate::engine::Nanos;
use crate::model::field::{Ctx, R};
use crate::model::text::fmt_num;

/// Default initial limit.
pub(crate) const DEFAULT_INITIAL_LIMIT: u64 = 20;
/// Default lower clamp.
pub(crate) const DEFAULT_MIN_LIMIT: u64 = 20;
/// Default upper clamp.
pub(crate) const DEFAULT_MAX_CONCURRENCY: u64 = 200;
/// Default smoothing.
pub(crate) const DEFAULT_SMOOTHING: f64 = 0.2;
/// Default growth allowed while latency is low.
pub(crate) const DEFAULT_QUEUE_SIZE: u64 = 4;
/// Default samples of the long-term RTT average.
pub(crate) const DEFAULT_LONG_WINDOW: u64 = 600;
/// Default tolerated RTT growth.
pub(crate) const DEFAULT_RTT_TOLERANCE: f64 = 1.5;
/// Samples averaged plainly before the exponential average starts.
pub(crate) const WARMUP: u32 = 10;

/// `{ kind = "gradient2", ... }` as written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Written {
    /// The limit before the first update.
    #[schemars(extend("default" = DEFAULT_INITIAL_LIMIT))]
    pub initial_limit: Option<u64>,
    /// The lowest limit.
    #[schemars(extend("default" = DEFAULT_MIN_LIMIT))]
    pub min_limit: Option<u64>,
    /// The highest limit.
    #[schemars(extend("default" = DEFAULT_MAX_CONCURRENCY))]
    pub max_concurrency: Option<u64>,
    /// Weight of the new estimate, in (0, 1].
    #[schemars(extend("default" = DEFAULT_SMOOTHING))]
    pub smoothing: Option<f64>,
    /// Growth per update while latency stays low.
    #[schemars(extend("default" = DEFAULT_QUEUE_SIZE))]
    pub queue_size: Option<u64>,
    /// Samples of the long-term RTT average.
    #[schemars(extend("default" = DEFAULT_LONG_WINDOW))]
    pub long_window: Option<u64>,
    /// RTT growth tolerated before the limit shrinks (at least 1).
    #[schemars(extend("default" = DEFAULT_RTT_TOLERANCE))]
    pub rtt_tolerance: Option<f64>,
    /// Aggregate samples per window first (Netflix's WindowedLimit).
    pub window: Option<WindowFile>,
    /// What a refused caller sees: 429 (default), 503 or "unavailable".
    #[schemars(extend("default" = 429))]
    pub status: Option<StatusFile>,
}

impl Written {
    /// The validated limit; `p` is the field path of the table.
    pub fn validate(&self, c: &Ctx, p: &str) -> R<ConcurrencyLimitConfig> {
        let f = |k: &str| format!("{p}.{k}");
        let int = |k: &str, v: Option<u64>, d: u64| java_int(c, &f(k), v.unwrap_or(d));
        let initial_limit = int("initial_limit", self.initial_limit, DEFAULT_INITIAL_LIMIT)?;
        let min_limit = int("min_limit", self.min_limit, DEFAULT_MIN_LIMIT)?;
        let max = self.max_concurrency.unwrap_or(DEFAULT_MAX_CONCURRENCY);
        let max_concurrency = java_int(
            c,
            &f("max_concurrency"),
            c.at_least(&f("max_concurrency"), max, 1)?,
        )?;
        if max_concurrency < min_limit {
            return c.err(
                f("max_concurrency"),
                format!("must be at least min_limit {min_limit} (found {max_concurrency})"),
            );
        }
        let smoothing = c.finite(&f("smoothing"), self.smoothing.unwrap_or(DEFAULT_SMOOTHING))?;
        if !(smoothing > 0.0 && smoothing <= 1.0) {
            return c.err(
                f("smoothing"),
                format!("must be above 0 and at most 1 (found {smoothing})"),
            );
        }
        let queue_size = int("queue_size", self.queue_size, DEFAULT_QUEUE_SIZE)?;
        let lw = self.long_window.unwrap_or(DEFAULT_LONG_WINDOW);
        let long_window = java_int(c, &f("long_window"), c.at_least(&f("long_window"), lw, 1)?)?;
        let tol = c.finite(
            &f("rtt_tolerance"),
            self.rtt_tolerance.unwrap_or(DEFAULT_RTT_TOLERANCE),
        )?;
        if tol < 1.0 {
            return c.err(
                f("rtt_tolerance"),
                format!("must be at least 1, as Gradient2Limit requires (found {tol})"),
            );
        }
        Ok(ConcurrencyLimitConfig::Gradient2(Config {
            initial_limit,
            min_limit,
            max_concurrency,
            smoothing,
            queue_size,
            long_window,
            rtt_tolerance: tol,
            window: window::validate(c, p, &self.window)?,
            status: rejected_of(c, p, &self.status, Rejected::Status(429))?,
        }))
    }
}

/// Validated settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Config {
    /// The limit before the first update.
    pub initial_limit: i32,
    /// Lower clamp.
    pub min_limit: i32,
    /// Upper clamp.
    pub max_concurrency: i32,
    /// Weight of the new estimate.
    pub smoothing: f64,
    /// Growth per update while latency stays low.
    pub queue_size: i32,
    /// Samples of the long-term average.
    pub long_window: i32,
    /// Tolerated RTT growth.
    pub rtt_tolerance: f64,
    /// WindowedLimit aggregation, if any.
    pub window: Option<window::Config>,
    /// What a refused caller sees.
    pub status: Rejected,
}

impl Default for Config {
    /// Netflix's defaults, unwindowed, answering 429.
    fn default() -> Config {
        Config {
            initial_limit: DEFAULT_INITIAL_LIMIT as i32,
            min_limit: DEFAULT_MIN_LIMIT as i32,
            max_concurrency: DEFAULT_MAX_CONCURRENCY as i32,
            smoothing: DEFAULT_SMOOTHING,
            queue_size: DEFAULT_QUEUE_SIZE as i32,
            long_window: DEFAULT_LONG_WINDOW as i32,
            rtt_tolerance: DEFAULT_RTT_TOLERANCE,
            window: None,
            status: Rejected::Status(429),
        }
    }
}

impl Config {
    /// What explain says of the limit.
    pub(super) fn describe(&self) -> String {
        format!(
            "Gradient2 concurrency limit (Netflix Gradient2Limit, 78a74b9): starts at {}, within [{}, {}]; each sample sets L to L·(1 − {s}) + (L·g + {})·{s} with g = clamp({}·long RTT / RTT, 0.5, 1), the long RTT an exponential average over {} samples (after a plain mean of the first 10) cut by 5% whenever it exceeds twice the RTT; no change while fewer than L/2 are in flight{}; refused callers are answered {}",
            self.initial_limit,
            self.min_limit,
            self.max_concurrency,
            self.queue_size,
            fmt_num(self.rtt_tolerance),
            self.long_window,
            window::describe(&self.window),
            self.status,
            s = fmt_num(self.smoothing),
        )
    }
}

/// `ExpAvgMeasurement(window, warmup = 10)`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct ExpAvg {
    value: f64,
    sum: f64,
    count: u32,
    factor: f64,
}

impl ExpAvg {
    /// An empty average over `window` samples.
    pub(crate) fn new(window: i32) -> ExpAvg {
        ExpAvg {
            value: 0.0,
            sum: 0.0,
            count: 0,
            factor: 2.0 / f64::from(window + 1),
        }
    }

    /// Adds a sample; the new value.
    pub(crate) fn add(&mut self, x: f64) -> f64 {
        if self.count < WARMUP {
            self.count += 1;
            self.sum += x;
            self.value = self.sum / f64::from(self.count);
        } else {
            self.value = self.value * (1.0 - self.factor) + x * self.factor;
        }
        self.value
    }

    /// The current value.
    #[cfg(test)]
    pub(crate) fn get(&self) -> f64 {
        self.value
    }
}

/// Gradient2's state.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Gradient2 {
    cfg: Config,
    estimated: f64,
    limit: i32,
    long_rtt: ExpAvg,
}

impl Gradient2 {
    /// The limit before any sample.
    pub(crate) fn new(cfg: Config) -> Gradient2 {
        Gradient2 {
            cfg,
            estimated: f64::from(cfg.initial_limit),
            limit: cfg.initial_limit,
            long_rtt: ExpAvg::new(cfg.long_window),
        }
    }

    /// The current limit, `(int) L`.
    pub(crate) fn limit(&self) -> i32 {
        self.limit
    }

    /// The estimate `L` before truncation.
    #[cfg(test)]
    pub(crate) fn estimate(&self) -> f64 {
        self.estimated
    }

    /// The long-term RTT (ns).
    #[cfg(test)]
    pub(crate) fn long_rtt(&self) -> f64 {
        self.long_rtt.get()
    }

    /// One sample (a zero RTT is ignored).
    pub(crate) fn on_sample(&mut self, rtt: Nanos, inflight: u32) {
        if rtt == 0 {
            return;
        }
        let l = self.estimated;
        let queue = f64::from(self.cfg.queue_size);
        let short = rtt as f64;
        let long = self.long_rtt.add(short);
        if long / short > 2.0 {
            self.long_rtt.value *= 0.95;
        }
        if f64::from(inflight) < l / 2.0 {
            return;
        }
        let g = (self.cfg.rtt_tolerance * long / short).clamp(0.5, 1.0);
        let new = l * g + queue;
        let new = l * (1.0 - self.cfg.smoothing) + new * self.cfg.smoothing;
        let new = new
            .min(f64::from(self.cfg.max_concurrency))
            .max(f64::from(self.cfg.min_limit));
        self.estimated = new;
        self.limit = new as i32;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::time::MILLISECOND;

    /// `ExpAvgMeasurementTest.testWarmup` at 78a74b9: window 100, warmup 10.
    #[test]
    fn netflix_exp_avg_warmup_test_is_replayed() {
        let mut a = ExpAvg::new(100);
        let expected = [10.0, 10.5, 11.0, 11.5, 12.0, 12.5, 13.0, 13.5, 14.0, 14.5];
        for (i, e) in expected.iter().enumerate() {
            a.add((i + 10) as f64);
            assert!((a.get() - e).abs() <= 0.01, "sample {i}");
        }
        a.add(100.0);
        assert!((a.get() - 16.2).abs() <= 0.1);
        let f = 2.0 / 101.0;
        assert_eq!(a.get(), 14.5 * (1.0 - f) + 100.0 * f);
    }

    #[test]
    fn steady_latency_grows_the_limit_by_the_smoothed_queue_size() {
        let mut g = Gradient2::new(Config::default());
        // g = clamp(1.5·10/10, .5, 1) = 1: new = 20 + 4, smoothed 20·0.8 + 24·0.2 = 20.8
        g.on_sample(10 * MILLISECOND, 20);
        assert_eq!(g.estimate(), 20.0 * 0.8 + 24.0 * 0.2);
        assert_eq!(g.limit(), 20);
        g.on_sample(10 * MILLISECOND, 20);
        assert_eq!(g.limit(), 21); // 20.8·0.8 + 24.8·0.2 = 21.6
    }

    #[test]
    fn rising_latency_shrinks_the_limit_by_at_most_half_per_update_then_smoothed() {
        let mut g = Gradient2::new(Config {
            initial_limit: 100,
            min_limit: 1,
            ..Config::default()
        });
        g.on_sample(10 * MILLISECOND, 100); // long 10, g = 1: 100·.8 + 104·.2 = 100.8
        assert_eq!(g.limit(), 100);
        // long = (10 + 100)/2 = 55; 1.5·55/100 = 0.825
        g.on_sample(100 * MILLISECOND, 100);
        let l = 100.8;
        let want = l * 0.8 + (l * 0.825 + 4.0) * 0.2;
        assert_eq!(g.estimate(), want);
        assert_eq!(g.limit(), want as i32);
    }

    #[test]
    fn app_limited_samples_leave_the_limit_but_feed_the_long_rtt() {
        let mut g = Gradient2::new(Config::default());
        g.on_sample(10 * MILLISECOND, 9); // 9 < 20/2
        assert_eq!(g.estimate(), 20.0);
        assert_eq!(g.long_rtt(), 10.0 * MILLISECOND as f64);
    }

    #[test]
    fn a_long_rtt_twice_the_sample_decays_by_five_percent() {
        let mut g = Gradient2::new(Config::default());
        for _ in 0..10 {
            g.on_sample(100 * MILLISECOND, 0);
        }
        let before = g.long_rtt();
        g.on_sample(10 * MILLISECOND, 0);
        let f = 2.0 / 601.0;
        let added = before * (1.0 - f) + 10e6 * f;
        assert_eq!(g.long_rtt(), added * 0.95);
    }
}
