//! Netflix's AIMD limit (`Netflix/concurrency-limits` HEAD 78a74b9, 2026-01-12,
//! `concurrency-limits-core/.../limit/AIMDLimit.java`), as its code does it:
//!
//! ```text
//! on sample(rtt, inflight, didDrop):
//!   if didDrop or rtt > timeout: L = (int)(L · backoff_ratio)
//!   else if inflight·2 ≥ L:      L = L + 1
//!   L = clamp(L, min_limit, max_limit)
//! ```
//!
//! Defaults `initial_limit 20, min_limit 20, max_limit 200, backoff_ratio 0.9`
//! (in `[0.5, 1)`), `timeout 5s`. The limit is clamped only on update: an initial
//! limit below `min_limit` reads as written until the first sample
//! (`AIMDLimitTest.testDefault`).

use serde::{Deserialize, Serialize};

use super::status::{rejected_of, Rejected, StatusFile};
use super::window::{self, WindowFile};
use super::{java_int, ConcurrencyLimitConfig};
use crate::engine::time::SECOND;
use crate::engine::Nanos;
use crate::model::field::{duration_text, Ctx, Dur, R};
use crate::model::text::{fmt_num, fmt_time};

/// Default initial limit.
pub(crate) const DEFAULT_INITIAL_LIMIT: u64 = 20;
/// Default lower clamp.
pub(crate) const DEFAULT_MIN_LIMIT: u64 = 20;
/// Default upper clamp.
pub(crate) const DEFAULT_MAX_LIMIT: u64 = 200;
/// Default multiplicative decrease.
pub(crate) const DEFAULT_BACKOFF_RATIO: f64 = 0.9;
/// Default RTT counted as a drop.
pub(crate) const DEFAULT_TIMEOUT: Nanos = 5 * SECOND;

/// `{ kind = "aimd", ... }` as written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Written {
    /// The limit before the first sample (not clamped until then).
    #[schemars(extend("default" = DEFAULT_INITIAL_LIMIT))]
    pub initial_limit: Option<u64>,
    /// The lowest limit an update leaves.
    #[schemars(extend("default" = DEFAULT_MIN_LIMIT))]
    pub min_limit: Option<u64>,
    /// The highest limit an update leaves.
    #[schemars(extend("default" = DEFAULT_MAX_LIMIT))]
    pub max_limit: Option<u64>,
    /// Factor of a decrease, in [0.5, 1).
    #[schemars(extend("default" = DEFAULT_BACKOFF_RATIO))]
    pub backoff_ratio: Option<f64>,
    /// A sample slower than this counts as a drop.
    #[schemars(extend("default" = duration_text(DEFAULT_TIMEOUT)))]
    pub timeout: Option<Dur>,
    /// Aggregate samples per window first (Netflix's WindowedLimit).
    pub window: Option<WindowFile>,
    /// What a refused caller sees: 429 (default), 503 or "unavailable".
    #[schemars(extend("default" = 429))]
    pub status: Option<StatusFile>,
}

impl Written {
    /// The validated limit; `p` is the field path of the table.
    pub fn validate(&self, c: &Ctx, p: &str) -> R<ConcurrencyLimitConfig> {
        let int =
            |k: &str, v: Option<u64>, d: u64| java_int(c, &format!("{p}.{k}"), v.unwrap_or(d));
        let initial_limit = int("initial_limit", self.initial_limit, DEFAULT_INITIAL_LIMIT)?;
        let min_limit = int("min_limit", self.min_limit, DEFAULT_MIN_LIMIT)?;
        let max_limit = int("max_limit", self.max_limit, DEFAULT_MAX_LIMIT)?;
        if max_limit < min_limit {
            return c.err(
                format!("{p}.max_limit"),
                format!("must be at least min_limit {min_limit} (found {max_limit})"),
            );
        }
        if max_limit == 0 {
            return c.err(
                format!("{p}.max_limit"),
                "must be at least 1 (found 0): a limit of 0 refuses everything",
            );
        }
        let ratio = c.finite(
            &format!("{p}.backoff_ratio"),
            self.backoff_ratio.unwrap_or(DEFAULT_BACKOFF_RATIO),
        )?;
        if !(0.5..1.0).contains(&ratio) {
            return c.err(
                format!("{p}.backoff_ratio"),
                format!("must be at least 0.5 and below 1, as AIMDLimit requires (found {ratio})"),
            );
        }
        let timeout = match self.timeout {
            Some(t) => c.positive_dur(&format!("{p}.timeout"), t)?,
            None => DEFAULT_TIMEOUT,
        };
        Ok(ConcurrencyLimitConfig::Aimd(Config {
            initial_limit,
            min_limit,
            max_limit,
            backoff_ratio: ratio,
            timeout,
            window: window::validate(c, p, &self.window)?,
            status: rejected_of(c, p, &self.status, Rejected::Status(429))?,
        }))
    }
}

