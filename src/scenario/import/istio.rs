//! `istio`: an Istio `VirtualService` (`networking.istio.io` `v1`, `v1beta1` or
//! `v1alpha3`) in YAML or JSON, one HTTP route's `retries` and `timeout` mapped through
//! the Envoy route istiod generates for it, as the `envoy` format maps an Envoy route.
//!
//! Read from istio/istio at commit 86c9f01fd735fb01d8192f5bcaf0d424afb7f14c (1.31
//! development, August 2026): `pilot/pkg/networking/core/route/retry/retry.go`
//! (`ConvertPolicy`, `parseRetryOn`), `pilot/pkg/networking/core/route/route.go`
//! (`setTimeout`, `applyHTTPRouteDestination`), `cluster_traffic_policy.go`
//! (`getDefaultCircuitBreakerThresholds`), and `pkg/config/validation`
//! (`ValidateHTTPRetry`, `ValidateDuration`).
//!
//! - The file may hold several documents (`---`): the VirtualService named
//!   `virtual_service` (`metadata.name`), needed when it holds several. Its HTTP route
//!   is the one named `route` (`http[].name`), needed when it has several; an unnamed
//!   route is named by its place, `route = "http[1]"`.
//! - No `retries`: Istio's default policy, 2 retries (3 attempts) on
//!   `connect-failure,refused-stream,unavailable,cancelled,retriable-status-codes`, with
//!   no status code since Istio 1.24 (503 was one before). retrysim produces only
//!   `unavailable`'s failures. A mesh's `defaultHttpRetryPolicy` replaces it: said.
//! - `retries.attempts` (absent: 0) → `max_attempts = attempts + 1`; 0 disables the
//!   retries, and Istio refuses `perTryTimeout`, `retryOn` or `retryRemoteLocalities`
//!   beside it. `retryOn` (default as above): Envoy conditions mapped as the `envoy`
//!   format maps `retry_on`, and HTTP status codes, which become
//!   `retriable_status_codes`. `perTryTimeout` → `attempt_timeout`; `backoff` →
//!   `backoff.base` (max 10 ×); without it Envoy's 25 ms and 250 ms.
//! - As the `envoy` format: a timed-out try is reset, Retry-After is ignored. Istio
//!   sets the cluster circuit breaker's `max_retries` to 2^32 − 1, so no budget (a
//!   DestinationRule's `maxRetries` is not in a VirtualService).
//! - `timeout` → `total_timeout`; absent, none: istiod sets Envoy's route timeout to 0,
//!   which disables its 15 s.
//! - Durations as Istio's legacy `jsonpb` reads them, Go's `time.ParseDuration`
//!   (`"250ms"`, `"2s"`, `"1m30s"`), at least 1 ms and whole milliseconds, as its
//!   validation requires.

use super::envoy::{condition, get, string};
use super::grpc::{object, sub};
use super::json::{Member, Node, Value};
use super::{Format, Mapped, Refusal, Selector};
use crate::model::field::duration_text;

/// The format.
pub(crate) const FORMAT: Format = Format {
    name: "istio",
    about: "an Istio VirtualService (YAML or JSON, several documents allowed): an HTTP route's retries and timeout",
    selector: &[
        (
            "route",
            "the HTTP route's `name` (`spec.http[].name`), or its place (`http[1]`)",
        ),
        (
            "virtual_service",
            "the VirtualService's `metadata.name`, when the file holds several",
        ),
    ],
    map,
};

/// Istio's default number of retries (`DefaultPolicy`).
pub(crate) const DEFAULT_RETRIES: u64 = 2;
/// Istio's default `retryOn` (`defaultRetryOn`).
pub(crate) const DEFAULT_RETRY_ON: &str =
    "connect-failure,refused-stream,unavailable,cancelled,retriable-status-codes";

/// The retry conditions Istio's validation accepts (`supportedRetryOnPolicies`).
const SUPPORTED_RETRY_ON: [&str; 16] = [
    "5xx",
    "gateway-error",
    "reset",
    "reset-before-request",
    "connect-failure",
    "retriable-4xx",
    "refused-stream",
    "retriable-status-codes",
    "retriable-headers",
    "envoy-ratelimited",
    "http3-post-connect-failure",
    "cancelled",
    "deadline-exceeded",
    "internal",
    "resource-exhausted",
    "unavailable",
];

