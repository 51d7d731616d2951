//! Polly v8's circuit breaker (`CircuitStateController`, `AdvancedCircuitBehavior`,
//! `RollingHealthMetrics`), following its state machine exactly.
//!
//! Successes and failures are counted in [`HealthMetrics`] over the sampling duration;
//! a failure while closed opens the circuit when the throughput is at least
//! `MinimumThroughput` and the failure ratio at least `FailureRatio`. After
//! `BreakDuration` one call passes; its success closes (and resets the metrics), its
//! failure reopens. A cancelled call (its caller gave up, or the request's deadline
//! passed) is recorded as a success: the default `ShouldHandle` does not handle
//! `OperationCanceledException`, so it closes a half-open circuit too.

use serde::{Deserialize, Serialize};

use super::{BreakerConfig, Placement, Rule, State, Trip, Verdict};
use crate::engine::time::SECOND;
use crate::engine::Nanos;
use crate::model::field::{in_range, Ctx, Dur, R};
use crate::model::text::{fmt_num, fmt_time};
use crate::model::windows::HealthMetrics;

/// Default `FailureRatio`.
const DEFAULT_FAILURE_RATIO: f64 = 0.1;
/// Default `MinimumThroughput`.
const DEFAULT_MIN_THROUGHPUT: u64 = 100;
/// Default `SamplingDuration`.
const DEFAULT_SAMPLING: Nanos = 30 * SECOND;
/// Default `BreakDuration`.
const DEFAULT_BREAK: Nanos = 5 * SECOND;

/// `{ kind = "polly", ... }` as written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Written {
    /// `FailureRatio` (default 0.1).
    #[schemars(extend("default" = DEFAULT_FAILURE_RATIO))]
    pub failure_ratio: Option<f64>,
    /// `MinimumThroughput` (default 100).
    #[schemars(extend("default" = DEFAULT_MIN_THROUGHPUT))]
    pub min_throughput: Option<u64>,
    /// `SamplingDuration` (default 30s).
    #[schemars(extend("default" = crate::model::field::duration_text(DEFAULT_SAMPLING)))]
    pub sampling_duration: Option<Dur>,
    /// `BreakDuration` (default 5s).
    #[schemars(extend("default" = crate::model::field::duration_text(DEFAULT_BREAK)))]
    pub break_duration: Option<Dur>,
    /// Inside or outside the retry loop (default inside).
    #[schemars(extend("default" = crate::model::field::default_of::<super::Placement>()))]
    pub placement: Option<Placement>,
}

impl Written {
    /// The validated breaker; `p` is the field path of the table.
    pub fn validate(&self, c: &Ctx, p: &str) -> R<BreakerConfig> {
        let f = |k: &str| format!("{p}.{k}");
        // CircuitBreakerStrategyOptions' ranges.
        let ratio = in_range(
            c,
            &f("failure_ratio"),
            self.failure_ratio.unwrap_or(DEFAULT_FAILURE_RATIO),
            0.0,
            1.0,
        )?;
        if ratio == 0.0 {
            return c.err(f("failure_ratio"), "must be greater than 0");
        }
        let day = 86_400 * SECOND;
        let half_second = SECOND / 2;
        let between = |field: String, v: Nanos| -> R<Nanos> {
            if (half_second..=day).contains(&v) {
                Ok(v)
            } else {
                c.err(
                    field,
                    format!(
                        "must be between 500ms and 1 day (found {})",
                        crate::engine::time::format(v)
                    ),
                )
            }
        };
        let min_throughput = c.at_least(
            &f("min_throughput"),
            self.min_throughput.unwrap_or(DEFAULT_MIN_THROUGHPUT),
            2,
        )?;
        Ok(BreakerConfig {
            trip: Trip::Polly(Config {
                sampling: between(
                    f("sampling_duration"),
                    self.sampling_duration.map_or(DEFAULT_SAMPLING, |d| d.0),
                )?,
                min_throughput: c.u32_field(&f("min_throughput"), min_throughput)?,
                failure_ratio: ratio,
            }),
            open_for: between(
                f("break_duration"),
                self.break_duration.map_or(DEFAULT_BREAK, |d| d.0),
            )?,
            half_open_probes: 1,
            placement: self.placement.unwrap_or_default(),
        })
    }
}

/// Validated settings: failure ratio over a sampling duration, once `min_throughput`
/// calls are recorded; half-open lets one call through.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Config {
    /// `SamplingDuration`.
    pub sampling: Nanos,
    /// `MinimumThroughput`.
    pub min_throughput: u32,
    /// `FailureRatio`.
    pub failure_ratio: f64,
}

impl Config {
    /// What explain says of the breaker `b` of this trip.
    pub(super) fn describe(&self, b: &BreakerConfig) -> String {
        format!(
            "Polly: opens at {}% failures over {} (once {} calls are recorded), stays open {}, then lets 1 call through: its success closes it; {}",
            fmt_num(self.failure_ratio * 100.0),
            fmt_time(self.sampling),
            self.min_throughput,
            fmt_time(b.open_for),
            b.placement.text()
        )
    }

    /// The trip in short, for the preset line.
    pub(super) fn short(&self) -> String {
        format!(
            "{}% failures over {}, min {} calls",
            fmt_num(self.failure_ratio * 100.0),
            fmt_time(self.sampling),
            self.min_throughput
        )
    }

    /// Bytes of the rolling metrics: a handful of buckets.
    pub(super) fn state_bytes(&self) -> u64 {
        256
    }
}

/// The settings and the health metrics.
#[derive(Debug, Clone)]
pub(super) struct Counts {
    cfg: Config,
    health: HealthMetrics,
}

impl Counts {
    pub(super) fn new(cfg: Config) -> Counts {
        Counts {
            cfg,
            health: HealthMetrics::new(cfg.sampling, 0),
        }
    }
}

impl Rule for Counts {
    /// Fresh metrics at `now`.
    fn closed(&mut self, now: Nanos) {
        self.health.reset(now);
    }

    fn record(
        &mut self,
        state: &mut State,
        now: Nanos,
        success: bool,
        _duration: Nanos,
        _probes: u32,
    ) -> Verdict {
        match state {
            // Recorded, but the metrics are reset before they are read again.
            State::Open { .. } => Verdict::Stay,
            State::HalfOpen { in_flight, .. } => {
                *in_flight = in_flight.saturating_sub(1);
                if success {
                    Verdict::Close
                } else {
                    Verdict::Open
                }
            }
            State::Closed => {
                self.health.increment(now, !success);
                if success {
                    return Verdict::Stay;
                }
                let (throughput, rate) = self.health.health(now);
                if throughput >= self.cfg.min_throughput && rate >= self.cfg.failure_ratio {
                    Verdict::Open
                } else {
                    Verdict::Stay
                }
            }
        }
    }
}
