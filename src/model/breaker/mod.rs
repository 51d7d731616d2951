//! Circuit breakers: closed → open → half-open → closed.
//!
//! A breaker counts the outcomes of the calls it lets pass. When its trip rule says so
//! it opens for `open_for`: calls are refused at once. Then it is half-open: up to
//! `half_open_probes` calls pass as probes, and their outcomes close it or open it
//! again. The rules are the vendors of this family, one file each:
//! - [`consecutive`]: `failures` failures in a row;
//! - [`rate`]: the failure rate over the last `window_calls` calls;
//! - [`resilience4j`]: Resilience4j's `CircuitBreaker`, count or time window, slow calls;
//! - [`polly`]: Polly v8's circuit breaker, failure ratio over a sampling duration.
//!
//! This root holds what they share: the written form [`BreakerFile`] and the validated
//! form [`BreakerConfig`] (whose [`Trip`] names the vendor), the [`Placement`], the
//! [`State`] machine of a [`Breaker`] and the delegation to the vendors.
//!
//! A cancelled call (its caller gave up, or the request's deadline passed) is recorded
//! as a failure, except by Polly (see [`polly`]).

pub(crate) mod consecutive;
pub(crate) mod polly;
pub(crate) mod rate;
pub(crate) mod resilience4j;

use serde::{Deserialize, Serialize};

use crate::engine::Nanos;
use crate::model::field::{Ctx, R};
use crate::model::text::{fmt_time, plural};

/// Circuit breaker of a layer instance, as written: `{ kind = "...", ... }`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum BreakerFile {
    /// Opens after `failures` consecutive failures.
    Consecutive(consecutive::Written),
    /// Opens when the failure rate over the last `window_calls` calls reaches a threshold.
    Rate(rate::Written),
    /// Resilience4j circuit breaker.
    Resilience4j(resilience4j::Written),
    /// Polly v8 circuit breaker.
    Polly(polly::Written),
}

impl BreakerFile {
    /// The validated breaker; `p` is the field path of the table.
    pub fn validate(&self, c: &Ctx, p: &str) -> R<BreakerConfig> {
        match self {
            BreakerFile::Consecutive(w) => w.validate(c, p),
            BreakerFile::Rate(w) => w.validate(c, p),
            BreakerFile::Resilience4j(w) => w.validate(c, p),
            BreakerFile::Polly(w) => w.validate(c, p),
        }
    }
}

/// Where a breaker sits relative to the retry loop (written `"inside"` or `"outside"`).
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Placement {
    /// Retry(Breaker(call)).
    #[default]
    Inside,
    /// Breaker(Retry(call)).
    Outside,
}

impl Placement {
    /// What explain says of it.
    fn text(self) -> &'static str {
        match self {
            Placement::Inside => "inside the retry loop: it counts every attempt, and an open breaker fails an attempt at once with breaker_open",
            Placement::Outside => "outside the retry loop: it counts one outcome per call, after its retries",
        }
    }

    /// Its short form, for the preset line.
    fn short(self) -> &'static str {
        match self {
            Placement::Inside => "inside",
            Placement::Outside => "outside",
        }
    }
}

/// What trips a breaker: the vendor and its validated settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Trip {
    /// `failures` consecutive failures.
    Consecutive(consecutive::Config),
    /// Failure rate over the last calls.
    Rate(rate::Config),
    /// Resilience4j `CircuitBreaker`.
    Resilience4j(resilience4j::Config),
    /// Polly v8 circuit breaker.
    Polly(polly::Config),
}

impl Trip {
    /// Bytes of one instance's counts beyond the [`Breaker`] itself (the resource
    /// guard's estimate).
    pub fn state_bytes(&self) -> u64 {
        match self {
            Trip::Consecutive(t) => t.state_bytes(),
            Trip::Rate(t) => t.state_bytes(),
            Trip::Resilience4j(t) => t.state_bytes(),
            Trip::Polly(t) => t.state_bytes(),
        }
    }
}

/// Circuit-breaker settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BreakerConfig {
    /// What trips it.
    pub trip: Trip,
    /// Time open before half-open.
    pub open_for: Nanos,
    /// Successful probes needed to close.
    pub half_open_probes: u32,
    /// Inside or outside the retry loop.
    pub placement: Placement,
}

impl BreakerConfig {
    /// What explain says of the breaker.
    pub fn describe(&self) -> String {
        match &self.trip {
            Trip::Consecutive(t) => t.describe(self),
            Trip::Rate(t) => t.describe(self),
            Trip::Resilience4j(t) => t.describe(self),
            Trip::Polly(t) => t.describe(self),
        }
    }

