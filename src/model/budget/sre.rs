//! The SRE book's per-client retry budget ("Handling Overload"): retry only while
//! retries / requests (first attempts and retries) over the trailing window is below
//! `percent`.

use serde::{Deserialize, Serialize};

use crate::engine::time::SECOND;
use crate::engine::Nanos;
use crate::model::field::{in_range, Ctx, Dur, R};
use crate::model::text::{fmt_num, fmt_time};
use crate::model::windows::SlicedTimes;

use super::{BudgetBound, BudgetPolicy, BudgetState, RetryCause};

/// Default retries per request, in percent.
pub(crate) const DEFAULT_PERCENT: f64 = 10.0;
/// Default window.
pub(crate) const DEFAULT_WINDOW: Nanos = 120 * SECOND;

/// The `sre` table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Written {
    /// Retries per request, in percent.
    #[schemars(extend("default" = DEFAULT_PERCENT))]
    pub percent: Option<f64>,
    /// Window.
    #[schemars(extend("default" = crate::model::field::duration_text(DEFAULT_WINDOW)))]
    pub window: Option<Dur>,
}

/// Google SRE per-client retry budget: retry only while retries / requests is below
/// `fraction` over the trailing window. Also what `explain` says of it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Config {
    /// 0.1 for 10%.
    pub fraction: f64,
    /// Window.
    pub window: Nanos,
}

/// What `explain` says of the budget: its settings.
pub(crate) type Cap = Config;

impl Written {
    /// The budget's rules; `p` is the table's path.
    pub fn validate(&self, c: &Ctx, p: &str) -> R<Config> {
        let pc = in_range(
            c,
            &format!("{p}.percent"),
            self.percent.unwrap_or(DEFAULT_PERCENT),
            0.0,
            100.0,
        )?;
        if pc == 0.0 {
            return c.err(format!("{p}.percent"), "must be greater than 0");
        }
        let window = match self.window {
            Some(w) => c.positive_dur(&format!("{p}.window"), w)?,
            None => DEFAULT_WINDOW,
        };
        Ok(Config {
            fraction: pc / 100.0,
            window,
        })
    }
}

/// The first attempts and retries of one instance's window.
#[derive(Debug, Clone)]
pub struct State {
    /// Times of calls (first attempts) in the window.
    calls: SlicedTimes,
    /// Times of retries in the window.
    retries: SlicedTimes,
    /// Largest retries / requests.
    fraction: f64,
}

impl BudgetPolicy for Config {
    type State = State;
    type Cap = Cap;

    fn state(&self, slices: u64) -> State {
        State {
            calls: SlicedTimes::new(self.window, slices),
            retries: SlicedTimes::lasting(self.window, slices),
            fraction: self.fraction,
        }
    }

    fn cap(&self) -> Cap {
        *self
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
        let requests = self.calls.len() + self.retries.len();
        if requests == 0 || (self.retries.len() as f64 / requests as f64) < self.fraction {
            self.retries.push(now);
            Some(0)
        } else {
            None
        }
    }

    fn level(&self, now: Nanos) -> f64 {
        let (c, r) = (self.calls.count(now), self.retries.count(now));
        if c + r == 0 || self.fraction <= 0.0 {
            1.0
        } else {
            (1.0 - (r as f64 / (c + r) as f64) / self.fraction).clamp(0.0, 1.0)
        }
    }

    fn tokens(&self) -> u64 {
        self.retries.len()
    }
}

impl BudgetBound for Config {
    /// retries < f · (calls + retries): retries per call < f / (1 − f).
    fn sustained(&self) -> f64 {
        if self.fraction >= 1.0 {
            f64::INFINITY
        } else {
            1.0 + self.fraction / (1.0 - self.fraction)
        }
    }

    fn describe(&self, _instances: u64) -> String {
        format!(
            "SRE retry budget: retry only while retries are below {}% of the requests over {} per instance (about {} attempts per call at most)",
            fmt_num(self.fraction * 100.0),
            fmt_time(self.window),
            fmt_num(self.sustained())
        )
    }

    fn short(&self) -> String {
        format!(
            "retries < {}% of requests over {}",
            fmt_num(self.fraction * 100.0),
            fmt_time(self.window)
        )
    }
}
