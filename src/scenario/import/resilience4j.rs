//! `resilience4j`: a Spring Boot `application.yml` (or `application.properties`), one
//! instance's `resilience4j.retry` and `resilience4j.circuitbreaker` configuration
//! mapped onto the arithmetic of the `resilience4j` preset.
//!
//! Resilience4j 2.4.0's `resilience4j-framework-common`, exactly:
//! - retry (`CommonRetryConfigurationProperties.createRetryConfig`): an instance's
//!   `baseConfig` names a config of `configs`, which must exist; without one, any
//!   instance or config but `default` itself inherits `configs.default` when present.
//!   The base is built first (recursively), then the instance's own properties on top;
//!   `ConfigUtils.mergePropertiesIfAny` first copies the base's
//!   `enableExponentialBackoff`, `enableRandomizedWait`, `exponentialBackoffMultiplier`
//!   and `exponentialMaxWaitDuration` into the instance (not `waitDuration`, not
//!   `randomizedWaitFactor`), and the wait is rebuilt only when the instance's own
//!   properties have a `waitDuration`. `maxAttempts: 0` keeps the base's.
//! - circuit breaker (`CommonCircuitBreakerConfigurationProperties`): a `baseConfig`
//!   as for retry; without one, a config named as the instance, then
//!   `configs.default`; a config without `baseConfig` is built on the library's
//!   defaults (configs do not inherit `configs.default`).
//! - absent fields take `RetryConfig`'s and `CircuitBreakerConfig`'s defaults: 3
//!   attempts 500 ms apart; a count window of 100, 100 calls minimum, 50% failures,
//!   100% slow calls over 60 s, 60 s open, 10 half-open calls.
//! - Spring Boot's binding: names in any relaxed form (`maxAttempts`, `max-attempts`,
//!   `max_attempts`), durations in `DurationStyle` (`500ms`, `10s`, `PT1S`, or a bare
//!   number of milliseconds), a later document of the file overriding an earlier one
//!   (a profile's document is not read).
//! - `retryExceptions`/`ignoreExceptions` decide `breaker_open`
//!   (`CallNotPermittedException`, a `RuntimeException`); other exception classes and
//!   predicates are code retrysim cannot run: warnings.

use std::collections::BTreeMap;

use super::{Format, Mapped, Refusal, Selector};
use crate::model::field::duration_text;
use crate::scenario::error::shown;

/// The format.
pub(crate) const FORMAT: Format = Format {
    name: "resilience4j",
    about: "a Spring Boot application.yml or application.properties: a Resilience4j retry instance and the circuit breaker of the same name",
    selector: &[(
        "instance",
        "the name under `resilience4j.retry.instances` (and `resilience4j.circuitbreaker.instances`)",
    )],
    map,
};

/// `CallNotPermittedException`, which a Retry sees when the breaker is open.
const CNPE: &str = "io.github.resilience4j.circuitbreaker.CallNotPermittedException";
/// Classes every exception (or `CallNotPermittedException`) is an instance of.
const CATCH_ALL: [&str; 2] = ["java.lang.Throwable", "java.lang.Exception"];
/// `CallNotPermittedException`'s superclasses.
const CNPE_SUPERS: [&str; 4] = [
    CNPE,
    "java.lang.RuntimeException",
    "java.lang.Exception",
    "java.lang.Throwable",
];
/// `retryAspectOrder` and `circuitBreakerAspectOrder` when not written
/// (`Ordered.LOWEST_PRECEDENCE - 4` and `- 3`): the lower is the outer aspect.
const RETRY_ORDER: i64 = i32::MAX as i64 - 4;
const BREAKER_ORDER: i64 = i32::MAX as i64 - 3;

/// A value as Spring binds it: one string, or a list.
#[derive(Debug, Clone, PartialEq)]
enum Val {
    One(String),
    Many(Vec<(String, u64)>),
}

/// One property of the file: its name's elements as written, its value, its line.
#[derive(Debug, Clone)]
struct Prop {
    elems: Vec<String>,
    value: Val,
    line: u64,
}

/// A property of an instance or config: its uniform name, its value and where.
#[derive(Debug, Clone)]
struct P {
    key: String,
    value: Val,
    line: u64,
    field: String,
}

/// An instance or a config: where it is and its properties, the last written winning.
#[derive(Debug, Clone, Default)]
struct Entry {
    line: u64,
    field: String,
    props: Vec<P>,
}

impl Entry {
    fn get(&self, key: &str) -> Option<&P> {
        self.props.iter().find(|p| p.key == key)
    }
}

/// `resilience4j.retry` or `resilience4j.circuitbreaker`.
#[derive(Debug, Default)]
struct Section {
    instances: BTreeMap<String, Entry>,
    configs: BTreeMap<String, Entry>,
    /// Properties of the section itself (`retryAspectOrder`).
    own: Vec<P>,
}

/// Spring's uniform form of a name element: lower case, `-` and `_` removed.
fn uniform(e: &str) -> String {
    e.chars()
        .filter(|c| *c != '-' && *c != '_')
        .flat_map(char::to_lowercase)
        .collect()
}

/// A name element without its index (`retryExceptions[0]` → `retryExceptions`, 0).
fn index_of(e: &str) -> (&str, Option<usize>) {
    if let Some(open) = e.find('[') {
        if let Some(inner) = e[open + 1..].strip_suffix(']') {
            if let Ok(i) = inner.parse() {
                return (&e[..open], Some(i));
            }
        }
    }
    (e, None)
}

/// A map key as Spring reads it: `[a.b]` keeps its dots, its brackets dropped.
fn map_key(e: &str) -> String {
    e.strip_prefix('[')
        .and_then(|r| r.strip_suffix(']'))
        .unwrap_or(e)
        .to_string()
}

/// A YAML key's elements: split at dots, unless bracketed.
fn split_key(k: &str) -> Vec<String> {
    if k.starts_with('[') {
        vec![k.to_string()]
    } else {
        k.split('.').map(str::to_string).collect()
    }
}

