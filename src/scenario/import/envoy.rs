//! `envoy`: an Envoy `RouteConfiguration` (YAML or JSON), one route's retry
//! policy mapped onto the arithmetic of the `envoy` preset.
//!
//! - The file is a `RouteConfiguration`, a Listener or HttpConnectionManager holding
//!   one (`route_config`), or a Bootstrap (its static listeners' route configurations,
//!   and its static clusters for the route's circuit breaker).
//! - The route is chosen by `virtual_hosts[].routes[].name` (`route`), within the
//!   virtual host named `virtual_host` when given; a name matching twice needs it; a
//!   file of one route needs no selector.
//! - Field names are read in snake_case or in lowerCamelCase, as proto3 JSON allows.
//! - `route.retry_policy`, or the virtual host's `retry_policy` when the route has
//!   none (Envoy's precedence); without either Envoy does not retry: one attempt.
//! - `retry_on`: `5xx` and `gateway-error` retry a 503 rejection but not a 429
//!   (`rejected_5xx`), an error and a per-try timeout, as the preset; `reset` a per-try
//!   timeout; `retriable-4xx` a 409 (`conflict`); `retriable-status-codes` the codes of
//!   `retriable_status_codes` (503, 429, 409); gRPC's `unavailable` and
//!   `deadline-exceeded` as the `grpc_service_config` format maps them. A condition
//!   retrysim never produces (`connect-failure`, `refused-stream`, ...) is a warning.
//! - `num_retries` (default 1) gives `max_attempts = num_retries + 1`;
//!   `per_try_timeout` `attempt_timeout`; `retry_back_off` (`base_interval` 25 ms,
//!   `max_interval` 10 × base) `backoff = { kind = "envoy" }`; the route `timeout`
//!   (15 s, `0s` none) `total_timeout`. Envoy resets a timed-out upstream request
//!   (`cancel_on_timeout`), ignores Retry-After without `rate_limited_retry_back_off`,
//!   and limits concurrent retries by its cluster's circuit breaker: the first
//!   DEFAULT-priority thresholds' `retry_budget` (`envoy` budget) or `max_retries`
//!   (`envoy_max_retries`), or their defaults when the file does not hold the cluster.
//! - Durations are proto3 JSON strings (`"0.025s"`): seconds with up to 9 decimals and
//!   an `s`; a negative one is refused, as Envoy's validation refuses it.

use super::grpc::{object, sub};
use super::json::{Member, Node, Value};
use super::{Format, Mapped, Refusal, Selector};
use crate::model::field::duration_text;

/// The format.
pub(crate) const FORMAT: Format = Format {
    name: "envoy",
    about: "an Envoy RouteConfiguration, Listener or Bootstrap (YAML or JSON): a route's retry_policy and timeout, and its cluster's circuit breaker",
    selector: &[
        (
            "route",
            "the route's `name` (`virtual_hosts[].routes[].name`)",
        ),
        (
            "virtual_host",
            "the virtual host's `name`, when route names repeat",
        ),
        (
            "authority",
            "a request's host (`api.example.com`): the virtual host Envoy picks for it by its `domains`",
        ),
        (
            "path",
            "a request path (`/pkg.Svc/Method`): the first route that matches it, as Envoy matches, for routes without names",
        ),
    ],
    map,
};

/// Envoy's route timeout when none is written.
pub(crate) const DEFAULT_TIMEOUT: u64 = 15_000_000_000;
/// Envoy's `num_retries` when none is written.
pub(crate) const DEFAULT_NUM_RETRIES: u64 = 1;
/// The cluster circuit breaker's default `max_retries` (concurrent retries).
pub(crate) const DEFAULT_MAX_RETRIES: i64 = 3;

/// Retry policy fields retrysim cannot model, and why.
const RETRY_UNMODELLED: [(&str, &str); 8] = [
    (
        "retry_host_predicate",
        "retrysim's dependency is one pool: there is no other host to pick",
    ),
    (
        "host_selection_retry_max_attempts",
        "retrysim's dependency is one pool: there is no other host to pick",
    ),
    (
        "retry_priority",
        "retrysim does not model priority levels of hosts",
    ),
    (
        "rate_limited_retry_back_off",
        "retrysim does not read reset headers: Envoy's Retry-After backoff is not imported (set `respect_retry_after` beside `import`)",
    ),
    (
        "per_try_idle_timeout",
        "retrysim has no idle timeout within a response",
    ),
    (
        "retriable_headers",
        "retrysim's answers carry no headers to match",
    ),
    (
        "retriable_request_headers",
        "retrysim's calls carry no headers to match",
    ),
    (
        "retry_options_predicates",
        "retrysim does not model retry option predicates",
    ),
];

/// The retry policy fields this format reads.
const RETRY_KNOWN: [&str; 5] = [
    "retry_on",
    "num_retries",
    "per_try_timeout",
    "retry_back_off",
    "retriable_status_codes",
];

/// `snake_case` as proto3 JSON's lowerCamelCase.
fn camel(snake: &str) -> String {
    let mut out = String::new();
    let mut up = false;
    for c in snake.chars() {
        if c == '_' {
            up = true;
        } else if up {
            out.push(c.to_ascii_uppercase());
            up = false;
        } else {
            out.push(c);
        }
    }
    out
}

