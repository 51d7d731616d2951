//! `grpc_service_config`: a gRPC service config (JSON, `grpc/service_config/
//! service_config.proto`, gRFC A6), mapped onto the arithmetic of the `grpc` preset.
//!
//! - The method config is chosen as gRPC does: the entry naming the service and the
//!   method, then the one naming the service alone (method empty or absent), then the
//!   default (service empty or absent); a name with a method but no service, or a
//!   name given twice, is refused as grpc-go refuses the config.
//! - Field names match case-insensitively, the last written winning, as grpc-go's
//!   `encoding/json` reads them (its retry example writes `MaxAttempts`).
//! - `retryPolicy`: `maxAttempts` (at least 2; gRPC lowers more than 5 to 5, so the
//!   layer gets `max_attempts_cap = 5`), `initialBackoff`, `maxBackoff` (durations as
//!   grpc-go parses them: decimal seconds ending in `s`, `.01s` included; positive),
//!   `backoffMultiplier` (positive), `retryableStatusCodes` (names or numbers, not
//!   empty, not OK) onto `backoff = { kind = "grpc", ..., formula = "current" }` and
//!   `retry_on`; a server pushback is honoured (`respect_retry_after = true`).
//! - `hedgingPolicy`: `maxAttempts` (2 or more, lowered to 5), `hedgingDelay`,
//!   `nonFatalStatusCodes` onto `hedging`, the layer making one call.
//! - `timeout` onto `total_timeout` (the deadline of the call, all attempts included).
//! - `retryThrottling` (`maxTokens` an integer in (0, 1000], `tokenRatio` > 0) onto
//!   `budget = { kind = "token_bucket" }`.
//!
//! Status codes: UNAVAILABLE is a rejection or an error (`["rejected", "error"]`, as
//! the preset: gRPC maps HTTP 503 and 429 to it), DEADLINE_EXCEEDED a `timeout`,
//! ABORTED a `conflict`; retrysim produces no other failure, so another code is a
//! warning (it never fires), and OK, or a code that does not exist, is refused.

use super::json::{self, Member, Node, Value};
use super::{Format, Mapped, Refusal, Selector};
use crate::model::field::duration_text;

/// The format.
pub(crate) const FORMAT: Format = Format {
    name: "grpc_service_config",
    about: "a gRPC service config (JSON): methodConfig's retryPolicy, hedgingPolicy and timeout, and retryThrottling",
    selector: &[
        ("service", "the full service name (`pkg.Service`)"),
        ("method", "the method (`Get`)"),
    ],
    map,
};

/// gRPC's client-side limit on attempts (grpc-go's `maxAttempts`, grpc-java's
/// `maxRetryAttempts` and `maxHedgedAttempts`): larger values are lowered to it.
pub(crate) const MAX_ATTEMPTS: u64 = 5;

/// gRPC status codes by number.
const CODES: [&str; 17] = [
    "OK",
    "CANCELLED",
    "UNKNOWN",
    "INVALID_ARGUMENT",
    "DEADLINE_EXCEEDED",
    "NOT_FOUND",
    "ALREADY_EXISTS",
    "PERMISSION_DENIED",
    "RESOURCE_EXHAUSTED",
    "FAILED_PRECONDITION",
    "ABORTED",
    "OUT_OF_RANGE",
    "UNIMPLEMENTED",
    "INTERNAL",
    "UNAVAILABLE",
    "DATA_LOSS",
    "UNAUTHENTICATED",
];

/// The outcome classes a status code is in retrysim, `None` for one it never produces.
fn classes(code: &str) -> Option<&'static [&'static str]> {
    match code {
        "UNAVAILABLE" => Some(&["rejected", "error"]),
        "DEADLINE_EXCEEDED" => Some(&["timeout"]),
        "ABORTED" => Some(&["conflict"]),
        _ => None,
    }
}

