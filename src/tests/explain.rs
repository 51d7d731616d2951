//! `retrysim explain`: the numbers (worst-case attempts, budget caps, backoff against the
//! deadline), each lint on its anti-pattern and its fixed twin, and the command's exit
//! codes.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::{Command, Output};

use crate::explain::lint::{self, LINTS};
use crate::explain::{explain, Bound, Explanation};
use crate::model::budget::{aws_standard, ratio, token_bucket, Budget, BudgetCap, BudgetConfig};
use crate::model::config::Attempts;
use crate::scenario::{load, Source};
use proptest::prelude::*;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/lints")
        .join(format!("{name}.toml"))
}

fn explain_fixture(name: &str, sets: &[&str]) -> Explanation {
    let source = Source::read(&fixture(name)).expect("fixture is readable");
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    let loaded = load(source, &sets).expect("fixture is valid");
    explain(&loaded.scenario)
}

fn explain_text(text: &str) -> Explanation {
    let source = Source {
        path: "<test>".into(),
        stem: "test".into(),
        text: text.into(),
    };
    explain(&load(source, &[]).expect("test scenario is valid").scenario)
}

fn ids(e: &Explanation) -> BTreeSet<&'static str> {
    e.lints.iter().map(|l| l.id).collect()
}

/// A clean one-fleet scenario; `layers` and `fleet_extra` are TOML appended to it.
fn scenario(dep_extra: &str, fleet_extra: &str, layers: &str) -> String {
    format!(
        r#"
duration = "10s"
[dependency]
servers = 10
queue_limit = 100
service_time = {{ kind = "exponential", mean = "10ms" }}
{dep_extra}
[[fleets]]
name = "web"
arrival = {{ kind = "poisson", rate = 100, clients = 50 }}
deadline = "2s"
{fleet_extra}
{layers}
"#
    )
}

const CLEAN_LAYER: &str = r#"
[[fleets.layers]]
name = "client"
max_attempts = 3
attempt_timeout = "250ms"
backoff = { kind = "exponential", base = "50ms", cap = "1s", jitter = "full" }
"#;

// ----- lints on their fixtures ---------------------------------------------------------

#[test]
fn every_lint_fires_on_its_anti_pattern_and_nothing_else_does() {
    for id in LINTS.map(|r| r.id) {
        let e = explain_fixture(id, &[]);
        assert_eq!(
            ids(&e),
            BTreeSet::from([id]),
            "fixture {id}.toml: {:#?}",
            e.lints
        );
        let text = e.render();
        assert!(text.contains(&format!("[{id}] fleet 'web'")), "{text}");
    }
}

#[test]
fn every_fixed_twin_is_silent() {
    for id in LINTS.map(|r| r.id) {
        let e = explain_fixture(&format!("{id}_fixed"), &[]);
        assert!(
            !ids(&e).contains(id),
            "{id}_fixed.toml still fires {id}: {:#?}",
            e.lints
        );
        assert!(e.lints.is_empty(), "{id}_fixed.toml: {:#?}", e.lints);
        assert!(e.render().ends_with("lints: none\n"));
    }
}

#[test]
fn layer_lints_name_their_layer_and_fleet_lints_do_not() {
    let e = explain_fixture("too-many-attempts", &[]);
    assert_eq!(e.lints[0].fleet, "web");
    assert_eq!(e.lints[0].layer.as_deref(), Some("client"));
    assert!(e.lints[0].message.contains("up to 8 attempts"));
    let e = explain_fixture("multi-layer-retries-without-budget", &[]);
    assert_eq!(e.lints[0].layer, None);
    assert!(
        e.lints[0].message.contains("'client', 'service' and 'sdk'"),
        "{}",
        e.lints[0].message
    );
}

#[test]
fn one_budgeted_layer_leaves_two_unbudgeted_retrying_layers_to_lint() {
    let budget = r#"fleets.0.layers.0.budget={kind="token_bucket",max_tokens=10,token_ratio=0.1}"#;
    let e = explain_fixture("multi-layer-retries-without-budget", &[budget]);
    assert_eq!(
        ids(&e),
        BTreeSet::from([lint::MULTI_LAYER_RETRIES_WITHOUT_BUDGET.id])
    );
    assert!(
        e.lints[0].message.contains("3 × 3 = 9"),
        "{}",
        e.lints[0].message
    );
    let both = r#"fleets.0.layers.1.budget={kind="ratio",percent=10}"#;
    let e = explain_fixture("multi-layer-retries-without-budget", &[budget, both]);
    assert!(e.lints.is_empty(), "{:#?}", e.lints);
}

#[test]
fn a_burst_counts_as_many_clients_even_from_one_client() {
    let unjittered = r#"
[[fleets.layers]]
name = "client"
max_attempts = 3
attempt_timeout = "250ms"
backoff = { kind = "fixed", delay = "100ms" }
"#;
    let text = scenario("", "", unjittered).replace(
        "kind = \"poisson\", rate = 100, clients = 50",
        "kind = \"burst\", at = \"1s\", count = 500, clients = 1",
    );
    let e = explain_text(&text);
    assert_eq!(
        ids(&e),
        BTreeSet::from([lint::UNJITTERED_BACKOFF_MANY_CLIENTS.id])
    );
    assert!(e.lints[0].message.contains("the 500 requests of the burst"));
    assert!(e.lints[0].message.contains("fixed backoff of 100ms"));
    // Nine clients and no burst: few enough.
    let few = scenario("", "", unjittered).replace("clients = 50", "clients = 9");
    assert!(explain_text(&few).lints.is_empty());
}

#[test]
fn inert_settings_do_not_fire() {
    // Retry-After ignored, but the dependency never sends one.
    let layer = format!("{CLEAN_LAYER}respect_retry_after = false\n");
    assert!(explain_text(&scenario("", "", &layer)).lints.is_empty());
    // ... or never rejects (unlimited queue).
    let text = scenario("retry_after = \"1s\"", "", &layer)
        .replace("queue_limit = 100", "queue_limit = \"unlimited\"");
    assert!(explain_text(&text).lints.is_empty());
    // breaker_open retried, but there is no breaker to produce it.
    let layer = format!("{CLEAN_LAYER}retry_on = [\"error\", \"breaker_open\"]\n");
    assert!(explain_text(&scenario("", "", &layer)).lints.is_empty());
    // Ambiguous writes retried, but nothing can time out.
    let layer = r#"
[[fleets.layers]]
name = "client"
max_attempts = 3
retry_ambiguous_writes = true
backoff = { kind = "exponential", base = "50ms", cap = "1s", jitter = "full" }
"#;
    let e = explain_text(&scenario("", "writes = 0.5", layer).replace("deadline = \"2s\"", ""));
    assert!(e.lints.is_empty(), "{:#?}", e.lints);
}

