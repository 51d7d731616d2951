//! Adaptive LIFO ("Fail at Scale", 2015: FIFO normally, LIFO once a queue has
//! formed), switching on queue depth as happy-simulator's
//! `AdaptiveLIFO(congestion_threshold)` does: a dequeue takes the newest waiting
//! request while at least `threshold` are waiting, else the oldest. Under a storm the
//! newest request is the one whose caller is most likely still waiting.

use serde::{Deserialize, Serialize};

use super::QueuePolicyConfig;
use crate::model::field::{Ctx, R};

/// `{ kind = "adaptive_lifo", ... }` as written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Written {
    /// Waiting requests from which the newest is served first (required, at least 1).
    pub threshold: Option<u64>,
}

impl Written {
    /// The validated policy; `p` is the field path of the table.
    pub fn validate(&self, c: &Ctx, p: &str) -> R<QueuePolicyConfig> {
        let Some(t) = self.threshold else {
            return c.err(
                format!("{p}.threshold"),
                "is required for kind = \"adaptive_lifo\" (waiting requests from which the newest is served first, at least 1)",
            );
        };
        let f = format!("{p}.threshold");
        let t = c.u32_field(&f, c.at_least(&f, t, 1)?)?;
        Ok(QueuePolicyConfig::AdaptiveLifo(Config { threshold: t }))
    }
}

/// Validated settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Config {
    /// Waiting requests from which the newest is served first.
    pub threshold: u32,
}

impl Config {
    /// Whether a dequeue with `waiting` requests queued takes the newest.
    pub fn lifo(&self, waiting: usize) -> bool {
        waiting >= self.threshold as usize
    }

    /// What explain says of the policy.
    pub(super) fn describe(&self) -> String {
        format!(
            "adaptive LIFO (Fail at Scale; switching on depth as happy-simulator's AdaptiveLIFO): the oldest waiting request is served first while fewer than {} wait, the newest once {} or more do",
            self.threshold, self.threshold
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_newest_is_served_from_the_threshold_on() {
        let c = Config { threshold: 3 };
        assert!(!c.lifo(0));
        assert!(!c.lifo(2));
        assert!(c.lifo(3));
        assert!(c.lifo(1000));
        assert!(Config { threshold: 1 }.lifo(1));
    }
}
