//! What `retrysim explain` says of a queue fleet's broker.

use crate::model::bound::Bound;
use crate::model::text::{fmt_count, fmt_num, fmt_time};

use super::config::QueueConfig;

/// A queue fleet's broker in numbers.
#[derive(Debug, Clone, PartialEq)]
pub struct QueueExplanation {
    /// Its settings.
    pub config: QueueConfig,
    /// The longest a handler can run (`explain::lint::handler_worst_case`).
    pub handler_worst_case: Bound,
    /// Dependency attempts per message when every attempt fails: the handler's
    /// worst-case attempts × `max_receive_count`.
    pub attempts_per_message: Bound,
}

impl QueueExplanation {
    /// The broker in numbers, for a handler that runs at most `handler_worst_case`
    /// and makes at most `handler_attempts` dependency attempts.
    pub fn new(q: &QueueConfig, handler_worst_case: Bound, handler_attempts: Bound) -> Self {
        QueueExplanation {
            config: q.clone(),
            handler_worst_case,
            attempts_per_message: handler_attempts
                * q.max_receive_count
                    .map_or(Bound::Unbounded, |n| Bound::Finite(u64::from(n))),
        }
    }

    /// explain's lines for the broker: its settings, the handler's worst case and the
    /// attempts per message when everything fails.
    pub fn lines(&self) -> [String; 2] {
        let c = &self.config;
        let receives = match c.max_receive_count {
            Some(n) => format!("up to {n} receives, then the dead-letter queue"),
            None => "unlimited receives (no dead-letter queue)".to_string(),
        };
        let poison = if c.poison > 0.0 {
            format!(", {}% poison", fmt_num(c.poison * 100.0))
        } else {
            String::new()
        };
        [
            format!(
                "queue: arrivals are published messages, handled by the consumers; visibility timeout {}, {receives}, redelivery delay {}{poison}",
                fmt_time(c.visibility_timeout),
                fmt_time(c.redelivery_delay)
            ),
            format!(
                "a handler runs at most {}; if every attempt fails: {} attempts per message",
                match self.handler_worst_case {
                    Bound::Finite(n) => fmt_time(n),
                    Bound::Unbounded => "without bound".to_string(),
                },
                fmt_count(self.attempts_per_message)
            ),
        ]
    }
}
