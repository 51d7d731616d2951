//! Client-side rate limiters: per-instance state consulted before an attempt is sent.
//!
//! Where a retry budget decides whether a *retry* may happen, a limiter gates *every*
//! attempt, the first included, at the layer's client:
//! - **adaptive throttling** (Google SRE book, "Handling Overload"): over a trailing
//!   window the client counts `requests` (attempts it tried to send, locally rejected
//!   ones included) and `accepts` (by default attempts answered with anything but
//!   `rejected`, as grpc-go's adaptive throttler counts; with `accepts = "success"`
//!   successes only), and rejects an attempt locally with probability
//!   `max(0, (requests − K·accepts) / (requests + padding))`, `padding` being the book's
//!   `+ 1`. A locally rejected attempt ends with `budget_exhausted` at this layer: it is
//!   the client's own budget saying no, and it is not retried unless `retry_on` says so.
//! - **AWS adaptive** (botocore `retries/adaptive.py`, `throttling.py`, `bucket.py`):
//!   after each answer a `RateClocker` measures the answer rate (EWMA 0.8 over 0.5 s
//!   buckets) and a CUBIC calculator sets the send rate (`C = 0.4`, `β = 0.7`): on a
//!   throttling error `W_max` = the measured rate (once enabled, at most the current
//!   fill rate), `K = (W_max·(1 − β)/C)^(1/3)`, new rate `β·W_max`, and the limiter is
//!   enabled; on anything else `C·(t − t_fail − K)^3 + W_max`. The token bucket's rate
//!   is then `min(new rate, 2 × measured)`, at least 0.5/s, with capacity
//!   `max(rate, 1)`. Once enabled every attempt takes a token; a sender finding less
//!   than one waits `(1 − tokens) / rate` and tries again, as botocore's wait loop does.
//!   botocore also wakes one waiting sender early whenever the rate changes
//!   (`Condition.notify`); here a waiting sender re-checks only at the end of its wait.
//!
//! ```
//! use retrysim::model::limiter::{Gate, Limiter};
//! use retrysim::model::config::{Accepts, LimiterConfig};
//! let mut l = Limiter::new(LimiterConfig::AdaptiveThrottling {
//!     k: 2.0, window: 120_000_000_000, padding: 1.0, accepts: Accepts::Success });
//! // 10 requests, 2 accepted: p = (10 − 2·2) / (10 + 1) = 6/11 for the 11th.
//! for _ in 0..10 { assert_eq!(l.gate_u(0, 0.99), Gate::Pass); }
//! l.on_answer(0, true, false, false);
//! l.on_answer(0, true, false, false);
//! assert_eq!(l.gate_u(0, 0.5), Gate::Reject);
//! ```

use std::collections::VecDeque;

use rand::Rng;
use rand::RngExt;

use crate::engine::Nanos;
use crate::model::config::{Accepts, LimiterConfig};

/// What the limiter says about an attempt about to be sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Gate {
    /// Send it.
    Pass,
    /// Fail it locally.
    Reject,
    /// Wait this long, then ask again.
    Wait(Nanos),
}

/// SRE adaptive throttling state.
#[derive(Debug, Clone)]
pub struct AdaptiveThrottle {
    k: f64,
    window: Nanos,
    padding: f64,
    accepts: Accepts,
    requests: VecDeque<Nanos>,
    accepted: VecDeque<Nanos>,
}

impl AdaptiveThrottle {
    fn evict(&mut self, now: Nanos) {
        let from = now.saturating_sub(self.window);
        for q in [&mut self.requests, &mut self.accepted] {
            while q.front().is_some_and(|&t| t <= from && now >= self.window) {
                q.pop_front();
            }
        }
    }

    /// The probability of rejecting the next attempt at `now`.
    pub fn probability(&mut self, now: Nanos) -> f64 {
        self.evict(now);
        let r = self.requests.len() as f64;
        let a = self.accepted.len() as f64;
        ((r - self.k * a) / (r + self.padding)).max(0.0)
    }

    /// (requests, accepts) in the window at `now`.
    pub fn counts(&mut self, now: Nanos) -> (u64, u64) {
        self.evict(now);
        (self.requests.len() as u64, self.accepted.len() as u64)
    }
}

