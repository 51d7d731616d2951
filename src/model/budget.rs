//! Retry budgets: per-instance state that may deny a retry.
//!
//! Three generic kinds, after the libraries that ship them:
//! - **token bucket** (gRPC retry throttling, gRFC A6): integer milli-tokens, starting
//!   full; every failed attempt takes 1000 (floored at 0), every success gives back
//!   `token_ratio · 1000` (capped at the max); a retry is allowed only while
//!   `tokens > max / 2`, decided *after* the failure is counted.
//! - **ratio** (Finagle / SRE book): in any trailing `window`, retries may not exceed
//!   `percent` of the calls plus `min_per_sec · window`.
//! - **AWS standard retry quota**: 500 tokens, a retry costs 5 (10 after a timeout); a
//!   success refunds the last retry's cost, or 1 when the call did not retry. Version
//!   2.1 (the 2026 update) costs 14, and 5 after a throttling error.
//!
//! And the libraries' own arithmetic, exactly:
//! - **finagle** (`RetryBudget.scala` on twitter/util `TokenBucket.newLeakyBucket`):
//!   each call deposits 1000 into a [`WindowedAdder`] of `ttl` in 10 slices; a retry
//!   withdraws `(int)(1000 / percentCanRetry)` if the window's sum plus the reserve
//!   `minRetriesPerSec · ttl_s · withdrawal` covers it.
//! - **tower** (`TpsBudget`): the same on a [`TpsBucket`], but for `retry_percent <= 1`
//!   a deposit is 1 and a withdrawal `(isize)(1 / retry_percent)` (`f32`): 30% allows
//!   one retry per 3 deposits (33%); `truncate = false` scales by 1000 as Finagle does.
//!   tower leaves the deposit to the policy: its documented policy deposits on each
//!   success (`deposit = "success"`), Finagle's filter on each call.
//! - **envoy** (`RetryBudgetImpl` in `resource_manager_impl.h`): a concurrency bound:
//!   a retry is allowed while the outstanding retries (granted, not yet answered) are
//!   fewer than `max((uint64)(percent/100 · (active + pending)), min_concurrency)`,
//!   active + pending being this instance's attempts in flight. A retry waiting in
//!   backoff counts as a retry but not as a request (issue #30205);
//!   `count_backoff = true` counts the retries waiting to be sent, and the proposed one,
//!   as pending requests.
//! - **envoy_max_retries** (`ResourceManagerImpl`'s `retries_` resource, the cluster
//!   circuit breaker `max_retries`, default 3): Envoy as it ships, without a
//!   `RetryBudget`. The same count of outstanding retries against a fixed maximum: it is
//!   an [`EnvoyBudget`] with `percent` 0 and `min_concurrency = max_retries`.
//! - **resilience4j** (`BudgetRetryImpl` of pull request #2373, an unreleased proposal,
//!   synchronous context, as `Retry.decorateSupplier` drives it): outcomes in an
//!   [`EpochWindow`] of 1 s slices counted from the budget's creation (time 0). Every
//!   failure first asks `allowRetry()`: allowed while the window holds at most
//!   `min_sample_size` records or its failure rate (`f32` percent) is at most
//!   `max_retry_ratio`; a refused failure throws `RetryBudgetExceededException` and is
//!   **not recorded**, even on the last attempt or for a class the layer does not
//!   retry. An allowed failure is recorded as an error only after the backoff sleep
//!   (`onRuntimeError` records after `delegate.onRuntimeError` returns), and not at
//!   all on the last attempt (the delegate throws first). A success is recorded twice
//!   (`onResult`, then `onComplete`). So under sustained failure the refusals leave
//!   the window, and retries come back in bursts about once a window.
//! - **failure_ratio** (Brooker 2022, "retry circuit breaker",
//!   `mbrooker/simulator_example` `retry_sim/retry_strategy.py`): per instance, each
//!   first try counts a call; each failed attempt counts a failure *first*, then the
//!   retry is refused iff `failures / calls > max_ratio` (Python's float division).
//!   Cumulative since the start by default (never reset), so a fresh client never
//!   retries its first failure; with a finite `window`, both counts are kept in 10
//!   slices of `window/10` (the current slice and the 9 before it), a fixed amount of
//!   state. First tries are never gated. Local refusals (`breaker_open`,
//!   `budget_exhausted`) are not failures of the layer below and are not counted.
//! - **sre** (SRE book, "Handling Overload"): retry only while retries / requests
//!   (first attempts and retries) over the trailing window is below `percent`.
//!
//! The model calls [`Budget::on_call`] when a call enters the layer,
//! [`Budget::on_sent`] / [`Budget::on_done`] around each attempt in flight,
//! [`Budget::on_failed`] / [`Budget::on_succeeded`] with each attempt's outcome,
//! [`Budget::ask`] before a retry and [`Budget::release`] when a granted retry is
//! resolved (its attempt answered, or the call gone).
//!
//! ```
//! use retrysim::model::budget::Budget;
//! use retrysim::model::config::BudgetConfig;
//! let mut b = Budget::new(BudgetConfig::TokenBucket { max_milli: 4000, ratio_milli: 100 });
//! b.on_failure();                      // 3000 > 2000
//! assert_eq!(b.try_retry(0, false), Some(0));
//! b.on_failure();                      // 2000, not > 2000
//! assert_eq!(b.try_retry(0, false), None);
//! ```

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::engine::time::{to_secs, MILLISECOND};
use crate::engine::Nanos;
use crate::model::config::BudgetConfig;
use crate::model::outcome::Class;