#[test]
fn a_breaker_below_makes_retrying_breaker_open_above_fire() {
    let layers = r#"
[[fleets.layers]]
name = "client"
max_attempts = 3
attempt_timeout = "500ms"
retry_on = ["error", "timeout", "breaker_open"]
backoff = { kind = "exponential", base = "50ms", cap = "1s", jitter = "full" }
[[fleets.layers]]
name = "sdk"
max_attempts = 1
breaker = { kind = "consecutive", failures = 5, open_for = "1s", placement = "outside" }
"#;
    let e = explain_text(&scenario("", "", layers));
    assert_eq!(ids(&e), BTreeSet::from([lint::RETRIES_BREAKER_OPEN.id]));
    assert_eq!(e.lints[0].layer.as_deref(), Some("client"));
    assert!(e.lints[0].message.contains("layer 'sdk' below"));
}

#[test]
fn an_attempt_timeout_below_bounds_the_attempts_of_the_layers_above() {
    let layers = r#"
[[fleets.layers]]
name = "client"
max_attempts = 2
backoff = { kind = "exponential", base = "50ms", cap = "1s", jitter = "full" }
budget = { kind = "token_bucket", max_tokens = 10, token_ratio = 0.1 }
[[fleets.layers]]
name = "sdk"
max_attempts = 2
attempt_timeout = "200ms"
backoff = { kind = "exponential", base = "10ms", cap = "100ms", jitter = "full" }
"#;
    assert!(explain_text(&scenario("", "", layers)).lints.is_empty());
    let top_only = layers.replacen("attempt_timeout = \"200ms\"", "", 1);
    let e = explain_text(&scenario("", "", &top_only));
    let layers_hit: Vec<_> = e
        .lints
        .iter()
        .map(|l| (l.id, l.layer.clone().unwrap_or_default()))
        .collect();
    assert_eq!(
        layers_hit,
        vec![
            (
                lint::NO_ATTEMPT_TIMEOUT_UNDER_DEADLINE.id,
                "client".to_string()
            ),
            (
                lint::NO_ATTEMPT_TIMEOUT_UNDER_DEADLINE.id,
                "sdk".to_string()
            ),
        ]
    );
}

#[test]
fn overload_counts_the_peak_of_a_load_profile_and_names_the_largest_fleet() {
    let text = scenario(
        "",
        "load_profile = [{ at = \"5s\", multiplier = 12 }]",
        CLEAN_LAYER,
    )
    .replace("queue_limit = 100", "queue_limit = \"unlimited\"");
    let e = explain_text(&text);
    // 100/s, 1200/s from 5 s on: the mean is 650/s, the peak 1200/s > 1000/s.
    assert_eq!(
        ids(&e),
        BTreeSet::from([lint::OVERLOAD_WITHOUT_SHEDDING.id])
    );
    assert!((e.offered_peak - 1200.0).abs() < 1e-9);
    assert!((e.offered_mean - 650.0).abs() < 1.0, "{}", e.offered_mean);
    assert_eq!(e.fleets[0].utilisation, Some(1.2));
    let rendered = e.render();
    assert!(
        rendered.contains(
            "1200/s at peak against a capacity of 1000 attempts/s: 120% utilisation at peak"
        ),
        "{rendered}"
    );
    // A step that starts after the run ends does not count.
    let late = text.replace("at = \"5s\"", "at = \"10s\"");
    assert!(explain_text(&late).lints.is_empty());

    let two = format!(
        "{}\n[[fleets]]\nname = \"batch\"\narrival = {{ kind = \"constant\", rate = 950 }}\n",
        scenario("", "", CLEAN_LAYER).replace("queue_limit = 100", "queue_limit = \"unlimited\"")
    );
    let e = explain_text(&two);
    assert_eq!(
        ids(&e),
        BTreeSet::from([lint::OVERLOAD_WITHOUT_SHEDDING.id])
    );
    assert_eq!(e.lints[0].fleet, "batch");
    assert!(e.lints[0]
        .message
        .contains("1050 requests/s together (this one 950/s)"));
}

// ----- the numbers ---------------------------------------------------------------------

#[test]
fn three_layers_of_three_attempts_print_27_and_of_four_print_64() {
    let e = explain_fixture("multi-layer-retries-without-budget", &[]);
    assert_eq!(e.fleets[0].worst_case_attempts, Bound::Finite(27));
    let text = e.render();
    assert!(
        text.contains("3 × 3 × 3 = 27 attempts per request (worst case)"),
        "{text}"
    );
    assert!(
        text.contains("27 × 100/s = 2700 attempts/s at the dependency, 270% of capacity"),
        "{text}"
    );

    let four = [
        "fleets.0.layers.0.max_attempts=4",
        "fleets.0.layers.1.max_attempts=4",
        "fleets.0.layers.2.max_attempts=4",
    ];
    let e = explain_fixture("multi-layer-retries-without-budget", &four);
    assert_eq!(e.fleets[0].worst_case_attempts, Bound::Finite(64));
    assert!(e
        .render()
        .contains("4 × 4 × 4 = 64 attempts per request (worst case)"));
}

#[test]
fn budgets_cap_the_sustained_attempts_per_request() {
    let tb = r#"fleets.0.layers.0.budget={kind="token_bucket",max_tokens=10,token_ratio=0.1}"#;
    let ratio = r#"fleets.0.layers.2.budget={kind="ratio",percent=20}"#;
    let e = explain_fixture("multi-layer-retries-without-budget", &[tb, ratio]);
    assert_eq!(e.fleets[0].worst_case_attempts, Bound::Finite(27));
    let s = e.fleets[0].sustained_attempts.expect("budgets present");
    assert!((s - 3.6).abs() < 1e-9, "{s}");
    let text = e.render();
    assert!(
        text.contains("once the budgets are spent in a sustained total failure: 1 × 3 × 1.2 = 3.6 attempts per request"),
        "{text}"
    );
    assert!(
        text.contains("ceil(10/2) − 1 = 4 retries per instance (200 across the 50 instances)"),
        "{text}"
    );
    assert!(
        text.contains("retries ≤ 20% of calls + 0/s × 10s (= 0) per instance"),
        "{text}"
    );
    assert_eq!(
        explain_fixture("multi-layer-retries-without-budget", &[]).fleets[0].sustained_attempts,
        None
    );
}

