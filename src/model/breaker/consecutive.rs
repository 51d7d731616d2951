//! The consecutive-failure breaker: it opens after `failures` failures in a row, and a
//! success resets the count. Half-open, it closes after `half_open_probes` successful
//! probes and opens again at the first failed one.

use serde::{Deserialize, Serialize};

use super::{half_open_probes, probe, BreakerConfig, Placement, Rule, State, Trip, Verdict};
use crate::engine::Nanos;
use crate::model::field::{Ctx, Dur, R};
use crate::model::text::plural;

/// `{ kind = "consecutive", ... }` as written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Written {
    /// Threshold.
    pub failures: u64,
    /// Time open before half-open.
    pub open_for: Dur,
    /// Successful probes needed to close (default 1).
    #[schemars(extend("default" = super::DEFAULT_HALF_OPEN_PROBES))]
    pub half_open_probes: Option<u64>,
    /// Inside or outside the retry loop (default inside).
    #[schemars(extend("default" = crate::model::field::default_of::<super::Placement>()))]
    pub placement: Option<Placement>,
}

impl Written {
    /// The validated breaker; `p` is the field path of the table.
    pub fn validate(&self, c: &Ctx, p: &str) -> R<BreakerConfig> {
        let f = format!("{p}.failures");
        Ok(BreakerConfig {
            trip: Trip::Consecutive(Config {
                failures: c.u32_field(&f, c.at_least(&f, self.failures, 1)?)?,
            }),
            open_for: c.positive_dur(&format!("{p}.open_for"), self.open_for)?,
            half_open_probes: half_open_probes(c, p, self.half_open_probes)?,
            placement: self.placement.unwrap_or_default(),
        })
    }
}

/// Validated settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Config {
    /// Failures in a row that open it.
    pub failures: u32,
}

impl Config {
    /// What explain says of the breaker `b` of this trip.
    pub(super) fn describe(&self, b: &BreakerConfig) -> String {
        b.probes_text(format!(
            "opens after {} in a row",
            plural(u64::from(self.failures), "failure", "failures")
        ))
    }

    /// The trip in short, for the preset line.
    pub(super) fn short(&self) -> String {
        format!("{} failures in a row", self.failures)
    }

    /// Bytes of its counts beyond the breaker: none.
    pub(super) fn state_bytes(&self) -> u64 {
        0
    }
}

/// The failures in a row.
#[derive(Debug, Clone)]
pub(super) struct Counts {
    cfg: Config,
    failures: u32,
}

impl Counts {
    pub(super) fn new(cfg: Config) -> Counts {
        Counts { cfg, failures: 0 }
    }

    fn reset(&mut self) {
        self.failures = 0;
    }
}

impl Rule for Counts {
    fn record(
        &mut self,
        state: &mut State,
        _now: Nanos,
        success: bool,
        _duration: Nanos,
        probes: u32,
    ) -> Verdict {
        if *state != State::Closed {
            return probe(state, success, probes);
        }
        if success {
            self.failures = 0;
            Verdict::Stay
        } else {
            self.failures += 1;
            if self.failures >= self.cfg.failures {
                Verdict::Open
            } else {
                Verdict::Stay
            }
        }
    }

    fn opened(&mut self) {
        self.reset();
    }

    fn closed(&mut self, _now: Nanos) {
        self.reset();
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::cfg;
    use super::super::Breaker;
    use super::*;

    #[test]
    fn consecutive_breaker_resets_on_success() {
        let mut b = Breaker::new(cfg(Trip::Consecutive(Config { failures: 3 }), 1));
        for ok in [false, false, true, false, false] {
            assert!(b.allow(0));
            assert!(!b.record(0, ok));
        }
        assert!(b.record(5, false));
        assert_eq!(b.state(), State::Open { until: 1005 });
    }
}
