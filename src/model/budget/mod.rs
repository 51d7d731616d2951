//! Retry budgets: per-instance state that may deny a retry.
//!
//! A layer's `budget` table names its `kind`, one of the vendors below; each vendor's
//! file holds everything about it: its written table, its rules and defaults, its
//! arithmetic, and what `explain` says of it.
//! - [`token_bucket`]: gRPC retry throttling (gRFC A6);
//! - [`ratio`]: retries in a sliding window bounded by a fraction of calls plus a floor;
//! - [`aws_standard`]: the AWS SDK standard retry quota (versions 2.0 and 2.1);
//! - [`finagle`] and [`tower`]: Finagle's `RetryBudget` and tower's `TpsBudget`, leaky
//!   token buckets;
//! - [`envoy`] and [`envoy_max_retries`]: Envoy's bounds on the retries in flight;
//! - [`resilience4j`]: `BudgetRetryImpl` of Resilience4j pull request #2373;
//! - [`failure_ratio`]: Brooker's retry circuit breaker (2022);
//! - [`sre`]: the SRE book's per-client retry ratio.
//!
//! This root holds the closed enums over the vendors, generated from one list:
//! [`BudgetFile`] (as written), [`BudgetConfig`] (validated), [`Budget`] (the state of
//! one instance) and [`BudgetCap`] (what `explain` bounds), and the traits each vendor
//! implements: [`BudgetPolicy`], [`BudgetState`] and [`BudgetBound`].
//!
//! The model calls [`Budget::on_call`] when a call enters the layer,
//! [`Budget::on_sent`] / [`Budget::on_done`] around each attempt in flight,
//! [`Budget::on_failed`] / [`Budget::on_succeeded`] with each attempt's outcome,
//! [`Budget::ask`] before a retry and [`Budget::release`] when a granted retry is
//! resolved (its attempt answered, or the call gone).

pub(crate) mod aws_standard;
pub(crate) mod envoy;
pub(crate) mod envoy_max_retries;
pub(crate) mod failure_ratio;
pub(crate) mod finagle;
pub(crate) mod ratio;
pub(crate) mod resilience4j;
pub(crate) mod sre;
pub(crate) mod token_bucket;
pub(crate) mod tower;

use serde::{Deserialize, Serialize};

use crate::engine::Nanos;
use crate::model::bound::Bound;
use crate::model::field::{Ctx, R};
use crate::model::outcome::Class;
use crate::model::text::fmt_count;
use crate::model::windows::SlicedTimes;

/// Why a retry is asked for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RetryCause {
    /// The failed attempt timed out.
    pub timeout: bool,
    /// The failed attempt was a throttling error (a rejection with status 429).
    pub throttled: bool,
}

/// What one vendor's validated settings give the family.
pub trait BudgetPolicy {
    /// The state of one instance.
    type State: BudgetState;
    /// What `explain` says of it.
    type Cap: BudgetBound;
    /// A fresh, full state; a sliced window gets `slices` slices.
    fn state(&self, slices: u64) -> Self::State;
    /// The bound `explain` reports.
    fn cap(&self) -> Self::Cap;
    /// Bytes the state of one of `instances` instances may hold beyond
    /// `size_of::<Budget>()`.
    fn extra_bytes(&self, _instances: u64) -> u64 {
        0
    }
}

/// One instance's budget state: what the model tells it, and what it asks. The
/// defaults ignore what a vendor does not count.
pub trait BudgetState {
    /// A new call entered the layer (its first attempt).
    #[inline]
    fn on_call(&mut self, _now: Nanos) {}

    /// An attempt was sent to the layer below (`is_retry`: not the call's first).
    #[inline]
    fn on_sent(&mut self, _is_retry: bool) {}

    /// An attempt in flight ended: answered, timed out or cancelled.
    #[inline]
    fn on_done(&mut self) {}

    /// A retry granted by `ask` (`cost` is what it returned) is resolved.
    #[inline]
    fn release(&mut self, _cost: u64, _sent: bool) {}

    /// An attempt failed with `class`; `retryable` when the layer retries that class.
    /// By default a retryable failure of the layer below is an [`BudgetState::on_failure`].
    #[inline]
    fn on_failed(&mut self, _now: Nanos, class: Class, retryable: bool) {
        if retryable && !local_refusal(class) {
            self.on_failure();
        }
    }

