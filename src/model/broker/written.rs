//! A queue fleet as written: its arrival `{ kind = "queue", rate, publish, at, count }`
//! ([`Written`]) and the fleet keys only a queue fleet may have (`consumers`,
//! `visibility_timeout`, `max_receive_count`, `redelivery_delay`, `poison`), which
//! sit flat in the fleet's table and reach the rules as [`Keys`]. Defaults: publish
//! `"poisson"`, visibility timeout 30s ([`DEFAULT_VISIBILITY_TIMEOUT`]), unlimited
//! receives, no redelivery delay, no poison.

use serde::{Deserialize, Serialize};

use crate::engine::time::SECOND;
use crate::engine::Nanos;
use crate::model::field::{Dur, Limit};

/// Default `visibility_timeout` (Amazon SQS's default).
pub(crate) const DEFAULT_VISIBILITY_TIMEOUT: Nanos = 30 * SECOND;

/// Extra delay before a failed message is visible again when `redelivery_delay` is
/// not written: none.
pub(crate) const DEFAULT_REDELIVERY_DELAY: Nanos = 0;

/// Fraction of poison messages when `poison` is not written: none.
pub(crate) const DEFAULT_POISON: f64 = 0.0;

/// `arrival = { kind = "queue", ... }` as written: a message queue the fleet
/// consumes, messages published by an open process (`publish`), each handled by one
/// of the fleet's `consumers`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Written {
    /// Messages published per second (poisson and constant publishing).
    pub rate: Option<f64>,
    /// `"poisson"` (default), `"constant"` or `"burst"` (`count` messages at `at`).
    #[schemars(extend("default" = crate::model::field::default_of::<PublishKind>()))]
    pub publish: Option<PublishKind>,
    /// Burst publishing: when.
    pub at: Option<Dur>,
    /// Burst publishing: how many.
    pub count: Option<u64>,
}

/// The publish process of a queue fleet, one of the open arrival kinds.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum PublishKind {
    /// Exponential gaps at `rate`.
    #[default]
    Poisson,
    /// Evenly spaced at `rate`.
    Constant,
    /// `count` messages at `at`.
    Burst,
}

/// What the broker's rules read of a fleet as written: its queue arrival, if it has
/// one, and its queue-only keys.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Keys<'a> {
    /// The arrival, when its kind is `"queue"`.
    pub arrival: Option<&'a Written>,
    /// Concurrent handlers.
    pub consumers: Option<u64>,
    /// A received message reappears after this (default 30s).
    pub visibility_timeout: Option<Dur>,
    /// Receives before the dead-letter queue (default unlimited).
    pub max_receive_count: Option<Limit>,
    /// Extra delay before a failed message is visible again (default 0s).
    pub redelivery_delay: Option<Dur>,
    /// Fraction of messages whose handling always fails (default 0).
    pub poison: Option<f64>,
}
