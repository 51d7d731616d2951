//! Retry budgets: per-instance state that may deny a retry.
//!
//! Three kinds, after the libraries that ship them:
//! - **token bucket** (gRPC retry throttling, gRFC A6): integer milli-tokens, starting
//!   full; every failed attempt takes 1000 (floored at 0), every success gives back
//!   `token_ratio · 1000` (capped at the max); a retry is allowed only while
//!   `tokens > max / 2`, decided *after* the failure is counted.
//! - **ratio** (Finagle / SRE book): in any trailing `window`, retries may not exceed
//!   `percent` of the calls plus `min_per_sec · window`.
//! - **AWS standard retry quota**: 500 tokens, a retry costs 5 (10 after a timeout); a
//!   success refunds the last retry's cost, or 1 when the call did not retry.
//!
//! ```
//! use retrysim::model::budget::Budget;
//! use retrysim::scenario::config::BudgetConfig;
//! let mut b = Budget::new(BudgetConfig::TokenBucket { max_milli: 4000, ratio_milli: 100 });
//! b.on_failure();                      // 3000 > 2000
//! assert_eq!(b.try_retry(0, false), Some(0));
//! b.on_failure();                      // 2000, not > 2000
//! assert_eq!(b.try_retry(0, false), None);
//! ```

use std::collections::VecDeque;

use crate::engine::time::to_secs;
use crate::engine::Nanos;
use crate::scenario::config::BudgetConfig;

/// One instance's retry budget.
#[derive(Debug, Clone)]
pub enum Budget {
    /// gRPC retry throttling.
    TokenBucket {
        /// Current milli-tokens.
        tokens: u64,
        /// Capacity in milli-tokens.
        max: u64,
        /// Milli-tokens returned per success.
        ratio: u64,
    },
    /// Sliding-window retry ratio.
    Ratio {
        /// Times of calls in the window.
        calls: VecDeque<Nanos>,
        /// Times of retries in the window.
        retries: VecDeque<Nanos>,
        /// Allowed fraction of calls.
        fraction: f64,
        /// Floor per second.
        min_per_sec: f64,
        /// Window.
        window: Nanos,
    },
    /// AWS standard retry quota.
    AwsStandard {
        /// Tokens left.
        tokens: u64,
        /// Capacity.
        capacity: u64,
        /// Retry cost.
        retry_cost: u64,
        /// Cost after a timeout.
        timeout_cost: u64,
        /// Refund of a success without retry.
        success_refund: u64,
    },
}

impl Budget {
    /// A fresh, full budget.
    pub fn new(cfg: BudgetConfig) -> Budget {
        match cfg {
            BudgetConfig::TokenBucket {
                max_milli,
                ratio_milli,
            } => Budget::TokenBucket {
                tokens: max_milli,
                max: max_milli,
                ratio: ratio_milli,
            },
            BudgetConfig::Ratio {
                fraction,
                min_per_sec,
                window,
            } => Budget::Ratio {
                calls: VecDeque::new(),
                retries: VecDeque::new(),
                fraction,
                min_per_sec,
                window,
            },
            BudgetConfig::AwsStandard {
                capacity,
                retry_cost,
                timeout_cost,
                success_refund,
            } => Budget::AwsStandard {
                tokens: capacity,
                capacity,
                retry_cost,
                timeout_cost,
                success_refund,
            },
        }
    }

    /// A new call entered the layer (its first attempt).
    #[inline]
    pub fn on_call(&mut self, now: Nanos) {
        if let Budget::Ratio { calls, .. } = self {
            calls.push_back(now);
        }
    }

    /// An attempt failed with a retryable class (counted whether or not a retry follows).
    #[inline]
    pub fn on_failure(&mut self) {
        if let Budget::TokenBucket { tokens, .. } = self {
            *tokens = tokens.saturating_sub(1000);
        }
    }

