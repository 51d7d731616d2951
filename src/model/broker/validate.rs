//! Rules of a queue fleet (`arrival = { kind = "queue", ... }`) and of the fleet keys
//! only a queue fleet may have: `consumers`, `visibility_timeout`,
//! `max_receive_count`, `redelivery_delay`, `poison`; and its rule with the
//! dependency (a queue fleet needs a queueing one).

use crate::engine::time::format;
use crate::model::attempts::MAX_ATTEMPTS_CAP;
use crate::model::config::{Arrival, MAX_HORIZON};
use crate::model::field::{Ctx, Limit, R};

use super::config::QueueConfig;
use super::{Keys, PublishKind, Written, DEFAULT_VISIBILITY_TIMEOUT};

/// Most consumers of one queue fleet.
pub(crate) const MAX_CONSUMERS: u64 = 1_000_000;

/// The publish process and broker settings of fleet `p` when its arrival is a queue
/// (`None` otherwise, after checking that no queue-only key is set).
pub(crate) fn validate(c: &Ctx, p: &str, f: &Keys) -> R<Option<(Arrival, u64, QueueConfig)>> {
    let Some(Written {
        rate,
        publish,
        at,
        count,
    }) = f.arrival
    else {
        let set = [
            ("consumers", f.consumers.is_some()),
            ("visibility_timeout", f.visibility_timeout.is_some()),
            ("max_receive_count", f.max_receive_count.is_some()),
            ("redelivery_delay", f.redelivery_delay.is_some()),
            ("poison", f.poison.is_some()),
        ];
        if let Some((key, _)) = set.iter().find(|(_, on)| *on) {
            return c.err(
                format!("{p}.{key}"),
                "is a setting of a queue fleet only: set `arrival = { kind = \"queue\", rate = ... }` or remove it",
            );
        }
        return Ok(None);
    };
    let a = format!("{p}.arrival");
    let publish = publish.unwrap_or_default();
    let arrival = match publish {
        PublishKind::Poisson | PublishKind::Constant => {
            for (key, on) in [("at", at.is_some()), ("count", count.is_some())] {
                if on {
                    return c.err(format!("{a}.{key}"), "applies only to publish = \"burst\"");
                }
            }
            let Some(rate) = rate else {
                return c.err(
                    format!("{a}.rate"),
                    "is required: messages published per second",
                );
            };
            let rate = c.positive(&format!("{a}.rate"), *rate)?;
            if rate > 1e8 {
                return c.err(
                    format!("{a}.rate"),
                    format!("must be at most 1e8 per second (found {rate})"),
                );
            }
            if publish == PublishKind::Poisson {
                Arrival::Poisson { rate }
            } else {
                Arrival::Constant { rate }
            }
        }
        PublishKind::Burst => {
            if rate.is_some() {
                return c.err(
                    format!("{a}.rate"),
                    "does not apply to publish = \"burst\" (it publishes `count` messages at `at`)",
                );
            }
            let (Some(at), Some(count)) = (at, count) else {
                return c.err(
                    format!("{a}.{}", if at.is_none() { "at" } else { "count" }),
                    "is required with publish = \"burst\": `count` messages published at `at`",
                );
            };
            let count = c.at_least(&format!("{a}.count"), *count, 1)?;
            if count > 100_000_000 {
                return c.err(
                    format!("{a}.count"),
                    format!("must be at most 100000000 (found {count})"),
                );
            }
            Arrival::Burst { at: at.0, count }
        }
    };
    let Some(consumers) = f.consumers else {
        return c.err(
            format!("{p}.consumers"),
            "is required for a queue fleet: how many handlers run at once",
        );
    };
    let consumers = c.at_least(&format!("{p}.consumers"), consumers, 1)?;
    if consumers > MAX_CONSUMERS {
        return c.err(
            format!("{p}.consumers"),
            format!("must be at most {MAX_CONSUMERS} (found {consumers})"),
        );
    }
    let visibility_timeout = match f.visibility_timeout {
        Some(v) => c.positive_dur(&format!("{p}.visibility_timeout"), v)?,
        None => DEFAULT_VISIBILITY_TIMEOUT,
    };
    if visibility_timeout > MAX_HORIZON {
        return c.err(
            format!("{p}.visibility_timeout"),
            format!(
                "must be at most {} (found {})",
                format(MAX_HORIZON),
                format(visibility_timeout)
            ),
        );
    }
    let max_receive_count = match f.max_receive_count {
        None | Some(Limit::Unlimited) => None,
        Some(Limit::Finite(n)) => {
            let field = format!("{p}.max_receive_count");
            let n = c.at_least(&field, n, 1)?;
            if n > MAX_ATTEMPTS_CAP {
                return c.err(
                    field,
                    format!("must be at most {MAX_ATTEMPTS_CAP} or \"unlimited\" (found {n})"),
                );
            }
            Some(n as u32)
        }
    };
    let redelivery_delay = f
        .redelivery_delay
        .map_or(super::DEFAULT_REDELIVERY_DELAY, |d| d.0);
    if redelivery_delay > MAX_HORIZON {
        return c.err(
            format!("{p}.redelivery_delay"),
            format!(
                "must be at most {} (found {})",
                format(MAX_HORIZON),
                format(redelivery_delay)
            ),
        );
    }
    let poison = c.probability(
        &format!("{p}.poison"),
        f.poison.unwrap_or(super::DEFAULT_POISON),
    )?;
    Ok(Some((
        arrival,
        consumers,
        QueueConfig {
            consumers,
            visibility_timeout,
            max_receive_count,
            redelivery_delay,
            poison,
        },
    )))
}

/// The broker's rule for the dependency of queue fleet `i`: it must queue, as an
/// optimistic-concurrency record (`occ`) has no servers to consume with.
pub(crate) fn check_dependency(c: &Ctx, i: usize, occ: bool) -> R<()> {
    if occ {
        return c.err(
            format!("fleets[{i}].arrival.kind"),
            "\"queue\" needs a queueing dependency, not kind = \"occ\"",
        );
    }
    Ok(())
}
