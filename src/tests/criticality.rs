//! Request classes and priority shedding (issue 41): shedding keeps `critical` at its
//! baseline while `sheddable` absorbs the overload, the class travels with retries and
//! downstream calls, a shed is a 503, the columns, the lint, and bad input.

use std::process::Command;

use crate::model::outcome::Class;

use crate::tests::common::{col, count, run, scenario as load};

/// A dependency of 10 servers at 10 ms (1000/s, 5% errors, queue 100) with `dep`
/// appended, users (`critical`, 600/s, one attempt) and, with `batch` > 0, a
/// `sheddable` fleet of `batch`/s retrying up to 3 attempts.
fn mixed(dep: &str, batch: u32) -> String {
    let batch = if batch > 0 {
        format!(
            r#"
[[fleets]]
name = "batch"
criticality = "sheddable"
arrival = {{ kind = "poisson", rate = {batch}, clients = 100 }}
[[fleets.layers]]
max_attempts = 3
backoff = {{ kind = "exponential", base = "20ms", jitter = "full" }}
"#
        )
    } else {
        String::new()
    };
    format!(
        r#"
duration = "20s"
drain = "2s"
[dependency]
servers = 10
queue_limit = 100
service_time = {{ kind = "exponential", mean = "10ms" }}
error_rate = 0.05
{dep}
[[fleets]]
name = "user"
criticality = "critical"
arrival = {{ kind = "poisson", rate = 600, clients = 600 }}
[[fleets.layers]]
max_attempts = 1
{batch}"#
    )
}

const SHED: &str =
    r#"shed_by_criticality = { signal = "queue_fill", sheddable = 0.2, sheddable_plus = 0.5 }"#;

#[test]
fn priority_shedding_keeps_critical_at_its_baseline_while_sheddable_absorbs_the_overload() {
    // The users alone: their success is 1 − the error rate, up to binomial noise.
    let base = run(&mixed(SHED, 0), &[]);
    let baseline = col(&base, "success_fraction_critical");
    let n = count(&base, "logical") as f64;
    assert!((baseline - 0.95).abs() < 0.01, "{baseline}");
    // The same users beside 1200/s of sheddable load (180% of capacity together).
    let shed = run(&mixed(SHED, 1200), &[]);
    let kept = col(&shed, "success_fraction_critical");
    // Tolerance: the two runs are independent binomial samples of ~12000 requests at
    // p = 0.95, so their difference has a standard deviation of √(2·p(1−p)/n) ≈
    // 0.0028; the tolerance is 4 of them (a false alarm once in 16000). The queue
    // stays near 20 (sheddable is shed from there), so no user attempt meets a full
    // queue: no systematic loss is allowed for.
    let tol = 4.0 * (2.0 * 0.95 * 0.05 / n).sqrt();
    assert!(tol < 0.012, "{n} requests: {tol}");
    assert!(
        (kept - baseline).abs() < tol,
        "baseline {baseline}, with shedding {kept}"
    );
    assert_eq!(count(&shed, "rejected"), 0, "no user meets a full queue");
    assert_eq!(count(&shed, "priority_shed_critical"), 0);
    // Sheddable absorbs the overload: its attempts are the ones shed.
    assert!(count(&shed, "priority_shed_sheddable") > 10_000);
    assert!(col(&shed, "success_fraction_sheddable") < 0.6);
    assert_eq!(
        count(&shed, "priority_shed_sheddable"),
        shed.metrics.totals.outcomes[Class::PriorityShed as usize]
    );
    // Without priority shedding the same load costs the users dearly: the test can fail.
    let flat = run(&mixed("", 1200), &[]);
    let lost = col(&flat, "fleet_user_success_fraction");
    assert!(lost < baseline - 0.2, "baseline {baseline}, flat {lost}");
}

#[test]
fn a_layer_lowers_its_retries_and_only_them() {
    // One critical fleet, overloaded, retrying rejections at sheddable: first attempts
    // are never shed (critical has no threshold), retries are from 20% fill.
    let text = r#"
duration = "10s"
[dependency]
servers = 10
queue_limit = 50
service_time = { kind = "exponential", mean = "10ms" }
shed_by_criticality = { signal = "queue_fill", sheddable = 0.2 }
[[fleets]]
name = "user"
arrival = { kind = "poisson", rate = 1500, clients = 100 }
[[fleets.layers]]
max_attempts = 3
retry_criticality = "sheddable"
"#;
    let r = run(text, &[]);
    assert!(count(&r, "priority_shed_sheddable") > 100);
    assert_eq!(count(&r, "priority_shed_critical"), 0);
    assert!(r.summary.get("success_fraction_critical").is_some());
    // The sheddable column has no fleet behind it: an empty success fraction.
    assert!(r
        .summary
        .get("success_fraction_sheddable")
        .unwrap()
        .as_f64()
        .is_none());
    // Without the lowering nothing is shed.
    let r = run(text, &["fleets.0.layers.0.retry_criticality=\"critical\""]);
    assert_eq!(r.metrics.priority_shed, [0; 4]);
    assert!(r.summary.get("priority_shed_sheddable").is_none());
    assert_eq!(count(&r, "priority_shed_critical"), 0);
}

