//! The failure-rate breaker: it opens when the failures among the last `window_calls`
//! recorded calls reach `failure_rate`, once `min_calls` are recorded. Half-open, it
//! closes after `half_open_probes` successful probes and opens again at the first
//! failed one.

use serde::{Deserialize, Serialize};

use super::{half_open_probes, probe, BreakerConfig, Placement, Rule, State, Trip, Verdict};
use crate::engine::Nanos;
use crate::model::field::{Ctx, Dur, R};
use crate::model::text::fmt_num;

/// Most calls in the window.
pub(crate) const MAX_WINDOW_CALLS: u64 = 100_000;

/// `{ kind = "rate", ... }` as written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Written {
    /// Calls in the window.
    pub window_calls: u64,
    /// Calls needed before the rate counts (default: window_calls).
    pub min_calls: Option<u64>,
    /// Threshold in [0, 1].
    pub failure_rate: f64,
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
        let window = c.at_least(&format!("{p}.window_calls"), self.window_calls, 1)?;
        if window > MAX_WINDOW_CALLS {
            return c.err(
                format!("{p}.window_calls"),
                format!("must be at most {MAX_WINDOW_CALLS} (found {window})"),
            );
        }
        let min_calls = self.min_calls.unwrap_or(window);
        if min_calls > window {
            return c.err(
                format!("{p}.min_calls"),
                format!("must be at most window_calls {window} (found {min_calls})"),
            );
        }
        let rate = c.probability(&format!("{p}.failure_rate"), self.failure_rate)?;
        if rate == 0.0 {
            return c.err(format!("{p}.failure_rate"), "must be greater than 0");
        }
        Ok(BreakerConfig {
            trip: Trip::Rate(Config {
                window: window as u32,
                min_calls: min_calls.max(1) as u32,
                rate,
            }),
            open_for: c.positive_dur(&format!("{p}.open_for"), self.open_for)?,
            half_open_probes: half_open_probes(c, p, self.half_open_probes)?,
            placement: self.placement.unwrap_or_default(),
        })
    }
}

/// Validated settings: failure rate ≥ `rate` over the last `window` calls, once
/// `min_calls` are recorded.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Config {
    /// Calls in the window.
    pub window: u32,
    /// Calls needed before the rate counts.
    pub min_calls: u32,
    /// Threshold.
    pub rate: f64,
}

impl Config {
    /// What explain says of the breaker `b` of this trip.
    pub(super) fn describe(&self, b: &BreakerConfig) -> String {
        b.probes_text(format!(
            "opens at {}% failures over the last {} calls (once {} are recorded)",
            fmt_num(self.rate * 100.0),
            self.window,
            self.min_calls
        ))
    }

    /// The trip in short, for the preset line.
    pub(super) fn short(&self) -> String {
        format!("{}% of {} calls", fmt_num(self.rate * 100.0), self.window)
    }

    /// Bytes of the ring of outcomes.
    pub(super) fn state_bytes(&self) -> u64 {
        u64::from(self.window)
    }
}

/// Ring of the last recorded outcomes (true = failure).
#[derive(Debug, Clone)]
pub(super) struct Counts {
    cfg: Config,
    ring: Vec<bool>,
    pos: usize,
    len: usize,
    failures: usize,
}

impl Counts {
    pub(super) fn new(cfg: Config) -> Counts {
        Counts {
            cfg,
            ring: vec![false; cfg.window as usize],
            pos: 0,
            len: 0,
            failures: 0,
        }
    }

    fn reset(&mut self) {
        self.pos = 0;
        self.len = 0;
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
        let w = self.cfg.window as usize;
        if self.len == w {
            if self.ring[self.pos] {
                self.failures -= 1;
            }
        } else {
            self.len += 1;
        }
        self.ring[self.pos] = !success;
        if !success {
            self.failures += 1;
        }
        self.pos = (self.pos + 1) % w;
        if self.len >= self.cfg.min_calls as usize
            && self.failures as f64 >= self.cfg.rate * self.len as f64 - 1e-9
        {
            Verdict::Open
        } else {
            Verdict::Stay
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

    fn rate(window: u32, min_calls: u32, rate: f64) -> Trip {
        Trip::Rate(Config {
            window,
            min_calls,
            rate,
        })
    }

    #[test]
    fn rate_breaker_waits_for_min_calls_then_trips_at_the_threshold() {
        let mut b = Breaker::new(cfg(rate(10, 4, 0.5), 1));
        assert!(!b.record(0, false));
        assert!(!b.record(0, false));
        assert!(!b.record(0, false)); // 3 calls < min_calls
        assert!(b.record(0, true)); // 3/4 ≥ 0.5
    }

    #[test]
    fn rate_breaker_window_slides() {
        let mut b = Breaker::new(cfg(rate(4, 4, 0.75), 1));
        // f t t f t f : windows of 4 → [f,t,t,f]=0.5, [t,t,f,t]=0.25, [t,f,t,f]=0.5
        for ok in [false, true, true, false, true, false] {
            assert!(!b.record(0, ok));
        }
        // [f,t,f,f] = 0.75 → trips
        assert!(b.record(0, false));
    }
}
