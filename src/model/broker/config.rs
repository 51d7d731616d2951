//! A queue fleet's broker as validated.

use crate::engine::Nanos;

/// The broker side of a queue fleet: consumers, visibility, redelivery and the
/// dead-letter queue (see `model::broker`).
#[derive(Debug, Clone, PartialEq)]
pub struct QueueConfig {
    /// Concurrent handlers (the fleet's clients).
    pub consumers: u64,
    /// A received message reappears after this long unless its handler succeeded.
    pub visibility_timeout: Nanos,
    /// Receives before a message goes to the dead-letter queue (`None`: never).
    pub max_receive_count: Option<u32>,
    /// Extra delay before a failed (or timed-out) message is visible again.
    pub redelivery_delay: Nanos,
    /// Fraction of messages whose handling always fails.
    pub poison: f64,
}
