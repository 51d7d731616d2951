//! A fixed-window counter: at most `limit` attempts per window `[k·window,
//! (k + 1)·window)` from time 0, the rest rejected. The plain "N per minute" limiter
//! of many API gateways; it admits up to `2·limit` across a window boundary.

use serde::{Deserialize, Serialize};

use super::{status_of, AdmissionConfig, Verdict};
use crate::engine::Nanos;
use crate::model::field::{Ctx, Dur, R};
use crate::model::text::fmt_time;

/// `{ kind = "fixed_window", ... }` as written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Written {
    /// Attempts admitted per window (required).
    pub limit: Option<u64>,
    /// The window (required).
    pub window: Option<Dur>,
    /// Status of a rejection: 429 (default) or 503.
    #[schemars(extend("default" = super::DEFAULT_STATUS))]
    pub status: Option<u16>,
}

impl Written {
    /// The validated limiter; `p` is the field path of the table.
    pub fn validate(&self, c: &Ctx, p: &str) -> R<AdmissionConfig> {
        let Some(limit) = self.limit else {
            return c.err(
                format!("{p}.limit"),
                "is required for kind = \"fixed_window\" (attempts admitted per window)",
            );
        };
        let Some(window) = self.window else {
            return c.err(
                format!("{p}.window"),
                "is required for kind = \"fixed_window\" (a duration)",
            );
        };
        Ok(AdmissionConfig::FixedWindow(Config {
            limit,
            window: c.positive_dur(&format!("{p}.window"), window)?,
            status: status_of(c, p, self.status)?,
        }))
    }
}

/// Validated settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Config {
    /// Attempts per window.
    pub limit: u64,
    /// The window (ns).
    pub window: Nanos,
    /// Status of a rejection.
    pub status: u16,
}

impl Config {
    /// What explain says of the limiter.
    pub(super) fn describe(&self) -> String {
        format!(
            "fixed window: {} attempts per {} window from time 0, the rest answered {} without Retry-After (up to {} across a window boundary)",
            self.limit,
            fmt_time(self.window),
            self.status,
            self.limit.saturating_mul(2)
        )
    }
}

/// The counter of the current window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Window {
    cfg: Config,
    index: u64,
    count: u64,
}

impl Window {
    /// The first window, empty.
    pub(crate) fn new(cfg: Config) -> Window {
        Window {
            cfg,
            index: 0,
            count: 0,
        }
    }

    /// An attempt arrives at `now`.
    #[inline]
    pub(crate) fn admit(&mut self, now: Nanos) -> Verdict {
        let k = now / self.cfg.window;
        if k != self.index {
            self.index = k;
            self.count = 0;
        }
        if self.count < self.cfg.limit {
            self.count += 1;
            Verdict::Admit
        } else {
            Verdict::Limit(None)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::time::SECOND;

    #[test]
    fn a_window_admits_its_limit_and_the_next_window_starts_afresh() {
        let mut w = Window::new(Config {
            limit: 3,
            window: SECOND,
            status: 429,
        });
        let first: Vec<_> = (0..5).map(|i| w.admit(i * 100)).collect();
        assert_eq!(first.iter().filter(|v| **v == Verdict::Admit).count(), 3);
        assert_eq!(w.admit(SECOND - 1), Verdict::Limit(None));
        let second: Vec<_> = (0..5).map(|_| w.admit(SECOND)).collect();
        assert_eq!(second.iter().filter(|v| **v == Verdict::Admit).count(), 3);
    }
}
