//! Google SRE book's client-side adaptive throttling ("Handling Overload").
//!
//! Over a trailing window the client counts `requests` (attempts it tried to send,
//! locally rejected ones included) and `accepts` (by default attempts answered with
//! anything but `rejected`, as grpc-go's adaptive throttler counts; with
//! `accepts = "success"` successes only), and rejects an attempt locally with
//! probability `max(0, (requests − K·accepts) / (requests + padding))`, `padding` being
//! the book's `+ 1`. A locally rejected attempt ends with `budget_exhausted` at this
//! layer: it is the client's own budget saying no, and it is not retried unless
//! `retry_on` says so.

use std::collections::VecDeque;

use rand::{Rng, RngExt};
use serde::{Deserialize, Serialize};

use super::{Gate, LimiterConfig};
use crate::engine::time::SECOND;
use crate::engine::Nanos;
use crate::model::field::{in_range, Ctx, Dur, R};
use crate::model::text::{fmt_num, fmt_time};

/// What Google-SRE adaptive throttling counts as accepted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Accepts {
    /// Attempts answered with success only: an error counts against the backend too,
    /// which throttles harder than the book during error outages.
    Success,
    /// Attempts answered with anything but `rejected` (the default): what the book calls
    /// "accepted by the backend", and what Google's open implementation counts
    /// (grpc-go `balancer/rls/internal/adaptive`: every response that is not a
    /// throttling rejection, errors and timeouts included).
    NotRejected,
}

/// Default `K`.
const DEFAULT_K: f64 = 2.0;
/// Default window of the counts.
const DEFAULT_WINDOW: Nanos = 120 * SECOND;
/// Default padding (the book's `+ 1`).
const DEFAULT_PADDING: f64 = 1.0;

/// What counts as accepted, as written.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum AcceptsWritten {
    /// [`Accepts::NotRejected`] (the default).
    #[default]
    NotRejected,
    /// [`Accepts::Success`].
    Success,
}

/// `{ kind = "adaptive_throttling", ... }` as written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Written {
    /// `K` (default 2).
    #[schemars(extend("default" = DEFAULT_K))]
    pub k: Option<f64>,
    /// Window (default 2m).
    #[schemars(extend("default" = crate::model::field::duration_text(DEFAULT_WINDOW)))]
    pub window: Option<Dur>,
    /// Added to the requests in the denominator (default 1).
    #[schemars(extend("default" = DEFAULT_PADDING))]
    pub padding: Option<f64>,
    /// `"not_rejected"` (default: every answer but a rejection, as the book's
    /// "accepted by the backend" and grpc-go's adaptive throttler count) or
    /// `"success"` (successes only).
    #[schemars(extend("default" = crate::model::field::default_of::<AcceptsWritten>()))]
    pub accepts: Option<AcceptsWritten>,
}

impl Written {
    /// The validated limiter; `p` is the field path of the table.
    pub fn validate(&self, c: &Ctx, p: &str) -> R<LimiterConfig> {
        let f = |k: &str| format!("{p}.{k}");
        let k = c.positive(&f("k"), self.k.unwrap_or(DEFAULT_K))?;
        let window = match self.window {
            Some(w) => c.positive_dur(&f("window"), w)?,
            None => DEFAULT_WINDOW,
        };
        // Google's open implementation (grpc-go RLS `adaptive.go`) counts every
        // response but a throttling rejection as accepted.
        let accepts = match self.accepts.unwrap_or_default() {
            AcceptsWritten::Success => Accepts::Success,
            AcceptsWritten::NotRejected => Accepts::NotRejected,
        };
        Ok(LimiterConfig::AdaptiveThrottling(Config {
            k: in_range(c, &f("k"), k, 0.0, 1000.0)?,
            window,
            padding: in_range(
                c,
                &f("padding"),
                self.padding.unwrap_or(DEFAULT_PADDING),
                0.0,
                1e9,
            )?,
            accepts,
        }))
    }
}

