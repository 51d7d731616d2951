//! Envoy's local rate limit (`envoy.filters.http.local_ratelimit`): a token bucket
//! refilled by a timer, as `LocalRateLimiterImpl::onFillTimer` does in Envoy v1.17
//! (`type.v3.TokenBucket`: `max_tokens`, also the initial content; `tokens_per_fill`,
//! default 1; `fill_interval`, at least 50 ms). Every `fill_interval` from the
//! limiter's creation (time 0 here) the bucket gains `tokens_per_fill`, never more
//! than `max_tokens`; an attempt takes a token or is answered 429. The fill is
//! discrete: nothing trickles in between two fills.
//!
//! The timer is replayed lazily and exactly: the fills due by `now` (those at
//! `k·fill_interval ≤ now`, so a fill at the same instant as an arrival comes first)
//! are added in one step, `min(max, tokens + k·per_fill)`, which is what `k`
//! capped additions give. O(1) per attempt, no events.

use serde::{Deserialize, Serialize};

use super::{status_of, AdmissionConfig, Verdict};
use crate::engine::time::MILLISECOND;
use crate::engine::Nanos;
use crate::model::field::{Ctx, Dur, R};
use crate::model::text::{fmt_num, fmt_time};

/// Envoy refuses a fill interval shorter than this.
pub(crate) const MIN_FILL_INTERVAL: Nanos = 50 * MILLISECOND;

/// Tokens added per fill when `tokens_per_fill` is not written.
pub(crate) const DEFAULT_TOKENS_PER_FILL: u64 = 1;

/// `{ kind = "token_bucket", ... }` as written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Written {
    /// Bucket size and initial content (required; 0 rejects everything).
    pub max_tokens: Option<u64>,
    /// Tokens added per fill (default 1).
    #[schemars(extend("default" = DEFAULT_TOKENS_PER_FILL))]
    pub tokens_per_fill: Option<u64>,
    /// Time between fills (required, at least 50ms).
    pub fill_interval: Option<Dur>,
    /// Status of a rejection: 429 (default) or 503.
    #[schemars(extend("default" = super::DEFAULT_STATUS))]
    pub status: Option<u16>,
}

impl Written {
    /// The validated limiter; `p` is the field path of the table.
    pub fn validate(&self, c: &Ctx, p: &str) -> R<AdmissionConfig> {
        let Some(max_tokens) = self.max_tokens else {
            return c.err(
                format!("{p}.max_tokens"),
                "is required for kind = \"token_bucket\" (the bucket's size and initial tokens)",
            );
        };
        let max_tokens = c.u32_field(&format!("{p}.max_tokens"), max_tokens)?;
        let per_fill = self.tokens_per_fill.unwrap_or(DEFAULT_TOKENS_PER_FILL);
        let per_fill = c.at_least(&format!("{p}.tokens_per_fill"), per_fill, 1)?;
        let per_fill = c.u32_field(&format!("{p}.tokens_per_fill"), per_fill)?;
        let Some(fill) = self.fill_interval else {
            return c.err(
                format!("{p}.fill_interval"),
                "is required for kind = \"token_bucket\" (a duration, at least 50ms)",
            );
        };
        if fill.0 < MIN_FILL_INTERVAL {
            return c.err(
                format!("{p}.fill_interval"),
                format!(
                    "must be at least 50ms, as Envoy requires (found {})",
                    fmt_time(fill.0)
                ),
            );
        }
        Ok(AdmissionConfig::TokenBucket(Config {
            max_tokens,
            tokens_per_fill: per_fill,
            fill_interval: fill.0,
            status: status_of(c, p, self.status)?,
        }))
    }
}

/// Validated settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Config {
    /// Bucket size and initial content.
    pub max_tokens: u32,
    /// Tokens per fill.
    pub tokens_per_fill: u32,
    /// Time between fills (ns).
    pub fill_interval: Nanos,
    /// Status of a rejection.
    pub status: u16,
}

impl Config {
    /// What explain says of the limiter.
    pub(super) fn describe(&self) -> String {
        format!(
            "token bucket (Envoy local rate limit, timer refill as in v1.17): {} tokens at most, {} added every {} (a steady {}/s), a burst of {} at once; an attempt takes a token or is answered {} without Retry-After",
            self.max_tokens,
            self.tokens_per_fill,
            fmt_time(self.fill_interval),
            fmt_num(self.rate()),
            self.max_tokens,
            self.status
        )
    }