/// Method config fields retrysim cannot model.
const METHOD_UNMODELLED: [(&str, &str); 3] = [
    (
        "waitForReady",
        "retrysim's attempts never wait for a connection to be ready",
    ),
    (
        "maxRequestMessageBytes",
        "retrysim does not model message sizes",
    ),
    (
        "maxResponseMessageBytes",
        "retrysim does not model message sizes",
    ),
];

/// Top-level fields retrysim cannot model.
const TOP_UNMODELLED: [(&str, &str); 3] = [
    (
        "loadBalancingPolicy",
        "retrysim does not model load balancing",
    ),
    (
        "loadBalancingConfig",
        "retrysim does not model load balancing",
    ),
    ("healthCheckConfig", "retrysim does not model health checks"),
];

/// The members of an object node, or a refusal naming `field`.
pub(super) fn object<'a>(n: &'a Node, field: &str) -> Result<&'a [Member], Refusal> {
    match &n.value {
        Value::Object(m) => Ok(m),
        v => Err(Refusal::at(
            n.line,
            field,
            format!("must be an object (found {})", v.kind()),
        )),
    }
}

/// A field path with a member appended.
pub(super) fn sub(field: &str, key: &str) -> String {
    if field.is_empty() {
        key.to_string()
    } else {
        format!("{field}.{key}")
    }
}

/// Warns about every member of `members` not in `known`, and about those in
/// `unmodelled`.
fn unknown(
    out: &mut Mapped,
    members: &[Member],
    field: &str,
    known: &[&str],
    unmodelled: &[(&str, &str)],
) {
    for m in members {
        let f = sub(field, &m.key);
        if let Some((_, why)) = unmodelled
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(&m.key))
        {
            out.unmodelled(m.line, &f, format!("not modelled: {why}"));
        } else if !known.iter().any(|k| k.eq_ignore_ascii_case(&m.key)) {
            out.unmodelled(
                m.line,
                &f,
                format!(
                    "not modelled: gRPC's service config has no such field here (known: {})",
                    known.join(", ")
                ),
            );
        }
    }
}

/// A whole number at least `min`.
fn whole(m: &Member, field: &str, min: u64) -> Result<u64, Refusal> {
    let n = &m.node;
    match &n.value {
        Value::Number(x, _) if x.fract() == 0.0 && *x >= min as f64 && *x <= 1e15 => Ok(*x as u64),
        Value::Number(_, text) => Err(Refusal::at(
            n.line,
            field,
            format!("must be a whole number of at least {min}, as gRPC requires (found {text})"),
        )),
        v => Err(Refusal::at(
            n.line,
            field,
            format!("must be a number (found {})", v.kind()),
        )),
    }
}

/// A positive number: its value and its TOML (an integer when written as one).
fn positive(m: &Member, field: &str, max: f64) -> Result<(f64, toml::Value), Refusal> {
    let n = &m.node;
    match &n.value {
        Value::Number(x, text) if *x > 0.0 && *x <= max => {
            let v = match text.parse::<i64>() {
                Ok(i) => toml::Value::Integer(i),
                Err(_) => toml::Value::Float(*x),
            };
            Ok((*x, v))
        }
        Value::Number(_, text) => Err(Refusal::at(
            n.line,
            field,
            format!("must be above 0 and at most {max} (found {text})"),
        )),
        v => Err(Refusal::at(
            n.line,
            field,
            format!("must be a number (found {})", v.kind()),
        )),
    }
}

