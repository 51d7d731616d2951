//! A sliding-window ratio (Finagle / SRE book in spirit): in any trailing `window`,
//! retries may not exceed `percent` of the calls plus `min_per_sec · window`.

use serde::{Deserialize, Serialize};

use crate::engine::time::{to_secs, SECOND};
use crate::engine::Nanos;
use crate::model::field::{Ctx, Dur, R};
use crate::model::text::{fmt_num, fmt_time};
use crate::model::windows::SlicedTimes;

use super::{BudgetBound, BudgetPolicy, BudgetState, RetryCause};

/// Default window.
pub(crate) const DEFAULT_WINDOW: Nanos = 10 * SECOND;

/// Retries per second always allowed when `min_per_sec` is not written.
pub(crate) const DEFAULT_MIN_PER_SEC: f64 = 0.0;

/// The `ratio` table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Written {
    /// Percentage of calls (20 = 20%).
    pub percent: f64,
    /// Retries per second always allowed (default 0).
    #[schemars(extend("default" = DEFAULT_MIN_PER_SEC))]
    pub min_per_sec: Option<f64>,
    /// Window length (default 10s).
    #[schemars(extend("default" = crate::model::field::duration_text(DEFAULT_WINDOW)))]
    pub window: Option<Dur>,
}

/// Sliding-window ratio.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Config {
    /// Fraction of calls (0.2 for 20%).
    pub fraction: f64,
    /// Floor per second.
    pub min_per_sec: f64,
    /// Window length.
    pub window: Nanos,
}

impl Written {
    /// The ratio's rules; `p` is the table's path.
    pub fn validate(&self, c: &Ctx, p: &str) -> R<Config> {
        let pc = c.finite(&format!("{p}.percent"), self.percent)?;
        if !(0.0..=100_000.0).contains(&pc) {
            return c.err(
                format!("{p}.percent"),
                format!("must be between 0 and 100000 (found {pc})"),
            );
        }
        let mps = c.finite(
            &format!("{p}.min_per_sec"),
            self.min_per_sec.unwrap_or(DEFAULT_MIN_PER_SEC),
        )?;
        if mps < 0.0 {
            return c.err(
                format!("{p}.min_per_sec"),
                format!("must not be negative (found {mps})"),
            );
        }
        let window = match self.window {
            Some(w) => c.positive_dur(&format!("{p}.window"), w)?,
            None => DEFAULT_WINDOW,
        };
        Ok(Config {
            fraction: pc / 100.0,
            min_per_sec: mps,
            window,
        })
    }
}

/// The calls and retries of one instance's window.
#[derive(Debug, Clone)]
pub struct State {
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
}

impl BudgetPolicy for Config {
    type State = State;
    type Cap = Cap;

    fn state(&self, slices: u64) -> State {
        State {
            calls: SlicedTimes::new(self.window, slices),
            retries: SlicedTimes::lasting(self.window, slices),
            fraction: self.fraction,
            min_per_sec: self.min_per_sec,
            window: self.window,
        }
    }

    fn cap(&self) -> Cap {
        Cap {
            fraction: self.fraction,
            min_per_sec: self.min_per_sec,
            window: self.window,
            floor_per_window: self.min_per_sec * to_secs(self.window),
        }
    }

    /// Calls and retries, each in at most slices + 2 entries.
    fn extra_bytes(&self, instances: u64) -> u64 {
        2 * SlicedTimes::max_bytes(SlicedTimes::slices_for(instances))
    }
}

impl BudgetState for State {
    #[inline]
    fn on_call(&mut self, now: Nanos) {
        self.calls.push(now);
    }

    fn ask(&mut self, now: Nanos, _cause: RetryCause) -> Option<u64> {
        self.calls.evict(now);
        self.retries.evict(now);
        let allowed =
            self.fraction * self.calls.len() as f64 + self.min_per_sec * to_secs(self.window);
        if (self.retries.len() + 1) as f64 <= allowed + 1e-9 {
            self.retries.push(now);
            Some(0)
        } else {
            None
        }
    }

    fn level(&self, now: Nanos) -> f64 {
        let (c, r) = (self.calls.count(now), self.retries.count(now));
        let allowed = self.fraction * c as f64 + self.min_per_sec * to_secs(self.window);
        if allowed <= 0.0 {
            0.0
        } else {
            (1.0 - r as f64 / allowed).clamp(0.0, 1.0)
        }
    }

    fn tokens(&self) -> u64 {
        self.retries.len()
    }
}

/// What a ratio allows.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cap {
    /// Allowed fraction of calls (0.2 for 20%).
    pub fraction: f64,
    /// Floor per second.
    pub min_per_sec: f64,
    /// Window.
    pub window: Nanos,
    /// `min_per_sec · window`: retries always allowed per window.
    pub floor_per_window: f64,
}

impl BudgetBound for Cap {
    fn sustained(&self) -> f64 {
        1.0 + self.fraction
    }

    fn describe(&self, _instances: u64) -> String {
        let Cap {
            fraction,
            min_per_sec,
            window,
            floor_per_window,
        } = *self;
        format!(
            "ratio: in any {w} window, retries ≤ {}% of calls + {}/s × {w} (= {}) per instance; in a long outage that is about {} attempts per call, beyond that floor",
            fmt_num(fraction * 100.0),
            fmt_num(min_per_sec),
            fmt_num(floor_per_window),
            fmt_num(1.0 + fraction),
            w = fmt_time(window),
        )
    }

    fn short(&self) -> String {
        format!(
            "ratio {}% + {}/s over {}",
            fmt_num(self.fraction * 100.0),
            fmt_num(self.min_per_sec),
            fmt_time(self.window)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Budget, BudgetConfig};
    use super::*;

    #[test]
    fn ratio_budget_counts_a_sliding_window() {
        let mut b = Budget::new(BudgetConfig::Ratio(Config {
            fraction: 0.2,
            min_per_sec: 0.0,
            window: 10 * SECOND,
        }));
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
        let mut b = Budget::new(BudgetConfig::Ratio(Config {
            fraction: 0.0,
            min_per_sec: 2.0,
            window: 5 * SECOND,
        }));
        let n = (0..100)
            .filter(|_| b.try_retry(SECOND, false).is_some())
            .count();
        assert_eq!(n, 10);
    }
}
