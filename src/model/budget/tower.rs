//! tower's `TpsBudget`: Finagle's arithmetic on a [`TpsBucket`], but for
//! `retry_percent <= 1` a deposit is 1 and a withdrawal `(isize)(1 / retry_percent)`
//! (`f32`): 30% allows one retry per 3 deposits (33%); `truncate = false` scales by
//! 1000 as Finagle does. tower leaves the deposit to the policy: its documented policy
//! deposits on each success (`deposit = "success"`), Finagle's filter on each call.

use serde::{Deserialize, Serialize};

use crate::engine::time::SECOND;
use crate::engine::Nanos;
use crate::model::field::{in_range, Ctx, Dur, R};
use crate::model::windows::TpsBucket;

use super::finagle::{Cap, DEFAULT_MIN_PER_SEC, DEFAULT_PERCENT, DEFAULT_TTL};
use super::{BudgetPolicy, BudgetState, RetryCause};

/// tower's truncation of `1/percent` when `truncate` is not written.
pub(crate) const DEFAULT_TRUNCATE: bool = true;

/// What deposits into the bucket.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Deposit {
    /// Each success (tower's documented policy).
    #[default]
    Success,
    /// Each call (Finagle's filter).
    Call,
}

/// The `tower` table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Written {
    /// Deposit lifetime, between 1s and 60s.
    #[schemars(extend("default" = crate::model::field::duration_text(DEFAULT_TTL)))]
    pub ttl: Option<Dur>,
    /// Retries per second always allowed.
    #[schemars(extend("default" = DEFAULT_MIN_PER_SEC))]
    pub min_per_sec: Option<u64>,
    /// Percentage of deposits that may be retried.
    #[schemars(extend("default" = DEFAULT_PERCENT))]
    pub percent: Option<f64>,
    /// tower's truncation of `1/percent` (default true).
    #[schemars(extend("default" = DEFAULT_TRUNCATE))]
    pub truncate: Option<bool>,
    /// `"success"` (default, tower's documented policy) or `"call"`.
    #[schemars(extend("default" = crate::model::field::default_of::<Deposit>()))]
    pub deposit: Option<Deposit>,
}

/// tower `TpsBudget`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Config {
    /// `ttl`.
    pub ttl: Nanos,
    /// `min_per_sec`.
    pub min_per_sec: u32,
    /// `retry_percent` (0.2 for 20%), an `f32` as in tower.
    pub retry_percent: f32,
    /// Whether `1/retry_percent` is truncated for `retry_percent <= 1` (tower's
    /// arithmetic); false scales by 1000 as Finagle does (tower PR #863).
    pub truncate: bool,
    /// Deposit on each success (tower's documented policy) rather than each call.
    pub deposit_on_success: bool,
}

impl Written {
    /// `TpsBudget`'s rules; `p` is the table's path.
    pub fn validate(&self, c: &Ctx, p: &str) -> R<Config> {
        let ttl = self.ttl.map_or(DEFAULT_TTL, |d| d.0);
        if !(SECOND..=60 * SECOND).contains(&ttl) {
            return c.err(
                format!("{p}.ttl"),
                format!(
                    "must be between 1s and 60s (found {})",
                    crate::engine::time::format(ttl)
                ),
            );
        }
        let mps = self.min_per_sec.unwrap_or(DEFAULT_MIN_PER_SEC);
        if mps >= i32::MAX as u64 {
            return c.err(
                format!("{p}.min_per_sec"),
                format!("must be below {} (found {mps})", i32::MAX),
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
            ttl,
            min_per_sec: mps as u32,
            retry_percent: (pc / 100.0) as f32,
            truncate: self.truncate.unwrap_or(DEFAULT_TRUNCATE),
            deposit_on_success: self.deposit.unwrap_or_default() == Deposit::Success,
        })
    }
}

/// tower's `TpsBudget`.
#[derive(Debug, Clone)]
pub struct State {
    bucket: TpsBucket,
    deposit: i64,
    withdraw: i64,
    reserve: i64,
    deposit_on_success: bool,
}

impl State {
    /// `TpsBudget::new(ttl, min_per_sec, retry_percent)` created at time 0.
    pub fn new(
        ttl: Nanos,
        min_per_sec: u32,
        retry_percent: f32,
        truncate: bool,
        deposit_on_success: bool,
    ) -> State {
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
        State {
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

impl BudgetPolicy for Config {
    type State = State;
    type Cap = Cap;

    fn state(&self, _slices: u64) -> State {
        State::new(
            self.ttl,
            self.min_per_sec,
            self.retry_percent,
            self.truncate,
            self.deposit_on_success,
        )
    }

    fn cap(&self) -> Cap {
        let t = self.state(0);
        let (deposit, withdraw) = t.amounts();
        Cap {
            library: "tower",
            ttl: self.ttl,
            min_per_sec: u64::from(self.min_per_sec),
            percent: f64::from(self.retry_percent) * 100.0,
            deposit,
            withdraw,
            reserve: t.reserve(),
            deposit_on_success: self.deposit_on_success,
        }
    }
}

impl BudgetState for State {
    #[inline]
    fn on_call(&mut self, now: Nanos) {
        if !self.deposit_on_success {
            self.deposit(now);
        }
    }

    #[inline]
    fn on_succeeded(&mut self, now: Nanos, _last_retry_cost: u64) {
        if self.deposit_on_success {
            self.deposit(now);
        }
    }

    fn ask(&mut self, now: Nanos, _cause: RetryCause) -> Option<u64> {
        self.withdraw(now).then_some(0)
    }

    /// The share of the reserve still there (or whether one retry is, without one).
    fn level(&self, now: Nanos) -> f64 {
        let full = if self.reserve > 0 {
            self.reserve
        } else {
            self.withdraw
        };
        (self.bucket.balance(now) as f64 / full.max(1) as f64).clamp(0.0, 1.0)
    }

    fn tokens(&self) -> u64 {
        self.bucket.balance(0).max(0) as u64
    }
}