use super::windows::{EpochWindow, SlicedTimes, TpsBucket, WindowedAdder};

/// Why a retry is asked for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RetryCause {
    /// The failed attempt timed out.
    pub timeout: bool,
    /// The failed attempt was a throttling error (a rejection with status 429).
    pub throttled: bool,
}

/// Finagle's `TokenRetryBudget` on a leaky bucket.
#[derive(Debug, Clone)]
pub struct FinagleBudget {
    adder: WindowedAdder,
    reserve: i64,
    deposit: i64,
    withdraw: i64,
    /// `RetryBudget.Empty`: both `minRetriesPerSec` and `percentCanRetry` are 0.
    empty: bool,
}

impl FinagleBudget {
    /// `RetryBudget(ttl, minRetriesPerSec, percentCanRetry)` created at time 0.
    pub fn new(ttl_ms: i64, min_per_sec: i32, percent_can_retry: f64) -> FinagleBudget {
        let empty = min_per_sec == 0 && percent_can_retry == 0.0;
        let deposit = if percent_can_retry == 0.0 { 0 } else { 1000 };
        // (ScaleFactor / percentCanRetry).toInt: truncation, saturating at Int bounds.
        let withdraw: i32 = if percent_can_retry == 0.0 {
            1
        } else {
            (1000.0 / percent_can_retry) as i32
        };
        // minRetriesPerSec * ttl.inSeconds * withdrawalAmount in Scala Int arithmetic.
        let ttl_s = (ttl_ms / 1000) as i32;
        let reserve = min_per_sec.wrapping_mul(ttl_s).wrapping_mul(withdraw);
        FinagleBudget {
            adder: WindowedAdder::new(ttl_ms, 10, 0),
            reserve: i64::from(reserve),
            deposit,
            withdraw: i64::from(withdraw),
            empty,
        }
    }

    /// `deposit()` at `now`.
    pub fn deposit(&mut self, now: Nanos) {
        if !self.empty {
            self.adder.add(ms(now), self.deposit);
        }
    }

    /// `tryWithdraw()` at `now`.
    pub fn try_withdraw(&mut self, now: Nanos) -> bool {
        if self.empty {
            return false;
        }
        let ok = self.count(now) >= self.withdraw;
        if ok {
            self.adder.add(ms(now), -self.withdraw);
        }
        ok
    }

    /// The bucket's `count` at `now`: the window's sum plus the reserve.
    pub fn count(&mut self, now: Nanos) -> i64 {
        self.adder.sum(ms(now)) + self.reserve
    }

