//! Rules that turn a [`ScenarioFile`] into a typed [`Scenario`]: ranges, required
//! combinations, cross-field checks, defaults. Each failure names the field path.

use crate::engine::time::SECOND;
use crate::engine::Nanos;
use crate::model::dist::Dist;
use crate::model::outcome::{Class, ClassSet};

use super::error::{shown, ScenarioError};
use super::file::*;
use crate::model::backoff;
use crate::model::config::*;
use crate::model::field::list_cap;
use crate::model::field::{Ctx, R};

/// Default drain after the arrival window.
pub const DEFAULT_DRAIN: Nanos = 60 * SECOND;
/// Default time-series bucket.
pub const DEFAULT_BUCKET: Nanos = SECOND;
/// Default fine bucket of the herd series.
pub const DEFAULT_HERD_BUCKET: Nanos = 10_000_000;
/// Default seed.
pub const DEFAULT_SEED: u64 = 1;
/// Largest attempts per call when finite.
pub const MAX_ATTEMPTS_CAP: u64 = 1_000_000;
pub use crate::model::config::MAX_HORIZON;

/// Validates a parsed scenario file. `path` names the file in messages; `stem` is the
/// default name.
pub fn validate(file: &ScenarioFile, path: &str, stem: &str) -> Result<Scenario, ScenarioError> {
    rules(file, stem).map_err(|e| ScenarioError::Field {
        path: path.to_string(),
        field: e.field,
        message: e.message,
    })
}

