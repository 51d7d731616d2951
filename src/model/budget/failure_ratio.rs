//! Brooker's retry circuit breaker (2022, "retry circuit breaker",
//! `mbrooker/simulator_example` `retry_sim/retry_strategy.py`): per instance, each first
//! try counts a call; each failed attempt counts a failure *first*, then the retry is
//! refused iff `failures / calls > max_ratio` (Python's float division). Cumulative
//! since the start by default (never reset), so a fresh client never retries its first
//! failure; with a finite `window`, both counts are kept in 10 slices of `window/10`
//! (the current slice and the 9 before it), a fixed amount of state. First tries are
//! never gated. Local refusals (`breaker_open`, `budget_exhausted`) are not failures of
//! the layer below and are not counted.

use serde::{Deserialize, Serialize};

use crate::engine::Nanos;
use crate::model::field::{at_most_dur, in_range, Ctx, Dur, Span, R};
use crate::model::outcome::Class;
use crate::model::text::{fmt_num, fmt_time};

use super::{local_refusal, BudgetBound, BudgetPolicy, BudgetState, RetryCause};

/// Default largest failures / first tries that still allows a retry.
pub(crate) const DEFAULT_MAX_RATIO: f64 = 0.1;
/// Longest window: the longest horizon of a scenario (`duration + drain`).
pub(crate) const MAX_WINDOW: Nanos = crate::model::field::MAX_HORIZON;

/// The `failure_ratio` table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Written {
    /// Largest failures / first tries that still allows a retry.
    #[schemars(extend("default" = DEFAULT_MAX_RATIO))]
    pub max_ratio: Option<f64>,
    /// `"unlimited"` (default: cumulative since the start) or a duration (a sliding
    /// ratio over that time, in 10 slices).
    #[schemars(extend("default" = "unlimited"))]
    pub window: Option<Span>,
}

/// Brooker's retry circuit breaker: each failed attempt is counted first, then a retry
/// is refused iff failures / first tries > `max_ratio`; first tries are never gated.
/// Also what `explain` says of it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Config {
    /// Largest failures / first tries that allows a retry.
    pub max_ratio: f64,
    /// `None`: cumulative since the start; `Some(w)`: over the last `w`, in 10 slices
    /// of `w/10`.
    pub window: Option<Nanos>,
}

/// What `explain` says of the breaker: its settings.
pub(crate) type Cap = Config;

impl Written {
    /// The breaker's rules; `p` is the table's path.
    pub fn validate(&self, c: &Ctx, p: &str) -> R<Config> {
        let max_ratio = in_range(
            c,
            &format!("{p}.max_ratio"),
            self.max_ratio.unwrap_or(DEFAULT_MAX_RATIO),
            0.0,
            1e6,
        )?;
        let window = match self.window {
            None | Some(Span::Unlimited) => None,
            Some(Span::Finite(w)) => {
                let field = format!("{p}.window");
                let w = c.positive_dur(&field, Dur(w))?;
                Some(at_most_dur(c, &field, w, MAX_WINDOW)?)
            }
        };
        Ok(Config { max_ratio, window })
    }
}

/// Calls (first tries) and failed attempts, since the start or over a window of 10
/// time slices.
#[derive(Debug, Clone)]
pub struct State {
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

impl State {
    /// A budget of `max_ratio`, cumulative (`window` `None`) or over `window`, at time 0.
    pub fn new(max_ratio: f64, window: Option<Nanos>) -> State {
        State {
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

    /// A failed attempt at `now`: counted, then the retry decided.
    pub fn on_failure_at(&mut self, now: Nanos) {
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

impl BudgetPolicy for Config {
    type State = State;
    type Cap = Cap;

    fn state(&self, _slices: u64) -> State {
        State::new(self.max_ratio, self.window)
    }

    fn cap(&self) -> Cap {
        *self
    }
}

impl BudgetState for State {
    /// A first try at `now`.
    #[inline]
    fn on_call(&mut self, now: Nanos) {
        self.advance(now);
        self.calls += 1;
        if let Some(slices) = self.slices.as_mut() {
            slices[(self.current % 10) as usize].0 += 1;
        }
    }

    /// Every failure of the layer below counts, retried class or not.
    #[inline]
    fn on_failed(&mut self, now: Nanos, class: Class, _retryable: bool) {
        if !local_refusal(class) {
            self.on_failure_at(now);
        }
    }

    fn ask(&mut self, _now: Nanos, _cause: RetryCause) -> Option<u64> {
        (!self.refused).then_some(0)
    }

    fn level(&self, now: Nanos) -> f64 {
        let mut f = self.clone();
        let (calls, failures) = f.counts(now);
        if calls == 0 || f.max_ratio <= 0.0 {
            f64::from(u8::from(failures == 0))
        } else {
            (1.0 - failures as f64 / calls as f64 / f.max_ratio).clamp(0.0, 1.0)
        }
    }

    fn tokens(&self) -> u64 {
        self.failures
    }
}

impl BudgetBound for Config {
    /// At total failure failures / first tries is the attempts per call: retries stop
    /// once it passes max_ratio (a fresh client never retries its first).
    fn sustained(&self) -> f64 {
        self.max_ratio.max(1.0)
    }

    fn describe(&self, _instances: u64) -> String {
        format!(
            "Brooker retry circuit breaker: per instance, {}, each failed attempt is counted first, then its retry is refused while failures / first tries > {}; first tries are never gated, and a fresh instance never retries its first failure; when every attempt fails that is about {} attempts per call",
            match self.window {
                None => "cumulative since the start".to_string(),
                Some(w) => format!("over the last {} (10 slices)", fmt_time(w)),
            },
            fmt_num(self.max_ratio),
            fmt_num(self.sustained())
        )
    }

    fn short(&self) -> String {
        format!(
            "retry breaker: failures / first tries ≤ {} {}",
            fmt_num(self.max_ratio),
            match self.window {
                None => "since the start".to_string(),
                Some(w) => format!("over {}", fmt_time(w)),
            }
        )
    }
}
