//! Named presets: production retry policies written as scenario-table defaults.
//!
//! `preset = "grpc"` in a `[[fleets.layers]]` or `[[services.calls.layers]]` table
//! expands to the whole policy of that library; `backoff = { preset = "envoy" }`, `budget = { preset = "finagle" }`,
//! `breaker = { preset = "resilience4j" }` and `limiter = { preset = "sre" }` expand one
//! part. Resolution happens on the TOML table, before parsing: the preset's keys go
//! under the user's, so any key written beside a preset wins, and validation, error
//! paths and the manifest all see the resolved values.
//!
//! Merging, for a layer preset: a key the layer does not have is taken from the preset;
//! a part table (`backoff`, `budget`, `breaker`, `limiter`) the layer has without a
//! `kind`, or with the preset's `kind`, gets the preset's missing keys (so
//! `budget = { max_tokens = 20 }` beside `preset = "grpc"` keeps the ratio 0.1); a part
//! with another `kind`, or its own `preset`, replaces the preset's. A part preset fills
//! its table the same way; a `kind` that differs from the preset's is an error.
//!
//! Each preset's values, and where they come from, are in [`LAYER_PRESETS`] and
//! [`PART_ONLY_PRESETS`]; `retrysim presets --markdown` prints them as the book's
//! presets page ([`crate::export::markdown::presets`]).

use super::error::ScenarioError;
use super::file::ScenarioFile;
use crate::model::config::PartPresets;

/// A named preset: its name, where its values come from, and its TOML.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Preset {
    /// The name written in `preset = "..."`.
    pub name: &'static str,
    /// What it is: the library, its version, and where the preset deliberately differs.
    pub about: &'static str,
    /// The source of its arithmetic and defaults (repository and path, or page).
    pub source: &'static str,
    /// Keys it sets, as TOML.
    pub toml: &'static str,
}

/// gRPC (gRFC A6 as updated in 2024, grpc-java ≥ 1.71 `RetriableStream`, C-core
/// `retry_throttle.cc`): A6's example policy, all of it (4 attempts, 0.1 s, ×2, up to
/// 1 s, jitter `×U[0.8, 1.2)`; throttling 10 / 0.1), with the client-side limit of 5
/// attempts (larger values are capped to it), retrying UNAVAILABLE (a 503 or 429
/// rejection, an error) but not DEADLINE_EXCEEDED; a rejection's Retry-After is the
/// server pushback. gRPC itself ships no default retry policy.
pub(crate) const GRPC: Preset = Preset {
    name: "grpc",
    about: "gRFC A6's example policy, all of it, with the jitter of A6 as updated 2024-08-29 (C-core, grpc-go ≥ 1.69, grpc-java ≥ 1.71; `formula = \"pre_2024\"` for older clients); retries UNAVAILABLE (a rejection, an error), a rejection's Retry-After is the server pushback. gRPC ships no default retry policy, so this is A6's example, not a gRPC default.",
    source: "grpc/proposal A6-client-retries.md; grpc/grpc-java core/src/main/java/io/grpc/internal/RetriableStream.java; grpc/grpc src/core/client_channel/retry_throttle.cc",
    toml: r#"
max_attempts = 4
max_attempts_cap = 5
retry_on = ["rejected", "error"]
respect_retry_after = true
backoff = { kind = "grpc", initial = "100ms", max = "1s", multiplier = 2, formula = "current" }
budget = { kind = "token_bucket", max_tokens = 10, token_ratio = 0.1 }
"#,
};

/// Envoy as it ships (router filter, cluster circuit breakers): `num_retries` 1,
/// `retry_on = "5xx"` (a 503 rejection but not a 429, an error, a per-try timeout:
/// `rejected_5xx`), 25 ms base and 250 ms max, the 15 s route timeout spanning all
/// retries (`total_timeout`), upstream requests reset on timeouts
/// (`cancel_on_timeout`), concurrent retries limited by the circuit breaker's
/// `max_retries = 3`, and no Retry-After (that needs `rate_limited_retry_back_off`).
/// The optional `RetryBudget` (20% / 3) is `budget = { preset = "envoy_retry_budget" }`.
pub(crate) const ENVOY: Preset = Preset {
    name: "envoy",
    about: "Envoy as it ships: the backoff of Envoy ≥ 1.14, `num_retries` 1, `retry_on = \"5xx\"` (`rejected_5xx`: a 503 but not a 429), the route timeout over all attempts, the cluster circuit breaker's concurrent retries, no `RetryBudget` (the optional one is `budget = { preset = \"envoy_retry_budget\" }`).",
    source: "envoyproxy/envoy source/common/common/backoff_strategy.cc, source/common/router/retry_state_impl.cc, source/common/upstream/resource_manager_impl.h; docs/root/configuration/http/http_filters/router_filter.rst; api/envoy/config/cluster/v3/circuit_breaker.proto",
    toml: r#"
max_attempts = 2
retry_on = ["rejected_5xx", "error", "timeout"]
respect_retry_after = false
cancel_on_timeout = true
total_timeout = "15s"
backoff = { kind = "envoy", base = "25ms", max = "250ms" }
budget = { kind = "envoy_max_retries", max_retries = 3 }
"#,
};