/// A scalar's text as Spring binds it.
fn scalar(v: &super::json::Value) -> Option<String> {
    use super::json::Value;
    match v {
        Value::Null => Some(String::new()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(_, t) => Some(t.clone()),
        Value::String(s) => Some(s.clone()),
        _ => None,
    }
}

/// Flattens a YAML tree into properties, as Spring's `YamlProcessor` does.
fn flatten(node: &super::json::Node, path: &mut Vec<String>, line: u64, out: &mut Vec<Prop>) {
    use super::json::Value;
    match &node.value {
        Value::Object(ms) => {
            if ms.is_empty() && !path.is_empty() {
                out.push(Prop {
                    elems: path.clone(),
                    value: Val::One(String::new()),
                    line,
                });
            }
            for m in ms {
                let n = path.len();
                path.extend(split_key(&m.key));
                flatten(&m.node, path, m.line, out);
                path.truncate(n);
            }
        }
        Value::Array(items) => {
            if let Some(all) = items
                .iter()
                .map(|i| scalar(&i.value).map(|s| (s, i.line)))
                .collect::<Option<Vec<_>>>()
            {
                out.push(Prop {
                    elems: path.clone(),
                    value: Val::Many(all),
                    line,
                });
            } else {
                for (i, it) in items.iter().enumerate() {
                    let mut p = path.clone();
                    if let Some(last) = p.last_mut() {
                        last.push_str(&format!("[{i}]"));
                    }
                    flatten(it, &mut p, it.line, out);
                }
            }
        }
        v => out.push(Prop {
            elems: path.clone(),
            value: Val::One(scalar(v).unwrap_or_default()),
            line,
        }),
    }
}

/// Whether the text is a `.properties` file: its first line that is not blank or a
/// comment has `=` before any `:`.
fn is_properties(text: &str) -> bool {
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#') && !l.starts_with('!'))
        .is_some_and(|l| match (l.find('='), l.find(':')) {
            (Some(e), Some(c)) => e < c,
            (Some(_), None) => true,
            _ => false,
        })
}

/// Reads a `.properties` file: `key=value` or `key: value` lines, `#` and `!`
/// comments, a trailing `\` continuing a line.
fn properties(text: &str) -> Vec<Prop> {
    let mut out = Vec::new();
    let mut lines = text.lines().enumerate();
    while let Some((i, l)) = lines.next() {
        let line = i as u64 + 1;
        let mut l = l.trim_start().to_string();
        if l.is_empty() || l.starts_with('#') || l.starts_with('!') {
            continue;
        }
        while l.ends_with('\\') && (l.len() - l.trim_end_matches('\\').len()) % 2 == 1 {
            l.pop();
            match lines.next() {
                Some((_, next)) => l.push_str(next.trim_start()),
                None => break,
            }
        }
        let cut = l.find(['=', ':']).unwrap_or(l.len());
        let key = l[..cut].trim();
        let value = l.get(cut + 1..).unwrap_or("").trim();
        out.push(Prop {
            elems: key.split('.').map(str::to_string).collect(),
            value: Val::One(value.to_string()),
            line,
        });
    }
    out
}

/// The file's properties, and notes on the documents not read.
fn read(text: &str) -> Result<(Vec<Prop>, Mapped), Refusal> {
    let mut notes = Mapped::default();
    if is_properties(text) {
        return Ok((properties(text), notes));
    }
    let docs = super::yaml::parse_documents(text).map_err(|(line, m)| Refusal {
        line: Some(line),
        field: String::new(),
        message: m,
    })?;
    let mut out = Vec::new();
    for d in docs {
        let mut props = Vec::new();
        flatten(&d, &mut Vec::new(), d.line, &mut props);
        let profile = props.iter().find(|p| {
            let u: Vec<String> = p.elems.iter().map(|e| uniform(e)).collect();
            u == ["spring", "config", "activate", "onprofile"] || u == ["spring", "profiles"]
        });
        if let Some(p) = profile {
            notes.note(
                p.line,
                &p.elems.join("."),
                "a profile's document is not read: retrysim reads the file as with no profile active",
            );
            continue;
        }
        out.extend(props);
    }
    Ok((out, notes))
}

impl Section {
    /// The properties under `resilience4j.<name>`.
    fn of(props: &[Prop], name: &str) -> Section {
        let mut s = Section::default();
        for p in props {
            let e = &p.elems;
            if e.len() < 3 || uniform(&e[0]) != "resilience4j" || uniform(&e[1]) != name {
                continue;
            }
            let map = match uniform(&e[2]).as_str() {
                "instances" | "backends" => &mut s.instances,
                "configs" => &mut s.configs,
                _ => {
                    s.own.push(P {
                        key: uniform(&e[2]),
                        value: p.value.clone(),
                        line: p.line,
                        field: e.join("."),
                    });
                    continue;
                }
            };
            let Some(inst) = e.get(3) else { continue };
            let entry = map.entry(map_key(inst)).or_insert_with(|| Entry {
                line: p.line,
                field: e[..4].join("."),
                props: Vec::new(),
            });
            let Some(k) = e.get(4) else { continue };
            let (k, index) = index_of(k);
            let key = uniform(k);
            let field = e.join(".");
            match index {
                Some(_) => {
                    let item = match &p.value {
                        Val::One(v) => v.clone(),
                        Val::Many(_) => String::new(),
                    };
                    match entry.props.iter_mut().find(|q| q.key == key) {
                        Some(P {
                            value: Val::Many(items),
                            ..
                        }) => items.push((item, p.line)),
                        _ => {
                            entry.props.retain(|q| q.key != key);
                            entry.props.push(P {
                                key,
                                value: Val::Many(vec![(item, p.line)]),
                                line: p.line,
                                field: e[..4].join(".") + "." + k,
                            });
                        }
                    }
                }
                None => {
                    entry.props.retain(|q| q.key != key);
                    entry.props.push(P {
                        key,
                        value: p.value.clone(),
                        line: p.line,
                        field,
                    });
                }
            }
        }
        s
    }

    fn names(map: &BTreeMap<String, Entry>) -> String {
        if map.is_empty() {
            return "none".into();
        }
        map.keys()
            .map(|k| format!("\"{}\"", shown(k)))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Where a value of the layer came from.
#[derive(Debug, Clone)]
struct Src {
    line: u64,
    field: String,
    note: Option<String>,
}

impl Src {
    fn of(p: &P) -> Src {
        Src {
            line: p.line,
            field: p.field.clone(),
            note: None,
        }
    }

    fn rule(&self, note: &str) -> Src {
        Src {
            note: Some(note.to_string()),
            ..self.clone()
        }
    }
}

fn put(out: &mut Mapped, key: &str, v: impl Into<toml::Value>, s: &Src) {
    match &s.note {
        Some(n) => out.set_by_rule(key, v, s.line, &s.field, n),
        None => out.set(key, v, s.line, &s.field),
    }
}

/// A string property (a list is refused).
fn text<'a>(p: &'a P, what: &str) -> Result<&'a str, Refusal> {
    match &p.value {
        Val::One(s) => Ok(s.trim()),
        Val::Many(_) => Err(Refusal::at(
            p.line,
            &p.field,
            format!("must be {what} (found a list)"),
        )),
    }
}

/// A list property: a YAML list, indexed properties, or a comma-separated string.
fn list(p: &P) -> Vec<(String, u64)> {
    match &p.value {
        Val::Many(v) => v.iter().map(|(s, l)| (s.trim().to_string(), *l)).collect(),
        Val::One(s) => s
            .split(',')
            .map(|x| (x.trim().to_string(), p.line))
            .filter(|(x, _)| !x.is_empty())
            .collect(),
    }
}

/// An `Integer` as Spring converts it (`Integer.decode` for hex); empty is absent.
fn int(p: &P) -> Result<Option<i64>, Refusal> {
    let t = text(p, "a whole number")?;
    if t.is_empty() {
        return Ok(None);
    }
    let (neg, body) = match t.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    let v = if let Some(h) = body
        .strip_prefix("0x")
        .or_else(|| body.strip_prefix("0X"))
        .or_else(|| body.strip_prefix('#'))
    {
        i64::from_str_radix(h, 16).ok()
    } else if body.bytes().all(|b| b.is_ascii_digit()) && !body.is_empty() {
        body.parse::<i64>().ok()
    } else {
        None
    };
    match v.map(|v| if neg { -v } else { v }) {
        Some(v) if (i32::MIN as i64..=i32::MAX as i64).contains(&v) => Ok(Some(v)),
        _ => Err(Refusal::at(
            p.line,
            &p.field,
            format!(
                "must be a whole number (a Java Integer; found \"{}\")",
                shown(t)
            ),
        )),
    }
}

/// A `Float` or `Double` as Java's `valueOf` reads it; empty is absent.
fn float(p: &P) -> Result<Option<f64>, Refusal> {
    let t = text(p, "a number")?;
    if t.is_empty() {
        return Ok(None);
    }
    let body = t.trim_end_matches(['f', 'F', 'd', 'D']);
    match body.parse::<f64>() {
        Ok(v) if v.is_finite() && !body.is_empty() => Ok(Some(v)),
        _ => Err(Refusal::at(
            p.line,
            &p.field,
            format!("must be a number (found \"{}\")", shown(t)),
        )),
    }
}

/// A `Boolean` as Spring's `StringToBooleanConverter` reads it; empty is absent.
fn boolean(p: &P) -> Result<Option<bool>, Refusal> {
    let t = text(p, "true or false")?;
    match t.to_ascii_lowercase().as_str() {
        "" => Ok(None),
        "true" | "on" | "yes" | "1" => Ok(Some(true)),
        "false" | "off" | "no" | "0" => Ok(Some(false)),
        _ => Err(Refusal::at(
            p.line,
            &p.field,
            format!(
                "must be true or false (also on/off, yes/no, 1/0, as Spring reads a Boolean; found \"{}\")",
                shown(t)
            ),
        )),
    }
}

/// An enum constant as Spring's lenient converter reads it: letters and digits
/// compared case-insensitively (`count-based` is `COUNT_BASED`); empty is absent.
fn constant<'a>(p: &P, allowed: &[&'a str]) -> Result<Option<&'a str>, Refusal> {
    let t = text(p, "a constant")?;
    if t.is_empty() {
        return Ok(None);
    }
    let canon = |s: &str| -> String {
        s.chars()
            .filter(char::is_ascii_alphanumeric)
            .map(|c| c.to_ascii_lowercase())
            .collect()
    };
    let want = canon(t);
    for a in allowed {
        if canon(a) == want {
            return Ok(Some(a));
        }
    }
    Err(Refusal::at(
        p.line,
        &p.field,
        format!(
            "must be one of {} (found \"{}\")",
            allowed.join(", "),
            shown(t)
        ),
    ))
}

