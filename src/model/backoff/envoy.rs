//! `envoy`: Envoy's `JitteredExponentialBackOffStrategy`, in whole milliseconds.
//!
//! The current code: `(u·interval)` ms truncated, with `interval` starting at `base`
//! and doubling while below `max/2`, then `max`. The documented formula:
//! `min(u·(2^r − 1)·base, max)` ms, `r` growing from 1 while `(2^r − 1)·base <= max`.

use serde::{Deserialize, Serialize};

use super::{scale, Failure, Kind, MAX_BACKOFF_PARAM};
use crate::engine::time::MILLISECOND;
use crate::engine::Nanos;
use crate::model::field::{at_most_dur, Ctx, Dur, R};
use crate::model::text::fmt_time;

/// `base_interval` when none is written.
pub(crate) const DEFAULT_BASE: Nanos = 25 * MILLISECOND;
/// `max_interval` when none is written, in multiples of the base.
pub(crate) const DEFAULT_MAX_FACTOR: u64 = 10;

/// Which arithmetic of Envoy's jittered exponential backoff.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Formula {
    /// The code since Envoy 1.14 (PR #10417): retry N waits `U[0, min(2^(N-1)·base, max))`
    /// (the default).
    #[default]
    Current,
    /// The documented formula (the code before 1.14): `min(U[0, (2^N - 1)·base), max)`.
    Documented,
}

/// `{ kind = "envoy", base = "25ms", max = "250ms" }`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Written {
    /// `base_interval`.
    #[schemars(extend("default" = crate::model::field::duration_text(DEFAULT_BASE)))]
    pub base: Option<Dur>,
    /// `max_interval` (default 10 × base).
    pub max: Option<Dur>,
    /// `"current"` (default) or `"documented"`.
    #[schemars(extend("default" = crate::model::field::default_of::<Formula>()))]
    pub formula: Option<Formula>,
}

impl Written {
    /// Envoy reads whole milliseconds (`base_interval > 0`; below 1 ms it uses 1 ms);
    /// `max` at least `base`.
    pub fn validate(&self, c: &Ctx, p: &str) -> R<Envoy> {
        let f = |k: &str| format!("{p}.{k}");
        let base = match self.base {
            Some(b) => c.positive_dur(&f("base"), b)?,
            None => DEFAULT_BASE,
        };
        let base = at_most_dur(c, &f("base"), base, MAX_BACKOFF_PARAM)?;
        let base_ms = (base / MILLISECOND).max(1);
        let max_ms = match self.max {
            Some(m) => at_most_dur(c, &f("max"), m.0, MAX_BACKOFF_PARAM)? / MILLISECOND,
            None => base_ms * DEFAULT_MAX_FACTOR,
        };
        if max_ms < base_ms {
            return c.err(
                f("max"),
                format!("must be at least base ({base_ms}ms) (found {max_ms}ms)"),
            );
        }
        Ok(Envoy {
            base_ms,
            max_ms,
            formula: self.formula.unwrap_or_default(),
        })
    }
}

/// Envoy's fully jittered exponential backoff, in whole milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Envoy {
    /// `base_interval` in milliseconds.
    pub base_ms: u64,
    /// `max_interval` in milliseconds.
    pub max_ms: u64,
    /// Current code or documented formula.
    pub formula: Formula,
}

impl Kind for Envoy {
    fn draws(&self, _k: u32, _prev: Nanos, _f: &Failure) -> bool {
        true
    }

    fn wait_u(&self, k: u32, _prev: &mut Nanos, f: &Failure, u: f64) -> Nanos {
        let ms = match self.formula {
            Formula::Current => scale(u, interval(self.base_ms, self.max_ms, k)),
            Formula::Documented => {
                let range = documented_range(self.base_ms, self.max_ms, k);
                scale(u, range).min(self.max_ms)
            }
        };
        f.or_retry_after(ms.saturating_mul(MILLISECOND))
    }

    fn max_wait(&self, k: u32) -> Nanos {
        let ms = match self.formula {
            Formula::Current => interval(self.base_ms, self.max_ms, k),
            Formula::Documented => documented_range(self.base_ms, self.max_ms, k).min(self.max_ms),
        };
        ms.saturating_mul(MILLISECOND)
    }

    fn settled_wait(&self) -> Nanos {
        self.max_ms.saturating_mul(MILLISECOND)
    }

    fn is_jittered(&self) -> bool {
        true
    }

    fn describe(&self) -> String {
        match self.formula {
            Formula::Current => format!(
                "Envoy full jitter: uniform whole ms in [0, interval), interval from {} doubling up to {}",
                fmt_time(self.base_ms * MILLISECOND),
                fmt_time(self.max_ms * MILLISECOND)
            ),
            Formula::Documented => format!(
                "Envoy (documented formula): uniform whole ms in [0, (2^N − 1)·{}), capped at {}",
                fmt_time(self.base_ms * MILLISECOND),
                fmt_time(self.max_ms * MILLISECOND)
            ),
        }
    }

    fn short(&self) -> String {
        match self.formula {
            Formula::Current => format!(
                "U[0, {}·2^(N−1)) up to {}",
                fmt_time(self.base_ms * MILLISECOND),
                fmt_time(self.max_ms * MILLISECOND)
            ),
            Formula::Documented => format!(
                "U[0, (2^N − 1)·{}) up to {}",
                fmt_time(self.base_ms * MILLISECOND),
                fmt_time(self.max_ms * MILLISECOND)
            ),
        }
    }
}

/// Envoy's `next_interval_` at retry `k` (milliseconds).
fn interval(base: u64, max: u64, k: u32) -> u64 {
    let mut interval = base;
    for _ in 1..k {
        if interval < max / 2 {
            interval *= 2;
        } else {
            interval = max;
            break;
        }
    }
    interval
}

/// The range `(2^r − 1)·base` of the pre-1.14 Envoy backoff at retry `k` (milliseconds).
fn documented_range(base: u64, max: u64, k: u32) -> u64 {
    let range = |r: u32| {
        1u64.checked_shl(r)
            .map(|p| p - 1)
            .and_then(|m| m.checked_mul(base))
            .unwrap_or(u64::MAX)
    };
    let mut r = 1u32;
    for _ in 1..k {
        if range(r) <= max && r < 63 {
            r += 1;
        } else {
            break;
        }
    }
    range(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_25ms_and_ten_times_the_base() {
        let w = Written {
            base: None,
            max: None,
            formula: None,
        };
        let e = w.validate(&Ctx, "b").unwrap();
        assert_eq!(
            (e.base_ms, e.max_ms, e.formula),
            (25, 250, Formula::Current)
        );
        assert_eq!(
            (1..=5)
                .map(|k| e.max_wait(k) / MILLISECOND)
                .collect::<Vec<_>>(),
            [25, 50, 100, 200, 250]
        );
        let small = Written {
            max: Some(Dur(10 * MILLISECOND)),
            ..w
        };
        let err = small.validate(&Ctx, "b").unwrap_err();
        assert_eq!(err.field, "b.max");
        assert_eq!(err.message, "must be at least base (25ms) (found 10ms)");
    }
}