#[test]
fn backoff_totals_are_worst_case_waits_against_the_deadline() {
    let e = explain_fixture("backoff-exceeds-deadline", &[]);
    // Waits of at most 500 ms, 1 s and 2 s.
    assert_eq!(
        e.fleets[0].layers[0].backoff_total,
        Bound::Finite(3_500_000_000)
    );
    let text = e.render();
    assert!(
        text.contains("waits at most 500ms, 1s, 2s: 3.5s in all, against the deadline of 2s"),
        "{text}"
    );
    // Nested: B = W_client + 3 · (W_service + 3 · W_sdk) = 150 + 3 · (60 + 3 · 30) ms.
    let e = explain_fixture("multi-layer-retries-without-budget", &[]);
    assert_eq!(e.fleets[0].backoff_per_request, Bound::Finite(600_000_000));
    assert!(e.render().contains(
        "a request can wait at most 600ms in all across its layers, against the deadline of 10s"
    ));
    // Retry-After honoured raises each wait after a rejection to at least it.
    let e = explain_fixture("ignores-retry-after_fixed", &[]);
    assert_eq!(
        e.fleets[0].layers[0].backoff_total_with_retry_after,
        Some(Bound::Finite(2_000_000_000))
    );
    assert!(e
        .render()
        .contains("after a rejection it waits at least the Retry-After of 1s: up to 2s in all"));
}

#[test]
fn unlimited_attempts_and_overflowing_products_print_unbounded() {
    let mut layers = String::new();
    for i in 0..16 {
        layers.push_str(&format!(
            "[[fleets.layers]]\nname = \"l{i}\"\nmax_attempts = 1000000\nattempt_timeout = \"1h\"\nbackoff = {{ kind = \"exponential\", base = \"1h\", multiplier = 1000, jitter = \"none\" }}\n"
        ));
    }
    let e = explain_text(&scenario("", "", &layers));
    assert_eq!(e.fleets[0].worst_case_attempts, Bound::Unbounded);
    assert_eq!(e.fleets[0].backoff_per_request, Bound::Unbounded);
    let text = e.render();
    assert!(
        text.contains("= unbounded attempts per request (worst case)"),
        "{text}"
    );
    assert!(text.contains("if every attempt fails: no bound on the attempts at the dependency"));

    let unlimited = CLEAN_LAYER.replace("max_attempts = 3", "max_attempts = \"unlimited\"");
    let e = explain_text(&scenario("", "", &unlimited));
    assert_eq!(e.fleets[0].worst_case_attempts, Bound::Unbounded);
    assert_eq!(e.fleets[0].layers[0].backoff_total, Bound::Unbounded);
    assert!(e
        .render()
        .contains("unbounded attempts per request (worst case)"));
    let got = ids(&e);
    for id in [
        lint::TOO_MANY_ATTEMPTS.id,
        lint::BACKOFF_EXCEEDS_DEADLINE.id,
        lint::TIMEOUTS_EXCEED_DEADLINE.id,
    ] {
        assert!(got.contains(id), "{id} missing from {got:?}");
    }
}

#[test]
fn explain_is_deterministic() {
    for id in LINTS.map(|r| r.id) {
        let a = explain_fixture(id, &[]);
        let b = explain_fixture(id, &[]);
        assert_eq!(a, b);
        assert_eq!(a.render(), b.render());
    }
}

// ----- budget caps against the model's own budget ----------------------------------------

/// Retries the model's budget allows when every attempt fails, from full.
fn retries_at_total_failure(cfg: BudgetConfig, after_timeout: bool) -> u64 {
    let mut b = Budget::new(cfg);
    let mut n = 0;
    for _ in 0..100_000 {
        b.on_failure();
        if b.try_retry(0, after_timeout).is_some() {
            n += 1;
        }
    }
    n
}

#[test]
fn token_bucket_cap_is_ceil_half_minus_one_and_matches_the_model() {
    for (max_milli, expect) in [
        (10_000, 4),
        (11_000, 5),
        (4_000, 1),
        (100_000, 49),
        (1_000, 0),
        (2_500, 1),
        (500, 0),
        (3_000, 1),
        (10_001, 5),
    ] {
        let cfg = BudgetConfig::TokenBucket(token_bucket::Config {
            max_milli,
            ratio_milli: 100,
        });
        let BudgetCap::TokenBucket(token_bucket::Cap {
            retries_at_total_failure: cap,
            ..
        }) = cfg.cap()
        else {
            panic!("a token bucket's cap");
        };
        assert_eq!(cap, expect, "max_milli {max_milli}");
        assert_eq!(
            cap,
            retries_at_total_failure(cfg, false),
            "max_milli {max_milli}"
        );
    }
}

#[test]
fn aws_quota_cap_is_capacity_over_cost_and_matches_the_model() {
    for (capacity, retry_cost, timeout_cost) in [(500, 5, 10), (20, 5, 10), (7, 3, 8), (4, 5, 5)] {
        let cfg = BudgetConfig::AwsStandard(aws_standard::Config {
            capacity,
            retry_cost,
            timeout_cost,
            success_refund: 1,
            throttling_cost: None,
        });
        let BudgetCap::AwsStandard(aws_standard::Cap {
            retries,
            retries_after_timeouts,
            ..
        }) = cfg.cap()
        else {
            panic!("an AWS quota's cap");
        };
        assert_eq!(retries, Bound::Finite(capacity / retry_cost));
        assert_eq!(retries, Bound::Finite(retries_at_total_failure(cfg, false)));
        assert_eq!(
            retries_after_timeouts,
            Bound::Finite(retries_at_total_failure(cfg, true))
        );
    }
    let free = BudgetConfig::AwsStandard(aws_standard::Config {
        capacity: 500,
        retry_cost: 0,
        timeout_cost: 10,
        success_refund: 1,
        throttling_cost: None,
    });
    let cap = free.cap();
    assert!(matches!(
        cap,
        BudgetCap::AwsStandard(aws_standard::Cap {
            retries: Bound::Unbounded,
            ..
        })
    ));
    assert_eq!(cap.sustained_attempts(Attempts::Limited(3)), 3.0);
    assert_eq!(cap.sustained_attempts(Attempts::Unlimited), f64::INFINITY);
}

#[test]
fn ratio_cap_is_a_fraction_of_calls_plus_the_floor_and_matches_the_model() {
    let sec = 1_000_000_000;
    let cfg = BudgetConfig::Ratio(ratio::Config {
        fraction: 0.2,
        min_per_sec: 1.5,
        window: 10 * sec,
    });
    let cap = cfg.cap();
    let BudgetCap::Ratio(ratio::Cap {
        floor_per_window, ..
    }) = cap
    else {
        panic!("a ratio budget's cap");
    };
    assert!((floor_per_window - 15.0).abs() < 1e-12);
    assert!((cap.sustained_attempts(Attempts::Limited(3)) - 1.2).abs() < 1e-12);
    assert!((cap.sustained_attempts(Attempts::Unlimited) - 1.2).abs() < 1e-12);
    assert_eq!(cap.sustained_attempts(Attempts::Limited(1)), 1.0);
    // The model: 1000 calls in one window allow 20% of them + 15 retries.
    let mut b = Budget::new(cfg);
    for _ in 0..1000 {
        b.on_call(sec);
    }
    let allowed = (0..10_000)
        .filter(|_| b.try_retry(sec, false).is_some())
        .count();
    assert_eq!(allowed, 215);
}