    /// (deposit, withdrawal, reserve) amounts.
    pub fn amounts(&self) -> (i64, i64, i64) {
        (self.deposit, self.withdraw, self.reserve)
    }

    /// `balance`: retries that can be made now (`count / withdrawal`).
    pub fn balance(&mut self, now: Nanos) -> i64 {
        if self.empty {
            0
        } else {
            self.count(now) / self.withdraw
        }
    }
}

/// Milliseconds of simulated time (Finagle's `Stopwatch.systemMillis`).
fn ms(t: Nanos) -> i64 {
    (t / MILLISECOND) as i64
}

/// tower's `TpsBudget`.
#[derive(Debug, Clone)]
pub struct TowerBudget {
    bucket: TpsBucket,
    deposit: i64,
    withdraw: i64,
    reserve: i64,
    deposit_on_success: bool,
}

impl TowerBudget {
    /// `TpsBudget::new(ttl, min_per_sec, retry_percent)` created at time 0.
    pub fn new(
        ttl: Nanos,
        min_per_sec: u32,
        retry_percent: f32,
        truncate: bool,
        deposit_on_success: bool,
    ) -> TowerBudget {
        let (deposit, withdraw): (i64, i64) = if retry_percent == 0.0 {
            (0, 1)
        } else if truncate && retry_percent <= 1.0 {
            (1, (1.0f32 / retry_percent) as i64)
        } else {
            (1000, (1000.0f32 / retry_percent) as i64)
        };
        let reserve = i64::from(min_per_sec)
            .saturating_mul((ttl / 1_000_000_000) as i64)
            .saturating_mul(withdraw);
        TowerBudget {
            bucket: TpsBucket::new(ttl, reserve, 0),
            deposit,
            withdraw,
            reserve,
            deposit_on_success,
        }
    }

    /// `deposit()` at `now`.
    pub fn deposit(&mut self, now: Nanos) {
        self.bucket.put(now, self.deposit);
    }

    /// `withdraw()` at `now`.
    pub fn withdraw(&mut self, now: Nanos) -> bool {
        self.bucket.try_get(now, self.withdraw)
    }

    /// (deposit, withdrawal) amounts.
    pub fn amounts(&self) -> (i64, i64) {
        (self.deposit, self.withdraw)
    }

    /// Reserve tokens.
    pub fn reserve(&self) -> i64 {
        self.reserve
    }
}

/// Envoy's concurrent-retry budget state.
#[derive(Debug, Clone)]
pub struct EnvoyBudget {
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

impl EnvoyBudget {
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

/// Resilience4j's retry budget state.
#[derive(Debug, Clone)]
pub struct R4jBudget {
    window: EpochWindow,
    max_retry_ratio: f64,
    min_sample_size: i64,
    /// The answer of `allowRetry()` to the last failure.
    allowed: bool,
    /// When allowed failures get recorded: at the end of their backoff sleep (at most
    /// one per call sleeping, so bounded by the calls in flight).
    pending: BinaryHeap<Reverse<Nanos>>,
}

impl R4jBudget {
    /// Records the errors whose sleep has ended by `now`, in time order.
    fn flush(&mut self, now: Nanos) {
        while let Some(&Reverse(t)) = self.pending.peek() {
            if t > now {
                break;
            }
            self.pending.pop();
            self.window.record(t, true, false);
        }
    }

    /// `allowRetry()` at `now`.
    fn allow(&mut self, now: Nanos) -> bool {
        self.flush(now);
        let snap = self.window.snapshot(now);
        if i64::from(snap.calls) <= self.min_sample_size {
            return true; // warm-up phase
        }
        f64::from(snap.failure_rate()) <= self.max_retry_ratio
    }

