//! Client-side rate limiters: per-instance state consulted before an attempt is sent.
//!
//! Where a retry budget decides whether a *retry* may happen, a limiter gates *every*
//! attempt, the first included, at the layer's client. The vendors, one file each:
//! - [`adaptive_throttling`]: Google SRE book's client-side adaptive throttling, which
//!   rejects an attempt locally with a probability that grows as accepts fall behind
//!   requests;
//! - [`aws_adaptive`]: botocore's adaptive mode, a CUBIC send-rate limiter whose
//!   senders wait for tokens.
//!
//! This root holds the written form [`LimiterFile`], the validated form
//! [`LimiterConfig`], what the limiter says of an attempt ([`Gate`]) and the
//! per-instance [`Limiter`], each delegating to the vendor.

pub(crate) mod adaptive_throttling;
pub(crate) mod aws_adaptive;

use rand::Rng;
use serde::{Deserialize, Serialize};

use crate::engine::Nanos;
use crate::model::field::{Ctx, R};

pub(crate) use adaptive_throttling::AdaptiveThrottle;
pub(crate) use aws_adaptive::AwsAdaptive;

/// Client-side rate limiter of a layer, as written: `{ kind = "...", ... }`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum LimiterFile {
    /// Google SRE client-side adaptive throttling.
    AdaptiveThrottling(adaptive_throttling::Written),
    /// botocore adaptive mode's CUBIC rate limiter.
    AwsAdaptive(aws_adaptive::Written),
}

impl LimiterFile {
    /// The validated limiter; `p` is the field path of the table.
    pub fn validate(&self, c: &Ctx, p: &str) -> R<LimiterConfig> {
        match self {
            LimiterFile::AdaptiveThrottling(w) => w.validate(c, p),
            LimiterFile::AwsAdaptive(w) => w.validate(c, p),
        }
    }
}

/// A client-side rate limiter in front of a layer's attempts: the vendor and its
/// validated settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum LimiterConfig {
    /// Google SRE client-side adaptive throttling.
    AdaptiveThrottling(adaptive_throttling::Config),
    /// botocore adaptive mode.
    AwsAdaptive(aws_adaptive::Config),
}

impl LimiterConfig {
    /// What explain says of the limiter.
    pub fn describe(&self) -> String {
        match self {
            LimiterConfig::AdaptiveThrottling(l) => l.describe(),
            LimiterConfig::AwsAdaptive(l) => l.describe(),
        }
    }

    /// A short form of the limiter, for the preset line.
    pub fn short(&self) -> String {
        match self {
            LimiterConfig::AdaptiveThrottling(l) => l.short(),
            LimiterConfig::AwsAdaptive(l) => l.short(),
        }
    }
}

/// What the limiter says about an attempt about to be sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Gate {
    /// Send it.
    Pass,
    /// Fail it locally.
    Reject,
    /// Wait this long, then ask again.
    Wait(Nanos),
}

/// One instance's client-side limiter.
#[derive(Debug, Clone)]
pub(crate) enum Limiter {
    /// SRE adaptive throttling.
    Throttle(AdaptiveThrottle),
    /// AWS adaptive rate limiter.
    Aws(AwsAdaptive),
}

impl Limiter {
    /// A fresh limiter, created at time 0.
    pub(crate) fn new(cfg: LimiterConfig) -> Limiter {
        match cfg {
            LimiterConfig::AdaptiveThrottling(c) => Limiter::Throttle(AdaptiveThrottle::new(c)),
            LimiterConfig::AwsAdaptive(_) => Limiter::Aws(AwsAdaptive::new(0)),
        }
    }

    /// Asks to send an attempt at `now`, drawing from `rng` only when a rejection is
    /// possible.
    pub(crate) fn before_send<R: Rng + ?Sized>(&mut self, now: Nanos, rng: &mut R) -> Gate {
        match self {
            Limiter::Throttle(t) => t.before_send(now, rng),
            Limiter::Aws(a) => a.before_send(now),
        }
    }

    /// [`Limiter::before_send`] with the uniform draw `u` given: adaptive throttling
    /// counts the request and rejects it when `u < p`.
    #[cfg(test)]
    pub(crate) fn gate_u(&mut self, now: Nanos, u: f64) -> Gate {
        match self {
            Limiter::Throttle(t) => t.gate_u(now, u),
            Limiter::Aws(a) => a.before_send(now),
        }
    }

    /// An attempt it let through was answered at `now`: with success, with `rejected`,
    /// and (for AWS) with a throttling error (`throttled`: a rejection with 429). A
    /// timeout counts as an answer that is none of these, as botocore sees a read
    /// timeout.
    pub(crate) fn on_answer(&mut self, now: Nanos, success: bool, rejected: bool, throttled: bool) {
        match self {
            Limiter::Throttle(t) => t.on_answer(now, success, rejected),
            Limiter::Aws(a) => a.on_response(now, throttled),
        }
    }
}

/// The examples of this file's docs, as unit tests (the module is the crate's own,
/// so rustdoc cannot run them).
#[cfg(test)]
mod doc_examples {
    #[test]
    fn limiter_example() {
        use crate::model::limiter::adaptive_throttling::Accepts;
        use crate::model::limiter::{adaptive_throttling, Gate, Limiter, LimiterConfig};
        let mut l = Limiter::new(LimiterConfig::AdaptiveThrottling(
            adaptive_throttling::Config {
                k: 2.0,
                window: 120_000_000_000,
                padding: 1.0,
                accepts: Accepts::Success,
            },
        ));
        // 10 requests, 2 accepted: p = (10 − 2·2) / (10 + 1) = 6/11 for the 11th.
        for _ in 0..10 {
            assert_eq!(l.gate_u(0, 0.99), Gate::Pass);
        }
        l.on_answer(0, true, false, false);
        l.on_answer(0, true, false, false);
        assert_eq!(l.gate_u(0, 0.5), Gate::Reject);
    }
}
