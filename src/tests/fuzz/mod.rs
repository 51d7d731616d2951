//! Fuzzing the scenario path: the shipped scenarios (`scenarios/*.toml`, read at test
//! time), mutated as TOML trees and as text, go through parse, validate, explain, the
//! sweep plan, a short run and the CSV rows. Every case must end in a clear error or a
//! result: no panic, no hang.
//!
//! Mutations: drop, duplicate and swap keys and array entries; values of another type;
//! extreme numbers (±0, huge integers, 1e308, NaN, ±inf, negatives); huge, zero and
//! tiny durations; deep nesting; 100 KB and unicode strings; known keys set to kinds
//! with random fields (budgets, breakers, outages, profiles, limits, sweeps); and on
//! the text, duplicated, swapped, dropped and cut lines.
//!
//! A valid scenario is shrunk before it runs (duration and drain at most 2 s, at most
//! 200,000 buckets, rates,
//! clients, counts and instances capped, `limits.max_events` at most 200,000, one
//! replication), so a case costs milliseconds. Each case runs on its own thread: a
//! panic fails it; a hang ([`CASE_TIMEOUT`]) or a memory blow-up ([`MAX_RESIDENT`])
//! cannot be stopped, so the process prints the case and exits.
//!
//! The cases come from fixed seeds, so every run of the suite checks the same 10,000;
//! `RETRYSIM_FUZZ_SEED=N` explores others and `RETRYSIM_FUZZ_CASES=N` sets the cases
//! per part (4 parts). For long runs, use the libFuzzer target in `fuzz/`.

use std::io::Write;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use proptest::collection::vec;
use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed, TestCaseError, TestRunner};
use toml::Value;

use crate::metrics::summary::Layout;
use crate::scenario::{self, overrides, Source};

/// Longest a single case may take before it counts as a hang (a case normally takes
/// milliseconds; this is generous for a loaded 2-core CI machine).
const CASE_TIMEOUT: Duration = Duration::from_secs(30);
/// Cases per part; four parts make the 10,000.
const CASES_PER_PART: u32 = 2_500;
/// Resident memory of the whole test process above which a case counts as a blow-up.
const MAX_RESIDENT: u64 = 4 << 30;

mod schema;

/// Keys filled with a duration.
const DUR_KEYS: [&str; 53] = [
    "interval",
    "p50",
    "p90",
    "p999",
    "duration",
    "reject_cost",
    "fill_interval",
    "period",
    "visibility_timeout",
    "redelivery_delay",
    "drain",
    "bucket",
    "warmup",
    "herd_bucket",
    "retry_after",
    "per_concurrent",
    "deadline",
    "attempt_timeout",
    "total_timeout",
    "delay",
    "base",
    "cap",
    "initial",
    "start",
    "end",
    "mean_up",
    "mean_down",
    "at",
    "after",
    "think_time",
    "max_delay",
    "max_interval",
    "max_backoff",
    "ttl",
    "window",
    "open_for",
    "slow_call_duration",
    "sampling_duration",
    "break_duration",
    "mean",
    "value",
    "median",
    "p99",
    "sd",
    "max",
    "min",
    "k",
    "padding",
    "accepts",
    "deposit",
    "version",
    "window_size",
    "formula",
];
/// Keys filled with a count.
const COUNT_KEYS: [&str; 32] = [
    "limit",
    "threshold",
    "max_burst",
    "burst",
    "status",
    "tokens_per_fill",
    "bulkhead_queue",
    "seed",
    "consumers",
    "recovery_hold",
    "replications",
    "max_in_flight",
    "max_events",
    "reject_status",
    "clients",
    "count",
    "instances",
    "max_attempts_cap",
    "half_open_probes",
    "window_calls",
    "min_calls",
    "failures",
    "capacity",
    "retry_cost",
    "timeout_cost",
    "success_refund",
    "throttling_cost",
    "min_concurrency",
    "max_retries",
    "min_sample_size",
    "half_open_calls",
    "min_throughput",
];
/// Keys filled with a real number.
const REAL_KEYS: [&str; 21] = [
    "speed",
    "recovery_tolerance",
    "poison",
    "rate",
    "writes",
    "error_rate",
    "multiplier",
    "randomization_factor",
    "growth_factor",
    "max_tokens",
    "token_ratio",
    "percent",
    "min_per_sec",
    "max_ratio",
    "max_retry_ratio",
    "failure_rate",
    "slow_call_rate",
    "failure_ratio",
    "p",
    "factor",
    "tolerance",
];
/// Keys filled with a boolean.
const BOOL_KEYS: [&str; 9] = [
    "propagate_deadline",
    "drop_expired",
    "idempotency_keys",
    "cancel_on_timeout",
    "retry_ambiguous_writes",
    "respect_retry_after",
    "dynamodb",
    "count_backoff",
    "truncate",
];
/// Keys filled with a word.
const WORD_KEYS: [&str; 23] = [
    "file",
    "time",
    "client",
    "write",
    "column",
    "format",
    "tag",
    "unit",
    "criticality",
    "retry_criticality",
    "target",
    "publish",
    "name",
    "description",
    "kind",
    "discipline",
    "metric",
    "per",
    "backoff_type",
    "window_type",
    "jitter",
    "placement",
    "preset",
];
/// Keys filled with a count or `unlimited`.
const LIMIT_KEYS: [&str; 5] = [
    "servers",
    "queue_limit",
    "max_attempts",
    "max_receive_count",
    "max_concurrent",
];
/// Keys with a generator of their own (or, for whole tables, any value).
const TABLE_KEYS: [&str; 32] = [
    "series",
    "le",
    "import",
    "counts",
    "admission",
    "queue_policy",
    "concurrency_limit",
    "shed_by_criticality",
    "hedging",
    "trace",
    "pool",
    "services",
    "arrival",
    "load_profile",
    "ramp",
    "backoff",
    "budget",
    "breaker",
    "limiter",
    "outages",
    "sweep",
    "expect",
    "retry_on",
    "fleets",
    "layers",
    "dependency",
    "limits",
    "check",
    "where",
    "mode",
    "service_time",
    "hop_latency",
];

/// Every key the fuzzer knows how to fill: the schema's keys, no more
/// (`schema::every_schema_key_is_one_the_fuzzer_fills_and_no_other`).
fn covered() -> Vec<&'static str> {
    [
        &DUR_KEYS[..],
        &COUNT_KEYS,
        &REAL_KEYS,
        &BOOL_KEYS,
        &WORD_KEYS,
        &LIMIT_KEYS,
        &TABLE_KEYS,
    ]
    .concat()
}

/// The schema, probed once.
fn schema() -> &'static schema::Schema {
    static S: std::sync::OnceLock<schema::Schema> = std::sync::OnceLock::new();
    S.get_or_init(schema::probe)
}

/// Every key of the schema, for random keys.
fn keys() -> &'static [String] {
    static K: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    K.get_or_init(|| schema().keys().into_iter().collect())
}

// ----- the shipped scenarios -------------------------------------------------------

fn scenario_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios")
}

/// Every `scenarios/*.toml`, as (file name, table), in name order.
fn shipped() -> Vec<(String, toml::Table)> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(scenario_dir())
        .expect("scenarios/ exists")
        .map(|e| e.expect("readable entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no scenarios/*.toml to fuzz");
    files
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).expect("readable scenario");
            let table: toml::Table = toml::from_str(&text)
                .unwrap_or_else(|e| panic!("{} is not TOML: {e}", p.display()));
            (p.file_name().unwrap().to_string_lossy().into_owned(), table)
        })
        .collect()
}