/// The member `name` (snake_case) or its lowerCamelCase form, the last written
/// winning; a `null` is absent, as proto3 JSON reads it.
pub(super) fn get<'a>(members: &'a [Member], name: &str) -> Option<&'a Member> {
    let c = camel(name);
    members
        .iter()
        .rev()
        .find(|m| m.key == name || m.key == c)
        .filter(|m| m.node.value != Value::Null)
}

/// Whether `key` is `name` in either spelling.
fn is(key: &str, name: &str) -> bool {
    key == name || key == camel(name)
}

/// A string member, or a refusal.
pub(super) fn string<'a>(m: &'a Member, field: &str) -> Result<&'a str, Refusal> {
    match &m.node.value {
        Value::String(s) => Ok(s),
        v => Err(Refusal::at(
            m.node.line,
            field,
            format!("must be a string (found {})", v.kind()),
        )),
    }
}

/// A proto3 JSON uint32 (a number, or a string of digits).
fn uint32(m: &Member, field: &str) -> Result<u64, Refusal> {
    let n = &m.node;
    let v = match &n.value {
        Value::Number(x, _) if x.fract() == 0.0 && *x >= 0.0 => Some(*x),
        Value::String(s) if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) => {
            s.parse::<f64>().ok()
        }
        _ => None,
    };
    match v {
        Some(x) if x <= u32::MAX as f64 => Ok(x as u64),
        _ => Err(Refusal::at(
            n.line,
            field,
            format!(
                "must be a whole number from 0 to {} (a uint32; found {})",
                u32::MAX,
                match &n.value {
                    Value::Number(_, t) => t.clone(),
                    Value::String(s) => format!("\"{}\"", super::super::error::shown(s)),
                    v => v.kind().to_string(),
                }
            ),
        )),
    }
}

/// A `google.protobuf.Duration` in proto3 JSON (`"0.025s"`): an optional `-`, whole
/// seconds, an optional fraction of 1 to 9 digits, then `s`; in nanoseconds. A
/// negative one is refused (Envoy's validation wants it positive, or zero where
/// `zero_ok`).
fn duration(m: &Member, field: &str, zero_ok: bool) -> Result<u64, Refusal> {
    let n = &m.node;
    let bad = |why: String| Refusal::at(n.line, field, why);
    let s = string(m, field).map_err(|_| {
        bad(format!(
            "must be a duration string such as \"0.025s\" (found {})",
            n.value.kind()
        ))
    })?;
    let shown = super::super::error::shown(s);
    let malformed = || {
        bad(format!(
            "must be seconds with up to 9 decimals and an `s` suffix, such as \"0.025s\" or \"15s\", as proto3 JSON writes a Duration (found \"{shown}\")"
        ))
    };
    let num = s.strip_suffix('s').ok_or_else(malformed)?;
    let (neg, num) = match num.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, num),
    };
    let (whole, frac) = num.split_once('.').unwrap_or((num, ""));
    let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    if !digits(whole) || (num.contains('.') && (!digits(frac) || frac.len() > 9)) {
        return Err(malformed());
    }
    // proto3's Duration spans at most 315,576,000,000 s (10,000 years).
    let secs: u64 = match whole.parse() {
        Ok(v) if v <= 315_576_000_000 => v,
        _ => return Err(malformed()),
    };
    let mut nanos: u64 = if frac.is_empty() {
        0
    } else {
        frac.parse().map_err(|_| malformed())?
    };
    for _ in frac.len()..9 {
        nanos *= 10;
    }
    let total = secs.saturating_mul(1_000_000_000).saturating_add(nanos);
    if (neg && total > 0) || (total == 0 && !zero_ok) {
        return Err(bad(format!(
            "must be {}, as Envoy's validation requires (found \"{shown}\")",
            if zero_ok {
                "zero or positive"
            } else {
                "positive"
            }
        )));
    }
    Ok(total)
}

/// The array of `field` in `members` (absent: empty).
fn array<'a>(members: &'a [Member], name: &str, at: &str) -> Result<(&'a [Node], String), Refusal> {
    match get(members, name) {
        None => Ok((&[], sub(at, name))),
        Some(m) => {
            let f = sub(at, &m.key);
            match &m.node.value {
                Value::Array(a) => Ok((a.as_slice(), f)),
                v => Err(Refusal::at(
                    m.node.line,
                    &f,
                    format!("must be an array (found {})", v.kind()),
                )),
            }
        }
    }
}

/// The `name` of an object, empty when absent.
fn name_of(members: &[Member], at: &str) -> Result<String, Refusal> {
    match get(members, "name") {
        None => Ok(String::new()),
        Some(m) => string(m, &sub(at, &m.key)).map(str::to_string),
    }
}

/// The chosen route: its virtual host's members and field, its own, its field.
type Chosen<'a> = (&'a [Member], String, &'a Node, String);

/// A route configuration found in the file: its members and its field.
type RouteConfig<'a> = (&'a [Member], String);