/// Finagle (`RetryBudget()`, `RetryPolicy.tries`): the default budget (ttl 10 s,
/// 10 retries/s, 20%) and `tries`' backoff (`decorrelatedJittered(5 ms, 200 ms)`).
/// Finagle has no default number of tries: 3 is this preset's choice.
pub(crate) const FINAGLE: Preset = Preset {
    name: "finagle",
    about: "Finagle's `RetryBudget()` and `RetryPolicy.tries` backoff (twitter/finagle default branch); 3 tries is ours, Finagle has no default.",
    source: "twitter/finagle finagle-core/src/main/scala/com/twitter/finagle/service/RetryBudget.scala, RetryPolicy.scala, Backoff.scala; twitter/util util-core/src/main/scala/com/twitter/util/TokenBucket.scala, WindowedAdder.scala",
    toml: r#"
max_attempts = 3
respect_retry_after = false
backoff = { kind = "finagle", start = "5ms", max = "200ms" }
budget = { kind = "finagle", ttl = "10s", min_per_sec = 10, percent = 20 }
"#,
};

/// tower (`TpsBudget::default()`, `ExponentialBackoffMaker::default()`): no attempt
/// cap (`Retry` has none: the budget is the limit), 50 ms ×2 with 0.99 jitter and no
/// maximum, the budget (10 s, 10/s, 20%) deposited on each success as tower's
/// documented policy does.
pub(crate) const TOWER: Preset = Preset {
    name: "tower",
    about: "tower 0.5 defaults (`TpsBudget::default()`, `ExponentialBackoffMaker::default()`): no attempt cap (tower's `Retry` has none), deposits per success (tower's documented policy), with the `1/p` truncation of tower issue #857 that PR #863 removes (`truncate = false` for the fix).",
    source: "tower-rs/tower tower/src/retry/budget/tps_budget.rs, tower/src/retry/budget/mod.rs, tower/src/retry/backoff.rs",
    toml: r#"
max_attempts = "unlimited"
respect_retry_after = false
backoff = { kind = "tower", min = "50ms", jitter = 0.99 }
budget = { kind = "tower", ttl = "10s", min_per_sec = 10, percent = 20, truncate = true, deposit = "success" }
"#,
};

/// AWS SDK legacy mode (botocore `_retry.json`): 5 attempts, `rand·2^(n−1)` s, no quota.
pub(crate) const AWS_LEGACY: Preset = Preset {
    name: "aws_legacy",
    about: "botocore legacy retry mode.",
    source: "boto/botocore botocore/data/_retry.json, botocore/retryhandler.py",
    toml: r#"
max_attempts = 5
respect_retry_after = false
backoff = { kind = "aws_legacy" }
"#,
};

/// AWS SDK standard mode (botocore `retries/standard.py` version 2.0, `quota.py`):
/// 3 attempts, `rand·min(2^(n−1), 20)` s, the retry quota 500 / 5 / 10 / 1.
pub(crate) const AWS_STANDARD: Preset = Preset {
    name: "aws_standard",
    about: "botocore standard mode, `STANDARD_RETRY_MODE_VERSION` 2.0.",
    source: "boto/botocore botocore/retries/standard.py, botocore/retries/quota.py; docs.aws.amazon.com/sdkref/latest/guide/feature-retry-behavior.html",
    toml: r#"
max_attempts = 3
respect_retry_after = false
backoff = { kind = "aws_standard", version = "2.0" }
budget = { kind = "aws_standard", capacity = 500, retry_cost = 5, timeout_cost = 10, success_refund = 1 }
"#,
};