/// A `google.protobuf.Duration` as grpc-go parses it (`parseDuration`): an optional
/// whole number of seconds, an optional fraction of up to 9 digits, at least one of
/// the two, then `s`; returned in nanoseconds, which must be positive unless
/// `zero_ok`.
fn duration(m: &Member, field: &str, zero_ok: bool) -> Result<u64, Refusal> {
    let n = &m.node;
    let bad = |why: &str| Refusal::at(n.line, field, why.to_string());
    let Value::String(s) = &n.value else {
        return Err(bad(&format!(
            "must be a duration string such as \"0.1s\" (found {})",
            n.value.kind()
        )));
    };
    let shown = super::super::error::shown(s);
    let malformed = || {
        bad(&format!(
            "must be seconds with an `s` suffix, such as \"0.1s\" or \"2s\", as gRPC parses durations (found \"{shown}\")"
        ))
    };
    let Some(num) = s.strip_suffix('s') else {
        return Err(malformed());
    };
    let (whole, frac) = match num.split_once('.') {
        Some((w, f)) => (w, f),
        None => (num, ""),
    };
    let digits = |t: &str| t.bytes().all(|b| b.is_ascii_digit());
    let (neg, wdigits) = match whole.strip_prefix('-') {
        Some(w) => (true, w),
        None => (false, whole.strip_prefix('+').unwrap_or(whole)),
    };
    if (whole.is_empty() && frac.is_empty())
        || !digits(wdigits)
        || !digits(frac)
        || frac.len() > 9
        || (wdigits.is_empty() && !whole.is_empty())
    {
        return Err(malformed());
    }
    // grpc-go reads the seconds as a 32-bit integer.
    let secs: u64 = if wdigits.is_empty() {
        0
    } else {
        match wdigits.parse::<u64>() {
            Ok(v) if v <= i32::MAX as u64 => v,
            _ => return Err(malformed()),
        }
    };
    let mut nanos: u64 = if frac.is_empty() {
        0
    } else {
        frac.parse().map_err(|_| malformed())?
    };
    for _ in frac.len()..9 {
        nanos *= 10;
    }
    let total = secs * 1_000_000_000 + nanos;
    if neg && total > 0 || (total == 0 && !zero_ok) {
        return Err(bad(&format!(
            "must be a positive duration, as gRPC requires (found \"{shown}\")"
        )));
    }
    Ok(total)
}

/// A list of status codes (names or numbers) as outcome classes, in class order;
/// codes retrysim never produces are warnings.
fn codes(
    out: &mut Mapped,
    m: &Member,
    field: &str,
    required: bool,
) -> Result<Vec<&'static str>, Refusal> {
    let n = &m.node;
    let Value::Array(items) = &n.value else {
        return Err(Refusal::at(
            n.line,
            field,
            format!(
                "must be an array of status codes such as [\"UNAVAILABLE\"] (found {})",
                n.value.kind()
            ),
        ));
    };
    if required && items.is_empty() {
        return Err(Refusal::at(
            n.line,
            field,
            "must name at least one status code, as gRPC requires (found [])",
        ));
    }
    let mut found = Vec::new();
    for (k, item) in items.iter().enumerate() {
        let f = format!("{field}[{k}]");
        let code = match &item.value {
            Value::String(s) => CODES.iter().find(|c| **c == s.as_str()).copied(),
            Value::Number(x, _) if x.fract() == 0.0 && (0.0..17.0).contains(x) => {
                Some(CODES[*x as usize])
            }
            _ => None,
        };
        let Some(code) = code else {
            let shown = match &item.value {
                Value::String(s) => format!("\"{}\"", super::super::error::shown(s)),
                Value::Number(_, t) => t.clone(),
                v => v.kind().to_string(),
            };
            return Err(Refusal::at(
                item.line,
                &f,
                format!(
                    "is no gRPC status code (found {shown}; allowed: the names {} or their numbers 0 to 16)",
                    CODES.join(", ")
                ),
            ));
        };
        if code == "OK" {
            return Err(Refusal::at(
                item.line,
                &f,
                "must not be OK, which is no failure (gRPC refuses it)",
            ));
        }
        match classes(code) {
            Some(cs) => found.extend_from_slice(cs),
            None => out.unmodelled(
                item.line,
                &f,
                format!(
                    "not modelled: retrysim produces no failure gRPC would report as {code} ({}), so it never fires",
                    if code == "RESOURCE_EXHAUSTED" {
                        "its rejections, a limiter's included, are UNAVAILABLE, as gRPC maps HTTP 429 and 503"
                    } else {
                        "its failures are UNAVAILABLE, DEADLINE_EXCEEDED and ABORTED"
                    }
                ),
            ),
        }
    }
    let order = ["rejected", "error", "timeout", "conflict"];
    Ok(order.into_iter().filter(|c| found.contains(c)).collect())
}