// ----- no panics on any valid scenario ----------------------------------------------------

fn dur(ns: u64) -> String {
    format!("{ns}ns")
}

prop_compose! {
    fn layer_toml(i: usize)(
        attempts in prop_oneof![1u64..=6, 7u64..=1_000_000, Just(0u64)],
        timeout in proptest::option::of(1u64..=1_000_000_000_000_000),
        kind in 0u8..4,
        base in 1u64..=u64::MAX / 4,
        cap in proptest::option::of(0u64..=u64::MAX / 4),
        multiplier in 1.0f64..=1000.0,
        jitter in prop_oneof![Just("none"), Just("full"), Just("equal"), Just("decorrelated")],
        budget in 0u8..4,
        tokens in 0.001f64..=1e9,
        cost in 1u64..=1000,
        capacity in 1u64..=i64::MAX as u64,
        percent in 0.0f64..=100_000.0,
        retry_on in prop_oneof![Just("[]"), Just("[\"error\", \"breaker_open\"]"), Just("[\"rejected\", \"timeout\"]")],
        flags in any::<[bool; 4]>(),
    ) -> String {
        let mut s = format!("[[fleets.layers]]\nname = \"l{i}\"\n");
        s += &if attempts == 0 { "max_attempts = \"unlimited\"\n".to_string() } else { format!("max_attempts = {attempts}\n") };
        if let Some(t) = timeout { s += &format!("attempt_timeout = \"{}\"\n", dur(t)); }
        s += &match kind {
            0 => "backoff = { kind = \"none\" }\n".to_string(),
            1 => format!("backoff = {{ kind = \"fixed\", delay = \"{}\" }}\n", dur(base)),
            _ => format!(
                "backoff = {{ kind = \"exponential\", base = \"{}\", {}multiplier = {multiplier}, jitter = \"{jitter}\" }}\n",
                dur(base),
                cap.map_or(String::new(), |c| format!("cap = \"{}\", ", dur(c)))
            ),
        };
        s += &match budget {
            0 => String::new(),
            1 => format!("budget = {{ kind = \"token_bucket\", max_tokens = {}, token_ratio = 0.1 }}\n", (tokens as u64).clamp(1, 1000)),
            2 => format!("budget = {{ kind = \"aws_standard\", capacity = {capacity}, retry_cost = {cost}, timeout_cost = {cost} }}\n"),
            _ => format!("budget = {{ kind = \"ratio\", percent = {percent}, min_per_sec = {tokens} }}\n"),
        };
        s += &format!("retry_on = {retry_on}\nretry_ambiguous_writes = {}\nrespect_retry_after = {}\n", flags[0], flags[1]);
        if flags[2] {
            s += &format!("breaker = {{ kind = \"consecutive\", failures = 3, open_for = \"1s\", placement = \"{}\" }}\n", if flags[3] { "inside" } else { "outside" });
        }
        s
    }
}