/// AWS SDK standard mode, the 2026 update (botocore `STANDARD_RETRY_MODE_VERSION`
/// "2.1"): 50 ms (1 s after throttling) scale, `x-amz-retry-after` honoured within
/// `[t, t + 5 s]`, a retry costs 14 (5 after throttling).
pub(crate) const AWS_STANDARD_2026: Preset = Preset {
    name: "aws_standard_2026",
    about: "botocore standard mode 2.1, the 2026 update (opt-in `AWS_NEW_RETRIES_2026`).",
    source: "boto/botocore botocore/retries/standard.py (STANDARD_RETRY_MODE_VERSION 2.1); aws/aws-sdk-cpp issue #3832",
    toml: r#"
max_attempts = 3
respect_retry_after = true
backoff = { kind = "aws_standard", version = "2.1" }
budget = { kind = "aws_standard", capacity = 500, retry_cost = 14, timeout_cost = 14, throttling_cost = 5, success_refund = 1 }
"#,
};

/// AWS SDK adaptive mode (botocore `retries/adaptive.py`): standard mode plus the CUBIC
/// client-side rate limiter.
pub(crate) const AWS_ADAPTIVE: Preset = Preset {
    name: "aws_adaptive",
    about: "botocore adaptive mode: standard mode 2.0 and the CUBIC client-side rate limiter.",
    source: "boto/botocore botocore/retries/adaptive.py, botocore/retries/throttling.py, botocore/retries/bucket.py",
    toml: r#"
max_attempts = 3
respect_retry_after = false
backoff = { kind = "aws_standard", version = "2.0" }
budget = { kind = "aws_standard", capacity = 500, retry_cost = 5, timeout_cost = 10, success_refund = 1 }
limiter = { kind = "aws_adaptive" }
"#,
};

/// Resilience4j (`RetryConfig`, `CircuitBreakerConfig` defaults): 3 attempts 500 ms
/// apart, retrying every exception, `CallNotPermittedException` included (hence
/// `breaker_open`), in the Spring aspect order Retry(CircuitBreaker(call)); the
/// breaker's count window of 100, 100 minimum calls, 50% failures or 100% calls
/// slower than 60 s, 60 s open, 10 half-open calls. The retry budget
/// (`BudgetRetryImpl`) is opt-in: `budget = { preset = "resilience4j" }`.
pub(crate) const RESILIENCE4J: Preset = Preset {
    name: "resilience4j",
    about: "Resilience4j 2.x `RetryConfig` and `CircuitBreakerConfig` defaults, in the Spring aspect order Retry(CircuitBreaker(call)), retrying every exception (`breaker_open` too); no retry budget, as in every release (`budget = { preset = \"resilience4j\" }` is the proposed one).",
    source: "resilience4j/resilience4j resilience4j-retry/.../RetryConfig.java, resilience4j-core/.../IntervalFunction.java, resilience4j-circuitbreaker/.../CircuitBreakerConfig.java, internal/CircuitBreakerStateMachine.java",
    toml: r#"
max_attempts = 3
retry_on = ["rejected", "error", "timeout", "breaker_open"]
respect_retry_after = false
backoff = { kind = "resilience4j", initial = "500ms" }
breaker = { kind = "resilience4j", window_type = "count", window_size = 100, min_calls = 100, failure_rate = 50, slow_call_rate = 100, slow_call_duration = "60s", open_for = "60s", half_open_calls = 10, placement = "inside" }
"#,
};

/// Polly v8 (`RetryStrategyOptions`, `CircuitBreakerStrategyOptions` defaults): 3
/// retries 2 s apart, no jitter, retrying every exception but cancellation
/// (`BrokenCircuitException` included, hence `breaker_open`), in the order
/// Retry(CircuitBreaker(call)) of the standard pipeline; the breaker at a 10% failure
/// ratio over 30 s with 100 calls minimum, 5 s open.
pub(crate) const POLLY: Preset = Preset {
    name: "polly",
    about: "Polly v8 `RetryStrategyOptions` and `CircuitBreakerStrategyOptions` defaults, in the standard pipeline's order Retry(CircuitBreaker(call)), retrying `breaker_open` too; a cancelled call is a breaker success, as in Polly.",
    source: "App-vNext/Polly src/Polly.Core/Retry/RetryConstants.cs, RetryHelper.cs; src/Polly.Core/CircuitBreaker/CircuitBreakerConstants.cs, Controller/CircuitStateController.cs, Health/RollingHealthMetrics.cs",
    toml: r#"
max_attempts = 4
retry_on = ["rejected", "error", "timeout", "breaker_open"]
respect_retry_after = false
backoff = { kind = "polly", delay = "2s", backoff_type = "constant", jitter = false }
breaker = { kind = "polly", failure_ratio = 0.1, min_throughput = 100, sampling_duration = "30s", break_duration = "5s", placement = "inside" }
"#,
};