    /// The window's (records, failed records) at `now`.
    pub fn counts(&mut self, now: Nanos) -> (u32, u32) {
        self.flush(now);
        let snap = self.window.snapshot(now);
        (snap.calls, snap.failed)
    }
}

/// Brooker's retry circuit breaker: calls (first tries) and failed attempts, since the
/// start or over a window of 10 time slices.
#[derive(Debug, Clone)]
pub struct FailureRatioBudget {
    max_ratio: f64,
    /// Slice width; 0 = cumulative.
    width: Nanos,
    /// (calls, failures) per slice, indexed by slice number mod 10 (boxed: most
    /// instances are cumulative, and every budget variant pays for the largest).
    slices: Option<Box<[(u64, u64); 10]>>,
    /// The slice number of the last update.
    current: u64,
    calls: u64,
    failures: u64,
    /// Whether the last failure refused its retry.
    refused: bool,
}

impl FailureRatioBudget {
    /// A budget of `max_ratio`, cumulative (`window` `None`) or over `window`, at time 0.
    pub fn new(max_ratio: f64, window: Option<Nanos>) -> FailureRatioBudget {
        FailureRatioBudget {
            max_ratio,
            width: window.map_or(0, |w| (w / 10).max(1)),
            slices: window.map(|_| Box::new([(0, 0); 10])),
            current: 0,
            calls: 0,
            failures: 0,
            refused: false,
        }
    }

    /// Drops the slices that left the window by `now`.
    fn advance(&mut self, now: Nanos) {
        let Some(slices) = self.slices.as_mut() else {
            return;
        };
        let slice = now / self.width;
        if slice <= self.current {
            return;
        }
        let steps = (slice - self.current).min(10);
        for i in 1..=steps {
            let s = &mut slices[((self.current + i) % 10) as usize];
            self.calls -= s.0;
            self.failures -= s.1;
            *s = (0, 0);
        }
        self.current = slice;
    }

    /// A first try at `now`.
    pub fn on_call(&mut self, now: Nanos) {
        self.advance(now);
        self.calls += 1;
        if let Some(slices) = self.slices.as_mut() {
            slices[(self.current % 10) as usize].0 += 1;
        }
    }

    /// A failed attempt at `now`: counted, then the retry decided.
    pub fn on_failure(&mut self, now: Nanos) {
        self.advance(now);
        self.failures += 1;
        if let Some(slices) = self.slices.as_mut() {
            slices[(self.current % 10) as usize].1 += 1;
        }
        self.refused = self.calls == 0 || self.failures as f64 / self.calls as f64 > self.max_ratio;
    }