/// A front tier (no shedding) calling a backend that sheds sheddable from 10% fill;
/// a critical fleet and a sheddable one.
const GRAPH: &str = r#"
duration = "10s"
[[services]]
name = "front"
servers = 1000
service_time = "1ms"
calls = [{ to = "backend", layers = [{ max_attempts = 1 }] }]
[[services]]
name = "backend"
servers = 10
queue_limit = 100
service_time = { kind = "exponential", mean = "10ms" }
shed_by_criticality = { signal = "utilisation", sheddable = 0.8 }
[[fleets]]
name = "user"
target = "front"
arrival = { kind = "poisson", rate = 500, clients = 100 }
[[fleets.layers]]
max_attempts = 1
[[fleets]]
name = "batch"
target = "front"
criticality = "sheddable"
arrival = { kind = "poisson", rate = 800, clients = 100 }
[[fleets.layers]]
max_attempts = 1
"#;

#[test]
fn downstream_calls_inherit_their_requests_class() {
    let r = run(GRAPH, &[]);
    // Only the batch fleet's calls are shed at the backend, two tiers below it.
    assert!(count(&r, "priority_shed_sheddable") > 1000);
    assert_eq!(count(&r, "priority_shed_critical"), 0);
    let user = col(&r, "success_fraction_critical");
    let batch = col(&r, "success_fraction_sheddable");
    assert!(user > 0.99 && batch < 0.8, "user {user}, batch {batch}");
}

#[test]
fn a_shed_is_a_503_that_rejected_5xx_retries_even_where_a_full_queue_answers_429() {
    let text = r#"
duration = "5s"
[dependency]
servers = 1
queue_limit = 10
reject_status = 429
service_time = "10ms"
shed_by_criticality = { signal = "utilisation", sheddable = 1.0 }
[[fleets]]
name = "batch"
criticality = "sheddable"
arrival = { kind = "burst", at = "1s", count = 5 }
[[fleets.layers]]
max_attempts = 2
retry_on = ["rejected_5xx"]
"#;
    // The first attempt takes the one server, the other four are shed and retried once
    // (no backoff: the server is still busy, so they are shed again).
    let r = run(text, &[]);
    assert_eq!(r.metrics.totals.outcomes[Class::PriorityShed as usize], 8);
    assert_eq!(r.metrics.totals.attempts, 9);
    // Free, a shed is answered at once; with reject_cost it waits for the one server
    // (busy for 10 ms) and holds it 1 ms before its answer leaves.
    assert!(col(&r, "failure_latency_p99_ms") < 1.0);
    let r = run(text, &["dependency.reject_cost=\"1ms\""]);
    assert!(col(&r, "failure_latency_p99_ms") > 10.0);
}

#[test]
fn columns_appear_only_with_criticality_and_name_each_class_used() {
    let without = run(
        &mixed("", 0).replace("criticality = \"critical\"\n", ""),
        &[],
    );
    assert!(!without
        .summary
        .cells
        .iter()
        .any(|(k, _)| k.contains("critical") || k.contains("priority_shed")));
    let with = run(&mixed(SHED, 100), &[]);
    for c in [
        "success_fraction_critical",
        "priority_shed_critical",
        "success_fraction_sheddable",
        "priority_shed_sheddable",
    ] {
        assert!(with.summary.get(c).is_some(), "{c}");
    }
    assert!(with.summary.get("success_fraction_critical_plus").is_none());
    assert!(with
        .summary
        .get("success_fraction_sheddable_plus")
        .is_none());
}

#[test]
fn the_lint_fires_on_retries_at_the_first_attempts_class_toward_a_shedding_tier() {
    let lints = |text: &str, sets: &[&str]| -> Vec<String> {
        crate::explain::lint::lints(&load(text, sets).scenario)
            .into_iter()
            .filter(|l| l.id == "retries-at-first-attempt-criticality")
            .map(|l| format!("{}/{}", l.fleet, l.layer.unwrap_or_default()))
            .collect()
    };
    let text = mixed(SHED, 100).replace("max_attempts = 1", "max_attempts = 3");
    // The user fleet (critical) retries at critical; batch is already sheddable.
    assert_eq!(lints(&text, &[]), ["user/layer0"]);
    let lowered = ["fleets.0.layers.0.retry_criticality=\"sheddable_plus\""];
    assert!(lints(&text, &lowered).is_empty());
    // No shedding tier: nothing to say.
    assert!(lints(
        &mixed("", 100).replace("max_attempts = 1", "max_attempts = 3"),
        &[]
    )
    .is_empty());
    // In a graph, a shedding tier downstream counts.
    let graph = GRAPH.replace(
        "max_attempts = 1\n[[fleets]]",
        "max_attempts = 2\n[[fleets]]",
    );
    assert_eq!(lints(&graph, &[]), ["user/layer0"]);
}