// ----- mutations -------------------------------------------------------------------

/// A step into a table (by position) or an array (by index); selectors are reduced
/// modulo the number of children, so any number picks something.
type Selectors = Vec<u16>;

/// One change to the TOML tree.
#[derive(Debug, Clone)]
enum Mutation {
    /// Remove the selected entry.
    Drop(Selectors),
    /// Copy the selected entry's value over a sibling (or append it to its array).
    Duplicate(Selectors, u16),
    /// Swap the selected entry's value with a sibling's.
    Swap(Selectors, u16),
    /// Rename the selected key to a sibling's name or a known key.
    Rename(Selectors, String),
    /// Replace the selected value.
    Replace(Selectors, Value),
    /// Insert `key = value` into the selected table (or push onto the selected array).
    Insert(Selectors, String, Value),
    /// Wrap the selected value in `depth` arrays (or inline tables).
    Nest(Selectors, u16, bool),
    /// Set a known dotted path (creating tables on the way), as `--set` does.
    Set(String, Value),
}

/// One change to the rendered text.
#[derive(Debug, Clone)]
enum TextMutation {
    /// Repeat a line (a duplicated key or table header).
    DuplicateLine(u16),
    /// Swap two lines.
    SwapLines(u16, u16),
    /// Remove a line.
    DropLine(u16),
    /// Keep only the first part of the text (per mille).
    Truncate(u16),
    /// Insert a line.
    InsertLine(u16, String),
}

#[derive(Debug, Clone)]
struct Case {
    scenario: usize,
    mutations: Vec<Mutation>,
    text: Vec<TextMutation>,
}

const UNITS: [&str; 9] = ["ns", "us", "µs", "ms", "s", "m", "min", "h", "d"];

/// Durations a scenario uses every day.
const NORMAL_DURATIONS: [&str; 9] = [
    "1ms", "5ms", "10ms", "100ms", "250ms", "1s", "2s", "10s", "1m",
];
/// Valid durations at the edges: zero, a nanosecond, the longest horizon.
const EDGE_DURATIONS: [&str; 11] = [
    "0s",
    "1ns",
    "7ns",
    "1us",
    "999us",
    "0.5ms",
    "1h",
    "100h",
    "277h",
    "1000000s",
    "18446744073709551615ns",
];
/// Durations that must be refused: overflowing, negative, unitless, finer than 1 ns.
const BAD_DURATIONS: [&str; 14] = [
    "99999999999h",
    "18446744073709551615ns",
    "18446744073709551616ns",
    "5124096h",
    "0.0000000001s",
    "1e3s",
    "-1s",
    "1.5",
    "",
    "ms",
    ".s",
    "1..5s",
    "١s",
    "1000001s",
];

fn duration_text() -> impl Strategy<Value = String> {
    let pick = |list: &'static [&'static str]| prop::sample::select(list).prop_map(str::to_string);
    let random = prop_oneof![
        (any::<u64>(), prop::sample::select(&UNITS[..])).prop_map(|(n, u)| format!("{n}{u}")),
        (
            0u32..10_000,
            0u32..1_000_000,
            prop::sample::select(&UNITS[..])
        )
            .prop_map(|(a, b, u)| format!("{a}.{b}{u}")),
        (0u64..5_000, prop::sample::select(&UNITS[..5])).prop_map(|(n, u)| format!("{n}{u}")),
    ];
    prop_oneof![
        5 => pick(&NORMAL_DURATIONS),
        3 => pick(&EDGE_DURATIONS),
        1 => pick(&BAD_DURATIONS),
        1 => random,
    ]
}

/// Integers, as counts are written: mostly valid, at the edges, or out of range.
fn count() -> impl Strategy<Value = Value> {
    let normal = prop_oneof![(1i64..20), (1i64..3_000)].prop_map(Value::Integer);
    let edge = prop_oneof![
        Just(1i64),
        Just(100_000),
        Just(1_000_000),
        Just(10_000_000),
        Just(100_000_000),
        Just(i64::from(u32::MAX)),
    ]
    .prop_map(Value::Integer);
    let bad = prop_oneof![
        Just(Value::Integer(0)),
        Just(Value::Integer(-1)),
        Just(Value::Integer(i64::MAX)),
        Just(Value::Integer(i64::MIN)),
        Just(Value::Integer(i64::from(u32::MAX) + 1)),
        any::<i64>().prop_map(Value::Integer),
        Just(Value::Float(2.5)),
    ];
    prop_oneof![5 => normal, 3 => edge, 2 => bad]
}

/// Floats, as rates, probabilities and factors are written.
fn real() -> impl Strategy<Value = Value> {
    let normal = prop_oneof![
        (0.0f64..1.0),
        (0.0f64..2_000.0),
        Just(0.5),
        Just(1.0),
        Just(2.0),
    ]
    .prop_map(Value::Float);
    let edge = prop_oneof![
        Just(0.0),
        Just(-0.0),
        Just(1e-9),
        Just(5e-324),
        Just(1.0 + f64::EPSILON),
        Just(1e3),
        Just(1e6),
        Just(1e8),
        Just(1e9),
    ]
    .prop_map(Value::Float);
    let bad = prop_oneof![
        Just(f64::NAN),
        Just(f64::INFINITY),
        Just(f64::NEG_INFINITY),
        Just(-1.0),
        Just(1e308),
        Just(-1e308),
        Just(1.5),
        any::<f64>(),
    ]
    .prop_map(Value::Float);
    prop_oneof![5 => normal, 3 => edge, 2 => bad, 1 => (0i64..100).prop_map(Value::Integer)]
}

fn number() -> impl Strategy<Value = Value> {
    prop_oneof![count(), real()]
}

const WORDS: [&str; 42] = [
    "unlimited",
    "poisson",
    "constant",
    "closed",
    "burst",
    "exponential",
    "deterministic",
    "lognormal",
    "uniform",
    "normal",
    "none",
    "fixed",
    "full",
    "equal",
    "decorrelated",
    "token_bucket",
    "ratio",
    "aws_standard",
    "consecutive",
    "rate",
    "inside",
    "outside",
    "fail",
    "error_rate",
    "slow",
    "capacity",
    "blackhole",
    "window",
    "markov",
    "queue",
    "occ",
    "fifo",
    "lifo",
    "rejected",
    "error",
    "timeout",
    "breaker_open",
    "budget_exhausted",
    "deadline_exceeded",
    "conflict",
    "failure_ratio",
    "rejected_5xx",
];

fn string() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => duration_text(),
        3 => prop::sample::select(&WORDS[..]).prop_map(str::to_string),
        1 => Just(String::new()),
        1 => Just("\u{0}".to_string()),
        1 => Just("a\r\nb,\"c\"".to_string()),
        1 => Just("../../etc".to_string()),
        1 => Just(".hidden".to_string()),
        1 => "\\PC{0,24}",
        1 => (1usize..=100_000).prop_map(|n| "ä".repeat(n / 2)),
        1 => (1usize..=100_000).prop_map(|n| "x".repeat(n)),
    ]
}

fn datetime() -> Value {
    Value::Datetime("1979-05-27T07:32:00Z".parse().expect("valid datetime"))
}

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        4 => number(),
        4 => string().prop_map(Value::String),
        1 => any::<bool>().prop_map(Value::Boolean),
        1 => Just(datetime()),
        1 => Just(Value::Array(vec![])),
        1 => Just(Value::Table(toml::Table::new())),
    ]
}

