//! Rules of the `[dependency]` table: a server pool with its queue, or an
//! optimistic-concurrency record.

use crate::model::dist::Dist;

use super::*;
use crate::model::field::{Ctx, R};
use crate::model::queue_policy::QueuePolicyConfig;

pub(super) fn validate_dependency(c: &Ctx, d: &DependencyFile) -> R<DependencyConfig> {
    validate_capacity(c, "dependency", d)
}

/// The capacity keys of the table at `p` (`dependency` or `services[i]`).
pub(super) fn validate_capacity(c: &Ctx, p: &str, d: &DependencyFile) -> R<DependencyConfig> {
    if d.kind == Some(DependencyKind::Occ) {
        return validate_occ(c, d);
    }
    let Some(servers) = d.servers else {
        return c.err(
            format!("{p}.servers"),
            "is required for a queueing dependency (a count or \"unlimited\")",
        );
    };
    let Some(service_time) = &d.service_time else {
        return c.err(
            format!("{p}.service_time"),
            "is required for a queueing dependency",
        );
    };
    let servers = match servers {
        Limit::Unlimited => None,
        Limit::Finite(n) => {
            let n = c.at_least(&format!("{p}.servers"), n, 1)?;
            if n > 10_000_000 {
                return c.err(
                    format!("{p}.servers"),
                    format!("must be at most 10000000 or \"unlimited\" (found {n})"),
                );
            }
            Some(n as u32)
        }
    };
    let queue_limit = match d.queue_limit {
        None | Some(Limit::Unlimited) => None,
        Some(Limit::Finite(n)) => Some(n),
    };
    let reject_status = d
        .reject_status
        .unwrap_or(crate::model::config::DEFAULT_REJECT_STATUS);
    if reject_status != 503 && reject_status != 429 {
        return c.err(
            format!("{p}.reject_status"),
            format!("must be 503 or 429 (found {reject_status})"),
        );
    }
    let discipline = d.discipline.unwrap_or_default();
    let service_time = c.dist(&format!("{p}.service_time"), &service_time.0)?;
    if service_time.mean_ns() <= 0.0 {
        return c.err(format!("{p}.service_time"), "must have a positive mean");
    }
    Ok(DependencyConfig {
        kind: DependencyKind::Queue,
        servers,
        queue_limit,
        reject_status,
        retry_after: d.retry_after.map(|r| r.0),
        service_time,
        per_concurrent: d
            .per_concurrent
            .map_or(crate::model::config::DEFAULT_PER_CONCURRENT, |p| p.0),
        discipline,
        drop_expired: d
            .drop_expired
            .unwrap_or(crate::model::config::DEFAULT_DROP_EXPIRED),
        error_rate: c.probability(
            &format!("{p}.error_rate"),
            d.error_rate
                .unwrap_or(crate::model::config::DEFAULT_ERROR_RATE),
        )?,
        admission: match &d.admission {
            Some(a) => Some(a.validate(c, &format!("{p}.admission"))?),
            None => None,
        },
        reject_cost: d
            .reject_cost
            .map_or(crate::model::config::DEFAULT_REJECT_COST, |r| r.0),
        shed_by_criticality: match &d.shed_by_criticality {
            Some(s) => {
                let tier = crate::model::criticality::Tier {
                    servers: servers.is_some(),
                    queue_limit: queue_limit.is_some_and(|q| q >= 1),
                };
                Some(s.validate(c, p, tier)?)
            }
            None => None,
        },
        queue_policy: queue_policy(c, p, d)?,
        concurrency_limit: concurrency_limit(c, p, d)?,
    })
}

/// The tier's `queue_policy`, checked against its `discipline`: adaptive LIFO
/// chooses the end itself, so it cannot be written with `discipline = "lifo"`; the
/// CoDel kinds judge whichever attempt the discipline dequeues.
fn queue_policy(c: &Ctx, p: &str, d: &DependencyFile) -> R<Option<QueuePolicyConfig>> {
    let Some(q) = &d.queue_policy else {
        return Ok(None);
    };
    let q = q.validate(c, &format!("{p}.queue_policy"))?;
    if matches!(q, QueuePolicyConfig::AdaptiveLifo(_)) && d.discipline == Some(Discipline::Lifo) {
        return c.err(
            format!("{p}.discipline"),
            "must be \"fifo\" or left out with queue_policy kind = \"adaptive_lifo\", which serves the oldest first below its threshold and the newest from it on (found \"lifo\")",
        );
    }
    Ok(Some(q))
}

/// The tier's `concurrency_limit`, whose refusals are `rate_limited` as the
/// `admission` limiter's are: with both, they must answer with the same status.
fn concurrency_limit(
    c: &Ctx,
    p: &str,
    d: &DependencyFile,
) -> R<Option<crate::model::concurrency::ConcurrencyLimitConfig>> {
    use crate::model::concurrency::Rejected;
    let Some(l) = &d.concurrency_limit else {
        return Ok(None);
    };
    let lp = format!("{p}.concurrency_limit");
    let cfg = l.validate(c, &lp)?;
    if let Some(a) = &d.admission {
        let a = a.validate(c, &format!("{p}.admission"))?.status();
        let status = match cfg.status() {
            Rejected::Status(s) => s.to_string(),
            Rejected::Unavailable => "\"unavailable\"".to_string(),
        };
        if cfg.status() != Rejected::Status(a) {
            return c.err(
                format!("{lp}.status"),
                format!("must be admission's status {a}: both refusals are answered rate_limited (found {status})"),
            );
        }
    }
    Ok(Some(cfg))
}

/// An optimistic-concurrency record: no servers, no queue, no service time; the time
/// an attempt takes is its four network legs.
pub(super) fn validate_occ(c: &Ctx, d: &DependencyFile) -> R<DependencyConfig> {
    let queue_only = [
        ("servers", d.servers.is_some()),
        ("queue_limit", d.queue_limit.is_some()),
        ("reject_status", d.reject_status.is_some()),
        ("retry_after", d.retry_after.is_some()),
        ("service_time", d.service_time.is_some()),
        ("per_concurrent", d.per_concurrent.is_some()),
        ("discipline", d.discipline.is_some()),
        ("drop_expired", d.drop_expired.is_some()),
        ("error_rate", d.error_rate.is_some()),
        ("admission", d.admission.is_some()),
        ("reject_cost", d.reject_cost.is_some()),
        ("shed_by_criticality", d.shed_by_criticality.is_some()),
        ("queue_policy", d.queue_policy.is_some()),
        ("concurrency_limit", d.concurrency_limit.is_some()),
    ];
    if let Some((k, _)) = queue_only.iter().find(|(_, set)| *set) {
        return c.err(
            format!("dependency.{k}"),
            "applies only to kind = \"queue\", not \"occ\"",
        );
    }
    Ok(DependencyConfig {
        kind: DependencyKind::Occ,
        servers: None,
        queue_limit: None,
        reject_status: 503,
        retry_after: None,
        service_time: Dist::Deterministic(0),
        per_concurrent: 0,
        discipline: Discipline::Fifo,
        drop_expired: false,
        error_rate: 0.0,
        admission: None,
        reject_cost: 0,
        shed_by_criticality: None,
        queue_policy: None,
        concurrency_limit: None,
    })
}