    /// Whether the failure just reported was refused outright.
    #[inline]
    fn refused_failure(&self) -> bool {
        false
    }

    /// A granted retry will be sent at `wake`, after its backoff.
    #[inline]
    fn on_retry_scheduled(&mut self, _wake: Nanos) {}

    /// An attempt failed with a retryable class.
    #[inline]
    fn on_failure(&mut self) {}

    /// An attempt succeeded at `now`; by default an [`BudgetState::on_success`].
    #[inline]
    fn on_succeeded(&mut self, _now: Nanos, last_retry_cost: u64) {
        self.on_success(last_retry_cost);
    }

    /// An attempt succeeded; `last_retry_cost` is what the call's last retry acquired.
    #[inline]
    fn on_success(&mut self, _last_retry_cost: u64) {}

    /// Asks for one retry at `now`: `Some(cost)` allows it, `None` denies it.
    fn ask(&mut self, now: Nanos, cause: RetryCause) -> Option<u64>;

    /// Fill level in [0, 1].
    fn level(&self, now: Nanos) -> f64;

    /// Current tokens, for tests and traces.
    fn tokens(&self) -> u64;
}

/// What `explain` says of a budget.
pub trait BudgetBound {
    /// Attempts per call this budget allows in a sustained total failure once its
    /// allowance is spent, whatever `max_attempts`; `f64::INFINITY` when nothing caps it.
    fn sustained(&self) -> f64;
    /// The long text, for `instances` instances.
    fn describe(&self, instances: u64) -> String;
    /// The short text, for the preset line.
    fn short(&self) -> String;
}

/// A refusal of this very layer (its breaker or budget), not a failure of the layer
/// below.
pub(crate) fn local_refusal(class: Class) -> bool {
    class == Class::BreakerOpen || class == Class::BudgetExhausted
}

/// " (N across the I instances)" when there is more than one instance.
pub(crate) fn across(per_instance: Bound, instances: u64) -> String {
    if instances <= 1 {
        return String::new();
    }
    format!(
        " ({} across the {instances} instances)",
        fmt_count(per_instance * Bound::Finite(instances))
    )
}