/// A duration as Spring Boot's `DurationStyle` reads it, in nanoseconds (signed):
/// `^[+-]?\d+` and a unit of `ns`, `us`, `ms`, `s`, `m`, `h`, `d` (any case; none is
/// milliseconds), or ISO-8601 as `java.time.Duration.parse` reads it (`PT1.5S`,
/// `P1DT2H`). `None` when it is neither.
pub(crate) fn spring_duration(t: &str) -> Option<i128> {
    let b = t.as_bytes();
    // SIMPLE: ^([+-]?\d+)([a-zA-Z]{0,2})$
    let sign = usize::from(matches!(b.first(), Some(b'+' | b'-')));
    let digits = b[sign..].iter().take_while(|c| c.is_ascii_digit()).count();
    let rest = &t[sign + digits..];
    if digits > 0 && rest.len() <= 2 && rest.bytes().all(|c| c.is_ascii_alphabetic()) {
        // Long.parseLong of the number.
        let n: i64 = t[..sign + digits].parse().ok()?;
        let unit: i128 = match rest.to_ascii_lowercase().as_str() {
            "ns" => 1,
            "us" => 1_000,
            "" | "ms" => 1_000_000,
            "s" => 1_000_000_000,
            "m" => 60_000_000_000,
            "h" => 3_600_000_000_000,
            "d" => 86_400_000_000_000,
            _ => return None,
        };
        return java_duration(n as i128 * unit);
    }
    // ISO8601: ^[+-]?P.*$, then Duration.parse (case-insensitive):
    // ([-+]?)P(?:([-+]?[0-9]+)D)?(T(?:([-+]?[0-9]+)H)?(?:([-+]?[0-9]+)M)?(?:([-+]?[0-9]+)(?:[.,]([0-9]{0,9}))?S)?)?
    if b.get(sign) != Some(&b'P') {
        return None;
    }
    let neg = b.first() == Some(&b'-');
    let mut s = &t[sign + 1..];
    // A signed whole number followed by `unit`, if there.
    fn part(s: &str, unit: char) -> Option<(Option<i64>, &str)> {
        let b = s.as_bytes();
        let sign = usize::from(matches!(b.first(), Some(b'+' | b'-')));
        let d = b[sign..].iter().take_while(|c| c.is_ascii_digit()).count();
        if d == 0 {
            return Some((None, s));
        }
        let after = &s[sign + d..];
        match after.chars().next() {
            Some(c) if c.eq_ignore_ascii_case(&unit) => {
                let n: i64 = s[..sign + d].parse().ok()?;
                Some((Some(n), &after[1..]))
            }
            _ => Some((None, s)),
        }
    }
    let mut total: i128 = 0;
    let mut any = false;
    let (days, r) = part(s, 'D')?;
    s = r;
    if let Some(d) = days {
        total += d as i128 * 86_400_000_000_000;
        any = true;
    }
    if let Some(r) = s.strip_prefix(['T', 't']) {
        s = r;
        let mut in_t = false;
        let (h, r) = part(s, 'H')?;
        s = r;
        if let Some(h) = h {
            total += h as i128 * 3_600_000_000_000;
            in_t = true;
        }
        let (m, r) = part(s, 'M')?;
        s = r;
        if let Some(m) = m {
            total += m as i128 * 60_000_000_000;
            in_t = true;
        }
        // Seconds, with an optional fraction of up to 9 digits.
        let sb = s.as_bytes();
        let sign = usize::from(matches!(sb.first(), Some(b'+' | b'-')));
        let d = sb[sign..].iter().take_while(|c| c.is_ascii_digit()).count();
        if d > 0 {
            let secs: i64 = s[..sign + d].parse().ok()?;
            let mut r = &s[sign + d..];
            let mut frac: i128 = 0;
            if let Some(f) = r.strip_prefix(['.', ',']) {
                let fd = f.bytes().take_while(u8::is_ascii_digit).count();
                if fd > 9 {
                    return None;
                }
                let digits = &f[..fd];
                frac = if fd == 0 {
                    0
                } else {
                    digits.parse::<i128>().ok()? * 10i128.pow(9 - fd as u32)
                };
                r = &f[fd..];
            }
            let r = r.strip_prefix(['S', 's'])?;
            let secs_neg = s.starts_with('-');
            total += secs as i128 * 1_000_000_000 + if secs_neg { -frac } else { frac };
            s = r;
            in_t = true;
        }
        if !in_t {
            return None;
        }
        any = true;
    }
    if !s.is_empty() || !any {
        return None;
    }
    java_duration(if neg { -total } else { total })
}