/// One `name` entry: (service, method), empty when absent.
fn name_of(n: &Node, field: &str) -> Result<(String, String), Refusal> {
    let m = object(n, field)?;
    let s = |k: &str| -> Result<String, Refusal> {
        match json::get(m, k) {
            None => Ok(String::new()),
            Some(Member {
                node:
                    Node {
                        value: Value::String(s),
                        ..
                    },
                ..
            }) => Ok(s.clone()),
            Some(Member {
                node: Node {
                    value: Value::Null, ..
                },
                ..
            }) => Ok(String::new()),
            Some(x) => Err(Refusal::at(
                x.node.line,
                &sub(field, &x.key),
                format!("must be a string (found {})", x.node.value.kind()),
            )),
        }
    };
    let (service, method) = (s("service")?, s("method")?);
    if service.is_empty() && !method.is_empty() {
        return Err(Refusal::at(
            n.line,
            field,
            format!("names method \"{}\" without a service, which gRPC refuses (a default entry leaves both empty)", super::super::error::shown(&method)),
        ));
    }
    Ok((service, method))
}

/// The chosen method config: its index, its node, and which name matched.
fn choose<'a>(
    top: &'a [Member],
    selector: &Selector,
) -> Result<(usize, &'a Node, String), Refusal> {
    let service = selector.get("service").map(String::as_str).unwrap_or("");
    let method = selector.get("method").map(String::as_str).unwrap_or("");
    if service.is_empty() && !method.is_empty() {
        return Err(Refusal {
            line: None,
            field: String::new(),
            message:
                "cannot be matched: `method` needs `service`, as gRPC names a method by its service"
                    .into(),
        });
    }
    let mut names: Vec<((String, String), (usize, usize))> = Vec::new();
    let mut entries: Vec<&Node> = Vec::new();
    if let Some(mc) = json::get(top, "methodConfig") {
        let f = mc.key.clone();
        let items = match &mc.node.value {
            Value::Array(a) => a.as_slice(),
            Value::Null => &[],
            v => {
                return Err(Refusal::at(
                    mc.node.line,
                    &f,
                    format!("must be an array (found {})", v.kind()),
                ))
            }
        };
        for (i, entry) in items.iter().enumerate() {
            let ef = format!("{f}[{i}]");
            let em = object(entry, &ef)?;
            entries.push(entry);
            let Some(nm) = json::get(em, "name") else {
                continue;
            };
            let nf = sub(&ef, &nm.key);
            let list = match &nm.node.value {
                Value::Array(a) => a.as_slice(),
                Value::Null => &[],
                v => {
                    return Err(Refusal::at(
                        nm.node.line,
                        &nf,
                        format!("must be an array (found {})", v.kind()),
                    ))
                }
            };
            for (j, n) in list.iter().enumerate() {
                let jf = format!("{nf}[{j}]");
                let key = name_of(n, &jf)?;
                if let Some((_, (pi, pj))) = names.iter().find(|(k, _)| *k == key) {
                    return Err(Refusal::at(
                        n.line,
                        &jf,
                        format!(
                            "repeats the name of {f}[{pi}].{}[{pj}], which gRPC refuses",
                            nm.key
                        ),
                    ));
                }
                names.push((key, (i, j)));
            }
        }
    }
    let mut tries = Vec::new();
    if !service.is_empty() {
        if !method.is_empty() {
            tries.push((service, method));
        }
        tries.push((service, ""));
    }
    tries.push(("", ""));
    for (s, m) in tries {
        if let Some((_, (i, j))) = names.iter().find(|((ns, nm), _)| ns == s && nm == m) {
            let mc = json::get(top, "methodConfig").expect("names come from methodConfig");
            let nkey = object(entries[*i], "")?
                .iter()
                .rev()
                .find(|m| m.key.eq_ignore_ascii_case("name"))
                .map_or("name".to_string(), |m| m.key.clone());
            return Ok((*i, entries[*i], format!("{}[{i}].{nkey}[{j}]", mc.key)));
        }
    }
    let listed: Vec<String> = names
        .iter()
        .take(10)
        .map(|((s, m), _)| match (s.is_empty(), m.is_empty()) {
            (true, _) => "the default".to_string(),
            (false, true) => format!("{s}/*"),
            (false, false) => format!("{s}/{m}"),
        })
        .collect();
    let wanted = match (service.is_empty(), method.is_empty()) {
        (true, _) => "the default entry (no `service` was given)".to_string(),
        (false, true) => format!("service \"{}\"", super::super::error::shown(service)),
        (false, false) => format!(
            "service \"{}\" method \"{}\"",
            super::super::error::shown(service),
            super::super::error::shown(method)
        ),
    };
    Err(Refusal {
        line: None,
        field: "methodConfig".into(),
        message: format!(
            "has no entry for {wanted}: gRPC tries the service and method, then the service, then the default (service empty); the file names {}",
            if listed.is_empty() {
                "none".to_string()
            } else {
                listed.join(", ")
            }
        ),
    })
}

