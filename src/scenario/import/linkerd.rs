//! `linkerd`: a Linkerd `ServiceProfile` (`linkerd.io/v1alpha2`) in YAML or JSON, one
//! route's `isRetryable` and `timeout` and the profile's `retryBudget`, mapped onto
//! linkerd2-proxy's arithmetic: tower's `TpsBudget`, the `tower` budget kind.
//!
//! Read from linkerd/linkerd2 at commit b24cd4059841f8cee2fb7a9c2ac23a693c583579
//! (edge-26.8.3, August 2026: `controller/api/destination/profile_translator.go`,
//! `pkg/profiles/profiles.go`, the CRD of `charts/linkerd-crds`) and
//! linkerd/linkerd2-proxy at commit 29637b64f6cebedaf15bfbf516818d7a28a4d5a6
//! (v2.366.0, tower 0.5.3: `linkerd/service-profiles/src/proto.rs`,
//! `linkerd/app/outbound/src/http/retry.rs`, `linkerd/app/core/src/classify.rs`,
//! `linkerd/app/outbound/src/http/logical/profile.rs`).
//!
//! - The file may hold several documents (`---`): the ServiceProfile named
//!   `service_profile` (`metadata.name`), needed when it holds several. Its route is
//!   the one named `route` (`spec.routes[].name`), needed when it has several.
//! - `isRetryable: true`: retries with no attempt limit (tower's `Retry` has none:
//!   the budget is the limit), at once (no backoff), on the responses Linkerd
//!   classifies as failures, 5xx (`rejected_5xx`, `error`): a 429 or 409 is a success
//!   to Linkerd, and a connection error (`Err`) is never retried. Absent or false:
//!   one attempt.
//! - `retryBudget` (`retryRatio`, `minRetriesPerSecond`, `ttl`, all three required by
//!   the CRD; absent: the controller's default 0.2, 10, 10 s) → `budget = { kind =
//!   "tower", percent = 100 × retryRatio, min_per_sec, ttl, truncate = true }`: the
//!   `1/ratio` truncation of tower 0.5.3. linkerd2-proxy deposits when a call ends on
//!   a result it does not retry; retrysim's closest rule deposits on each success
//!   (`deposit = "success"`), which is said. The budget is the profile's, shared by
//!   its retryable routes; the layer's sees this route's calls only (said when the
//!   profile has several retryable routes).
//! - `timeout` → `total_timeout`, over all attempts (the proxy's timeout wraps its
//!   retries); absent or `0s`, none: the controller has set no default since
//!   stable-2.10 (the profile template's comment still says 10 s).
//! - Durations are Go's (`"250ms"`, `"10s"`); what the controller or proxy would not
//!   apply (a duration Go cannot read, a negative timeout, a `ttl` outside 1 s to
//!   60 s, a `retryRatio` outside 0 to 1000) is refused.

use super::envoy::{get, string};
use super::grpc::{object, sub};
use super::istio::{documents, go_duration, object_of_kind, route_of};
use super::json::{Member, Value};
use super::{Format, Mapped, Refusal, Selector};
use crate::model::field::duration_text;

/// The format.
pub(crate) const FORMAT: Format = Format {
    name: "linkerd",
    about: "a Linkerd ServiceProfile (YAML or JSON, several documents allowed): a route's isRetryable and timeout, and the retryBudget",
    selector: &[
        ("route", "the route's `name` (`spec.routes[].name`)"),
        (
            "service_profile",
            "the ServiceProfile's `metadata.name`, when the file holds several",
        ),
    ],
    map,
};

/// The controller's default `retryRatio` (`defaultRetryBudget`).
pub(crate) const DEFAULT_RETRY_RATIO: f64 = 0.2;
/// The controller's default `minRetriesPerSecond`.
pub(crate) const DEFAULT_MIN_RETRIES_PER_SECOND: i64 = 10;
/// The controller's default `ttl`.
pub(crate) const DEFAULT_TTL: u64 = 10_000_000_000;

/// A Go duration string member, in nanoseconds (negative allowed).
fn duration(m: &Member, field: &str) -> Result<i64, Refusal> {
    let n = &m.node;
    let Value::String(s) = &n.value else {
        return Err(Refusal::at(
            n.line,
            field,
            format!(
                "must be a duration string such as \"250ms\" or \"10s\" (found {})",
                n.value.kind()
            ),
        ));
    };
    go_duration(s).map_err(|why| {
        Refusal::at(
            n.line,
            field,
            format!(
                "must be a Go duration such as \"250ms\" or \"10s\", as Linkerd reads it ({why}; found \"{}\")",
                super::super::error::shown(s)
            ),
        )
    })
}

/// A number member, or a refusal.
fn number(m: &Member, field: &str) -> Result<(f64, String), Refusal> {
    match &m.node.value {
        Value::Number(x, t) => Ok((*x, t.clone())),
        v => Err(Refusal::at(
            m.node.line,
            field,
            format!("must be a number (found {})", v.kind()),
        )),
    }
}