/// A duration within `java.time.Duration`'s range (seconds in a `long`).
fn java_duration(ns: i128) -> Option<i128> {
    let secs = ns.div_euclid(1_000_000_000);
    (i64::MIN as i128..=i64::MAX as i128)
        .contains(&secs)
        .then_some(ns)
}

/// A duration property, in nanoseconds; empty is absent.
fn duration(p: &P) -> Result<Option<i128>, Refusal> {
    let t = text(p, "a duration")?;
    if t.is_empty() {
        return Ok(None);
    }
    spring_duration(t).map(Some).ok_or_else(|| {
        Refusal::at(
            p.line,
            &p.field,
            format!(
                "is not a duration Spring Boot reads (found \"{}\"; allowed: a whole number and a unit of ns, us, ms, s, m, h or d, such as \"500ms\" or \"10s\", a bare number of milliseconds, or ISO-8601 such as \"PT1S\")",
                shown(t)
            ),
        )
    })
}

/// `Duration.toMillis()` of a non-negative duration.
fn millis(ns: i128) -> u64 {
    u64::try_from(ns.div_euclid(1_000_000)).unwrap_or(u64::MAX)
}

/// A duration refused unless at least `min_ns`.
fn at_least(p: &P, ns: i128, min_ns: i128, why: &str) -> Result<(), Refusal> {
    if ns < min_ns {
        return Err(Refusal::at(
            p.line,
            &p.field,
            format!("{why} (found \"{}\")", shown(text(p, "a duration")?)),
        ));
    }
    Ok(())
}

/// The wait between attempts: `IntervalFunction`'s parameters, each with its source.
#[derive(Debug, Clone)]
struct Interval {
    /// The first wait (0: no wait, a fixed `waitDuration` of 0).
    initial_ms: Option<(u64, Src)>,
    multiplier: Option<(f64, Src)>,
    factor: Option<(f64, Src)>,
    max_ms: Option<(u64, Src)>,
}

/// A Resilience4j `RetryConfig` being built, each value with its source.
#[derive(Debug, Clone)]
struct RetryCfg {
    attempts: (i64, Src),
    interval: Interval,
    retry_exceptions: Option<(Vec<(String, u64)>, Src)>,
    ignore_exceptions: Option<(Vec<(String, u64)>, Src)>,
    exception_predicate: Option<Src>,
}

impl RetryCfg {
    /// `RetryConfig`'s defaults, said at `at` (the selected instance).
    fn defaults(at: &Src) -> RetryCfg {
        RetryCfg {
            attempts: (3, at.rule("Resilience4j's default maxAttempts, 3")),
            interval: Interval {
                initial_ms: Some((500, at.rule("Resilience4j's default waitDuration, 500 ms"))),
                multiplier: None,
                factor: None,
                max_ms: None,
            },
            retry_exceptions: None,
            ignore_exceptions: None,
            exception_predicate: None,
        }
    }
}

/// Retry properties that only observe or reshape what the caller sees.
const RETRY_SILENT: [&str; 4] = [
    "eventconsumerbuffersize",
    "failaftermaxattempts",
    "consumeresultbeforeretryattempt",
    "writablestacktraceenabled",
];
/// Retry properties read.
const RETRY_KNOWN: [&str; 12] = [
    "baseconfig",
    "maxattempts",
    "waitduration",
    "enableexponentialbackoff",
    "exponentialbackoffmultiplier",
    "exponentialmaxwaitduration",
    "enablerandomizedwait",
    "randomizedwaitfactor",
    "retryexceptions",
    "ignoreexceptions",
    "retryexceptionpredicate",
    "resultpredicate",
];

/// `ConfigUtils.mergePropertiesIfAny` for retry: the base's backoff switches the
/// instance lacks.
fn merge_retry(base: &Entry, inst: &mut Entry) {
    for k in [
        "enableexponentialbackoff",
        "enablerandomizedwait",
        "exponentialbackoffmultiplier",
        "exponentialmaxwaitduration",
        "eventconsumerbuffersize",
    ] {
        if inst.get(k).is_none() {
            if let Some(p) = base.get(k) {
                inst.props.push(p.clone());
            }
        }
    }
}

/// The `baseConfig` of an entry, when written and not empty.
fn base_config(e: &Entry) -> Result<Option<(String, P)>, Refusal> {
    match e.get("baseconfig") {
        Some(p) => {
            let t = text(p, "a config's name")?;
            Ok((!t.is_empty()).then(|| (t.to_string(), p.clone())))
        }
        None => Ok(None),
    }
}

/// Refuses a `baseConfig` naming no config.
fn no_config(p: &P, name: &str, configs: &BTreeMap<String, Entry>) -> Refusal {
    Refusal::at(
        p.line,
        &p.field,
        format!(
            "names no config: there is no \"{}\" under configs, and Resilience4j refuses it (ConfigurationNotFoundException; the configs: {})",
            shown(name),
            Section::names(configs)
        ),
    )
}

/// Refuses a `baseConfig` chain that comes back to itself.
fn circular(p: &P) -> Refusal {
    Refusal::at(
        p.line,
        &p.field,
        "makes a circular chain of baseConfig: Resilience4j never finishes building it",
    )
}

/// `createRetryConfig(instanceProperties, name)`.
fn retry_cfg(
    sec: &Section,
    entry: Option<&Entry>,
    name: &str,
    at: &Src,
    depth: usize,
    out: &mut Mapped,
) -> Result<RetryCfg, Refusal> {
    let mut inst = entry.cloned();
    let base = match inst.as_ref().map(base_config).transpose()?.flatten() {
        Some((bc, p)) => {
            if depth > sec.configs.len() {
                return Err(circular(&p));
            }
            let b = sec
                .configs
                .get(&bc)
                .ok_or_else(|| no_config(&p, &bc, &sec.configs))?;
            if let Some(i) = inst.as_mut() {
                merge_retry(b, i);
            }
            Some(retry_cfg(sec, Some(b), &bc, at, depth + 1, out)?)
        }
        None => match sec.configs.get("default") {
            Some(d) if name != "default" => {
                if let Some(i) = inst.as_mut() {
                    merge_retry(d, i);
                }
                Some(retry_cfg(sec, Some(d), "default", at, depth + 1, out)?)
            }
            _ => None,
        },
    };
    let mut cfg = base.unwrap_or_else(|| RetryCfg::defaults(at));
    if let Some(i) = &inst {
        build_retry(&mut cfg, i, out)?;
    }
    Ok(cfg)
}

