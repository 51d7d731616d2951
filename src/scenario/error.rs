//! Errors of reading, parsing and validating a scenario. Every message names the file,
//! the field and the rule, and all of them mean exit code 2 (bad input).

use thiserror::Error;

pub(crate) use crate::model::field::{clip, shown, MAX_VALUE_SHOWN};

/// What is wrong with a scenario file.
#[derive(Debug, Error)]
pub enum ScenarioError {
    /// The file could not be read.
    #[error("cannot read scenario '{path}': {source}")]
    Read {
        /// File as given.
        path: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The file holds nothing.
    #[error(
        "scenario '{path}' is empty: it needs at least `duration`, a `[dependency]` table and one `[[fleets]]`"
    )]
    Empty {
        /// File as given.
        path: String,
    },
    /// The file is not TOML.
    #[error("scenario '{path}' is not valid TOML: {}", clip_message(.message))]
    Syntax {
        /// File as given.
        path: String,
        /// Parser message, with line and column.
        message: String,
    },
    /// A field breaks a rule.
    #[error("scenario '{path}': {}: {}", clip(.field, MAX_KEY_SHOWN), clip_message(.message))]
    Field {
        /// File as given.
        path: String,
        /// Dotted path of the field (`fleets[0].layers[1].max_attempts`).
        field: String,
        /// The rule and the value found.
        message: String,
    },
    /// A `[sweep]` entry is not usable.
    #[error("scenario '{path}': sweep key '{}': {}", clip(.key, MAX_KEY_SHOWN), clip_message(.message))]
    Sweep {
        /// File as given.
        path: String,
        /// The swept key.
        key: String,
        /// Why.
        message: String,
    },
    /// A `--set KEY=VALUE` override cannot be applied.
    #[error("scenario '{path}': --set {}: {}", clip(.key, MAX_KEY_SHOWN), clip_message(.message))]
    Override {
        /// File as given.
        path: String,
        /// The key.
        key: String,
        /// Why.
        message: String,
    },
}

impl ScenarioError {
    /// The field the error is about, if any.
    pub fn field(&self) -> Option<&str> {
        match self {
            ScenarioError::Field { field, .. } => Some(field),
            ScenarioError::Override { key, .. } | ScenarioError::Sweep { key, .. } => Some(key),
            _ => None,
        }
    }
}

/// Most characters of a field path or key a message shows.
pub(crate) const MAX_KEY_SHOWN: usize = 200;
/// Most characters of one line of a message.
pub(crate) const MAX_LINE_SHOWN: usize = 400;
/// Most lines of a message.
pub(crate) const MAX_LINES_SHOWN: usize = 40;

/// A message (perhaps quoting what the user wrote, as serde and the TOML parser do)
/// as it is shown: each line escaped and cut with [`clip`], long runs without spaces
/// (a quoted value) cut to [`MAX_VALUE_SHOWN`], and at most [`MAX_LINES_SHOWN`] lines.
pub(crate) fn clip_message(m: &str) -> String {
    let mut lines: Vec<String> = Vec::new();
    for (n, line) in m.lines().enumerate() {
        if n == MAX_LINES_SHOWN {
            lines.push(format!("… ({} bytes in all)", m.len()));
            break;
        }
        let cut: Vec<String> = line
            .split(' ')
            .map(|w| {
                if w.chars().count() > MAX_VALUE_SHOWN + 20 {
                    shown(w)
                } else {
                    clip(w, usize::MAX)
                }
            })
            .collect();
        lines.push(clip(&cut.join(" "), MAX_LINE_SHOWN));
    }
    lines.join("\n")
}

/// A value no scenario holds, put where a parse error is to make serde list the names
/// allowed there ([`Probe`]).
pub(crate) const MARK: &str = "\u{1}";

/// What to put where a parse error is so serde lists what is allowed there: a message
/// that names a Rust type instead says which names it takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Probe {
    /// A table chosen by its `kind` (`{ kind = MARK }`): serde lists the kinds.
    Kind,
    /// A table of named keys (`{ MARK = 0 }`): serde lists the keys.
    Key,
    /// A name (`MARK`): serde lists the names.
    Name,
}

