//! Circuit breakers: closed → open → half-open → closed.
//!
//! A breaker counts failures, either consecutive ones or the failure rate over the last
//! `window_calls` recorded calls (once `min_calls` are recorded). When it trips it opens
//! for `open_for`: calls are refused at once. Then it is half-open: up to
//! `half_open_probes` calls pass; when that many succeed it closes, and any failure
//! opens it again.
//!
//! Two trips follow their library's state machine exactly:
//! - **Resilience4j** (`CircuitBreakerStateMachine`, `CircuitBreakerMetrics`): a count-
//!   or time-based window ([`CountWindow`], [`EpochWindow`]); after each recorded call,
//!   once `minimumNumberOfCalls` are in the window (for a count window at most its size),
//!   it opens when the failure rate (`f32` percent) reaches its threshold or the share
//!   of calls slower than `slowCallDurationThreshold` (strictly) reaches its own. Open,
//!   it admits a call only strictly after `waitDurationInOpenState`, turning half-open:
//!   `permittedNumberOfCallsInHalfOpenState` calls are admitted in all, recorded in a
//!   count window of that size, and evaluated with the same thresholds once
//!   `min(minimumNumberOfCalls, permitted)` are recorded: above → open again, below →
//!   closed, with fresh metrics.
//! - **Polly** (`CircuitStateController`, `AdvancedCircuitBehavior`,
//!   `RollingHealthMetrics`): successes and failures in [`HealthMetrics`] over the
//!   sampling duration; a failure while closed opens the circuit when the throughput
//!   is at least `MinimumThroughput` and the failure ratio at least `FailureRatio`.
//!   After `BreakDuration` one call passes; its success closes (and resets the
//!   metrics), its failure reopens. A cancelled call (its caller gave up, or the
//!   request's deadline passed) is recorded as a success: the default `ShouldHandle`
//!   does not handle `OperationCanceledException`, so it closes a half-open circuit
//!   too. Every other breaker records a cancelled call as a failure.
//!
//! ```
//! use retrysim::model::breaker::{Breaker, State};
//! use retrysim::model::config::{BreakerConfig, Placement, Trip};
//! let mut b = Breaker::new(BreakerConfig {
//!     trip: Trip::Consecutive(2), open_for: 100, half_open_probes: 1,
//!     placement: Placement::Inside });
//! assert!(b.allow(0)); b.record(0, false);
//! assert!(b.allow(0)); b.record(0, false);
//! assert_eq!(b.state(), State::Open { until: 100 });
//! assert!(!b.allow(50));
//! assert!(b.allow(100));  // half-open: one probe
//! assert!(!b.allow(100));
//! b.record(101, true);
//! assert_eq!(b.state(), State::Closed);
//! ```

use crate::engine::Nanos;
use crate::model::config::{BreakerConfig, R4jWindow, Trip};

use super::windows::{Agg, CountWindow, EpochWindow, HealthMetrics};

/// Breaker state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
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

/// Resilience4j's metrics of the current state.
#[derive(Debug, Clone)]
enum R4jMetrics {
    Count(CountWindow),
    Time(EpochWindow),
}

impl R4jMetrics {
    fn record(&mut self, now: Nanos, failed: bool, slow: bool) -> Agg {
        match self {
            R4jMetrics::Count(w) => w.record(failed, slow),
            R4jMetrics::Time(w) => w.record(now, failed, slow),
        }
    }
}

/// One instance's circuit breaker.
#[derive(Debug, Clone)]
pub struct Breaker {
    cfg: BreakerConfig,
    state: State,
    consecutive: u32,
    /// Ring of the last recorded outcomes (true = failure), for rate breakers.
    ring: Vec<bool>,
    ring_pos: usize,
    ring_len: usize,
    ring_failures: usize,
    opened: u64,
    /// Resilience4j: the metrics of the closed or half-open state.
    r4j: Option<R4jMetrics>,
    /// Polly: the health metrics.
    polly: Option<HealthMetrics>,
}

impl Breaker {
    /// A closed breaker.
    pub fn new(cfg: BreakerConfig) -> Breaker {
        let window = match cfg.trip {
            Trip::Rate { window, .. } => window as usize,
            _ => 0,
        };
        let mut b = Breaker {
            cfg,
            state: State::Closed,
            consecutive: 0,
            ring: vec![false; window],
            ring_pos: 0,
            ring_len: 0,
            ring_failures: 0,
            opened: 0,
            r4j: None,
            polly: None,
        };
        match cfg.trip {
            Trip::Resilience4j { .. } => b.r4j = Some(b.r4j_closed_metrics(0)),
            Trip::Polly { sampling, .. } => b.polly = Some(HealthMetrics::new(sampling, 0)),
            _ => {}
        }
        b
    }