fn any_value() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(3, 12, 4, |inner| {
        prop_oneof![
            vec(inner.clone(), 0..4).prop_map(Value::Array),
            vec((key_name(), inner), 0..4).prop_map(|kv| Value::Table(kv.into_iter().collect())),
        ]
    })
}

fn key_name() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => prop::sample::select(keys()),
        1 => "[a-z_]{1,12}",
        1 => "\\PC{0,8}",
    ]
}

fn dur() -> impl Strategy<Value = Value> {
    duration_text().prop_map(Value::String)
}

fn table(pairs: Vec<(&str, Option<Value>)>) -> Value {
    Value::Table(
        pairs
            .into_iter()
            .filter_map(|(k, v)| v.map(|v| (k.to_string(), v)))
            .collect(),
    )
}

fn kind(k: &str) -> Option<Value> {
    Some(Value::String(k.to_string()))
}

/// A distribution table of a random kind with random fields (or a plain duration).
fn dist() -> impl Strategy<Value = Value> {
    prop_oneof![
        dur(),
        dur().prop_map(|m| table(vec![("kind", kind("exponential")), ("mean", Some(m))])),
        dur().prop_map(|v| table(vec![("kind", kind("deterministic")), ("value", Some(v))])),
        (dur(), dur()).prop_map(|(a, b)| table(vec![
            ("kind", kind("lognormal")),
            ("median", Some(a)),
            ("p99", Some(b))
        ])),
        (dur(), dur()).prop_map(|(a, b)| table(vec![
            ("kind", kind("uniform")),
            ("min", Some(a)),
            ("max", Some(b))
        ])),
        (dur(), dur()).prop_map(|(a, b)| table(vec![
            ("kind", kind("normal")),
            ("mean", Some(a)),
            ("sd", Some(b))
        ])),
        (vec(dur(), 0..5), vec(real(), 0..6), opt(dur())).prop_map(|(le, counts, max)| table(
            vec![
                ("kind", kind("histogram")),
                ("le", Some(Value::Array(le))),
                ("counts", Some(Value::Array(counts))),
                ("max", max)
            ]
        )),
        (opt(dur()), opt(dur()), dur()).prop_map(|(p50, p99, max)| table(vec![
            ("kind", kind("quantiles")),
            ("p50", p50),
            ("p99", p99),
            ("max", Some(max))
        ])),
        (string(), opt(dur())).prop_map(|(f, max)| table(vec![
            ("kind", kind("histogram")),
            ("file", Some(Value::String(f))),
            ("max", max)
        ])),
        (string(), opt(string())).prop_map(|(f, tag)| table(vec![
            ("kind", kind("hdr")),
            ("file", Some(Value::String(f))),
            ("tag", tag.map(Value::String))
        ])),
        (string(), string()).prop_map(|(f, c)| table(vec![
            ("kind", kind("empirical")),
            ("file", Some(Value::String(f))),
            ("column", Some(Value::String(c)))
        ])),
    ]
}

fn opt<S: Strategy>(s: S) -> impl Strategy<Value = Option<S::Value>> {
    prop::option::weighted(0.7, s)
}

fn arrival() -> impl Strategy<Value = Value> {
    prop_oneof![
        (real(), opt(count())).prop_map(|(r, c)| table(vec![
            ("kind", kind("poisson")),
            ("rate", Some(r)),
            ("clients", c)
        ])),
        (real(), opt(count())).prop_map(|(r, c)| table(vec![
            ("kind", kind("constant")),
            ("rate", Some(r)),
            ("clients", c)
        ])),
        (count(), dist()).prop_map(|(c, t)| table(vec![
            ("kind", kind("closed")),
            ("clients", Some(c)),
            ("think_time", Some(t))
        ])),
        (dur(), count(), opt(count())).prop_map(|(a, n, c)| table(vec![
            ("kind", kind("burst")),
            ("at", Some(a)),
            ("count", Some(n)),
            ("clients", c)
        ])),
        (
            opt(real()),
            opt(prop::sample::select(&["poisson", "constant", "burst"][..])),
            opt(dur()),
            opt(count())
        )
            .prop_map(|(r, p, a, n)| table(vec![
                ("kind", kind("queue")),
                ("rate", r),
                ("publish", p.map(|p| Value::String(p.into()))),
                ("at", a),
                ("count", n)
            ])),
    ]
}

fn load_profile() -> impl Strategy<Value = Value> {
    let point = (dur(), real())
        .prop_map(|(at, m)| table(vec![("at", Some(at)), ("multiplier", Some(m))]))
        .boxed();
    prop_oneof![
        vec(point.clone(), 0..5).prop_map(Value::Array),
        vec(point, 0..5).prop_map(|p| table(vec![("ramp", Some(Value::Array(p)))])),
    ]
}

fn backoff() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(table(vec![("kind", kind("none"))])),
        dur().prop_map(|d| table(vec![("kind", kind("fixed")), ("delay", Some(d))])),
        (
            dur(),
            opt(dur()),
            opt(real()),
            opt(prop::sample::select(&WORDS[10..15]))
        )
            .prop_map(|(b, c, m, j)| table(vec![
                ("kind", kind("exponential")),
                ("base", Some(b)),
                ("cap", c),
                ("multiplier", m),
                ("jitter", j.map(|j| Value::String(j.to_string())))
            ])),
    ]
}

fn budget() -> impl Strategy<Value = Value> {
    prop_oneof![
        (real(), real()).prop_map(|(a, b)| table(vec![
            ("kind", kind("token_bucket")),
            ("max_tokens", Some(a)),
            ("token_ratio", Some(b))
        ])),
        (real(), opt(real()), opt(dur())).prop_map(|(p, m, w)| table(vec![
            ("kind", kind("ratio")),
            ("percent", Some(p)),
            ("min_per_sec", m),
            ("window", w)
        ])),
        (
            opt(real()),
            opt(prop_oneof![dur(), Just(Value::String("unlimited".into()))])
        )
            .prop_map(|(r, w)| table(vec![
                ("kind", kind("failure_ratio")),
                ("max_ratio", r),
                ("window", w)
            ])),
        (opt(count()), opt(count()), opt(count()), opt(count())).prop_map(|(a, b, c, d)| {
            table(vec![
                ("kind", kind("aws_standard")),
                ("capacity", a),
                ("retry_cost", b),
                ("timeout_cost", c),
                ("success_refund", d),
            ])
        }),
    ]
}

fn breaker() -> impl Strategy<Value = Value> {
    let placement = opt(prop::sample::select(&WORDS[20..22]))
        .prop_map(|p| p.map(|p| Value::String(p.to_string())))
        .boxed();
    prop_oneof![
        (count(), dur(), opt(count()), placement.clone()).prop_map(|(f, o, h, p)| table(vec![
            ("kind", kind("consecutive")),
            ("failures", Some(f)),
            ("open_for", Some(o)),
            ("half_open_probes", h),
            ("placement", p)
        ])),
        (
            count(),
            opt(count()),
            real(),
            dur(),
            opt(count()),
            placement
        )
            .prop_map(|(w, m, r, o, h, p)| table(vec![
                ("kind", kind("rate")),
                ("window_calls", Some(w)),
                ("min_calls", m),
                ("failure_rate", Some(r)),
                ("open_for", Some(o)),
                ("half_open_probes", h),
                ("placement", p)
            ])),
    ]
}