fn rules(file: &ScenarioFile, stem: &str) -> R<Scenario> {
    let c = Ctx;
    let name = match &file.name {
        Some(n) => {
            let n = n.trim();
            if n.is_empty()
                || n.len() > MAX_NAME_BYTES
                || !n
                    .chars()
                    .all(|ch| ch.is_ascii_alphanumeric() || "-_.".contains(ch))
                || n.starts_with('.')
            {
                return c.err(
                    "name",
                    format!(
                        "must be 1 to {MAX_NAME_BYTES} characters of letters, digits, '-', '_' or '.', not starting with '.' (found \"{}\")",
                        shown(n)
                    ),
                );
            }
            n.to_string()
        }
        None => {
            if let Err(why) = folder_name(stem) {
                return c.err(
                    "name",
                    format!(
                        "is not set, so the file name gives the default name \"{}\", which {why}: the name becomes the output folder output/<name>/, one path component (not empty, '.' or '..', no '/', '\\' or control characters, at most {MAX_NAME_BYTES} bytes); set `name = \"...\"` in the file",
                        shown(stem)
                    ),
                );
            }
            stem.to_string()
        }
    };
    let duration = c.positive_dur("duration", file.duration)?;
    let drain = file.drain.map_or(DEFAULT_DRAIN, |d| d.0);
    if duration.checked_add(drain).is_none_or(|h| h > MAX_HORIZON) {
        return c.err(
            "duration",
            format!(
                "duration + drain must be at most {} (found {} + {}{})",
                crate::engine::time::format(MAX_HORIZON),
                crate::engine::time::format(duration),
                crate::engine::time::format(drain),
                if file.drain.is_none() {
                    ", the default drain"
                } else {
                    ""
                }
            ),
        );
    }
    let bucket = match file.bucket {
        Some(b) => c.positive_dur("bucket", b)?,
        None => DEFAULT_BUCKET,
    };
    if bucket > duration {
        let (d, b) = (
            crate::engine::time::format(duration),
            crate::engine::time::format(bucket),
        );
        return match file.bucket {
            Some(_) => c.err(
                "bucket",
                format!("must not be longer than duration {d} (found {b})"),
            ),
            None => c.err(
                "duration",
                format!(
                    "must be at least the time-series bucket, {b} by default (found {d}); set `bucket` to at most {d} for a shorter run"
                ),
            ),
        };
    }
    if duration / bucket > 1_000_000 {
        return c.err(
            "bucket",
            "gives more than 1,000,000 buckets: use a longer bucket",
        );
    }
    let herd_bucket = match file.herd_bucket {
        Some(b) => c.positive_dur("herd_bucket", b)?,
        None => DEFAULT_HERD_BUCKET,
    };
    let warmup = file.warmup.map_or(0, |d| d.0);
    if warmup >= duration {
        return c.err("warmup", "must be shorter than duration");
    }
    let recovery_tolerance = c.probability(
        "recovery_tolerance",
        file.recovery_tolerance.unwrap_or(0.02),
    )?;
    let recovery_hold = c.u32_field(
        "recovery_hold",
        c.at_least("recovery_hold", file.recovery_hold.unwrap_or(10), 1)?,
    )?;
    let replications = c.at_least("replications", file.replications.unwrap_or(1), 1)?;
    if replications > 100_000 {
        return c.err(
            "replications",
            format!("must be at most 100000 (found {replications})"),
        );
    }

    let dependency = validate_dependency(&c, &file.dependency)?;
    if file.fleets.is_empty() {
        return c.err("fleets", "needs at least one [[fleets]] entry");
    }
    // Caps before the work they guard: validation takes time linear in the file.
    list_cap(
        &c,
        "fleets",
        file.fleets.len(),
        super::guard::MAX_FLEETS,
        "fleets",
    )?;
    list_cap(
        &c,
        "outages",
        file.outages.len(),
        super::guard::MAX_OUTAGES,
        "outages",
    )?;
    let mut fleets = Vec::with_capacity(file.fleets.len());
    let mut names = std::collections::HashSet::with_capacity(file.fleets.len());
    for (i, f) in file.fleets.iter().enumerate() {
        let fleet = validate_fleet(&c, i, f, dependency.kind == DependencyKind::Occ)?;
        if !names.insert(fleet.name.clone()) {
            return c.err(
                format!("fleets[{i}].name"),
                format!("\"{}\" is used by another fleet", shown(&fleet.name)),
            );
        }
        fleets.push(fleet);
    }
    if dependency.kind == DependencyKind::Occ && !file.outages.is_empty() {
        return c.err(
            "outages",
            "apply only to a queueing dependency, not kind = \"occ\"",
        );
    }
    let mut outages = Vec::with_capacity(file.outages.len());
    for (i, o) in file.outages.iter().enumerate() {
        outages.push(validate_outage(&c, i, o)?);
    }
    for (i, e) in file.expect.iter().enumerate() {
        if e.metric.trim().is_empty() {
            return c.err(format!("expect[{i}].metric"), "must name a summary column");
        }
        label(&c, &format!("expect[{i}].metric"), &e.metric)?;
        if e.min.is_none() && e.max.is_none() {
            return c.err(format!("expect[{i}]"), "needs `min`, `max` or both");
        }
        for (k, v) in [("min", e.min), ("max", e.max)] {
            if let Some(v) = v {
                c.finite(&format!("expect[{i}].{k}"), v)?;
            }
        }
    }
    let mut limits = Limits::default();
    if let Some(l) = &file.limits {
        if let Some(v) = l.max_in_flight {
            limits.max_in_flight = c.at_least("limits.max_in_flight", v, 1)?;
        }
        if let Some(v) = l.max_events {
            limits.max_events = c.at_least("limits.max_events", v, 1)?;
        }
    }
    Ok(Scenario {
        name,
        seed: file.seed.unwrap_or(DEFAULT_SEED),
        duration,
        drain,
        bucket,
        warmup,
        recovery_tolerance,
        recovery_hold,
        replications: replications as u32,
        herd_bucket,
        dependency,
        fleets,
        outages,
        limits,
    })
}

