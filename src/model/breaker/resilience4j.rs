//! Resilience4j's `CircuitBreaker` (`CircuitBreakerStateMachine`,
//! `CircuitBreakerMetrics`), following its state machine exactly.
//!
//! A count- or time-based window ([`CountWindow`], [`EpochWindow`]); after each
//! recorded call, once `minimumNumberOfCalls` are in the window (for a count window at
//! most its size), it opens when the failure rate (`f32` percent) reaches its threshold
//! or the share of calls slower than `slowCallDurationThreshold` (strictly) reaches its
//! own. Open, it admits a call only strictly after `waitDurationInOpenState`, turning
//! half-open: `permittedNumberOfCallsInHalfOpenState` calls are admitted in all,
//! recorded in a count window of that size, and evaluated with the same thresholds once
//! `min(minimumNumberOfCalls, permitted)` are recorded: above → open again, below →
//! closed, with fresh metrics.

use serde::{Deserialize, Serialize};

use super::{BreakerConfig, Placement, Rule, State, Trip, Verdict};
use crate::engine::time::{MILLISECOND, SECOND};
use crate::engine::Nanos;
use crate::model::field::{at_most_dur, in_range, Ctx, Dur, R};
use crate::model::text::{fmt_num, fmt_time};
use crate::model::windows::{Agg, CountWindow, EpochWindow};

/// Default window size (calls, or seconds when time-based).
const DEFAULT_WINDOW: u64 = 100;
/// Default `minimumNumberOfCalls`.
const DEFAULT_MIN_CALLS: u64 = 100;
/// Default `failureRateThreshold` in percent.
const DEFAULT_FAILURE_RATE: f64 = 50.0;
/// Default `slowCallRateThreshold` in percent.
const DEFAULT_SLOW_CALL_RATE: f64 = 100.0;
/// Default `slowCallDurationThreshold`.
const DEFAULT_SLOW_CALL_DURATION: Nanos = 60 * SECOND;
/// Default `waitDurationInOpenState`.
const DEFAULT_OPEN_FOR: Nanos = 60 * SECOND;
/// Default `permittedNumberOfCallsInHalfOpenState`.
const DEFAULT_HALF_OPEN_CALLS: u64 = 10;
/// Longest `waitDurationInOpenState`: the longest scenario horizon
/// (`config::MAX_HORIZON`).
const MAX_OPEN_FOR: Nanos = crate::model::field::MAX_HORIZON;

/// Which sliding window, as written.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum WindowType {
    /// `COUNT_BASED`: the last `window_size` calls.
    #[default]
    Count,
    /// `TIME_BASED`: the calls of the last `window_size` epoch seconds.
    Time,
}

/// `{ kind = "resilience4j", ... }` as written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Written {
    /// `"count"` (default) or `"time"`.
    #[schemars(extend("default" = crate::model::field::default_of::<WindowType>()))]
    pub window_type: Option<WindowType>,
    /// Calls, or seconds when time-based (default 100).
    #[schemars(extend("default" = DEFAULT_WINDOW))]
    pub window_size: Option<u64>,
    /// `minimumNumberOfCalls` (default 100).
    #[schemars(extend("default" = DEFAULT_MIN_CALLS))]
    pub min_calls: Option<u64>,
    /// `failureRateThreshold` in percent (default 50).
    #[schemars(extend("default" = DEFAULT_FAILURE_RATE))]
    pub failure_rate: Option<f64>,
    /// `slowCallRateThreshold` in percent (default 100).
    #[schemars(extend("default" = DEFAULT_SLOW_CALL_RATE))]
    pub slow_call_rate: Option<f64>,
    /// `slowCallDurationThreshold` (default 60s).
    #[schemars(extend("default" = crate::model::field::duration_text(DEFAULT_SLOW_CALL_DURATION)))]
    pub slow_call_duration: Option<Dur>,
    /// `waitDurationInOpenState` (default 60s).
    #[schemars(extend("default" = crate::model::field::duration_text(DEFAULT_OPEN_FOR)))]
    pub open_for: Option<Dur>,
    /// `permittedNumberOfCallsInHalfOpenState` (default 10).
    #[schemars(extend("default" = DEFAULT_HALF_OPEN_CALLS))]
    pub half_open_calls: Option<u64>,
    /// Inside or outside the retry loop (default inside).
    #[schemars(extend("default" = crate::model::field::default_of::<super::Placement>()))]
    pub placement: Option<Placement>,
}