fn mode() -> impl Strategy<Value = Value> {
    prop_oneof![
        opt(dur()).prop_map(|a| table(vec![("kind", kind("fail")), ("after", a)])),
        real().prop_map(|p| table(vec![("kind", kind("error_rate")), ("p", Some(p))])),
        real().prop_map(|f| table(vec![("kind", kind("slow")), ("factor", Some(f))])),
        count().prop_map(|s| table(vec![("kind", kind("capacity")), ("servers", Some(s))])),
        Just(table(vec![("kind", kind("blackhole"))])),
    ]
}

fn outage() -> impl Strategy<Value = Value> {
    prop_oneof![
        (dur(), dur(), mode()).prop_map(|(s, e, m)| table(vec![
            ("start", Some(s)),
            ("end", Some(e)),
            ("mode", Some(m))
        ])),
        (dur(), dur(), mode()).prop_map(|(u, d, m)| table(vec![
            ("kind", kind("markov")),
            ("mean_up", Some(u)),
            ("mean_down", Some(d)),
            ("mode", Some(m))
        ])),
    ]
}

fn sweep() -> impl Strategy<Value = Value> {
    let key = prop::sample::select(set_paths()).prop_map(str::to_string);
    let values = prop_oneof![
        vec(leaf(), 0..4).prop_map(Value::Array),
        (number(), number(), number()).prop_map(|(f, t, s)| table(vec![
            ("from", Some(f)),
            ("to", Some(t)),
            ("step", Some(s))
        ])),
        leaf(),
    ];
    vec((key, values), 0..3).prop_map(|kv| Value::Table(kv.into_iter().collect()))
}

fn expect() -> impl Strategy<Value = Value> {
    let e = (string(), opt(real()), opt(real())).prop_map(|(m, a, b)| {
        table(vec![
            ("metric", Some(Value::String(m))),
            ("min", a),
            ("max", b),
        ])
    });
    vec(e, 0..3).prop_map(Value::Array)
}

/// Known dotted paths, for `Set` and sweep keys: every key of the schema's plain
/// tables (a whole table of the root or a fleet left out: mutations replace those), and
/// the keys of an arrival.
fn set_paths() -> &'static [&'static str] {
    static P: std::sync::OnceLock<Vec<&'static str>> = std::sync::OnceLock::new();
    P.get_or_init(|| {
        let wholes = ["fleets", "layers", "dependency", "limits", "check"];
        let mut p: Vec<String> = schema()
            .paths()
            .into_iter()
            .filter(|p| !wholes.contains(&p.rsplit('.').next().unwrap_or(p)))
            .collect();
        for (_, keys) in schema().variants("fleets.0.arrival") {
            p.extend(keys.iter().map(|k| format!("fleets.0.arrival.{k}")));
        }
        p.sort();
        p.dedup();
        p.into_iter()
            .map(|s| &*Box::leak(s.into_boxed_str()))
            .collect()
    })
}

/// A table of a random variant of the tagged table at `path`, each of its keys set
/// with a fitting value or left out: every kind the schema has.
fn tagged(path: &str) -> BoxedStrategy<Value> {
    let arms: Vec<BoxedStrategy<Value>> = schema()
        .variants(path)
        .into_iter()
        .map(|(kind, keys)| {
            let fields: Vec<BoxedStrategy<(String, Option<Value>)>> = keys
                .into_iter()
                .map(|k| {
                    let k: &'static str = Box::leak(k.into_boxed_str());
                    opt(value_for(k))
                        .prop_map(move |v| (k.to_string(), v))
                        .boxed()
                })
                .collect();
            fields
                .prop_map(move |fs| {
                    let mut t = toml::Table::new();
                    t.insert("kind".into(), Value::String(kind.clone()));
                    t.extend(fs.into_iter().filter_map(|(k, v)| v.map(|v| (k, v))));
                    Value::Table(t)
                })
                .boxed()
        })
        .collect();
    prop::strategy::Union::new(arms).boxed()
}

/// The layer presets, by name.
fn preset() -> BoxedStrategy<Value> {
    let names: Vec<Value> = schema().presets["fleets.0.layers.0"]
        .iter()
        .map(|n| Value::String(n.trim_matches('"').to_string()))
        .collect();
    prop::sample::select(names).boxed()
}

/// A value that fits the path (most of the time) or anything at all.
fn value_for(path: &'static str) -> BoxedStrategy<Value> {
    let fitting: BoxedStrategy<Value> = match path.rsplit('.').next().unwrap_or(path) {
        "duration" | "drain" | "bucket" | "herd_bucket" | "warmup" | "retry_after"
        | "per_concurrent" | "deadline" | "attempt_timeout" => dur().boxed(),
        "service_time" | "hop_latency" => dist().boxed(),
        "le" => vec(dur(), 0..5).prop_map(Value::Array).boxed(),
        "counts" => vec(real(), 0..5).prop_map(Value::Array).boxed(),
        "servers" | "queue_limit" | "max_attempts" | "max_receive_count" | "max_concurrent" => {
            prop_oneof![
                4 => count(),
                1 => Just(Value::String("unlimited".into()))
            ]
            .boxed()
        }
        "arrival" => arrival().boxed(),
        "load_profile" => load_profile().boxed(),
        "backoff" => prop_oneof![backoff(), tagged("fleets.0.layers.0.backoff")].boxed(),
        "budget" => prop_oneof![budget(), tagged("fleets.0.layers.0.budget")].boxed(),
        "breaker" => prop_oneof![breaker(), tagged("fleets.0.layers.0.breaker")].boxed(),
        "limiter" => tagged("fleets.0.layers.0.limiter"),
        "admission" => tagged("dependency.admission"),
        "queue_policy" => tagged("dependency.queue_policy"),
        "concurrency_limit" => prop::sample::select(vec![
            "{ kind = \"fixed\", limit = 3 }",
            "{ kind = \"aimd\", status = 503 }",
            "{ kind = \"vegas\", status = \"unavailable\" }",
            "{ kind = \"gradient2\", window = { window_size = 10 } }",
            "{ kind = \"envoy_gradient\", update_interval = \"100ms\", min_rtt_interval = \"1s\" }",
            "{ kind = \"fixed\", limit = 0 }",
        ])
        .prop_map(|t| toml::from_str::<toml::Table>(&format!("v = {t}")).unwrap()["v"].clone())
        .boxed(),
        "import" => prop::sample::select(vec![
            "{ format = \"grpc_service_config\", file = \"sc.json\", service = \"pkg.Svc\" }",
            "{ format = \"grpc_service_config\", file = \"\" }",
            "{ format = \"grpc_service_config\", file = \"sc.json\", method = \"Get\", route = \"x\" }",
            "{ format = \"envoy\", file = \"sc.json\" }",
            "{ file = 3 }",
        ])
        .prop_map(|t| toml::from_str::<toml::Table>(&format!("v = {t}")).unwrap()["v"].clone())
        .boxed(),
        "criticality" | "retry_criticality" => prop::sample::select(&CLASSES[..])
            .prop_map(|c| Value::String(c.into()))
            .boxed(),
        "shed_by_criticality" => shed_by_criticality().boxed(),
        "preset" => preset(),
        "pool" => pool().boxed(),
        "trace" => trace().boxed(),
        "hedging" => hedging().boxed(),
        "outages" => vec(outage(), 0..4).prop_map(Value::Array).boxed(),
        "sweep" => sweep().boxed(),
        "expect" => expect().boxed(),
        "retry_on" => vec(prop::sample::select(&WORDS[33..]), 0..4)
            .prop_map(|v| Value::Array(v.into_iter().map(|s| Value::String(s.into())).collect()))
            .boxed(),
        "kind" | "discipline" | "name" => string().prop_map(Value::String).boxed(),
        "drop_expired"
        | "idempotency_keys"
        | "cancel_on_timeout"
        | "retry_ambiguous_writes"
        | "respect_retry_after" => any::<bool>().prop_map(Value::Boolean).boxed(),
        "rate" | "writes" | "error_rate" | "recovery_tolerance" => real().boxed(),
        k if DUR_KEYS.contains(&k) => dur().boxed(),
        k if REAL_KEYS.contains(&k) => real().boxed(),
        k if BOOL_KEYS.contains(&k) => any::<bool>().prop_map(Value::Boolean).boxed(),
        k if WORD_KEYS.contains(&k) => string().prop_map(Value::String).boxed(),
        _ => count().boxed(),
    };
    prop_oneof![9 => fitting, 1 => any_value()].boxed()
}