/// Google SRE book ("Handling Overload", "Addressing Cascading Failures"): at most 3
/// attempts, a per-client retry budget of 10% over 2 minutes, client-side adaptive
/// throttling with K = 2 over 2 minutes counting as accepts every answer but a rejection
/// (the book's "accepted by the backend", as grpc-go's adaptive throttler counts),
/// randomized exponential backoff. The book names no backoff constants: full jitter
/// from 100 ms ×2 up to 10 s is this preset's choice.
pub(crate) const SRE: Preset = Preset {
    name: "sre",
    about: "Google SRE book's rules; the backoff constants are ours (the book names none); throttling counts accepts as grpc-go's adaptive throttler does (`accepts = \"success\"` counts successes only).",
    source: "https://sre.google/sre-book/handling-overload/ ; https://sre.google/sre-book/addressing-cascading-failures/",
    toml: r#"
max_attempts = 3
backoff = { kind = "exponential", base = "100ms", cap = "10s", multiplier = 2, jitter = "full" }
budget = { kind = "sre", percent = 10, window = "2m" }
limiter = { kind = "adaptive_throttling", k = 2, window = "2m", padding = 1, accepts = "not_rejected" }
"#,
};

/// Every layer preset.
pub(crate) const LAYER_PRESETS: &[Preset] = &[
    GRPC,
    ENVOY,
    FINAGLE,
    TOWER,
    AWS_LEGACY,
    AWS_STANDARD,
    AWS_STANDARD_2026,
    AWS_ADAPTIVE,
    RESILIENCE4J,
    POLLY,
    SRE,
];

/// Envoy's optional `RetryBudget` with its defaults (20% of the requests in flight, at
/// least 3), which replaces the circuit breaker's `max_retries` when configured.
const ENVOY_RETRY_BUDGET: Preset = Preset {
    name: "envoy_retry_budget",
    about: "Envoy's optional `RetryBudget` with its defaults, which replaces the cluster circuit breaker's `max_retries` when configured.",
    source: "envoyproxy/envoy api/envoy/config/cluster/v3/circuit_breaker.proto (RetryBudget), source/common/upstream/resource_manager_impl.h",
    toml: r#"kind = "envoy"
percent = 20
min_concurrency = 3"#,
};

/// The budget part of Resilience4j: `BudgetRetryImpl` with `RetryConfig`'s defaults.
const R4J_BUDGET: Preset = Preset {
    name: "resilience4j",
    about: "`BudgetRetryImpl` of Resilience4j **pull request #2373, an unreleased proposal** (head `044025bd`), in no release, as its synchronous path runs.",
    source: "resilience4j/resilience4j pull request #2373, resilience4j-retry/.../BudgetRetryImpl.java",
    toml: r#"kind = "resilience4j"
window = "10s"
max_retry_ratio = 10
min_sample_size = 100"#,
};

/// Part presets that no layer preset sets: (the part, the preset), its `toml` the part
/// table's keys.
pub(crate) const PART_ONLY_PRESETS: &[(&str, Preset)] =
    &[("budget", ENVOY_RETRY_BUDGET), ("budget", R4J_BUDGET)];

/// Presets of one part: (name, its part table as TOML) — the layer presets' parts,
/// plus parts no layer preset sets by default.
fn part_presets(part: &str) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    for p in LAYER_PRESETS {
        let t: toml::Table = toml::from_str(p.toml).expect("preset TOML parses");
        if let Some(toml::Value::Table(part_table)) = t.get(part) {
            out.push((p.name, toml::to_string(part_table).unwrap_or_default()));
        }
    }
    for (p, preset) in PART_ONLY_PRESETS {
        if *p == part {
            out.push((preset.name, preset.toml.to_string()));
        }
    }
    out
}

/// The part keys a preset can fill one by one.
pub(crate) const PARTS: [&str; 4] = ["backoff", "budget", "breaker", "limiter"];

