//! CoDel's timeout form from "Fail at Scale" (Ben Maurer, ACM Queue 13(8), 2015,
//! queue.acm.org/detail.cfm?id=2839461): a request dequeued after waiting longer than
//! the timeout is dropped, the timeout short once the queue has not been empty for an
//! interval:
//!
//! ```text
//! on dequeue of a request that waited d, at now:
//!   timeout = target   if lastEmptyTime < now − interval     # a standing queue
//!             interval otherwise
//!   drop iff d > timeout
//! ```
//!
//! With the article's numbers, `target = 5ms` (M) and `interval = 100ms` (N; its
//! pseudocode writes "N seconds", its text 100ms). The queue counts as empty at time 0
//! and at each instant a request joins an empty queue (it was empty until then).

use super::codel::Written;
use super::QueuePolicyConfig;
use crate::engine::Nanos;
use crate::model::field::{Ctx, R};
use crate::model::text::fmt_time;

impl Written {
    /// The validated timeout variant; `p` is the field path of the table.
    pub fn validate_timeout(&self, c: &Ctx, p: &str) -> R<QueuePolicyConfig> {
        let (target, interval) = self.times(c, p)?;
        Ok(QueuePolicyConfig::CodelTimeout(Config { target, interval }))
    }
}

/// Validated settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Config {
    /// The short timeout, M (ns).
    pub target: Nanos,
    /// The long timeout and the standing-queue interval, N (ns).
    pub interval: Nanos,
}

impl Config {
    /// What explain says of the policy.
    pub(super) fn describe(&self, rejected: &str) -> String {
        format!(
            "CoDel timeout (Fail at Scale, 2015): a request dequeued after waiting more than {} is dropped (answered as {rejected}), or more than {} once the queue has not been empty for {}",
            fmt_time(self.interval),
            fmt_time(self.target),
            fmt_time(self.interval),
        )
    }
}

/// The timeout variant's state: the last time the queue was empty.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Timeout {
    cfg: Config,
    last_empty: Nanos,
}

impl Timeout {
    /// An empty queue at time 0.
    pub(crate) fn new(cfg: Config) -> Timeout {
        Timeout { cfg, last_empty: 0 }
    }

    /// A request joined the queue at `now`, which was empty until then.
    pub(crate) fn on_queue_formed(&mut self, now: Nanos) {
        self.last_empty = now;
    }

    /// The timeout a request dequeued at `now` is held to.
    pub(crate) fn timeout(&self, now: Nanos) -> Nanos {
        match now.checked_sub(self.cfg.interval) {
            Some(t) if self.last_empty < t => self.cfg.target,
            _ => self.cfg.interval,
        }
    }

    /// A request that waited `delay` is dequeued at `now`: whether it is dropped.
    pub(crate) fn drops(&self, now: Nanos, delay: Nanos) -> bool {
        delay > self.timeout(now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::time::MILLISECOND;

    const MS: Nanos = MILLISECOND;

    #[test]
    fn the_timeout_is_short_only_once_the_queue_has_stood_for_an_interval() {
        let mut t = Timeout::new(Config {
            target: 5 * MS,
            interval: 100 * MS,
        });
        assert!(!t.drops(50 * MS, 50 * MS));
        assert!(
            !t.drops(100 * MS, 100 * MS),
            "last empty 0 is not before 100 − 100"
        );
        assert!(t.drops(100 * MS, 100 * MS + 1));
        assert!(
            t.drops(101 * MS, 6 * MS),
            "empty last at 0 < 1ms: timeout 5ms"
        );
        assert!(!t.drops(101 * MS, 5 * MS));
        t.on_queue_formed(150 * MS);
        assert_eq!(t.timeout(200 * MS), 100 * MS);
        assert_eq!(t.timeout(250 * MS), 100 * MS);
        assert_eq!(t.timeout(250 * MS + 1), 5 * MS);
    }
}