/// The HTTP status codes Go's `http.StatusText` names (Istio takes a number of
/// `retryOn` as a status code when it names it).
const STATUS_CODES: [u16; 62] = [
    100, 101, 102, 103, 200, 201, 202, 203, 204, 205, 206, 207, 208, 226, 300, 301, 302, 303, 304,
    305, 307, 308, 400, 401, 402, 403, 404, 405, 406, 407, 408, 409, 410, 411, 412, 413, 414, 415,
    416, 417, 418, 421, 422, 423, 424, 425, 426, 428, 429, 431, 451, 500, 501, 502, 503, 504, 505,
    506, 507, 508, 510, 511,
];

/// The status code `part` names, as Go's `strconv.Atoi` and `http.StatusText` read it.
fn status_code(part: &str) -> Option<u64> {
    let digits = part.strip_prefix(['+', '-']).unwrap_or(part);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let v: i64 = part.parse().ok()?;
    STATUS_CODES
        .iter()
        .any(|c| i64::from(*c) == v)
        .then_some(v as u64)
}

/// Go's `time.ParseDuration`, which Istio's `jsonpb` and Linkerd read durations with:
/// `[-+]?([0-9]*(\.[0-9]*)?[a-z]+)+` with units `ns`, `us` (`µs`), `ms`, `s`, `m`,
/// `h`, or `0`; in nanoseconds, or why not (as Go says it).
pub(super) fn go_duration(text: &str) -> Result<i64, String> {
    const LIMIT: u64 = 1 << 63;
    let invalid = || "invalid duration".to_string();
    let mut s = text;
    let mut neg = false;
    if let Some(c) = s.chars().next() {
        if c == '-' || c == '+' {
            neg = c == '-';
            s = &s[1..];
        }
    }
    if s == "0" {
        return Ok(0);
    }
    if s.is_empty() {
        return Err(invalid());
    }
    let mut d: u64 = 0;
    while !s.is_empty() {
        let b = s.as_bytes();
        if !(b[0] == b'.' || b[0].is_ascii_digit()) {
            return Err(invalid());
        }
        // The whole part: an overflow is an error.
        let mut v: u64 = 0;
        let mut i = 0;
        while i < b.len() && b[i].is_ascii_digit() {
            if v > LIMIT / 10 {
                return Err(invalid());
            }
            v = v * 10 + u64::from(b[i] - b'0');
            if v > LIMIT {
                return Err(invalid());
            }
            i += 1;
        }
        let pre = i > 0;
        // The fraction: digits past what fits are read and dropped.
        let (mut f, mut scale, mut post) = (0u64, 1f64, false);
        if i < b.len() && b[i] == b'.' {
            i += 1;
            let start = i;
            let mut overflow = false;
            while i < b.len() && b[i].is_ascii_digit() {
                if !overflow {
                    if f > (LIMIT - 1) / 10 {
                        overflow = true;
                    } else {
                        let y = f * 10 + u64::from(b[i] - b'0');
                        if y > LIMIT {
                            overflow = true;
                        } else {
                            f = y;
                            scale *= 10.0;
                        }
                    }
                }
                i += 1;
            }
            post = i > start;
        }
        if !pre && !post {
            return Err(invalid());
        }
        let mut j = i;
        while j < b.len() && b[j] != b'.' && !b[j].is_ascii_digit() {
            j += 1;
        }
        if j == i {
            return Err("missing unit".to_string());
        }
        let unit: u64 = match &s[i..j] {
            "ns" => 1,
            "us" | "\u{b5}s" | "\u{3bc}s" => 1_000,
            "ms" => 1_000_000,
            "s" => 1_000_000_000,
            "m" => 60_000_000_000,
            "h" => 3_600_000_000_000,
            u => {
                return Err(format!(
                    "unknown unit \"{}\"",
                    super::super::error::shown(u)
                ))
            }
        };
        s = &s[j..];
        if v > LIMIT / unit {
            return Err(invalid());
        }
        v *= unit;
        if f > 0 {
            v += (f as f64 * (unit as f64 / scale)) as u64;
            if v > LIMIT {
                return Err(invalid());
            }
        }
        d = d
            .checked_add(v)
            .filter(|d| *d <= LIMIT)
            .ok_or_else(invalid)?;
    }
    if neg {
        return Ok((d as i64).wrapping_neg());
    }
    if d > LIMIT - 1 {
        return Err(invalid());
    }
    Ok(d as i64)
}