/// The route configurations of the file: the file itself when it is one; the
/// `route_config` of each HTTP connection manager of a listener or of a bootstrap's
/// static listeners otherwise.
fn route_configs(top: &[Member]) -> Result<Vec<RouteConfig<'_>>, Refusal> {
    if get(top, "virtual_hosts").is_some() {
        return Ok(vec![(top, String::new())]);
    }
    let mut out = Vec::new();
    let mut rds = None;
    if let Some(sr) = get(top, "static_resources") {
        let srf = sr.key.clone();
        let (ls, lf) = array(object(&sr.node, &srf)?, "listeners", &srf)?;
        for (i, l) in ls.iter().enumerate() {
            let f = format!("{lf}[{i}]");
            listener(object(l, &f)?, &f, &mut out, &mut rds)?;
        }
    } else if get(top, "filter_chains").is_some() || get(top, "default_filter_chain").is_some() {
        listener(top, "", &mut out, &mut rds)?;
    } else if get(top, "route_config").is_some() || get(top, "rds").is_some() {
        manager(top, "", &mut out, &mut rds)?;
    } else {
        return Err(Refusal {
            line: Some(1),
            field: String::new(),
            message: "must be an Envoy RouteConfiguration (an object with `virtual_hosts`), a Listener, an HttpConnectionManager or a Bootstrap with static listeners".into(),
        });
    }
    if out.is_empty() {
        let message = match rds {
            Some((line, f)) => {
                return Err(Refusal::at(
                    line,
                    &f,
                    "names routes that RDS serves: import the RouteConfiguration RDS serves, a file of its own",
                ))
            }
            None => "holds no route configuration (no `route_config` in any HTTP connection manager)".to_string(),
        };
        return Err(Refusal {
            line: Some(1),
            field: String::new(),
            message,
        });
    }
    Ok(out)
}

/// An HTTP connection manager's inline routes, or where RDS serves them.
fn manager<'a>(
    mm: &'a [Member],
    f: &str,
    out: &mut Vec<RouteConfig<'a>>,
    rds: &mut Option<(u64, String)>,
) -> Result<(), Refusal> {
    if let Some(rc) = get(mm, "route_config") {
        let rcf = sub(f, &rc.key);
        out.push((object(&rc.node, &rcf)?, rcf));
    } else if let Some(r) = get(mm, "rds") {
        rds.get_or_insert((r.line, sub(f, &r.key)));
    }
    Ok(())
}

/// The HTTP connection managers of a listener's filter chains.
fn listener<'a>(
    lm: &'a [Member],
    lf: &str,
    out: &mut Vec<RouteConfig<'a>>,
    rds: &mut Option<(u64, String)>,
) -> Result<(), Refusal> {
    let (fcs, fcf) = array(lm, "filter_chains", lf)?;
    let mut chains: Vec<(&Node, String)> = fcs
        .iter()
        .enumerate()
        .map(|(i, c)| (c, format!("{fcf}[{i}]")))
        .collect();
    if let Some(d) = get(lm, "default_filter_chain") {
        chains.push((&d.node, sub(lf, &d.key)));
    }
    for (chain, cf) in chains {
        let (filters, ff) = array(object(chain, &cf)?, "filters", &cf)?;
        for (k, flt) in filters.iter().enumerate() {
            let fkf = format!("{ff}[{k}]");
            if let Some(tc) = get(object(flt, &fkf)?, "typed_config") {
                let tf = sub(&fkf, &tc.key);
                manager(object(&tc.node, &tf)?, &tf, out, rds)?;
            }
        }
    }
    Ok(())
}

/// Whether a route's `match` takes `path`, as Envoy matches it: `prefix`, `path` and
/// `path_separated_prefix`, case-sensitive unless `case_sensitive` is false. A match
/// Envoy evaluates on what retrysim cannot know (a regular expression, headers, query
/// parameters) is refused: the route must then be named.
fn matches(rm: &[Member], rf: &str, path: &str) -> Result<bool, Refusal> {
    let Some(m) = get(rm, "match") else {
        return Ok(false);
    };
    let mf = sub(rf, &m.key);
    let mm = object(&m.node, &mf)?;
    let sensitive = !matches!(
        get(mm, "case_sensitive").map(|c| &c.node.value),
        Some(Value::Bool(false))
    );
    let norm = |t: &str| {
        if sensitive {
            t.to_string()
        } else {
            t.to_ascii_lowercase()
        }
    };
    let p = norm(path);
    let text = |k: &str| -> Result<Option<String>, Refusal> {
        get(mm, k)
            .map(|x| string(x, &sub(&mf, &x.key)).map(norm))
            .transpose()
    };
    let hit = if let Some(pre) = text("prefix")? {
        p.starts_with(&pre)
    } else if let Some(exact) = text("path")? {
        p == exact
    } else if let Some(pre) = text("path_separated_prefix")? {
        p == pre || p.starts_with(&format!("{pre}/"))
    } else {
        let how = ["safe_regex", "path_match_policy", "connect_matcher"]
            .into_iter()
            .find_map(|k| get(mm, k))
            .map_or("no path rule retrysim reads".to_string(), |x| {
                format!("`{}`", x.key)
            });
        return Err(Refusal::at(
            m.node.line,
            &mf,
            format!("matches by {how}, which retrysim cannot evaluate against a path: select the route by its `route` name"),
        ));
    };
    if hit {
        for k in [
            "headers",
            "query_parameters",
            "runtime_fraction",
            "grpc",
            "tls_context",
            "dynamic_metadata",
            "filter_state",
        ] {
            if let Some(x) = get(mm, k) {
                return Err(Refusal::at(
                    x.line,
                    &sub(&mf, &x.key),
                    format!("matches the path only with `{}` too, which retrysim cannot evaluate: select the route by its `route` name", x.key),
                ));
            }
        }
    }
    Ok(hit)
}

