//! redis-cell's GCRA (`brandur/redis-cell`, `src/cell/mod.rs` at commit 109e616, and
//! `CL.THROTTLE` in `src/lib.rs`): `rate` per `period` gives the emission interval
//! `T = period / rate` (whole ns; redis-cell divides in f64 and truncates, the same
//! below 2^53 ns), `max_burst` the tolerance `τ = T·(max_burst + 1)`.
//!
//! An attempt at `now` with the stored theoretical arrival time `tat` (`now` when
//! none): `new_tat = max(tat, now) + T`, `diff = now − (new_tat − τ)`. redis-cell tests
//! `diff.num_seconds() < 0`, in whole seconds truncated toward zero: an attempt less
//! than a second early passes (the whole-second quirk, emulated), so it is limited
//! only when `diff ≤ −1 s`; then `tat` is kept and the rejection carries
//! `retry_after = −diff`. `CL.THROTTLE` replies in whole seconds, adding one when the
//! sub-second part has milliseconds (`subsec_milliseconds() > 0`): that is the
//! Retry-After the client sees. Otherwise `tat = new_tat`, admitted.
//!
//! Integer nanoseconds throughout; O(1) per attempt.

use serde::{Deserialize, Serialize};

use super::{status_of, AdmissionConfig, Verdict};
use crate::engine::time::{MILLISECOND, SECOND};
use crate::engine::Nanos;
use crate::model::field::{Ctx, Dur, R};
use crate::model::text::{fmt_num, fmt_time};

/// Whether a rejection carries the computed Retry-After.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum RetryAfter {
    /// `CL.THROTTLE`'s `retry_after`, in whole seconds rounded up (the default).
    #[default]
    Computed,
    /// No Retry-After.
    None,
}

/// The period when `period` is not written.
pub(crate) const DEFAULT_PERIOD: Nanos = SECOND;

/// Attempts beyond the steady rate when `max_burst` is not written.
pub(crate) const DEFAULT_MAX_BURST: u64 = 0;

/// `{ kind = "gcra", ... }` as written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Written {
    /// Attempts per period (required, at least 1).
    pub rate: Option<u64>,
    /// The period (default 1s).
    #[schemars(extend("default" = crate::model::field::duration_text(DEFAULT_PERIOD)))]
    pub period: Option<Dur>,
    /// Attempts beyond the steady rate allowed at once (default 0).
    #[schemars(extend("default" = DEFAULT_MAX_BURST))]
    pub max_burst: Option<u64>,
    /// `"computed"` (default) or `"none"`.
    #[schemars(extend("default" = crate::model::field::default_of::<RetryAfter>()))]
    pub retry_after: Option<RetryAfter>,
    /// Status of a rejection: 429 (default) or 503.
    #[schemars(extend("default" = super::DEFAULT_STATUS))]
    pub status: Option<u16>,
}

/// The largest `τ` accepted: a day, so `T·(max_burst + 1)` cannot overflow.
const MAX_TOLERANCE: Nanos = 86_400 * SECOND;

impl Written {
    /// The validated limiter; `p` is the field path of the table.
    pub fn validate(&self, c: &Ctx, p: &str) -> R<AdmissionConfig> {
        let Some(rate) = self.rate else {
            return c.err(
                format!("{p}.rate"),
                "is required for kind = \"gcra\" (attempts per period, at least 1)",
            );
        };
        let rate = c.at_least(&format!("{p}.rate"), rate, 1)?;
        let period = match self.period {
            Some(d) => c.positive_dur(&format!("{p}.period"), d)?,
            None => DEFAULT_PERIOD,
        };
        let interval = period / rate;
        if interval == 0 {
            return c.err(
                format!("{p}.rate"),
                format!(
                    "must leave an emission interval of at least 1ns (period / rate; found {rate} per {})",
                    fmt_time(period)
                ),
            );
        }
        let max_burst = self.max_burst.unwrap_or(DEFAULT_MAX_BURST);
        let tolerance = interval.checked_mul(max_burst.saturating_add(1));
        let Some(tolerance) = tolerance.filter(|&t| t <= MAX_TOLERANCE) else {
            return c.err(
                format!("{p}.max_burst"),
                format!(
                    "must keep the tolerance (period / rate × (max_burst + 1)) at most 1 day (found max_burst = {max_burst} with an interval of {})",
                    fmt_time(interval)
                ),
            );
        };
        Ok(AdmissionConfig::Gcra(Config {
            interval,
            tolerance,
            computed: self.retry_after.unwrap_or_default() == RetryAfter::Computed,
            status: status_of(c, p, self.status)?,
        }))
    }
}

