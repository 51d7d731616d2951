//! Finagle's `RetryBudget` (`RetryBudget.scala` on twitter/util
//! `TokenBucket.newLeakyBucket`), its arithmetic exactly: each call deposits 1000 into a
//! [`WindowedAdder`] of `ttl` in 10 slices; a retry withdraws `(int)(1000 /
//! percentCanRetry)` if the window's sum plus the reserve `minRetriesPerSec · ttl_s ·
//! withdrawal` covers it.
//!
//! Its [`Cap`], a leaky token bucket, is also tower's.

use serde::{Deserialize, Serialize};

use crate::engine::time::{MILLISECOND, SECOND};
use crate::engine::Nanos;
use crate::model::field::{in_range, Ctx, Dur, R};
use crate::model::text::{fmt_num, fmt_time};
use crate::model::windows::WindowedAdder;

use super::{BudgetBound, BudgetPolicy, BudgetState, RetryCause};

/// Default deposit lifetime.
pub(crate) const DEFAULT_TTL: Nanos = 10 * SECOND;
/// Default retries per second always allowed.
pub(crate) const DEFAULT_MIN_PER_SEC: u64 = 10;
/// Default percentage of calls that may be retried.
pub(crate) const DEFAULT_PERCENT: f64 = 20.0;

/// The `finagle` table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Written {
    /// Deposit lifetime, between 1s and 60s.
    #[schemars(extend("default" = crate::model::field::duration_text(DEFAULT_TTL)))]
    pub ttl: Option<Dur>,
    /// Retries per second always allowed.
    #[schemars(extend("default" = DEFAULT_MIN_PER_SEC))]
    pub min_per_sec: Option<u64>,
    /// Percentage of calls that may be retried.
    #[schemars(extend("default" = DEFAULT_PERCENT))]
    pub percent: Option<f64>,
}

/// Finagle `RetryBudget`: deposits and withdrawals in a leaky token bucket.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Config {
    /// `ttl` in milliseconds.
    pub ttl_ms: i64,
    /// `minRetriesPerSec`.
    pub min_per_sec: i32,
    /// `percentCanRetry` (0.2 for 20%).
    pub percent_can_retry: f64,
}

impl Written {
    /// `RetryBudget`'s rules; `p` is the table's path.
    pub fn validate(&self, c: &Ctx, p: &str) -> R<Config> {
        let ttl = self.ttl.map_or(DEFAULT_TTL, |d| d.0);
        // RetryBudget: ttl.inSeconds (truncated) in [1, 60].
        if !(1..=60).contains(&(ttl / SECOND)) {
            return c.err(
                format!("{p}.ttl"),
                format!(
                    "must be between 1s and 60s (found {})",
                    crate::engine::time::format(ttl)
                ),
            );
        }
        let mps = self.min_per_sec.unwrap_or(DEFAULT_MIN_PER_SEC);
        if mps > i32::MAX as u64 {
            return c.err(
                format!("{p}.min_per_sec"),
                format!("must be at most {} (found {mps})", i32::MAX),
            );
        }
        let pc = in_range(
            c,
            &format!("{p}.percent"),
            self.percent.unwrap_or(DEFAULT_PERCENT),
            0.0,
            100_000.0,
        )?;
        Ok(Config {
            ttl_ms: (ttl / MILLISECOND) as i64,
            min_per_sec: mps as i32,
            percent_can_retry: pc / 100.0,
        })
    }
}

/// Finagle's `TokenRetryBudget` on a leaky bucket.
#[derive(Debug, Clone)]
pub struct State {
    adder: WindowedAdder,
    reserve: i64,
    deposit: i64,
    withdraw: i64,
    /// `RetryBudget.Empty`: both `minRetriesPerSec` and `percentCanRetry` are 0.
    empty: bool,
}