/// `buildConfig` of retry: the properties of one entry over the config built so far.
fn build_retry(cfg: &mut RetryCfg, e: &Entry, out: &mut Mapped) -> Result<(), Refusal> {
    for p in &e.props {
        if !RETRY_KNOWN.contains(&p.key.as_str()) && !RETRY_SILENT.contains(&p.key.as_str()) {
            if p.key == "intervalbifunction" {
                out.unmodelled(
                    p.line,
                    &p.field,
                    "not modelled: an IntervalBiFunction class is code retrysim cannot run: the wait is as without it",
                );
            } else {
                out.note(
                    p.line,
                    &p.field,
                    "is no property of a Resilience4j retry instance: Spring Boot ignores it",
                );
            }
        }
    }
    let flag = |k: &str| -> Result<Option<bool>, Refusal> {
        e.get(k).map(boolean).transpose().map(Option::flatten)
    };
    let exp = flag("enableexponentialbackoff")?;
    let rnd = flag("enablerandomizedwait")?;
    let mult = match e.get("exponentialbackoffmultiplier") {
        Some(p) => match float(p)? {
            Some(v) if v <= 0.0 => {
                return Err(Refusal::at(
                    p.line,
                    &p.field,
                    format!("must be greater than 0, as Resilience4j requires (found {v})"),
                ))
            }
            Some(v) => Some((v, p)),
            None => None,
        },
        None => None,
    };
    let factor = match e.get("randomizedwaitfactor") {
        Some(p) => match float(p)? {
            Some(v) if !(0.0..1.0).contains(&v) => {
                return Err(Refusal::at(
                    p.line,
                    &p.field,
                    format!("must be at least 0 and below 1, as Resilience4j requires (found {v})"),
                ))
            }
            Some(v) => Some((v, p)),
            None => None,
        },
        None => None,
    };
    let max = match e.get("exponentialmaxwaitduration") {
        Some(p) => match duration(p)? {
            Some(ns) => {
                at_least(p, ns, 0, "must not be negative, as Resilience4j requires")?;
                Some((ns, p))
            }
            None => None,
        },
        None => None,
    };
    if let Some(wp) = e.get("waitduration") {
        if let Some(w) = duration(wp)? {
            at_least(wp, w, 0, "must not be negative, as Resilience4j requires")?;
            let ws = Src::of(wp);
            let w_ms = millis(w);
            let exp = exp == Some(true);
            let rnd = rnd == Some(true);
            let need_ms = |ms: u64, p: &P, what: &str| -> Result<(), Refusal> {
                if ms < 1 {
                    return Err(Refusal::at(
                        p.line,
                        &p.field,
                        format!("must be at least 1ms {what}, as IntervalFunction requires (found \"{}\")", shown(text(p, "a duration").unwrap_or(""))),
                    ));
                }
                Ok(())
            };
            let by_default_mult = || (1.5, ws.rule("IntervalFunction's default multiplier, 1.5"));
            let by_default_factor = || {
                (
                    0.5,
                    ws.rule("IntervalFunction's default randomization factor, 0.5"),
                )
            };
            let mut iv = Interval {
                initial_ms: Some((w_ms, ws.clone())),
                multiplier: None,
                factor: None,
                max_ms: None,
            };
            let ignored_max = |out: &mut Mapped, why: &str| {
                if let Some((_, p)) = max {
                    out.note(
                        p.line,
                        &p.field,
                        format!("has no effect {why}, as in Resilience4j"),
                    );
                }
            };
            if exp || rnd {
                need_ms(w_ms, wp, "with exponential backoff or a randomized wait")?;
            }
            if exp && rnd {
                match (mult, factor) {
                    (Some((m, mp)), Some((f, fp))) => {
                        iv.multiplier = Some((m, Src::of(mp)));
                        iv.factor = Some((f, Src::of(fp)));
                        if let Some((mx, mxp)) = max {
                            need_ms(millis(mx), mxp, "")?;
                            iv.max_ms = Some((millis(mx), Src::of(mxp)));
                        }
                    }
                    (Some((m, mp)), None) => {
                        iv.multiplier = Some((m, Src::of(mp)));
                        iv.factor = Some(by_default_factor());
                        ignored_max(out, "without randomizedWaitFactor");
                    }
                    (None, _) => {
                        iv.multiplier = Some(by_default_mult());
                        iv.factor = Some(by_default_factor());
                        if let Some((_, fp)) = factor {
                            out.note(fp.line, &fp.field, "has no effect without exponentialBackoffMultiplier, as in Resilience4j: the factor is 0.5");
                        }
                        ignored_max(out, "without exponentialBackoffMultiplier");
                    }
                }
            } else if exp {
                match mult {
                    Some((m, mp)) => {
                        iv.multiplier = Some((m, Src::of(mp)));
                        if let Some((mx, mxp)) = max {
                            need_ms(millis(mx), mxp, "")?;
                            iv.max_ms = Some((millis(mx), Src::of(mxp)));
                        }
                    }
                    None => {
                        iv.multiplier = Some(by_default_mult());
                        ignored_max(out, "without exponentialBackoffMultiplier");
                    }
                }
            } else if rnd {
                iv.factor = Some(match factor {
                    Some((f, fp)) => (f, Src::of(fp)),
                    None => by_default_factor(),
                });
            }
            cfg.interval = iv;
        }
    } else {
        for k in [
            "enableexponentialbackoff",
            "enablerandomizedwait",
            "exponentialbackoffmultiplier",
            "randomizedwaitfactor",
            "exponentialmaxwaitduration",
        ] {
            if let Some(p) = e.get(k) {
                out.note(
                    p.line,
                    &p.field,
                    "has no effect without a waitDuration beside it, as in Resilience4j: the wait is the base config's",
                );
            }
        }
    }
    if let Some(p) = e.get("maxattempts") {
        match int(p)? {
            Some(n) if n < 0 => {
                return Err(Refusal::at(
                    p.line,
                    &p.field,
                    format!("must be at least 1, as Resilience4j requires (found {n})"),
                ))
            }
            Some(0) => out.note(
                p.line,
                &p.field,
                "0 keeps the base config's maxAttempts, as in Resilience4j",
            ),
            Some(n) => cfg.attempts = (n, Src::of(p)),
            None => {}
        }
    }
    if let Some(p) = e.get("retryexceptionpredicate") {
        cfg.exception_predicate = Some(Src::of(p));
    }
    if let Some(p) = e.get("ignoreexceptions") {
        cfg.ignore_exceptions = Some((list(p), Src::of(p)));
    }
    if let Some(p) = e.get("retryexceptions") {
        cfg.retry_exceptions = Some((list(p), Src::of(p)));
    }
    if let Some(p) = e.get("resultpredicate") {
        out.unmodelled(
            p.line,
            &p.field,
            "not modelled: retrysim's answers carry no result for a predicate to test",
        );
    }
    Ok(())
}

/// What a retry retries: `retry_on` and its source, or `None` when nothing.
fn retry_on(cfg: &RetryCfg, at: &Src, out: &mut Mapped) -> Option<(Vec<&'static str>, Src)> {
    let has =
        |l: &[(String, u64)], names: &[&str]| l.iter().any(|(c, _)| names.contains(&c.as_str()));
    let mut on = vec!["rejected", "error", "timeout", "breaker_open"];
    let mut src = at.rule("Resilience4j retries every exception by default, CallNotPermittedException (breaker_open) too");
    let unmapped = |l: &[(String, u64)], s: &Src, out: &mut Mapped, what: &str| {
        for (c, line) in l {
            if c != CNPE && !CATCH_ALL.contains(&c.as_str()) {
                out.unmodelled(
                    *line,
                    &s.field,
                    format!("not modelled: retrysim cannot tell which of its failures (rejections, errors, timeouts) {} stands for, so it {what} them all", shown(c)),
                );
            }
        }
    };
    if let Some((l, s)) = &cfg.retry_exceptions {
        unmapped(l, s, out, "retries");
        if !l.is_empty() && !has(l, &CNPE_SUPERS) && cfg.exception_predicate.is_none() {
            on.retain(|c| *c != "breaker_open");
            src = s.rule(
                "CallNotPermittedException is not in the list: an open breaker is not retried",
            );
        }
    }
    if let Some(s) = &cfg.exception_predicate {
        out.unmodelled(
            s.line,
            &s.field,
            "not modelled: a predicate class is code retrysim cannot run: the layer retries as without it",
        );
    }
    if let Some((l, s)) = &cfg.ignore_exceptions {
        unmapped(l, s, out, "still retries");
        if has(l, &CATCH_ALL) {
            return None;
        }
        if has(l, &CNPE_SUPERS) {
            on.retain(|c| *c != "breaker_open");
            src = s.rule("CallNotPermittedException is ignored: an open breaker is not retried");
        }
    }
    Some((on, src))
}