/// The request classes, and a name that is none.
const CLASSES: [&str; 5] = [
    "critical_plus",
    "critical",
    "sheddable_plus",
    "sheddable",
    "x",
];

/// A `shed_by_criticality` table: a signal and thresholds, often monotone, sometimes not.
fn shed_by_criticality() -> impl Strategy<Value = Value> {
    (
        prop::sample::select(&["queue_fill", "utilisation", "x"][..]),
        opt(real()),
        opt(real()),
        opt(real()),
    )
        .prop_map(|(signal, a, b, c)| {
            let mut t = toml::Table::new();
            t.insert("signal".into(), Value::String(signal.into()));
            for (k, v) in [("sheddable", a), ("sheddable_plus", b), ("critical", c)] {
                if let Some(v) = v {
                    t.insert(k.into(), v);
                }
            }
            Value::Table(t)
        })
}

/// A hedging table: copies, sometimes a delay, non-fatal classes and a cancel flag.
fn hedging() -> impl Strategy<Value = Value> {
    (
        count(),
        prop::option::of(dur()),
        prop::option::of(vec(prop::sample::select(&WORDS[33..]), 0..3)),
        prop::option::of(any::<bool>()),
    )
        .prop_map(|(n, delay, non_fatal, cancel)| {
            table(vec![
                ("max_attempts", Some(n)),
                ("delay", delay),
                (
                    "non_fatal",
                    non_fatal.map(|v| {
                        Value::Array(v.into_iter().map(|s| Value::String(s.into())).collect())
                    }),
                ),
                ("cancel_losers", cancel.map(Value::Boolean)),
            ])
        })
}

/// A connection pool table: a size, sometimes a wait and a hold.
fn trace() -> impl Strategy<Value = Value> {
    (count(), prop::option::of(count()))
        .prop_map(|(sample, seed)| table(vec![("sample", Some(sample)), ("seed", seed)]))
}

fn pool() -> impl Strategy<Value = Value> {
    (
        count(),
        prop::option::of(dur()),
        prop::option::of(any::<bool>()),
    )
        .prop_map(|(size, wait, hold)| {
            table(vec![
                ("size", Some(size)),
                ("acquire_timeout", wait),
                ("hold_during_backoff", hold.map(Value::Boolean)),
            ])
        })
}

fn selectors() -> impl Strategy<Value = Selectors> {
    vec(any::<u16>(), 0..6)
}

/// A known path set to a value that mostly fits it: reaches deep validation rules and
/// valid but extreme scenarios.
fn set_mutation() -> impl Strategy<Value = Mutation> {
    prop::sample::select(set_paths())
        .prop_flat_map(|p| value_for(p).prop_map(move |v| Mutation::Set(p.to_string(), v)))
}

/// Valid settings known to be risky: bursts of tiny outage windows, many fleets, deep
/// stacks of unlimited retries, lossy extremes of every distribution, nanosecond
/// buckets under an outage that never ends.
fn hostile() -> impl Strategy<Value = Vec<Mutation>> {
    let tiny = prop::sample::select(&["1ns", "7ns", "1us", "10us", "1ms"][..])
        .prop_map(|d| Value::String(d.to_string()));
    let markov = (tiny.clone(), tiny.clone(), mode()).prop_map(|(u, d, m)| {
        vec![Mutation::Set(
            "outages".into(),
            Value::Array(vec![table(vec![
                ("kind", kind("markov")),
                ("mean_up", Some(u)),
                ("mean_down", Some(d)),
                ("mode", Some(m)),
            ])]),
        )]
    });
    let many_fleets = (2usize..40).prop_map(|n| {
        let fleets = (0..n)
            .map(|i| {
                table(vec![
                    ("name", Some(Value::String(format!("f{i}")))),
                    (
                        "arrival",
                        Some(table(vec![
                            ("kind", kind("poisson")),
                            ("rate", Some(Value::Float(10.0))),
                        ])),
                    ),
                ])
            })
            .collect();
        vec![Mutation::Set("fleets".into(), Value::Array(fleets))]
    });
    let deep_stack = (1usize..=17, any::<bool>(), prop::option::of(tiny.clone())).prop_map(
        |(n, unlimited, timeout)| {
            let layer = table(vec![
                (
                    "max_attempts",
                    Some(if unlimited {
                        Value::String("unlimited".into())
                    } else {
                        Value::Integer(3)
                    }),
                ),
                ("attempt_timeout", timeout),
            ]);
            vec![Mutation::Set(
                "fleets.0.layers".into(),
                Value::Array(vec![layer; n]),
            )]
        },
    );
    let profile = (real(), real(), tiny.clone()).prop_map(|(a, b, at)| {
        vec![Mutation::Set(
            "fleets.0.load_profile".into(),
            Value::Array(vec![
                table(vec![
                    ("at", Some(Value::String("0s".into()))),
                    ("multiplier", Some(a)),
                ]),
                table(vec![("at", Some(at)), ("multiplier", Some(b))]),
            ]),
        )]
    });
    let extremes = (dist(), dist(), tiny).prop_map(|(s, h, d)| {
        vec![
            Mutation::Set("dependency.service_time".into(), s),
            Mutation::Set("fleets.0.layers.0.hop_latency".into(), h),
            Mutation::Set("fleets.0.deadline".into(), d),
        ]
    });
    let max = "18446744073709551615ns";
    let end_of_time =
        (prop::sample::select(&["1ns", "3ns", "1us"][..]), mode()).prop_map(move |(bucket, m)| {
            vec![
                Mutation::Set("duration".into(), Value::String("100us".into())),
                Mutation::Set("drain".into(), Value::String("0s".into())),
                Mutation::Set("warmup".into(), Value::String("0s".into())),
                Mutation::Set("bucket".into(), Value::String(bucket.into())),
                Mutation::Set(
                    "outages".into(),
                    Value::Array(vec![table(vec![
                        ("start", Some(Value::String("0s".into()))),
                        ("end", Some(Value::String(max.into()))),
                        ("mode", Some(m)),
                    ])]),
                ),
            ]
        });
    prop_oneof![
        markov,
        many_fleets,
        deep_stack,
        profile,
        extremes,
        end_of_time
    ]
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let set = set_mutation();
    prop_oneof![
        2 => selectors().prop_map(Mutation::Drop),
        1 => (selectors(), any::<u16>()).prop_map(|(s, i)| Mutation::Duplicate(s, i)),
        1 => (selectors(), any::<u16>()).prop_map(|(s, i)| Mutation::Swap(s, i)),
        1 => (selectors(), key_name()).prop_map(|(s, k)| Mutation::Rename(s, k)),
        3 => (selectors(), any_value()).prop_map(|(s, v)| Mutation::Replace(s, v)),
        1 => (selectors(), key_name(), any_value()).prop_map(|(s, k, v)| Mutation::Insert(s, k, v)),
        1 => (selectors(), 1u16..200, any::<bool>()).prop_map(|(s, d, a)| Mutation::Nest(s, d, a)),
        8 => set,
    ]
}

