//! Probabilistic admission: an attempt is admitted with probability
//! `min(1, capacity / offered)`, where `offered` is the rate of attempts arriving at the
//! limiter (admitted or not) over the last `window`. Under a steady overload `λ >
//! capacity` it admits `capacity` per second on average, whatever `λ`.
//!
//! The offered rate is the sliding-window estimate of two fixed windows (the
//! sliding-window counter of Cloudflare's and Kong's rate limiters), O(1) per attempt:
//! windows are `[k·window, (k + 1)·window)` from time 0; `prev` counts the arrivals of
//! the previous window, `cur` those of the current one so far, this attempt included.
//! At `now`, `e = now − k·window` into window `k`, the arrivals of the last `window`
//! are estimated as `n = prev · (window − e) / window + cur` (the previous window's
//! arrivals taken as spread evenly), so `offered = n / window` and the attempt is
//! admitted with probability `p = min(1, capacity · window / n)`: drawn (`u < p`, `u`
//! uniform in [0, 1) from the tier's own stream `admission/<tier>`) only when `p < 1`.
//! A window with nothing before it (the first, or after an idle window) has `prev = 0`:
//! there the limiter admits every attempt until `cur` passes `capacity · window`.
//! Rejections carry no Retry-After.

use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::{AdmissionConfig, Verdict};
use crate::engine::time::SECOND;
use crate::engine::Nanos;
use crate::model::field::{Ctx, Dur, R};
use crate::model::text::{fmt_num, fmt_time};

/// `{ kind = "probabilistic", ... }` as written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Written {
    /// Attempts per second it admits under overload (required, greater than 0).
    pub capacity: Option<f64>,
    /// The window the offered rate is measured over (default 1s).
    #[schemars(extend("default" = crate::model::field::duration_text(DEFAULT_WINDOW)))]
    pub window: Option<Dur>,
    /// Status of a rejection: 429 (default) or 503.
    #[schemars(extend("default" = super::DEFAULT_STATUS))]
    pub status: Option<u16>,
}

/// The window the offered rate is measured over when none is written.
pub(crate) const DEFAULT_WINDOW: Nanos = SECOND;

impl Written {
    /// The validated limiter; `p` is the field path of the table.
    pub fn validate(&self, c: &Ctx, p: &str) -> R<AdmissionConfig> {
        let Some(capacity) = self.capacity else {
            return c.err(
                format!("{p}.capacity"),
                "is required for kind = \"probabilistic\" (attempts per second, greater than 0)",
            );
        };
        let capacity = c.positive(&format!("{p}.capacity"), capacity)?;
        let window = match self.window {
            Some(d) => c.positive_dur(&format!("{p}.window"), d)?,
            None => DEFAULT_WINDOW,
        };
        Ok(AdmissionConfig::Probabilistic(Config {
            per_window: capacity * window as f64 / 1e9,
            window,
            status: super::status_or(c, p, self.status, super::DEFAULT_STATUS)?,
        }))
    }
}

/// Validated settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Config {
    /// `capacity · window`: attempts admitted per window under overload.
    pub per_window: f64,
    /// The window (ns).
    pub window: Nanos,
    /// Status of a rejection.
    pub status: u16,
}

impl Config {
    /// Attempts per second it admits under overload.
    pub fn capacity(&self) -> f64 {
        self.per_window * 1e9 / self.window as f64
    }

    /// What explain says of the limiter.
    pub(super) fn describe(&self) -> String {
        format!(
            "probabilistic admission: admits with probability min(1, {}/s / offered), the offered rate being the attempts that reached it over the last {} (estimated from two fixed windows: the previous one's count, prorated, plus the current one's), drawn from the tier's own stream; under overload it admits {}/s on average whatever the offered rate, the rest answered {} without Retry-After",
            fmt_num(self.capacity()),
            fmt_time(self.window),
            fmt_num(self.capacity()),
            self.status
        )
    }
}

/// The counts of the two windows.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Probabilistic {
    cfg: Config,
    /// Index of the current window.
    index: u64,
    /// Arrivals in window `index − 1`.
    prev: u64,
    /// Arrivals in window `index` so far.
    cur: u64,
}

impl Probabilistic {
    /// Empty windows at time 0.
    pub(crate) fn new(cfg: Config) -> Probabilistic {
        Probabilistic {
            cfg,
            index: 0,
            prev: 0,
            cur: 0,
        }
    }

    /// Counts an attempt arriving at `now`; the probability it is admitted.
    pub(crate) fn probability(&mut self, now: Nanos) -> f64 {
        let w = self.cfg.window;
        let k = now / w;
        if k != self.index {
            self.prev = if k == self.index + 1 { self.cur } else { 0 };
            self.cur = 0;
            self.index = k;
        }
        self.cur += 1;
        let e = now - k * w;
        let n = self.prev as f64 * ((w - e) as f64 / w as f64) + self.cur as f64;
        (self.cfg.per_window / n).min(1.0)
    }

    /// An attempt arrives at `now`; `rng` draws when it is not admitted for sure.
    #[inline]
    pub(crate) fn admit(&mut self, now: Nanos, rng: &mut ChaCha8Rng) -> Verdict {
        let p = self.probability(now);
        if p >= 1.0 || rng.random::<f64>() < p {
            Verdict::Admit
        } else {
            Verdict::Limit(None)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::time::MILLISECOND;

    fn limiter(capacity: f64, window: Nanos) -> Probabilistic {
        Probabilistic::new(Config {
            per_window: capacity * window as f64 / 1e9,
            window,
            status: 429,
        })
    }

    #[test]
    fn the_estimate_prorates_the_previous_window_and_counts_the_current() {
        let mut l = limiter(10.0, SECOND);
        // Window 0: 40 arrivals; the first 10 are admitted for sure.
        let ps: Vec<f64> = (0..40)
            .map(|i| l.probability(i * 20 * MILLISECOND))
            .collect();
        assert!(ps[..10].iter().all(|&p| p == 1.0));
        assert_eq!(ps[19], 10.0 / 20.0);
        assert_eq!(ps[39], 10.0 / 40.0);
        // A quarter into window 1: 40 · 3/4 + 1 = 31 arrivals in the last second.
        assert_eq!(l.probability(SECOND + 250 * MILLISECOND), 10.0 / 31.0);
        // Window 3 after an empty window 2: nothing before it.
        assert_eq!(l.probability(3 * SECOND), 1.0);
    }

    #[test]
    fn below_capacity_everything_is_admitted_without_a_draw() {
        use rand::SeedableRng;
        let mut l = limiter(100.0, SECOND);
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let before = rng.clone();
        // 50/s offered against 100/s: at most 51 in any last second.
        for i in 0..500 {
            assert_eq!(l.admit(i * 20 * MILLISECOND, &mut rng), Verdict::Admit);
        }
        assert_eq!(rng, before, "no draw while p = 1");
    }
}