/// The budget the profile gives its retryable routes: (ttl, min_per_sec, ratio),
/// each with its line, field and note.
type Budget = [(toml::Value, u64, String, Option<&'static str>); 3];

/// Reads `retryBudget` as the controller and the proxy do, refusing what they would
/// not apply; absent, the controller's default.
fn budget(spec: &[Member], spec_line: u64) -> Result<Budget, Refusal> {
    let Some(b) = get(spec, "retry_budget") else {
        let note = Some("no retryBudget: the controller's default, retryRatio 0.2, minRetriesPerSecond 10, ttl 10s");
        return Ok([
            (
                duration_text(DEFAULT_TTL).into(),
                spec_line,
                "spec".into(),
                note,
            ),
            (
                DEFAULT_MIN_RETRIES_PER_SECOND.into(),
                spec_line,
                "spec".into(),
                note,
            ),
            (
                (DEFAULT_RETRY_RATIO * 100.0).into(),
                spec_line,
                "spec".into(),
                note,
            ),
        ]);
    };
    let bf = sub("spec", &b.key);
    let bm = object(&b.node, &bf)?;
    let need = |k: &str| {
        get(bm, k).ok_or_else(|| {
            Refusal::at(
                b.line,
                &bf,
                format!(
                    "needs `{}`, as the ServiceProfile CRD requires (retryRatio, minRetriesPerSecond and ttl)",
                    match k {
                        "retry_ratio" => "retryRatio",
                        "min_retries_per_second" => "minRetriesPerSecond",
                        _ => "ttl",
                    }
                ),
            )
        })
    };
    let (r, mrps, ttl) = (
        need("retry_ratio")?,
        need("min_retries_per_second")?,
        need("ttl")?,
    );
    let rf = sub(&bf, &r.key);
    let (ratio, shown) = number(r, &rf)?;
    if !(0.0..=1000.0).contains(&ratio) {
        return Err(Refusal::at(
            r.node.line,
            &rf,
            format!("must be from 0 to 1000: Linkerd refuses a negative one, and linkerd2-proxy ignores the budget beyond, retrying nothing (found {shown})"),
        ));
    }
    let mf = sub(&bf, &mrps.key);
    let (min, shown) = number(mrps, &mf)?;
    if min.fract() != 0.0 || !(0.0..=f64::from(i32::MAX)).contains(&min) {
        return Err(Refusal::at(
            mrps.node.line,
            &mf,
            format!(
                "must be a whole number from 0 to {}, as the CRD's int32 (found {shown})",
                i32::MAX
            ),
        ));
    }
    let tf = sub(&bf, &ttl.key);
    let t = duration(ttl, &tf)?;
    if !(1_000_000_000..=60_000_000_000).contains(&t) {
        return Err(Refusal::at(
            ttl.node.line,
            &tf,
            format!(
                "must be from 1s to 60s: linkerd2-proxy ignores the budget outside, retrying nothing (found \"{}\")",
                string(ttl, &tf)?
            ),
        ));
    }
    Ok([
        (duration_text(t as u64).into(), ttl.node.line, tf, None),
        ((min as i64).into(), mrps.node.line, mf, None),
        (
            (ratio * 100.0).into(),
            r.node.line,
            rf,
            Some("100 × retryRatio"),
        ),
    ])
}

/// Whether a route is retryable (`isRetryable`, default false).
fn retryable<'a>(rm: &'a [Member], rf: &str) -> Result<Option<(bool, &'a Member)>, Refusal> {
    match get(rm, "is_retryable") {
        None => Ok(None),
        Some(m) => match &m.node.value {
            Value::Bool(b) => Ok(Some((*b, m))),
            v => Err(Refusal::at(
                m.node.line,
                &sub(rf, &m.key),
                format!("must be true or false (found {})", v.kind()),
            )),
        },
    }
}

/// Maps a ServiceProfile's route onto a layer.
pub(crate) fn map(text: &str, selector: &Selector) -> Result<Mapped, Refusal> {
    let docs = documents(text)?;
    let sp = object_of_kind(
        &docs,
        "ServiceProfile",
        "linkerd.io",
        &["v1alpha2"],
        "service_profile",
        selector,
    )?;
    let Some(spec) = get(sp, "spec") else {
        return Err(Refusal {
            line: None,
            field: "spec".into(),
            message: "is needed: a ServiceProfile without one has no routes".into(),
        });
    };
    let sm = object(&spec.node, "spec")?;
    let routes = match get(sm, "routes").map(|r| &r.node.value) {
        Some(Value::Array(a)) if !a.is_empty() => a.as_slice(),
        Some(Value::Array(_)) | None => {
            return Err(Refusal::at(
                spec.line,
                "spec",
                "has no `routes`: every call takes Linkerd's default route, which does not retry (write max_attempts = 1)",
            ))
        }
        Some(v) => {
            return Err(Refusal::at(
                spec.node.line,
                "spec.routes",
                format!("must be an array (found {})", v.kind()),
            ))
        }
    };
    // Linkerd's validation: every route has a name and a condition.
    let mut retryable_routes = 0;
    for (i, r) in routes.iter().enumerate() {
        let f = format!("spec.routes[{i}]");
        let rm = object(r, &f)?;
        for (k, what) in [("name", "`name`"), ("condition", "a `condition`")] {
            if get(rm, k).is_none() {
                return Err(Refusal::at(
                    r.line,
                    &f,
                    format!("needs {what}, as Linkerd's validation requires"),
                ));
            }
        }
        if retryable(rm, &f)?.is_some_and(|(b, _)| b) {
            retryable_routes += 1;
        }
    }
    let (route, rf) = route_of(routes, "routes", "spec.routes", selector, |r, f| {
        let m = get(object(r, f)?, "name").expect("checked above");
        string(m, &sub(f, &m.key)).map(str::to_string)
    })?;
    let rm = object(route, &rf)?;
    // A budget Linkerd would not apply fails the whole profile, retryable or not.
    let budget = budget(sm, spec.line)?;
    let mut out = Mapped {
        matched: rf.clone(),
        ..Mapped::default()
    };
    if let Some(c) = get(rm, "response_classes") {
        out.unmodelled(
            c.line,
            &sub(&rf, &c.key),
            "not modelled: the layer retries what Linkerd's default classifies as failures, 5xx responses (rejected_5xx, error)",
        );
    }
    if let Some(d) = get(sm, "dst_overrides") {
        out.unmodelled(
            d.line,
            &sub("spec", &d.key),
            "not modelled: retrysim's dependency is one pool: the traffic split's destinations are taken as one",
        );
    }
    match retryable(rm, &rf)? {
        Some((true, m)) => {
            let (line, f) = (m.node.line, sub(&rf, &m.key));
            out.set_by_rule(
                "max_attempts",
                "unlimited",
                line,
                &f,
                "Linkerd has no attempt limit: the retry budget is the limit",
            );
            out.set_by_rule(
                "retry_on",
                toml::Value::Array(vec!["rejected_5xx".into(), "error".into()]),
                line,
                &f,
                "Linkerd retries the responses it classifies as failures, 5xx; a 429 or 409 is a success to it, a connection error is not retried",
            );
            out.set_by_rule(
                "respect_retry_after",
                false,
                line,
                &f,
                "linkerd2-proxy does not read Retry-After",
            );
            out.set_by_rule(
                "backoff.kind",
                "none",
                line,
                &f,
                "linkerd2-proxy retries at once",
            );
            out.set_by_rule(
                "budget.kind",
                "tower",
                line,
                &f,
                "linkerd2-proxy's budget is tower's TpsBudget",
            );
            for (key, (v, l, bf, note)) in ["budget.ttl", "budget.min_per_sec", "budget.percent"]
                .into_iter()
                .zip(budget)
            {
                match note {
                    Some(n) => out.set_by_rule(key, v, l, &bf, n),
                    None => out.set(key, v, l, &bf),
                }
            }
            out.set_by_rule(
                "budget.truncate",
                true,
                line,
                &f,
                "tower 0.5.3, linkerd2-proxy's, withdraws (int)(1 / retryRatio) per retry",
            );
            out.set_by_rule(
                "budget.deposit",
                "success",
                line,
                &f,
                "the closest rule to linkerd2-proxy's, which deposits when a call ends on a result it does not retry",
            );
            out.note(
                line,
                &f,
                "linkerd2-proxy deposits into the budget when a call ends on a result it does not retry (a success, a 4xx, a connection error); retrysim's tower budget deposits on successes only (deposit = \"success\"), the closest rule",
            );
            if retryable_routes > 1 {
                out.note(
                    line,
                    &f,
                    format!("Linkerd shares one budget among the profile's {retryable_routes} retryable routes; the layer's sees this route's calls only"),
                );
            }
        }
        Some((false, m)) => out.set_by_rule(
            "max_attempts",
            1,
            m.node.line,
            &sub(&rf, &m.key),
            "isRetryable is false: Linkerd does not retry this route",
        ),
        None => out.set_by_rule(
            "max_attempts",
            1,
            route.line,
            &rf,
            "no isRetryable: Linkerd does not retry this route",
        ),
    }
    if let Some(t) = get(rm, "timeout") {
        let f = sub(&rf, &t.key);
        let ns = duration(t, &f)?;
        if ns < 0 {
            return Err(Refusal::at(
                t.node.line,
                &f,
                format!(
                    "must not be negative: linkerd2-proxy ignores such a timeout (found \"{}\")",
                    string(t, &f)?
                ),
            ));
        }
        if ns == 0 {
            out.note(
                t.node.line,
                &f,
                "0 is no timeout to Linkerd: the layer has no total_timeout",
            );
        } else {
            out.set("total_timeout", duration_text(ns as u64), t.node.line, &f);
        }
    }
    Ok(out)
}