fn text_mutation() -> impl Strategy<Value = TextMutation> {
    prop_oneof![
        any::<u16>().prop_map(TextMutation::DuplicateLine),
        (any::<u16>(), any::<u16>()).prop_map(|(a, b)| TextMutation::SwapLines(a, b)),
        any::<u16>().prop_map(TextMutation::DropLine),
        (0u16..1000).prop_map(TextMutation::Truncate),
        (
            any::<u16>(),
            prop_oneof![
                Just("[[fleets]]".to_string()),
                Just("[dependency]".to_string()),
                Just("duration = \"1s\"".to_string()),
                Just("x = [[[[[[[[[[[[".to_string()),
                Just("\"\"\" unterminated".to_string()),
                Just("a.b.c.d = 1".to_string()),
                "\\PC{0,30}",
            ]
        )
            .prop_map(|(i, l)| TextMutation::InsertLine(i, l)),
    ]
}

fn case(n_scenarios: usize) -> impl Strategy<Value = Case> {
    let mutations = prop_oneof![
        3 => vec(set_mutation(), 1..5),
        2 => vec(mutation(), 0..5),
        1 => (hostile(), vec(set_mutation(), 0..3)).prop_map(|(mut h, more)| {
            h.extend(more);
            h
        }),
    ];
    (
        0..n_scenarios,
        mutations,
        prop::option::weighted(0.15, vec(text_mutation(), 1..3)),
    )
        .prop_map(|(scenario, mutations, text)| Case {
            scenario,
            mutations,
            text: text.unwrap_or_default(),
        })
}

// ----- applying mutations ----------------------------------------------------------

#[derive(Debug, Clone)]
enum Step {
    Key(String),
    Index(usize),
}

/// Follows selectors from the root while the node is a non-empty container.
fn resolve(root: &Value, sels: &[u16]) -> Vec<Step> {
    let mut path = Vec::new();
    let mut node = root;
    for &s in sels {
        match node {
            Value::Table(t) if !t.is_empty() => {
                let (k, v) = t.iter().nth(s as usize % t.len()).expect("in range");
                path.push(Step::Key(k.clone()));
                node = v;
            }
            Value::Array(a) if !a.is_empty() => {
                let i = s as usize % a.len();
                path.push(Step::Index(i));
                node = &a[i];
            }
            _ => break,
        }
    }
    path
}

fn node_mut<'a>(root: &'a mut Value, path: &[Step]) -> Option<&'a mut Value> {
    let mut node = root;
    for step in path {
        node = match (node, step) {
            (Value::Table(t), Step::Key(k)) => t.get_mut(k)?,
            (Value::Array(a), Step::Index(i)) => a.get_mut(*i)?,
            _ => return None,
        };
    }
    Some(node)
}

fn sibling(parent: &Value, pick: u16) -> Option<Step> {
    match parent {
        Value::Table(t) if !t.is_empty() => Some(Step::Key(
            t.keys()
                .nth(pick as usize % t.len())
                .expect("in range")
                .clone(),
        )),
        Value::Array(a) if !a.is_empty() => Some(Step::Index(pick as usize % a.len())),
        _ => None,
    }
}

fn get_child(parent: &Value, step: &Step) -> Option<Value> {
    match (parent, step) {
        (Value::Table(t), Step::Key(k)) => t.get(k).cloned(),
        (Value::Array(a), Step::Index(i)) => a.get(*i).cloned(),
        _ => None,
    }
}

fn set_child(parent: &mut Value, step: &Step, v: Value) {
    match (parent, step) {
        (Value::Table(t), Step::Key(k)) => {
            t.insert(k.clone(), v);
        }
        (Value::Array(a), Step::Index(i)) if *i < a.len() => a[*i] = v,
        _ => {}
    }
}

fn apply(root: &mut Value, m: &Mutation) {
    match m {
        Mutation::Set(path, v) => {
            if let Value::Table(t) = root {
                // A path that does not fit the tree is simply not applied.
                let _ = overrides::apply(t, path, v.clone());
            }
        }
        Mutation::Insert(sels, k, v) => {
            let path = resolve(root, sels);
            match node_mut(root, &path) {
                Some(Value::Table(t)) => {
                    t.insert(k.clone(), v.clone());
                }
                Some(Value::Array(a)) => a.push(v.clone()),
                _ => {}
            }
        }
        _ => {
            let sels = match m {
                Mutation::Drop(s)
                | Mutation::Duplicate(s, _)
                | Mutation::Swap(s, _)
                | Mutation::Rename(s, _)
                | Mutation::Replace(s, _)
                | Mutation::Nest(s, _, _) => s,
                Mutation::Set(..) | Mutation::Insert(..) => unreachable!(),
            };
            let path = resolve(root, sels);
            let Some((last, parent_path)) = path.split_last() else {
                return; // the root itself: leave it a table
            };
            let Some(parent) = node_mut(root, parent_path) else {
                return;
            };
            match m {
                Mutation::Drop(_) => match (parent, last) {
                    (Value::Table(t), Step::Key(k)) => {
                        t.remove(k);
                    }
                    (Value::Array(a), Step::Index(i)) => {
                        a.remove(*i);
                    }
                    _ => {}
                },
                Mutation::Duplicate(_, pick) => {
                    let v = get_child(parent, last).expect("resolved");
                    match parent {
                        Value::Array(a) => a.push(v),
                        p => {
                            if let Some(other) = sibling(p, *pick) {
                                set_child(p, &other, v);
                            }
                        }
                    }
                }
                Mutation::Swap(_, pick) => {
                    if let Some(other) = sibling(parent, *pick) {
                        let a = get_child(parent, last).expect("resolved");
                        let b = get_child(parent, &other).expect("sibling");
                        set_child(parent, last, b);
                        set_child(parent, &other, a);
                    }
                }
                Mutation::Rename(_, new) => {
                    if let (Value::Table(t), Step::Key(k)) = (parent, last) {
                        if let Some(v) = t.remove(k) {
                            t.insert(new.clone(), v);
                        }
                    }
                }
                Mutation::Replace(_, v) => set_child(parent, last, v.clone()),
                Mutation::Nest(_, depth, as_array) => {
                    let mut v = get_child(parent, last).expect("resolved");
                    for _ in 0..*depth {
                        v = if *as_array {
                            Value::Array(vec![v])
                        } else {
                            Value::Table([("x".to_string(), v)].into_iter().collect())
                        };
                    }
                    set_child(parent, last, v);
                }
                Mutation::Set(..) | Mutation::Insert(..) => unreachable!(),
            }
        }
    }
}