/// Validated settings: reject an attempt locally with probability
/// `max(0, (requests − k·accepts) / (requests + padding))`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Config {
    /// `K`.
    pub k: f64,
    /// Window of the counts.
    pub window: Nanos,
    /// The `+ 1` of the book.
    pub padding: f64,
    /// What counts as accepted.
    pub accepts: Accepts,
}

impl Config {
    /// What explain says of the limiter.
    pub(super) fn describe(&self) -> String {
        format!(
            "SRE adaptive throttling over {}: each attempt is rejected locally (budget_exhausted) with probability max(0, (requests − {}·accepts) / (requests + {})), accepts being {}",
            fmt_time(self.window),
            fmt_num(self.k),
            fmt_num(self.padding),
            match self.accepts {
                Accepts::Success => "successes only (accepts = \"success\": errors count against the backend)",
                Accepts::NotRejected => "answers other than rejected (errors and timeouts included, as the book's \"accepted by the backend\" and grpc-go's adaptive throttler count)",
            }
        )
    }

    /// The limiter in short, for the preset line.
    pub(super) fn short(&self) -> String {
        format!(
            "adaptive throttling K = {} over {}",
            fmt_num(self.k),
            fmt_time(self.window)
        )
    }
}

/// SRE adaptive throttling state.
#[derive(Debug, Clone)]
pub(crate) struct AdaptiveThrottle {
    cfg: Config,
    requests: VecDeque<Nanos>,
    accepted: VecDeque<Nanos>,
}

impl AdaptiveThrottle {
    /// Empty counts.
    pub(crate) fn new(cfg: Config) -> AdaptiveThrottle {
        AdaptiveThrottle {
            cfg,
            requests: VecDeque::new(),
            accepted: VecDeque::new(),
        }
    }

    fn evict(&mut self, now: Nanos) {
        let window = self.cfg.window;
        let from = now.saturating_sub(window);
        for q in [&mut self.requests, &mut self.accepted] {
            while q.front().is_some_and(|&t| t <= from && now >= window) {
                q.pop_front();
            }
        }
    }

    /// The probability of rejecting the next attempt at `now`.
    pub(crate) fn probability(&mut self, now: Nanos) -> f64 {
        self.evict(now);
        let r = self.requests.len() as f64;
        let a = self.accepted.len() as f64;
        ((r - self.cfg.k * a) / (r + self.cfg.padding)).max(0.0)
    }

    /// (requests, accepts) in the window at `now`.
    #[cfg(test)]
    pub(crate) fn counts(&mut self, now: Nanos) -> (u64, u64) {
        self.evict(now);
        (self.requests.len() as u64, self.accepted.len() as u64)
    }

    /// Asks to send an attempt at `now`, drawing from `rng` only when a rejection is
    /// possible.
    pub(super) fn before_send<R: Rng + ?Sized>(&mut self, now: Nanos, rng: &mut R) -> Gate {
        let p = self.probability(now);
        let u = if p > 0.0 { rng.random::<f64>() } else { 1.0 };
        self.gate_u(now, u)
    }

    /// Counts the request at `now` and rejects it when `u < p`.
    pub(super) fn gate_u(&mut self, now: Nanos, u: f64) -> Gate {
        let p = self.probability(now);
        self.requests.push_back(now);
        if p > 0.0 && u < p {
            Gate::Reject
        } else {
            Gate::Pass
        }
    }

    /// Counts an accept at `now` if the answer is one.
    pub(super) fn on_answer(&mut self, now: Nanos, success: bool, rejected: bool) {
        let accepted = match self.cfg.accepts {
            Accepts::Success => success,
            Accepts::NotRejected => !rejected,
        };
        if accepted {
            self.accepted.push_back(now);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::Limiter;
    use super::*;

    #[test]
    fn throttle_counts_only_the_window() {
        let s = 1_000_000_000;
        let mut l = Limiter::new(LimiterConfig::AdaptiveThrottling(Config {
            k: 2.0,
            window: 10 * s,
            padding: 1.0,
            accepts: Accepts::Success,
        }));
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
}