    /// A short form of the breaker, for the preset line.
    pub fn short(&self) -> String {
        let trip = match &self.trip {
            Trip::Consecutive(t) => t.short(),
            Trip::Rate(t) => t.short(),
            Trip::Resilience4j(t) => t.short(self),
            Trip::Polly(t) => t.short(),
        };
        format!(
            "{trip}, open {}, {}",
            fmt_time(self.open_for),
            self.placement.short()
        )
    }

    /// The explain text of a breaker whose trip is `trip` and whose half-open state
    /// closes after `half_open_probes` successful probes (consecutive and rate).
    fn probes_text(&self, trip: String) -> String {
        format!(
            "{trip}, stays open {}, closes after {}; {}",
            fmt_time(self.open_for),
            plural(
                u64::from(self.half_open_probes),
                "successful probe",
                "successful probes"
            ),
            self.placement.text()
        )
    }
}

/// Successful probes needed to close when `half_open_probes` is not written.
pub(crate) const DEFAULT_HALF_OPEN_PROBES: u64 = 1;

/// `half_open_probes` as written (default 1), at least 1 (consecutive and rate).
fn half_open_probes(c: &Ctx, p: &str, v: Option<u64>) -> R<u32> {
    let f = format!("{p}.half_open_probes");
    c.u32_field(
        &f,
        c.at_least(&f, v.unwrap_or(DEFAULT_HALF_OPEN_PROBES), 1)?,
    )
}

/// Breaker state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum State {
    /// Calls pass and are counted.
    Closed,
    /// Calls are refused until `until`.
    Open {
        /// When it turns half-open.
        until: Nanos,
    },
    /// Up to `half_open_probes` calls pass as probes.
    HalfOpen {
        /// Probes admitted and not yet recorded (Resilience4j: admitted in all).
        in_flight: u32,
        /// Probes that succeeded.
        successes: u32,
    },
}

/// What a recorded outcome does to the breaker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    /// Nothing changes state.
    Stay,
    /// It opens.
    Open,
    /// It closes, with fresh counts.
    Close,
}

/// What a vendor's counts do at each step of the state machine.
trait Rule {
    /// Records the outcome of a call that took `duration` in `state`, `probes` being
    /// the half-open probes.
    fn record(
        &mut self,
        state: &mut State,
        now: Nanos,
        success: bool,
        duration: Nanos,
        probes: u32,
    ) -> Verdict;
    /// The breaker opened.
    fn opened(&mut self) {}
    /// The breaker turned half-open.
    fn half_open(&mut self, _probes: u32) {}
    /// The breaker closed at `now`.
    fn closed(&mut self, now: Nanos);
    /// Time past `open_for` before the first probe is admitted.
    fn open_extra(&self) -> Nanos {
        0
    }
}

/// A vendor's counts, with its settings.
#[derive(Debug, Clone)]
enum Counts {
    Consecutive(consecutive::Counts),
    Rate(rate::Counts),
    Resilience4j(resilience4j::Counts),
    Polly(polly::Counts),
}

impl Counts {
    fn new(trip: Trip) -> Counts {
        match trip {
            Trip::Consecutive(t) => Counts::Consecutive(consecutive::Counts::new(t)),
            Trip::Rate(t) => Counts::Rate(rate::Counts::new(t)),
            Trip::Resilience4j(t) => Counts::Resilience4j(resilience4j::Counts::new(t)),
            Trip::Polly(t) => Counts::Polly(polly::Counts::new(t)),
        }
    }

    fn rule(&mut self) -> &mut dyn Rule {
        match self {
            Counts::Consecutive(m) => m,
            Counts::Rate(m) => m,
            Counts::Resilience4j(m) => m,
            Counts::Polly(m) => m,
        }
    }
}

/// One instance's circuit breaker.
#[derive(Debug, Clone)]
pub(crate) struct Breaker {
    cfg: BreakerConfig,
    state: State,
    opened: u64,
    counts: Counts,
}

impl Breaker {
    /// A closed breaker.
    pub(crate) fn new(cfg: BreakerConfig) -> Breaker {
        Breaker {
            cfg,
            state: State::Closed,
            opened: 0,
            counts: Counts::new(cfg.trip),
        }
    }

    /// Current state (without advancing time).
    pub(crate) fn state(&self) -> State {
        self.state
    }

    /// Times the breaker has opened.
    pub(crate) fn times_opened(&self) -> u64 {
        self.opened
    }

    /// Whether it refuses calls at `now`.
    #[cfg(test)]
    pub(crate) fn is_open(&self, now: Nanos) -> bool {
        matches!(self.state, State::Open { until } if now < until)
    }

    /// Moves an expired open state to half-open. Returns true when it changed.
    pub(crate) fn tick(&mut self, now: Nanos) -> bool {
        if let State::Open { until } = self.state {
            if now >= until {
                self.state = State::HalfOpen {
                    in_flight: 0,
                    successes: 0,
                };
                self.counts.rule().half_open(self.cfg.half_open_probes);
                return true;
            }
        }
        false
    }

