//! Facebook's CoDel for request queues, folly's slough variant (`facebook/folly`
//! `folly/executors/Codel.cpp` at 1ad98e2, `Codel.h` at 0deef03), as its code does
//! it. Defaults are its flags: `codel_target_delay = 5ms`, `codel_interval = 100ms`.
//!
//! ```text
//! on dequeue of a request that waited d, at now (intervalEnd = 0, reset = true at start):
//!   if now > intervalEnd and not reset:      # once per interval
//!       reset = true; intervalEnd = now + interval
//!       overloaded = (minDelay > target)
//!   if reset: reset = false; minDelay = d; serve    # the first after a reset is never dropped
//!   minDelay = min(minDelay, d)
//!   drop iff overloaded and d > 2·target              # the slough timeout
//! ```
//!
//! So once every request of an interval waited more than `target`, the next interval
//! sloughs the requests that waited more than twice the target; a dropped request is
//! answered as a rejection. `load() = min(100, 100·minDelay / (2·target))`.

use serde::{Deserialize, Serialize};

use super::QueuePolicyConfig;
use crate::engine::time::MILLISECOND;
use crate::engine::Nanos;
use crate::model::field::{duration_text, Ctx, Dur, R};
use crate::model::text::fmt_time;

/// Default target queueing delay (`codel_target_delay`).
pub(crate) const DEFAULT_TARGET: Nanos = 5 * MILLISECOND;
/// Default interval (`codel_interval`).
pub(crate) const DEFAULT_INTERVAL: Nanos = 100 * MILLISECOND;

/// `{ kind = "codel", ... }` and `{ kind = "codel_timeout", ... }` as written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Written {
    /// Target queueing delay.
    #[schemars(extend("default" = duration_text(DEFAULT_TARGET)))]
    pub target: Option<Dur>,
    /// Interval (longer than the target).
    #[schemars(extend("default" = duration_text(DEFAULT_INTERVAL)))]
    pub interval: Option<Dur>,
}

impl Written {
    /// The validated `(target, interval)`; `p` is the field path of the table.
    pub(super) fn times(&self, c: &Ctx, p: &str) -> R<(Nanos, Nanos)> {
        let target = match self.target {
            Some(t) => c.positive_dur(&format!("{p}.target"), t)?,
            None => DEFAULT_TARGET,
        };
        let interval = match self.interval {
            Some(i) => c.positive_dur(&format!("{p}.interval"), i)?,
            None => DEFAULT_INTERVAL,
        };
        if interval <= target {
            return c.err(
                format!("{p}.interval"),
                format!(
                    "must be longer than target {}, as folly's Codel requires (found {})",
                    fmt_time(target),
                    fmt_time(interval)
                ),
            );
        }
        Ok((target, interval))
    }

    /// The validated slough variant; `p` is the field path of the table.
    pub fn validate(&self, c: &Ctx, p: &str) -> R<QueuePolicyConfig> {
        let (target, interval) = self.times(c, p)?;
        Ok(QueuePolicyConfig::Codel(Config { target, interval }))
    }
}

/// Validated settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Config {
    /// Target queueing delay (ns).
    pub target: Nanos,
    /// Interval (ns).
    pub interval: Nanos,
}

impl Config {
    /// The slough timeout, `2·target`.
    pub fn slough_timeout(&self) -> Nanos {
        2 * self.target
    }

    /// What explain says of the policy.
    pub(super) fn describe(&self, rejected: &str) -> String {
        format!(
            "CoDel (folly's slough variant, 1ad98e2): once every request dequeued in an interval of {} waited more than {}, the next interval drops the requests dequeued after waiting more than {} (answered as {rejected}), the first request after each interval reset excepted",
            fmt_time(self.interval),
            fmt_time(self.target),
            fmt_time(self.slough_timeout()),
        )
    }
}

/// Codel's state: a few words, O(1) per dequeue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Codel {
    cfg: Config,
    min_delay: Nanos,
    interval_end: Nanos,
    reset: bool,
    overloaded: bool,
}

