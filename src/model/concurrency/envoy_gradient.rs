//! Envoy's adaptive concurrency filter, gradient controller (`envoyproxy/envoy`
//! `source/extensions/filters/http/adaptive_concurrency/controller/gradient_controller.cc`
//! at commit 054694f), as its code does it.
//!
//! The limit starts pinned at `min_concurrency` in a minRTT window. A minRTT window
//! (at start, then `min_rtt_interval + U{0..ceil(interval_ms·jitter)−1}` ms after the
//! previous one ends, and at once after 5 consecutive updates that left the limit at
//! `min_concurrency`) saves the limit, pins it to `min_concurrency`, clears the
//! samples and sets the epoch to now. Responses to requests sent before the epoch are
//! not sampled. When `request_count` samples are held, minRTT = their percentile, the
//! saved limit comes back, the next minRTT window is timed and the update timer
//! restarts. Every `update_interval` outside a minRTT window, if any samples are held:
//!
//! ```text
//! sampleRTT = percentile(samples); clear
//! g = clamp(minRTT·(1 + buffer) / sampleRTT, 0.5, 2.0)
//! limit = L·g; L = clamp((uint32)(limit + sqrt(limit)), min_concurrency, max_concurrency_limit)
//! ```
//!
//! A request is forwarded while fewer than L are outstanding, else answered 503
//! (`rq_blocked`). Samples are whole microseconds kept in a circllhist
//! ([`super::circllhist`]) and the percentile is its interpolated quantile truncated to
//! whole microseconds, as Envoy does; intervals are whole milliseconds. Defaults read in
//! the code: `sample_aggregate_percentile 50` (the docs' example uses 90), `jitter 15`,
//! `max_concurrency_limit 1000`, `request_count 50`, `min_concurrency 3`, `buffer 25`
//! (percentages); `update_interval` and `min_rtt_interval` are required (docs example:
//! 100ms and 60s). Newer Envoy adds `min_concurrency_limit`, which stops pinning the
//! limit during a minRTT window: not emulated (this is 054694f). When both timers are
//! due at the same instant the minRTT timer fires first.

use rand::{Rng, RngExt};
use serde::{Deserialize, Serialize};

use super::circllhist::Hist;
use super::status::{rejected_of, Rejected, StatusFile};
use super::ConcurrencyLimitConfig;
use crate::engine::time::{MICROSECOND, MILLISECOND};
use crate::engine::Nanos;
use crate::model::field::{in_range, Ctx, Dur, MAX_HORIZON, R};
use crate::model::text::{fmt_num, fmt_time};

/// Default percentile of the samples, in percent (the code's default, not the docs'
/// example 90).
pub(crate) const DEFAULT_SAMPLE_AGGREGATE_PERCENTILE: f64 = 50.0;
/// Default jitter of the minRTT interval, in percent.
pub(crate) const DEFAULT_JITTER: f64 = 15.0;
/// Default highest limit.
pub(crate) const DEFAULT_MAX_CONCURRENCY_LIMIT: u64 = 1000;
/// Default samples of a minRTT window.
pub(crate) const DEFAULT_REQUEST_COUNT: u64 = 50;
/// Default limit pinned during a minRTT window, also the lowest limit.
pub(crate) const DEFAULT_MIN_CONCURRENCY: u64 = 3;
/// Default headroom added to minRTT, in percent.
pub(crate) const DEFAULT_BUFFER: f64 = 25.0;
/// Consecutive updates at `min_concurrency` that start a minRTT window at once.
pub(crate) const MIN_CONCURRENCY_STREAK: u32 = 5;

