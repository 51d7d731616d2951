//! The AWS SDK standard retry quota: 500 tokens, a retry costs 5 (10 after a timeout);
//! a success refunds the last retry's cost, or 1 when the call did not retry. Version
//! 2.1 (the 2026 update) costs 14, and 5 after a throttling error: a
//! `throttling_cost` of its own.

use serde::{Deserialize, Serialize};

use crate::engine::Nanos;
use crate::model::bound::Bound;
use crate::model::field::{Ctx, R};
use crate::model::text::fmt_count;

use super::{across, BudgetBound, BudgetPolicy, BudgetState, RetryCause};

/// Default bucket size.
pub(crate) const DEFAULT_CAPACITY: u64 = 500;
/// Default cost of a retry.
pub(crate) const DEFAULT_RETRY_COST: u64 = 5;
/// Default cost of a retry after a timeout.
pub(crate) const DEFAULT_TIMEOUT_COST: u64 = 10;
/// Default refund of a success without retry.
pub(crate) const DEFAULT_SUCCESS_REFUND: u64 = 1;

/// The `aws_standard` table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Written {
    /// Bucket size.
    #[schemars(extend("default" = DEFAULT_CAPACITY))]
    pub capacity: Option<u64>,
    /// Cost of a retry.
    #[schemars(extend("default" = DEFAULT_RETRY_COST))]
    pub retry_cost: Option<u64>,
    /// Cost of a retry after a timeout.
    #[schemars(extend("default" = DEFAULT_TIMEOUT_COST))]
    pub timeout_cost: Option<u64>,
    /// Refund of a success without retry.
    #[schemars(extend("default" = DEFAULT_SUCCESS_REFUND))]
    pub success_refund: Option<u64>,
    /// Cost of a retry after a throttling error (default: `retry_cost`).
    pub throttling_cost: Option<u64>,
}

/// AWS standard retry quota.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Config {
    /// Bucket size.
    pub capacity: u64,
    /// Cost of a retry (after a transient error).
    pub retry_cost: u64,
    /// Cost of a retry after a timeout.
    pub timeout_cost: u64,
    /// Refund of a success without retry.
    pub success_refund: u64,
    /// Cost of a retry after a throttling error (version 2.1), if it has its own.
    pub throttling_cost: Option<u64>,
}

impl Written {
    /// The quota's rules; `p` is the table's path.
    pub fn validate(&self, c: &Ctx, p: &str) -> R<Config> {
        let capacity = c.at_least(
            &format!("{p}.capacity"),
            self.capacity.unwrap_or(DEFAULT_CAPACITY),
            1,
        )?;
        let retry_cost = c.at_least(
            &format!("{p}.retry_cost"),
            self.retry_cost.unwrap_or(DEFAULT_RETRY_COST),
            1,
        )?;
        let timeout_cost = c.at_least(
            &format!("{p}.timeout_cost"),
            self.timeout_cost.unwrap_or(DEFAULT_TIMEOUT_COST),
            1,
        )?;
        let success_refund = self.success_refund.unwrap_or(DEFAULT_SUCCESS_REFUND);
        let throttling_cost = match self.throttling_cost {
            None => None,
            Some(t) => Some(c.at_least(&format!("{p}.throttling_cost"), t, 1)?),
        };
        Ok(Config {
            capacity,
            retry_cost,
            timeout_cost,
            success_refund,
            throttling_cost,
        })
    }
}

/// The quota of one instance.
#[derive(Debug, Clone)]
pub struct State {
    /// Tokens left.
    tokens: u64,
    /// The settings.
    cfg: Config,
}

impl BudgetPolicy for Config {
    type State = State;
    type Cap = Cap;

    fn state(&self, _slices: u64) -> State {
        State {
            tokens: self.capacity,
            cfg: *self,
        }
    }

    fn cap(&self) -> Cap {
        let retries = |cost: u64| {
            self.capacity
                .checked_div(cost)
                .map_or(Bound::Unbounded, Bound::Finite)
        };
        Cap {
            capacity: self.capacity,
            retry_cost: self.retry_cost,
            timeout_cost: self.timeout_cost,
            throttling_cost: self.throttling_cost,
            retries: retries(self.retry_cost),
            retries_after_timeouts: retries(self.timeout_cost),
            retries_after_throttling: self.throttling_cost.map(retries),
        }
    }
}

