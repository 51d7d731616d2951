//! What `retrysim explain` says of request classes: a fleet's class, a layer's retry
//! class and a tier's priority shedding.

use crate::model::text::fmt_num;

use super::{Criticality, ShedConfig, Signal};

impl Criticality {
    /// explain's line for a fleet that sets `criticality`.
    pub fn describe_fleet(self) -> String {
        format!(
            "criticality {}: its requests, and every call and attempt they cause downstream, are sent at this class",
            self.name()
        )
    }

    /// explain's line for a layer with `retry_criticality`.
    pub fn describe_retries(self) -> String {
        format!(
            "retry_criticality {}: retries (attempts after the first) and all they cause are sent at the lower of {} and the call's class",
            self.name(),
            self.name()
        )
    }
}

impl ShedConfig {
    /// explain's line for a tier's `shed_by_criticality`, with its `servers` and
    /// `queue_limit` (for the counts the fractions come to).
    pub fn describe(&self, servers: Option<u32>, queue_limit: Option<u64>) -> String {
        let (signal, of) = match self.signal {
            Signal::QueueFill => ("queue fill (queued / queue_limit)", queue_limit),
            Signal::Utilisation => (
                "utilisation (busy / servers, as the attempt arrives)",
                servers.map(u64::from),
            ),
        };
        let unit = match self.signal {
            Signal::QueueFill => "queued",
            Signal::Utilisation => "busy",
        };
        let classes: Vec<String> = Criticality::ALL
            .iter()
            .map(|&c| match (self.threshold(c), of) {
                (Some(t), Some(n)) => format!(
                    "{} from {} ({} {unit})",
                    c.name(),
                    fmt_num(t),
                    (t * n as f64).ceil() as u64
                ),
                (Some(t), None) => format!("{} from {}", c.name(), fmt_num(t)),
                (None, _) => format!("{} never", c.name()),
            })
            .collect();
        format!(
            "priority shedding by {signal}, after admission and before the queue: {}; a shed attempt is answered 503 priority_shed",
            classes.join(", ")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shedding_line_gives_each_class_its_threshold_in_attempts() {
        let s = ShedConfig {
            signal: Signal::QueueFill,
            thresholds: [0.5, 0.8, f64::INFINITY],
        };
        assert_eq!(
            s.describe(Some(4), Some(100)),
            "priority shedding by queue fill (queued / queue_limit), after admission and before the queue: sheddable from 0.5 (50 queued), sheddable_plus from 0.8 (80 queued), critical never, critical_plus never; a shed attempt is answered 503 priority_shed"
        );
    }
}
