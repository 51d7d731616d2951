//! `aws_standard`: botocore standard mode (`ExponentialBackoff.delay_amount`).
//!
//! Version 2.0: `u·min(2^(k−1), 20)` s. Version 2.1: `t = u·min(scale·2^(k−1), 20)` s
//! with scale 1 (throttling), 0.025 (DynamoDB) or 0.05, and with a Retry-After `r`:
//! `max(t, min(r, t + 5))`.

use serde::{Deserialize, Serialize};

use super::{secs_to_ns_ceil, Failure, Kind, MAX_BACKOFF_PARAM};
use crate::engine::time::{MILLISECOND, SECOND};
use crate::engine::Nanos;
use crate::model::field::{at_most_dur, Ctx, Dur, R};
use crate::model::text::fmt_time;

/// Largest wait when none is written (`_MAX_BACKOFF`).
pub(crate) const DEFAULT_MAX_BACKOFF: Nanos = 20 * SECOND;

/// DynamoDB's scale when `dynamodb` is not written.
pub(crate) const DEFAULT_DYNAMODB: bool = false;

/// Version of botocore's standard retry mode.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
pub enum Version {
    /// `STANDARD_RETRY_MODE_VERSION = "2.0"`: `rand·min(2^(n-1), 20 s)` (the default).
    #[default]
    #[serde(rename = "2.0")]
    V2_0,
    /// `"2.1"` (the 2026 update): scaled by 1 s (throttling), 50 ms or 25 ms (DynamoDB),
    /// and `x-amz-retry-after` honoured within `[t, t + 5 s]`.
    #[serde(rename = "2.1")]
    V2_1,
}

/// `{ kind = "aws_standard", version = "2.1", max_backoff = "20s", dynamodb = false }`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Written {
    /// `"2.0"` (default) or `"2.1"`.
    #[schemars(extend("default" = crate::model::field::default_of::<Version>()))]
    pub version: Option<Version>,
    /// Largest wait.
    #[schemars(extend("default" = crate::model::field::duration_text(DEFAULT_MAX_BACKOFF)))]
    pub max_backoff: Option<Dur>,
    /// DynamoDB's 25ms scale in version 2.1 (default false).
    #[schemars(extend("default" = DEFAULT_DYNAMODB))]
    pub dynamodb: Option<bool>,
}

impl Written {
    /// A positive `max_backoff` up to [`MAX_BACKOFF_PARAM`].
    pub fn validate(&self, c: &Ctx, p: &str) -> R<AwsStandard> {
        let f = |k: &str| format!("{p}.{k}");
        let max_backoff = match self.max_backoff {
            Some(m) => at_most_dur(
                c,
                &f("max_backoff"),
                c.positive_dur(&f("max_backoff"), m)?,
                MAX_BACKOFF_PARAM,
            )?,
            None => DEFAULT_MAX_BACKOFF,
        };
        Ok(AwsStandard {
            version: self.version.unwrap_or_default(),
            max_backoff,
            dynamodb: self.dynamodb.unwrap_or(DEFAULT_DYNAMODB),
        })
    }
}

/// botocore standard mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AwsStandard {
    /// Retry-mode version.
    pub version: Version,
    /// Largest wait (`_MAX_BACKOFF`, 20 s).
    pub max_backoff: Nanos,
    /// DynamoDB's 25 ms scale (version 2.1).
    pub dynamodb: bool,
}

impl AwsStandard {
    /// Version 2.1's scale when not throttled.
    fn scale_text(&self) -> &'static str {
        if self.dynamodb {
            "25ms"
        } else {
            "50ms"
        }
    }
}

impl Kind for AwsStandard {
    fn draws(&self, _k: u32, _prev: Nanos, _f: &Failure) -> bool {
        true
    }

    fn wait_u(&self, k: u32, _prev: &mut Nanos, f: &Failure, u: f64) -> Nanos {
        let max_s = self.max_backoff as f64 / SECOND as f64;
        let e = 2f64.powi((k - 1).min(2000) as i32);
        match self.version {
            Version::V2_0 => f.or_retry_after(secs_to_ns_ceil(u * e.min(max_s))),
            Version::V2_1 => {
                let scale = if f.throttled {
                    1.0
                } else if self.dynamodb {
                    0.025
                } else {
                    0.05
                };
                let t = u * (scale * e).min(max_s);
                let t = match f.retry_after {
                    // x-amz-retry-after carries whole milliseconds.
                    Some(ra) => {
                        let r = (ra / MILLISECOND) as f64 / 1000.0;
                        t.max(r.min(5.0 + t))
                    }
                    None => t,
                };
                secs_to_ns_ceil(t)
            }
        }
    }

    fn max_wait(&self, k: u32) -> Nanos {
        // The throttling scale (1 s) is the largest of version 2.1's scales.
        let e = 2f64.powi((k - 1).min(2000) as i32);
        secs_to_ns_ceil(e.min(self.max_backoff as f64 / SECOND as f64))
    }

    fn settled_wait(&self) -> Nanos {
        secs_to_ns_ceil(self.max_backoff as f64 / SECOND as f64)
    }

    fn is_jittered(&self) -> bool {
        true
    }

    fn describe(&self) -> String {
        match self.version {
            Version::V2_0 => format!(
                "AWS standard: rand × min(2^(n−1) s, {})",
                fmt_time(self.max_backoff)
            ),
            Version::V2_1 => format!(
                "AWS standard 2.1: rand × min(scale × 2^(n−1), {}), scale 1s after throttling, {} otherwise; a Retry-After is honoured within [t, t + 5s]",
                fmt_time(self.max_backoff),
                self.scale_text()
            ),
        }
    }

    fn short(&self) -> String {
        match self.version {
            Version::V2_0 => format!("rand × min(2^(n−1) s, {})", fmt_time(self.max_backoff)),
            Version::V2_1 => format!(
                "rand × min({}·2^(n−1), {}) (1s·2^(n−1) after throttling)",
                self.scale_text(),
                fmt_time(self.max_backoff)
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_2_0_and_20s_by_default_and_the_bound_doubles_to_it() {
        let w = Written {
            version: None,
            max_backoff: None,
            dynamodb: None,
        };
        let a = w.validate(&Ctx, "b").unwrap();
        assert_eq!(a.version, Version::V2_0);
        assert_eq!(
            (1..=6).map(|k| a.max_wait(k) / SECOND).collect::<Vec<_>>(),
            [1, 2, 4, 8, 16, 20]
        );
        assert_eq!(a.settled_wait(), DEFAULT_MAX_BACKOFF);
    }
}