    /// An attempt succeeded; `last_retry_cost` is what the call's last retry acquired
    /// (0 when the call did not retry).
    #[inline]
    pub fn on_success(&mut self, last_retry_cost: u64) {
        match self {
            Budget::TokenBucket { tokens, max, ratio } => {
                *tokens = (*tokens + *ratio).min(*max);
            }
            Budget::Ratio { .. } => {}
            Budget::AwsStandard {
                tokens,
                capacity,
                success_refund,
                ..
            } => {
                let refund = if last_retry_cost == 0 {
                    *success_refund
                } else {
                    last_retry_cost
                };
                *tokens = (*tokens + refund).min(*capacity);
            }
        }
    }

    /// Asks for one retry at `now`. `Some(cost)` allows it (`cost` is what the AWS quota
    /// took, 0 otherwise); `None` denies it.
    pub fn try_retry(&mut self, now: Nanos, after_timeout: bool) -> Option<u64> {
        match self {
            Budget::TokenBucket { tokens, max, .. } => (*tokens > *max / 2).then_some(0),
            Budget::Ratio {
                calls,
                retries,
                fraction,
                min_per_sec,
                window,
            } => {
                let from = now.saturating_sub(*window);
                // The window is (now - window, now].
                while calls.front().is_some_and(|&t| t <= from && now >= *window) {
                    calls.pop_front();
                }
                while retries
                    .front()
                    .is_some_and(|&t| t <= from && now >= *window)
                {
                    retries.pop_front();
                }
                let allowed = *fraction * calls.len() as f64 + *min_per_sec * to_secs(*window);
                if (retries.len() + 1) as f64 <= allowed + 1e-9 {
                    retries.push_back(now);
                    Some(0)
                } else {
                    None
                }
            }
            Budget::AwsStandard {
                tokens,
                retry_cost,
                timeout_cost,
                ..
            } => {
                let cost = if after_timeout {
                    *timeout_cost
                } else {
                    *retry_cost
                };
                if *tokens >= cost {
                    *tokens -= cost;
                    Some(cost)
                } else {
                    None
                }
            }
        }
    }

    /// Fill level in [0, 1], for the `budget_level` time series.
    pub fn level(&self, now: Nanos) -> f64 {
        match self {
            Budget::TokenBucket { tokens, max, .. } => *tokens as f64 / (*max).max(1) as f64,
            Budget::AwsStandard {
                tokens, capacity, ..
            } => *tokens as f64 / (*capacity).max(1) as f64,
            Budget::Ratio {
                calls,
                retries,
                fraction,
                min_per_sec,
                window,
            } => {
                let from = now.saturating_sub(*window);
                let c = calls
                    .iter()
                    .rev()
                    .take_while(|&&t| t > from || now < *window)
                    .count();
                let r = retries
                    .iter()
                    .rev()
                    .take_while(|&&t| t > from || now < *window)
                    .count();
                let allowed = *fraction * c as f64 + *min_per_sec * to_secs(*window);
                if allowed <= 0.0 {
                    0.0
                } else {
                    (1.0 - r as f64 / allowed).clamp(0.0, 1.0)
                }
            }
        }
    }