/// `{ kind = "envoy_gradient", ... }` as written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Written {
    /// Time between limit updates (`concurrency_update_interval`; required, whole ms).
    pub update_interval: Option<Dur>,
    /// Time between minRTT windows (`min_rtt_calc_params.interval`; required, whole ms).
    pub min_rtt_interval: Option<Dur>,
    /// Samples a minRTT window collects.
    #[schemars(extend("default" = DEFAULT_REQUEST_COUNT))]
    pub request_count: Option<u64>,
    /// Jitter of the minRTT interval, in percent.
    #[schemars(extend("default" = DEFAULT_JITTER))]
    pub jitter: Option<f64>,
    /// The limit during a minRTT window, also the lowest.
    #[schemars(extend("default" = DEFAULT_MIN_CONCURRENCY))]
    pub min_concurrency: Option<u64>,
    /// Headroom added to minRTT, in percent.
    #[schemars(extend("default" = DEFAULT_BUFFER))]
    pub buffer: Option<f64>,
    /// The highest limit.
    #[schemars(extend("default" = DEFAULT_MAX_CONCURRENCY_LIMIT))]
    pub max_concurrency_limit: Option<u64>,
    /// Percentile of the samples taken as the RTT, in percent.
    #[schemars(extend("default" = DEFAULT_SAMPLE_AGGREGATE_PERCENTILE))]
    pub sample_aggregate_percentile: Option<f64>,
    /// What a refused caller sees: 503 (default), 429 or "unavailable".
    #[schemars(extend("default" = 503))]
    pub status: Option<StatusFile>,
}

impl Written {
    /// The validated controller; `p` is the field path of the table.
    pub fn validate(&self, c: &Ctx, p: &str) -> R<ConcurrencyLimitConfig> {
        let f = |k: &str| format!("{p}.{k}");
        let ms = |k: &str, v: Option<Dur>, what: &str| -> R<u64> {
            let Some(v) = v else {
                return c.err(
                    f(k),
                    format!("is required for kind = \"envoy_gradient\" ({what}, at least 1ms)"),
                );
            };
            if v.0 < MILLISECOND || v.0 > MAX_HORIZON {
                return c.err(
                    f(k),
                    format!(
                        "must be between 1ms and {} (found {})",
                        fmt_time(MAX_HORIZON),
                        fmt_time(v.0)
                    ),
                );
            }
            if v.0 % MILLISECOND != 0 {
                return c.err(
                    f(k),
                    format!(
                        "must be whole milliseconds, as Envoy reads it (found {})",
                        fmt_time(v.0)
                    ),
                );
            }
            Ok(v.0 / MILLISECOND)
        };
        let update_ms = ms(
            "update_interval",
            self.update_interval,
            "time between limit updates",
        )?;
        let min_rtt_ms = ms(
            "min_rtt_interval",
            self.min_rtt_interval,
            "time between minRTT windows",
        )?;
        let count = self.request_count.unwrap_or(DEFAULT_REQUEST_COUNT);
        let request_count = c.u32_field(
            &f("request_count"),
            c.at_least(&f("request_count"), count, 1)?,
        )?;
        let pct = |k: &str, v: Option<f64>, d: f64| in_range(c, &f(k), v.unwrap_or(d), 0.0, 100.0);
        let jitter = pct("jitter", self.jitter, DEFAULT_JITTER)?;
        let buffer = pct("buffer", self.buffer, DEFAULT_BUFFER)?;
        let percentile = pct(
            "sample_aggregate_percentile",
            self.sample_aggregate_percentile,
            DEFAULT_SAMPLE_AGGREGATE_PERCENTILE,
        )?;
        let min = self.min_concurrency.unwrap_or(DEFAULT_MIN_CONCURRENCY);
        let min_concurrency = c.u32_field(
            &f("min_concurrency"),
            c.at_least(&f("min_concurrency"), min, 1)?,
        )?;
        let max = self
            .max_concurrency_limit
            .unwrap_or(DEFAULT_MAX_CONCURRENCY_LIMIT);
        let max_concurrency_limit = c.u32_field(&f("max_concurrency_limit"), max)?;
        if max_concurrency_limit < min_concurrency {
            return c.err(
                f("max_concurrency_limit"),
                format!("must be at least min_concurrency {min_concurrency} (found {max_concurrency_limit})"),
            );
        }
        Ok(ConcurrencyLimitConfig::EnvoyGradient(Config {
            update_interval_ms: update_ms,
            min_rtt_interval_ms: min_rtt_ms,
            request_count,
            jitter: jitter / 100.0,
            min_concurrency,
            buffer: buffer / 100.0,
            max_concurrency_limit,
            percentile: percentile / 100.0,
            status: rejected_of(c, p, &self.status, Rejected::Status(503))?,
        }))
    }
}