fn bad(name: &str, text: &str, expect: &[&str]) {
    let d = tempfile::tempdir().unwrap();
    let path = d.path().join(format!("{name}.toml"));
    std::fs::write(&path, text).unwrap();
    let out = Command::new(crate::tests::common::bin())
        .arg("validate")
        .arg(&path)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{name}: {err}");
    assert!(!err.contains("panicked"), "{name}: {err}");
    assert!(err.contains(&format!("{name}.toml")), "{name}: {err}");
    for e in expect {
        assert!(err.contains(e), "{name}: expected {e:?} in: {err}");
    }
}

#[test]
fn bad_criticality_is_refused_naming_the_field_and_what_is_allowed() {
    let shed = |t: &str| mixed(&format!("shed_by_criticality = {{ {t} }}"), 100);
    bad(
        "unknown_class",
        &mixed("", 100).replace("\"sheddable\"", "\"background\""),
        &[
            "fleets[1].criticality",
            "background",
            "critical_plus",
            "sheddable_plus",
        ],
    );
    bad(
        "unknown_retry_class",
        &mixed("", 0).replace(
            "max_attempts = 1",
            "max_attempts = 2\nretry_criticality = \"low\"",
        ),
        &["retry_criticality", "low", "sheddable"],
    );
    bad(
        "not_monotone",
        &shed(r#"signal = "queue_fill", sheddable = 0.9, sheddable_plus = 0.5"#),
        &[
            "dependency.shed_by_criticality.sheddable",
            "must be at most sheddable_plus's 0.5",
            "lower class is shed no later",
            "found 0.9",
        ],
    );
    bad(
        "gap",
        &shed(r#"signal = "queue_fill", critical = 0.9"#),
        &[
            "dependency.shed_by_criticality.sheddable_plus",
            "must be set when critical is",
        ],
    );
    bad(
        "above_one",
        &shed(r#"signal = "queue_fill", sheddable = 1.5"#),
        &[
            "dependency.shed_by_criticality.sheddable",
            "above 0 and at most 1",
            "found 1.5",
        ],
    );
    bad(
        "zero",
        &shed(r#"signal = "utilisation", sheddable = 0"#),
        &["dependency.shed_by_criticality.sheddable", "above 0"],
    );
    bad(
        "no_queue_limit",
        &shed(r#"signal = "queue_fill", sheddable = 0.5"#).replace("queue_limit = 100\n", ""),
        &[
            "dependency.shed_by_criticality.signal",
            "\"queue_fill\" needs a finite dependency.queue_limit",
        ],
    );
    bad(
        "no_servers",
        &shed(r#"signal = "utilisation", sheddable = 0.5"#)
            .replace("servers = 10", "servers = \"unlimited\""),
        &[
            "dependency.shed_by_criticality.signal",
            "\"utilisation\" needs a finite dependency.servers",
        ],
    );
    bad(
        "critical_plus",
        &shed(r#"signal = "queue_fill", sheddable = 0.5, critical_plus = 1.0"#),
        &[
            "dependency.shed_by_criticality.critical_plus",
            "never shed by criticality",
        ],
    );
    bad(
        "no_threshold",
        &shed(r#"signal = "queue_fill""#),
        &["dependency.shed_by_criticality", "sets no threshold"],
    );
    bad(
        "unknown_signal",
        &shed(r#"signal = "cpu", sheddable = 0.5"#),
        &["signal", "queue_fill", "utilisation"],
    );
    bad(
        "raised_retries",
        &mixed("", 100).replace(
            "backoff = {",
            "retry_criticality = \"critical\"\nbackoff = {",
        ),
        &[
            "fleets[1].layers[0].retry_criticality",
            "must not be above the fleet's criticality \"sheddable\"",
            "found \"critical\"",
        ],
    );
    bad(
        "graph_tier",
        &GRAPH
            .replace("queue_limit = 100\n", "")
            .replace("\"utilisation\"", "\"queue_fill\""),
        &["services[1].shed_by_criticality"],
    );
}

#[test]
fn an_occ_record_does_not_shed() {
    let text = r#"
duration = "10s"
[dependency]
kind = "occ"
shed_by_criticality = { signal = "queue_fill", sheddable = 0.5 }
[[fleets]]
name = "w"
arrival = { kind = "poisson", rate = 10 }
writes = 1.0
"#;
    bad(
        "occ",
        text,
        &[
            "dependency.shed_by_criticality",
            "applies only to kind = \"queue\"",
        ],
    );
}
