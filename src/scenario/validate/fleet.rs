//! Rules of a `[[fleets]]` entry and its `[[fleets.layers]]`.

use crate::model::outcome::{class_set, Class, ClassSet};

use super::*;
use crate::model::backoff;
use crate::model::broker;
use crate::model::field::list_cap;
use crate::model::field::{Ctx, R};
use crate::model::hedge;
use crate::scenario::error::shown;

/// `horizon`: the end of the run (duration and drain), past which a recording is not
/// kept; `duration`: the end of arrivals.
pub(super) fn validate_fleet(
    c: &Ctx,
    i: usize,
    f: &FleetFile,
    occ: bool,
    duration: crate::engine::Nanos,
    horizon: crate::engine::Nanos,
) -> R<FleetConfig> {
    let p = format!("fleets[{i}]");
    let name = f.name.trim().to_string();
    if name.is_empty()
        || name.len() > MAX_NAME_BYTES
        || name.contains(['/', ',', '"'])
        || name.chars().any(char::is_control)
    {
        return c.err(
            format!("{p}.name"),
            format!(
                "must be 1 to {MAX_NAME_BYTES} bytes without '/', ',', '\"' or control characters (newlines, tabs, escapes) (found \"{}\")",
                shown(&f.name)
            ),
        );
    }
    let max_clients = 10_000_000;
    let check_clients = |field: String, n: u64| -> R<u64> {
        let n = c.at_least(&field, n, 1)?;
        if n > max_clients {
            return c.err(field, format!("must be at most {max_clients} (found {n})"));
        }
        Ok(n)
    };
    let queue = broker::validate(
        c,
        &p,
        &broker::Keys {
            arrival: match &f.arrival {
                ArrivalFile::Queue(w) => Some(w),
                _ => None,
            },
            consumers: f.consumers,
            visibility_timeout: f.visibility_timeout,
            max_receive_count: f.max_receive_count,
            redelivery_delay: f.redelivery_delay,
            poison: f.poison,
        },
    )?;
    // A recorded load profile gives the fleet's rate: read it first.
    let recorded = match &f.load_profile {
        Some(LoadProfileFile::Recorded(r)) => {
            if !matches!(
                f.arrival,
                ArrivalFile::Poisson { .. } | ArrivalFile::Constant { .. }
            ) {
                return c.err(
                    format!("{p}.load_profile"),
                    "applies only to poisson and constant arrivals",
                );
            }
            Some(r.validate(c, &format!("{p}.load_profile"), horizon)?)
        }
        _ => None,
    };
    let mut replayed = None;
    let (arrival, clients) = match &f.arrival {
        ArrivalFile::Trace(t) => {
            if f.load_profile.is_some() {
                return c.err(
                    format!("{p}.load_profile"),
                    "applies only to poisson and constant arrivals: a trace gives its own times (use the trace's `speed` to play it faster)",
                );
            }
            if t.write.is_some() && f.writes.is_some() {
                return c.err(
                    format!("{p}.writes"),
                    "cannot be written beside the trace's `write` column, which says which requests are writes",
                );
            }
            let (source, cl, text) = t.validate(c, &format!("{p}.arrival"), duration)?;
            replayed = Some(text);
            (Arrival::Trace(source), cl)
        }
        ArrivalFile::Queue(_) => {
            let (arrival, consumers, _) = queue.as_ref().expect("a queue fleet");
            (arrival.clone(), *consumers)
        }
        ArrivalFile::Poisson { rate, clients } => {
            let rate = open_rate(c, &p, *rate, recorded.as_ref())?;
            if rate > 1e8 {
                return c.err(
                    format!("{p}.arrival.rate"),
                    format!("must be at most 1e8 per second (found {rate})"),
                );
            }
            let cl = check_clients(format!("{p}.arrival.clients"), clients.unwrap_or(1))?;
            (Arrival::Poisson { rate }, cl)
        }
        ArrivalFile::Constant { rate, clients } => {
            let rate = open_rate(c, &p, *rate, recorded.as_ref())?;
            if rate > 1e9 {
                return c.err(
                    format!("{p}.arrival.rate"),
                    format!("must be at most 1e9 per second (found {rate})"),
                );
            }
            let cl = check_clients(format!("{p}.arrival.clients"), clients.unwrap_or(1))?;
            (Arrival::Constant { rate }, cl)
        }
        ArrivalFile::Closed {
            clients,
            think_time,
        } => {
            let cl = check_clients(format!("{p}.arrival.clients"), *clients)?;
            let think_time = c.dist(&format!("{p}.arrival.think_time"), &think_time.0)?;
            (Arrival::Closed { think_time }, cl)
        }
        ArrivalFile::Burst { at, count, clients } => {
            let count = c.at_least(&format!("{p}.arrival.count"), *count, 1)?;
            if count > 100_000_000 {
                return c.err(
                    format!("{p}.arrival.count"),
                    format!("must be at most 100000000 (found {count})"),
                );
            }
            let cl = check_clients(
                format!("{p}.arrival.clients"),
                clients.unwrap_or(count.min(max_clients)),
            )?;
            (Arrival::Burst { at: at.0, count }, cl)
        }
    };
    let load_profile = match &f.load_profile {
        None => None,
        Some(LoadProfileFile::Recorded(_)) => recorded.as_ref().map(|r| r.profile.clone()),
        Some(lp) => {
            if matches!(arrival, Arrival::Closed { .. } | Arrival::Burst { .. }) {
                return c.err(
                    format!("{p}.load_profile"),
                    "applies only to poisson and constant arrivals",
                );
            }
            let (pts, ramp) = match lp {
                LoadProfileFile::Steps(s) => (s, false),
                LoadProfileFile::Ramp { ramp } => (ramp, true),
                LoadProfileFile::Recorded(_) => unreachable!("matched above"),
            };
            let field = if ramp {
                format!("{p}.load_profile.ramp")
            } else {
                format!("{p}.load_profile")
            };
            if pts.is_empty() {
                return c.err(field, "needs at least one { at, multiplier } point");
            }
            list_cap(
                c,
                &field,
                pts.len(),
                crate::scenario::guard::MAX_PROFILE_POINTS,
                "points",
            )?;
            let mut out = Vec::with_capacity(pts.len());
            for (j, pt) in pts.iter().enumerate() {
                let m = c.finite(&format!("{field}[{j}].multiplier"), pt.multiplier)?;
                if !(0.0..=1000.0).contains(&m) {
                    return c.err(
                        format!("{field}[{j}].multiplier"),
                        format!("must be between 0 and 1000 (found {m})"),
                    );
                }
                if let Some(&(prev, _)) = out.last() {
                    if pt.at.0 <= prev {
                        return c.err(
                            format!("{field}[{j}].at"),
                            "points must be in strictly increasing time order",
                        );
                    }
                }
                out.push((pt.at.0, m));
            }
            Some(if ramp {
                LoadProfile::Ramp(out)
            } else {
                LoadProfile::Steps(out)
            })
        }
    };
    let deadline = match f.deadline {
        Some(d) => Some(c.positive_dur(&format!("{p}.deadline"), d)?),
        None => None,
    };
    let writes = c.probability(
        &format!("{p}.writes"),
        f.writes.unwrap_or(crate::model::config::DEFAULT_WRITES),
    )?;
    if f.layers.len() > 16 {
        return c.err(
            format!("{p}.layers"),
            format!("at most 16 layers (found {})", f.layers.len()),
        );
    }
    let mut layers = Vec::with_capacity(f.layers.len());
    for (j, l) in f.layers.iter().enumerate() {
        layers.push(validate_layer(
            c,
            &format!("{p}.layers[{j}]"),
            j,
            l,
            clients,
            occ,
        )?);
    }
    let guards = crate::model::guard::validate(
        c,
        &p,
        f.max_concurrent,
        f.bulkhead_queue,
        f.pool.as_ref(),
        &layers,
    )?;
    let criticality = f.criticality;
    crate::model::criticality::check_retries(c, &p, criticality.unwrap_or_default(), &layers)?;
    Ok(FleetConfig {
        name,
        arrival,
        clients,
        load_profile,
        deadline,
        writes,
        idempotency_keys: f
            .idempotency_keys
            .unwrap_or(crate::model::config::DEFAULT_IDEMPOTENCY_KEYS),
        layers,
        // Resolved against the services by the caller.
        target: 0,
        propagate_deadline: f
            .propagate_deadline
            .unwrap_or(crate::model::config::DEFAULT_PROPAGATE_DEADLINE),
        queue: queue.map(|(_, _, q)| q),
        guards,
        criticality,
        recorded: recorded.map(|r| r.text).or(replayed),
    })
}

