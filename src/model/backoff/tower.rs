//! `tower`: tower `ExponentialBackoff::next_backoff`: `base = min(min·2^(k−1), max)`,
//! plus `min(Duration::new(secs·u·j, nanos·u·j), max − base)`.

use serde::{Deserialize, Serialize};

use super::{cap_text, Failure, Kind};
use crate::engine::time::MILLISECOND;
use crate::engine::Nanos;
use crate::model::field::{in_range, Ctx, Dur, R};
use crate::model::text::{fmt_num, fmt_time};

/// `min` when none is written.
pub(crate) const DEFAULT_MIN: Nanos = 50 * MILLISECOND;
/// Jitter ratio when none is written.
pub(crate) const DEFAULT_JITTER: f64 = 0.99;

/// `{ kind = "tower", min = "50ms", max = "5s", jitter = 0.99 }`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Written {
    /// `min`.
    #[schemars(extend("default" = crate::model::field::duration_text(DEFAULT_MIN)))]
    pub min: Option<Dur>,
    /// `max` (default none).
    pub max: Option<Dur>,
    /// Jitter ratio.
    #[schemars(extend("default" = DEFAULT_JITTER))]
    pub jitter: Option<f64>,
}

impl Written {
    /// A positive `max` not below `min` (tower's check), `jitter` in `[0, 100]`.
    pub fn validate(&self, c: &Ctx, p: &str) -> R<Tower> {
        let f = |k: &str| format!("{p}.{k}");
        let min = self.min.map_or(DEFAULT_MIN, |d| d.0);
        let max = match self.max {
            Some(m) => Some(c.positive_dur(&f("max"), m)?),
            None => None,
        };
        if let Some(m) = max {
            if m < min {
                return c.err(
                    f("max"),
                    "maximum must not be less than minimum (tower's check)",
                );
            }
        }
        Ok(Tower {
            min,
            max,
            jitter: in_range(
                c,
                &f("jitter"),
                self.jitter.unwrap_or(DEFAULT_JITTER),
                0.0,
                100.0,
            )?,
        })
    }
}

/// tower `ExponentialBackoff`: `base = min(min·2^k, max)`, plus
/// `min(U·jitter·base, max − base)`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tower {
    /// `min`.
    pub min: Nanos,
    /// `max` (`None` = `u64::MAX` milliseconds, tower's default).
    pub max: Option<Nanos>,
    /// Jitter ratio.
    pub jitter: f64,
}

impl Kind for Tower {
    fn draws(&self, _k: u32, _prev: Nanos, _f: &Failure) -> bool {
        self.jitter != 0.0
    }

    fn wait_u(&self, k: u32, _prev: &mut Nanos, f: &Failure, u: f64) -> Nanos {
        let (base, maxd) = base(self.min, self.max, k);
        let j = if self.jitter == 0.0 {
            0
        } else {
            let rj = u * self.jitter;
            let secs = ((base / 1_000_000_000) as u64 as f64 * rj) as u64;
            let nanos = ((base % 1_000_000_000) as u32 as f64 * rj) as u32;
            let d = u128::from(secs) * 1_000_000_000 + u128::from(nanos);
            d.min(maxd - base)
        };
        f.or_retry_after(u64::try_from(base + j).unwrap_or(u64::MAX))
    }

    fn max_wait(&self, k: u32) -> Nanos {
        let (base, maxd) = base(self.min, self.max, k);
        let top = base as f64 * (1.0 + self.jitter);
        let top = if top >= maxd as f64 {
            maxd
        } else {
            top as u128
        };
        u64::try_from(top.min(maxd)).unwrap_or(u64::MAX)
    }

    fn settled_wait(&self) -> Nanos {
        self.max.unwrap_or(u64::MAX)
    }

    fn is_jittered(&self) -> bool {
        self.jitter > 0.0
    }

    fn describe(&self) -> String {
        format!(
            "tower exponential from {} ×2, plus up to {}% jitter, {}",
            fmt_time(self.min),
            fmt_num(self.jitter * 100.0),
            cap_text(self.max)
        )
    }
}

/// tower's `base()` at retry `k` and its `max`, in nanoseconds (`u128`: a `Duration`).
fn base(min: Nanos, max: Option<Nanos>, k: u32) -> (u128, u128) {
    // Duration::from_millis(u64::MAX), tower's default maximum.
    let maxd = max.map_or(u128::from(u64::MAX) * 1_000_000, u128::from);
    // The largest Duration: u64::MAX seconds and 999,999,999 ns.
    let dur_max = u128::from(u64::MAX) * 1_000_000_000 + 999_999_999;
    let factor = u128::from(2u32.saturating_pow(k - 1));
    let prod = u128::from(min) * factor;
    let base = if prod > dur_max { maxd } else { prod.min(maxd) };
    (base, maxd)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn max_below_min_is_refused_and_the_jitter_stays_below_max() {
        let w = Written {
            min: Some(Dur(100 * MILLISECOND)),
            max: Some(Dur(50 * MILLISECOND)),
            jitter: None,
        };
        assert_eq!(w.validate(&Ctx, "b").unwrap_err().field, "b.max");
        let t = Tower {
            min: 100 * MILLISECOND,
            max: Some(300 * MILLISECOND),
            jitter: 1.0,
        };
        let mut prev = 0;
        assert_eq!(
            t.wait_u(2, &mut prev, &Failure::default(), 0.9),
            300 * MILLISECOND
        );
        assert_eq!(t.max_wait(1), 200 * MILLISECOND);
    }
}