/// A Resilience4j `CircuitBreakerConfig` being built.
#[derive(Debug, Clone)]
struct BreakerCfg {
    window_type: (&'static str, Src),
    window_size: (i64, Src),
    min_calls: (i64, Src),
    failure_rate: (f64, Src),
    slow_call_rate: (f64, Src),
    slow_call_duration: (u64, Src),
    open_for: (u64, Src),
    half_open_calls: (i64, Src),
}

impl BreakerCfg {
    fn defaults(at: &Src) -> BreakerCfg {
        let d = |what: &str| at.rule(&format!("Resilience4j's default {what}"));
        BreakerCfg {
            window_type: ("count", d("slidingWindowType, COUNT_BASED")),
            window_size: (100, d("slidingWindowSize, 100")),
            min_calls: (100, d("minimumNumberOfCalls, 100")),
            failure_rate: (50.0, d("failureRateThreshold, 50")),
            slow_call_rate: (100.0, d("slowCallRateThreshold, 100")),
            slow_call_duration: (60_000_000_000, d("slowCallDurationThreshold, 60 s")),
            open_for: (60_000_000_000, d("waitDurationInOpenState, 60 s")),
            half_open_calls: (10, d("permittedNumberOfCallsInHalfOpenState, 10")),
        }
    }
}

/// Circuit breaker properties that only observe.
const BREAKER_SILENT: [&str; 5] = [
    "registerhealthindicator",
    "allowhealthindicatortofail",
    "eventconsumerbuffersize",
    "writablestacktraceenabled",
    "ignoreclassbindingexceptions",
];
/// Circuit breaker properties read, or warned about.
const BREAKER_KNOWN: [&str; 22] = [
    "baseconfig",
    "slidingwindowtype",
    "slidingwindowsize",
    "minimumnumberofcalls",
    "failureratethreshold",
    "slowcallratethreshold",
    "slowcalldurationthreshold",
    "waitdurationinopenstate",
    "permittednumberofcallsinhalfopenstate",
    "automatictransitionfromopentohalfopenenabled",
    "maxwaitdurationinhalfopenstate",
    "transitiontostateafterwaitduration",
    "initialstate",
    "enableexponentialbackoff",
    "exponentialbackoffmultiplier",
    "exponentialmaxwaitdurationinopenstate",
    "enablerandomizedwait",
    "randomizedwaitfactor",
    "recordexceptions",
    "recordfailurepredicate",
    "recordresultpredicate",
    "ignoreexceptions",
];

/// `createCircuitBreakerConfig(instanceName, instanceProperties)`.
fn breaker_cfg(
    sec: &Section,
    entry: Option<&Entry>,
    name: &str,
    at: &Src,
    depth: usize,
    out: &mut Mapped,
) -> Result<BreakerCfg, Refusal> {
    let base = match entry.map(base_config).transpose()?.flatten() {
        Some((bc, p)) => {
            if bc == name || depth > sec.configs.len() {
                return Err(circular(&p));
            }
            let b = sec
                .configs
                .get(&bc)
                .ok_or_else(|| no_config(&p, &bc, &sec.configs))?;
            Some(breaker_cfg(sec, Some(b), &bc, at, depth + 1, out)?)
        }
        None => match (sec.configs.get(name), sec.configs.get("default")) {
            (Some(c), _) => {
                let mut cfg = BreakerCfg::defaults(at);
                build_breaker(&mut cfg, c, out)?;
                Some(cfg)
            }
            (None, Some(d)) => Some(breaker_cfg(sec, Some(d), "default", at, depth + 1, out)?),
            (None, None) => None,
        },
    };
    let mut cfg = base.unwrap_or_else(|| BreakerCfg::defaults(at));
    if let Some(e) = entry {
        build_breaker(&mut cfg, e, out)?;
    }
    Ok(cfg)
}

/// `buildConfig` of the circuit breaker: one entry's properties over `cfg`.
fn build_breaker(cfg: &mut BreakerCfg, e: &Entry, out: &mut Mapped) -> Result<(), Refusal> {
    for p in &e.props {
        let k = p.key.as_str();
        if BREAKER_SILENT.contains(&k) {
            continue;
        }
        if !BREAKER_KNOWN.contains(&k) && k != "ignoreexceptionpredicate" {
            out.note(
                p.line,
                &p.field,
                "is no property of a Resilience4j circuit breaker instance: Spring Boot ignores it",
            );
        }
        if matches!(
            k,
            "recordexceptions"
                | "recordfailurepredicate"
                | "recordresultpredicate"
                | "ignoreexceptions"
                | "ignoreexceptionpredicate"
        ) {
            out.unmodelled(
                p.line,
                &p.field,
                "not modelled: retrysim's breaker records every failure (rejections, errors, timeouts); it cannot tell which of them a Java class or predicate stands for",
            );
        }
    }
    let flag = |k: &str| -> Result<Option<bool>, Refusal> {
        e.get(k).map(boolean).transpose().map(Option::flatten)
    };
    let exp = flag("enableexponentialbackoff")? == Some(true);
    let rnd = flag("enablerandomizedwait")? == Some(true);
    if exp && rnd {
        let p = e.get("enablerandomizedwait").expect("read above");
        return Err(Refusal::at(
            p.line,
            &p.field,
            "cannot be true beside enableExponentialBackoff: Resilience4j refuses both at once",
        ));
    }
    if let Some(p) = e.get("waitdurationinopenstate") {
        if let Some(ns) = duration(p)? {
            at_least(
                p,
                ns,
                1_000_000,
                "must be at least 1ms, as Resilience4j requires",
            )?;
            cfg.open_for = (u64::try_from(ns).unwrap_or(u64::MAX), Src::of(p));
            if exp || rnd {
                out.unmodelled(
                    p.line,
                    &p.field,
                    "not modelled: retrysim's breaker stays open for the same time each time; the exponential or randomized wait in the open state is not imported",
                );
            }
        }
    }
    let rate = |p: &P| -> Result<Option<f64>, Refusal> {
        match float(p)? {
            Some(v) if !(1.0..=100.0).contains(&v) => Err(Refusal::at(
                p.line,
                &p.field,
                format!("must be from 1 to 100, as Resilience4j requires (found {v})"),
            )),
            v => Ok(v),
        }
    };
    if let Some(p) = e.get("failureratethreshold") {
        if let Some(v) = rate(p)? {
            cfg.failure_rate = (v, Src::of(p));
        }
    }
    if let Some(p) = e.get("slowcallratethreshold") {
        if let Some(v) = rate(p)? {
            cfg.slow_call_rate = (v, Src::of(p));
        }
    }
    if let Some(p) = e.get("slowcalldurationthreshold") {
        if let Some(ns) = duration(p)? {
            at_least(p, ns, 1, "must be at least 1ns, as Resilience4j requires")?;
            cfg.slow_call_duration = (u64::try_from(ns).unwrap_or(u64::MAX), Src::of(p));
        }
    }
    if let Some(p) = e.get("maxwaitdurationinhalfopenstate") {
        if let Some(ns) = duration(p)? {
            at_least(p, ns, 0, "must not be negative, as Resilience4j requires")?;
            if millis(ns) > 0 {
                out.unmodelled(
                    p.line,
                    &p.field,
                    "not modelled: retrysim's half-open breaker waits for its permitted calls, as with 0",
                );
            }
        }
    }
    if let Some(p) = e.get("transitiontostateafterwaitduration") {
        if constant(p, &["OPEN", "CLOSED"])? == Some("CLOSED") {
            out.unmodelled(
                p.line,
                &p.field,
                "not modelled: retrysim's half-open breaker opens again after its wait, as with OPEN",
            );
        }
    }
    if let Some(p) = e.get("initialstate") {
        let s = constant(
            p,
            &[
                "CLOSED",
                "OPEN",
                "HALF_OPEN",
                "DISABLED",
                "METRICS_ONLY",
                "FORCED_OPEN",
            ],
        )?;
        if s.is_some_and(|s| s != "CLOSED") {
            out.unmodelled(
                p.line,
                &p.field,
                "not modelled: retrysim's breaker starts closed",
            );
        }
    }
    let count = |p: &P| -> Result<Option<i64>, Refusal> {
        match int(p)? {
            Some(v) if v < 1 => Err(Refusal::at(
                p.line,
                &p.field,
                format!("must be at least 1, as Resilience4j requires (found {v})"),
            )),
            v => Ok(v),
        }
    };
    if let Some(p) = e.get("slidingwindowsize") {
        if let Some(v) = count(p)? {
            cfg.window_size = (v, Src::of(p));
        }
    }
    if let Some(p) = e.get("minimumnumberofcalls") {
        if let Some(v) = count(p)? {
            cfg.min_calls = (v, Src::of(p));
        }
    }
    if let Some(p) = e.get("slidingwindowtype") {
        match constant(p, &["COUNT_BASED", "TIME_BASED"])? {
            Some("COUNT_BASED") => cfg.window_type = ("count", Src::of(p)),
            Some(_) => cfg.window_type = ("time", Src::of(p)),
            None => {}
        }
    }
    if let Some(p) = e.get("permittednumberofcallsinhalfopenstate") {
        if let Some(v) = count(p)? {
            cfg.half_open_calls = (v, Src::of(p));
        }
    }
    if let Some(p) = e.get("automatictransitionfromopentohalfopenenabled") {
        if boolean(p)? == Some(true) {
            out.note(
                p.line,
                &p.field,
                "retrysim's breaker turns half-open at the first call after the wait, which is the same for the calls it sends",
            );
        }
    }
    Ok(())
}

/// A whole number as TOML; a float when it has a fraction.
fn number(v: f64) -> toml::Value {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        toml::Value::Integer(v as i64)
    } else {
        toml::Value::Float(v)
    }
}

