//! Envoy's retry budget (`RetryBudgetImpl` in `resource_manager_impl.h`): a
//! concurrency bound: a retry is allowed while the outstanding retries (granted, not yet
//! answered) are fewer than `max((uint64)(percent/100 · (active + pending)),
//! min_concurrency)`, active + pending being this instance's attempts in flight. A
//! retry waiting in backoff counts as a retry but not as a request (issue #30205);
//! `count_backoff = true` counts the retries waiting to be sent, and the proposed one,
//! as pending requests.
//!
//! Its [`State`] is also that of [`super::envoy_max_retries`].

use serde::{Deserialize, Serialize};

use crate::engine::Nanos;
use crate::model::field::{in_range, Ctx, R};
use crate::model::text::fmt_num;

use super::{BudgetBound, BudgetPolicy, BudgetState, RetryCause};

/// Default `budget_percent`.
pub(crate) const DEFAULT_PERCENT: f64 = 20.0;
/// Default `min_retry_concurrency`.
pub(crate) const DEFAULT_MIN_CONCURRENCY: u64 = 3;

/// Whether retries in backoff count as pending when `count_backoff` is not written
/// (Envoy as shipped: they do not).
pub(crate) const DEFAULT_COUNT_BACKOFF: bool = false;

/// The `envoy` table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Written {
    /// `budget_percent`.
    #[schemars(extend("default" = DEFAULT_PERCENT))]
    pub percent: Option<f64>,
    /// `min_retry_concurrency`.
    #[schemars(extend("default" = DEFAULT_MIN_CONCURRENCY))]
    pub min_concurrency: Option<u64>,
    /// Count retries in backoff as pending requests (default false: Envoy as shipped).
    #[schemars(extend("default" = DEFAULT_COUNT_BACKOFF))]
    pub count_backoff: Option<bool>,
}

/// Envoy's concurrent-retry budget; also what `explain` says of it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Config {
    /// `budget_percent` (20 = 20%).
    pub percent: f64,
    /// `min_retry_concurrency`.
    pub min_concurrency: u32,
    /// Count retries waiting in backoff (and the proposed one) as pending requests,
    /// closing the gap of Envoy issue #30205; false reproduces Envoy as shipped.
    pub count_backoff: bool,
}

/// What `explain` says of an Envoy budget: its settings.
pub(crate) type Cap = Config;

impl Written {
    /// The budget's rules; `p` is the table's path.
    pub fn validate(&self, c: &Ctx, p: &str) -> R<Config> {
        let mc = self.min_concurrency.unwrap_or(DEFAULT_MIN_CONCURRENCY);
        if mc > u64::from(u32::MAX) {
            return c.err(
                format!("{p}.min_concurrency"),
                format!("must be at most {} (found {mc})", u32::MAX),
            );
        }
        Ok(Config {
            percent: in_range(
                c,
                &format!("{p}.percent"),
                self.percent.unwrap_or(DEFAULT_PERCENT),
                0.0,
                100.0,
            )?,
            min_concurrency: mc as u32,
            count_backoff: self.count_backoff.unwrap_or(DEFAULT_COUNT_BACKOFF),
        })
    }
}

/// Envoy's concurrent-retry budget state.
#[derive(Debug, Clone)]
pub struct State {
    percent: f64,
    min: u32,
    count_backoff: bool,
    /// Attempts of this instance in flight (Envoy's active + pending requests).
    in_flight: u64,
    /// Retries granted and not yet resolved (Envoy's `retries().count()`).
    retries: u64,
    /// Of those, retries not yet sent (waiting in backoff).
    scheduled: u64,
}

impl State {
    /// A fresh state: retries in flight < `max(percent% of the attempts in flight, min)`.
    pub fn new(percent: f64, min: u32, count_backoff: bool) -> State {
        State {
            percent,
            min,
            count_backoff,
            in_flight: 0,
            retries: 0,
            scheduled: 0,
        }
    }

    /// `max()`: the most concurrent retries allowed now.
    pub fn limit(&self) -> u64 {
        let requests = if self.count_backoff {
            self.in_flight + self.scheduled + 1
        } else {
            self.in_flight
        };
        ((self.percent / 100.0 * requests as f64) as u64).max(u64::from(self.min))
    }

    /// (attempts in flight, outstanding retries, of which waiting to be sent).
    pub fn counts(&self) -> (u64, u64, u64) {
        (self.in_flight, self.retries, self.scheduled)
    }
}

impl BudgetPolicy for Config {
    type State = State;
    type Cap = Cap;

    fn state(&self, _slices: u64) -> State {
        State::new(self.percent, self.min_concurrency, self.count_backoff)
    }

    fn cap(&self) -> Cap {
        *self
    }
}

impl BudgetState for State {
    #[inline]
    fn on_sent(&mut self, is_retry: bool) {
        self.in_flight += 1;
        if is_retry {
            self.scheduled = self.scheduled.saturating_sub(1);
        }
    }

    #[inline]
    fn on_done(&mut self) {
        self.in_flight = self.in_flight.saturating_sub(1);
    }

    #[inline]
    fn release(&mut self, cost: u64, sent: bool) {
        if cost > 0 {
            self.retries = self.retries.saturating_sub(1);
            if !sent {
                self.scheduled = self.scheduled.saturating_sub(1);
            }
        }
    }

    #[inline]
    fn on_succeeded(&mut self, _now: Nanos, last_retry_cost: u64) {
        self.release(last_retry_cost, true);
    }

    fn ask(&mut self, _now: Nanos, _cause: RetryCause) -> Option<u64> {
        if self.retries < self.limit() {
            self.retries += 1;
            self.scheduled += 1;
            Some(1)
        } else {
            None
        }
    }

    fn level(&self, _now: Nanos) -> f64 {
        (1.0 - self.retries as f64 / self.limit().max(1) as f64).clamp(0.0, 1.0)
    }

    fn tokens(&self) -> u64 {
        self.retries
    }
}

impl BudgetBound for Config {
    /// A bound on concurrency: fast failures retry as often as max_attempts lets them.
    fn sustained(&self) -> f64 {
        f64::INFINITY
    }

    fn describe(&self, _instances: u64) -> String {
        format!(
            "Envoy retry budget: retries in flight < max({}% of the attempts in flight, {}) per instance, a bound on concurrency, not on the retry rate; {}",
            fmt_num(self.percent),
            self.min_concurrency,
            if self.count_backoff {
                "retries waiting in backoff count as pending requests"
            } else {
                "as shipped, a retry waiting in backoff counts as a retry but not as a request (Envoy issue #30205)"
            }
        )
    }

    fn short(&self) -> String {
        format!(
            "concurrent retries < max({}% of requests in flight, {})",
            fmt_num(self.percent),
            self.min_concurrency
        )
    }
}
