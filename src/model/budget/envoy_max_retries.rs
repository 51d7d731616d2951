//! Envoy as it ships, without a `RetryBudget`: `ResourceManagerImpl`'s `retries_`
//! resource, the cluster circuit breaker `max_retries` (default 3). The same count of
//! outstanding retries against a fixed maximum: an [`super::envoy`] state with
//! `percent` 0 and `min_concurrency = max_retries`.

use serde::{Deserialize, Serialize};

use crate::model::bound::Bound;
use crate::model::field::{Ctx, R};

use super::{across, envoy, BudgetBound, BudgetPolicy};

/// Default `max_retries`.
pub(crate) const DEFAULT_MAX_RETRIES: u64 = 3;

/// The `envoy_max_retries` table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Written {
    /// Concurrent retries allowed per instance.
    #[schemars(extend("default" = DEFAULT_MAX_RETRIES))]
    pub max_retries: Option<u64>,
}

/// Envoy's circuit-breaker threshold `max_retries`: retries in flight (granted, not
/// yet answered) stay below it; also what `explain` says of it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Config {
    /// `max_retries` (default 3).
    pub max_retries: u32,
}

/// What `explain` says of `max_retries`: its setting.
pub(crate) type Cap = Config;

impl Written {
    /// The threshold's rules; `p` is the table's path.
    pub fn validate(&self, c: &Ctx, p: &str) -> R<Config> {
        let m = self.max_retries.unwrap_or(DEFAULT_MAX_RETRIES);
        if m > u64::from(u32::MAX) {
            return c.err(
                format!("{p}.max_retries"),
                format!("must be at most {} (found {m})", u32::MAX),
            );
        }
        Ok(Config {
            max_retries: m as u32,
        })
    }
}

impl BudgetPolicy for Config {
    type State = envoy::State;
    type Cap = Cap;

    fn state(&self, _slices: u64) -> envoy::State {
        envoy::State::new(0.0, self.max_retries, false)
    }

    fn cap(&self) -> Cap {
        *self
    }
}

impl BudgetBound for Config {
    /// A bound on concurrency: fast failures retry as often as max_attempts lets them.
    fn sustained(&self) -> f64 {
        f64::INFINITY
    }

    fn describe(&self, instances: u64) -> String {
        format!(
            "Envoy circuit breaker max_retries (as shipped, no retry budget configured): fewer than {} retries in flight at once per instance{}, a bound on concurrency, not on the retry rate",
            self.max_retries,
            across(Bound::Finite(u64::from(self.max_retries)), instances)
        )
    }

    fn short(&self) -> String {
        format!(
            "circuit breaker max_retries {} (concurrent retries)",
            self.max_retries
        )
    }
}
