//! Rules that turn a [`ScenarioFile`] into a typed [`Scenario`]: ranges, required
//! combinations, cross-field checks, defaults. Each failure names the field path.

use crate::engine::time::SECOND;
use crate::engine::Nanos;

use super::error::{shown, ScenarioError};
use super::file::*;
use crate::model::config::*;
use crate::model::field::list_cap;
use crate::model::field::{Ctx, R};

/// Default drain after the arrival window.
pub(crate) const DEFAULT_DRAIN: Nanos = 60 * SECOND;
/// Default time-series bucket.
pub(crate) const DEFAULT_BUCKET: Nanos = SECOND;
/// Default fine bucket of the herd series.
pub(crate) const DEFAULT_HERD_BUCKET: Nanos = 10_000_000;
/// Default seed.
pub(crate) const DEFAULT_SEED: u64 = 1;
pub(crate) use crate::model::attempts::MAX_ATTEMPTS_CAP;
/// Default start of the recovery baseline.
pub(crate) const DEFAULT_WARMUP: Nanos = 0;
/// Default tolerance below the baseline that counts as recovered.
pub(crate) const DEFAULT_RECOVERY_TOLERANCE: f64 = 0.02;
/// Default buckets the success rate must hold to count as recovered.
pub(crate) const DEFAULT_RECOVERY_HOLD: u64 = 10;
/// Default repetitions of a scenario.
pub(crate) const DEFAULT_REPLICATIONS: u64 = 1;
pub(crate) use crate::model::config::MAX_HORIZON;

mod dependency;
mod fleet;
mod outage;
pub(crate) mod services;

use fleet::validate_fleet;
use outage::validate_outage;

/// Validates a parsed scenario file. `path` names the file in messages; `stem` is the
/// default name.
pub(crate) fn validate(
    file: &ScenarioFile,
    path: &str,
    stem: &str,
) -> Result<Scenario, ScenarioError> {
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
    let warmup = file.warmup.map_or(DEFAULT_WARMUP, |d| d.0);
    if warmup >= duration {
        return c.err("warmup", "must be shorter than duration");
    }
    let recovery_tolerance = c.probability(
        "recovery_tolerance",
        file.recovery_tolerance
            .unwrap_or(DEFAULT_RECOVERY_TOLERANCE),
    )?;
    let recovery_hold = c.u32_field(
        "recovery_hold",
        c.at_least(
            "recovery_hold",
            file.recovery_hold.unwrap_or(DEFAULT_RECOVERY_HOLD),
            1,
        )?,
    )?;
    let replications = c.at_least(
        "replications",
        file.replications.unwrap_or(DEFAULT_REPLICATIONS),
        1,
    )?;
    if replications > 100_000 {
        return c.err(
            "replications",
            format!("must be at most 100000 (found {replications})"),
        );
    }

    let (services, graph) = services::validate_services(&c, file)?;
    let occ = services[0].capacity.kind == DependencyKind::Occ;
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
        let mut fleet = validate_fleet(&c, i, f, occ, duration, duration + drain)?;
        let field = format!("fleets[{i}].target");
        fleet.target = match services::target(&c, &field, &services, f.target.as_deref())? {
            Some(t) => t,
            None => services::root(&c, &field, &services)?,
        };
        if !names.insert(fleet.name.clone()) {
            return c.err(
                format!("fleets[{i}].name"),
                format!("\"{}\" is used by another fleet", shown(&fleet.name)),
            );
        }
        if fleet.queue.is_some() {
            crate::model::broker::check_dependency(&c, i, occ)?;
        }
        fleets.push(fleet);
    }
    if occ && !file.outages.is_empty() {
        return c.err(
            "outages",
            "apply only to a queueing dependency, not kind = \"occ\"",
        );
    }
    let mut outages = Vec::with_capacity(file.outages.len());
    for (i, o) in file.outages.iter().enumerate() {
        let mut outage = validate_outage(&c, i, o)?;
        outage.target = services::target(
            &c,
            &format!("outages[{i}].target"),
            &services,
            o.target.as_deref(),
        )?;
        outages.push(outage);
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
    let trace = match &file.trace {
        Some(t) => {
            if t.sample == 0 || t.sample > MAX_TRACE_SAMPLE {
                return c.err(
                    "trace.sample",
                    format!(
                        "must be 1 to {MAX_TRACE_SAMPLE} logical requests (found {})",
                        t.sample
                    ),
                );
            }
            if let Some(s) = t.seed {
                if i64::try_from(s).is_err() {
                    return c.err(
                        "trace.seed",
                        format!("must be at most {} (found {s})", i64::MAX),
                    );
                }
            }
            Some(TraceConfig {
                sample: t.sample,
                seed: t.seed,
            })
        }
        None => None,
    };
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
        dependency: services[fleets[0].target as usize].capacity.clone(),
        services,
        graph,
        fleets,
        outages,
        limits,
        trace,
    })
}

/// Longest name of a scenario, fleet or layer, in bytes.
pub(crate) const MAX_NAME_BYTES: usize = 100;

/// Why `s` cannot be the name of an output folder `output/<s>/`, if it cannot: it must
/// be one path component, not empty, `.` or `..`, without `/`, `\` or control
/// characters, and at most [`MAX_NAME_BYTES`] bytes.
pub(crate) fn folder_name(s: &str) -> Result<(), &'static str> {
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
pub(super) fn label(c: &Ctx, field: &str, s: &str) -> R<String> {
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

/// The examples of this file's docs, as unit tests (the module is the crate's own,
/// so rustdoc cannot run them).
#[cfg(test)]
mod doc_examples {
    #[test]
    fn folder_name_example() {
        use crate::scenario::validate::folder_name;
        assert!(folder_name("herd").is_ok());
        assert!(folder_name("my scenario").is_ok());
        for bad in ["", ".", "..", "a/b", "a\\b", "a\nb"] {
            assert!(folder_name(bad).is_err(), "{bad:?}");
        }
    }
}