/// Validated settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Config {
    /// Emission interval `T` (ns).
    pub interval: Nanos,
    /// Delay-variation tolerance `τ = T·(max_burst + 1)` (ns).
    pub tolerance: Nanos,
    /// Whether a rejection carries the computed Retry-After.
    pub computed: bool,
    /// Status of a rejection.
    pub status: u16,
}

impl Config {
    /// The settings of `rate` per `period` with `max_burst`.
    pub fn new(rate: u64, period: Nanos, max_burst: u64) -> Config {
        let interval = period / rate;
        Config {
            interval,
            tolerance: interval * (max_burst + 1),
            computed: true,
            status: 429,
        }
    }

    /// What explain says of the limiter.
    pub(super) fn describe(&self) -> String {
        format!(
            "GCRA (redis-cell 109e616): one attempt per {} ({}/s), bursts of {} (tolerance {}); limited only when at least 1s early (redis-cell's whole-second test), answered {} {}",
            fmt_time(self.interval),
            fmt_num(1e9 / self.interval as f64),
            self.tolerance / self.interval,
            fmt_time(self.tolerance),
            self.status,
            if self.computed {
                "with the computed Retry-After in whole seconds (rounded up): every client rejected in the same second is told the same instant"
            } else {
                "without Retry-After"
            }
        )
    }
}

/// What redis-cell answers to one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Answer {
    /// Whether it is limited.
    pub limited: bool,
    /// Requests left in the burst.
    pub remaining: i64,
    /// Time until the limiter is back to full (ns).
    pub reset_after: Nanos,
    /// When limited (and it could ever pass), how long to wait (ns).
    pub retry_after: Option<Nanos>,
}

/// The limiter's state: the stored TAT.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Gcra {
    cfg: Config,
    tat: Option<Nanos>,
}

impl Gcra {
    /// No stored TAT.
    pub(crate) fn new(cfg: Config) -> Gcra {
        Gcra { cfg, tat: None }
    }

    /// `RateLimiter::rate_limit` for `quantity` at `now`.
    pub(crate) fn rate_limit(&mut self, now: Nanos, quantity: u64) -> Answer {
        let (t, tau) = (self.cfg.interval as i128, self.cfg.tolerance as i128);
        let now_i = now as i128;
        let tat = self.tat.map_or(now_i, |v| v as i128);
        let inc = t * quantity as i128;
        let new_tat = tat.max(now_i) + inc;
        let diff = now_i - (new_tat - tau);
        let (limited, ttl, retry_after) = if diff / (SECOND as i128) < 0 {
            let ra = (inc <= tau).then_some((-diff) as Nanos);
            (true, tat - now_i, ra)
        } else {
            self.tat = Some(new_tat as Nanos);
            (false, new_tat - now_i, None)
        };
        let next = tau - ttl;
        // redis-cell divides microseconds in f64 and truncates toward zero.
        let remaining = if next > -t {
            ((next / 1000) as f64 / (t / 1000) as f64) as i64
        } else {
            0
        };
        Answer {
            limited,
            remaining,
            reset_after: ttl.max(0) as Nanos,
            retry_after,
        }
    }