pub(super) fn validate_layer(
    c: &Ctx,
    p: &str,
    index: usize,
    l: &LayerFile,
    clients: u64,
    occ: bool,
) -> R<LayerConfig> {
    let name = match &l.name {
        Some(n) if !n.trim().is_empty() => label(c, &format!("{p}.name"), n.trim())?,
        Some(_) => return c.err(format!("{p}.name"), "must not be empty"),
        None => format!("layer{index}"),
    };
    let max_attempts = match l.max_attempts {
        Limit::Unlimited => Attempts::Unlimited,
        Limit::Finite(n) => {
            let n = c.at_least(&format!("{p}.max_attempts"), n, 1)?;
            if n > MAX_ATTEMPTS_CAP {
                return c.err(
                    format!("{p}.max_attempts"),
                    format!("must be at most {MAX_ATTEMPTS_CAP} or \"unlimited\" (found {n})"),
                );
            }
            Attempts::Limited(n as u32)
        }
    };
    let (max_attempts, capped_from) = match l.max_attempts_cap {
        None => (max_attempts, None),
        Some(cap) => {
            let field = format!("{p}.max_attempts_cap");
            let cap = c.at_least(&field, cap, 1)?;
            if cap > MAX_ATTEMPTS_CAP {
                return c.err(
                    field,
                    format!("must be at most {MAX_ATTEMPTS_CAP} (found {cap})"),
                );
            }
            if max_attempts.limit().is_none_or(|n| u64::from(n) > cap) {
                (Attempts::Limited(cap as u32), Some(max_attempts))
            } else {
                (max_attempts, None)
            }
        }
    };
    let attempt_timeout = match l.attempt_timeout {
        Some(t) => Some(c.positive_dur(&format!("{p}.attempt_timeout"), t)?),
        None => None,
    };
    let backoff = backoff::validate(c, &format!("{p}.backoff"), l.backoff.as_ref())?;
    let retry_on = match &l.retry_on {
        // Against an OCC record a lost race is the failure that retries exist for.
        None if occ => ClassSet::default_retry_on().with(Class::Conflict),
        None => ClassSet::default_retry_on(),
        Some(list) => class_set(c, &format!("{p}.retry_on"), list)?,
    };
    let instances = match l.instances {
        Some(n) => c.at_least(&format!("{p}.instances"), n, 1)?,
        None if index == 0 => clients,
        None => 1,
    };
    if instances > 10_000_000 {
        return c.err(
            format!("{p}.instances"),
            format!("must be at most 10000000 (found {instances})"),
        );
    }
    let budget = match &l.budget {
        None => None,
        Some(b) => Some(b.validate(c, &format!("{p}.budget"))?),
    };
    let breaker = match &l.breaker {
        None => None,
        Some(b) => Some(b.validate(c, &format!("{p}.breaker"))?),
    };
    let hop_latency = match &l.hop_latency {
        None => None,
        Some(d) => Some(c.dist(&format!("{p}.hop_latency"), &d.0)?),
    };
    let total_timeout = match l.total_timeout {
        Some(t) => Some(c.positive_dur(&format!("{p}.total_timeout"), t)?),
        None => None,
    };
    let limiter = match &l.limiter {
        None => None,
        Some(lf) => Some(lf.validate(c, &format!("{p}.limiter"))?),
    };
    let concurrency_limit = match &l.concurrency_limit {
        None => None,
        Some(f) => Some(f.validate(c, &format!("{p}.concurrency_limit"), l.hedging.is_some())?),
    };
    let hedging = match &l.hedging {
        None => None,
        Some(h) => {
            let host = hedge::Host {
                max_attempts: l.max_attempts,
                attempt_timeout: l.attempt_timeout.is_some(),
                total_timeout: l.total_timeout.is_some(),
                breaker: l.breaker.is_some(),
                limiter: l.limiter.is_some(),
            };
            Some(h.validate(c, p, &host)?)
        }
    };
    Ok(LayerConfig {
        name,
        max_attempts,
        attempt_timeout,
        cancel_on_timeout: l
            .cancel_on_timeout
            .unwrap_or(crate::model::config::DEFAULT_CANCEL_ON_TIMEOUT),
        backoff,
        retry_on,
        retry_ambiguous_writes: l
            .retry_ambiguous_writes
            .unwrap_or(crate::model::config::DEFAULT_RETRY_AMBIGUOUS_WRITES),
        respect_retry_after: l
            .respect_retry_after
            .unwrap_or(crate::model::config::DEFAULT_RESPECT_RETRY_AFTER),
        instances,
        budget,
        breaker,
        hop_latency,
        total_timeout,
        limiter,
        concurrency_limit,
        hedging,
        preset: l.preset.clone(),
        part_presets: l.part_presets.clone(),
        capped_from,
        retry_criticality: l.retry_criticality,
    })
}

/// The rate of an open fleet: `rate` as written, or, under a recorded load profile
/// (which gives the rate, so `rate` is left out), the recording's mean.
fn open_rate(
    c: &Ctx,
    p: &str,
    rate: Option<f64>,
    recorded: Option<&crate::scenario::inputs::profile::Validated>,
) -> R<f64> {
    match (rate, recorded) {
        (Some(r), None) => c.positive(&format!("{p}.arrival.rate"), r),
        (None, Some(rec)) => Ok(rec.base),
        (None, None) => c.err(
            format!("{p}.arrival.rate"),
            "is required (logical requests per second), unless a recorded load_profile (`file = ...`) gives the rate",
        ),
        (Some(r), Some(_)) => c.err(
            format!("{p}.arrival.rate"),
            format!("must be left out: load_profile.file gives the fleet's rate (found {r})"),
        ),
    }
}