impl Written {
    /// The validated breaker; `p` is the field path of the table.
    pub fn validate(&self, c: &Ctx, p: &str) -> R<BreakerConfig> {
        let f = |k: &str| format!("{p}.{k}");
        let size = c.at_least(
            &f("window_size"),
            self.window_size.unwrap_or(DEFAULT_WINDOW),
            1,
        )?;
        let window = match self.window_type.unwrap_or_default() {
            WindowType::Count => {
                if size > 100_000 {
                    return c.err(
                        f("window_size"),
                        format!("must be at most 100000 calls (found {size})"),
                    );
                }
                Window::Count(size as u32)
            }
            WindowType::Time => {
                if size > 3_600 {
                    return c.err(
                        f("window_size"),
                        format!("must be at most 3600 seconds (found {size})"),
                    );
                }
                Window::Time(size as u32)
            }
        };
        let rate = |field: String, v: f64| -> R<f32> {
            let v = in_range(c, &field, v, 0.0, 100.0)?;
            if v == 0.0 {
                return c.err(field, "must be greater than 0");
            }
            Ok(v as f32)
        };
        let open_for = self.open_for.map_or(DEFAULT_OPEN_FOR, |d| d.0);
        if open_for < MILLISECOND {
            return c.err(f("open_for"), "must be at least 1ms (Resilience4j's check)");
        }
        let min_calls = self.min_calls.unwrap_or(DEFAULT_MIN_CALLS);
        let half_open_calls = self.half_open_calls.unwrap_or(DEFAULT_HALF_OPEN_CALLS);
        Ok(BreakerConfig {
            trip: Trip::Resilience4j(Config {
                window,
                min_calls: c
                    .u32_field(&f("min_calls"), c.at_least(&f("min_calls"), min_calls, 1)?)?,
                failure_rate: rate(
                    f("failure_rate"),
                    self.failure_rate.unwrap_or(DEFAULT_FAILURE_RATE),
                )?,
                slow_call_rate: rate(
                    f("slow_call_rate"),
                    self.slow_call_rate.unwrap_or(DEFAULT_SLOW_CALL_RATE),
                )?,
                slow_call_duration: match self.slow_call_duration {
                    Some(d) => c.positive_dur(&f("slow_call_duration"), d)?,
                    None => DEFAULT_SLOW_CALL_DURATION,
                },
            }),
            open_for: at_most_dur(c, &f("open_for"), open_for, MAX_OPEN_FOR)?,
            half_open_probes: c.u32_field(
                &f("half_open_calls"),
                c.at_least(&f("half_open_calls"), half_open_calls, 1)?,
            )?,
            placement: self.placement.unwrap_or_default(),
        })
    }
}

/// Resilience4j's sliding window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Window {
    /// The last `n` calls.
    Count(u32),
    /// The calls of the last `n` epoch seconds.
    Time(u32),
}

/// Validated settings: failure or slow-call rate over a count- or time-based sliding
/// window; half-open evaluates `half_open_probes` calls.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Config {
    /// The sliding window.
    pub window: Window,
    /// `minimumNumberOfCalls`.
    pub min_calls: u32,
    /// `failureRateThreshold` in percent.
    pub failure_rate: f32,
    /// `slowCallRateThreshold` in percent.
    pub slow_call_rate: f32,
    /// `slowCallDurationThreshold`.
    pub slow_call_duration: Nanos,
}

