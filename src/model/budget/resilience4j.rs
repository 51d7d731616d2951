//! Resilience4j's retry budget (`BudgetRetryImpl` of pull request #2373, an unreleased
//! proposal, synchronous context, as `Retry.decorateSupplier` drives it): outcomes in an
//! [`EpochWindow`] of 1 s slices counted from the budget's creation (time 0). Every
//! failure first asks `allowRetry()`: allowed while the window holds at most
//! `min_sample_size` records or its failure rate (`f32` percent) is at most
//! `max_retry_ratio`; a refused failure throws `RetryBudgetExceededException` and is
//! **not recorded**, even on the last attempt or for a class the layer does not retry.
//! An allowed failure is recorded as an error only after the backoff sleep
//! (`onRuntimeError` records after `delegate.onRuntimeError` returns), and not at all
//! on the last attempt (the delegate throws first). A success is recorded twice
//! (`onResult`, then `onComplete`). So under sustained failure the refusals leave the
//! window, and retries come back in bursts about once a window: about
//! `min_sample_size` retries an instance, plus those of every call that fails in the
//! backoff after the window drained (none of them is recorded before it ends). The
//! budget caps no call: attempts per call are about 1 + burst / calls per window.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use serde::{Deserialize, Serialize};

use crate::engine::time::SECOND;
use crate::engine::Nanos;
use crate::model::field::{in_range, Ctx, Dur, R};
use crate::model::outcome::Class;
use crate::model::text::fmt_num;
use crate::model::windows::EpochWindow;

use super::{BudgetBound, BudgetPolicy, BudgetState, RetryCause};

/// Default sliding time window.
pub(crate) const DEFAULT_WINDOW: Nanos = 10 * SECOND;
/// Default largest failure rate, in percent, that allows a retry.
pub(crate) const DEFAULT_MAX_RETRY_RATIO: f64 = 10.0;
/// Default warm-up: calls in the window up to which retries are always allowed.
pub(crate) const DEFAULT_MIN_SAMPLE_SIZE: u64 = 100;

/// The `resilience4j` table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Written {
    /// Sliding time window, whole seconds.
    #[schemars(extend("default" = crate::model::field::duration_text(DEFAULT_WINDOW)))]
    pub window: Option<Dur>,
    /// Largest failure rate in percent that allows a retry.
    #[schemars(extend("default" = DEFAULT_MAX_RETRY_RATIO))]
    pub max_retry_ratio: Option<f64>,
    /// Warm-up: calls in the window up to which retries are always allowed.
    #[schemars(extend("default" = DEFAULT_MIN_SAMPLE_SIZE))]
    pub min_sample_size: Option<u64>,
}

/// Resilience4j retry budget (`BudgetRetryImpl`); also what `explain` says of it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Config {
    /// Sliding time window in whole seconds.
    pub window_s: u32,
    /// Largest window failure rate (percent) that still allows a retry.
    pub max_retry_ratio: f64,
    /// Calls in the window up to which every retry is allowed.
    pub min_sample_size: i64,
}

/// What `explain` says of the budget: its settings.
pub(crate) type Cap = Config;

impl Written {
    /// The budget's rules; `p` is the table's path.
    pub fn validate(&self, c: &Ctx, p: &str) -> R<Config> {
        let w = self.window.map_or(DEFAULT_WINDOW, |d| d.0);
        if !w.is_multiple_of(SECOND) || w == 0 || w / SECOND > 3_600 {
            return c.err(
                format!("{p}.window"),
                format!(
                    "must be a whole number of seconds from 1s to 1h (found {})",
                    crate::engine::time::format(w)
                ),
            );
        }
        let mss = self.min_sample_size.unwrap_or(DEFAULT_MIN_SAMPLE_SIZE);
        if mss > i64::MAX as u64 {
            return c.err(format!("{p}.min_sample_size"), "is too large");
        }
        Ok(Config {
            window_s: (w / SECOND) as u32,
            max_retry_ratio: in_range(
                c,
                &format!("{p}.max_retry_ratio"),
                self.max_retry_ratio.unwrap_or(DEFAULT_MAX_RETRY_RATIO),
                0.0,
                100.0,
            )?,
            min_sample_size: mss as i64,
        })
    }
}