impl Probe {
    /// The probe a parse error's message calls for, if it names a type serde can list.
    pub(crate) fn of(message: &str) -> Option<Probe> {
        let expected = expected(message)?;
        if expected.starts_with("internally tagged enum ") {
            Some(Probe::Kind)
        } else if expected.starts_with("struct ") {
            Some(Probe::Key)
        } else if expected.starts_with("enum ")
            || ["string or map", "string only", "variant identifier"].contains(&expected)
        {
            Some(Probe::Name)
        } else {
            None
        }
    }

    /// The value put where the error is.
    pub(crate) fn value(self) -> toml::Value {
        let table = |k: &str, v: toml::Value| {
            toml::Value::Table([(k.to_string(), v)].into_iter().collect())
        };
        match self {
            Probe::Kind => table("kind", MARK.into()),
            Probe::Key => table(MARK, 0.into()),
            Probe::Name => MARK.into(),
        }
    }

    /// The names a probe's error lists ("unknown variant `MARK`, expected one of `a`,
    /// `b`"); `None` when the message is not about the probe.
    pub(crate) fn names(message: &str) -> Option<Vec<String>> {
        let first = message.lines().next()?;
        let rest = &first[first.find(&format!("`{MARK}`"))? + MARK.len() + 2..];
        let listed: Vec<String> = rest
            .split('`')
            .skip(1)
            .step_by(2)
            .map(str::to_string)
            .collect();
        (!listed.is_empty()).then_some(listed)
    }
}

/// What a serde message says was expected: the text after its last ", expected ".
fn expected(message: &str) -> Option<&str> {
    message
        .rfind(", expected ")
        .map(|i| message[i + ", expected ".len()..].trim_end())
}

/// A parse error's message in the user's terms: a Rust type serde names (`struct
/// PoolFile`, `internally tagged enum ArrivalFile`, `u64`, `f64`, `a sequence`) becomes
/// what the file must hold there (a table and its keys, a `kind` and its choices, a
/// whole number and its range, a number, a list), with `names` from a [`Probe`] when
/// there is one; `found` is the value the file holds there, which replaces a `found`
/// part serde got wrong ("unit variant"). Other messages are left as they are.
pub(crate) fn in_user_terms(
    message: &str,
    found: Option<&toml::Value>,
    names: &[String],
) -> String {
    let Some(exp) = expected(message) else {
        return message.to_string();
    };
    let head = &message[..message.len() - exp.len() - ", expected ".len()];
    let listed = names
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ");
    let table = |what: &str| {
        if names.is_empty() {
            "a table".to_string()
        } else {
            format!("a table with {what} {listed}")
        }
    };
    // A whole number's range as a TOML file can write it (integers are 64-bit signed).
    let whole = |min: i128, max: i128| {
        format!(
            "a whole number from {min} to {}",
            max.min(i128::from(i64::MAX))
        )
    };
    let word = exp.split(' ').next().unwrap_or("");
    let user = match exp {
        _ if exp.starts_with("internally tagged enum ") => {
            if names.is_empty() {
                "a table with a `kind`".to_string()
            } else {
                format!("a table with `kind` one of {listed}")
            }
        }
        _ if ["struct", "tuple", "unit"].contains(&word) && exp.contains(' ') => {
            table("keys among")
        }
        _ if exp.starts_with("enum ")
            || ["string or map", "string only", "variant identifier"].contains(&exp) =>
        {
            if names.is_empty() {
                "a name (a string)".to_string()
            } else {
                format!("one of {listed}")
            }
        }
        "u8" => whole(0, u8::MAX.into()),
        "u16" => whole(0, u16::MAX.into()),
        "u32" => whole(0, u32::MAX.into()),
        "u64" | "usize" => whole(0, u64::MAX.into()),
        "i8" => whole(i8::MIN.into(), i8::MAX.into()),
        "i16" => whole(i16::MIN.into(), i16::MAX.into()),
        "i32" => whole(i32::MIN.into(), i32::MAX.into()),
        "i64" | "isize" => whole(i64::MIN.into(), i64::MAX.into()),
        "f32" | "f64" => "a number".to_string(),
        "a sequence" => "a list".to_string(),
        "a map" => "a table".to_string(),
        "field identifier" => "a key name (a string)".to_string(),
        _ => exp.to_string(),
    };
    let head = match head.strip_prefix("invalid type: ") {
        Some("unit variant") | Some("unit") => match found {
            Some(v) => format!("invalid type: {}", describe(v)),
            None => head.to_string(),
        },
        Some("map") => "invalid type: table".to_string(),
        Some("sequence") => "invalid type: list".to_string(),
        _ => head.to_string(),
    };
    format!("{head}, expected {user}")
}

