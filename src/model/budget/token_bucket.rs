//! gRPC retry throttling (gRFC A6): integer milli-tokens, starting full; every failed
//! attempt takes 1000 (floored at 0), every success gives back `token_ratio · 1000`
//! (capped at the max); a retry is allowed only while `tokens > max / 2`, decided
//! *after* the failure is counted.

use serde::{Deserialize, Serialize};

use crate::engine::Nanos;
use crate::model::bound::Bound;
use crate::model::field::{Ctx, R};
use crate::model::text::fmt_num;

use super::{across, BudgetBound, BudgetPolicy, BudgetState, RetryCause};

/// The `token_bucket` table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Written {
    /// Bucket size.
    pub max_tokens: f64,
    /// Tokens returned per success.
    pub token_ratio: f64,
}

/// gRPC throttling in milli-tokens.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Config {
    /// `max_tokens * 1000`.
    pub max_milli: u64,
    /// `token_ratio * 1000`.
    pub ratio_milli: u64,
}

impl Written {
    /// gRFC A6's rules; `p` is the table's path.
    pub fn validate(&self, c: &Ctx, p: &str) -> R<Config> {
        let mt = c.finite(&format!("{p}.max_tokens"), self.max_tokens)?;
        // gRFC A6: maxTokens is an integer in (0, 1000].
        if mt.fract() != 0.0 || !(1.0..=1000.0).contains(&mt) {
            return c.err(
                format!("{p}.max_tokens"),
                format!("must be an integer from 1 to 1000, as gRFC A6 allows (found {mt})"),
            );
        }
        let tr = c.finite(&format!("{p}.token_ratio"), self.token_ratio)?;
        if !(0.0..=1e6).contains(&tr) {
            return c.err(
                format!("{p}.token_ratio"),
                format!("must be between 0 and 1e6 (found {tr})"),
            );
        }
        // gRPC keeps three decimals, truncated (0.5466 → 546): tokens are milli-tokens.
        Ok(Config {
            max_milli: mt as u64 * 1000,
            ratio_milli: milli_truncated(tr),
        })
    }
}

/// A non-negative number in thousandths, the decimals past the third dropped, as C-core
/// parses `tokenRatio` digit by digit (and grpc-java's `(int)(ratio · 1000)` in `float`
/// gives): 0.5466 → 546, 2.675 → 2675. It reads the shortest decimal form of `v`, which
/// is what the scenario file wrote.
pub(crate) fn milli_truncated(v: f64) -> u64 {
    let text = format!("{v}");
    let (int, frac) = text.split_once('.').unwrap_or((&text, ""));
    let int: u64 = int.parse().unwrap_or(0);
    let mut milli = 0;
    for i in 0..3 {
        let d = frac.as_bytes().get(i).map_or(0, |b| u64::from(b - b'0'));
        milli = milli * 10 + d;
    }
    int.saturating_mul(1000).saturating_add(milli)
}

/// The bucket of one instance.
#[derive(Debug, Clone)]
pub struct State {
    /// Current milli-tokens.
    tokens: u64,
    /// Capacity in milli-tokens.
    max: u64,
    /// Milli-tokens returned per success.
    ratio: u64,
}

impl BudgetPolicy for Config {
    type State = State;
    type Cap = Cap;

    fn state(&self, _slices: u64) -> State {
        State {
            tokens: self.max_milli,
            max: self.max_milli,
            ratio: self.ratio_milli,
        }
    }

    fn cap(&self) -> Cap {
        // After failure k the bucket holds max − 1000k milli-tokens; a retry needs
        // more than max/2 (integer halving, as the model does): 1000k < max − max/2.
        let above_half = self.max_milli - self.max_milli / 2;
        Cap {
            max_tokens: self.max_milli as f64 / 1000.0,
            token_ratio: self.ratio_milli as f64 / 1000.0,
            retries_at_total_failure: above_half.saturating_sub(1) / 1000,
        }
    }
}

impl BudgetState for State {
    #[inline]
    fn on_failure(&mut self) {
        self.tokens = self.tokens.saturating_sub(1000);
    }

    #[inline]
    fn on_success(&mut self, _last_retry_cost: u64) {
        self.tokens = (self.tokens + self.ratio).min(self.max);
    }

    fn ask(&mut self, _now: Nanos, _cause: RetryCause) -> Option<u64> {
        (self.tokens > self.max / 2).then_some(0)
    }

    fn level(&self, _now: Nanos) -> f64 {
        self.tokens as f64 / self.max.max(1) as f64
    }

    fn tokens(&self) -> u64 {
        self.tokens
    }
}

/// What a token bucket allows when every attempt fails.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cap {
    /// `max_tokens`.
    pub max_tokens: f64,
    /// `token_ratio`.
    pub token_ratio: f64,
    /// Retries a full bucket allows when every attempt fails:
    /// `ceil(max_tokens / 2) − 1` (each failure takes a token, a retry needs more
    /// than half left).
    pub retries_at_total_failure: u64,
}

impl BudgetBound for Cap {
    fn sustained(&self) -> f64 {
        1.0
    }

    fn describe(&self, instances: u64) -> String {
        let Cap {
            max_tokens,
            token_ratio,
            retries_at_total_failure,
        } = *self;
        format!(
            "token bucket of {} tokens, {} back per success; when every attempt fails a full bucket allows at most ceil({}/2) − 1 = {} retries per instance{}, then none until successes refill it; over any period, retries ≤ {}/2 + {} × successes per instance",
            fmt_num(max_tokens),
            fmt_num(token_ratio),
            fmt_num(max_tokens),
            retries_at_total_failure,
            across(Bound::Finite(retries_at_total_failure), instances),
            fmt_num(max_tokens),
            fmt_num(token_ratio)
        )
    }

    fn short(&self) -> String {
        format!(
            "token bucket {} / {}",
            fmt_num(self.max_tokens),
            fmt_num(self.token_ratio)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Budget, BudgetConfig};
    use super::*;

    fn bucket(max: f64, ratio: f64) -> Budget {
        Budget::new(BudgetConfig::TokenBucket(Config {
            max_milli: (max * 1000.0) as u64,
            ratio_milli: (ratio * 1000.0) as u64,
        }))
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
    fn token_ratio_keeps_three_decimals_truncated() {
        assert_eq!(milli_truncated(0.5466), 546);
        assert_eq!(milli_truncated(2.675), 2675);
        assert_eq!(milli_truncated(10.0), 10_000);
    }
}
