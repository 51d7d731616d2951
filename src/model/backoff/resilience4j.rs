//! `resilience4j`: Resilience4j `IntervalFunction`, in whole milliseconds.
//!
//! `i_1 = initial`, `i_n = (long)(i_(n−1)·m)` ms; randomized
//! `max(1, (long)(i(1−f) + u·(2fi + 1)))` (`randomize`'s `min + random·(max − min + 1)`);
//! then `min(·, max_interval)`.

use serde::{Deserialize, Serialize};

use super::{Failure, Kind, MAX_BACKOFF_PARAM};
use crate::engine::time::MILLISECOND;
use crate::engine::Nanos;
use crate::model::field::{at_most_dur, in_range, Ctx, Dur, R};
use crate::model::text::{fmt_num, fmt_time};

/// First interval when none is written.
pub(crate) const DEFAULT_INITIAL: Nanos = 500 * MILLISECOND;

/// Growth factor when `multiplier` is not written (a fixed interval).
pub(crate) const DEFAULT_MULTIPLIER: f64 = 1.0;

/// Randomization factor when `randomization_factor` is not written.
pub(crate) const DEFAULT_RANDOMIZATION: f64 = 0.0;

/// `{ kind = "resilience4j", initial = "500ms", multiplier = 1.5, randomization_factor = 0.5 }`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Written {
    /// First interval.
    #[schemars(extend("default" = crate::model::field::duration_text(DEFAULT_INITIAL)))]
    pub initial: Option<Dur>,
    /// Growth factor (default 1: a fixed interval).
    #[schemars(extend("default" = DEFAULT_MULTIPLIER))]
    pub multiplier: Option<f64>,
    /// Randomization factor in [0, 1] (default 0).
    #[schemars(extend("default" = DEFAULT_RANDOMIZATION))]
    pub randomization_factor: Option<f64>,
    /// Largest interval (default none).
    pub max_interval: Option<Dur>,
}

impl Written {
    /// Intervals of at least 1 ms (Resilience4j's check), `multiplier` in `[1, 1000]`,
    /// `randomization_factor` in `[0, 1]`.
    pub fn validate(&self, c: &Ctx, p: &str) -> R<Resilience4j> {
        let f = |k: &str| format!("{p}.{k}");
        let ms_of = |field: String, d: Nanos| -> R<u64> {
            let d = at_most_dur(c, &field, d, MAX_BACKOFF_PARAM)?;
            if d < MILLISECOND {
                return c.err(
                    field,
                    "must be at least 1ms (Resilience4j's interval check)",
                );
            }
            Ok(d / MILLISECOND)
        };
        let initial_ms = ms_of(f("initial"), self.initial.map_or(DEFAULT_INITIAL, |d| d.0))?;
        let max_ms = match self.max_interval {
            Some(m) => Some(ms_of(f("max_interval"), m.0)?),
            None => None,
        };
        Ok(Resilience4j {
            initial_ms,
            multiplier: in_range(
                c,
                &f("multiplier"),
                self.multiplier.unwrap_or(DEFAULT_MULTIPLIER),
                1.0,
                1000.0,
            )?,
            randomization: in_range(
                c,
                &f("randomization_factor"),
                self.randomization_factor.unwrap_or(DEFAULT_RANDOMIZATION),
                0.0,
                1.0,
            )?,
            max_ms,
        })
    }
}

/// Resilience4j `IntervalFunction`, in whole milliseconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Resilience4j {
    /// First interval in milliseconds.
    pub initial_ms: u64,
    /// Growth factor (1 = fixed interval).
    pub multiplier: f64,
    /// Randomization factor `f`: `(long)((1-f)·i + U·(2f·i + 1))`, at least 1 ms
    /// (0 = none).
    pub randomization: f64,
    /// Largest interval in milliseconds.
    pub max_ms: Option<u64>,
}

impl Kind for Resilience4j {
    fn draws(&self, _k: u32, _prev: Nanos, _f: &Failure) -> bool {
        self.randomization > 0.0
    }

    fn wait_u(&self, k: u32, _prev: &mut Nanos, f: &Failure, u: f64) -> Nanos {
        let i = interval(self.initial_ms, self.multiplier, k);
        let mut w = if self.randomization > 0.0 {
            // IntervalFunction.randomize: min + random·(max − min + 1), then (long), at
            // least 1 ms.
            let i = i as f64;
            let delta = self.randomization * i;
            let lo = i - delta;
            let hi = i + delta;
            ((lo + u * (hi - lo + 1.0)) as i64).max(1) as u64
        } else {
            i
        };
        if let Some(m) = self.max_ms {
            w = w.min(m);
        }
        f.or_retry_after(w.saturating_mul(MILLISECOND))
    }

    fn max_wait(&self, k: u32) -> Nanos {
        let i = interval(self.initial_ms, self.multiplier, k);
        // The draw stays below i·(1 + f) + 1: truncated, at most its ceiling.
        let ms = if self.randomization > 0.0 {
            ((i as f64 * (1.0 + self.randomization)).ceil() as u64).max(1)
        } else {
            i
        };
        self.max_ms
            .map_or(ms, |m| ms.min(m))
            .saturating_mul(MILLISECOND)
    }

    fn settled_wait(&self) -> Nanos {
        match self.max_ms {
            Some(m) if self.multiplier > 1.0 => m.saturating_mul(MILLISECOND),
            _ if self.multiplier <= 1.0 => self.max_wait(1),
            _ => u64::MAX,
        }
    }

    fn is_jittered(&self) -> bool {
        self.randomization > 0.0
    }

    fn describe(&self) -> String {
        let i = fmt_time(self.initial_ms * MILLISECOND);
        let mut t = if self.multiplier == 1.0 {
            format!("Resilience4j fixed {i}")
        } else {
            format!(
                "Resilience4j exponential from {i} ×{}",
                fmt_num(self.multiplier)
            )
        };
        if self.randomization > 0.0 {
            t.push_str(&format!(
                ", randomized ±{}%",
                fmt_num(self.randomization * 100.0)
            ));
        }
        if let Some(m) = self.max_ms {
            t.push_str(&format!(", capped at {}", fmt_time(m * MILLISECOND)));
        }
        t
    }
}

/// Resilience4j's interval for attempt `k`: `initial`, then `(long)(i·multiplier)`.
fn interval(initial: u64, multiplier: f64, k: u32) -> u64 {
    let mut i = initial;
    for _ in 1..k {
        let next = (i as f64 * multiplier) as i64 as u64;
        if next == i {
            break;
        }
        i = next;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intervals_below_a_millisecond_are_refused() {
        let w = Written {
            initial: Some(Dur(MILLISECOND / 2)),
            multiplier: None,
            randomization_factor: None,
            max_interval: None,
        };
        let e = w.validate(&Ctx, "b").unwrap_err();
        assert_eq!(e.field, "b.initial");
        let fixed = Written { initial: None, ..w }.validate(&Ctx, "b").unwrap();
        assert_eq!(fixed.describe(), "Resilience4j fixed 500ms");
        assert_eq!(fixed.settled_wait(), DEFAULT_INITIAL);
    }
}