impl Codel {
    /// The state at time 0 (folly's constructor: interval end now, reset pending).
    pub(crate) fn new(cfg: Config) -> Codel {
        Codel {
            cfg,
            min_delay: 0,
            interval_end: 0,
            reset: true,
            overloaded: false,
        }
    }

    /// A request that waited `delay` is dequeued at `now`: whether it is dropped
    /// (folly's `overloaded_explicit_now`).
    pub(crate) fn drops(&mut self, now: Nanos, delay: Nanos) -> bool {
        if now > self.interval_end && !self.reset {
            self.reset = true;
            self.interval_end = now + self.cfg.interval;
            self.overloaded = self.min_delay > self.cfg.target;
        }
        if self.reset {
            self.reset = false;
            self.min_delay = delay;
            return false;
        }
        if delay < self.min_delay {
            self.min_delay = delay;
        }
        self.overloaded && delay > self.cfg.slough_timeout()
    }

    /// Whether the last interval judged the queue overloaded.
    #[cfg(test)]
    pub(crate) fn overloaded(&self) -> bool {
        self.overloaded
    }

    /// folly's `getLoad()`: `min(100, 100·minDelay / (2·target))`, integer.
    #[cfg(test)]
    pub(crate) fn load(&self) -> u64 {
        (100 * self.min_delay / self.cfg.slough_timeout()).min(100)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Nanos = MILLISECOND;

    fn codel() -> Codel {
        Codel::new(Config {
            target: DEFAULT_TARGET,
            interval: DEFAULT_INTERVAL,
        })
    }

    /// Vector VA9 of ADMISSION.md §14 (folly `Codel.cpp`): target 5ms, interval
    /// 100ms; an interval whose every dequeue waited more than 5ms makes the next
    /// interval drop the requests that waited more than 10ms and serve those at most
    /// 10ms; the first request after each interval reset is never dropped.
    #[test]
    fn folly_codel_interval_rule_is_replayed_decision_for_decision() {
        let mut c = codel();
        // t = 1ms: reset pending from construction: served, minDelay = 6ms.
        assert!(!c.drops(MS, 6 * MS));
        // t = 2ms > intervalEnd 0: a new interval (end 102ms) judged on minDelay 6ms
        // (> 5ms: overloaded); this first request of it is served whatever its wait.
        assert!(!c.drops(2 * MS, 50 * MS));
        assert!(c.overloaded());
        // within the interval: > 10ms dropped, ≤ 10ms served
        assert!(c.drops(10 * MS, 11 * MS));
        assert!(!c.drops(20 * MS, 10 * MS));
        assert!(!c.drops(30 * MS, 7 * MS));
        assert!(c.drops(50 * MS, 30 * MS));
        // every wait of this interval > 5ms (minDelay 7ms): at 103ms the next
        // interval stays overloaded; its first request is served
        assert!(!c.drops(103 * MS, 40 * MS));
        assert!(c.overloaded());
        assert!(c.drops(110 * MS, 40 * MS));
        // one wait of 3ms: the interval after this one is not overloaded
        assert!(!c.drops(150 * MS, 3 * MS));
        assert!(!c.drops(204 * MS, 40 * MS)); // reset: served
        assert!(!c.overloaded());
        assert!(!c.drops(210 * MS, 40 * MS), "not overloaded: served");
        assert_eq!(c.load(), 100);
    }

    #[test]
    fn the_interval_ends_strictly_after_its_end_and_a_wait_of_twice_the_target_is_served() {
        let mut c = codel();
        assert!(!c.drops(MS, 20 * MS));
        assert!(!c.drops(2 * MS, 20 * MS)); // interval to 102ms, overloaded
        assert!(!c.drops(3 * MS, 10 * MS), "exactly 2·target is served");
        assert!(c.drops(102 * MS, 11 * MS), "102ms is not after the end");
        assert!(!c.drops(102 * MS + 1, 11 * MS), "a reset");
        assert_eq!(c.load(), 100);
    }

    #[test]
    fn the_load_is_the_min_delay_over_the_slough_timeout_in_percent() {
        let mut c = codel();
        c.drops(MS, 3 * MS);
        assert_eq!(c.load(), 30);
    }
}
