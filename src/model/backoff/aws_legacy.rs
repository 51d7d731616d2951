//! `aws_legacy`: botocore legacy mode (`delay_exponential`): `base·growth^(k−1)` s,
//! `base = u` unless given; no cap.

use serde::{Deserialize, Serialize};

use super::{secs_to_ns_ceil, Failure, Kind, MAX_BACKOFF_PARAM};
use crate::engine::time::SECOND;
use crate::engine::Nanos;
use crate::model::field::{at_most_dur, in_range, Ctx, Dur, R};
use crate::model::text::{fmt_num, fmt_time};

/// Growth factor when none is written.
pub(crate) const DEFAULT_GROWTH: f64 = 2.0;

/// `{ kind = "aws_legacy", base = "100ms", growth_factor = 2 }`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Written {
    /// Fixed base (default: a uniform draw in [0, 1) seconds).
    pub base: Option<Dur>,
    /// Growth factor.
    #[schemars(extend("default" = DEFAULT_GROWTH))]
    pub growth_factor: Option<f64>,
}

impl Written {
    /// `growth_factor` in `(0, 1000]`.
    pub fn validate(&self, c: &Ctx, p: &str) -> R<AwsLegacy> {
        let f = |k: &str| format!("{p}.{k}");
        let base = match self.base {
            Some(b) => Some(at_most_dur(c, &f("base"), b.0, MAX_BACKOFF_PARAM)?),
            None => None,
        };
        let growth = c.positive(
            &f("growth_factor"),
            self.growth_factor.unwrap_or(DEFAULT_GROWTH),
        )?;
        Ok(AwsLegacy {
            base,
            growth: in_range(c, &f("growth_factor"), growth, 0.0, 1000.0)?,
        })
    }
}

/// botocore legacy mode: `base·growth^(n-1)` seconds, `base` uniform in `[0, 1)`
/// unless given.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AwsLegacy {
    /// Fixed base (`None` = `rand`).
    pub base: Option<Nanos>,
    /// Growth factor.
    pub growth: f64,
}

impl Kind for AwsLegacy {
    fn draws(&self, _k: u32, _prev: Nanos, _f: &Failure) -> bool {
        self.base.is_none()
    }

    fn wait_u(&self, k: u32, _prev: &mut Nanos, f: &Failure, u: f64) -> Nanos {
        let b = self.base.map_or(u, |b| b as f64 / SECOND as f64);
        f.or_retry_after(secs_to_ns_ceil(
            b * self.growth.powi((k - 1).min(2000) as i32),
        ))
    }

    fn max_wait(&self, k: u32) -> Nanos {
        let b = self.base.map_or(1.0, |b| b as f64 / SECOND as f64);
        secs_to_ns_ceil(b * self.growth.powi((k - 1).min(2000) as i32))
    }

    fn settled_wait(&self) -> Nanos {
        if self.growth <= 1.0 {
            self.max_wait(1)
        } else {
            u64::MAX
        }
    }

    fn is_jittered(&self) -> bool {
        self.base.is_none()
    }

    fn describe(&self) -> String {
        match self.base {
            None => format!(
                "AWS legacy: rand × {}^(n−1) s, no cap",
                fmt_num(self.growth)
            ),
            Some(b) => format!(
                "AWS legacy: {} × {}^(n−1), no cap, no jitter",
                fmt_time(b),
                fmt_num(self.growth)
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::attempts::Attempts;

    #[test]
    fn a_fixed_base_is_unjittered_and_grows_without_bound() {
        let l = AwsLegacy {
            base: Some(SECOND / 10),
            growth: 2.0,
        };
        assert!(!l.is_jittered());
        assert_eq!(l.max_wait(3), 400_000_000);
        assert_eq!(l.settled_wait(), u64::MAX);
        assert_eq!(
            l.unjittered(Attempts::Limited(3)).as_deref(),
            Some("an unjittered backoff (AWS legacy: 100ms × 2^(n−1), no cap, no jitter)")
        );
    }
}