fn validate_dependency(c: &Ctx, d: &DependencyFile) -> R<DependencyConfig> {
    match d.kind.as_deref() {
        None | Some("queue") => {}
        Some("occ") => return validate_occ(c, d),
        Some(other) => {
            return c.err(
                "dependency.kind",
                format!("must be \"queue\" or \"occ\" (found \"{}\")", shown(other)),
            );
        }
    }
    let Some(servers) = d.servers else {
        return c.err(
            "dependency.servers",
            "is required for a queueing dependency (a count or \"unlimited\")",
        );
    };
    let Some(service_time) = &d.service_time else {
        return c.err(
            "dependency.service_time",
            "is required for a queueing dependency",
        );
    };
    let servers = match servers {
        Limit::Unlimited => None,
        Limit::Finite(n) => {
            let n = c.at_least("dependency.servers", n, 1)?;
            if n > 10_000_000 {
                return c.err(
                    "dependency.servers",
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
    let reject_status = d.reject_status.unwrap_or(503);
    if reject_status != 503 && reject_status != 429 {
        return c.err(
            "dependency.reject_status",
            format!("must be 503 or 429 (found {reject_status})"),
        );
    }
    let discipline = match d.discipline.as_deref() {
        None | Some("fifo") => Discipline::Fifo,
        Some("lifo") => Discipline::Lifo,
        Some(o) => {
            return c.err(
                "dependency.discipline",
                format!("must be \"fifo\" or \"lifo\" (found \"{}\")", shown(o)),
            )
        }
    };
    let service_time = c.dist("dependency.service_time", &service_time.0)?;
    if service_time.mean_ns() <= 0.0 {
        return c.err("dependency.service_time", "must have a positive mean");
    }
    Ok(DependencyConfig {
        kind: DependencyKind::Queue,
        servers,
        queue_limit,
        reject_status,
        retry_after: d.retry_after.map(|r| r.0),
        service_time,
        per_concurrent: d.per_concurrent.map_or(0, |p| p.0),
        discipline,
        drop_expired: d.drop_expired.unwrap_or(false),
        error_rate: c.probability("dependency.error_rate", d.error_rate.unwrap_or(0.0))?,
    })
}

/// An optimistic-concurrency record: no servers, no queue, no service time; the time
/// an attempt takes is its four network legs.
fn validate_occ(c: &Ctx, d: &DependencyFile) -> R<DependencyConfig> {
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
    })
}

fn validate_fleet(c: &Ctx, i: usize, f: &FleetFile, occ: bool) -> R<FleetConfig> {
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
    let (arrival, clients) = match &f.arrival {
        ArrivalFile::Poisson { rate, clients } => {
            let rate = c.positive(&format!("{p}.arrival.rate"), *rate)?;
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
            let rate = c.positive(&format!("{p}.arrival.rate"), *rate)?;
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
                super::guard::MAX_PROFILE_POINTS,
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
    let writes = c.probability(&format!("{p}.writes"), f.writes.unwrap_or(0.0))?;
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
    Ok(FleetConfig {
        name,
        arrival,
        clients,
        load_profile,
        deadline,
        writes,
        idempotency_keys: f.idempotency_keys.unwrap_or(false),
        layers,
    })
}

fn validate_layer(
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
        Some(list) => {
            let mut set = ClassSet::EMPTY;
            for (k, s) in list.iter().enumerate() {
                match Class::parse(s) {
                    Some(cl) => set = set.with(cl),
                    None if s == ClassSet::REJECTED_5XX => set = set.with_rejected_5xx(),
                    None => {
                        let mut allowed: Vec<_> = Class::FAILURES
                            .iter()
                            .map(|c| format!("\"{}\"", c.name()))
                            .collect();
                        allowed.push(format!("\"{}\"", ClassSet::REJECTED_5XX));
                        return c.err(
                            format!("{p}.retry_on[{k}]"),
                            format!(
                                "unknown outcome class \"{}\" (allowed: {})",
                                shown(s),
                                allowed.join(", ")
                            ),
                        );
                    }
                }
            }
            set
        }
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
    Ok(LayerConfig {
        name,
        max_attempts,
        attempt_timeout,
        cancel_on_timeout: l.cancel_on_timeout.unwrap_or(false),
        backoff,
        retry_on,
        retry_ambiguous_writes: l.retry_ambiguous_writes.unwrap_or(false),
        respect_retry_after: l.respect_retry_after.unwrap_or(true),
        instances,
        budget,
        breaker,
        hop_latency,
        total_timeout,
        limiter,
        preset: l.preset.clone(),
        part_presets: l.part_presets.clone(),
        capped_from,
    })
}

/// Longest name of a scenario, fleet or layer, in bytes.
pub const MAX_NAME_BYTES: usize = 100;

/// Why `s` cannot be the name of an output folder `output/<s>/`, if it cannot: it must
/// be one path component, not empty, `.` or `..`, without `/`, `\` or control
/// characters, and at most [`MAX_NAME_BYTES`] bytes.
///
/// ```
/// use retrysim::scenario::validate::folder_name;
/// assert!(folder_name("herd").is_ok());
/// assert!(folder_name("my scenario").is_ok());
/// for bad in ["", ".", "..", "a/b", "a\\b", "a\nb"] {
///     assert!(folder_name(bad).is_err(), "{bad:?}");
/// }
/// ```
pub fn folder_name(s: &str) -> Result<(), &'static str> {
    if s.is_empty() {
        Err("is empty")
    } else if s == "." || s == ".." {
        Err("names the current or parent folder")
    } else if s.contains(['/', '\\']) {
        Err("holds a path separator")
    } else if s.chars().any(char::is_control) {
        Err("holds a control character")
    } else if s.len() > MAX_NAME_BYTES {
        Err("is too long")
    } else {
        Ok(())
    }
}

/// A user's label (a layer name, an expected metric), printed as written: refused
/// when it holds control characters (a terminal would act on them) or is too long.
fn label(c: &Ctx, field: &str, s: &str) -> R<String> {
    if s.chars().any(char::is_control) {
        return c.err(
            field,
            format!(
                "must not hold control characters (newlines, tabs, escapes) (found \"{}\")",
                shown(s)
            ),
        );
    }
    if s.len() > MAX_NAME_BYTES {
        return c.err(
            field,
            format!(
                "must be at most {MAX_NAME_BYTES} bytes (found \"{}\")",
                shown(s)
            ),
        );
    }
    Ok(s.to_string())
}

fn validate_outage(c: &Ctx, i: usize, o: &OutageFile) -> R<OutageConfig> {
    let p = format!("outages[{i}]");
    let timing = match o.kind.as_deref() {
        None | Some("window") => {
            for (k, v) in [("mean_up", o.mean_up), ("mean_down", o.mean_down)] {
                if v.is_some() {
                    return c.err(
                        format!("{p}.{k}"),
                        "belongs to kind = \"markov\", not a window",
                    );
                }
            }
            let start = match o.start {
                Some(s) => s.0,
                None => return c.err(format!("{p}.start"), "is required for a window outage"),
            };
            let end = match o.end {
                Some(e) => e.0,
                None => return c.err(format!("{p}.end"), "is required for a window outage"),
            };
            if end <= start {
                return c.err(
                    format!("{p}.end"),
                    format!(
                        "must be after start {} (found {})",
                        crate::engine::time::format(start),
                        crate::engine::time::format(end)
                    ),
                );
            }
            OutageTiming::Window { start, end }
        }
        Some("markov") => {
            for (k, v) in [("start", o.start), ("end", o.end)] {
                if v.is_some() {
                    return c.err(
                        format!("{p}.{k}"),
                        "belongs to a window outage, not kind = \"markov\"",
                    );
                }
            }
            let up = match o.mean_up {
                Some(d) => c.positive_dur(&format!("{p}.mean_up"), d)?,
                None => return c.err(format!("{p}.mean_up"), "is required for a markov outage"),
            };
            let down = match o.mean_down {
                Some(d) => c.positive_dur(&format!("{p}.mean_down"), d)?,
                None => return c.err(format!("{p}.mean_down"), "is required for a markov outage"),
            };
            OutageTiming::Markov {
                mean_up: up,
                mean_down: down,
            }
        }
        Some(other) => {
            return c.err(
                format!("{p}.kind"),
                format!(
                    "must be \"window\" or \"markov\" (found \"{}\")",
                    shown(other)
                ),
            );
        }
    };
    let mode = match o.mode {
        ModeFile::Fail { after } => OutageMode::Fail(after.map_or(1_000_000, |a| a.0)),
        ModeFile::ErrorRate { p: prob } => {
            OutageMode::ErrorRate(c.probability(&format!("{p}.mode.p"), prob)?)
        }
        ModeFile::Slow { factor } => {
            let f = c.positive(&format!("{p}.mode.factor"), factor)?;
            if f > 1e6 {
                return c.err(
                    format!("{p}.mode.factor"),
                    format!("must be at most 1e6 (found {f})"),
                );
            }
            OutageMode::Slow(f)
        }
        ModeFile::Capacity { servers } => {
            OutageMode::Capacity(c.u32_field(&format!("{p}.mode.servers"), servers)?)
        }
        ModeFile::Blackhole => OutageMode::Blackhole,
    };
    Ok(OutageConfig { timing, mode })
}