    fn r4j_closed_metrics(&self, now: Nanos) -> R4jMetrics {
        match self.cfg.trip {
            Trip::Resilience4j {
                window: R4jWindow::Time(s),
                ..
            } => R4jMetrics::Time(EpochWindow::new(s, now)),
            Trip::Resilience4j {
                window: R4jWindow::Count(n),
                ..
            } => R4jMetrics::Count(CountWindow::new(n)),
            _ => R4jMetrics::Count(CountWindow::new(1)),
        }
    }

    /// Current state (without advancing time).
    pub fn state(&self) -> State {
        self.state
    }

    /// Times the breaker has opened.
    pub fn times_opened(&self) -> u64 {
        self.opened
    }

    /// Whether it refuses calls at `now`.
    pub fn is_open(&self, now: Nanos) -> bool {
        matches!(self.state, State::Open { until } if now < until)
    }

    /// Moves an expired open state to half-open. Returns true when it changed.
    pub fn tick(&mut self, now: Nanos) -> bool {
        if let State::Open { until } = self.state {
            if now >= until {
                self.state = State::HalfOpen {
                    in_flight: 0,
                    successes: 0,
                };
                if let Some(m) = &mut self.r4j {
                    // forHalfOpen: a count window of the permitted calls.
                    *m = R4jMetrics::Count(CountWindow::new(self.cfg.half_open_probes));
                }
                return true;
            }
        }
        false
    }