/// The names of the presets of `part` (`"layer"` for whole layers).
pub(crate) fn names(part: &str) -> Vec<&'static str> {
    if part == "layer" {
        return LAYER_PRESETS.iter().map(|p| p.name).collect();
    }
    let mut v: Vec<&'static str> = part_presets(part).into_iter().map(|(n, _)| n).collect();
    v.sort_by_key(|n| LAYER_PRESETS.iter().position(|p| p.name == *n));
    v.dedup();
    v
}

/// The layer preset called `name`.
pub(crate) fn layer(name: &str) -> Option<&'static Preset> {
    LAYER_PRESETS.iter().find(|p| p.name == name)
}

/// A scenario table with its presets resolved.
#[derive(Debug, Clone)]
pub(crate) struct Resolved {
    /// The resolved table, `preset` keys kept (what the manifest records).
    pub table: toml::Table,
    /// The same without the parts' `preset` keys: what is parsed.
    pub parse: toml::Table,
    /// Per fleet, per layer: the parts' preset names.
    pub parts: Vec<Vec<PartPresets>>,
    /// Per service, per call, per layer: the parts' preset names.
    pub service_parts: Vec<Vec<Vec<PartPresets>>>,
}

fn known(names: &[&str]) -> String {
    let q: Vec<String> = names.iter().map(|n| format!("\"{n}\"")).collect();
    q.join(", ")
}

fn field_err(path: &str, field: String, message: String) -> ScenarioError {
    ScenarioError::Field {
        path: path.to_string(),
        field,
        message,
    }
}

/// Fills `user` with the keys of `preset` it lacks.
fn fill(user: &mut toml::Table, preset: &toml::Table) {
    for (k, v) in preset {
        if !user.contains_key(k) {
            user.insert(k.clone(), v.clone());
        }
    }
}

/// Merges a layer preset (or an imported layer) under a layer table.
pub(super) fn merge_layer(layer: &mut toml::Table, preset: &toml::Table) {
    for (k, pv) in preset {
        match (layer.get_mut(k), pv) {
            (None, _) => {
                layer.insert(k.clone(), pv.clone());
            }
            (Some(toml::Value::Table(user)), toml::Value::Table(pt))
                if PARTS.contains(&k.as_str()) =>
            {
                let own_preset = user.contains_key("preset");
                let other_kind = match (user.get("kind"), pt.get("kind")) {
                    (Some(a), Some(b)) => a != b,
                    _ => false,
                };
                if !own_preset && !other_kind {
                    fill(user, pt);
                }
            }
            _ => {}
        }
    }
}

/// Resolves the part presets of one layer; returns their names.
fn resolve_parts(
    path: &str,
    at: &str,
    layer: &mut toml::Table,
) -> Result<PartPresets, ScenarioError> {
    let mut names_found = PartPresets::default();
    for part in PARTS {
        let Some(toml::Value::Table(t)) = layer.get_mut(part) else {
            continue;
        };
        let Some(v) = t.get("preset") else { continue };
        let list = part_presets(part);
        let list_names: Vec<&str> = names(part);
        let field = format!("{at}.{part}.preset");
        let Some(name) = v.as_str() else {
            return Err(field_err(
                path,
                field,
                format!(
                    "must be a string naming a {part} preset (known: {})",
                    known(&list_names)
                ),
            ));
        };
        let Some((pname, text)) = list.iter().find(|(n, _)| *n == name) else {
            return Err(field_err(
                path,
                field,
                format!(
                    "unknown {part} preset \"{name}\" (known: {})",
                    known(&list_names)
                ),
            ));
        };
        let pt: toml::Table = toml::from_str(text).expect("preset part parses");
        if let (Some(uk), Some(pk)) = (t.get("kind"), pt.get("kind")) {
            if uk != pk {
                return Err(field_err(
                    path,
                    format!("{at}.{part}.kind"),
                    format!(
                        "{uk} conflicts with {part} preset \"{name}\" (kind {pk}): leave `kind` out or drop the preset"
                    ),
                ));
            }
        }
        fill(t, &pt);
        let slot = match part {
            "backoff" => &mut names_found.backoff,
            "budget" => &mut names_found.budget,
            "breaker" => &mut names_found.breaker,
            _ => &mut names_found.limiter,
        };
        *slot = Some(pname.to_string());
    }
    Ok(names_found)
}