fn apply_text(text: &str, muts: &[TextMutation]) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    for m in muts {
        let n = lines.len().max(1);
        match m {
            TextMutation::DuplicateLine(i) => {
                if let Some(l) = lines.get(*i as usize % n).cloned() {
                    lines.insert(*i as usize % n, l);
                }
            }
            TextMutation::SwapLines(a, b) => {
                if !lines.is_empty() {
                    lines.swap(*a as usize % n, *b as usize % n);
                }
            }
            TextMutation::DropLine(i) => {
                if !lines.is_empty() {
                    lines.remove(*i as usize % n);
                }
            }
            TextMutation::Truncate(permille) => {
                let keep = lines.len() * *permille as usize / 1000;
                lines.truncate(keep);
            }
            TextMutation::InsertLine(i, l) => {
                lines.insert(*i as usize % (lines.len() + 1), l.clone())
            }
        }
    }
    lines.join("\n")
}

/// The mutated scenario as text (what a user would feed in).
fn render(base: &toml::Table, c: &Case) -> String {
    let mut root = Value::Table(base.clone());
    for m in &c.mutations {
        apply(&mut root, m);
    }
    let Value::Table(t) = root else {
        unreachable!("mutations keep the root a table")
    };
    // Values nested deeper than TOML text can say come out as an error, not a crash.
    let text = toml::to_string(&t).unwrap_or_else(|e| format!("# unrenderable: {e}\n"));
    if c.text.is_empty() {
        text
    } else {
        apply_text(&text, &c.text)
    }
}

// ----- running a case --------------------------------------------------------------

/// What a case ended in.
#[derive(Debug, Default, Clone, Copy)]
struct Tally {
    rejected: u64,
    ran: u64,
    truncated: u64,
    swept: u64,
}

/// Resident memory of this test process, from `/proc/self/statm` (Linux).
fn resident_bytes() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4096)
}