/// An aspect order of a section (`retryAspectOrder`), or its default.
fn order(sec: &Section, key: &str, default: i64) -> Result<(i64, Option<P>), Refusal> {
    match sec.own.iter().rev().find(|p| p.key == key) {
        Some(p) => Ok((int(p)?.unwrap_or(default), Some(p.clone()))),
        None => Ok((default, None)),
    }
}

/// Maps a Spring Boot configuration's instance onto a layer.
pub(crate) fn map(text: &str, selector: &Selector) -> Result<Mapped, Refusal> {
    let Some(name) = selector.get("instance").filter(|r| !r.is_empty()) else {
        return Err(Refusal {
            line: None,
            field: String::new(),
            message: "cannot be matched: a resilience4j import needs `instance`, the name under resilience4j.retry.instances".into(),
        });
    };
    let (props, mut out) = read(text)?;
    let retry = Section::of(&props, "retry");
    let cb = Section::of(&props, "circuitbreaker");
    let (ri, ci) = (retry.instances.get(name), cb.instances.get(name));
    if ri.is_none() && ci.is_none() {
        return Err(Refusal {
            line: None,
            field: "resilience4j.retry.instances".into(),
            message: format!(
                "has no instance named \"{}\", nor has resilience4j.circuitbreaker.instances (retry instances: {}; circuit breaker instances: {})",
                shown(name),
                Section::names(&retry.instances),
                Section::names(&cb.instances)
            ),
        });
    }
    out.matched = [ri, ci]
        .iter()
        .flatten()
        .map(|e| e.field.clone())
        .collect::<Vec<_>>()
        .join(" and ");
    match ri {
        None => {
            let e = ci.expect("one of them is there");
            out.set_by_rule(
                "max_attempts",
                1,
                e.line,
                &e.field,
                "no resilience4j.retry instance of this name: the layer does not retry",
            );
        }
        Some(e) => {
            let at = Src {
                line: e.line,
                field: e.field.clone(),
                note: None,
            };
            let cfg = retry_cfg(&retry, Some(e), name, &at, 0, &mut out)?;
            match retry_on(&cfg, &at, &mut out) {
                None => {
                    let (_, s) = cfg.ignore_exceptions.as_ref().expect("only when ignored");
                    put(
                        &mut out,
                        "max_attempts",
                        1,
                        &s.rule("every exception is ignored: Resilience4j never retries"),
                    );
                }
                Some((on, on_src)) => {
                    let (n, s) = &cfg.attempts;
                    if *n as u64 > crate::model::attempts::MAX_ATTEMPTS_CAP {
                        return Err(Refusal::at(
                            s.line,
                            &s.field,
                            format!(
                                "must be at most {} in retrysim (found {n})",
                                crate::model::attempts::MAX_ATTEMPTS_CAP
                            ),
                        ));
                    }
                    put(&mut out, "max_attempts", *n, s);
                    put(
                        &mut out,
                        "retry_on",
                        toml::Value::Array(on.iter().map(|c| toml::Value::from(*c)).collect()),
                        &on_src,
                    );
                    put(
                        &mut out,
                        "respect_retry_after",
                        false,
                        &at.rule("Resilience4j reads no Retry-After"),
                    );
                    let iv = &cfg.interval;
                    match &iv.initial_ms {
                        None => {}
                        Some((0, s)) => {
                            put(
                                &mut out,
                                "backoff.kind",
                                "none",
                                &s.rule("waitDuration 0: no wait"),
                            );
                        }
                        Some((ms, s)) => {
                            put(
                                &mut out,
                                "backoff.kind",
                                "resilience4j",
                                &s.rule("Resilience4j's IntervalFunction"),
                            );
                            let cap = crate::model::backoff::MAX_BACKOFF_PARAM / 1_000_000;
                            for (v, s) in [Some((*ms, s)), iv.max_ms.as_ref().map(|(v, s)| (*v, s))]
                                .into_iter()
                                .flatten()
                            {
                                if v > cap {
                                    return Err(Refusal::at(
                                        s.line,
                                        &s.field,
                                        format!(
                                            "sets a wait of {}: retrysim takes at most {}",
                                            duration_text(v.saturating_mul(1_000_000)),
                                            duration_text(crate::model::backoff::MAX_BACKOFF_PARAM)
                                        ),
                                    ));
                                }
                            }
                            put(
                                &mut out,
                                "backoff.initial",
                                duration_text(ms * 1_000_000),
                                s,
                            );
                            if let Some((m, s)) = &iv.multiplier {
                                if !(1.0..=1000.0).contains(m) {
                                    return Err(Refusal::at(
                                        s.line,
                                        &s.field,
                                        format!("must be from 1 to 1000 in retrysim (found {m})"),
                                    ));
                                }
                                put(&mut out, "backoff.multiplier", number(*m), s);
                            }
                            if let Some((f, s)) = &iv.factor {
                                put(&mut out, "backoff.randomization_factor", number(*f), s);
                            }
                            if let Some((mx, s)) = &iv.max_ms {
                                put(
                                    &mut out,
                                    "backoff.max_interval",
                                    duration_text(mx * 1_000_000),
                                    s,
                                );
                            }
                        }
                    }
                }
            }
        }
    }
    if let Some(e) = ci {
        let at = Src {
            line: e.line,
            field: e.field.clone(),
            note: None,
        };
        let b = breaker_cfg(&cb, Some(e), name, &at, 0, &mut out)?;
        put(
            &mut out,
            "breaker.kind",
            "resilience4j",
            &at.rule("Resilience4j's CircuitBreakerStateMachine"),
        );
        put(
            &mut out,
            "breaker.window_type",
            b.window_type.0,
            &b.window_type.1,
        );
        put(
            &mut out,
            "breaker.window_size",
            b.window_size.0,
            &b.window_size.1,
        );
        put(&mut out, "breaker.min_calls", b.min_calls.0, &b.min_calls.1);
        put(
            &mut out,
            "breaker.failure_rate",
            number(b.failure_rate.0),
            &b.failure_rate.1,
        );
        put(
            &mut out,
            "breaker.slow_call_rate",
            number(b.slow_call_rate.0),
            &b.slow_call_rate.1,
        );
        put(
            &mut out,
            "breaker.slow_call_duration",
            duration_text(b.slow_call_duration.0),
            &b.slow_call_duration.1,
        );
        put(
            &mut out,
            "breaker.open_for",
            duration_text(b.open_for.0),
            &b.open_for.1,
        );
        put(
            &mut out,
            "breaker.half_open_calls",
            b.half_open_calls.0,
            &b.half_open_calls.1,
        );
        let (ro, rp) = order(&retry, "retryaspectorder", RETRY_ORDER)?;
        let (co, cp) = order(&cb, "circuitbreakeraspectorder", BREAKER_ORDER)?;
        let src = rp.or(cp).map_or_else(|| at.clone(), |p| Src::of(&p));
        if ro == co {
            out.unmodelled(
                src.line,
                &src.field,
                "not modelled: retryAspectOrder equals circuitBreakerAspectOrder, so Spring orders the aspects arbitrarily; the breaker is put inside the retry loop",
            );
        }
        let (place, why) = if ro <= co {
            (
                "inside",
                "the Spring aspect order Retry(CircuitBreaker(call))",
            )
        } else {
            (
                "outside",
                "circuitBreakerAspectOrder below retryAspectOrder: CircuitBreaker(Retry(call))",
            )
        };
        put(&mut out, "breaker.placement", place, &src.rule(why));
    }
    for (kind, what) in [
        (
            "timelimiter",
            "a TimeLimiter (write `attempt_timeout` beside `import`)",
        ),
        ("bulkhead", "a Bulkhead"),
        ("threadpoolbulkhead", "a thread pool Bulkhead"),
        ("ratelimiter", "a RateLimiter"),
    ] {
        let s = Section::of(&props, kind);
        if let Some(e) = s.instances.get(name) {
            out.unmodelled(
                e.line,
                &e.field,
                format!("not imported: {what} of the same name is not part of the layer"),
            );
        }
    }
    let mut seen = std::collections::HashSet::new();
    out.warnings
        .retain(|w| seen.insert((w.line, w.setting.clone(), w.message.clone())));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_are_read_as_spring_boots_duration_style() {
        let ms = 1_000_000i128;
        assert_eq!(spring_duration("500ms"), Some(500 * ms));
        assert_eq!(spring_duration("100"), Some(100 * ms));
        assert_eq!(spring_duration("10s"), Some(10_000 * ms));
        assert_eq!(spring_duration("10S"), Some(10_000 * ms));
        assert_eq!(spring_duration("2m"), Some(120_000 * ms));
        assert_eq!(spring_duration("1h"), Some(3_600_000 * ms));
        assert_eq!(spring_duration("1d"), Some(86_400_000 * ms));
        assert_eq!(spring_duration("7us"), Some(7_000));
        assert_eq!(spring_duration("7ns"), Some(7));
        assert_eq!(spring_duration("-5ms"), Some(-5 * ms));
        assert_eq!(spring_duration("+5"), Some(5 * ms));
        assert_eq!(spring_duration("PT1S"), Some(1_000 * ms));
        assert_eq!(spring_duration("PT0.5S"), Some(500 * ms));
        assert_eq!(spring_duration("PT1,25S"), Some(1_250 * ms));
        assert_eq!(spring_duration("pt1s"), None); // DurationStyle wants a capital P
        assert_eq!(spring_duration("Pt1m"), Some(60_000 * ms));
        assert_eq!(
            spring_duration("P1DT2H"),
            Some((86_400 + 7_200) * 1_000 * ms)
        );
        assert_eq!(spring_duration("-PT1S"), Some(-1_000 * ms));
        assert_eq!(spring_duration("PT-1.5S"), Some(-1_500 * ms));
        assert_eq!(spring_duration("P2D"), Some(2 * 86_400_000 * ms));
        for bad in [
            "",
            "1.5s",
            "10 s",
            "1sec",
            "ms",
            "PT",
            "P",
            "PT1.0000000001S",
            "P1H",
            "1w",
            "PT1S1M",
            "s10",
        ] {
            assert_eq!(spring_duration(bad), None, "{bad}");
        }
    }

    #[test]
    fn names_bind_in_any_relaxed_form() {
        let props = properties(
            "resilience4j.retry.instances.a.max-attempts=4\nresilience4j.retry.instances.a.WAIT_DURATION: 1s\n",
        );
        let s = Section::of(&props, "retry");
        let a = &s.instances["a"];
        assert_eq!(a.get("maxattempts").unwrap().line, 1);
        assert_eq!(a.get("waitduration").unwrap().value, Val::One("1s".into()));
    }
}