/// The virtual host Envoy picks for a request's `authority` among `vhs`: an exact
/// domain, then the longest `*suffix`, then the longest `prefix*` (a wildcard stands
/// for at least one character), then `*`, compared case-insensitively, as
/// `RouteMatcher::findVirtualHost` does; `None` when none takes it (Envoy answers 404).
fn virtual_host_for(vhs: &[Node], f: &str, authority: &str) -> Result<Option<usize>, Refusal> {
    let host = authority.to_ascii_lowercase();
    let (mut exact, mut star) = (None, None);
    // The longest wildcard match so far: (its length, the virtual host).
    let mut suffix: Option<(usize, usize)> = None;
    let mut prefix: Option<(usize, usize)> = None;
    for (i, vh) in vhs.iter().enumerate() {
        let vhf = format!("{f}[{i}]");
        let (domains, df) = array(object(vh, &vhf)?, "domains", &vhf)?;
        for (k, d) in domains.iter().enumerate() {
            let Value::String(s) = &d.value else {
                return Err(Refusal::at(
                    d.line,
                    &format!("{df}[{k}]"),
                    format!("must be a string (found {})", d.value.kind()),
                ));
            };
            let s = s.to_ascii_lowercase();
            let longer =
                |best: Option<(usize, usize)>, len: usize| best.is_none_or(|(l, _)| len > l);
            if s == "*" {
                star.get_or_insert(i);
            } else if let Some(suf) = s.strip_prefix('*') {
                if host.len() > suf.len() && host.ends_with(suf) && longer(suffix, suf.len()) {
                    suffix = Some((suf.len(), i));
                }
            } else if let Some(pre) = s.strip_suffix('*') {
                if host.len() > pre.len() && host.starts_with(pre) && longer(prefix, pre.len()) {
                    prefix = Some((pre.len(), i));
                }
            } else if s == host {
                exact.get_or_insert(i);
            }
        }
    }
    Ok(exact
        .or(suffix.map(|(_, i)| i))
        .or(prefix.map(|(_, i)| i))
        .or(star))
}

/// Finds the route the selector names: by `name`, within the virtual host named
/// `virtual_host` when given; without `route`, the file's only route.
fn choose<'a>(configs: &[RouteConfig<'a>], selector: &Selector) -> Result<Chosen<'a>, Refusal> {
    let route = selector.get("route").filter(|r| !r.is_empty());
    let path = selector.get("path").map(String::as_str);
    let vh_wanted = selector.get("virtual_host").map(String::as_str);
    let authority = selector.get("authority").map(String::as_str);
    if vh_wanted.is_some() && authority.is_some() {
        return Err(Refusal {
            line: None,
            field: String::new(),
            message: "cannot be matched by both `virtual_host` and `authority`: give one".into(),
        });
    }
    if route.is_some() && path.is_some() {
        return Err(Refusal {
            line: None,
            field: String::new(),
            message: "cannot be matched by both `route` and `path`: give one".into(),
        });
    }
    let mut found: Vec<Chosen<'a>> = Vec::new();
    let mut all: Vec<Chosen<'a>> = Vec::new();
    let mut names = Vec::new();
    let mut unnamed = 0;
    let mut vf = String::new();
    let mut host_found = false;
    for (rc, rcf) in configs {
        let (vhs, f) = array(rc, "virtual_hosts", rcf)?;
        if vf.is_empty() {
            vf = f.clone();
        }
        let by_authority = match authority {
            Some(a) => Some(virtual_host_for(vhs, &f, a)?),
            None => None,
        };
        host_found |= by_authority.is_some_and(|c| c.is_some());
        for (i, vh) in vhs.iter().enumerate() {
            let vhf = format!("{f}[{i}]");
            let vm = object(vh, &vhf)?;
            let vname = name_of(vm, &vhf)?;
            if vh_wanted.is_some_and(|w| w != vname) || by_authority.is_some_and(|c| c != Some(i)) {
                continue;
            }
            let (routes, rf) = array(vm, "routes", &vhf)?;
            let mut path_matched = false;
            for (j, r) in routes.iter().enumerate() {
                let rjf = format!("{rf}[{j}]");
                let rm = object(r, &rjf)?;
                if let Some(p) = path {
                    // Envoy takes the first route of the virtual host that matches.
                    if !path_matched && matches(rm, &rjf, p)? {
                        path_matched = true;
                        found.push((vm, vhf.clone(), r, rjf.clone()));
                    }
                }
                let rname = name_of(rm, &rjf)?;
                if route.is_some_and(|w| *w == rname) {
                    found.push((vm, vhf.clone(), r, rjf.clone()));
                } else if rname.is_empty() {
                    unnamed += 1;
                } else if names.len() < 10 {
                    names.push(format!("\"{}\"", super::super::error::shown(&rname)));
                }
                all.push((vm, vhf.clone(), r, rjf));
            }
        }
    }
    if let (Some(a), false) = (authority, host_found) {
        return Err(Refusal {
            line: None,
            field: vf,
            message: format!(
                "has no virtual host whose `domains` take the authority \"{}\" (Envoy would answer 404)",
                super::super::error::shown(a)
            ),
        });
    }
    let within = match (vh_wanted, authority) {
        (Some(v), _) => format!(" in virtual host \"{}\"", super::super::error::shown(v)),
        (None, Some(a)) => format!(
            " in the virtual host of authority \"{}\"",
            super::super::error::shown(a)
        ),
        (None, None) => String::new(),
    };
    if let Some(p) = path {
        let shown = super::super::error::shown(p);
        return match found.len() {
            1 => Ok(found.remove(0)),
            0 => Err(Refusal {
                line: None,
                field: vf,
                message: format!("has no route that matches the path \"{shown}\"{within}"),
            }),
            _ => Err(Refusal {
                line: Some(found[1].2.line),
                field: found[1].3.clone(),
                message: format!(
                    "matches the path \"{shown}\" in a second virtual host (the first is {}): name the virtual host with `virtual_host`",
                    found[0].3
                ),
            }),
        };
    }
    let Some(route) = route else {
        if all.len() == 1 {
            return Ok(all.remove(0));
        }
        return Err(Refusal {
            line: None,
            field: String::new(),
            message: format!(
                "cannot be matched: it holds {} routes{within}, so an envoy import needs `route`, the route's `name` (the routes named: {}{})",
                all.len(),
                if names.is_empty() { "none".to_string() } else { names.join(", ") },
                if unnamed > 0 { format!("; {unnamed} without a name, which only a file of one route can select") } else { String::new() }
            ),
        });
    };
    let shown = super::super::error::shown(route);
    match found.len() {
        1 => Ok(found.remove(0)),
        0 => Err(Refusal {
            line: None,
            field: vf,
            message: format!(
                "has no route named \"{shown}\"{within} (the routes named: {})",
                if names.is_empty() { "none".to_string() } else { names.join(", ") }
            ),
        }),
        _ => Err(Refusal {
            line: Some(found[1].2.line),
            field: found[1].3.clone(),
            message: format!(
                "is a second route named \"{shown}\"{within} (the first is {}): name the virtual host with `virtual_host`",
                found[0].3
            ),
        }),
    }
}