/// The closed enums over the vendors and their delegation, from one list.
macro_rules! budget_family {
    ($($(#[doc = $doc:literal])+ $Kind:ident($vendor:ident),)+) => {
        /// Retry budget of a layer instance, as written: `kind` names the vendor.
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
        #[serde(tag = "kind", rename_all = "snake_case")]
        pub enum BudgetFile {
            $($(#[doc = $doc])+ $Kind($vendor::Written),)+
        }

        /// Retry budget settings, validated.
        #[derive(Debug, Clone, Copy, PartialEq)]
        pub enum BudgetConfig {
            $($(#[doc = $doc])+ $Kind($vendor::Config),)+
        }

        /// One instance's retry budget.
        #[derive(Debug, Clone)]
        pub(crate) enum Budget {
            $($(#[doc = $doc])+ $Kind(<$vendor::Config as BudgetPolicy>::State),)+
        }

        /// What a retry budget allows, per instance, when every attempt fails.
        #[derive(Debug, Clone, Copy, PartialEq)]
        pub enum BudgetCap {
            $($(#[doc = $doc])+ $Kind(<$vendor::Config as BudgetPolicy>::Cap),)+
        }

        impl BudgetFile {
            /// The vendor's rules; `p` is the table's path in messages.
            pub fn validate(&self, c: &Ctx, p: &str) -> R<BudgetConfig> {
                Ok(match self {
                    $(BudgetFile::$Kind(w) => BudgetConfig::$Kind(w.validate(c, p)?),)+
                })
            }
        }

        impl BudgetConfig {
            /// The bound `explain` reports.
            pub fn cap(&self) -> BudgetCap {
                match self {
                    $(BudgetConfig::$Kind(v) => BudgetCap::$Kind(v.cap()),)+
                }
            }

            /// A fresh state whose sliced windows get `slices` slices.
            fn state(&self, slices: u64) -> Budget {
                match self {
                    $(BudgetConfig::$Kind(v) => Budget::$Kind(v.state(slices)),)+
                }
            }

            /// Bytes of one of `instances` instances' state, for the memory guard.
            pub fn state_bytes(&self, instances: u64) -> u64 {
                let extra = match self {
                    $(BudgetConfig::$Kind(v) => v.extra_bytes(instances),)+
                };
                std::mem::size_of::<Budget>() as u64 + extra
            }
        }

        impl BudgetCap {
            fn bound(&self) -> &dyn BudgetBound {
                match self {
                    $(BudgetCap::$Kind(c) => c,)+
                }
            }
        }

        impl Budget {
            /// A new call entered the layer (its first attempt).
            #[inline]
            pub(crate) fn on_call(&mut self, now: Nanos) {
                match self {
                    $(Budget::$Kind(s) => s.on_call(now),)+
                }
            }

            /// An attempt was sent to the layer below (`is_retry`: not the call's first).
            #[inline]
            pub(crate) fn on_sent(&mut self, is_retry: bool) {
                match self {
                    $(Budget::$Kind(s) => s.on_sent(is_retry),)+
                }
            }

            /// An attempt in flight ended: answered, timed out or cancelled.
            #[inline]
            pub(crate) fn on_done(&mut self) {
                match self {
                    $(Budget::$Kind(s) => s.on_done(),)+
                }
            }

            /// A retry granted by [`Budget::ask`] (`cost` is what it returned) is
            /// resolved: the retried attempt was answered (`sent`), or the call went on
            /// or ended without it.
            #[inline]
            pub(crate) fn release(&mut self, cost: u64, sent: bool) {
                match self {
                    $(Budget::$Kind(s) => s.release(cost, sent),)+
                }
            }

            /// An attempt failed with `class`; `retryable` when the layer retries that
            /// class.
            #[inline]
            pub(crate) fn on_failed(&mut self, now: Nanos, class: Class, retryable: bool) {
                match self {
                    $(Budget::$Kind(s) => s.on_failed(now, class, retryable),)+
                }
            }

            /// Whether the budget refused the failure just reported to
            /// [`Budget::on_failed`] outright, before the layer looks at its class or
            /// its attempts left (Resilience4j's `RetryBudgetExceededException`).
            #[inline]
            pub(crate) fn refused_failure(&self) -> bool {
                match self {
                    $(Budget::$Kind(s) => s.refused_failure(),)+
                }
            }

            /// A retry granted by [`Budget::ask`] will be sent at `wake`, after its
            /// backoff.
            #[inline]
            pub(crate) fn on_retry_scheduled(&mut self, wake: Nanos) {
                match self {
                    $(Budget::$Kind(s) => s.on_retry_scheduled(wake),)+
                }
            }

            /// An attempt failed with a retryable class (counted whether or not a retry
            /// follows).
            #[inline]
            #[cfg(test)]
            pub(crate) fn on_failure(&mut self) {
                match self {
                    $(Budget::$Kind(s) => s.on_failure(),)+
                }
            }

            /// An attempt succeeded at `now`; `last_retry_cost` is what the call's last
            /// retry acquired (0 when the call did not retry).
            #[inline]
            pub(crate) fn on_succeeded(&mut self, now: Nanos, last_retry_cost: u64) {
                match self {
                    $(Budget::$Kind(s) => s.on_succeeded(now, last_retry_cost),)+
                }
            }

            /// An attempt succeeded; `last_retry_cost` is what the call's last retry
            /// acquired (0 when the call did not retry).
            #[inline]
            #[cfg(test)]
            pub(crate) fn on_success(&mut self, last_retry_cost: u64) {
                match self {
                    $(Budget::$Kind(s) => s.on_success(last_retry_cost),)+
                }
            }

            /// Asks for one retry at `now`. `Some(cost)` allows it (`cost` is what the
            /// AWS quota took, 1 for an Envoy retry slot, 0 otherwise); `None` denies it.
            pub(crate) fn ask(&mut self, now: Nanos, cause: RetryCause) -> Option<u64> {
                match self {
                    $(Budget::$Kind(s) => s.ask(now, cause),)+
                }
            }

            /// Fill level in [0, 1], for the `budget_level` time series.
            pub(crate) fn level(&self, now: Nanos) -> f64 {
                match self {
                    $(Budget::$Kind(s) => s.level(now),)+
                }
            }

            /// Current tokens (milli-tokens for the token bucket), for tests and
            /// traces: the retries in the window for the ratio budgets, the outstanding
            /// retries for Envoy.
            #[cfg(test)]
            pub(crate) fn tokens(&self) -> u64 {
                match self {
                    $(Budget::$Kind(s) => s.tokens(),)+
                }
            }
        }
    };
}

budget_family! {
    /// gRPC retry throttling.
    TokenBucket(token_bucket),
    /// Retries in a sliding window bounded by a fraction of calls plus a floor.
    Ratio(ratio),
    /// AWS SDK standard retry quota.
    AwsStandard(aws_standard),
    /// Finagle `RetryBudget`.
    Finagle(finagle),
    /// tower `TpsBudget`.
    Tower(tower),
    /// Envoy concurrent-retry budget.
    Envoy(envoy),
    /// Envoy as it ships: the cluster circuit breaker's `max_retries`.
    EnvoyMaxRetries(envoy_max_retries),
    /// Resilience4j retry budget.
    Resilience4j(resilience4j),
    /// Brooker's retry circuit breaker (2022).
    FailureRatio(failure_ratio),
    /// Google SRE per-client retry ratio.
    Sre(sre),
}

impl Budget {
    /// A fresh, full budget.
    #[cfg(test)]
    pub(crate) fn new(cfg: BudgetConfig) -> Budget {
        cfg.state(SlicedTimes::SLICES)
    }

    /// A fresh budget for one of `instances` instances of a layer: a `ratio` or `sre`
    /// window gets [`SlicedTimes::slices_for`] slices, so the layer's windows stay
    /// within [`SlicedTimes::LAYER_BYTES`].
    pub(crate) fn for_instances(cfg: BudgetConfig, instances: u64) -> Budget {
        cfg.state(SlicedTimes::slices_for(instances))
    }

    /// Asks for one retry at `now` (`after_timeout`: the failed attempt timed out).
    #[cfg(test)]
    pub(crate) fn try_retry(&mut self, now: Nanos, after_timeout: bool) -> Option<u64> {
        self.ask(
            now,
            RetryCause {
                timeout: after_timeout,
                throttled: false,
            },
        )
    }
}

impl BudgetCap {
    /// Attempts per call this budget allows in a sustained total failure once its
    /// allowance is spent: 1 for a token bucket or an AWS quota (no success refills
    /// them), `1 + fraction` for a ratio budget (its per-window floor aside), at most
    /// `max_attempts`. `f64::INFINITY` when nothing caps it.
    pub fn sustained_attempts(&self, max_attempts: crate::model::attempts::Attempts) -> f64 {
        max_attempts.as_f64().min(self.bound().sustained())
    }

    /// What `explain` says of the budget of each of `instances` instances.
    pub fn describe(&self, instances: u64) -> String {
        self.bound().describe(instances)
    }

    /// A short form, for the preset line.
    pub fn short(&self) -> String {
        self.bound().short()
    }
}

#[cfg(test)]
mod size {
    /// Every instance pays for the largest variant (the memory guard counts
    /// `size_of::<Budget>()`): the sliced window of `ratio`/`sre` and tower's
    /// `TpsBucket` set it, the other kinds stay below.
    #[test]
    fn budget_stays_small() {
        let s = std::mem::size_of::<super::Budget>();
        assert!(s <= 160, "{s} bytes");
        assert!(std::mem::size_of::<super::failure_ratio::State>() <= 64);
        assert!(std::mem::size_of::<super::resilience4j::State>() <= 112);
    }
}

/// The examples of this file's docs, as unit tests (the module is the crate's own,
/// so rustdoc cannot run them).
#[cfg(test)]
mod doc_examples {
    #[test]
    fn budget_example() {
        use crate::model::budget::{token_bucket, Budget, BudgetConfig};
        let cfg = token_bucket::Config {
            max_milli: 4000,
            ratio_milli: 100,
        };
        let mut b = Budget::new(BudgetConfig::TokenBucket(cfg));
        b.on_failure(); // 3000 > 2000
        assert_eq!(b.try_retry(0, false), Some(0));
        b.on_failure(); // 2000, not > 2000
        assert_eq!(b.try_retry(0, false), None);
    }

    #[test]
    fn cap_example() {
        use crate::model::budget::{token_bucket, BudgetCap, BudgetConfig};
        let c = BudgetConfig::TokenBucket(token_bucket::Config {
            max_milli: 10_000,
            ratio_milli: 100,
        })
        .cap();
        assert!(matches!(
            c,
            BudgetCap::TokenBucket(token_bucket::Cap {
                retries_at_total_failure: 4,
                ..
            })
        ));
    }
}