/// Validated settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Config {
    /// The limit before the first sample.
    pub initial_limit: i32,
    /// Lower clamp of an update.
    pub min_limit: i32,
    /// Upper clamp of an update.
    pub max_limit: i32,
    /// Factor of a decrease.
    pub backoff_ratio: f64,
    /// A sample slower than this counts as a drop (ns).
    pub timeout: Nanos,
    /// WindowedLimit aggregation, if any.
    pub window: Option<window::Config>,
    /// What a refused caller sees.
    pub status: Rejected,
}

impl Default for Config {
    /// Netflix's defaults, unwindowed, answering 429.
    fn default() -> Config {
        Config {
            initial_limit: DEFAULT_INITIAL_LIMIT as i32,
            min_limit: DEFAULT_MIN_LIMIT as i32,
            max_limit: DEFAULT_MAX_LIMIT as i32,
            backoff_ratio: DEFAULT_BACKOFF_RATIO,
            timeout: DEFAULT_TIMEOUT,
            window: None,
            status: Rejected::Status(429),
        }
    }
}

impl Config {
    /// What explain says of the limit.
    pub(super) fn describe(&self) -> String {
        format!(
            "AIMD concurrency limit (Netflix AIMDLimit, 78a74b9): starts at {}; each sample adds 1 while at least half the limit is in flight, and a drop or an RTT above {} multiplies it by {} (truncated to an integer); kept within [{}, {}] on update{}; refused callers are answered {}",
            self.initial_limit,
            fmt_time(self.timeout),
            fmt_num(self.backoff_ratio),
            self.min_limit,
            self.max_limit,
            window::describe(&self.window),
            self.status
        )
    }
}

/// AIMD's state: the integer limit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Aimd {
    cfg: Config,
    limit: i32,
}

impl Aimd {
    /// The limit before any sample.
    pub(crate) fn new(cfg: Config) -> Aimd {
        Aimd {
            cfg,
            limit: cfg.initial_limit,
        }
    }

    /// The current limit.
    pub(crate) fn limit(&self) -> i32 {
        self.limit
    }

    /// One sample: a request that took `rtt` with `inflight` in flight when it
    /// started (itself included), dropped or not.
    pub(crate) fn on_sample(&mut self, rtt: Nanos, inflight: u32, dropped: bool) {
        let mut l = self.limit;
        if dropped || rtt > self.cfg.timeout {
            l = (f64::from(l) * self.cfg.backoff_ratio) as i32;
        } else if i64::from(inflight) * 2 >= i64::from(l) {
            l = l.saturating_add(1);
        }
        self.limit = l.max(self.cfg.min_limit).min(self.cfg.max_limit);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::time::MILLISECOND;

    fn aimd(initial: i32) -> Aimd {
        Aimd::new(Config {
            initial_limit: initial,
            ..Config::default()
        })
    }

    /// `AIMDLimitTest.java` at 78a74b9 (vector VA2 of ADMISSION.md §14).
    #[test]
    fn netflix_aimd_limit_tests_are_replayed() {
        // testDefault: initial 10 reads 10 (below min 20: not clamped before a sample).
        assert_eq!(aimd(10).limit(), 10);
        // increaseOnSuccess
        let mut a = aimd(20);
        a.on_sample(MILLISECOND, 10, false);
        assert_eq!(a.limit(), 21);
        // decreaseOnDrops
        let mut a = aimd(30);
        a.on_sample(0, 0, true);
        assert_eq!(a.limit(), 27);
        // successOverflow: initial 21, max 21, min 0
        let mut a = Aimd::new(Config {
            initial_limit: 21,
            max_limit: 21,
            min_limit: 0,
            ..Config::default()
        });
        a.on_sample(MILLISECOND, 10, false);
        assert_eq!(a.limit(), 21);
    }

    #[test]
    fn a_sample_slower_than_the_timeout_is_a_drop_and_an_idle_limit_holds() {
        let mut a = aimd(100);
        a.on_sample(DEFAULT_TIMEOUT + 1, 100, false);
        assert_eq!(a.limit(), 90);
        a.on_sample(DEFAULT_TIMEOUT, 44, false); // 44·2 < 90: app-limited, no growth
        assert_eq!(a.limit(), 90);
        a.on_sample(DEFAULT_TIMEOUT, 45, false);
        assert_eq!(a.limit(), 91);
    }

    #[test]
    fn the_decrease_truncates_toward_zero_and_the_update_clamps_to_min() {
        let mut a = aimd(25);
        a.on_sample(0, 0, true); // (int)(22.5) = 22
        assert_eq!(a.limit(), 22);
        a.on_sample(0, 0, true); // (int)(19.8) = 19, clamped to 20
        assert_eq!(a.limit(), 20);
        let mut a = Aimd::new(Config {
            initial_limit: 37,
            min_limit: 1,
            ..Config::default()
        });
        a.on_sample(0, 0, true); // 33.3 -> 33
        assert_eq!(a.limit(), 33);
    }
}