/// Maps a service config onto a layer.
pub(crate) fn map(text: &str, selector: &Selector) -> Result<Mapped, Refusal> {
    let root = json::parse(text).map_err(|(line, m)| Refusal {
        line: Some(line),
        field: String::new(),
        message: m,
    })?;
    let top = object(&root, "(top level)")?;
    let (i, entry, matched) = choose(top, selector)?;
    let mut out = Mapped {
        matched,
        ..Mapped::default()
    };
    unknown(
        &mut out,
        top,
        "",
        &[
            "methodConfig",
            "retryThrottling",
            "loadBalancingPolicy",
            "loadBalancingConfig",
            "healthCheckConfig",
        ],
        &TOP_UNMODELLED,
    );
    let mcf = json::get(top, "methodConfig").map_or("methodConfig".into(), |m| m.key.clone());
    let ef = format!("{mcf}[{i}]");
    let em = object(entry, &ef)?;
    unknown(
        &mut out,
        em,
        &ef,
        &[
            "name",
            "waitForReady",
            "timeout",
            "maxRequestMessageBytes",
            "maxResponseMessageBytes",
            "retryPolicy",
            "hedgingPolicy",
        ],
        &METHOD_UNMODELLED,
    );
    let present = |k: &str| json::get(em, k).filter(|m| m.node.value != Value::Null);
    let retry = present("retryPolicy");
    let hedge = present("hedgingPolicy");
    if let (Some(_), Some(h)) = (retry, hedge) {
        return Err(Refusal::at(
            h.line,
            &sub(&ef, &h.key),
            "cannot be set beside retryPolicy: gRPC takes one of the two",
        ));
    }
    if let Some(r) = retry {
        let rf = sub(&ef, &r.key);
        let rm = object(&r.node, &rf)?;
        unknown(
            &mut out,
            rm,
            &rf,
            &[
                "maxAttempts",
                "initialBackoff",
                "maxBackoff",
                "backoffMultiplier",
                "retryableStatusCodes",
                "perAttemptRecvTimeout",
            ],
            &[(
                "perAttemptRecvTimeout",
                "retrysim has no receive timeout between messages of a stream",
            )],
        );
        let need = |k: &str| {
            json::get(rm, k).ok_or_else(|| {
                Refusal::at(r.node.line, &rf, format!("needs `{k}`, as gRPC requires"))
            })
        };
        let ma = need("maxAttempts")?;
        let maf = sub(&rf, &ma.key);
        let n = whole(ma, &maf, 2)?;
        // Written as it is (explain then says gRPC's cap lowered it), unless beyond
        // what a layer takes: then as gRPC applies it.
        let written = if n > crate::model::attempts::MAX_ATTEMPTS_CAP {
            MAX_ATTEMPTS
        } else {
            n
        };
        out.set("max_attempts", written as i64, ma.node.line, &maf);
        if n > MAX_ATTEMPTS {
            out.note(
                ma.node.line,
                &maf,
                format!("gRPC lowers maxAttempts to {MAX_ATTEMPTS} without a word (found {n}): the layer makes at most {MAX_ATTEMPTS} attempts"),
            );
        }
        out.set_by_rule(
            "max_attempts_cap",
            MAX_ATTEMPTS as i64,
            ma.node.line,
            &maf,
            "gRPC's client-side limit of 5 attempts",
        );
        let codes_m = need("retryableStatusCodes")?;
        let cf = sub(&rf, &codes_m.key);
        let on = codes(&mut out, codes_m, &cf, true)?;
        out.set(
            "retry_on",
            toml::Value::Array(on.iter().map(|c| toml::Value::from(*c)).collect()),
            codes_m.node.line,
            &cf,
        );
        out.set_by_rule(
            "respect_retry_after",
            true,
            r.node.line,
            &rf,
            "gRPC honours the server pushback, grpc-retry-pushback-ms",
        );
        out.set_by_rule(
            "backoff.kind",
            "grpc",
            r.node.line,
            &rf,
            "gRFC A6's backoff",
        );
        for (key, name) in [
            ("backoff.initial", "initialBackoff"),
            ("backoff.max", "maxBackoff"),
        ] {
            let m = need(name)?;
            let f = sub(&rf, &m.key);
            let ns = duration(m, &f, false)?;
            if ns > crate::model::backoff::MAX_BACKOFF_PARAM {
                return Err(Refusal::at(
                    m.node.line,
                    &f,
                    format!(
                        "must be at most {} in retrysim",
                        duration_text(crate::model::backoff::MAX_BACKOFF_PARAM)
                    ),
                ));
            }
            out.set(key, duration_text(ns), m.node.line, &f);
        }
        let bm = need("backoffMultiplier")?;
        let bf = sub(&rf, &bm.key);
        let (_, mult) = positive(bm, &bf, 1000.0)?;
        out.set("backoff.multiplier", mult, bm.node.line, &bf);
        out.set_by_rule(
            "backoff.formula",
            "current",
            r.node.line,
            &rf,
            "the jitter of gRFC A6 since 2024, grpc-go >= 1.69, grpc-java >= 1.71",
        );
    } else if let Some(h) = hedge {
        let hf = sub(&ef, &h.key);
        let hm = object(&h.node, &hf)?;
        unknown(
            &mut out,
            hm,
            &hf,
            &["maxAttempts", "hedgingDelay", "nonFatalStatusCodes"],
            &[],
        );
        out.set_by_rule(
            "max_attempts",
            1,
            h.node.line,
            &hf,
            "hedging replaces the layer's retries",
        );
        let ma = json::get(hm, "maxAttempts").ok_or_else(|| {
            Refusal::at(h.node.line, &hf, "needs `maxAttempts`, as gRPC requires")
        })?;
        let maf = sub(&hf, &ma.key);
        let n = whole(ma, &maf, 2)?;
        if n > MAX_ATTEMPTS {
            out.note(
                ma.node.line,
                &maf,
                format!("gRPC lowers maxAttempts to {MAX_ATTEMPTS} without a word (found {n}): the layer sends at most {MAX_ATTEMPTS} copies"),
            );
        }
        out.set(
            "hedging.max_attempts",
            n.min(MAX_ATTEMPTS) as i64,
            ma.node.line,
            &maf,
        );
        if let Some(d) = json::get(hm, "hedgingDelay") {
            let f = sub(&hf, &d.key);
            let ns = duration(d, &f, true)?;
            out.set("hedging.delay", duration_text(ns), d.node.line, &f);
        }
        if let Some(c) = json::get(hm, "nonFatalStatusCodes") {
            let f = sub(&hf, &c.key);
            let on = codes(&mut out, c, &f, false)?;
            out.set(
                "hedging.non_fatal",
                toml::Value::Array(on.iter().map(|c| toml::Value::from(*c)).collect()),
                c.node.line,
                &f,
            );
        }
    } else {
        out.set_by_rule(
            "max_attempts",
            1,
            entry.line,
            &ef,
            "no retryPolicy or hedgingPolicy: one attempt",
        );
    }
    if let Some(t) = present("timeout") {
        let f = sub(&ef, &t.key);
        let ns = duration(t, &f, false)?;
        if hedge.is_some() {
            out.unmodelled(
                t.node.line,
                &f,
                "not modelled on a hedging layer: retrysim bounds hedged copies only by the fleet's `deadline` (set it there)",
            );
        } else {
            out.set("total_timeout", duration_text(ns), t.node.line, &f);
        }
    }
    if let Some(rt) = json::get(top, "retryThrottling").filter(|m| m.node.value != Value::Null) {
        let tf = rt.key.clone();
        let tm = object(&rt.node, &tf)?;
        unknown(&mut out, tm, &tf, &["maxTokens", "tokenRatio"], &[]);
        let need = |k: &str| {
            json::get(tm, k).ok_or_else(|| {
                Refusal::at(rt.node.line, &tf, format!("needs `{k}`, as gRPC requires"))
            })
        };
        let mt = need("maxTokens")?;
        let mtf = sub(&tf, &mt.key);
        let tokens = match &mt.node.value {
            Value::Number(x, _) if x.fract() == 0.0 && (1.0..=1000.0).contains(x) => *x as i64,
            Value::Number(_, t) => {
                return Err(Refusal::at(
                    mt.node.line,
                    &mtf,
                    format!("must be a whole number in (0, 1000], as gRPC requires (found {t})"),
                ))
            }
            v => {
                return Err(Refusal::at(
                    mt.node.line,
                    &mtf,
                    format!("must be a number (found {})", v.kind()),
                ))
            }
        };
        let tr = need("tokenRatio")?;
        let trf = sub(&tf, &tr.key);
        let (ratio, _) = positive(tr, &trf, 1e6)?;
        if retry.is_some() || hedge.is_some() {
            out.set_by_rule(
                "budget.kind",
                "token_bucket",
                rt.node.line,
                &tf,
                "gRFC A6's retry throttling",
            );
            out.set("budget.max_tokens", tokens, mt.node.line, &mtf);
            out.set("budget.token_ratio", ratio, tr.node.line, &trf);
        } else {
            out.note(
                rt.node.line,
                &tf,
                "has nothing to throttle: the method config has no retryPolicy or hedgingPolicy",
            );
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field_ns(text: &str) -> Result<u64, Refusal> {
        let n = json::parse(&format!("{{\"d\": {text}}}")).unwrap();
        let Value::Object(m) = &n.value else { panic!() };
        duration(&m[0], "d", false)
    }

    #[test]
    fn durations_parse_as_grpc_go_parses_them() {
        assert_eq!(field_ns("\".01s\""), Ok(10_000_000));
        assert_eq!(field_ns("\"0.1s\""), Ok(100_000_000));
        assert_eq!(field_ns("\"30s\""), Ok(30_000_000_000));
        assert_eq!(field_ns("\"1.000000001s\""), Ok(1_000_000_001));
        assert_eq!(field_ns("\"1.s\""), Ok(1_000_000_000));
        for bad in [
            "\"0.1\"",
            "\"100ms\"",
            "\"s\"",
            "\".s\"",
            "\"1.0000000001s\"",
            "\"1..0s\"",
            "0.1",
            "\"-1s\"",
            "\"0s\"",
            "\"3000000000s\"",
            "\"-s\"",
        ] {
            let e = field_ns(bad).unwrap_err();
            assert_eq!(e.line, Some(1), "{bad}");
            assert_eq!(e.field, "d");
        }
    }
}