fn layers_toml() -> impl Strategy<Value = String> {
    (0usize..=16).prop_flat_map(|n| {
        (0..n)
            .map(layer_toml)
            .collect::<Vec<_>>()
            .prop_map(|v| v.concat())
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn explain_never_panics_on_a_valid_scenario(
        layers in layers_toml(),
        servers in prop_oneof![Just("\"unlimited\"".to_string()), (1u64..=10_000_000).prop_map(|n| n.to_string())],
        queue in prop_oneof![Just("\"unlimited\"".to_string()), (0u64..=u64::MAX / 2).prop_map(|n| n.to_string())],
        service in 0u64..=u64::MAX / 4,
        rate in 1e-6f64..=1e8,
        clients in 1u64..=10_000_000,
        deadline in proptest::option::of(1u64..=u64::MAX / 4),
        writes in 0.0f64..=1.0,
        flags in any::<[bool; 3]>(),
    ) {
        let text = format!(
            "duration = \"10s\"\n[dependency]\nservers = {servers}\nqueue_limit = {queue}\nservice_time = {{ kind = \"deterministic\", value = \"{}\" }}\nretry_after = \"1s\"\ndrop_expired = {}\nper_concurrent = \"1ms\"\n[[fleets]]\nname = \"f\"\narrival = {{ kind = \"poisson\", rate = {rate}, clients = {clients} }}\n{}writes = {writes}\nidempotency_keys = {}\n{}\n",
            dur(service.max(1)),
            flags[0],
            deadline.map_or(String::new(), |d| format!("deadline = \"{}\"\n", dur(d))),
            flags[1],
            if flags[2] { "load_profile = [{ at = \"1s\", multiplier = 1000 }]\n" } else { "" },
        ) + &layers;
        let source = Source { path: "<prop>".into(), stem: "prop".into(), text };
        let loaded = match load(source, &[]) {
            Ok(l) => l,
            // The resource rules refuse a run that could not fit in memory (millions of
            // layer instances with their state) before explain sees it.
            Err(e) if e.to_string().contains(" GiB") => {
                return Err(TestCaseError::reject("does not fit in memory"))
            }
            Err(e) => return Err(TestCaseError::fail(e.to_string())),
        };
        let e = explain(&loaded.scenario);
        let product = loaded.scenario.fleets[0].layers.iter().try_fold(1u128, |acc, l| {
            l.max_attempts.limit().and_then(|n| acc.checked_mul(u128::from(n)))
        });
        let expect = match product {
            Some(p) if p <= u128::from(u64::MAX) => Bound::Finite(p as u64),
            _ => Bound::Unbounded,
        };
        prop_assert_eq!(e.fleets[0].worst_case_attempts, expect);
        let text = e.render();
        prop_assert!(text.contains("lints: "));
        for l in &e.lints {
            prop_assert!(LINTS.iter().any(|r| r.id == l.id));
        }
    }
}

// ----- the command ---------------------------------------------------------------------

fn retrysim(args: &[&str]) -> Output {
    Command::new(crate::tests::common::bin())
        .args(args)
        .output()
        .expect("the binary runs")
}

fn code(o: &Output) -> i32 {
    o.status.code().expect("exited with a code")
}

fn path(name: &str) -> String {
    fixture(name).display().to_string()
}

#[test]
fn explain_prints_the_model_and_exits_0_when_nothing_is_denied() {
    let o = retrysim(&["explain", &path("too-many-attempts")]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("capacity 1000 attempts/s"), "{out}");
    assert!(
        out.contains("[too-many-attempts] fleet 'web', layer 'client'"),
        "{out}"
    );
    // Denying a lint that does not fire is fine.
    let o = retrysim(&[
        "explain",
        &path("too-many-attempts_fixed"),
        "--deny",
        "too-many-attempts",
    ]);
    assert_eq!(code(&o), 0);
}

#[test]
fn a_denied_lint_that_fires_exits_1_and_says_which() {
    let o = retrysim(&[
        "explain",
        &path("too-many-attempts"),
        "--deny",
        "too-many-attempts",
    ]);
    assert_eq!(code(&o), 1);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("denied lint fired: [too-many-attempts] fleet 'web', layer 'client'"),
        "{err}"
    );
    assert!(err.contains("too-many-attempts.toml"), "{err}");
    let o = retrysim(&[
        "explain",
        &path("overload-without-shedding"),
        "--deny",
        "all",
    ]);
    assert_eq!(code(&o), 1);
    let o = retrysim(&[
        "explain",
        &path("overload-without-shedding_fixed"),
        "--deny",
        "all",
    ]);
    assert_eq!(code(&o), 0);
}

#[test]
fn a_limit_a_limiter_codel_or_priority_shedding_sheds_the_overload_and_explain_says_which() {
    for (set, sheds) in [
        (
            "dependency.concurrency_limit={ kind = \"gradient2\" }",
            "the queue never rejects; sheds load: concurrency_limit",
        ),
        (
            "dependency.queue_policy={ kind = \"codel\" }",
            "the queue never rejects; sheds load: CoDel",
        ),
        (
            "dependency.admission={ kind = \"token_bucket\", max_tokens = 100, tokens_per_fill = 100, fill_interval = \"100ms\" }",
            "the queue never rejects; sheds load: admission",
        ),
    ] {
        let o = retrysim(&[
            "explain",
            &path("overload-without-shedding"),
            "--set",
            set,
            "--deny",
            "overload-without-shedding",
        ]);
        let out = String::from_utf8_lossy(&o.stdout);
        assert_eq!(code(&o), 0, "{set}: {}", String::from_utf8_lossy(&o.stderr));
        assert!(out.contains(sheds), "{set}: {out}");
    }
    // Adaptive LIFO only reorders: still an overload nothing sheds.
    let o = retrysim(&[
        "explain",
        &path("overload-without-shedding"),
        "--set",
        "dependency.queue_policy={ kind = \"adaptive_lifo\", threshold = 4 }",
        "--deny",
        "overload-without-shedding",
    ]);
    assert_eq!(code(&o), 1);
    assert!(String::from_utf8_lossy(&o.stdout)
        .contains("unlimited queue; never rejects; sheds nothing"));
}

#[test]
fn set_overrides_apply_before_the_lints() {
    let o = retrysim(&[
        "explain",
        &path("too-many-attempts_fixed"),
        "--set",
        "fleets.0.layers.0.max_attempts=6",
        "--deny",
        "too-many-attempts",
    ]);
    assert_eq!(code(&o), 1);
}

#[test]
fn an_unknown_lint_is_bad_input_and_lists_the_known_ones() {
    let o = retrysim(&["explain", &path("too-many-attempts"), "--deny", "too-many"]);
    assert_eq!(code(&o), 2);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("error: --deny: unknown lint \"too-many\""),
        "{err}"
    );
    for id in LINTS.map(|r| r.id) {
        assert!(err.contains(id), "{id} not listed: {err}");
    }
    assert!(o.stdout.is_empty());
}

#[test]
fn a_missing_or_invalid_file_is_bad_input() {
    let o = retrysim(&["explain", "no/such/scenario.toml"]);
    assert_eq!(code(&o), 2);
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("cannot read scenario 'no/such/scenario.toml'")
    );
    let o = retrysim(&[
        "explain",
        &path("too-many-attempts"),
        "--set",
        "fleets.0.layers.0.max_attempts=0",
    ]);
    assert_eq!(code(&o), 2);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("fleets[0].layers[0].max_attempts"), "{err}");
}

/// The book's lints page is the lint table, as `retrysim lints --markdown` prints it.
/// `RETRYSIM_BLESS=1` rewrites the page's table.
#[test]
fn the_book_lists_every_lint_as_the_table_says() {
    let o = retrysim(&["lints", "--markdown"]);
    assert_eq!(code(&o), 0);
    let want = String::from_utf8(o.stdout).unwrap();
    crate::tests::common::pinned_section(
        "reference/lints.md",
        "lints",
        &want,
        "retrysim lints --markdown",
        "explain::the_book_lists",
    );
    // One row per lint, in table order, with its id, why and rule.
    let listed: Vec<&str> = want
        .lines()
        .skip(2)
        .filter_map(|l| l.strip_prefix("| `"))
        .filter_map(|l| l.split('`').next())
        .collect();
    assert_eq!(listed, LINTS.map(|r| r.id));
    for r in LINTS {
        assert!(
            want.contains(&format!("| `{}` | {} | {} |", r.id, r.why, r.fires_when)),
            "{}",
            r.id
        );
    }
}

#[test]
fn retrysim_lints_prints_the_table_as_csv() {
    let o = retrysim(&["lints", "-q"]);
    assert_eq!(code(&o), 0);
    assert!(o.stderr.is_empty());
    let mut r = csv::Reader::from_reader(&o.stdout[..]);
    assert_eq!(
        r.headers().unwrap().iter().collect::<Vec<_>>(),
        ["id", "why", "fires_when"]
    );
    let rows: Vec<Vec<String>> = r
        .records()
        .map(|rec| rec.unwrap().iter().map(String::from).collect())
        .collect();
    let want: Vec<Vec<String>> = LINTS
        .iter()
        .map(|l| vec![l.id.into(), l.why.into(), l.fires_when.into()])
        .collect();
    assert_eq!(rows, want);
}

/// Every lint of the table has its pair of fixtures, and every fixture is a lint's
/// (the tests above run each lint on its pair).
#[test]
fn the_lint_fixtures_are_exactly_the_tables_pairs() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/lints");
    let mut found: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    found.sort();
    let mut want: Vec<String> = LINTS
        .iter()
        .flat_map(|r| [format!("{}.toml", r.id), format!("{}_fixed.toml", r.id)])
        .collect();
    want.sort();
    assert_eq!(found, want);
}

// ----- service graphs (issue 19) ---------------------------------------------------------