/// A TOML value as serde's messages describe what they found (`integer `3``).
fn describe(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => format!("string {s:?}"),
        toml::Value::Integer(i) => format!("integer `{i}`"),
        toml::Value::Float(f) => format!("floating point `{f}`"),
        toml::Value::Boolean(b) => format!("boolean `{b}`"),
        toml::Value::Datetime(d) => format!("datetime `{d}`"),
        toml::Value::Array(_) => "list".to_string(),
        toml::Value::Table(_) => "table".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;
    use std::path::Path;

    use crate::scenario::file::ScenarioFile;
    use crate::scenario::{from_table, preset, Source};

    /// A scenario with every table and key the shipped ones may lack (loads as it is).
    const EVERY: &str = r#"
name = "every"
    seed = 3
    duration = "2s"
    drain = "1s"
    bucket = "100ms"
    warmup = "0s"
    recovery_tolerance = 0.05
    recovery_hold = 2
    replications = 1
    herd_bucket = "10ms"
    trace = { sample = 2, seed = 1 }

    [limits]
    max_in_flight = 10000
    max_events = 1000000

    [check.tolerance]
    logical = "5%"

    [[services]]
    name = "front"
    servers = 4
    queue_limit = 10
    reject_status = 429
    retry_after = "10ms"
    service_time = { kind = "lognormal", median = "1ms", p99 = "5ms" }
    per_concurrent = "1us"
    discipline = "lifo"
    drop_expired = true
    error_rate = 0.01
    hold_threads = true
    on_failure = "overloaded"
    overloaded_status = true
    reject_cost = "1us"
    admission = { kind = "gcra", rate = 100, period = "1s", max_burst = 2, retry_after = "computed", status = 429 }

    [[services.calls]]
    to = ["a", "b"]
    join = { quorum = 1 }
    cancel_rest = true
    propagate_deadline = true
    max_concurrent = 5
    bulkhead_queue = 2
    pool = { size = 4, acquire_timeout = "1ms", hold_during_backoff = false }
    [[services.calls.layers]]
    max_attempts = 2
    limiter = { kind = "adaptive_throttling" }
    concurrency_limit = { kind = "aimd", status = "unavailable" }

    [[services]]
    name = "a"
    servers = 2
    service_time = { kind = "uniform", min = "1ms", max = "2ms" }
    admission = { kind = "token_bucket", max_tokens = 5, tokens_per_fill = 1, fill_interval = "50ms", status = 503 }
    queue_policy = { kind = "codel", target = "5ms", interval = "100ms" }
    concurrency_limit = { kind = "gradient2", status = 503, window = { window_size = 10 } }

    [[services]]
    name = "b"
    servers = 2
    service_time = { kind = "normal", mean = "1ms", sd = "1ms" }
    admission = { kind = "fixed_window", limit = 10, window = "1s" }
    queue_limit = 10
    shed_by_criticality = { signal = "queue_fill", sheddable = 0.5, sheddable_plus = 0.8, critical = 1.0 }

    [[services.calls]]
    to = ["c", "d"]
    [[services.calls.layers]]
    max_attempts = 1

    [[services]]
    name = "c"
    servers = 1
    service_time = "1ms"
    admission = { kind = "leaky_bucket", rate = 10, period = "1s", burst = 5, delay = 2, status = 429 }
    queue_policy = { kind = "codel_timeout", target = "5ms", interval = "100ms" }

    [[services]]
    name = "d"
    servers = 1
    service_time = "1ms"
    admission = { kind = "probabilistic", capacity = 50.5, window = "500ms", status = 503 }
    queue_policy = { kind = "adaptive_lifo", threshold = 4 }
    concurrency_limit = { kind = "fixed", limit = 4, status = 503 }

    [[fleets]]
    name = "web"
    arrival = { kind = "poisson", rate = 20, clients = 4 }
    load_profile = { ramp = [{ at = "0s", multiplier = 1 }, { at = "1s", multiplier = 2 }] }
    deadline = "1s"
    writes = 0.1
    idempotency_keys = true
    target = "front"
    propagate_deadline = true
    max_concurrent = 10
    bulkhead_queue = 1
    pool = { size = 10 }
    [[fleets.layers]]
    name = "outer"
    max_attempts = 2
    attempt_timeout = "100ms"
    cancel_on_timeout = true
    retry_on = ["error", "timeout"]
    retry_ambiguous_writes = false
    respect_retry_after = true
    instances = 2
    hop_latency = { kind = "exponential", mean = "1ms" }
    total_timeout = "500ms"
    limiter = { kind = "aws_adaptive" }
    backoff = { kind = "exponential", base = "1ms", cap = "10ms", jitter = "full" }
    budget = { kind = "token_bucket", max_tokens = 10, token_ratio = 0.1 }
    breaker = { kind = "consecutive", failures = 5, open_for = "100ms" }
    [[fleets.layers]]
    max_attempts = 1

    [[fleets]]
    name = "batch"
    criticality = "sheddable_plus"
    arrival = { kind = "constant", rate = 5 }
    load_profile = [{ at = "0s", multiplier = 1 }]
    [[fleets.layers]]
    max_attempts = 1
    retry_criticality = "sheddable"
    hedging = { max_attempts = 2, delay = "5ms", non_fatal = ["error"], cancel_losers = true }

    [[outages]]
    kind = "markov"
    mean_up = "1s"
    mean_down = "100ms"
    mode = { kind = "capacity", servers = 1 }
    target = "a"

    [[outages]]
    start = "1s"
    end = "1500ms"
    mode = { kind = "slow", factor = 2 }

    [[expect]]
    metric = "logical"
    min = 0
    max = 1e9
    per = "run"
    where = { "fleets.0.arrival.rate" = 20 }

    [sweep]
    "fleets.0.arrival.rate" = [20]
"#;

    /// Values of every type but the one a key takes, put in place of each value.
    fn wrong() -> Vec<toml::Value> {
        let table: toml::Table = [("\u{2}".to_string(), toml::Value::from(0))]
            .into_iter()
            .collect();
        vec![
            (-1).into(),
            1.5.into(),
            "x".into(),
            toml::Value::Array(vec![true.into()]),
            toml::Value::Table(table),
        ]
    }

    /// Where a value is: a key of a table or an index of a list.
    #[derive(Debug, Clone)]
    enum Seg {
        Key(String),
        Index(usize),
    }

    /// The path of every value in `v`, at every depth.
    fn paths(v: &toml::Value, at: &mut Vec<Seg>, out: &mut Vec<Vec<Seg>>) {
        let children: Vec<(Seg, &toml::Value)> = match v {
            toml::Value::Table(t) => t.iter().map(|(k, v)| (Seg::Key(k.clone()), v)).collect(),
            toml::Value::Array(a) => a
                .iter()
                .enumerate()
                .map(|(i, v)| (Seg::Index(i), v))
                .collect(),
            _ => Vec::new(),
        };
        for (seg, child) in children {
            at.push(seg);
            out.push(at.clone());
            paths(child, at, out);
            at.pop();
        }
    }

    fn at<'a>(v: &'a mut toml::Value, path: &[Seg]) -> &'a mut toml::Value {
        path.iter().fold(v, |v, seg| match seg {
            Seg::Key(k) => v.as_table_mut().unwrap().get_mut(k).unwrap(),
            Seg::Index(i) => v.as_array_mut().unwrap().get_mut(*i).unwrap(),
        })
    }

    /// The types the scenario file is read into: every `struct` or `enum` that derives
    /// or implements `Deserialize` in the scenario's file mirror and the model.
    fn deserialized_types() -> BTreeSet<String> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut files = vec![root.join("scenario/file.rs")];
        let mut stack = vec![root.join("model")];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).unwrap() {
                let p = e.unwrap().path();
                if p.is_dir() {
                    stack.push(p);
                } else if p.extension().is_some_and(|x| x == "rs") {
                    files.push(p);
                }
            }
        }
        let mut names = BTreeSet::new();
        for f in files {
            let text = std::fs::read_to_string(&f).unwrap();
            let mut derives = false;
            // A derive list rustfmt wrapped over several lines, until its `)]`.
            let mut open_derive = false;
            for line in text.lines().map(str::trim) {
                if open_derive {
                    derives |= line.contains("Deserialize");
                    open_derive = !line.ends_with(")]");
                    continue;
                }
                if line.starts_with("#[derive(") {
                    derives = line.contains("Deserialize");
                    open_derive = !line.ends_with(")]");
                    continue;
                }
                if let Some(rest) = line.strip_prefix("impl<'de> Deserialize<'de> for ") {
                    names.insert(rest.split(' ').next().unwrap().to_string());
                    continue;
                }
                let item = ["pub struct ", "pub enum ", "struct ", "enum "]
                    .iter()
                    .find_map(|p| line.strip_prefix(p));
                if let Some(rest) = item {
                    if derives {
                        let name: String = rest
                            .chars()
                            .take_while(|c| c.is_alphanumeric() || *c == '_')
                            .collect();
                        names.insert(name);
                    }
                    derives = false;
                } else if !line.starts_with("#[") && !line.starts_with("///") {
                    derives = false;
                }
            }
        }
        names
    }

    /// Types serde never names in a message, and why: the root is always a table;
    /// types with their own `expecting` ("a duration string such as ..."); tables only
    /// ever reached through a table (a variant's content `Written`, a `DistFile` inside
    /// `DistOrDur`); enums of names, which serde calls "string or map"; `import`'s
    /// table, which the importer checks before parsing; an enum inside a `DistFile`
    /// (`Unit`, `FileFormat`), whose content serde buffers and reads as "one of ...".
    const NEVER_NAMED: [&str; 34] = [
        "Unit",
        "FileFormat",
        "ScenarioFile",
        "ImportFile",
        "Dur",
        "Limit",
        "DelayParam",
        "Span",
        "DistOrDur",
        "LoadProfileFile",
        "ToFile",
        "JoinFile",
        "ProfileTable",
        "QuorumTable",
        "DistFile",
        "Written",
        "PublishKind",
        "OutageKind",
        "Per",
        "Jitter",
        "Formula",
        "Version",
        "BackoffType",
        "WindowType",
        "Placement",
        "Deposit",
        "AcceptsWritten",
        "Discipline",
        "DependencyKind",
        "OnFailure",
        "RetryAfter",
        "Criticality",
        "Signal",
        "StatusFile",
    ];

    /// Written forms no scenario key reaches yet (issue 42: the algorithms land before
    /// the keys). The step that adds `concurrency_limit` and `queue_policy` puts them
    /// in EVERY and empties this list; the test fails until it does.
    const NOT_YET_KEYS: [&str; 0] = [];

    /// Words of Rust's or serde's, never the file's.
    const RUST_WORDS: [&str; 15] = [
        "struct",
        "enum",
        "u8",
        "u16",
        "u32",
        "u64",
        "usize",
        "i32",
        "i64",
        "f32",
        "f64",
        "sequence",
        "map",
        "identifier",
        "Written",
    ];

    fn words(message: &str) -> impl Iterator<Item = &str> {
        message.split(|c: char| !c.is_alphanumeric() && c != '_')
    }

    #[test]
    fn no_parse_error_of_any_key_names_a_rust_type() {
        let types = deserialized_types();
        for n in NEVER_NAMED {
            assert!(
                types.contains(n),
                "{n} is no longer deserialized: drop it here"
            );
        }
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
        let mut texts = vec![("every.toml".to_string(), EVERY.to_string())];
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "toml") {
                let name = p.file_name().unwrap().to_string_lossy().to_string();
                texts.push((name, std::fs::read_to_string(&p).unwrap()));
            }
        }
        let mut named = BTreeSet::new();
        let mut tried = 0;
        for (name, text) in &texts {
            // Beside the scenarios, so the data files they name are found.
            let src = Source {
                path: dir.join(name).to_string_lossy().into_owned(),
                stem: "s".into(),
                text: String::new(),
            };
            let table: toml::Table = toml::from_str(text).unwrap();
            assert!(from_table(&src, table.clone()).is_ok(), "{name} loads");
            let mut all = Vec::new();
            paths(
                &toml::Value::Table(table.clone()),
                &mut Vec::new(),
                &mut all,
            );
            for path in &all {
                for w in wrong() {
                    let mut v = toml::Value::Table(table.clone());
                    *at(&mut v, path) = w.clone();
                    let toml::Value::Table(t) = v else {
                        unreachable!()
                    };
                    // What serde says ...
                    if let Ok(r) = preset::resolve("s.toml", &t) {
                        let raw = serde_path_to_error::deserialize::<_, ScenarioFile>(
                            toml::Value::Table(r.parse),
                        );
                        if let Err(e) = raw {
                            let m = e.inner().to_string();
                            named
                                .extend(words(&m).filter(|w| types.contains(*w)).map(String::from));
                        }
                    }
                    // ... and what the user reads.
                    let Err(e) = from_table(&src, t) else {
                        continue;
                    };
                    tried += 1;
                    let m = e.to_string();
                    let mut rust: Vec<&str> = words(&m)
                        .filter(|w| types.contains(*w) || RUST_WORDS.contains(w))
                        .collect();
                    rust.extend(
                        ["unit variant", "string only"]
                            .iter()
                            .filter(|p| m.contains(*p)),
                    );
                    assert!(rust.is_empty(), "{name}: {path:?} = {w}: {rust:?} in: {m}");
                }
            }
        }
        assert!(tried > 1000, "{tried} errors");
        // Every type serde can name was put where a value of another type stood.
        for n in NOT_YET_KEYS {
            assert!(
                types.contains(n),
                "{n} is no longer deserialized: drop it here"
            );
            assert!(
                !named.contains(n),
                "{n} is reached by a key now: drop it from NOT_YET_KEYS"
            );
        }
        let unnamed: Vec<&String> = types
            .iter()
            .filter(|t| {
                !named.contains(*t)
                    && !NEVER_NAMED.contains(&t.as_str())
                    && !NOT_YET_KEYS.contains(&t.as_str())
            })
            .collect();
        assert!(
            unnamed.is_empty(),
            "never fed a wrong type (add its table to EVERY, or to NEVER_NAMED if serde cannot name it): {unnamed:?}"
        );
    }

    #[test]
    fn each_rust_type_name_in_a_message_has_the_files_words() {
        let keys = ["a".to_string(), "b".to_string()];
        for (m, found, want) in [
            (
                "invalid type: integer `5`, expected internally tagged enum ArrivalFile",
                None,
                "expected a table with `kind` one of `a`, `b`",
            ),
            (
                "invalid type: integer `3`, expected struct PoolFile",
                None,
                "expected a table with keys among `a`, `b`",
            ),
            (
                "invalid type: integer `3`, expected string or map",
                None,
                "expected one of `a`, `b`",
            ),
            (
                "invalid type: unit variant, expected string only",
                Some(toml::Value::from(3)),
                "invalid type: integer `3`, expected one of `a`, `b`",
            ),
            (
                "invalid type: string \"x\", expected f64",
                None,
                "expected a number",
            ),
            (
                "invalid type: map, expected a sequence",
                None,
                "invalid type: table, expected a list",
            ),
            (
                "invalid type: sequence, expected a map",
                None,
                "invalid type: list, expected a table",
            ),
            (
                "invalid value: integer `-5`, expected u16",
                None,
                "expected a whole number from 0 to 65535",
            ),
            (
                "invalid value: integer `-5`, expected u32",
                None,
                "expected a whole number from 0 to 4294967295",
            ),
        ] {
            let got = super::in_user_terms(m, found.as_ref(), &keys);
            assert!(got.ends_with(want) || got == want, "{m}: {got}");
            assert!(got.contains(want), "{m}: {got}");
        }
        // Without the names a probe found, still no Rust.
        assert_eq!(
            super::in_user_terms(
                "invalid type: integer `3`, expected struct PoolFile",
                None,
                &[]
            ),
            "invalid type: integer `3`, expected a table"
        );
        // Messages in the file's terms already are left alone.
        for m in [
            "unknown variant `x`, expected `cell` or `run`",
            "missing field `kind`",
            "expected a non-negative integer or \"unlimited\", found -1",
        ] {
            assert_eq!(super::in_user_terms(m, None, &keys), m);
        }
    }
}

/// The examples of this file's docs, as unit tests (the module is the crate's own,
/// so rustdoc cannot run them).
#[cfg(test)]
mod doc_examples {
    #[test]
    fn in_user_terms_example() {
        use crate::scenario::error::in_user_terms;
        let m = "invalid type: integer `3`, expected struct PoolFile";
        let keys = ["size".to_string(), "acquire_timeout".to_string()];
        assert_eq!(
            in_user_terms(m, None, &keys),
            "invalid type: integer `3`, expected a table with keys among `size`, `acquire_timeout`"
        );
        assert_eq!(
            in_user_terms("invalid value: integer `-1`, expected u64", None, &[]),
            "invalid value: integer `-1`, expected a whole number from 0 to 9223372036854775807"
        );
    }
}