/// Runs `f` on its own thread: a panic becomes an error. A case that hangs or eats
/// memory cannot be stopped, and shrinking would start more of them: the process
/// reports `what` (the case) on the real stderr and exits.
fn guarded<T: Send + 'static>(
    what: &dyn Fn() -> String,
    f: impl FnOnce() -> T + Send + 'static,
) -> Result<T, String> {
    let (tx, rx) = mpsc::channel();
    std::thread::Builder::new()
        .name("fuzz-case".into())
        // Mutations may nest values far deeper than TOML text can (the parser stops
        // at its recursion limit); rendering them recurses.
        .stack_size(256 << 20)
        .spawn(move || {
            let _ = tx.send(catch_unwind(AssertUnwindSafe(f)));
        })
        .expect("spawn a case thread");
    let started = Instant::now();
    loop {
        let runaway = match rx.recv_timeout(Duration::from_millis(50)) {
            Ok(Ok(v)) => return Ok(v),
            Ok(Err(p)) => {
                return Err(format!(
                    "panicked: {}",
                    p.downcast_ref::<String>()
                        .cloned()
                        .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                        .unwrap_or_default()
                ))
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => return Err("the case thread died".into()),
            Err(mpsc::RecvTimeoutError::Timeout) => {
                if started.elapsed() > CASE_TIMEOUT {
                    Some(format!("did not finish within {CASE_TIMEOUT:?} (a hang)"))
                } else {
                    resident_bytes()
                        .filter(|&b| b > MAX_RESIDENT)
                        .map(|b| format!("the process holds {} MiB (a memory blow-up)", b >> 20))
                }
            }
        };
        if let Some(why) = runaway {
            let mut err = std::io::stderr();
            let _ = writeln!(err, "\nfuzz case failed: {why}\n{}", what());
            std::process::exit(101);
        }
    }
}

/// Parse, validate, explain, plan, shrink and run one scenario text in-process.
fn check_text(text: String) -> Result<Tally, String> {
    let shown = text.chars().take(4_000).collect::<String>();
    guarded(&|| format!("scenario text:\n{shown}"), move || {
        let mut t = Tally::default();
        let src = Source {
            path: "fuzz.toml".into(),
            stem: "fuzz".into(),
            text,
        };
        let loaded = match scenario::load(src, &[]) {
            Ok(l) => l,
            Err(e) => {
                let msg = e.to_string();
                assert!(
                    msg.contains("'fuzz.toml'"),
                    "the error must name the file: {msg}"
                );
                if let Some(f) = e.field() {
                    assert!(!f.is_empty(), "the error must name the field: {msg}");
                }
                t.rejected += 1;
                return t;
            }
        };
        let _ = crate::explain::explain(&loaded.scenario).render();
        if loaded.file.sweep.is_some() {
            if let Ok(plan) = crate::sweep::plan(loaded.clone()) {
                assert!(plan.total_runs() >= 1);
                t.swept += 1;
            }
        }
        let mut scn = loaded.scenario.clone();
        crate::dev_hooks::shrink(&mut scn);
        let layout = Layout::of(&scn);
        let r = crate::run::run_one(&scn, &layout, 0, 0);
        let _ = crate::export::csv::summary_row(&r.summary, &layout.columns());
        let _ = crate::export::csv::timeseries_rows(&r, scn.dependency.servers);
        let _ = crate::export::csv::herd_rows(&r);
        assert!(r.metrics.totals.events <= crate::dev_hooks::FUZZ_MAX_EVENTS);
        t.ran += 1;
        if r.metrics.totals.truncated.is_some() {
            t.truncated += 1;
        }
        t
    })
}

fn cases_per_part() -> u32 {
    std::env::var("RETRYSIM_FUZZ_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(CASES_PER_PART)
}

/// The seed of part `part`: fixed, so CI checks the same cases every time.
fn seed(part: u64) -> u64 {
    let base = std::env::var("RETRYSIM_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(BASE_SEED);
    base.wrapping_mul(4).wrapping_add(part)
}

/// The seed of the cases CI checks.
const BASE_SEED: u64 = 20_240_611;

/// Runs a part on a thread with a large stack: proptest's value trees for these
/// strategies are large, and a debug build keeps them all on the stack.
fn fuzz_part(part: u64) {
    let t = std::thread::Builder::new()
        .name(format!("fuzz-part-{part}"))
        .stack_size(256 << 20)
        .spawn(move || fuzz_part_here(part))
        .expect("spawn the fuzz part");
    if let Err(p) = t.join() {
        std::panic::resume_unwind(p);
    }
}

fn fuzz_part_here(part: u64) {
    let shipped = shipped();
    let cases = cases_per_part();
    let config = Config {
        cases,
        rng_seed: RngSeed::Fixed(seed(part)),
        failure_persistence: None,
        max_shrink_iters: 200,
        ..Config::default()
    };
    let mut runner = TestRunner::new(config);
    let tally = std::sync::Mutex::new(Tally::default());
    let started = Instant::now();
    let result = runner.run(&case(shipped.len()), |c| {
        let (base, case) = (shipped[c.scenario].1.clone(), c.clone());
        let text = guarded(&|| format!("{c:?}"), move || render(&base, &case))
            .map_err(TestCaseError::fail)?;
        let got = check_text(text.clone()).map_err(|e| {
            TestCaseError::fail(format!(
                "{e}\nscenario {} mutated by {:?}\ntext:\n{}",
                shipped[c.scenario].0,
                c,
                text.chars().take(4_000).collect::<String>()
            ))
        })?;
        let mut t = tally.lock().unwrap();
        t.rejected += got.rejected;
        t.ran += got.ran;
        t.truncated += got.truncated;
        t.swept += got.swept;
        Ok(())
    });
    let t = *tally.lock().unwrap();
    eprintln!(
        "fuzz part {part}: {cases} cases in {:.1}s: {} rejected, {} ran ({} truncated), {} sweeps planned",
        started.elapsed().as_secs_f64(),
        t.rejected,
        t.ran,
        t.truncated,
        t.swept
    );
    if let Err(e) = result {
        panic!("{e}");
    }
    // The mutations must reach both ends of the path, or the fuzzing proves little.
    if cases >= 1_000 {
        assert!(
            t.rejected >= u64::from(cases) / 10,
            "too few rejected: {t:?}"
        );
        assert!(t.ran >= u64::from(cases) / 10, "too few ran: {t:?}");
    }
}

#[test]
fn mutated_shipped_scenarios_give_an_error_or_a_result_part_1() {
    fuzz_part(0);
}

#[test]
fn mutated_shipped_scenarios_give_an_error_or_a_result_part_2() {
    fuzz_part(1);
}

#[test]
fn mutated_shipped_scenarios_give_an_error_or_a_result_part_3() {
    fuzz_part(2);
}

#[test]
fn mutated_shipped_scenarios_give_an_error_or_a_result_part_4() {
    fuzz_part(3);
}

// ----- through the binary ----------------------------------------------------------

/// Cases run through `retrysim run` (a process each, so fewer).
const CLI_CASES: u32 = 32;
/// Longest a CLI case may take.
const CLI_TIMEOUT: Duration = Duration::from_secs(60);

#[test]
fn mutated_scenarios_through_the_binary_exit_0_or_2_without_panicking() {
    let t = std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(cli_cases)
        .expect("spawn");
    if let Err(p) = t.join() {
        std::panic::resume_unwind(p);
    }
}

fn cli_cases() {
    let shipped = shipped();
    let d = tempfile::tempdir().unwrap();
    let config = Config {
        cases: CLI_CASES,
        rng_seed: RngSeed::Fixed(seed(100)),
        failure_persistence: None,
        max_shrink_iters: 20,
        ..Config::default()
    };
    let mut runner = TestRunner::new(config);
    let n = std::cell::Cell::new(0u32);
    let codes = std::cell::RefCell::new([0u32; 3]);
    runner
        .run(&case(shipped.len()), |c| {
            n.set(n.get() + 1);
            let n = n.get();
            let text = render(&shipped[c.scenario].1, &c);
            let file = d.path().join(format!("case{n}.toml"));
            std::fs::write(&file, &text).unwrap();
            let out = d.path().join(format!("out{n}"));
            let mut cmd = Command::new(crate::tests::common::bin());
            cmd.arg("run")
                .arg(&file)
                .arg("--out")
                .arg(&out)
                .arg("-q")
                // Keep each run short and small whatever the mutations did.
                .args(["--set", "limits.max_events=200000"])
                .args(["--set", "limits.max_in_flight=10000"])
                .args(["--set", "replications=1"])
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped());
            if !n.is_multiple_of(4) {
                cmd.arg("--no-plots");
            }
            let mut child = cmd.spawn().expect("run retrysim");
            let started = Instant::now();
            let status = loop {
                if let Some(s) = child.try_wait().unwrap() {
                    break s;
                }
                if started.elapsed() > CLI_TIMEOUT {
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err(TestCaseError::fail(format!(
                        "did not finish within {CLI_TIMEOUT:?}:\n{text}"
                    )));
                }
                std::thread::sleep(Duration::from_millis(10));
            };
            let mut err = String::new();
            std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
            let code = status.code();
            prop_assert!(
                matches!(code, Some(0) | Some(2)),
                "exit {code:?}: {err}\n{text}"
            );
            prop_assert!(!err.contains("panicked"), "{err}\n{text}");
            if code == Some(2) {
                prop_assert!(err.starts_with("error: "), "{err}");
            }
            codes.borrow_mut()[code.unwrap_or(1) as usize] += 1;
            Ok(())
        })
        .unwrap_or_else(|e| panic!("{e}"));
    let codes = codes.into_inner();
    assert!(
        codes[0] > 0 && codes[2] > 0,
        "exit codes 0 and 2 both seen: {codes:?}"
    );
}

// ----- what fuzzing found ----------------------------------------------------------

fn default_text() -> String {
    std::fs::read_to_string(scenario_dir().join("default.toml")).unwrap()
}

fn load_text(text: String) -> Result<crate::scenario::Loaded, String> {
    scenario::load(
        Source {
            path: "found.toml".into(),
            stem: "found".into(),
            text,
        },
        &[],
    )
    .map_err(|e| e.to_string())
}

#[test]
fn found_an_empty_key_is_named_as_a_quoted_key() {
    // The error named the field as the empty string: "scenario 'x': : unknown field".
    let e = load_text(format!("\"\" = 1\n{}", default_text())).unwrap_err();
    assert!(
        e.contains("scenario 'found.toml': \"\": unknown field"),
        "{e}"
    );
    let e =
        load_text(default_text().replace("[dependency]", "[dependency]\n\"a b\" = 1")).unwrap_err();
    assert!(e.contains("dependency.\"a b\": unknown field"), "{e}");
}

#[test]
fn found_a_float_sweep_range_too_long_to_count_is_refused() {
    // The value count overflowed u64 (a panic in debug builds, an empty grid in
    // release builds).
    let text = format!(
        "{}\n[sweep]\nduration = {{ from = -1e308, to = 0, step = 5e-324 }}\n",
        default_text()
    );
    let e = crate::sweep::plan(load_text(text).unwrap())
        .unwrap_err()
        .to_string();
    assert!(e.contains("sweep key 'duration'"), "{e}");
    assert!(e.contains("more than 100000"), "{e}");
}

#[test]
fn found_a_markov_outage_of_nanosecond_means_is_refused_instead_of_hanging() {
    // It drew 2e9 windows per second of horizon before the run started (a hang that
    // also ate memory).
    let text = format!(
        "{}\n[[outages]]\nkind = \"markov\"\nmean_up = \"1ns\"\nmean_down = \"1ns\"\nmode = {{ kind = \"fail\" }}\n",
        default_text()
    );
    let e = load_text(text).unwrap_err();
    assert!(e.contains("outages[1].mean_up"), "{e}");
    assert!(e.contains("at most 1000000"), "{e}");
}

#[test]
fn deeply_nested_text_is_an_error_not_a_crash() {
    let n = 100_000;
    let deep = [
        format!("x = {}1{}", "[".repeat(n), "]".repeat(n)),
        format!("x = {}1{}", "{ a = ".repeat(n), " }".repeat(n)),
        format!("{} = 1", vec!["a"; n].join(".")),
        format!("[{}]\nb = 1", vec!["a"; n].join(".")),
        format!("[[{}]]\nb = 1", vec!["a"; n].join(".")),
        // Where a table of any shape is read whole: the sweep and expectations.
        format!("[sweep]\n{} = [1]", vec!["a"; n].join(".")),
        format!("[sweep]\nx = {}1{}", "[".repeat(n), "]".repeat(n)),
        format!(
            "[[expect]]\nmetric = \"logical\"\nmin = 1\nwhere = {}1{}",
            "{ a = ".repeat(n),
            " }".repeat(n)
        ),
    ];
    for text in deep {
        let shown: String = text.chars().take(20).collect();
        // On a thread with the default stack: a recursion would overflow it and abort
        // the whole test process.
        let e = std::thread::spawn(move || load_text(format!("{}\n{text}", default_text())))
            .join()
            .expect("no panic")
            .unwrap_err();
        assert!(e.contains("found.toml"), "{shown}...: {e}");
    }
}