/// Resolves the layer presets and part presets of one list of layers; `at` is the
/// list's field path (`fleets[0].layers`). Returns the parts' preset names per layer.
fn resolve_layers(
    path: &str,
    at: &str,
    layers: &mut [toml::Value],
) -> Result<Vec<PartPresets>, ScenarioError> {
    let mut out = Vec::with_capacity(layers.len());
    for (li, layer) in layers.iter_mut().enumerate() {
        let at = format!("{at}[{li}]");
        let Some(layer) = layer.as_table_mut() else {
            out.push(PartPresets::default());
            continue;
        };
        if let Some(v) = layer.get("preset") {
            let all = names("layer");
            let Some(name) = v.as_str() else {
                return Err(field_err(
                    path,
                    format!("{at}.preset"),
                    format!("must be a string naming a preset (known: {})", known(&all)),
                ));
            };
            let Some(p) = self::layer(name) else {
                return Err(field_err(
                    path,
                    format!("{at}.preset"),
                    format!("unknown preset \"{name}\" (known: {})", known(&all)),
                ));
            };
            let pt: toml::Table = toml::from_str(p.toml).expect("preset TOML parses");
            merge_layer(layer, &pt);
        }
        out.push(resolve_parts(path, &at, layer)?);
    }
    Ok(out)
}

/// The list `key` of a table value, if it is a table holding one.
fn list<'a>(v: &'a mut toml::Value, key: &str) -> Option<&'a mut Vec<toml::Value>> {
    match v.as_table_mut()?.get_mut(key)? {
        toml::Value::Array(a) => Some(a),
        _ => None,
    }
}

/// The `layers` list of every fleet (`None` where a fleet has none, or is no table).
pub(super) fn fleet_layers(table: &mut toml::Table) -> Vec<Option<&mut Vec<toml::Value>>> {
    match table.get_mut("fleets") {
        Some(toml::Value::Array(a)) => a.iter_mut().map(|f| list(f, "layers")).collect(),
        _ => Vec::new(),
    }
}

/// The `layers` list of every call of every service, per service and call.
pub(super) fn call_layers(table: &mut toml::Table) -> Vec<Vec<Option<&mut Vec<toml::Value>>>> {
    let Some(toml::Value::Array(a)) = table.get_mut("services") else {
        return Vec::new();
    };
    a.iter_mut()
        .map(|s| match list(s, "calls") {
            Some(calls) => calls.iter_mut().map(|c| list(c, "layers")).collect(),
            None => Vec::new(),
        })
        .collect()
}

/// Takes the parts' `preset` keys out of a list of layers.
fn strip_part_presets(layers: &mut [toml::Value]) {
    for layer in layers.iter_mut().filter_map(|l| l.as_table_mut()) {
        for part in PARTS {
            if let Some(toml::Value::Table(pt)) = layer.get_mut(part) {
                pt.remove("preset");
            }
        }
    }
}

/// Resolves every preset of a scenario table (see the module docs): in the layers of
/// `[[fleets]]` and in those of every `[[services.calls]]`. `path` names the file in
/// messages. A table without presets comes back unchanged; structures that are not
/// what the scenario format expects are left for parsing to report.
pub(crate) fn resolve(path: &str, table: &toml::Table) -> Result<Resolved, ScenarioError> {
    let mut table = table.clone();
    let mut parts = Vec::new();
    for (fi, layers) in fleet_layers(&mut table).into_iter().enumerate() {
        parts.push(match layers {
            Some(l) => resolve_layers(path, &format!("fleets[{fi}].layers"), l)?,
            None => Vec::new(),
        });
    }
    let mut service_parts = Vec::new();
    for (si, calls) in call_layers(&mut table).into_iter().enumerate() {
        let mut per_call = Vec::with_capacity(calls.len());
        for (ci, layers) in calls.into_iter().enumerate() {
            per_call.push(match layers {
                Some(l) => resolve_layers(path, &format!("services[{si}].calls[{ci}].layers"), l)?,
                None => Vec::new(),
            });
        }
        service_parts.push(per_call);
    }
    // The parsed table: the same without the parts' `preset` keys.
    let named = parts
        .iter()
        .flatten()
        .chain(service_parts.iter().flatten().flatten())
        .any(|p| *p != PartPresets::default());
    let parse = if named {
        let mut t = table.clone();
        for layers in fleet_layers(&mut t).into_iter().flatten() {
            strip_part_presets(layers);
        }
        for layers in call_layers(&mut t).into_iter().flatten().flatten() {
            strip_part_presets(layers);
        }
        t
    } else {
        table.clone()
    };
    Ok(Resolved {
        parse,
        table,
        parts,
        service_parts,
    })
}