/// The budget of the layer: the circuit breaker of the route's cluster, when the
/// file holds the cluster (a bootstrap's `static_resources.clusters`); Envoy's default
/// `max_retries = 3` otherwise, said at the retry policy (`line`, `pf`).
fn cluster_budget(
    out: &mut Mapped,
    top: &[Member],
    am: &[Member],
    af: &str,
    line: u64,
    pf: &str,
) -> Result<(), Refusal> {
    let default = |out: &mut Mapped, why: &str| {
        out.set_by_rule("budget.kind", "envoy_max_retries", line, pf, why);
        out.set_by_rule(
            "budget.max_retries",
            DEFAULT_MAX_RETRIES,
            line,
            pf,
            "Envoy's default max_retries; write `budget` beside `import` for your cluster's",
        );
    };
    let clusters = match get(top, "static_resources") {
        Some(sr) => array(object(&sr.node, &sr.key)?, "clusters", &sr.key)?,
        None => {
            default(
                out,
                "the cluster circuit breaker's concurrent retries; the cluster is not in a route configuration",
            );
            return Ok(());
        }
    };
    let Some(cm) = get(am, "cluster") else {
        default(
            out,
            "the route picks its cluster when it runs (weighted_clusters, cluster_header): Envoy's default circuit breaker",
        );
        return Ok(());
    };
    let name = string(cm, &sub(af, &cm.key))?;
    let mut found = None;
    for (i, c) in clusters.0.iter().enumerate() {
        let f = format!("{}[{i}]", clusters.1);
        let m = object(c, &f)?;
        if name_of(m, &f)? == name {
            found = Some((m, f));
            break;
        }
    }
    let Some((cl, clf)) = found else {
        default(
            out,
            &format!(
                "the cluster circuit breaker's concurrent retries; cluster \"{}\" is not among the file's static clusters",
                super::super::error::shown(name)
            ),
        );
        return Ok(());
    };
    if let Some(o) = get(cl, "outlier_detection") {
        out.unmodelled(
            o.line,
            &sub(&clf, &o.key),
            "not modelled: retrysim's dependency is one pool, with no host to eject",
        );
    }
    let Some(cb) = get(cl, "circuit_breakers") else {
        default(
            out,
            &format!(
                "cluster \"{}\" sets no circuit_breakers: Envoy's default thresholds",
                super::super::error::shown(name)
            ),
        );
        return Ok(());
    };
    let cbf = sub(&clf, &cb.key);
    let cbm = object(&cb.node, &cbf)?;
    if let Some(h) = get(cbm, "per_host_thresholds") {
        out.unmodelled(
            h.line,
            &sub(&cbf, &h.key),
            "not modelled: retrysim's dependency is one pool, with no hosts of its own",
        );
    }
    // The first thresholds of the DEFAULT priority, which Envoy uses.
    let (ths, thf) = array(cbm, "thresholds", &cbf)?;
    let mut chosen = None;
    for (i, t) in ths.iter().enumerate() {
        let f = format!("{thf}[{i}]");
        let tm = object(t, &f)?;
        let default_priority = match get(tm, "priority").map(|p| &p.node.value) {
            None => true,
            Some(Value::String(p)) => p == "DEFAULT",
            Some(Value::Number(x, _)) => *x == 0.0,
            Some(_) => false,
        };
        if default_priority {
            chosen = Some((t, tm, f));
            break;
        }
    }
    let Some((t, tm, tf)) = chosen else {
        default(
            out,
            "no thresholds for the DEFAULT priority, which retrysim's calls have: Envoy's default max_retries",
        );
        return Ok(());
    };
    for k in [
        "max_connections",
        "max_pending_requests",
        "max_requests",
        "max_connection_pools",
    ] {
        if let Some(m) = get(tm, k) {
            out.unmodelled(
                m.line,
                &sub(&tf, &m.key),
                "not modelled: retrysim's client does not limit what it sends to the cluster this way (write a `pool` or `bulkhead` beside `import`)",
            );
        }
    }
    if let Some(rb) = get(tm, "retry_budget") {
        let rbf = sub(&tf, &rb.key);
        let rbm = object(&rb.node, &rbf)?;
        out.set_by_rule(
            "budget.kind",
            "envoy",
            rb.node.line,
            &rbf,
            "the cluster's retry budget, which replaces max_retries",
        );
        if let Some(m) = get(tm, "max_retries") {
            out.note(
                m.line,
                &sub(&tf, &m.key),
                "ignored, as Envoy ignores it: the retry_budget replaces max_retries",
            );
        }
        match get(rbm, "budget_percent") {
            Some(bp) => {
                let bpf = sub(&rbf, &bp.key);
                let v = get(object(&bp.node, &bpf)?, "value");
                let pct = match v.map(|m| &m.node.value) {
                    None => 0.0,
                    Some(Value::Number(x, _)) if (0.0..=100.0).contains(x) => *x,
                    Some(other) => {
                        return Err(Refusal::at(
                            v.map_or(bp.node.line, |m| m.node.line),
                            &sub(&bpf, "value"),
                            format!(
                                "must be a percentage from 0 to 100, as Envoy's validation requires (found {})",
                                match other {
                                    Value::Number(_, t) => t.clone(),
                                    o => o.kind().to_string(),
                                }
                            ),
                        ))
                    }
                };
                let (l, f) = v.map_or((bp.node.line, bpf.clone()), |m| {
                    (m.node.line, sub(&bpf, &m.key))
                });
                out.set("budget.percent", pct, l, &f);
            }
            None => out.set_by_rule(
                "budget.percent",
                crate::model::budget::envoy::DEFAULT_PERCENT,
                rb.node.line,
                &rbf,
                "Envoy's default budget_percent, 20%",
            ),
        }
        match get(rbm, "min_retry_concurrency") {
            Some(m) => {
                let f = sub(&rbf, &m.key);
                let v = uint32(m, &f)?;
                out.set("budget.min_concurrency", v as i64, m.node.line, &f);
            }
            None => out.set_by_rule(
                "budget.min_concurrency",
                crate::model::budget::envoy::DEFAULT_MIN_CONCURRENCY as i64,
                rb.node.line,
                &rbf,
                "Envoy's default min_retry_concurrency, 3",
            ),
        }
        return Ok(());
    }
    out.set_by_rule(
        "budget.kind",
        "envoy_max_retries",
        t.line,
        &tf,
        "the cluster circuit breaker's concurrent retries",
    );
    match get(tm, "max_retries") {
        Some(m) => {
            let f = sub(&tf, &m.key);
            let v = uint32(m, &f)?;
            out.set("budget.max_retries", v as i64, m.node.line, &f);
        }
        None => out.set_by_rule(
            "budget.max_retries",
            DEFAULT_MAX_RETRIES,
            t.line,
            &tf,
            "Envoy's default max_retries, 3",
        ),
    }
    Ok(())
}