/// botocore's `ClientRateLimiter` with its `RateClocker`, `CubicCalculator` and
/// `TokenBucket`, in float seconds of simulated time.
#[derive(Debug, Clone)]
pub struct AwsAdaptive {
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
    pub fn new(now: Nanos) -> AwsAdaptive {
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
        ((self.w_max * (1.0 - CUBIC_BETA)) / CUBIC_C).powf(1.0 / 3.0)
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
    pub fn before_send(&mut self, now: Nanos) -> Gate {
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
    pub fn on_response(&mut self, now: Nanos, throttled: bool) {
        let t = secs(now);
        let measured = self.record_rate(t);
        let new_rate = if !throttled {
            let dt = t - self.last_fail;
            CUBIC_C * (dt - self.k).powf(3.0) + self.w_max
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
    pub fn snapshot(&self) -> (bool, f64, f64, f64) {
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

/// One instance's client-side limiter.
#[derive(Debug, Clone)]
pub enum Limiter {
    /// SRE adaptive throttling.
    Throttle(AdaptiveThrottle),
    /// AWS adaptive rate limiter.
    Aws(AwsAdaptive),
}

impl Limiter {
    /// A fresh limiter, created at time 0.
    pub fn new(cfg: LimiterConfig) -> Limiter {
        match cfg {
            LimiterConfig::AdaptiveThrottling {
                k,
                window,
                padding,
                accepts,
            } => Limiter::Throttle(AdaptiveThrottle {
                k,
                window,
                padding,
                accepts,
                requests: VecDeque::new(),
                accepted: VecDeque::new(),
            }),
            LimiterConfig::AwsAdaptive => Limiter::Aws(AwsAdaptive::new(0)),
        }
    }

    /// Asks to send an attempt at `now`, drawing from `rng` only when a rejection is
    /// possible.
    pub fn before_send<R: Rng + ?Sized>(&mut self, now: Nanos, rng: &mut R) -> Gate {
        match self {
            Limiter::Throttle(t) => {
                let p = t.probability(now);
                let u = if p > 0.0 { rng.random::<f64>() } else { 1.0 };
                self.gate_u(now, u)
            }
            Limiter::Aws(a) => a.before_send(now),
        }
    }

    /// [`Limiter::before_send`] with the uniform draw `u` given: adaptive throttling
    /// counts the request and rejects it when `u < p`.
    pub fn gate_u(&mut self, now: Nanos, u: f64) -> Gate {
        match self {
            Limiter::Throttle(t) => {
                let p = t.probability(now);
                t.requests.push_back(now);
                if p > 0.0 && u < p {
                    Gate::Reject
                } else {
                    Gate::Pass
                }
            }
            Limiter::Aws(a) => a.before_send(now),
        }
    }

    /// An attempt it let through was answered at `now`: with success, with `rejected`,
    /// and (for AWS) with a throttling error (`throttled`: a rejection with 429). A
    /// timeout counts as an answer that is none of these, as botocore sees a read
    /// timeout.
    pub fn on_answer(&mut self, now: Nanos, success: bool, rejected: bool, throttled: bool) {
        match self {
            Limiter::Throttle(t) => {
                let accepted = match t.accepts {
                    Accepts::Success => success,
                    Accepts::NotRejected => !rejected,
                };
                if accepted {
                    t.accepted.push_back(now);
                }
            }
            Limiter::Aws(a) => a.on_response(now, throttled),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn throttle_counts_only_the_window() {
        let s = 1_000_000_000;
        let mut l = Limiter::new(LimiterConfig::AdaptiveThrottling {
            k: 2.0,
            window: 10 * s,
            padding: 1.0,
            accepts: Accepts::Success,
        });
        for i in 0..4 {
            assert_eq!(
                l.gate_u(i * s, 0.0),
                if i == 0 { Gate::Pass } else { Gate::Reject }
            );
        }
        let Limiter::Throttle(t) = &mut l else {
            unreachable!()
        };
        // (requests 4, accepts 0): p = 4/5.
        assert!((t.probability(4 * s) - 0.8).abs() < 1e-12);
        // At 10 s the request of t = 0 leaves the window (it is (now − 10 s, now]).
        assert_eq!(t.counts(10 * s), (3, 0));
        assert_eq!(t.counts(100 * s), (0, 0));
    }

    #[test]
    fn aws_limiter_starts_disabled_and_rate_one() {
        let a = AwsAdaptive::new(0);
        assert_eq!(a.snapshot(), (false, 1.0, 0.0, 0.0));
    }
}
