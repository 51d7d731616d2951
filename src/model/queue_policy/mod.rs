//! Queue policies: what a tier's queue does when it is dequeued under load, beside
//! its `discipline`. A server that keeps serving requests whose callers have given
//! up sustains a storm; these policies stop that.
//! - [`codel`]: folly's CoDel, slough variant: once every request of an interval
//!   waited more than the target, requests dequeued after more than twice the target
//!   are dropped;
//! - [`codel_timeout`]: CoDel's timeout form from "Fail at Scale": a short timeout
//!   once the queue has not been empty for an interval;
//! - [`adaptive_lifo`]: serve the newest first once a queue has formed.
//!
//! A dropped request is answered as a rejection, which clients may retry. This root
//! holds the written form [`QueuePolicyFile`], the validated [`QueuePolicyConfig`] and
//! the per-tier state [`QueuePolicy`]: a few words, O(1) per dequeue.

pub(crate) mod adaptive_lifo;
pub(crate) mod codel;
pub(crate) mod codel_timeout;
pub(crate) mod record;

pub(crate) use record::Dropped;

use serde::{Deserialize, Serialize};

use crate::engine::Nanos;
use crate::model::field::{Ctx, R};

/// The policy of a tier's queue, as written: `queue_policy = { kind = "...", ... }`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum QueuePolicyFile {
    /// folly's CoDel, slough variant.
    Codel(codel::Written),
    /// CoDel's timeout form (Fail at Scale).
    CodelTimeout(codel::Written),
    /// Newest first once a queue has formed.
    AdaptiveLifo(adaptive_lifo::Written),
}

impl QueuePolicyFile {
    /// The validated policy; `p` is the field path of the table
    /// (`dependency.queue_policy`).
    pub fn validate(&self, c: &Ctx, p: &str) -> R<QueuePolicyConfig> {
        match self {
            QueuePolicyFile::Codel(w) => w.validate(c, p),
            QueuePolicyFile::CodelTimeout(w) => w.validate_timeout(c, p),
            QueuePolicyFile::AdaptiveLifo(w) => w.validate(c, p),
        }
    }
}

/// A validated queue policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueuePolicyConfig {
    /// folly's CoDel, slough variant.
    Codel(codel::Config),
    /// CoDel's timeout form.
    CodelTimeout(codel_timeout::Config),
    /// Newest first from a depth on.
    AdaptiveLifo(adaptive_lifo::Config),
}

impl QueuePolicyConfig {
    /// Its kind as written.
    pub fn kind(&self) -> &'static str {
        match self {
            QueuePolicyConfig::Codel(_) => "codel",
            QueuePolicyConfig::CodelTimeout(_) => "codel_timeout",
            QueuePolicyConfig::AdaptiveLifo(_) => "adaptive_lifo",
        }
    }

    /// Whether scenario tier `c` has a queue policy that may drop requests.
    pub fn drops_at(c: &crate::model::config::ServiceConfig) -> bool {
        c.capacity.queue_policy.is_some_and(|q| q.drops_requests())
    }

    /// Whether it may drop requests (the CoDel kinds).
    pub fn drops_requests(&self) -> bool {
        !matches!(self, QueuePolicyConfig::AdaptiveLifo(_))
    }

    /// What explain says of the policy, whose drops are answered as `rejected` (the
    /// tier's capacity refusal: `rejected`, or `overloaded` with `overloaded_status`).
    pub fn describe(&self, rejected: crate::model::outcome::Class) -> String {
        match self {
            QueuePolicyConfig::Codel(c) => c.describe(rejected.name()),
            QueuePolicyConfig::CodelTimeout(c) => c.describe(rejected.name()),
            QueuePolicyConfig::AdaptiveLifo(c) => c.describe(),
        }
    }
}

/// A tier's queue policy at run time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum QueuePolicy {
    /// folly's CoDel.
    Codel(codel::Codel),
    /// CoDel's timeout form.
    CodelTimeout(codel_timeout::Timeout),
    /// Adaptive LIFO (stateless).
    AdaptiveLifo(adaptive_lifo::Config),
}

impl QueuePolicy {
    /// The policy of an empty queue at time 0.
    pub(crate) fn new(cfg: QueuePolicyConfig) -> QueuePolicy {
        match cfg {
            QueuePolicyConfig::Codel(c) => QueuePolicy::Codel(codel::Codel::new(c)),
            QueuePolicyConfig::CodelTimeout(c) => {
                QueuePolicy::CodelTimeout(codel_timeout::Timeout::new(c))
            }
            QueuePolicyConfig::AdaptiveLifo(c) => QueuePolicy::AdaptiveLifo(c),
        }
    }

    /// Whether the next dequeue, with `waiting` requests queued, takes the newest.
    pub(crate) fn lifo(&self, waiting: usize) -> bool {
        match self {
            QueuePolicy::AdaptiveLifo(c) => c.lifo(waiting),
            _ => false,
        }
    }

    /// A request that joined the queue at `enqueued` is dequeued at `now`: whether it
    /// is dropped instead of served.
    pub(crate) fn drops(&mut self, now: Nanos, enqueued: Nanos) -> bool {
        let delay = now.saturating_sub(enqueued);
        match self {
            QueuePolicy::Codel(c) => c.drops(now, delay),
            QueuePolicy::CodelTimeout(t) => t.drops(now, delay),
            QueuePolicy::AdaptiveLifo(_) => false,
        }
    }