impl BudgetState for State {
    #[inline]
    fn on_success(&mut self, last_retry_cost: u64) {
        let refund = if last_retry_cost == 0 {
            self.cfg.success_refund
        } else {
            last_retry_cost
        };
        self.tokens = (self.tokens + refund).min(self.cfg.capacity);
    }

    fn ask(&mut self, _now: Nanos, cause: RetryCause) -> Option<u64> {
        let cost = match (self.cfg.throttling_cost, cause.throttled) {
            // Version 2.1 asks "throttling?" first; a timeout is not one.
            (Some(t), true) => t,
            _ if cause.timeout => self.cfg.timeout_cost,
            _ => self.cfg.retry_cost,
        };
        if self.tokens >= cost {
            self.tokens -= cost;
            Some(cost)
        } else {
            None
        }
    }

    fn level(&self, _now: Nanos) -> f64 {
        self.tokens as f64 / self.cfg.capacity.max(1) as f64
    }

    fn tokens(&self) -> u64 {
        self.tokens
    }
}

/// What a quota allows when every attempt fails.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cap {
    /// Bucket size.
    pub capacity: u64,
    /// Cost of a retry.
    pub retry_cost: u64,
    /// Cost of a retry after a timeout.
    pub timeout_cost: u64,
    /// Cost after a throttling error, if it has its own (version 2.1).
    pub throttling_cost: Option<u64>,
    /// `floor(capacity / retry_cost)`; unbounded when the cost is 0.
    pub retries: Bound,
    /// `floor(capacity / timeout_cost)`; unbounded when the cost is 0.
    pub retries_after_timeouts: Bound,
    /// `floor(capacity / throttling_cost)`, with a throttling cost.
    pub retries_after_throttling: Option<Bound>,
}

impl BudgetBound for Cap {
    fn sustained(&self) -> f64 {
        match (self.throttling_cost, self.retries) {
            (Some(_), _) | (None, Bound::Finite(_)) => 1.0,
            (None, Bound::Unbounded) => f64::INFINITY,
        }
    }

    fn describe(&self, instances: u64) -> String {
        let Cap {
            capacity,
            retry_cost,
            timeout_cost,
            retries,
            retries_after_timeouts,
            ..
        } = *self;
        match (self.throttling_cost, self.retries_after_throttling) {
            (Some(throttling_cost), Some(retries_after_throttling)) => format!(
                "AWS standard quota of {capacity}, a retry costs {retry_cost} ({timeout_cost} after a timeout, {throttling_cost} after a throttling error); when every attempt fails it allows at most floor({capacity}/{retry_cost}) = {} retries per instance{} (floor({capacity}/{throttling_cost}) = {} after throttling errors), then none until successes refund it",
                fmt_count(retries),
                across(retries, instances),
                fmt_count(retries_after_throttling)
            ),
            _ => format!(
                "AWS standard quota of {capacity}, a retry costs {retry_cost} ({timeout_cost} after a timeout); when every attempt fails it allows at most floor({capacity}/{retry_cost}) = {} retries per instance{} (floor({capacity}/{timeout_cost}) = {} after timeouts), then none until successes refund it",
                fmt_count(retries),
                across(retries, instances),
                fmt_count(retries_after_timeouts)
            ),
        }
    }

    fn short(&self) -> String {
        let Cap {
            capacity,
            retry_cost,
            timeout_cost,
            ..
        } = *self;
        match self.throttling_cost {
            Some(throttling_cost) => format!(
                "retry quota {capacity}, cost {retry_cost} ({throttling_cost} after throttling)"
            ),
            None => format!(
                "retry quota {capacity}, cost {retry_cost} ({timeout_cost} after a timeout)"
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Budget, BudgetConfig};
    use super::*;

    #[test]
    fn aws_quota_scripted_sequence() {
        let mut b = Budget::new(BudgetConfig::AwsStandard(Config {
            capacity: 20,
            retry_cost: 5,
            timeout_cost: 10,
            success_refund: 1,
            throttling_cost: None,
        }));
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
}
