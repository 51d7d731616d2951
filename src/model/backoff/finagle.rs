//! `finagle`: Finagle `Backoff.decorrelatedJittered(start, max)`: `start`, then
//! `prev + (long)(u·(min(3·prev, max) − prev))` (`max` once `prev >= max/3`).

use serde::{Deserialize, Serialize};

use super::{scale, Failure, Kind, MAX_BACKOFF_PARAM};
use crate::engine::time::{from_f64_ns, MILLISECOND};
use crate::engine::Nanos;
use crate::model::field::{at_most_dur, Ctx, Dur, R};
use crate::model::text::fmt_time;

/// First wait when none is written.
pub(crate) const DEFAULT_START: Nanos = 5 * MILLISECOND;
/// Largest wait when none is written.
pub(crate) const DEFAULT_MAX: Nanos = 200 * MILLISECOND;

/// `{ kind = "finagle", start = "5ms", max = "200ms" }`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Written {
    /// First wait.
    #[schemars(extend("default" = crate::model::field::duration_text(DEFAULT_START)))]
    pub start: Option<Dur>,
    /// Largest wait.
    #[schemars(extend("default" = crate::model::field::duration_text(DEFAULT_MAX)))]
    pub max: Option<Dur>,
}

impl Written {
    /// A positive `start`, `max` at least `start`.
    pub fn validate(&self, c: &Ctx, p: &str) -> R<Finagle> {
        let f = |k: &str| format!("{p}.{k}");
        let start = match self.start {
            Some(s) => c.positive_dur(&f("start"), s)?,
            None => DEFAULT_START,
        };
        let max = self.max.map_or(DEFAULT_MAX, |m| m.0);
        let max = at_most_dur(c, &f("max"), max, MAX_BACKOFF_PARAM)?;
        if max < start {
            return c.err(
                f("max"),
                format!(
                    "must be at least start {} (found {})",
                    crate::engine::time::format(start),
                    crate::engine::time::format(max)
                ),
            );
        }
        Ok(Finagle { start, max })
    }
}

/// Finagle `Backoff.decorrelatedJittered(start, max)`: `start`, then
/// `U[prev, min(3·prev, max))`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Finagle {
    /// First wait.
    pub start: Nanos,
    /// Largest wait.
    pub max: Nanos,
}

impl Kind for Finagle {
    fn draws(&self, k: u32, prev: Nanos, _f: &Failure) -> bool {
        k >= 2 && range(prev, self.max) > 0
    }

    fn wait_u(&self, k: u32, prev: &mut Nanos, f: &Failure, u: f64) -> Nanos {
        let w = if k == 1 {
            self.start
        } else {
            let cur = *prev;
            let range = range(cur, self.max);
            if range == 0 {
                cur
            } else {
                cur + scale(u, range)
            }
        };
        *prev = w;
        f.or_retry_after(w)
    }

    fn max_wait(&self, k: u32) -> Nanos {
        let three = 3f64.powi((k - 1).min(4096) as i32);
        from_f64_ns(self.start as f64 * three).min(self.max.max(self.start))
    }

    fn settled_wait(&self) -> Nanos {
        self.max.max(self.start)
    }

    fn is_jittered(&self) -> bool {
        true
    }

    fn describe(&self) -> String {
        format!(
            "Finagle decorrelated jitter: {}, then uniform in [previous, 3 × previous) up to {}",
            fmt_time(self.start),
            fmt_time(self.max)
        )
    }

    fn short(&self) -> String {
        format!(
            "decorrelated jitter {} up to {}",
            fmt_time(self.start),
            fmt_time(self.max)
        )
    }
}

/// Finagle's range `upper − prev` of the next decorrelated wait.
fn range(prev: Nanos, max: Nanos) -> u64 {
    let upper = if prev >= max / 3 { max } else { prev * 3 };
    upper.abs_diff(prev)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn max_below_start_is_refused_and_the_first_wait_is_start() {
        let w = Written {
            start: Some(Dur(10 * MILLISECOND)),
            max: Some(Dur(5 * MILLISECOND)),
        };
        let e = w.validate(&Ctx, "b").unwrap_err();
        assert_eq!(e.message, "must be at least start 10ms (found 5ms)");
        let d = Written {
            start: None,
            max: None,
        }
        .validate(&Ctx, "b")
        .unwrap();
        let mut prev = d.initial_state();
        assert_eq!(
            d.wait_u(1, &mut prev, &Failure::default(), 0.9),
            DEFAULT_START
        );
        assert_eq!(d.max_wait(2), 15 * MILLISECOND);
    }
}