/// A service of a graph: `calls` are (callee TOML, layers TOML) pairs.
fn service(name: &str, extra: &str, calls: &[(&str, &str)]) -> String {
    let mut s = format!(
        "[[services]]\nname = \"{name}\"\nservers = 100\nqueue_limit = 100\nservice_time = \"1ms\"\n{extra}\n"
    );
    for (to, layers) in calls {
        s += &format!("[[services.calls]]\nto = {to}\n{layers}\n");
    }
    s
}

/// One call layer (or fleet layer, with `table`) of `n` attempts, `extra` appended.
fn tier(table: &str, n: u32, extra: &str) -> String {
    format!(
        "[[{table}]]\nname = \"rpc\"\nmax_attempts = {n}\nattempt_timeout = \"500ms\"\nbackoff = {{ kind = \"exponential\", base = \"10ms\", cap = \"1s\", jitter = \"full\" }}\n{extra}"
    )
}

fn call(n: u32, extra: &str) -> String {
    tier("services.calls.layers", n, extra)
}

/// A graph of `services` and one fleet 'users' with one layer of `n` attempts.
fn graph(services: &[String], n: u32, fleet_extra: &str) -> String {
    format!(
        "name = \"g\"\nduration = \"10s\"\n{}\n[[fleets]]\nname = \"users\"\narrival = {{ kind = \"poisson\", rate = 10 }}\n{}",
        services.concat(),
        tier("fleets.layers", n, fleet_extra)
    )
}

fn chain_of(n: u32) -> String {
    let c = call(n, "");
    graph(
        &[
            service("frontend", "", &[("\"backend\"", &c)]),
            service("backend", "", &[("\"db\"", &c)]),
            service("db", "", &[]),
        ],
        n,
        "",
    )
}

fn per_service(e: &Explanation, fleet: usize) -> Vec<(String, Bound, Bound)> {
    e.fleets[fleet]
        .per_service
        .iter()
        .map(|s| (s.service.clone(), s.attempts, s.paths))
        .collect()
}

fn triples(v: &[(&str, u64, u64)]) -> Vec<(String, Bound, Bound)> {
    v.iter()
        .map(|(s, a, p)| (s.to_string(), Bound::Finite(*a), Bound::Finite(*p)))
        .collect()
}

#[test]
fn a_three_tier_chain_of_four_attempts_makes_4_16_64_and_of_three_3_9_27() {
    let e = explain_text(&chain_of(4));
    assert_eq!(
        per_service(&e, 0),
        triples(&[("frontend", 4, 1), ("backend", 16, 1), ("db", 64, 1)])
    );
    assert_eq!(e.fleets[0].path_count, Bound::Finite(1));
    assert_eq!(e.fleets[0].target, "frontend");
    assert_eq!(e.dependency_service, "frontend");
    let text = e.render();
    assert!(
        text.contains(
            "  worst case per request of fleet 'users': frontend 4 → backend 16 → db 64\n"
        ),
        "{text}"
    );
    assert!(
        text.starts_with("scenario 'g': 1 fleet against a graph of 3 services, 10s of arrivals\n"),
        "{text}"
    );
    assert!(text.contains(
        "the dependency (the whole-run columns and the load below) is service 'frontend', the one fleet 'users' calls: capacity 100000 attempts/s\n"
    ));
    assert!(
        text.contains("  frontend ─▶ backend: deadline not propagated\n"),
        "{text}"
    );
    assert!(text.contains("      rpc: 4 attempts, retries rejected, error, timeout\n"));
    assert!(text.contains("    4 attempts per call (worst case)\n"));
    assert!(text.contains(
        "service 'db': 100 servers / mean service time 1ms = capacity 100000 attempts/s\n  queue limit 100; a full queue rejects with 503, no Retry-After; sheds load: finite queue\n"
    ), "{text}");
    assert!(text.contains("  calls nobody\n"));
    assert!(text.contains("40 attempts/s at 'frontend'"), "{text}");

    let e = explain_text(&chain_of(3));
    assert_eq!(
        per_service(&e, 0),
        triples(&[("frontend", 3, 1), ("backend", 9, 1), ("db", 27, 1)])
    );
    assert!(e
        .render()
        .contains("worst case per request of fleet 'users': frontend 3 → backend 9 → db 27\n"));
}

#[test]
fn a_fan_out_shows_each_branch() {
    let two = call(2, "");
    let three = call(3, "");
    let text = graph(
        &[
            service("frontend", "", &[("\"api\"", &two)]),
            service(
                "api",
                "",
                &[("[\"users\", \"orders\"]\njoin = \"any\"\ncancel_rest = false\npropagate_deadline = true", &three)],
            ),
            service("users", "", &[]),
            service("orders", "", &[]),
        ],
        4,
        "",
    );
    let e = explain_text(&text);
    assert_eq!(
        per_service(&e, 0),
        triples(&[
            ("frontend", 4, 1),
            ("api", 8, 1),
            ("users", 24, 1),
            ("orders", 24, 1)
        ])
    );
    assert_eq!(e.fleets[0].path_count, Bound::Finite(2));
    let call = &e.services[1].calls[0];
    assert_eq!(call.to, vec!["users".to_string(), "orders".to_string()]);
    assert_eq!(call.worst_case_attempts, Bound::Finite(3));
    let out = e.render();
    assert!(out.contains(
        "  api ─▶ users, orders: fan-out, join any (one success is enough), the rest left running once the join is decided; remaining deadline propagated\n"
    ), "{out}");
    assert!(out.contains("    3 attempts per call at each callee (worst case)\n"));
    assert!(
        out.contains(
            "  worst case per request of fleet 'users', 2 paths:\n    frontend 4 → api 8 → users 24\n    frontend 4 → api 8 → orders 24\n\n"
        ),
        "{out}"
    );
    assert!(!out.contains("in all:"), "a tree needs no sums: {out}");
}

#[test]
fn a_service_reached_by_two_paths_sums_them() {
    // frontend calls db directly (2 attempts) and through cache (3 × 5).
    let text = graph(
        &[
            service(
                "frontend",
                "",
                &[("\"cache\"", &call(3, "")), ("\"db\"", &call(2, ""))],
            ),
            service("cache", "", &[("\"db\"", &call(5, ""))]),
            service("db", "", &[]),
        ],
        2,
        "",
    );
    let e = explain_text(&text);
    // db: 2 × 3 × 5 + 2 × 2 = 34.
    assert_eq!(
        per_service(&e, 0),
        triples(&[("frontend", 2, 1), ("cache", 6, 1), ("db", 34, 2)])
    );
    let out = e.render();
    assert!(
        out.contains(
            "  worst case per request of fleet 'users', 2 paths:\n    frontend 2 → cache 6 → db 30\n    frontend 2 → db 4\n    in all: frontend 2, cache 6, db 34 (over 2 paths)\n"
        ),
        "{out}"
    );
}