/// The documents of a Kubernetes manifest: its YAML documents (`---`), or one JSON
/// value.
pub(super) fn documents(text: &str) -> Result<Vec<Node>, Refusal> {
    let first = text
        .trim_start_matches(['\u{feff}', ' ', '\t', '\r', '\n'])
        .as_bytes()
        .first()
        .copied();
    let docs = match first {
        Some(b'{' | b'[') => super::json::parse(text).map(|n| vec![n]),
        _ => super::yaml::parse_documents(text),
    };
    docs.map_err(|(line, m)| Refusal {
        line: Some(line),
        field: String::new(),
        message: m,
    })
}

/// A string member `name` of `members`, or `None`; another kind is refused.
fn string_of<'a>(members: &'a [Member], name: &str, at: &str) -> Result<Option<&'a str>, Refusal> {
    get(members, name)
        .map(|m| string(m, &sub(at, &m.key)))
        .transpose()
}

/// The Kubernetes object of `kind` in API `group` (at one of `versions`) that the
/// selector's `name_key` names by its `metadata.name`, or the only one; its members.
pub(super) fn object_of_kind<'a>(
    docs: &'a [Node],
    kind: &str,
    group: &str,
    versions: &[&str],
    name_key: &str,
    selector: &Selector,
) -> Result<&'a [Member], Refusal> {
    let shown = super::super::error::shown;
    let wanted = selector
        .get(name_key)
        .map(String::as_str)
        .filter(|s| !s.is_empty());
    let mut found: Vec<(&'a [Member], String, u64)> = Vec::new();
    let mut kinds: Vec<String> = Vec::new();
    for d in docs {
        let m = match &d.value {
            Value::Null => continue,
            Value::Object(m) => m.as_slice(),
            v => {
                return Err(Refusal::at(
                    d.line,
                    "",
                    format!(
                        "must be a Kubernetes object with `kind` (found {})",
                        v.kind()
                    ),
                ))
            }
        };
        let k = string_of(m, "kind", "")?.unwrap_or("");
        if k != kind {
            let k = if k.is_empty() {
                "no kind".to_string()
            } else {
                shown(k)
            };
            if !kinds.contains(&k) && kinds.len() < 10 {
                kinds.push(k);
            }
            continue;
        }
        let allowed = versions
            .iter()
            .map(|v| format!("{group}/{v}"))
            .collect::<Vec<_>>()
            .join(", ");
        match get(m, "apiVersion") {
            None => {
                return Err(Refusal::at(
                    d.line,
                    "apiVersion",
                    format!("is needed for a {kind} (allowed: {allowed})"),
                ))
            }
            Some(av) => {
                let v = string(av, "apiVersion")?;
                let ok = v
                    .split_once('/')
                    .is_some_and(|(g, ver)| g == group && versions.contains(&ver));
                if !ok {
                    return Err(Refusal::at(
                        av.line,
                        "apiVersion",
                        format!(
                            "must be one of {allowed} for a {kind} (found \"{}\")",
                            shown(v)
                        ),
                    ));
                }
            }
        }
        let name = match get(m, "metadata") {
            Some(md) => string_of(object(&md.node, "metadata")?, "name", "metadata")?
                .unwrap_or("")
                .to_string(),
            None => String::new(),
        };
        found.push((m, name, d.line));
    }
    let names = |found: &[(&[Member], String, u64)]| {
        found
            .iter()
            .take(10)
            .map(|(_, n, _)| format!("\"{}\"", shown(n)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    if found.is_empty() {
        return Err(Refusal {
            line: None,
            field: String::new(),
            message: format!(
                "holds no {kind} (the kinds it holds: {})",
                if kinds.is_empty() {
                    "none".to_string()
                } else {
                    kinds.join(", ")
                }
            ),
        });
    }
    let Some(w) = wanted else {
        if found.len() == 1 {
            return Ok(found[0].0);
        }
        return Err(Refusal {
            line: None,
            field: String::new(),
            message: format!(
                "holds {} {kind}s ({}): name one with `{name_key}`",
                found.len(),
                names(&found)
            ),
        });
    };
    let all = names(&found);
    let mut hits: Vec<_> = found.into_iter().filter(|(_, n, _)| n == w).collect();
    match hits.len() {
        1 => Ok(hits.remove(0).0),
        0 => Err(Refusal {
            line: None,
            field: String::new(),
            message: format!("has no {kind} named \"{}\" (the {kind}s: {all})", shown(w)),
        }),
        _ => Err(Refusal::at(
            hits[1].2,
            "metadata.name",
            format!(
                "is a second {kind} named \"{}\" (the first is at line {})",
                shown(w),
                hits[0].2
            ),
        )),
    }
}

/// The route of a list of named routes that `route` names (by name, or by place as
/// `<list>[N]` when no route has that name), or the only one; its node and field.
pub(super) fn route_of<'a>(
    routes: &'a [Node],
    list: &str,
    field: &str,
    selector: &Selector,
    name_of: impl Fn(&'a Node, &str) -> Result<String, Refusal>,
) -> Result<(&'a Node, String), Refusal> {
    let shown = super::super::error::shown;
    let mut named = Vec::new();
    for (i, r) in routes.iter().enumerate() {
        let f = format!("{field}[{i}]");
        named.push((r, name_of(r, &f)?, f));
    }
    let listed = || {
        let n: Vec<String> = named
            .iter()
            .filter(|(_, n, _)| !n.is_empty())
            .take(10)
            .map(|(_, n, _)| format!("\"{}\"", shown(n)))
            .collect();
        if n.is_empty() {
            "none".to_string()
        } else {
            n.join(", ")
        }
    };
    let Some(want) = selector.get("route").filter(|r| !r.is_empty()) else {
        if named.len() == 1 {
            let (r, _, f) = named.remove(0);
            return Ok((r, f));
        }
        return Err(Refusal {
            line: None,
            field: field.to_string(),
            message: format!(
                "holds {} routes: name one with `route`, its name (named: {}) or its place such as \"{list}[1]\"",
                named.len(),
                listed()
            ),
        });
    };
    let mut hits: Vec<_> = named.iter().filter(|(_, n, _)| n == want).collect();
    match hits.len() {
        1 => {
            let (r, _, f) = hits.remove(0);
            return Ok((r, f.clone()));
        }
        0 => {}
        _ => {
            return Err(Refusal::at(
                hits[1].0.line,
                &hits[1].2,
                format!(
                    "is a second route named \"{}\" (the first is {})",
                    shown(want),
                    hits[0].2
                ),
            ))
        }
    }
    let place = want
        .strip_prefix(list)
        .and_then(|r| r.strip_prefix('['))
        .and_then(|r| r.strip_suffix(']'))
        .filter(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|d| d.parse::<usize>().ok());
    match place {
        Some(i) if i < named.len() => Ok((named[i].0, named[i].2.clone())),
        _ => Err(Refusal {
            line: None,
            field: field.to_string(),
            message: format!(
                "has no route named \"{}\" (named: {}; {} in all, \"{list}[0]\" to \"{list}[{}]\" by place)",
                shown(want),
                listed(),
                named.len(),
                named.len().saturating_sub(1)
            ),
        }),
    }
}

/// A Go duration string member, in nanoseconds: at least 1 ms and whole milliseconds,
/// as Istio's `ValidateDuration` requires.
fn duration(m: &Member, field: &str) -> Result<u64, Refusal> {
    let n = &m.node;
    let bad = |why: String| Refusal::at(n.line, field, why);
    let Value::String(s) = &n.value else {
        return Err(bad(format!(
            "must be a duration string such as \"2s\" or \"250ms\" (found {})",
            n.value.kind()
        )));
    };
    let shown = super::super::error::shown(s);
    let ns = go_duration(s).map_err(|why| {
        bad(format!(
            "must be a Go duration such as \"2s\", \"250ms\" or \"1m30s\", as Istio reads it ({why}; found \"{shown}\")"
        ))
    })?;
    if ns < 1_000_000 {
        return Err(bad(format!(
            "must be at least 1ms, as Istio's validation requires (found \"{shown}\")"
        )));
    }
    if ns % 1_000_000 != 0 {
        return Err(bad(format!(
            "must be whole milliseconds, as Istio's validation requires (found \"{shown}\")"
        )));
    }
    Ok(ns as u64)
}

/// `attempts`, an int32 in proto3 JSON (a number, or a string of digits).
fn attempts(m: &Member, field: &str) -> Result<i64, Refusal> {
    let n = &m.node;
    let v = match &n.value {
        Value::Number(x, _) if x.fract() == 0.0 => Some(*x),
        Value::String(s) => s.parse::<i64>().ok().map(|v| v as f64),
        _ => None,
    };
    let found = match &n.value {
        Value::Number(_, t) => t.clone(),
        Value::String(s) => format!("\"{}\"", super::super::error::shown(s)),
        v => v.kind().to_string(),
    };
    match v {
        Some(x) if x < 0.0 && x >= f64::from(i32::MIN) => Err(Refusal::at(
            n.line,
            field,
            format!("must be 0 or more, as Istio's validation requires (found {found})"),
        )),
        Some(x) if x >= 0.0 && x <= f64::from(i32::MAX) => Ok(x as i64),
        _ => Err(Refusal::at(
            n.line,
            field,
            format!(
                "must be a whole number from 0 to {} (an int32; found {found})",
                i32::MAX
            ),
        )),
    }
}

/// The outcome classes of `retryOn` (`parseRetryOn`, after Istio's validation).
fn retry_on(
    out: &mut Mapped,
    s: &str,
    line: u64,
    field: &str,
) -> Result<Vec<&'static str>, Refusal> {
    for part in s.split(',') {
        if status_code(part).is_none() && !SUPPORTED_RETRY_ON.contains(&part) {
            return Err(Refusal::at(
                line,
                field,
                format!(
                    "\"{}\" is no retry condition Istio's validation accepts nor an HTTP status code (allowed: {}, or a status code such as 503; no spaces)",
                    super::super::error::shown(part),
                    SUPPORTED_RETRY_ON.join(", ")
                ),
            ));
        }
    }
    let mut codes = Vec::new();
    let mut conds = Vec::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        match status_code(part) {
            Some(c) => codes.push((c, line, field.to_string())),
            None => conds.push(part),
        }
    }
    if !codes.is_empty() && !conds.iter().any(|c| c.contains("retriable-status-codes")) {
        conds.push("retriable-status-codes");
    }
    let mut on = Vec::new();
    for c in conds {
        condition(out, &mut on, c, line, field, &codes);
    }
    Ok(ordered(on))
}

/// Retry classes in `retry_on`'s order, once each, `rejected_5xx` dropped beside
/// `rejected` (as the `envoy` format writes them).
fn ordered(on: Vec<&'static str>) -> Vec<&'static str> {
    let order = ["rejected", "rejected_5xx", "error", "timeout", "conflict"];
    let has_rejected = on.contains(&"rejected");
    order
        .into_iter()
        .filter(|c| on.contains(c) && !(has_rejected && *c == "rejected_5xx"))
        .collect()
}

/// Route fields retrysim cannot model, and why.
const ROUTE_UNMODELLED: [(&str, &str); 5] = [
    (
        "fault",
        "Istio's fault injection is not imported (model failures with the dependency's error_rate or an outage)",
    ),
    ("mirror", "retrysim sends no mirrored copies of calls"),
    ("mirrors", "retrysim sends no mirrored copies of calls"),
    ("mirror_percentage", "retrysim sends no mirrored copies of calls"),
    ("mirror_percent", "retrysim sends no mirrored copies of calls"),
];

/// Retry fields retrysim cannot model, and why.
const RETRY_UNMODELLED: [(&str, &str); 2] = [
    (
        "retry_remote_localities",
        "retrysim's dependency is one pool: there is no other locality to pick",
    ),
    (
        "retry_ignore_previous_hosts",
        "retrysim's dependency is one pool: there is no other host to pick",
    ),
];

/// The retry fields this format reads.
const RETRY_KNOWN: [&str; 4] = ["attempts", "per_try_timeout", "retry_on", "backoff"];

/// Maps a VirtualService's HTTP route onto a layer.
pub(crate) fn map(text: &str, selector: &Selector) -> Result<Mapped, Refusal> {
    let docs = documents(text)?;
    let vs = object_of_kind(
        &docs,
        "VirtualService",
        "networking.istio.io",
        &["v1", "v1beta1", "v1alpha3"],
        "virtual_service",
        selector,
    )?;
    let Some(spec) = get(vs, "spec") else {
        return Err(Refusal {
            line: None,
            field: "spec".into(),
            message: "is needed: a VirtualService without one has no routes".into(),
        });
    };
    let sm = object(&spec.node, "spec")?;
    let http = get(sm, "http");
    let routes = match http.map(|h| &h.node.value) {
        Some(Value::Array(a)) if !a.is_empty() => a.as_slice(),
        Some(Value::Array(_)) | None => {
            return Err(Refusal::at(
                spec.line,
                "spec",
                "has no `http` routes (a VirtualService's tcp and tls routes make no HTTP call to retry)",
            ))
        }
        Some(v) => {
            return Err(Refusal::at(
                spec.node.line,
                "spec.http",
                format!("must be an array (found {})", v.kind()),
            ))
        }
    };
    let (route, rf) = route_of(routes, "http", "spec.http", selector, |r, f| {
        Ok(string_of(object(r, f)?, "name", f)?
            .unwrap_or("")
            .to_string())
    })?;
    let rm = object(route, &rf)?;
    let mut out = Mapped {
        matched: rf.clone(),
        ..Mapped::default()
    };
    if let Some(mt) = get(rm, "match") {
        let mf = sub(&rf, &mt.key);
        if let Value::Array(ms) = &mt.node.value {
            for (i, m) in ms.iter().enumerate() {
                let f = format!("{mf}[{i}]");
                for c in object(m, &f)?.iter().filter(|c| c.key != "name") {
                    out.unmodelled(
                        c.line,
                        &sub(&f, &c.key),
                        "not modelled: retrysim sends every call of the layer through this route, whatever it matches",
                    );
                }
            }
        }
    }
    for (k, why) in ROUTE_UNMODELLED {
        if let Some(m) = get(rm, k) {
            out.unmodelled(m.line, &sub(&rf, &m.key), format!("not modelled: {why}"));
        }
    }
    let Some(dest) = get(rm, "route") else {
        let why = if let Some(d) = get(rm, "delegate") {
            (d.line, "is a delegate: its retries and timeout are the delegate VirtualService's routes' (import that one)")
        } else {
            (
                route.line,
                "has no `route` destination: a redirect or a direct response makes no upstream call to retry",
            )
        };
        return Err(Refusal::at(why.0, &rf, why.1));
    };
    if let Value::Array(ds) = &dest.node.value {
        if ds.len() > 1 {
            out.unmodelled(
                dest.line,
                &sub(&rf, &dest.key),
                format!(
                    "not modelled: retrysim's dependency is one pool: the route's {} destinations are taken as one",
                    ds.len()
                ),
            );
        }
    }
    match get(rm, "retries") {
        None => default_policy(&mut out, route.line, &rf),
        Some(r) => {
            let pf = sub(&rf, &r.key);
            let pm = object(&r.node, &pf)?;
            policy(&mut out, r, pm, &pf)?;
        }
    }
    if let Some(t) = get(rm, "timeout") {
        let f = sub(&rf, &t.key);
        let ns = duration(t, &f)?;
        out.set("total_timeout", duration_text(ns), t.node.line, &f);
    }
    Ok(out)
}

/// The keys every retrying route gets, Envoy's as istiod configures them.
fn envoy_keys(out: &mut Mapped, base: Option<(u64, u64, String)>, line: u64, field: &str) {
    out.set_by_rule(
        "respect_retry_after",
        false,
        line,
        field,
        "Envoy ignores Retry-After without rate_limited_retry_back_off, which Istio does not set",
    );
    out.set_by_rule(
        "cancel_on_timeout",
        true,
        line,
        field,
        "Envoy resets the upstream request of a timed-out try",
    );
    out.set_by_rule(
        "backoff.kind",
        "envoy",
        line,
        field,
        "Envoy's jittered exponential backoff",
    );
    let factor = crate::model::backoff::envoy::DEFAULT_MAX_FACTOR;
    match base {
        Some((ns, bl, bf)) => {
            out.set("backoff.base", duration_text(ns), bl, &bf);
            out.set_by_rule(
                "backoff.max",
                duration_text(ns.saturating_mul(factor)),
                bl,
                &bf,
                "Envoy's default max_interval, 10 × base_interval (Istio sets only the base)",
            );
        }
        None => {
            let ns = crate::model::backoff::envoy::DEFAULT_BASE;
            out.set_by_rule(
                "backoff.base",
                duration_text(ns),
                line,
                field,
                "Envoy's default base_interval, 25 ms: Istio sets no retry_back_off without `backoff`",
            );
            out.set_by_rule(
                "backoff.max",
                duration_text(ns * factor),
                line,
                field,
                "Envoy's default max_interval, 10 × base_interval",
            );
        }
    }
}

/// Istio's default retry policy, for a route without `retries`.
fn default_policy(out: &mut Mapped, line: u64, rf: &str) {
    let mut scratch = Mapped::default();
    let mut on = Vec::new();
    for c in DEFAULT_RETRY_ON.split(',') {
        condition(&mut scratch, &mut on, c, line, rf, &[]);
    }
    let on = ordered(on);
    out.note(
        line,
        rf,
        format!(
            "no `retries`: Istio's default policy, {DEFAULT_RETRIES} retries on {DEFAULT_RETRY_ON} (no status code since Istio 1.24), of which retrysim produces only `unavailable`'s failures; a mesh's defaultHttpRetryPolicy replaces it (not in this file: write the keys beside `import`)"
        ),
    );
    out.set_by_rule(
        "max_attempts",
        (DEFAULT_RETRIES + 1) as i64,
        line,
        rf,
        "no `retries`: Istio's default policy, 2 retries and the first attempt",
    );
    out.set_by_rule(
        "retry_on",
        toml::Value::Array(on.iter().map(|c| toml::Value::from(*c)).collect()),
        line,
        rf,
        "Istio's default retryOn: connect-failure,refused-stream,unavailable,cancelled,retriable-status-codes",
    );
    envoy_keys(out, None, line, rf);
}

/// A route's `retries`.
fn policy(out: &mut Mapped, r: &Member, pm: &[Member], pf: &str) -> Result<(), Refusal> {
    for m in pm {
        let f = sub(pf, &m.key);
        let one = std::slice::from_ref(m);
        if let Some((_, why)) = RETRY_UNMODELLED.iter().find(|(k, _)| get(one, k).is_some()) {
            out.unmodelled(m.line, &f, format!("not modelled: {why}"));
        } else if !RETRY_KNOWN.iter().any(|k| get(one, k).is_some()) && m.node.value != Value::Null
        {
            out.unmodelled(
                m.line,
                &f,
                "not modelled: Istio's HTTPRetry has no such field (read: attempts, perTryTimeout, retryOn, backoff, retryRemoteLocalities, retryIgnorePreviousHosts)",
            );
        }
    }
    let (n, line, field) = match get(pm, "attempts") {
        Some(m) => {
            let f = sub(pf, &m.key);
            (attempts(m, &f)?, m.node.line, f)
        }
        None => (0, r.node.line, pf.to_string()),
    };
    if n == 0 {
        for k in ["per_try_timeout", "retry_on", "retry_remote_localities"] {
            if let Some(m) = get(pm, k) {
                return Err(Refusal::at(
                    m.line,
                    &sub(pf, &m.key),
                    "cannot be set when `attempts` is 0 or absent: Istio's validation refuses a retry policy whose retries are disabled",
                ));
            }
        }
        out.set_by_rule(
            "max_attempts",
            1,
            line,
            &field,
            "attempts 0 (or absent) disables Istio's retries",
        );
        return Ok(());
    }
    let n = n as u64;
    if n + 1 > crate::model::attempts::MAX_ATTEMPTS_CAP {
        return Err(Refusal::at(
            line,
            &field,
            format!(
                "must be below {} in retrysim (found {n})",
                crate::model::attempts::MAX_ATTEMPTS_CAP
            ),
        ));
    }
    let (on, on_line, on_field, on_note) = match get(pm, "retry_on") {
        Some(m) => {
            let f = sub(pf, &m.key);
            let s = string(m, &f)?;
            (retry_on(out, s, m.node.line, &f)?, m.node.line, f, None)
        }
        None => {
            let mut scratch = Mapped::default();
            let mut on = Vec::new();
            for c in DEFAULT_RETRY_ON.split(',') {
                condition(&mut scratch, &mut on, c, r.node.line, pf, &[]);
            }
            (
                ordered(on),
                r.node.line,
                pf.to_string(),
                Some("Istio's default retryOn: connect-failure,refused-stream,unavailable,cancelled,retriable-status-codes, of which retrysim produces only unavailable's failures"),
            )
        }
    };
    if on.is_empty() {
        out.set_by_rule(
            "max_attempts",
            1,
            on_line,
            &on_field,
            "no retry condition retrysim produces: Envoy never retries",
        );
    } else {
        out.set_by_rule("max_attempts", (n + 1) as i64, line, &field, "attempts + 1");
        let v = toml::Value::Array(on.iter().map(|c| toml::Value::from(*c)).collect());
        match on_note {
            Some(note) => out.set_by_rule("retry_on", v, on_line, &on_field, note),
            None => out.set("retry_on", v, on_line, &on_field),
        }
    }
    if let Some(m) = get(pm, "per_try_timeout") {
        let f = sub(pf, &m.key);
        let ns = duration(m, &f)?;
        out.set("attempt_timeout", duration_text(ns), m.node.line, &f);
    }
    let base = match get(pm, "backoff") {
        Some(m) => {
            let f = sub(pf, &m.key);
            let ns = duration(m, &f)?;
            let max = ns.saturating_mul(crate::model::backoff::envoy::DEFAULT_MAX_FACTOR);
            if max > crate::model::backoff::MAX_BACKOFF_PARAM {
                return Err(Refusal::at(
                    m.node.line,
                    &f,
                    format!(
                        "gives a backoff up to {} (10 × {}): retrysim takes at most {}",
                        duration_text(max),
                        duration_text(ns),
                        duration_text(crate::model::backoff::MAX_BACKOFF_PARAM)
                    ),
                ));
            }
            Some((ns, m.node.line, f))
        }
        None => None,
    };
    envoy_keys(out, base, r.node.line, pf);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_durations_parse_as_go_parses_them() {
        let ms = 1_000_000i64;
        for (s, want) in [
            ("2s", 2000 * ms),
            ("250ms", 250 * ms),
            ("0.5s", 500 * ms),
            ("1m30s", 90_000 * ms),
            ("1h", 3_600_000 * ms),
            ("1.5h", 5_400_000 * ms),
            ("10us", 10_000),
            ("10\u{b5}s", 10_000),
            ("3ns", 3),
            ("0", 0),
            ("-1s", -1000 * ms),
            ("+.5s", 500 * ms),
            ("1.s", 1000 * ms),
            ("2562047h47m16.854775807s", i64::MAX),
        ] {
            assert_eq!(go_duration(s), Ok(want), "{s}");
        }
        for (s, why) in [
            ("", "invalid duration"),
            ("1", "missing unit"),
            ("1d", "unknown unit \"d\""),
            (".s", "invalid duration"),
            ("s", "invalid duration"),
            ("1 s", "unknown unit \" s\""),
            ("2562047h47m16.854775808s", "invalid duration"),
            ("-", "invalid duration"),
            (
                "9223372036854775808ns9223372036854775808ns",
                "invalid duration",
            ),
        ] {
            assert_eq!(go_duration(s), Err(why.to_string()), "{s}");
        }
    }

    #[test]
    fn retry_on_numbers_are_status_codes_only_when_go_names_them() {
        assert_eq!(status_code("503"), Some(503));
        assert_eq!(status_code("+429"), Some(429));
        assert_eq!(status_code("306"), None);
        assert_eq!(status_code("5xx"), None);
        assert_eq!(status_code(" 503"), None);
    }
}