    /// Asks to pass one call at `now`; a half-open breaker counts it as a probe.
    pub(crate) fn allow(&mut self, now: Nanos) -> bool {
        self.tick(now);
        match &mut self.state {
            State::Closed => true,
            State::Open { .. } => false,
            State::HalfOpen {
                in_flight,
                successes,
            } => {
                if *in_flight + *successes < self.cfg.half_open_probes {
                    *in_flight += 1;
                    true
                } else {
                    false
                }
            }
        }
    }

    /// Records the outcome of a call it let pass. Returns true when the breaker opened.
    #[cfg(test)]
    pub(crate) fn record(&mut self, now: Nanos, success: bool) -> bool {
        self.record_timed(now, success, 0)
    }

    /// Records the outcome of a call it let pass that took `duration` (Resilience4j's
    /// slow calls). Returns true when the breaker opened.
    pub(crate) fn record_timed(&mut self, now: Nanos, success: bool, duration: Nanos) -> bool {
        let probes = self.cfg.half_open_probes;
        let verdict = self
            .counts
            .rule()
            .record(&mut self.state, now, success, duration, probes);
        match verdict {
            Verdict::Stay => false,
            Verdict::Open => {
                self.trip(now);
                true
            }
            Verdict::Close => {
                self.close(now);
                false
            }
        }
    }

    fn trip(&mut self, now: Nanos) {
        let extra = self.counts.rule().open_extra();
        self.state = State::Open {
            until: now.saturating_add(self.cfg.open_for).saturating_add(extra),
        };
        self.opened += 1;
        self.counts.rule().opened();
    }

    fn close(&mut self, now: Nanos) {
        self.state = State::Closed;
        self.counts.rule().closed(now);
    }
}

/// A half-open breaker that closes after `probes` successful probes and opens again
/// at the first failed one (consecutive and rate).
fn probe(state: &mut State, success: bool, probes: u32) -> Verdict {
    match state {
        State::Open { .. } => Verdict::Stay, // a late answer from before it opened
        State::HalfOpen {
            in_flight,
            successes,
        } => {
            *in_flight = in_flight.saturating_sub(1);
            if !success {
                Verdict::Open
            } else {
                *successes += 1;
                if *successes >= probes {
                    Verdict::Close
                } else {
                    Verdict::Stay
                }
            }
        }
        State::Closed => unreachable!("closed outcomes are counted by the trip rule"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(super) fn cfg(trip: Trip, probes: u32) -> BreakerConfig {
        BreakerConfig {
            trip,
            open_for: 1000,
            half_open_probes: probes,
            placement: Placement::Inside,
        }
    }

    fn consecutive(n: u32) -> Trip {
        Trip::Consecutive(consecutive::Config { failures: n })
    }

    #[test]
    fn half_open_closes_after_all_probes_succeed_and_reopens_on_a_failure() {
        let mut b = Breaker::new(cfg(consecutive(1), 2));
        b.allow(0);
        b.record(0, false);
        assert!(b.is_open(999));
        assert!(b.allow(1000));
        assert!(b.allow(1000));
        assert!(!b.allow(1000), "only two probes");
        b.record(1001, true);
        assert!(matches!(b.state(), State::HalfOpen { .. }));
        b.record(1002, true);
        assert_eq!(b.state(), State::Closed);
        // Open again, then a failed probe reopens it for open_for more.
        b.allow(2000);
        b.record(2000, false);
        assert!(b.allow(3000));
        assert!(b.record(3001, false));
        assert_eq!(b.state(), State::Open { until: 4001 });
        assert_eq!(b.times_opened(), 3);
    }

    #[test]
    fn late_answers_while_open_are_ignored() {
        let mut b = Breaker::new(cfg(consecutive(1), 1));
        b.record(0, false);
        assert!(!b.record(10, true));
        assert!(b.is_open(10));
    }
}

/// The examples of this file's docs, as unit tests (the module is the crate's own,
/// so rustdoc cannot run them).
#[cfg(test)]
mod doc_examples {
    #[test]
    fn breaker_example() {
        use crate::model::breaker::{consecutive, Breaker, BreakerConfig, Placement, State, Trip};
        let mut b = Breaker::new(BreakerConfig {
            trip: Trip::Consecutive(consecutive::Config { failures: 2 }),
            open_for: 100,
            half_open_probes: 1,
            placement: Placement::Inside,
        });
        assert!(b.allow(0));
        b.record(0, false);
        assert!(b.allow(0));
        b.record(0, false);
        assert_eq!(b.state(), State::Open { until: 100 });
        assert!(!b.allow(50));
        assert!(b.allow(100)); // half-open: one probe
        assert!(!b.allow(100));
        b.record(101, true);
        assert_eq!(b.state(), State::Closed);
    }
}