/// Adds the outcome classes of one `retry_on` condition, or a warning.
pub(super) fn condition(
    out: &mut Mapped,
    on: &mut Vec<&'static str>,
    cond: &str,
    line: u64,
    field: &str,
    codes: &[(u64, u64, String)],
) {
    let never =
        |what: &str| format!("not modelled: retrysim produces no {what}, so `{cond}` never fires");
    match cond {
        "5xx" | "gateway-error" => on.extend(["rejected_5xx", "error", "timeout"]),
        "reset" => on.push("timeout"),
        "retriable-4xx" => on.push("conflict"),
        "unavailable" => on.extend(["rejected", "error"]),
        "deadline-exceeded" => on.push("timeout"),
        "retriable-status-codes" => {
            if codes.is_empty() {
                out.note(line, field, "`retriable-status-codes` without `retriable_status_codes` retries nothing, as in Envoy");
            }
            let has = |c: u64| codes.iter().any(|(k, _, _)| *k == c);
            for (code, cline, cf) in codes {
                match code {
                    503 => on.push("rejected_5xx"),
                    429 => {
                        on.push("rejected");
                        if !has(503) {
                            out.unmodelled(
                                *cline,
                                cf,
                                "not modelled exactly: retrysim's `retry_on` cannot retry a 429 rejection without a 503 one, so 503 rejections are retried too",
                            );
                        }
                    }
                    409 => on.push("conflict"),
                    _ => out.unmodelled(
                        *cline,
                        cf,
                        format!("not modelled: retrysim answers no {code} (its statuses are 503 and 429 rejections and 409 conflicts), so it never fires"),
                    ),
                }
            }
        }
        "connect-failure" | "http3-post-connect-failure" | "reset-before-request" => {
            out.unmodelled(line, field, never("connection failure"))
        }
        "refused-stream" => out.unmodelled(line, field, never("REFUSED_STREAM reset")),
        "envoy-ratelimited" => out.unmodelled(line, field, never("x-envoy-ratelimited header")),
        "retriable-headers" => out.unmodelled(line, field, never("response headers")),
        "cancelled" | "internal" | "resource-exhausted" => out.unmodelled(
            line,
            field,
            never("such gRPC status (its failures are UNAVAILABLE, DEADLINE_EXCEEDED and ABORTED)"),
        ),
        _ => out.unmodelled(
            line,
            field,
            format!(
                "not modelled: \"{}\" is no retry condition Envoy knows, and Envoy ignores it",
                super::super::error::shown(cond)
            ),
        ),
    }
}