    /// Tokens per second in the steady state.
    pub fn rate(&self) -> f64 {
        f64::from(self.tokens_per_fill) * 1e9 / self.fill_interval as f64
    }
}

/// The bucket's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Bucket {
    cfg: Config,
    tokens: u64,
    /// Fills applied so far (the timer's firings at `k·fill_interval`, `k ≥ 1`).
    fills: u64,
}

impl Bucket {
    /// A full bucket at time 0.
    pub(crate) fn new(cfg: Config) -> Bucket {
        Bucket {
            cfg,
            tokens: u64::from(cfg.max_tokens),
            fills: 0,
        }
    }

    /// Tokens now, after the fills due by `now`.
    pub(crate) fn tokens(&mut self, now: Nanos) -> u64 {
        let due = now / self.cfg.fill_interval;
        if due > self.fills {
            let add = (due - self.fills).saturating_mul(u64::from(self.cfg.tokens_per_fill));
            self.tokens = self
                .tokens
                .saturating_add(add)
                .min(u64::from(self.cfg.max_tokens));
            self.fills = due;
        }
        self.tokens
    }

    /// An attempt arrives at `now`: it takes a token, or is rejected.
    #[inline]
    pub(crate) fn admit(&mut self, now: Nanos) -> Verdict {
        if self.tokens(now) >= 1 {
            self.tokens -= 1;
            Verdict::Admit
        } else {
            Verdict::Limit(None)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::time::SECOND;

    fn bucket(max: u32, per: u32, fill: Nanos) -> Bucket {
        Bucket::new(Config {
            max_tokens: max,
            tokens_per_fill: per,
            fill_interval: fill,
            status: 429,
        })
    }

    /// Replays `LocalRateLimiterImplTest` of Envoy's
    /// `test/extensions/filters/common/local_ratelimit/local_ratelimit_test.cc`
    /// (commit 01f8613, v1.18): each fill timer callback is the next fill instant.
    #[test]
    fn envoy_local_rate_limiter_tests_are_replayed_decision_for_decision() {
        let f = 200 * MILLISECOND;
        let (a, l) = (Verdict::Admit, Verdict::Limit(None));
        // TokenBucket: (200ms, max 1, 1 per fill).
        let mut b = bucket(1, 1, f);
        assert_eq!([b.admit(0), b.admit(0), b.admit(0)], [a, l, l]);
        assert_eq!([b.admit(f), b.admit(f)], [a, l]);
        assert_eq!([b.admit(3 * f), b.admit(3 * f)], [a, l]); // two fills, 1 -> 1
                                                              // TokenBucketMultipleTokensPerFill: (200ms, 2, 2).
        let mut b = bucket(2, 2, f);
        assert_eq!([b.admit(0), b.admit(0), b.admit(0)], [a, a, l]);
        assert_eq!(b.admit(f), a); // 2 -> 1
        assert_eq!([b.admit(2 * f), b.admit(2 * f), b.admit(2 * f)], [a, a, l]); // 1 -> 2
                                                                                 // TokenBucketMaxTokensGreaterThanTokensPerFill: (200ms, 2, 1).
        let mut b = bucket(2, 1, f);
        assert_eq!([b.admit(0), b.admit(0), b.admit(0)], [a, a, l]);
        assert_eq!([b.admit(f), b.admit(f)], [a, l]);
    }

    #[test]
    fn the_fill_is_discrete_and_a_fill_at_the_arrival_instant_comes_first() {
        let mut b = bucket(10, 5, SECOND);
        for _ in 0..10 {
            assert_eq!(b.admit(0), Verdict::Admit);
        }
        assert_eq!(b.admit(SECOND - 1), Verdict::Limit(None));
        for _ in 0..5 {
            assert_eq!(b.admit(SECOND), Verdict::Admit);
        }
        assert_eq!(b.admit(SECOND), Verdict::Limit(None));
    }

    #[test]
    fn zero_tokens_rejects_everything() {
        let mut b = bucket(0, 1, SECOND);
        assert_eq!(b.admit(0), Verdict::Limit(None));
        assert_eq!(b.admit(100 * SECOND), Verdict::Limit(None));
    }
}