impl State {
    /// `RetryBudget(ttl, minRetriesPerSec, percentCanRetry)` created at time 0.
    pub fn new(ttl_ms: i64, min_per_sec: i32, percent_can_retry: f64) -> State {
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
        State {
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

impl BudgetPolicy for Config {
    type State = State;
    type Cap = Cap;

    fn state(&self, _slices: u64) -> State {
        State::new(self.ttl_ms, self.min_per_sec, self.percent_can_retry)
    }

    fn cap(&self) -> Cap {
        let (deposit, withdraw, reserve) = self.state(0).amounts();
        Cap {
            library: "Finagle",
            ttl: self.ttl_ms as u64 * 1_000_000,
            min_per_sec: self.min_per_sec.max(0) as u64,
            percent: self.percent_can_retry * 100.0,
            deposit,
            withdraw,
            reserve,
            deposit_on_success: false,
        }
    }
}

impl BudgetState for State {
    #[inline]
    fn on_call(&mut self, now: Nanos) {
        self.deposit(now);
    }

    fn ask(&mut self, now: Nanos, _cause: RetryCause) -> Option<u64> {
        self.try_withdraw(now).then_some(0)
    }

    /// The share of the reserve still there (or whether one retry is, without one).
    fn level(&self, now: Nanos) -> f64 {
        let mut f = self.clone();
        let count = f.count(now);
        let full = if f.reserve > 0 { f.reserve } else { f.withdraw };
        (count as f64 / full.max(1) as f64).clamp(0.0, 1.0)
    }

    fn tokens(&self) -> u64 {
        self.clone().count(0).max(0) as u64
    }
}

/// A leaky token bucket (Finagle `RetryBudget` or tower `TpsBudget`) in numbers.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cap {
    /// "Finagle" or "tower".
    pub library: &'static str,
    /// Deposit lifetime, between 1s and 60s.
    pub ttl: Nanos,
    /// Retries per second of reserve.
    pub min_per_sec: u64,
    /// The configured percentage (20 for 20%).
    pub percent: f64,
    /// Tokens per deposit.
    pub deposit: i64,
    /// Tokens per retry.
    pub withdraw: i64,
    /// Reserve tokens: `min_per_sec · ttl_s · withdraw`.
    pub reserve: i64,
    /// Whether deposits come from successes (tower's policy) rather than calls.
    pub deposit_on_success: bool,
}

impl BudgetBound for Cap {
    fn sustained(&self) -> f64 {
        if self.deposit_on_success {
            // With every attempt failing no success deposits: only the reserve is left.
            1.0
        } else {
            1.0 + self.deposit as f64 / self.withdraw.max(1) as f64
        }
    }

    fn describe(&self, _instances: u64) -> String {
        let Cap {
            library,
            ttl,
            min_per_sec,
            percent,
            deposit,
            withdraw,
            reserve,
            deposit_on_success,
        } = *self;
        format!(
            "{library} retry budget: each {} deposits {deposit} for {}, a retry withdraws {withdraw} (a reserve of {min_per_sec}/s × {} × {withdraw} = {reserve}); {}% configured, {}% effective ({deposit}/{withdraw}); in a long outage that is {} attempts per call, beyond the reserve",
            if deposit_on_success { "success" } else { "call" },
            fmt_time(ttl),
            fmt_time(ttl / 1_000_000_000 * 1_000_000_000),
            fmt_num(percent),
            fmt_num(if withdraw > 0 { deposit as f64 / withdraw as f64 * 100.0 } else { 0.0 }),
            if deposit_on_success {
                "1".to_string()
            } else {
                fmt_num(1.0 + deposit as f64 / withdraw.max(1) as f64)
            }
        )
    }

    fn short(&self) -> String {
        let Cap {
            library,
            ttl,
            min_per_sec,
            percent,
            deposit,
            withdraw,
            deposit_on_success,
            ..
        } = *self;
        format!(
            "{library} budget {}% (deposit {deposit}, withdraw {withdraw}) + {min_per_sec}/s, ttl {}, deposit per {}",
            fmt_num(percent),
            fmt_time(ttl),
            if deposit_on_success { "success" } else { "call" }
        )
    }
}