/// Maps a RouteConfiguration's route onto a layer.
pub(crate) fn map(text: &str, selector: &Selector) -> Result<Mapped, Refusal> {
    let root = super::parse_tree(text).map_err(|(line, m)| Refusal {
        line: Some(line),
        field: String::new(),
        message: m,
    })?;
    let top = object(&root, "(top level)")?;
    let configs = route_configs(top)?;
    let (vm, vhf, route, rf) = choose(&configs, selector)?;
    let rm = object(route, &rf)?;
    let mut out = Mapped {
        matched: rf.clone(),
        ..Mapped::default()
    };
    if let Some(mt) = get(rm, "match") {
        let mf = sub(&rf, &mt.key);
        for k in [
            "headers",
            "query_parameters",
            "runtime_fraction",
            "grpc",
            "tls_context",
            "dynamic_metadata",
        ] {
            if let Some(h) = get(object(&mt.node, &mf)?, k) {
                out.unmodelled(
                    h.line,
                    &sub(&mf, &h.key),
                    "not modelled: retrysim sends every call of the layer through this route, whatever it matches",
                );
            }
        }
    }
    let Some(action) = get(rm, "route") else {
        return Err(Refusal::at(
            route.line,
            &rf,
            "has no `route` action: a redirect or a direct response makes no upstream call to retry",
        ));
    };
    let af = sub(&rf, &action.key);
    let am = object(&action.node, &af)?;
    if let Some(h) = get(am, "hedge_policy") {
        out.unmodelled(
            h.line,
            &sub(&af, &h.key),
            "not modelled: Envoy's hedging on per-try timeouts is not imported (write `hedging` beside `import`)",
        );
    }
    let policy = match get(am, "retry_policy") {
        Some(p) => Some((p, sub(&af, &p.key))),
        None => get(vm, "retry_policy").map(|p| (p, sub(&vhf, &p.key))),
    };
    if let Some((p, pf)) = policy {
        let pm = object(&p.node, &pf)?;
        for m in pm {
            let f = sub(&pf, &m.key);
            if let Some((_, why)) = RETRY_UNMODELLED.iter().find(|(k, _)| is(&m.key, k)) {
                out.unmodelled(m.line, &f, format!("not modelled: {why}"));
            } else if !RETRY_KNOWN.iter().any(|k| is(&m.key, k)) {
                out.unmodelled(
                    m.line,
                    &f,
                    format!(
                        "not modelled: Envoy's RetryPolicy has no such field (read: {})",
                        RETRY_KNOWN.join(", ")
                    ),
                );
            }
        }
        let (nr, line, field) = match get(pm, "num_retries") {
            Some(m) => {
                let f = sub(&pf, &m.key);
                (uint32(m, &f)?, m.node.line, f)
            }
            None => (DEFAULT_NUM_RETRIES, p.node.line, pf.clone()),
        };
        if nr + 1 > crate::model::attempts::MAX_ATTEMPTS_CAP {
            return Err(Refusal::at(
                line,
                &field,
                format!(
                    "must be below {} in retrysim (found {nr})",
                    crate::model::attempts::MAX_ATTEMPTS_CAP
                ),
            ));
        }
        let mut codes = Vec::new();
        let (cs, cf) = array(pm, "retriable_status_codes", &pf)?;
        for (k, c) in cs.iter().enumerate() {
            let f = format!("{cf}[{k}]");
            let m = Member {
                key: String::new(),
                line: c.line,
                node: c.clone(),
            };
            let v = uint32(&m, &f)?;
            if !(100..=599).contains(&v) {
                return Err(Refusal::at(
                    c.line,
                    &f,
                    format!("is no HTTP status code (found {v}; allowed: 100 to 599)"),
                ));
            }
            codes.push((v, c.line, f));
        }
        let mut on = Vec::new();
        let (ron_line, ron_field) = match get(pm, "retry_on") {
            Some(m) => {
                let f = sub(&pf, &m.key);
                let s = string(m, &f)?;
                for c in s.split(',').map(str::trim).filter(|c| !c.is_empty()) {
                    condition(&mut out, &mut on, c, m.node.line, &f, &codes);
                }
                (m.node.line, f)
            }
            None => (p.node.line, pf.clone()),
        };
        if on.contains(&"rejected") {
            on.retain(|c| *c != "rejected_5xx");
        }
        let order = ["rejected", "rejected_5xx", "error", "timeout", "conflict"];
        let on: Vec<&str> = order.into_iter().filter(|c| on.contains(c)).collect();
        if on.is_empty() {
            out.set_by_rule(
                "max_attempts",
                1,
                ron_line,
                &ron_field,
                "no retry condition retrysim produces: Envoy never retries",
            );
        } else {
            let note = if get(pm, "num_retries").is_some() {
                "num_retries + 1"
            } else {
                "Envoy's default num_retries 1, plus the first attempt"
            };
            out.set_by_rule("max_attempts", (nr + 1) as i64, line, &field, note);
            out.set(
                "retry_on",
                toml::Value::Array(on.iter().map(|c| toml::Value::from(*c)).collect()),
                ron_line,
                &ron_field,
            );
        }
        if let Some(m) = get(pm, "per_try_timeout") {
            let f = sub(&pf, &m.key);
            let ns = duration(m, &f, true)?;
            if ns > 0 {
                out.set("attempt_timeout", duration_text(ns), m.node.line, &f);
            }
        }
        out.set_by_rule(
            "respect_retry_after",
            false,
            p.node.line,
            &pf,
            "Envoy ignores Retry-After without rate_limited_retry_back_off",
        );
        out.set_by_rule(
            "cancel_on_timeout",
            true,
            p.node.line,
            &pf,
            "Envoy resets the upstream request of a timed-out try",
        );
        out.set_by_rule(
            "backoff.kind",
            "envoy",
            p.node.line,
            &pf,
            "Envoy's jittered exponential backoff",
        );
        let (base, max) = match get(pm, "retry_back_off") {
            Some(b) => {
                let bf = sub(&pf, &b.key);
                let bm = object(&b.node, &bf)?;
                let bi = get(bm, "base_interval").ok_or_else(|| {
                    Refusal::at(b.node.line, &bf, "needs `base_interval`, as Envoy requires")
                })?;
                let bif = sub(&bf, &bi.key);
                let base = duration(bi, &bif, false)?;
                out.set("backoff.base", duration_text(base), bi.node.line, &bif);
                match get(bm, "max_interval") {
                    Some(mi) => {
                        let mif = sub(&bf, &mi.key);
                        let max = duration(mi, &mif, false)?;
                        if max < base {
                            return Err(Refusal::at(
                                mi.node.line,
                                &mif,
                                format!(
                                    "must be at least base_interval ({}), as Envoy requires (found \"{}\")",
                                    duration_text(base),
                                    duration_text(max)
                                ),
                            ));
                        }
                        out.set("backoff.max", duration_text(max), mi.node.line, &mif);
                        (base, max)
                    }
                    None => {
                        let max =
                            base.saturating_mul(crate::model::backoff::envoy::DEFAULT_MAX_FACTOR);
                        out.set_by_rule(
                            "backoff.max",
                            duration_text(max),
                            b.node.line,
                            &bf,
                            "Envoy's default max_interval, 10 × base_interval",
                        );
                        (base, max)
                    }
                }
            }
            None => {
                let base = crate::model::backoff::envoy::DEFAULT_BASE;
                let max = base * crate::model::backoff::envoy::DEFAULT_MAX_FACTOR;
                out.set_by_rule(
                    "backoff.base",
                    duration_text(base),
                    p.node.line,
                    &pf,
                    "Envoy's default base_interval, 25 ms",
                );
                out.set_by_rule(
                    "backoff.max",
                    duration_text(max),
                    p.node.line,
                    &pf,
                    "Envoy's default max_interval, 10 × base_interval",
                );
                (base, max)
            }
        };
        if max > crate::model::backoff::MAX_BACKOFF_PARAM {
            return Err(Refusal::at(
                p.node.line,
                &pf,
                format!(
                    "sets a backoff of {} (base {}): retrysim takes at most {}",
                    duration_text(max),
                    duration_text(base),
                    duration_text(crate::model::backoff::MAX_BACKOFF_PARAM)
                ),
            ));
        }
        cluster_budget(&mut out, top, am, &af, p.node.line, &pf)?;
    } else {
        out.set_by_rule(
            "max_attempts",
            1,
            action.node.line,
            &af,
            "no retry_policy on the route or its virtual host: Envoy does not retry",
        );
    }
    match get(am, "timeout") {
        Some(t) => {
            let f = sub(&af, &t.key);
            let ns = duration(t, &f, true)?;
            if ns == 0 {
                out.note(
                    t.node.line,
                    &f,
                    "0s disables Envoy's route timeout: the layer has no total_timeout",
                );
            } else {
                out.set("total_timeout", duration_text(ns), t.node.line, &f);
            }
        }
        None => out.set_by_rule(
            "total_timeout",
            duration_text(DEFAULT_TIMEOUT),
            action.node.line,
            &af,
            "Envoy's default route timeout, 15 s, over all attempts",
        ),
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ns(text: &str) -> Result<u64, Refusal> {
        let n = super::super::json::parse(&format!("{{\"d\": {text}}}")).unwrap();
        let Value::Object(m) = &n.value else { panic!() };
        duration(&m[0], "d", false)
    }

    #[test]
    fn durations_parse_as_proto3_json_writes_them() {
        assert_eq!(ns("\"0.025s\""), Ok(25_000_000));
        assert_eq!(ns("\"15s\""), Ok(15_000_000_000));
        assert_eq!(ns("\"1.000000001s\""), Ok(1_000_000_001));
        for bad in [
            "\"0.025\"",
            "\"25ms\"",
            "\"s\"",
            "\".5s\"",
            "\"1.s\"",
            "\"1.0000000001s\"",
            "0.025",
            "\"-1s\"",
            "\"0s\"",
            "\"1 s\"",
        ] {
            let e = ns(bad).unwrap_err();
            assert_eq!((e.line, e.field.as_str()), (Some(1), "d"), "{bad}");
        }
    }

    #[test]
    fn camel_case_is_proto3_jsons_spelling() {
        assert_eq!(camel("retry_back_off"), "retryBackOff");
        assert_eq!(camel("per_try_timeout"), "perTryTimeout");
    }
}