/// Validated settings (percentages as fractions, as `GradientControllerConfig` holds
/// them).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Config {
    /// Time between limit updates (whole ms).
    pub update_interval_ms: u64,
    /// Time between minRTT windows (whole ms).
    pub min_rtt_interval_ms: u64,
    /// Samples a minRTT window collects.
    pub request_count: u32,
    /// Jitter of the minRTT interval, in [0, 1].
    pub jitter: f64,
    /// The limit during a minRTT window, also the lowest.
    pub min_concurrency: u32,
    /// Headroom added to minRTT, in [0, 1].
    pub buffer: f64,
    /// The highest limit.
    pub max_concurrency_limit: u32,
    /// Quantile of the samples, in [0, 1].
    pub percentile: f64,
    /// What a refused caller sees.
    pub status: Rejected,
}

impl Config {
    /// The code's defaults with the docs' example intervals (100ms, 60s).
    pub fn with_intervals(update_interval_ms: u64, min_rtt_interval_ms: u64) -> Config {
        Config {
            update_interval_ms,
            min_rtt_interval_ms,
            request_count: DEFAULT_REQUEST_COUNT as u32,
            jitter: DEFAULT_JITTER / 100.0,
            min_concurrency: DEFAULT_MIN_CONCURRENCY as u32,
            buffer: DEFAULT_BUFFER / 100.0,
            max_concurrency_limit: DEFAULT_MAX_CONCURRENCY_LIMIT as u32,
            percentile: DEFAULT_SAMPLE_AGGREGATE_PERCENTILE / 100.0,
            status: Rejected::Status(503),
        }
    }

    /// What explain says of the controller.
    pub(super) fn describe(&self) -> String {
        format!(
            "Envoy adaptive concurrency, gradient controller (054694f): every {} outside a minRTT window, sampleRTT = p{} of the responses since the last update and L = clamp(L·g + sqrt(L·g), {}, {}) truncated, with g = clamp(minRTT·{} / sampleRTT, 0.5, 2); minRTT is the p{} of {} responses measured while the limit is pinned to {} (at start, every {} plus up to {}% jitter, and after 5 updates in a row at {}); refused callers are answered {} (p{} is the code's default: the docs' example uses p90)",
            fmt_time(self.update_interval_ms * MILLISECOND),
            fmt_num(self.percentile * 100.0),
            self.min_concurrency,
            self.max_concurrency_limit,
            fmt_num(1.0 + self.buffer),
            fmt_num(self.percentile * 100.0),
            self.request_count,
            self.min_concurrency,
            fmt_time(self.min_rtt_interval_ms * MILLISECOND),
            fmt_num(self.jitter * 100.0),
            self.min_concurrency,
            self.status,
            fmt_num(self.percentile * 100.0),
        )
    }
}

/// The controller's state. Memory: the histogram of one window's samples
/// ([`Hist`]); everything else is a few words.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Controller {
    cfg: Config,
    limit: u32,
    /// The limit saved by a minRTT window; non-zero while in one.
    deferred: u32,
    min_rtt: Nanos,
    sample_rtt: Nanos,
    hist: Hist,
    consecutive_min: u32,
    epoch: Nanos,
    next_min_rtt: Option<Nanos>,
    next_update: Option<Nanos>,
}

impl Controller {
    /// The controller created at time 0: in a minRTT window, limit pinned.
    pub(crate) fn new(cfg: Config) -> Controller {
        let mut c = Controller {
            cfg,
            limit: cfg.min_concurrency,
            deferred: 0,
            min_rtt: 0,
            sample_rtt: 0,
            hist: Hist::new(),
            consecutive_min: 0,
            epoch: 0,
            next_min_rtt: None,
            next_update: None,
        };
        c.enter_min_rtt_window(0);
        c.next_update = Some(cfg.update_interval_ms * MILLISECOND);
        c
    }

    /// The current limit.
    pub(crate) fn limit(&self) -> u32 {
        self.limit
    }

    /// Whether a minRTT window is under way.
    pub(crate) fn in_min_rtt_window(&self) -> bool {
        self.deferred > 0
    }

    /// The last minRTT (ns; 0 before the first).
    #[cfg(test)]
    pub(crate) fn min_rtt(&self) -> Nanos {
        self.min_rtt
    }