/// Resilience4j's retry budget state.
#[derive(Debug, Clone)]
pub struct State {
    window: EpochWindow,
    max_retry_ratio: f64,
    min_sample_size: i64,
    /// The answer of `allowRetry()` to the last failure.
    allowed: bool,
    /// When allowed failures get recorded: at the end of their backoff sleep (at most
    /// one per call sleeping, so bounded by the calls in flight).
    pending: BinaryHeap<Reverse<Nanos>>,
}

impl State {
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

impl BudgetPolicy for Config {
    type State = State;
    type Cap = Cap;

    fn state(&self, _slices: u64) -> State {
        State {
            window: EpochWindow::new(self.window_s, 0),
            max_retry_ratio: self.max_retry_ratio,
            min_sample_size: self.min_sample_size,
            allowed: true,
            pending: BinaryHeap::new(),
        }
    }

    fn cap(&self) -> Cap {
        *self
    }
}

impl BudgetState for State {
    #[inline]
    fn on_failed(&mut self, now: Nanos, _class: Class, _retryable: bool) {
        // onRuntimeError asks allowRetry() first, whatever the exception; what it
        // records comes later (see on_retry_scheduled).
        self.allowed = self.allow(now);
    }

    /// `allowRetry()` throws `RetryBudgetExceededException` in place of the failure.
    #[inline]
    fn refused_failure(&self) -> bool {
        !self.allowed
    }

    /// The failure is recorded when its sleep ends.
    #[inline]
    fn on_retry_scheduled(&mut self, wake: Nanos) {
        self.pending.push(Reverse(wake));
    }

    #[inline]
    fn on_succeeded(&mut self, now: Nanos, _last_retry_cost: u64) {
        // onResult records a success, then onComplete records another.
        self.flush(now);
        self.window.record(now, false, false);
        self.window.record(now, false, false);
    }

    fn ask(&mut self, _now: Nanos, _cause: RetryCause) -> Option<u64> {
        self.allowed.then_some(0)
    }

    fn level(&self, now: Nanos) -> f64 {
        let mut r = self.clone();
        r.flush(now);
        let snap = r.window.snapshot(now);
        if i64::from(snap.calls) <= r.min_sample_size || r.max_retry_ratio <= 0.0 {
            1.0
        } else {
            (1.0 - f64::from(snap.failure_rate()) / r.max_retry_ratio).clamp(0.0, 1.0)
        }
    }

    fn tokens(&self) -> u64 {
        u64::from(self.allowed)
    }
}

impl BudgetBound for Config {
    /// No cap per call: the window allows a burst of about min_sample_size retries
    /// (plus a backoff's worth) an instance once a window, so a slow instance retries
    /// every call (2.2 attempts per call at 8 calls/s an instance in
    /// `scenarios/presets.toml` with a sustained outage), a busy one few (1.09 at
    /// 400 calls/s).
    fn sustained(&self) -> f64 {
        f64::INFINITY
    }

    fn describe(&self, _instances: u64) -> String {
        let Config {
            window_s,
            max_retry_ratio,
            min_sample_size,
        } = *self;
        format!(
            "Resilience4j retry budget (pull request #2373, an unreleased proposal): over the last {window_s}s, in 1s slices from the budget's creation, a failure is refused (budget_exhausted, and not recorded) while more than {}% of the recorded outcomes failed, once more than {min_sample_size} are recorded; an allowed failure is recorded only when its backoff ends (not on the last attempt), a success twice; so in a long outage the refusals leave the window and about once a window each instance retries in a burst of about {min_sample_size} retries plus those of every call failing in the backoff after the window drained (recorded only a backoff later): no cap per call, about 1 + burst / (the instance's calls in {window_s}s) attempts per call, at most max_attempts",
            fmt_num(max_retry_ratio)
        )
    }

    fn short(&self) -> String {
        let Config {
            window_s,
            max_retry_ratio,
            min_sample_size,
        } = *self;
        format!(
            "retry budget (PR #2373, unreleased): failure rate ≤ {}% over {window_s}s after {min_sample_size} records",
            fmt_num(max_retry_ratio)
        )
    }
}