impl Config {
    /// What explain says of the breaker `b` of this trip.
    pub(super) fn describe(&self, b: &BreakerConfig) -> String {
        let w = match self.window {
            Window::Count(n) => format!("the last {n} calls"),
            Window::Time(s) => format!("the last {s} seconds"),
        };
        format!(
            "Resilience4j: opens at {}% failures or {}% calls slower than {} over {w} (once {} are recorded), stays open {}, then lets {} calls through and closes unless they fail as often; {}",
            fmt_num(f64::from(self.failure_rate)),
            fmt_num(f64::from(self.slow_call_rate)),
            fmt_time(self.slow_call_duration),
            self.min_calls,
            fmt_time(b.open_for),
            b.half_open_probes,
            b.placement.text()
        )
    }

    /// The trip in short, for the preset line.
    pub(super) fn short(&self, b: &BreakerConfig) -> String {
        format!(
            "{} window {}, {}% failures or {}% slower than {}, min {} calls, {} half-open calls",
            match self.window {
                Window::Count(_) => "count",
                Window::Time(_) => "time",
            },
            match self.window {
                Window::Count(n) => n.to_string(),
                Window::Time(s) => format!("{s}s"),
            },
            fmt_num(f64::from(self.failure_rate)),
            fmt_num(f64::from(self.slow_call_rate)),
            fmt_time(self.slow_call_duration),
            self.min_calls,
            b.half_open_probes
        )
    }

    /// Bytes of the window: a slot per call or per second.
    pub(super) fn state_bytes(&self) -> u64 {
        match self.window {
            Window::Count(n) => 16 * u64::from(n),
            Window::Time(n) => 32 * u64::from(n),
        }
    }
}

/// The metrics of the current state.
#[derive(Debug, Clone)]
enum Metrics {
    Count(CountWindow),
    Time(EpochWindow),
}

impl Metrics {
    fn record(&mut self, now: Nanos, failed: bool, slow: bool) -> Agg {
        match self {
            Metrics::Count(w) => w.record(failed, slow),
            Metrics::Time(w) => w.record(now, failed, slow),
        }
    }
}

/// The settings and the metrics of the closed or half-open state.
#[derive(Debug, Clone)]
pub(super) struct Counts {
    cfg: Config,
    metrics: Metrics,
}

impl Counts {
    pub(super) fn new(cfg: Config) -> Counts {
        Counts {
            cfg,
            metrics: closed_metrics(cfg, 0),
        }
    }
}

impl Rule for Counts {
    /// `forHalfOpen`: a count window of the permitted calls.
    fn half_open(&mut self, probes: u32) {
        self.metrics = Metrics::Count(CountWindow::new(probes));
    }

    /// Fresh metrics of the closed state at `now`.
    fn closed(&mut self, now: Nanos) {
        self.metrics = closed_metrics(self.cfg, now);
    }

    /// Resilience4j admits a call only strictly after the wait (`isAfter`).
    fn open_extra(&self) -> Nanos {
        1
    }

    fn record(
        &mut self,
        state: &mut State,
        now: Nanos,
        success: bool,
        duration: Nanos,
        probes: u32,
    ) -> Verdict {
        let half_open = matches!(state, State::HalfOpen { .. });
        // A late answer while open is recorded in metrics that are dropped unread.
        if matches!(state, State::Open { .. }) {
            return Verdict::Stay;
        }
        let slow = duration > self.cfg.slow_call_duration;
        let snap = self.metrics.record(now, !success, slow);
        let min = if half_open {
            self.cfg.min_calls.min(probes)
        } else {
            match self.cfg.window {
                Window::Count(n) => self.cfg.min_calls.min(n),
                Window::Time(_) => self.cfg.min_calls,
            }
        };
        if snap.calls == 0 || snap.calls < min {
            return Verdict::Stay; // BELOW_MINIMUM_CALLS_THRESHOLD
        }
        let exceeded = snap.failure_rate() >= self.cfg.failure_rate
            || snap.slow_call_rate() >= self.cfg.slow_call_rate;
        if exceeded {
            Verdict::Open
        } else if half_open {
            Verdict::Close
        } else {
            Verdict::Stay
        }
    }
}

fn closed_metrics(cfg: Config, now: Nanos) -> Metrics {
    match cfg.window {
        Window::Time(s) => Metrics::Time(EpochWindow::new(s, now)),
        Window::Count(n) => Metrics::Count(CountWindow::new(n)),
    }
}