    /// Current tokens (milli-tokens for the token bucket), for tests and traces.
    pub fn tokens(&self) -> u64 {
        match self {
            Budget::TokenBucket { tokens, .. } | Budget::AwsStandard { tokens, .. } => *tokens,
            Budget::Ratio { retries, .. } => retries.len() as u64,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::time::SECOND;

    fn bucket(max: f64, ratio: f64) -> Budget {
        Budget::new(BudgetConfig::TokenBucket {
            max_milli: (max * 1000.0) as u64,
            ratio_milli: (ratio * 1000.0) as u64,
        })
    }

    #[test]
    fn token_bucket_scripted_sequence() {
        // gRFC A6 example: maxTokens 10, tokenRatio 0.1.
        let mut b = bucket(10.0, 0.1);
        let mut trace = Vec::new();
        for ok in [false, false, true, false, false, false, false, true, true] {
            if ok {
                b.on_success(0);
                trace.push((b.tokens(), None));
            } else {
                b.on_failure();
                trace.push((b.tokens(), Some(b.try_retry(0, false).is_some())));
            }
        }
        assert_eq!(
            trace,
            vec![
                (9000, Some(true)),
                (8000, Some(true)),
                (8100, None),
                (7100, Some(true)),
                (6100, Some(true)),
                (5100, Some(true)),
                (4100, Some(false)),
                (4200, None),
                (4300, None),
            ]
        );
    }

    #[test]
    fn token_bucket_at_total_failure_allows_ceil_half_minus_one_retries() {
        for (max, expect) in [(10.0, 4), (11.0, 5), (4.0, 1), (100.0, 49), (1.0, 0)] {
            let mut b = bucket(max, 0.1);
            let mut allowed = 0;
            for _ in 0..1000 {
                b.on_failure();
                if b.try_retry(0, false).is_some() {
                    allowed += 1;
                }
            }
            assert_eq!(allowed, expect, "max_tokens {max}");
        }
    }

    #[test]
    fn token_bucket_never_exceeds_its_max_or_goes_negative() {
        let mut b = bucket(3.0, 2.5);
        for _ in 0..10 {
            b.on_success(0);
        }
        assert_eq!(b.tokens(), 3000);
        for _ in 0..10 {
            b.on_failure();
        }
        assert_eq!(b.tokens(), 0);
    }

    #[test]
    fn aws_quota_scripted_sequence() {
        let mut b = Budget::new(BudgetConfig::AwsStandard {
            capacity: 20,
            retry_cost: 5,
            timeout_cost: 10,
            success_refund: 1,
        });
        assert_eq!(b.try_retry(0, false), Some(5)); // 15
        assert_eq!(b.try_retry(0, true), Some(10)); // 5
        assert_eq!(b.try_retry(0, true), None); // 5 < 10
        assert_eq!(b.tokens(), 5);
        b.on_success(10); // refund the last retry's cost
        assert_eq!(b.tokens(), 15);
        b.on_success(0); // no retry: +1
        assert_eq!(b.tokens(), 16);
        b.on_success(5);
        assert_eq!(b.tokens(), 20); // capped
        assert_eq!(b.try_retry(0, false), Some(5));
        assert_eq!(b.try_retry(0, false), Some(5));
        assert_eq!(b.try_retry(0, false), Some(5));
        assert_eq!(b.try_retry(0, false), Some(5));
        assert_eq!(b.try_retry(0, false), None);
        assert_eq!(b.tokens(), 0);
    }

    #[test]
    fn ratio_budget_counts_a_sliding_window() {
        let mut b = Budget::new(BudgetConfig::Ratio {
            fraction: 0.2,
            min_per_sec: 0.0,
            window: 10 * SECOND,
        });
        for i in 0..10 {
            b.on_call(i * SECOND / 10);
        }
        // 10 calls → 2 retries allowed.
        assert!(b.try_retry(SECOND, false).is_some());
        assert!(b.try_retry(SECOND, false).is_some());
        assert!(b.try_retry(SECOND, false).is_none());
        // After the window has passed, the calls and retries expire.
        b.on_call(12 * SECOND);
        for _ in 0..4 {
            b.on_call(12 * SECOND);
        }
        assert!(b.try_retry(12 * SECOND, false).is_some());
        assert!(b.try_retry(12 * SECOND, false).is_none());
    }

    #[test]
    fn ratio_budget_floor_allows_min_per_sec_times_window() {
        let mut b = Budget::new(BudgetConfig::Ratio {
            fraction: 0.0,
            min_per_sec: 2.0,
            window: 5 * SECOND,
        });
        let n = (0..100)
            .filter(|_| b.try_retry(SECOND, false).is_some())
            .count();
        assert_eq!(n, 10);
    }
}
