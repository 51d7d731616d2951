//! botocore's adaptive retry mode (`retries/adaptive.py`, `throttling.py`,
//! `bucket.py`): a client-side send-rate limiter.
//!
//! After each answer a `RateClocker` measures the answer rate (EWMA 0.8 over 0.5 s
//! buckets) and a CUBIC calculator sets the send rate (`C = 0.4`, `β = 0.7`): on a
//! throttling error `W_max` = the measured rate (once enabled, at most the current fill
//! rate), `K = (W_max·(1 − β)/C)^(1/3)`, new rate `β·W_max`, and the limiter is
//! enabled; on anything else `C·(t − t_fail − K)^3 + W_max`. The token bucket's rate is
//! then `min(new rate, 2 × measured)`, at least 0.5/s, with capacity `max(rate, 1)`.
//! Once enabled every attempt takes a token; a sender finding less than one waits
//! `(1 − tokens) / rate` and tries again, as botocore's wait loop does. botocore also
//! wakes one waiting sender early whenever the rate changes (`Condition.notify`); here
//! a waiting sender re-checks only at the end of its wait.

use serde::{Deserialize, Serialize};

use super::{Gate, LimiterConfig};
use crate::engine::{math, Nanos};
use crate::model::field::{Ctx, R};

/// `{ kind = "aws_adaptive" }` as written: it has no settings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Written {}

impl Written {
    /// The validated limiter; `p` is the field path of the table.
    pub fn validate(&self, _c: &Ctx, _p: &str) -> R<LimiterConfig> {
        Ok(LimiterConfig::AwsAdaptive(Config))
    }
}

/// Validated settings: none, botocore's constants are fixed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Config;

impl Config {
    /// What explain says of the limiter.
    pub(super) fn describe(&self) -> String {
        "AWS adaptive: a CUBIC send-rate limiter (β 0.7, C 0.4, at least 0.5/s), enabled by the first throttling error (a 429 rejection); every attempt then waits for a token".to_string()
    }

    /// The limiter in short, for the preset line.
    pub(super) fn short(&self) -> String {
        "CUBIC client rate limiter".to_string()
    }
}

/// botocore's `ClientRateLimiter` with its `RateClocker`, `CubicCalculator` and
/// `TokenBucket`, in float seconds of simulated time.
#[derive(Debug, Clone)]
pub(crate) struct AwsAdaptive {
    enabled: bool,
    measured_rate: f64,
    last_bucket: f64,
    count: f64,
    w_max: f64,
    k: f64,
    last_fail: f64,
    fill_rate: f64,
    max_capacity: f64,
    current: f64,
    last_ts: Option<f64>,
}

const CUBIC_C: f64 = 0.4;
const CUBIC_BETA: f64 = 0.7;
const MIN_FILL_RATE: f64 = 0.5;
const SMOOTHING: f64 = 0.8;
const TIME_BUCKET_SCALE: f64 = 1.0 / 0.5;
const MAX_RATE_ADJUST_SCALE: f64 = 2.0;

impl AwsAdaptive {
    /// botocore's `register_retry_handler` at time `now`: `CubicCalculator(0, now)`,
    /// `TokenBucket(max_rate = 1)`, `RateClocker()`.
    pub(crate) fn new(now: Nanos) -> AwsAdaptive {
        let t = secs(now);
        let mut a = AwsAdaptive {
            enabled: false,
            measured_rate: 0.0,
            last_bucket: t.floor(),
            count: 0.0,
            w_max: 0.0,
            k: 0.0,
            last_fail: t,
            fill_rate: 0.0,
            max_capacity: 0.0,
            current: 0.0,
            last_ts: None,
        };
        a.k = a.zero_point();
        a.set_max_rate(1.0, t);
        a
    }

    fn zero_point(&self) -> f64 {
        math::pow((self.w_max * (1.0 - CUBIC_BETA)) / CUBIC_C, 1.0 / 3.0)
    }

    fn refill(&mut self, t: f64) {
        match self.last_ts {
            None => self.last_ts = Some(t),
            Some(last) => {
                let fill = (t - last) * self.fill_rate;
                self.current = self.max_capacity.min(self.current + fill);
                self.last_ts = Some(t);
            }
        }
    }

    fn set_max_rate(&mut self, value: f64, t: f64) {
        self.refill(t);
        self.fill_rate = value.max(MIN_FILL_RATE);
        self.max_capacity = if value >= 1.0 { value } else { 1.0 };
        self.current = self.current.min(self.max_capacity);
    }

    fn record_rate(&mut self, t: f64) -> f64 {
        let bucket = (t * TIME_BUCKET_SCALE).floor() / TIME_BUCKET_SCALE;
        self.count += 1.0;
        if bucket > self.last_bucket {
            let current_rate = self.count / (bucket - self.last_bucket);
            self.measured_rate =
                (current_rate * SMOOTHING) + (self.measured_rate * (1.0 - SMOOTHING));
            self.count = 0.0;
            self.last_bucket = bucket;
        }
        self.measured_rate
    }

    /// `on_sending_request`: `Pass` with a token taken, or how long to wait.
    pub(crate) fn before_send(&mut self, now: Nanos) -> Gate {
        if !self.enabled {
            return Gate::Pass;
        }
        let t = secs(now);
        self.refill(t);
        if 1.0 <= self.current {
            self.current -= 1.0;
            Gate::Pass
        } else {
            let sleep = (1.0 - self.current) / self.fill_rate;
            Gate::Wait(((sleep * 1e9).ceil() as u64).max(1))
        }
    }

    /// `on_receiving_response` at `now`; `throttled` for a throttling error.
    pub(crate) fn on_response(&mut self, now: Nanos, throttled: bool) {
        let t = secs(now);
        let measured = self.record_rate(t);
        let new_rate = if !throttled {
            let dt = t - self.last_fail;
            CUBIC_C * math::pow(dt - self.k, 3.0) + self.w_max
        } else {
            let rate = if !self.enabled {
                measured
            } else {
                measured.min(self.fill_rate)
            };
            self.w_max = rate;
            self.k = self.zero_point();
            self.last_fail = t;
            self.enabled = true;
            rate * CUBIC_BETA
        };
        self.set_max_rate(new_rate.min(MAX_RATE_ADJUST_SCALE * measured), t);
    }

    /// (enabled, fill rate, tokens, measured rate).
    #[cfg(test)]
    pub(crate) fn snapshot(&self) -> (bool, f64, f64, f64) {
        (
            self.enabled,
            self.fill_rate,
            self.current,
            self.measured_rate,
        )
    }
}

/// Seconds of simulated time, as `time.time()` gives them.
fn secs(t: Nanos) -> f64 {
    t as f64 / 1e9
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aws_limiter_starts_disabled_and_rate_one() {
        let a = AwsAdaptive::new(0);
        assert_eq!(a.snapshot(), (false, 1.0, 0.0, 0.0));
    }
}