    /// (calls, failures) counted at `now`.
    pub fn counts(&mut self, now: Nanos) -> (u64, u64) {
        self.advance(now);
        (self.calls, self.failures)
    }
}

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
        calls: SlicedTimes,
        /// Times of retries in the window.
        retries: SlicedTimes,
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
        /// Cost after a throttling error (version 2.1), if it has its own.
        throttling_cost: Option<u64>,
    },
    /// Finagle `RetryBudget`.
    Finagle(FinagleBudget),
    /// tower `TpsBudget`.
    Tower(TowerBudget),
    /// Envoy concurrent-retry budget.
    Envoy(EnvoyBudget),
    /// Resilience4j retry budget.
    Resilience4j(R4jBudget),
    /// Brooker's retry circuit breaker.
    FailureRatio(FailureRatioBudget),
    /// SRE per-client retry ratio.
    Sre {
        /// Times of calls (first attempts) in the window.
        calls: SlicedTimes,
        /// Times of retries in the window.
        retries: SlicedTimes,
        /// Largest retries / requests.
        fraction: f64,
        /// Window.
        window: Nanos,
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
                calls: SlicedTimes::new(window, SlicedTimes::SLICES),
                retries: SlicedTimes::lasting(window, SlicedTimes::SLICES),
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
                throttling_cost: None,
            },
            BudgetConfig::AwsThrottling {
                capacity,
                retry_cost,
                timeout_cost,
                throttling_cost,
                success_refund,
            } => Budget::AwsStandard {
                tokens: capacity,
                capacity,
                retry_cost,
                timeout_cost,
                success_refund,
                throttling_cost: Some(throttling_cost),
            },
            BudgetConfig::Finagle {
                ttl_ms,
                min_per_sec,
                percent_can_retry,
            } => Budget::Finagle(FinagleBudget::new(ttl_ms, min_per_sec, percent_can_retry)),
            BudgetConfig::Tower {
                ttl,
                min_per_sec,
                retry_percent,
                truncate,
                deposit_on_success,
            } => Budget::Tower(TowerBudget::new(
                ttl,
                min_per_sec,
                retry_percent,
                truncate,
                deposit_on_success,
            )),
            BudgetConfig::Envoy {
                percent,
                min_concurrency,
                count_backoff,
            } => Budget::Envoy(EnvoyBudget {
                percent,
                min: min_concurrency,
                count_backoff,
                in_flight: 0,
                retries: 0,
                scheduled: 0,
            }),
            BudgetConfig::EnvoyMaxRetries { max_retries } => Budget::Envoy(EnvoyBudget {
                percent: 0.0,
                min: max_retries,
                count_backoff: false,
                in_flight: 0,
                retries: 0,
                scheduled: 0,
            }),
            BudgetConfig::Resilience4j {
                window_s,
                max_retry_ratio,
                min_sample_size,
            } => Budget::Resilience4j(R4jBudget {
                window: EpochWindow::new(window_s, 0),
                max_retry_ratio,
                min_sample_size,
                allowed: true,
                pending: BinaryHeap::new(),
            }),
            BudgetConfig::FailureRatio { max_ratio, window } => {
                Budget::FailureRatio(FailureRatioBudget::new(max_ratio, window))
            }
            BudgetConfig::Sre { fraction, window } => Budget::Sre {
                calls: SlicedTimes::new(window, SlicedTimes::SLICES),
                retries: SlicedTimes::lasting(window, SlicedTimes::SLICES),
                fraction,
                window,
            },
        }
    }

    /// A fresh budget for one of `instances` instances of a layer: a `ratio` or `sre`
    /// window gets [`SlicedTimes::slices_for`] slices, so the layer's windows stay
    /// within [`SlicedTimes::LAYER_BYTES`].
    pub fn for_instances(cfg: BudgetConfig, instances: u64) -> Budget {
        let mut b = Budget::new(cfg);
        let s = SlicedTimes::slices_for(instances);
        if let Budget::Ratio {
            calls,
            retries,
            window,
            ..
        }
        | Budget::Sre {
            calls,
            retries,
            window,
            ..
        } = &mut b
        {
            *calls = SlicedTimes::new(*window, s);
            *retries = SlicedTimes::lasting(*window, s);
        }
        b
    }

    /// A new call entered the layer (its first attempt).
    #[inline]
    pub fn on_call(&mut self, now: Nanos) {
        match self {
            Budget::Ratio { calls, .. } | Budget::Sre { calls, .. } => calls.push(now),
            Budget::Finagle(f) => f.deposit(now),
            Budget::Tower(t) if !t.deposit_on_success => t.deposit(now),
            Budget::FailureRatio(f) => f.on_call(now),
            _ => {}
        }
    }

    /// An attempt was sent to the layer below (`is_retry`: not the call's first).
    #[inline]
    pub fn on_sent(&mut self, is_retry: bool) {
        if let Budget::Envoy(e) = self {
            e.in_flight += 1;
            if is_retry {
                e.scheduled = e.scheduled.saturating_sub(1);
            }
        }
    }

    /// An attempt in flight ended: answered, timed out or cancelled.
    #[inline]
    pub fn on_done(&mut self) {
        if let Budget::Envoy(e) = self {
            e.in_flight = e.in_flight.saturating_sub(1);
        }
    }

    /// A retry granted by [`Budget::ask`] (`cost` is what it returned) is resolved: the
    /// retried attempt was answered (`sent`), or the call went on or ended without it.
    #[inline]
    pub fn release(&mut self, cost: u64, sent: bool) {
        if let Budget::Envoy(e) = self {
            if cost > 0 {
                e.retries = e.retries.saturating_sub(1);
                if !sent {
                    e.scheduled = e.scheduled.saturating_sub(1);
                }
            }
        }
    }

    /// An attempt failed with `class`; `retryable` when the layer retries that class.
    #[inline]
    pub fn on_failed(&mut self, now: Nanos, class: Class, retryable: bool) {
        match self {
            Budget::Resilience4j(r) => {
                // onRuntimeError asks allowRetry() first, whatever the exception; what
                // it records comes later (see on_retry_scheduled).
                let _ = (class, retryable);
                r.allowed = r.allow(now);
            }
            Budget::FailureRatio(f) => {
                if class != Class::BreakerOpen && class != Class::BudgetExhausted {
                    f.on_failure(now);
                }
            }
            _ => {
                if retryable && class != Class::BreakerOpen && class != Class::BudgetExhausted {
                    self.on_failure();
                }
            }
        }
    }

    /// Whether the budget refused the failure just reported to [`Budget::on_failed`]
    /// outright, before the layer looks at its class or its attempts left: Resilience4j's
    /// `allowRetry()` throws `RetryBudgetExceededException` in place of the failure.
    #[inline]
    pub fn refused_failure(&self) -> bool {
        matches!(self, Budget::Resilience4j(r) if !r.allowed)
    }

    /// A retry granted by [`Budget::ask`] will be sent at `wake`, after its backoff.
    /// Resilience4j records the failure then (its sleep comes before the record).
    #[inline]
    pub fn on_retry_scheduled(&mut self, wake: Nanos) {
        if let Budget::Resilience4j(r) = self {
            r.pending.push(Reverse(wake));
        }
    }

    /// An attempt failed with a retryable class (counted whether or not a retry follows).
    #[inline]
    pub fn on_failure(&mut self) {
        if let Budget::TokenBucket { tokens, .. } = self {
            *tokens = tokens.saturating_sub(1000);
        }
    }

    /// An attempt succeeded at `now`; `last_retry_cost` is what the call's last retry
    /// acquired (0 when the call did not retry).
    #[inline]
    pub fn on_succeeded(&mut self, now: Nanos, last_retry_cost: u64) {
        match self {
            Budget::Tower(t) => {
                if t.deposit_on_success {
                    t.deposit(now);
                }
            }
            Budget::Envoy(_) => self.release(last_retry_cost, true),
            Budget::Resilience4j(r) => {
                // onResult records a success, then onComplete records another.
                r.flush(now);
                r.window.record(now, false, false);
                r.window.record(now, false, false);
            }
            _ => self.on_success(last_retry_cost),
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
            _ => {}
        }
    }

    /// Asks for one retry at `now`. `Some(cost)` allows it (`cost` is what the AWS quota
    /// took, 1 for an Envoy retry slot, 0 otherwise); `None` denies it.
    pub fn ask(&mut self, now: Nanos, cause: RetryCause) -> Option<u64> {
        match self {
            Budget::TokenBucket { tokens, max, .. } => (*tokens > *max / 2).then_some(0),
            Budget::Ratio {
                calls,
                retries,
                fraction,
                min_per_sec,
                window,
            } => {
                calls.evict(now);
                retries.evict(now);
                let allowed = *fraction * calls.len() as f64 + *min_per_sec * to_secs(*window);
                if (retries.len() + 1) as f64 <= allowed + 1e-9 {
                    retries.push(now);
                    Some(0)
                } else {
                    None
                }
            }
            Budget::AwsStandard {
                tokens,
                retry_cost,
                timeout_cost,
                throttling_cost,
                ..
            } => {
                let cost = match (throttling_cost, cause.throttled) {
                    // Version 2.1 asks "throttling?" first; a timeout is not one.
                    (Some(t), true) => *t,
                    _ if cause.timeout => *timeout_cost,
                    _ => *retry_cost,
                };
                if *tokens >= cost {
                    *tokens -= cost;
                    Some(cost)
                } else {
                    None
                }
            }
            Budget::Finagle(f) => f.try_withdraw(now).then_some(0),
            Budget::Tower(t) => t.withdraw(now).then_some(0),
            Budget::Envoy(e) => {
                if e.retries < e.limit() {
                    e.retries += 1;
                    e.scheduled += 1;
                    Some(1)
                } else {
                    None
                }
            }
            Budget::Resilience4j(r) => r.allowed.then_some(0),
            Budget::FailureRatio(f) => (!f.refused).then_some(0),
            Budget::Sre {
                calls,
                retries,
                fraction,
                ..
            } => {
                calls.evict(now);
                retries.evict(now);
                let requests = calls.len() + retries.len();
                if requests == 0 || (retries.len() as f64 / requests as f64) < *fraction {
                    retries.push(now);
                    Some(0)
                } else {
                    None
                }
            }
        }
    }

    /// Asks for one retry at `now` (`after_timeout`: the failed attempt timed out).
    pub fn try_retry(&mut self, now: Nanos, after_timeout: bool) -> Option<u64> {
        self.ask(
            now,
            RetryCause {
                timeout: after_timeout,
                throttled: false,
            },
        )
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
                let (c, r) = (calls.count(now), retries.count(now));
                let allowed = *fraction * c as f64 + *min_per_sec * to_secs(*window);
                if allowed <= 0.0 {
                    0.0
                } else {
                    (1.0 - r as f64 / allowed).clamp(0.0, 1.0)
                }
            }
            // The share of the reserve still there (or whether one retry is, without one).
            Budget::Finagle(f) => {
                let mut f = f.clone();
                let count = f.count(now);
                let full = if f.reserve > 0 { f.reserve } else { f.withdraw };
                (count as f64 / full.max(1) as f64).clamp(0.0, 1.0)
            }
            Budget::Tower(t) => {
                let full = if t.reserve > 0 { t.reserve } else { t.withdraw };
                (t.bucket.balance(now) as f64 / full.max(1) as f64).clamp(0.0, 1.0)
            }
            Budget::Envoy(e) => (1.0 - e.retries as f64 / e.limit().max(1) as f64).clamp(0.0, 1.0),
            Budget::Resilience4j(r) => {
                let mut r = r.clone();
                r.flush(now);
                let snap = r.window.snapshot(now);
                if i64::from(snap.calls) <= r.min_sample_size || r.max_retry_ratio <= 0.0 {
                    1.0
                } else {
                    (1.0 - f64::from(snap.failure_rate()) / r.max_retry_ratio).clamp(0.0, 1.0)
                }
            }
            Budget::FailureRatio(f) => {
                let mut f = f.clone();
                let (calls, failures) = f.counts(now);
                if calls == 0 || f.max_ratio <= 0.0 {
                    f64::from(u8::from(failures == 0))
                } else {
                    (1.0 - failures as f64 / calls as f64 / f.max_ratio).clamp(0.0, 1.0)
                }
            }
            Budget::Sre {
                calls,
                retries,
                fraction,
                ..
            } => {
                let (c, r) = (calls.count(now), retries.count(now));
                if c + r == 0 || *fraction <= 0.0 {
                    1.0
                } else {
                    (1.0 - (r as f64 / (c + r) as f64) / *fraction).clamp(0.0, 1.0)
                }
            }
        }
    }

    /// Current tokens (milli-tokens for the token bucket), for tests and traces: the
    /// retries in the window for the ratio budgets, the outstanding retries for Envoy.
    pub fn tokens(&self) -> u64 {
        match self {
            Budget::TokenBucket { tokens, .. } | Budget::AwsStandard { tokens, .. } => *tokens,
            Budget::Ratio { retries, .. } | Budget::Sre { retries, .. } => retries.len(),
            Budget::Finagle(f) => f.clone().count(0).max(0) as u64,
            Budget::Tower(t) => t.bucket.balance(0).max(0) as u64,
            Budget::Envoy(e) => e.retries,
            Budget::Resilience4j(r) => u64::from(r.allowed),
            Budget::FailureRatio(f) => f.failures,
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

#[cfg(test)]
mod size {
    /// Every instance pays for the largest variant (the memory guard counts
    /// `size_of::<Budget>()`): the sliced window of `ratio`/`sre` and tower's
    /// `TpsBucket` set it, the other kinds stay below.
    #[test]
    fn budget_stays_small() {
        let s = std::mem::size_of::<super::Budget>();
        assert!(s <= 160, "{s} bytes");
        assert!(std::mem::size_of::<super::FailureRatioBudget>() <= 64);
        assert!(std::mem::size_of::<super::R4jBudget>() <= 112);
    }
}
