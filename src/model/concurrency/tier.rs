//! A tier's concurrency limit in a run: the limit, its random stream, what each
//! admitted attempt's sample needs (when it arrived and how many were in flight) and
//! the time of the timer event it has pending (Envoy's).
//!
//! In flight at a tier means in service (a server or thread busy on it, a rejection's
//! `reject_cost` included) or waiting in its queue, as Netflix's limiter counts the
//! requests inside a server. An attempt arriving with `limit` in flight is refused.
//! Each attempt the limit let through and the tier then finished gives a sample: its
//! time at the tier (arrival to answer), the in-flight count on arrival (itself
//! included), and whether it was dropped: its answer found nobody waiting (the
//! caller's attempt timed out or was cancelled, its deadline passed), or the tier
//! dropped it from its queue for that. Memory: two words per node the run uses.

use rand_chacha::ChaCha8Rng;

use super::{ConcurrencyLimit, ConcurrencyLimitConfig};
use crate::engine::Nanos;

/// A tier's limit and what its samples need.
#[derive(Debug, Clone)]
pub(crate) struct TierLimit {
    limit: ConcurrencyLimit,
    rng: ChaCha8Rng,
    /// Per node: (arrival at the tier, in flight then, itself included).
    starts: Vec<(Nanos, u32)>,
    /// The time of the timer event pending, if any.
    tick: Option<Nanos>,
}

impl TierLimit {
    /// The limit at time 0, drawing from `rng` (the tier's `concurrency_limit` stream).
    pub(crate) fn new(cfg: ConcurrencyLimitConfig, mut rng: ChaCha8Rng) -> TierLimit {
        TierLimit {
            limit: ConcurrencyLimit::new(cfg, &mut rng),
            rng,
            starts: Vec::new(),
            tick: None,
        }
    }

    /// The current limit.
    pub(crate) fn limit(&self) -> u32 {
        self.limit.limit()
    }

    /// An attempt at `node` arrives at `now` with `inflight` in flight (itself not
    /// counted): whether it is let through; if so it is stamped for its sample.
    pub(crate) fn arrive(&mut self, node: u32, now: Nanos, inflight: u32) -> bool {
        if !self.limit.admits(inflight) {
            return false;
        }
        let i = node as usize;
        if i >= self.starts.len() {
            self.starts.resize(i + 1, (0, 0));
        }
        self.starts[i] = (now, inflight.saturating_add(1));
        true
    }

    /// The attempt at `node`, let through, is finished at `now`: its sample.
    pub(crate) fn finish(&mut self, node: u32, now: Nanos, dropped: bool) {
        let (start, inflight) = self.starts[node as usize];
        self.limit.on_sample(
            start,
            now.saturating_sub(start),
            inflight,
            dropped,
            &mut self.rng,
        );
    }

    /// The time (`now` at the earliest) of a timer event to schedule, if the limit
    /// needs one it has not got pending (then it is pending).
    pub(crate) fn tick_to_schedule(&mut self, now: Nanos) -> Option<Nanos> {
        let t = self.limit.next_tick()?.max(now);
        if self.tick == Some(t) {
            return None;
        }
        self.tick = Some(t);
        Some(t)
    }

    /// A timer event at `now`: fires the timers due if it is the pending one (a stale
    /// event, superseded, does nothing); whether it fired.
    pub(crate) fn on_tick(&mut self, now: Nanos) -> bool {
        if self.tick != Some(now) {
            return false;
        }
        self.tick = None;
        self.limit.on_tick(now);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::concurrency::fixed;
    use rand::SeedableRng;

    #[test]
    fn a_fixed_limit_lets_through_below_it_and_stamps_what_it_lets_through() {
        let cfg = ConcurrencyLimitConfig::Fixed(fixed::Config {
            limit: 2,
            status: crate::model::concurrency::Rejected::Status(503),
        });
        let mut t = TierLimit::new(cfg, ChaCha8Rng::seed_from_u64(1));
        assert!(t.arrive(4, 10, 0));
        assert!(t.arrive(1, 11, 1));
        assert!(!t.arrive(2, 12, 2));
        assert_eq!(t.starts[4], (10, 1));
        assert_eq!(t.starts[1], (11, 2));
        t.finish(4, 30, false);
        assert_eq!(t.tick_to_schedule(30), None);
    }
}