impl Resolved {
    /// Records the parts' preset names in the layers of a file parsed from
    /// [`Resolved::parse`]: fleets' layers and service calls' layers alike.
    pub(crate) fn fill_part_presets(&self, file: &mut ScenarioFile) {
        for (f, parts) in file.fleets.iter_mut().zip(&self.parts) {
            for (l, p) in f.layers.iter_mut().zip(parts) {
                l.part_presets = p.clone();
            }
        }
        for (s, calls) in file.services.iter_mut().zip(&self.service_parts) {
            for (c, parts) in s.calls.iter_mut().zip(calls) {
                for (l, p) in c.layers.iter_mut().zip(parts) {
                    l.part_presets = p.clone();
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layer_of(text: &str) -> Result<(toml::Table, PartPresets), ScenarioError> {
        let t: toml::Table = toml::from_str(&format!(
            "[[fleets]]\nname = 'f'\n[[fleets.layers]]\n{text}"
        ))
        .unwrap();
        let r = resolve("t.toml", &t)?;
        let l = r.parse["fleets"][0]["layers"][0]
            .as_table()
            .unwrap()
            .clone();
        Ok((l, r.parts[0][0].clone()))
    }

    #[test]
    fn every_preset_parses_and_its_parts_are_listed() {
        for p in LAYER_PRESETS {
            let t: toml::Table = toml::from_str(p.toml).unwrap();
            assert!(t.contains_key("max_attempts"), "{}", p.name);
            assert!(!p.source.is_empty());
        }
        assert_eq!(names("breaker"), vec!["resilience4j", "polly"]);
        assert_eq!(names("limiter"), vec!["aws_adaptive", "sre"]);
        assert!(names("budget").contains(&"resilience4j"));
        assert!(!names("budget").contains(&"aws_legacy"));
    }

    #[test]
    fn keys_beside_a_preset_win_and_parts_merge_by_kind() {
        let (l, _) = layer_of("preset = 'grpc'\nbudget = { max_tokens = 20 }").unwrap();
        assert_eq!(l["budget"]["max_tokens"].as_integer(), Some(20));
        assert_eq!(l["budget"]["token_ratio"].as_float(), Some(0.1));
        assert_eq!(l["budget"]["kind"].as_str(), Some("token_bucket"));
        // Another kind replaces the preset's part.
        let (l, _) =
            layer_of("preset = 'grpc'\nbackoff = { kind = 'fixed', delay = '1s' }").unwrap();
        assert_eq!(l["backoff"].as_table().unwrap().len(), 2);
        // A part preset replaces the layer preset's part.
        let (l, parts) = layer_of("preset = 'grpc'\nbackoff = { preset = 'envoy' }").unwrap();
        assert_eq!(l["backoff"]["kind"].as_str(), Some("envoy"));
        assert!(l["backoff"].get("preset").is_none());
        assert_eq!(parts.backoff.as_deref(), Some("envoy"));
    }

    #[test]
    fn unknown_and_conflicting_presets_name_the_field() {
        let e = layer_of("preset = 'grcp'").unwrap_err().to_string();
        assert!(e.contains("fleets[0].layers[0].preset"), "{e}");
        assert!(e.contains("\"grpc\", \"envoy\""), "{e}");
        let e = layer_of("max_attempts = 2\nbreaker = { preset = 'grpc' }")
            .unwrap_err()
            .to_string();
        assert!(e.contains("fleets[0].layers[0].breaker.preset"), "{e}");
        assert!(e.contains("\"resilience4j\", \"polly\""), "{e}");
        let e = layer_of("max_attempts = 2\nbackoff = { preset = 'envoy', kind = 'fixed' }")
            .unwrap_err()
            .to_string();
        assert!(e.contains("backoff.kind"), "{e}");
        let e = layer_of("preset = 5").unwrap_err().to_string();
        assert!(e.contains("must be a string"), "{e}");
    }

    #[test]
    fn a_table_without_presets_is_unchanged() {
        let t: toml::Table =
            toml::from_str("a = 1\n[[fleets]]\nname = 'f'\n[[fleets.layers]]\nmax_attempts = 2")
                .unwrap();
        let r = resolve("t.toml", &t).unwrap();
        assert_eq!(r.table, t);
        assert_eq!(r.parse, t);
    }

    /// The layers of `fleets[0]` and of `services[0].calls[0]` of a graph where both
    /// are written `layers`.
    fn both(layers: &str) -> Result<crate::model::config::Scenario, ScenarioError> {
        let text = format!(
            "duration = '10s'\n[[services]]\nname = 'front'\nservers = 2\nservice_time = '1ms'\n\
             [[services.calls]]\nto = 'db'\n{calls}\n\
             [[services]]\nname = 'db'\nservers = 2\nservice_time = '1ms'\n\
             [[fleets]]\nname = 'f'\narrival = {{ kind = 'poisson', rate = 10 }}\n{fleets}",
            calls = layers.replace("[[L]]", "[[services.calls.layers]]"),
            fleets = layers.replace("[[L]]", "[[fleets.layers]]"),
        );
        let source = crate::scenario::Source {
            path: "t.toml".into(),
            stem: "t".into(),
            text,
        };
        Ok(crate::scenario::from_table(&source, source.table()?)?.scenario)
    }

    #[test]
    fn a_service_call_layer_resolves_presets_as_a_fleet_layer_does() {
        let scn = both(
            "[[L]]\nmax_attempts = 2\n[[L]]\npreset = 'grpc'\nbudget = { max_tokens = 20 }\n\
             [[L]]\nmax_attempts = 3\nbackoff = { preset = 'envoy' }\nbreaker = { preset = 'polly' }",
        )
        .unwrap();
        let fleet = &scn.fleets[0].layers;
        let call = &scn.services[0].calls[0].layers;
        assert_eq!(call.len(), 3);
        // The top layer differs only by its instances (one per client in a fleet).
        for k in 1..3 {
            assert_eq!(
                format!("{:?}", call[k]),
                format!("{:?}", fleet[k]),
                "layer {k}"
            );
        }
        assert_eq!(call[1].preset.as_deref(), Some("grpc"));
        assert_eq!(
            call[1].max_attempts,
            crate::model::config::Attempts::Limited(4)
        );
        assert_eq!(call[2].part_presets.backoff.as_deref(), Some("envoy"));
        assert_eq!(call[2].part_presets.breaker.as_deref(), Some("polly"));
        assert!(call[2].budget.is_none());
        let e = both("[[L]]\nmax_attempts = 2\n[[L]]\npreset = 'grcp'")
            .unwrap_err()
            .to_string();
        assert!(e.contains("fleets[0].layers[1].preset"), "{e}");
        // The fleet side is resolved first; alone, a service call's error names it.
        let t: toml::Table = toml::from_str(
            "[[services]]\nname = 'a'\n[[services.calls]]\nto = 'b'\n[[services.calls]]\nto = 'b'\n\
             [[services.calls.layers]]\nmax_attempts = 1\n[[services.calls.layers]]\nbudget = { preset = 'polly' }",
        )
        .unwrap();
        let e = resolve("t.toml", &t).unwrap_err().to_string();
        assert!(
            e.contains("services[0].calls[1].layers[1].budget.preset"),
            "{e}"
        );
        assert!(e.contains("unknown budget preset \"polly\""), "{e}");
        let t: toml::Table = toml::from_str(
            "[[services]]\nname = 'a'\n[[services.calls]]\nto = 'b'\n[[services.calls.layers]]\npreset = 5",
        )
        .unwrap();
        let e = resolve("t.toml", &t).unwrap_err().to_string();
        assert!(e.contains("services[0].calls[0].layers[0].preset"), "{e}");
        assert!(e.contains("must be a string"), "{e}");
    }
}

/// The examples of this file's docs, as unit tests (the module is the crate's own,
/// so rustdoc cannot run them).
#[cfg(test)]
mod doc_examples {
    #[test]
    fn preset_example() {
        use crate::scenario::preset::resolve;
        let t: toml::Table = toml::from_str(
            "[[fleets]]\nname = 'f'\n[[fleets.layers]]\npreset = 'grpc'\nmax_attempts = 3",
        )
        .unwrap();
        let r = resolve("x.toml", &t).unwrap();
        let layer = &r.table["fleets"][0]["layers"][0];
        assert_eq!(layer["max_attempts"].as_integer(), Some(3)); // written beside the preset
        assert_eq!(layer["backoff"]["kind"].as_str(), Some("grpc"));
        assert_eq!(layer["budget"]["max_tokens"].as_integer(), Some(10));
    }
}