    /// A request joined the queue at `now`, which was empty until then.
    pub(crate) fn on_queue_formed(&mut self, now: Nanos) {
        if let QueuePolicy::CodelTimeout(t) = self {
            t.on_queue_formed(now);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::time::MILLISECOND;
    use crate::model::outcome::Class;

    fn check(s: &str) -> Result<QueuePolicyConfig, String> {
        let f: QueuePolicyFile = toml::from_str(s).map_err(|e| e.to_string())?;
        f.validate(&Ctx, "dependency.queue_policy")
            .map_err(|e| format!("{}: {}", e.field, e.message))
    }

    #[test]
    fn every_kind_reads_with_its_defaults() {
        let c = check("kind = \"codel\"").unwrap();
        assert_eq!(
            c,
            QueuePolicyConfig::Codel(codel::Config {
                target: 5 * MILLISECOND,
                interval: 100 * MILLISECOND
            })
        );
        let t = check("kind = \"codel_timeout\"\ntarget = \"10ms\"").unwrap();
        assert_eq!(
            t,
            QueuePolicyConfig::CodelTimeout(codel_timeout::Config {
                target: 10 * MILLISECOND,
                interval: 100 * MILLISECOND
            })
        );
        assert_eq!(t.kind(), "codel_timeout");
        let l = check("kind = \"adaptive_lifo\"\nthreshold = 4").unwrap();
        assert!(!l.drops_requests());
        assert!(QueuePolicy::new(l).lifo(4));
    }

    #[test]
    fn validation_errors_name_the_field_and_what_is_allowed() {
        let cases = [
            ("kind = \"codel\"\ntarget = \"0s\"", "dependency.queue_policy.target: must be a positive duration (found 0s)"),
            ("kind = \"codel\"\ntarget = \"100ms\"", "dependency.queue_policy.interval: must be longer than target 100ms, as folly's Codel requires (found 100ms)"),
            ("kind = \"codel_timeout\"\ninterval = \"1ms\"", "dependency.queue_policy.interval: must be longer than target 5ms, as folly's Codel requires (found 1ms)"),
            ("kind = \"adaptive_lifo\"", "dependency.queue_policy.threshold: is required for kind = \"adaptive_lifo\" (waiting requests from which the newest is served first, at least 1)"),
            ("kind = \"adaptive_lifo\"\nthreshold = 0", "dependency.queue_policy.threshold: must be at least 1 (found 0)"),
        ];
        for (toml, want) in cases {
            assert_eq!(check(toml).unwrap_err(), want, "{toml}");
        }
        assert!(check("kind = \"codel\"\nthreshold = 1")
            .unwrap_err()
            .contains("unknown field `threshold`"));
        assert!(check("kind = \"red\"")
            .unwrap_err()
            .contains("unknown variant `red`"));
    }

    #[test]
    fn explain_says_what_each_policy_does() {
        for (s, part) in [
            (
                "kind = \"codel\"",
                "drops the requests dequeued after waiting more than 10ms",
            ),
            (
                "kind = \"codel_timeout\"",
                "more than 5ms once the queue has not been empty for 100ms",
            ),
            (
                "kind = \"adaptive_lifo\"\nthreshold = 8",
                "the newest once 8 or more do",
            ),
        ] {
            let d = check(s).unwrap().describe(Class::Rejected);
            assert!(d.contains(part), "{d}");
        }
        let overloaded = check("kind = \"codel\"")
            .unwrap()
            .describe(Class::Overloaded);
        assert!(
            overloaded.contains("(answered as overloaded)"),
            "a tier with overloaded_status answers its drops overloaded: {overloaded}"
        );
    }

    #[test]
    fn the_timeout_variant_learns_when_the_queue_formed() {
        let ms = MILLISECOND;
        let mut q = QueuePolicy::new(check("kind = \"codel_timeout\"").unwrap());
        q.on_queue_formed(100 * ms);
        assert!(
            !q.drops(150 * ms, 100 * ms),
            "no standing queue: 100ms timeout"
        );
        assert!(
            q.drops(201 * ms, 195 * ms),
            "standing since 100ms: 5ms timeout"
        );
        assert!(!q.lifo(100));
    }

    #[test]
    fn the_schema_gives_the_codel_defaults() {
        let schema = serde_json::to_string(&schemars::schema_for!(QueuePolicyFile)).unwrap();
        assert!(schema.contains("\"default\":\"5ms\""), "{schema}");
        assert!(schema.contains("\"default\":\"100ms\""), "{schema}");
    }
}

/// The examples of this file's docs, as unit tests (the module is the crate's own,
/// so rustdoc cannot run them).
#[cfg(test)]
mod doc_examples {
    #[test]
    fn queue_policy_example() {
        use crate::model::queue_policy::{codel, QueuePolicy, QueuePolicyConfig};
        let ms = 1_000_000;
        let mut q = QueuePolicy::new(QueuePolicyConfig::Codel(codel::Config {
            target: 5 * ms,
            interval: 100 * ms,
        }));
        assert!(!q.drops(ms, 0)); // waited 1ms: the first is always served
        assert!(!q.drops(20 * ms, 8 * ms)); // a new interval: minDelay 1ms, not overloaded
        assert!(!q.drops(30 * ms, 10 * ms)); // waited 20ms, but no standing queue yet
        assert!(!q.drops(130 * ms, 100 * ms)); // interval ends: every wait > 5ms, overloaded
        assert!(q.drops(140 * ms, 120 * ms)); // waited 20ms > 2·target: dropped
        assert!(!q.lifo(1000));
    }
}