#[test]
fn unlimited_attempts_in_a_graph_print_unlimited() {
    let text = graph(
        &[
            service(
                "frontend",
                "",
                &[(
                    "\"db\"",
                    &call(3, "").replace("max_attempts = 3", "max_attempts = \"unlimited\""),
                )],
            ),
            service("db", "", &[]),
        ],
        2,
        "",
    );
    let e = explain_text(&text);
    assert_eq!(e.fleets[0].per_service[1].attempts, Bound::Unbounded);
    assert!(e
        .render()
        .contains("worst case per request of fleet 'users': frontend 2 → db unlimited\n"));
}

#[test]
fn retries_at_several_tiers_fires_on_the_cascade_and_not_on_one_retrying_tier() {
    let e = explain_text(&chain_of(4));
    assert_eq!(
        ids(&e),
        BTreeSet::from([lint::tiers::RETRIES_AT_SEVERAL_TIERS.id])
    );
    let l = &e.lints[0];
    assert_eq!(
        (l.fleet.as_str(), l.layer.as_deref(), l.call.as_deref()),
        ("users", None, None)
    );
    assert!(
        l.message.starts_with("on the path users → frontend → backend → db, 3 tiers retry (fleet 'users' 4, frontend ─▶ backend 4, backend ─▶ db 4), none with a retry budget, so their attempts multiply to 4 × 4 × 4 = 64 attempts at 'db' per request"),
        "{}",
        l.message
    );
    assert!(l.message.contains("retry at one tier only"));

    // Fixed: retries only at the tier above the db, overloaded answers above it, and
    // retry_on without overloaded.
    let fixed = graph(
        &[
            service(
                "frontend",
                "on_failure = \"overloaded\"",
                &[(
                    "\"backend\"",
                    &call(1, "retry_on = [\"error\", \"timeout\"]\n"),
                )],
            ),
            service(
                "backend",
                "on_failure = \"overloaded\"",
                &[("\"db\"", &call(4, ""))],
            ),
            service("db", "", &[]),
        ],
        1,
        "retry_on = [\"error\", \"timeout\"]\n",
    );
    let e = explain_text(&fixed);
    assert!(e.lints.is_empty(), "{:#?}", e.lints);
    assert_eq!(
        per_service(&e, 0),
        triples(&[("frontend", 1, 1), ("backend", 1, 1), ("db", 4, 1)])
    );

    // Two retrying tiers, one budgeted: the other still lints; both budgeted: silent.
    let budget = "budget = { kind = \"token_bucket\", max_tokens = 10, token_ratio = 0.1 }\n";
    let two = |fleet_budget: &str| {
        graph(
            &[
                service("frontend", "", &[("\"db\"", &call(3, budget))]),
                service("db", "", &[]),
            ],
            3,
            fleet_budget,
        )
    };
    let e = explain_text(&two(""));
    assert_eq!(
        ids(&e),
        BTreeSet::from([lint::tiers::RETRIES_AT_SEVERAL_TIERS.id])
    );
    assert!(
        e.lints[0].message.contains("(fleet 'users' 3, frontend ─▶ db 3), fleet 'users' without a retry budget, so their attempts multiply to 3 × 3 = 9 attempts at 'db'"),
        "{}",
        e.lints[0].message
    );
    assert!(explain_text(&two(budget)).lints.is_empty());
}

#[test]
fn retries_at_several_tiers_names_the_path_that_multiplies_most() {
    let text = graph(
        &[
            service(
                "frontend",
                "",
                &[("\"cache\"", &call(2, "")), ("\"db\"", &call(3, ""))],
            ),
            service("cache", "", &[]),
            service("db", "", &[]),
        ],
        2,
        "",
    );
    let e = explain_text(&text);
    assert_eq!(
        ids(&e),
        BTreeSet::from([lint::tiers::RETRIES_AT_SEVERAL_TIERS.id])
    );
    let m = &e.lints[0].message;
    assert!(m.contains("on the path users → frontend → db,"), "{m}");
    assert!(m.contains("2 × 3 = 6 attempts at 'db'"), "{m}");
    assert!(
        m.contains("(2 paths of this fleet do so; this one multiplies most)"),
        "{m}"
    );
}

#[test]
fn retries_overloaded_fires_at_a_call_and_a_fleet_layer_and_not_without_overloaded() {
    let with = "retry_on = [\"error\", \"timeout\", \"overloaded\"]\n";
    let without = "retry_on = [\"error\", \"timeout\"]\n";
    // Retries only at the tier above the db; the backend answers overloaded above it.
    let build = |retry_on: &str, fleet_retry_on: &str| {
        graph(
            &[
                service(
                    "frontend",
                    "on_failure = \"overloaded\"",
                    &[("\"backend\"", &call(1, retry_on))],
                ),
                service(
                    "backend",
                    "on_failure = \"overloaded\"",
                    &[("\"db\"", &call(3, ""))],
                ),
                service("db", "", &[]),
            ],
            1,
            fleet_retry_on,
        )
    };
    // max_attempts 1 does not retry at all: silent even with overloaded in retry_on.
    assert!(explain_text(&build(with, with)).lints.is_empty());
    let retrying = |retry_on: &str, fleet: &str| {
        build(retry_on, fleet).replacen("max_attempts = 1\n", "max_attempts = 2\n", 1)
    };
    let e = explain_text(&retrying(with, without));
    let hit: Vec<_> = e
        .lints
        .iter()
        .map(|l| {
            (
                l.id,
                l.fleet.as_str(),
                l.call.as_deref(),
                l.layer.as_deref(),
            )
        })
        .collect();
    assert_eq!(
        hit,
        vec![
            (
                lint::tiers::RETRIES_AT_SEVERAL_TIERS.id,
                "users",
                None,
                None
            ),
            (
                lint::tiers::RETRIES_OVERLOADED.id,
                "users",
                Some("frontend ─▶ backend"),
                Some("rpc")
            ),
        ]
    );
    let shown = e.lints[1].to_string();
    assert!(
        shown.starts_with("[retries-overloaded] fleet 'users', call frontend ─▶ backend, layer 'rpc': service 'backend' answers a failed request overloaded (on_failure = \"overloaded\")"),
        "{shown}"
    );
    assert!(shown.contains("leave overloaded out of retry_on"));
    // Without overloaded in retry_on only the tiers rule remains.
    let e = explain_text(&retrying(without, without));
    assert_eq!(
        ids(&e),
        BTreeSet::from([lint::tiers::RETRIES_AT_SEVERAL_TIERS.id])
    );

    // A fleet layer retrying a target with overloaded_status.
    let fleet = |retry_on: &str| {
        graph(
            &[service("frontend", "overloaded_status = true", &[])],
            3,
            retry_on,
        )
    };
    let e = explain_text(&fleet(with));
    assert_eq!(
        ids(&e),
        BTreeSet::from([lint::tiers::RETRIES_OVERLOADED.id])
    );
    assert_eq!(e.lints[0].layer.as_deref(), Some("rpc"));
    assert!(e.lints[0].message.contains("overloaded_status = true"));
    assert!(explain_text(&fleet(without)).lints.is_empty());
    // ... and not against a callee that never answers overloaded.
    let plain = graph(&[service("frontend", "", &[])], 3, with);
    assert!(explain_text(&plain).lints.is_empty());
}