    /// The last sampleRTT (ns; 0 before the first update).
    #[cfg(test)]
    pub(crate) fn sample_rtt(&self) -> Nanos {
        self.sample_rtt
    }

    /// Samples held.
    #[cfg(test)]
    pub(crate) fn samples(&self) -> u64 {
        self.hist.count()
    }

    /// When a timer is next due, if any: call [`Controller::on_tick`] then.
    pub(crate) fn next_tick(&self) -> Option<Nanos> {
        match (self.next_min_rtt, self.next_update) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Fires the timers due by `now`, in time order.
    pub(crate) fn on_tick(&mut self, now: Nanos) {
        loop {
            let min_rtt_due = self.next_min_rtt.filter(|&t| t <= now);
            let update_due = self.next_update.filter(|&t| t <= now);
            match (min_rtt_due, update_due) {
                (Some(a), Some(b)) if a <= b => self.fire_min_rtt(a),
                (Some(a), None) => self.fire_min_rtt(a),
                (_, Some(b)) => self.fire_update(b),
                (None, None) => return,
            }
        }
    }

    /// A response at `now` to a request sent at `sent` (Envoy's
    /// `recordLatencySample`); `rng` draws the jitter when it ends a minRTT window.
    pub(crate) fn on_sample<G: Rng + ?Sized>(&mut self, sent: Nanos, now: Nanos, rng: &mut G) {
        if sent < self.epoch {
            return;
        }
        let us = now.saturating_sub(sent) / MICROSECOND;
        self.hist.insert(us);
        if self.in_min_rtt_window() && self.hist.count() >= u64::from(self.cfg.request_count) {
            self.update_min_rtt(now, rng);
        }
    }

    fn fire_min_rtt(&mut self, at: Nanos) {
        self.next_min_rtt = None;
        self.enter_min_rtt_window(at);
    }

    fn fire_update(&mut self, at: Nanos) {
        self.next_update = None;
        if self.in_min_rtt_window() {
            return; // re-armed when the minRTT window ends
        }
        if self.hist.count() > 0 {
            self.sample_rtt = self.take_percentile();
            let new = self.new_limit();
            self.set_limit(new, at);
        }
        self.next_update = Some(at + self.cfg.update_interval_ms * MILLISECOND);
    }

    fn enter_min_rtt_window(&mut self, now: Nanos) {
        if self.in_min_rtt_window() {
            return;
        }
        self.deferred = self.limit;
        self.set_limit(self.cfg.min_concurrency, now);
        self.hist.clear();
        self.epoch = now;
    }

    fn update_min_rtt<G: Rng + ?Sized>(&mut self, now: Nanos, rng: &mut G) {
        self.min_rtt = self.take_percentile();
        self.set_limit(self.deferred, now);
        self.deferred = 0;
        let jittered = self.jittered_interval_ms(rng);
        self.next_min_rtt = Some(now + jittered * MILLISECOND);
        self.next_update = Some(now + self.cfg.update_interval_ms * MILLISECOND);
    }

    /// `applyJitter`: `interval + random() % ceil(interval·jitter)` ms.
    fn jittered_interval_ms<G: Rng + ?Sized>(&self, rng: &mut G) -> u64 {
        let interval = self.cfg.min_rtt_interval_ms;
        if self.cfg.jitter == 0.0 {
            return interval;
        }
        let range = (interval as f64 * self.cfg.jitter).ceil() as u32;
        interval + rng.random::<u64>() % u64::from(range.max(1))
    }

    /// `processLatencySamplesAndClear`: the percentile, truncated to whole µs.
    fn take_percentile(&mut self) -> Nanos {
        let q = self.hist.quantile(self.cfg.percentile).unwrap_or(0.0);
        self.hist.clear();
        (q as i32).max(0) as Nanos * MICROSECOND
    }

    /// `calculateNewLimit`.
    fn new_limit(&self) -> u32 {
        let m = self.min_rtt as f64;
        let buffered = m + m * self.cfg.buffer;
        let gradient = if self.sample_rtt == 0 {
            2.0 // a zero sampleRTT: C++ gives inf (or NaN), clamped to 2
        } else {
            (buffered / self.sample_rtt as f64).clamp(0.5, 2.0)
        };
        let limit = f64::from(self.limit) * gradient;
        let new = (limit + limit.sqrt()) as u32;
        new.min(self.cfg.max_concurrency_limit)
            .max(self.cfg.min_concurrency)
    }

    /// `updateConcurrencyLimit`, with its 5-in-a-row rule.
    fn set_limit(&mut self, new: u32, now: Nanos) {
        let old = self.limit;
        self.limit = new;
        let min = self.cfg.min_concurrency;
        if !self.in_min_rtt_window() && old == min && new == min {
            self.consecutive_min += 1;
        } else {
            self.consecutive_min = 0;
        }
        if self.consecutive_min >= MIN_CONCURRENCY_STREAK {
            self.next_min_rtt = Some(now);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::time::SECOND;
    use rand::SeedableRng;

    fn rng() -> rand_chacha::ChaCha8Rng {
        rand_chacha::ChaCha8Rng::seed_from_u64(42)
    }

    /// The controller out of its first minRTT window at time `t`, then given the
    /// minRTT `min_rtt` and the limit `limit`.
    fn settled(cfg: Config, min_rtt: Nanos, limit: u32) -> (Controller, Nanos) {
        let r = &mut rng();
        let mut c = Controller::new(cfg);
        let mut t = min_rtt;
        for _ in 0..cfg.request_count {
            t += MILLISECOND;
            c.on_sample(t - min_rtt, t, r);
        }
        assert!(!c.in_min_rtt_window());
        // every sample in the bin of min_rtt: p50 is the middle of that bin
        assert!(c.min_rtt() >= min_rtt && c.min_rtt() < min_rtt + min_rtt / 10);
        c.min_rtt = min_rtt;
        c.limit = limit;
        (c, t)
    }

    /// Vector VA6 of ADMISSION.md §14: L = 100, minRTT 10ms, buffer 25%: a sampleRTT
    /// of 20ms gives 70, of 5ms gives 214.
    #[test]
    fn envoy_gradient_arithmetic_is_replayed() {
        let cfg = Config::with_intervals(100, 60_000);
        for (sample, want) in [(20 * MILLISECOND, 70), (5 * MILLISECOND, 214)] {
            let (mut c, _) = settled(cfg, 10 * MILLISECOND, 100);
            c.sample_rtt = sample;
            assert_eq!(c.new_limit(), want, "sampleRTT {}", fmt_time(sample));
        }
    }

    #[test]
    fn an_update_takes_the_percentile_of_the_window_then_sets_the_limit() {
        let cfg = Config::with_intervals(100, 60_000);
        let (mut c, t) = settled(cfg, 10 * MILLISECOND, 100);
        let r = &mut rng();
        // four responses of 20ms: bin [20000, 21000) µs, p50 = 20000 + 2/4·1000
        for _ in 0..4 {
            c.on_sample(t, t + 20 * MILLISECOND, r);
        }
        let due = c.next_tick().unwrap();
        assert_eq!(due, t + 100 * MILLISECOND);
        c.on_tick(due);
        assert_eq!(c.sample_rtt(), 20_500 * MICROSECOND);
        // g = 12.5 / 20.5; limit = 100·g = 60.97...; + sqrt = 68.78 → 68
        let l = 100.0 * (12.5e6 / 20.5e6);
        assert_eq!(c.limit(), (l + f64::sqrt(l)) as u32);
        assert_eq!(c.samples(), 0);
        // no samples: the next update changes nothing and re-arms
        c.on_tick(due + 100 * MILLISECOND);
        assert_eq!(c.limit(), (l + f64::sqrt(l)) as u32);
        assert_eq!(c.next_update, Some(due + 200 * MILLISECOND));
    }

    #[test]
    fn the_limit_is_pinned_during_a_min_rtt_window_and_restored_after() {
        let mut cfg = Config::with_intervals(100, 1000);
        cfg.jitter = 0.0;
        cfg.request_count = 3;
        let r = &mut rng();
        let mut c = Controller::new(cfg);
        assert!(c.in_min_rtt_window());
        assert_eq!(c.limit(), 3);
        // the update timer fires during the window and gives up (not re-armed)
        c.on_tick(100 * MILLISECOND);
        assert_eq!(c.next_update, None);
        for i in 1..=3 {
            c.on_sample(0, i * 200 * MILLISECOND, r);
        }
        // p50 of 200, 400, 600ms: 1.5 samples in, halfway through the bin
        // [400000, 410000) us
        assert!(!c.in_min_rtt_window());
        assert_eq!(c.min_rtt(), 405 * MILLISECOND);
        assert_eq!(c.limit(), 3); // the saved limit was the pinned 3
        assert_eq!(c.next_min_rtt, Some(600 * MILLISECOND + SECOND));
        assert_eq!(c.next_update, Some(700 * MILLISECOND));
        c.limit = 50;
        c.on_tick(1600 * MILLISECOND); // updates with no samples, then the minRTT window
        assert!(c.in_min_rtt_window());
        assert_eq!(c.limit(), 3);
        // a response to a request sent before the epoch is not sampled
        c.on_sample(1599 * MILLISECOND, 1700 * MILLISECOND, r);
        assert_eq!(c.samples(), 0);
        for _ in 0..3 {
            c.on_sample(1600 * MILLISECOND, 1610 * MILLISECOND, r);
        }
        assert!(!c.in_min_rtt_window());
        assert_eq!(c.limit(), 50);
    }

    #[test]
    fn the_min_rtt_interval_is_jittered_by_up_to_ceil_interval_times_jitter_ms() {
        let cfg = Config::with_intervals(100, 1000); // 15%: + 0..=149 ms
        let mut seen = std::collections::BTreeSet::new();
        let r = &mut rng();
        for _ in 0..2000 {
            let c = Controller::new(cfg);
            let j = c.jittered_interval_ms(r);
            assert!((1000..1150).contains(&j), "{j}");
            seen.insert(j);
        }
        assert!(seen.len() > 100);
    }

    #[test]
    fn five_updates_in_a_row_at_min_concurrency_start_a_min_rtt_window_at_once() {
        let mut cfg = Config::with_intervals(100, 60_000);
        cfg.request_count = 1;
        let r = &mut rng();
        let mut c = Controller::new(cfg);
        c.on_sample(0, MILLISECOND, r); // limit back to 3
                                        // one sample of 1000us: bin [1000, 1100), p50 = 1000 + 0.5·100
        assert_eq!(c.min_rtt(), 1050 * MICROSECOND);
        let mut t = MILLISECOND;
        for i in 1..=5 {
            // responses far slower than minRTT: g = 0.5, the limit stays at 3
            c.on_sample(t, t + 50 * MILLISECOND, r);
            t = c.next_tick().unwrap();
            assert_eq!(t, MILLISECOND + i * 100 * MILLISECOND);
            c.on_tick(t);
            assert_eq!(c.limit(), 3);
            if i < 5 {
                assert!(!c.in_min_rtt_window(), "update {i}");
            }
        }
        assert!(c.in_min_rtt_window(), "the fifth starts a window at once");
        assert_eq!(c.epoch, t);
    }

    /// ADMISSION.md §13: the docs' example aggregates with p90; the code's default
    /// is p50.
    #[test]
    fn the_default_percentile_is_the_codes_p50_not_the_docs_p90() {
        let c = Ctx;
        let w: Written =
            toml::from_str("update_interval = \"100ms\"\nmin_rtt_interval = \"60s\"").unwrap();
        let ConcurrencyLimitConfig::EnvoyGradient(cfg) = w.validate(&c, "x").unwrap() else {
            panic!("not envoy")
        };
        assert_eq!(cfg.percentile, 0.5);
        assert!(cfg.describe().contains("p50 of"), "{}", cfg.describe());
        assert!(cfg.describe().contains("the docs' example uses p90"));
        // With p90 the same window reads slower.
        let mut h = Hist::new();
        for v in [
            10_000, 10_000, 10_000, 10_000, 10_000, 10_000, 10_000, 10_000, 50_000, 50_000,
        ] {
            h.insert(v);
        }
        assert!(h.quantile(0.5).unwrap() < 11_000.0);
        assert!(h.quantile(0.9).unwrap() >= 50_000.0);
    }
}