    /// Asks to pass one call at `now`; a half-open breaker counts it as a probe.
    pub fn allow(&mut self, now: Nanos) -> bool {
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

    fn trip(&mut self, now: Nanos) {
        // Resilience4j admits a call only strictly after the wait (`isAfter`).
        let extra = u64::from(matches!(self.cfg.trip, Trip::Resilience4j { .. }));
        self.state = State::Open {
            until: now.saturating_add(self.cfg.open_for).saturating_add(extra),
        };
        self.opened += 1;
        self.reset_counts();
    }

    fn reset_counts(&mut self) {
        self.consecutive = 0;
        self.ring_pos = 0;
        self.ring_len = 0;
        self.ring_failures = 0;
    }

    fn close(&mut self, now: Nanos) {
        self.state = State::Closed;
        self.reset_counts();
        if self.r4j.is_some() {
            self.r4j = Some(self.r4j_closed_metrics(now));
        }
        if let Some(p) = &mut self.polly {
            p.reset(now);
        }
    }

    /// Records the outcome of a call it let pass. Returns true when the breaker opened.
    pub fn record(&mut self, now: Nanos, success: bool) -> bool {
        self.record_timed(now, success, 0)
    }

    /// Records the outcome of a call it let pass that took `duration` (Resilience4j's
    /// slow calls). Returns true when the breaker opened.
    pub fn record_timed(&mut self, now: Nanos, success: bool, duration: Nanos) -> bool {
        match self.cfg.trip {
            Trip::Resilience4j {
                min_calls,
                failure_rate,
                slow_call_rate,
                slow_call_duration,
                window,
            } => {
                let slow = duration > slow_call_duration;
                self.record_r4j(
                    now,
                    !success,
                    slow,
                    min_calls,
                    failure_rate,
                    slow_call_rate,
                    window,
                )
            }
            Trip::Polly {
                min_throughput,
                failure_ratio,
                ..
            } => self.record_polly(now, success, min_throughput, failure_ratio),
            _ => self.record_classic(now, success),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn record_r4j(
        &mut self,
        now: Nanos,
        failed: bool,
        slow: bool,
        min_calls: u32,
        failure_rate: f32,
        slow_call_rate: f32,
        window: R4jWindow,
    ) -> bool {
        let half_open = matches!(self.state, State::HalfOpen { .. });
        let Some(m) = &mut self.r4j else { return false };
        // A late answer while open is recorded in metrics that are dropped unread.
        if matches!(self.state, State::Open { .. }) {
            return false;
        }
        let snap = m.record(now, failed, slow);
        let min = if half_open {
            min_calls.min(self.cfg.half_open_probes)
        } else {
            match window {
                R4jWindow::Count(n) => min_calls.min(n),
                R4jWindow::Time(_) => min_calls,
            }
        };
        if snap.calls == 0 || snap.calls < min {
            return false; // BELOW_MINIMUM_CALLS_THRESHOLD
        }
        let exceeded =
            snap.failure_rate() >= failure_rate || snap.slow_call_rate() >= slow_call_rate;
        if exceeded {
            self.trip(now);
            true
        } else {
            if half_open {
                self.close(now);
            }
            false
        }
    }

    fn record_polly(
        &mut self,
        now: Nanos,
        success: bool,
        min_throughput: u32,
        failure_ratio: f64,
    ) -> bool {
        match &mut self.state {
            State::Open { .. } => {
                // Recorded, but the metrics are reset before they are read again.
                false
            }
            State::HalfOpen { in_flight, .. } => {
                *in_flight = in_flight.saturating_sub(1);
                if success {
                    self.close(now);
                    false
                } else {
                    self.trip(now);
                    true
                }
            }
            State::Closed => {
                let Some(h) = &mut self.polly else {
                    return false;
                };
                h.increment(now, !success);
                if success {
                    return false;
                }
                let (throughput, rate) = h.health(now);
                if throughput >= min_throughput && rate >= failure_ratio {
                    self.trip(now);
                    true
                } else {
                    false
                }
            }
        }
    }

    fn record_classic(&mut self, now: Nanos, success: bool) -> bool {
        match &mut self.state {
            State::Open { .. } => false, // a late answer from before it opened
            State::HalfOpen {
                in_flight,
                successes,
            } => {
                *in_flight = in_flight.saturating_sub(1);
                if success {
                    *successes += 1;
                    if *successes >= self.cfg.half_open_probes {
                        self.state = State::Closed;
                        self.reset_counts();
                    }
                    false
                } else {
                    self.trip(now);
                    true
                }
            }
            State::Closed => match self.cfg.trip {
                Trip::Consecutive(n) => {
                    if success {
                        self.consecutive = 0;
                        false
                    } else {
                        self.consecutive += 1;
                        if self.consecutive >= n {
                            self.trip(now);
                            true
                        } else {
                            false
                        }
                    }
                }
                Trip::Rate {
                    window,
                    min_calls,
                    rate,
                } => {
                    let w = window as usize;
                    if self.ring_len == w {
                        if self.ring[self.ring_pos] {
                            self.ring_failures -= 1;
                        }
                    } else {
                        self.ring_len += 1;
                    }
                    self.ring[self.ring_pos] = !success;
                    if !success {
                        self.ring_failures += 1;
                    }
                    self.ring_pos = (self.ring_pos + 1) % w;
                    if self.ring_len >= min_calls as usize
                        && self.ring_failures as f64 >= rate * self.ring_len as f64 - 1e-9
                    {
                        self.trip(now);
                        true
                    } else {
                        false
                    }
                }
                _ => false,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::config::Placement;

    fn cfg(trip: Trip, probes: u32) -> BreakerConfig {
        BreakerConfig {
            trip,
            open_for: 1000,
            half_open_probes: probes,
            placement: Placement::Inside,
        }
    }

    #[test]
    fn consecutive_breaker_resets_on_success() {
        let mut b = Breaker::new(cfg(Trip::Consecutive(3), 1));
        for ok in [false, false, true, false, false] {
            assert!(b.allow(0));
            assert!(!b.record(0, ok));
        }
        assert!(b.record(5, false));
        assert_eq!(b.state(), State::Open { until: 1005 });
    }

    #[test]
    fn half_open_closes_after_all_probes_succeed_and_reopens_on_a_failure() {
        let mut b = Breaker::new(cfg(Trip::Consecutive(1), 2));
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
    fn rate_breaker_waits_for_min_calls_then_trips_at_the_threshold() {
        let mut b = Breaker::new(cfg(
            Trip::Rate {
                window: 10,
                min_calls: 4,
                rate: 0.5,
            },
            1,
        ));
        assert!(!b.record(0, false));
        assert!(!b.record(0, false));
        assert!(!b.record(0, false)); // 3 calls < min_calls
        assert!(b.record(0, true)); // 3/4 ≥ 0.5
    }

    #[test]
    fn rate_breaker_window_slides() {
        let mut b = Breaker::new(cfg(
            Trip::Rate {
                window: 4,
                min_calls: 4,
                rate: 0.75,
            },
            1,
        ));
        // f t t f t f : windows of 4 → [f,t,t,f]=0.5, [t,t,f,t]=0.25, [t,f,t,f]=0.5
        for ok in [false, true, true, false, true, false] {
            assert!(!b.record(0, ok));
        }
        // [f,t,f,f] = 0.75 → trips
        assert!(b.record(0, false));
    }

    #[test]
    fn late_answers_while_open_are_ignored() {
        let mut b = Breaker::new(cfg(Trip::Consecutive(1), 1));
        b.record(0, false);
        assert!(!b.record(10, true));
        assert!(b.is_open(10));
    }
}