#[test]
fn ignores_retry_after_counts_overloaded_rejections_with_overloaded_status() {
    let front = |extra: &str, retry_on: &str| {
        graph(
            &[service(
                "frontend",
                &format!("retry_after = \"1s\"\n{extra}"),
                &[],
            )],
            3,
            &format!("respect_retry_after = false\n{retry_on}"),
        )
    };
    // Rejections are `rejected`: the default retry_on retries them.
    let e = explain_text(&front("", ""));
    assert_eq!(ids(&e), BTreeSet::from([lint::IGNORES_RETRY_AFTER.id]));
    assert!(e.lints[0]
        .message
        .starts_with("service 'frontend' rejects with Retry-After 1s"));
    // With overloaded_status they are `overloaded`, which the default does not retry.
    assert!(explain_text(&front("overloaded_status = true", ""))
        .lints
        .is_empty());
}

#[test]
fn a_dependency_scenario_explains_as_before() {
    let e = explain_fixture("too-many-attempts", &[]);
    assert!(!e.graph);
    assert_eq!(e.dependency_service, "dependency");
    assert_eq!(e.services.len(), 1);
    let text = e.render();
    assert!(text.starts_with("scenario 'too-many-attempts': 1 fleet against one dependency,"));
    assert!(!text.contains("worst case per request of fleet"));
    assert!(!text.contains("─▶"));
    assert!(text.contains("attempts/s at the dependency"));
    assert!(e.lints.iter().all(|l| l.call.is_none()));
}

// ----- queue fleets (issue 21) -----------------------------------------------------------

/// A queue fleet with `extra` fleet keys and `layers`.
fn queue_fleet(extra: &str, layers: &str) -> String {
    format!(
        r#"
duration = "10s"
[dependency]
servers = 10
queue_limit = 100
service_time = "10ms"
[[fleets]]
name = "web"
arrival = {{ kind = "queue", rate = 100 }}
consumers = 5
{extra}
{layers}
"#
    )
}

#[test]
fn a_handler_without_any_time_bound_outlives_any_visibility_timeout() {
    let e = explain_text(&queue_fleet("max_receive_count = 1", ""));
    assert_eq!(
        ids(&e),
        BTreeSet::from([lint::queue::VISIBILITY_TIMEOUT_BELOW_HANDLER_TIME.id])
    );
    assert!(
        e.lints[0].message.contains("nothing bounds"),
        "{:?}",
        e.lints
    );
    // A deadline bounds it.
    let e = explain_text(&queue_fleet(
        "max_receive_count = 1\ndeadline = \"20s\"",
        "",
    ));
    assert!(e.lints.is_empty(), "{:?}", e.lints);
    // Backoff counts: 3 attempts of 1 s and two waits of 14 s exceed 30 s.
    let layer = "[[fleets.layers]]\nmax_attempts = 3\nattempt_timeout = \"1s\"\nbackoff = { kind = \"fixed\", delay = \"14s\" }";
    let e = explain_text(&queue_fleet("max_receive_count = 1", layer));
    assert_eq!(
        e.fleets[0].queue.as_ref().unwrap().handler_worst_case,
        Bound::Finite(31_000_000_000)
    );
    assert_eq!(
        ids(&e),
        BTreeSet::from([lint::queue::VISIBILITY_TIMEOUT_BELOW_HANDLER_TIME.id])
    );
    // total_timeout caps the layer.
    let e = explain_text(&queue_fleet(
        "max_receive_count = 1",
        &format!("{layer}\ntotal_timeout = \"20s\""),
    ));
    assert!(e.lints.is_empty(), "{:?}", e.lints);
}

#[test]
fn a_budget_or_a_single_receive_ends_the_double_retry_loop() {
    let layer = "[[fleets.layers]]\nmax_attempts = 3\nattempt_timeout = \"1s\"";
    let e = explain_text(&queue_fleet("", layer));
    // Unlimited receives by default: unbounded attempts per message.
    assert_eq!(ids(&e), BTreeSet::from([lint::queue::DOUBLE_RETRY_LOOP.id]));
    assert!(
        e.lints[0]
            .message
            .contains("unbounded attempts per message"),
        "{:?}",
        e.lints
    );
    assert_eq!(
        e.fleets[0].queue.as_ref().unwrap().attempts_per_message,
        Bound::Unbounded
    );
    let budget = format!(
        "{layer}\nbudget = {{ kind = \"token_bucket\", max_tokens = 10, token_ratio = 0.1 }}"
    );
    assert!(explain_text(&queue_fleet("max_receive_count = 5", &budget))
        .lints
        .is_empty());
    assert!(explain_text(&queue_fleet("max_receive_count = 1", layer))
        .lints
        .is_empty());
}

#[test]
fn pool_held_during_backoff_fires_only_when_the_innermost_layer_retries_with_the_pool_held() {
    let base = r#"
duration = "10s"
[dependency]
servers = 10
queue_limit = 10
service_time = "10ms"
[[fleets]]
name = "app"
arrival = { kind = "poisson", rate = 10 }
POOL
[[fleets.layers]]
name = "sdk"
max_attempts = ATTEMPTS
backoff = { kind = "exponential", base = "100ms", cap = "1s", jitter = "full" }
"#;
    let scn = |pool: &str, attempts: u32| {
        base.replace("POOL", pool)
            .replace("ATTEMPTS", &attempts.to_string())
    };
    let held = "pool = { size = 20, hold_during_backoff = true }";
    let e = explain_text(&scn(held, 3));
    assert_eq!(
        ids(&e),
        BTreeSet::from([lint::guards::POOL_HELD_DURING_BACKOFF.id])
    );
    assert_eq!(e.lints[0].layer.as_deref(), Some("sdk"));
    assert!(e.lints[0].message.contains("pool of 20 connections"));
    // Given back during the backoff, or no retries: silent.
    assert!(explain_text(&scn("pool = { size = 20 }", 3))
        .lints
        .is_empty());
    assert!(explain_text(&scn(held, 1)).lints.is_empty());
}