    /// An attempt arrives at `now`.
    #[inline]
    pub(crate) fn admit(&mut self, now: Nanos) -> Verdict {
        let a = self.rate_limit(now, 1);
        if !a.limited {
            return Verdict::Admit;
        }
        Verdict::Limit(
            a.retry_after
                .filter(|_| self.cfg.computed)
                .map(whole_seconds),
        )
    }
}

/// `CL.THROTTLE`'s reply: whole seconds, plus one when there are milliseconds left.
pub(crate) fn whole_seconds(d: Nanos) -> u64 {
    d / SECOND + u64::from((d % SECOND) / MILLISECOND > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// redis-cell's `it_rate_limits` (vector VA3): limit 5 (max_burst 4), 1 per
    /// second, each case (now, quantity) → (limited, remaining, reset_after,
    /// retry_after), `None` for redis-cell's −1.
    #[test]
    fn redis_cell_it_rate_limits_is_replayed_case_for_case() {
        let ms = MILLISECOND;
        let s = SECOND;
        let mut g = Gcra::new(Config::new(1, SECOND, 4));
        let start = 1_000 * s;
        let cases: [(Nanos, u64, i64, Nanos, Option<Nanos>, bool); 15] = [
            (0, 6, 5, 0, None, true),
            (0, 1, 4, s, None, false),
            (0, 1, 3, 2 * s, None, false),
            (0, 1, 2, 3 * s, None, false),
            (0, 1, 1, 4 * s, None, false),
            (0, 1, 0, 5 * s, None, false),
            (0, 1, 0, 5 * s, Some(s), true),
            (3000 * ms, 1, 2, 3000 * ms, None, false),
            (3100 * ms, 1, 1, 3900 * ms, None, false),
            (4000 * ms, 1, 1, 4000 * ms, None, false),
            (8000 * ms, 1, 4, 1000 * ms, None, false),
            (9500 * ms, 1, 4, 1000 * ms, None, false),
            (9500 * ms, 0, 4, s, None, false),
            (9500 * ms, 2, 2, 3 * s, None, false),
            (9500 * ms, 5, 2, 3 * s, Some(3 * s), true),
        ];
        for (i, (at, q, remaining, reset, retry, limited)) in cases.into_iter().enumerate() {
            let a = g.rate_limit(start + at, q);
            assert_eq!(
                a,
                Answer {
                    limited,
                    remaining,
                    reset_after: reset,
                    retry_after: retry
                },
                "case {i}"
            );
        }
    }

    #[test]
    fn an_attempt_less_than_a_second_early_passes_as_in_redis_cell() {
        // 10/s, no burst: τ = T = 100 ms. The k-th of simultaneous attempts is
        // (k − 1)·100 ms early, limited only from 1 s on: 10 pass at once (a strict
        // GCRA lets 1 through), the 11th is limited with retry_after 1.0 s.
        let mut g = Gcra::new(Config::new(10, SECOND, 0));
        let passed = (0..10).filter(|_| g.admit(0) == Verdict::Admit).count();
        assert_eq!(passed, 10);
        assert_eq!(g.admit(0), Verdict::Limit(Some(1)));
    }

    #[test]
    fn retry_after_is_rounded_up_to_whole_seconds_on_milliseconds_only() {
        assert_eq!(whole_seconds(SECOND), 1);
        assert_eq!(whole_seconds(SECOND + MILLISECOND), 2);
        assert_eq!(whole_seconds(SECOND + 999_999), 1);
        assert_eq!(whole_seconds(3 * SECOND + 500 * MILLISECOND), 4);
    }

    #[test]
    fn without_computed_retry_after_a_rejection_carries_none() {
        let mut cfg = Config::new(1, SECOND, 0);
        cfg.computed = false;
        let mut g = Gcra::new(cfg);
        assert_eq!(g.admit(0), Verdict::Admit);
        assert_eq!(g.admit(0), Verdict::Limit(None));
    }
}
