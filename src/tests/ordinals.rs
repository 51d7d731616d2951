//! `attempts_by_ordinal.csv`: outcomes by attempt ordinal, against exact counts (every
//! retryable failure makes the next ordinal, nested layers multiply) and binomial
//! expectations, and through the binary.

use crate::tests::common;

use crate::metrics::ordinal::{End, Ordinals, MAX_ORDINAL};
use crate::model::outcome::Class;
use crate::run::RunResult;
use common::{col, count, run};

const ERROR: End = End::Class(Class::Error);
const SUCCESS: End = End::Class(Class::Success);
const BUDGET: End = End::Class(Class::BudgetExhausted);

/// Attempts of `layer` and `ordinal`, every outcome.
fn at(o: &Ordinals, layer: usize, ordinal: u32) -> u64 {
    End::ALL.iter().map(|&e| o.count(layer, ordinal, e)).sum()
}

/// Every row of `layer`.
fn layer_total(o: &Ordinals, layer: usize) -> u64 {
    o.rows().filter(|r| r.0 == layer).map(|r| r.3).sum()
}

/// Rows of `end`, every layer and ordinal.
fn total_of(o: &Ordinals, end: End) -> u64 {
    o.rows().filter(|r| r.2 == end).map(|r| r.3).sum()
}

/// One layer of `n` attempts, no timeouts, no budget or breaker; the dependency fails
/// an attempt with probability `p`. 1000/s for 20 s: 20,000 logical requests.
fn flaky(n: u32, p: f64) -> String {
    format!(
        r#"
duration = "20s"
[dependency]
servers = "unlimited"
service_time = {{ kind = "deterministic", value = "1ms" }}
error_rate = {p}
[[fleets]]
name = "f"
arrival = {{ kind = "constant", rate = 1000 }}
[[fleets.layers]]
max_attempts = {n}
backoff = {{ kind = "fixed", delay = "2ms" }}
"#
    )
}

#[test]
fn every_retryable_failure_makes_the_next_ordinal_and_counts_fall_as_p_to_the_k() {
    let (n, p) = (5u32, 0.5);
    let r = run(&flaky(n, p), &[]);
    let o = &r.metrics.ordinals;
    let logical = count(&r, "logical");
    assert_eq!(logical, 20_000);
    assert_eq!(count(&r, "in_flight"), 0, "the drain is long enough");
    assert_eq!(o.layers(), 1);
    assert_eq!(o.max_ordinal(0), n);
    // Every call makes a first attempt; each error but at the last ordinal a next one.
    assert_eq!(at(o, 0, 1), logical);
    for k in 1..=n {
        let here = at(o, 0, k);
        assert_eq!(
            o.count(0, k, SUCCESS) + o.count(0, k, ERROR),
            here,
            "ordinal {k} ends only in success or error"
        );
        if k < n {
            assert_eq!(at(o, 0, k + 1), o.count(0, k, ERROR), "ordinal {}", k + 1);
        }
        // Attempt k happens with probability p^(k-1), independently per request:
        // Binomial(logical, p^(k-1)), within 5 standard deviations.
        let q = p.powi(k as i32 - 1);
        let mean = logical as f64 * q;
        let sd = (logical as f64 * q * (1.0 - q)).sqrt();
        let tol = (5.0 * sd).max(1.0);
        assert!(
            (here as f64 - mean).abs() <= tol,
            "ordinal {k}: {here} attempts, expected {mean} ± {tol}"
        );
    }
    // The calls' ends: a success at some ordinal, or an error at the last.
    let successes: u64 = (1..=n).map(|k| o.count(0, k, SUCCESS)).sum();
    assert_eq!(successes, count(&r, "succeeded"));
    assert_eq!(o.count(0, n, ERROR), count(&r, "failed"));
    // The only layer is the innermost: its attempts are the dependency's.
    assert_eq!(layer_total(o, 0), count(&r, "attempts"));
    assert_eq!(layer_total(o, 0), r.metrics.totals.layer_calls[0]);
    let errors: u64 = (1..=n).map(|k| o.count(0, k, ERROR)).sum();
    assert_eq!(errors, count(&r, "errors"));
}

/// `layers` nested layers of `ns[i]` attempts over a dependency that always fails.
fn dead(ns: &[u32]) -> String {
    let mut s = String::from(
        r#"
duration = "10s"
[dependency]
servers = "unlimited"
service_time = { kind = "deterministic", value = "1ms" }
error_rate = 1.0
[[fleets]]
name = "f"
arrival = { kind = "constant", rate = 20 }
"#,
    );
    for (i, n) in ns.iter().enumerate() {
        s.push_str(&format!(
            "[[fleets.layers]]\nname = \"l{i}\"\nmax_attempts = {n}\n"
        ));
    }
    s
}

#[test]
fn nested_layers_count_every_ordinal_exactly_and_the_outer_layer_sees_the_inner_error() {
    let (top, inner) = (3u32, 4u32);
    let r = run(&dead(&[top, inner]), &[]);
    let o = &r.metrics.ordinals;
    let logical = count(&r, "logical");
    assert_eq!(logical, 200);
    // When the inner call gives up, the outer attempt ends with the inner call's last
    // outcome: `error`. Nothing else happens.
    let mut expected: Vec<(usize, u32, End, u64)> =
        (1..=top).map(|k| (0, k, ERROR, logical)).collect();
    expected.extend((1..=inner).map(|k| (1, k, ERROR, logical * u64::from(top))));
    assert_eq!(o.rows().collect::<Vec<_>>(), expected);
    // The innermost layer's attempts are the dependency's; layer 0's are the calls
    // into layer 1, each of which has exactly one first attempt.
    assert_eq!(layer_total(o, 1), count(&r, "attempts"));
    assert_eq!(layer_total(o, 0), at(o, 1, 1));
    for i in 0..2 {
        assert_eq!(
            layer_total(o, i),
            r.metrics.totals.layer_calls[i],
            "layer {i}"
        );
        assert_eq!(
            col(&r, &format!("attempts_layer_{i}")),
            f64::from([top, top * inner][i]),
            "layer {i}"
        );
    }
}

#[test]
fn the_rows_are_rendered_in_layer_ordinal_outcome_order() {
    let mut r: RunResult = run(&dead(&[2, 1]), &[]);
    r.run = 7;
    let text = crate::export::csv::ordinal_rows(&r);
    assert_eq!(text, "7,0,1,error,200\n7,0,2,error,200\n7,1,1,error,400\n");
}

/// One layer of 4 attempts with a gRPC-style token bucket, over a dependency that
/// fails every attempt from 5 s to 15 s (and 5% of them otherwise).
const BUDGETED: &str = r#"
duration = "25s"
[dependency]
servers = "unlimited"
service_time = { kind = "deterministic", value = "1ms" }
error_rate = 0.05
[[fleets]]
name = "f"
arrival = { kind = "poisson", rate = 500, clients = 20 }
[[fleets.layers]]
max_attempts = 4
instances = 20
backoff = { kind = "fixed", delay = "5ms" }
budget = { kind = "token_bucket", max_tokens = 10, token_ratio = 0.1 }
[[outages]]
start = "5s"
end = "15s"
mode = { kind = "fail" }
"#;

#[test]
fn a_denied_retry_is_its_ordinals_budget_exhausted_and_matches_the_summary() {
    let r = run(BUDGETED, &[]);
    let o = &r.metrics.ordinals;
    let denied = total_of(o, BUDGET);
    assert!(
        denied > 1000,
        "the budget denies retries in the outage ({denied})"
    );
    assert_eq!(o.count(0, 1, BUDGET), 0, "a first attempt is never a retry");
    assert_eq!(denied, count(&r, "budget_exhausted"));
    assert_eq!(at(o, 0, 1), count(&r, "logical"));
    // Every error at ordinal k < 4 makes a row at k + 1: the retry, or its denial.
    for k in 1..4 {
        assert_eq!(at(o, 0, k + 1), o.count(0, k, ERROR), "ordinal {}", k + 1);
    }
    // Sent attempts are the dependency's.
    assert_eq!(layer_total(o, 0) - denied, count(&r, "attempts"));
}

/// Two layers with attempt timeouts (the outer one cancels the work below), a
/// deadline and a dependency that swallows attempts from 3 s to the end, with a drain
/// too short for them: attempts time out, are cancelled, hit the deadline or are
/// still out at the end. The inner timeout is the shorter: an inner call's first
/// attempt has ended (by 60 ms) when the outer one times out (150 ms), so every
/// cancellation reaches an inner call past its first attempt.
const HANGING: &str = r#"
duration = "6s"
drain = "50ms"
[dependency]
servers = 50
service_time = { kind = "exponential", mean = "5ms" }
error_rate = 0.1
[[fleets]]
name = "f"
arrival = { kind = "poisson", rate = 400 }
deadline = "400ms"
[[fleets.layers]]
name = "outer"
max_attempts = 3
attempt_timeout = "150ms"
cancel_on_timeout = true
backoff = { kind = "fixed", delay = "10ms" }
[[fleets.layers]]
name = "inner"
max_attempts = 3
attempt_timeout = "60ms"
backoff = { kind = "fixed", delay = "5ms" }
[[outages]]
start = "3s"
end = "10s"
mode = { kind = "blackhole" }
"#;

#[test]
fn every_first_attempt_is_counted_once_however_it_ends() {
    let r = run(HANGING, &[]);
    let o = &r.metrics.ordinals;
    let ends: Vec<End> = End::ALL
        .into_iter()
        .filter(|&e| total_of(o, e) > 0)
        .collect();
    for e in [
        SUCCESS,
        ERROR,
        End::Class(Class::Timeout),
        End::Class(Class::DeadlineExceeded),
        End::Cancelled,
        End::InFlight,
    ] {
        assert!(ends.contains(&e), "{e:?} never happens: {ends:?}");
    }
    // Every logical request's call has one first attempt; every call layer 0 made
    // (without hop latency, delivered at once) has one at layer 1.
    assert_eq!(at(o, 0, 1), count(&r, "logical"));
    assert_eq!(at(o, 1, 1), r.metrics.totals.layer_calls[0]);
    // So every `cancelled` above is a cancel reaching an inner call past its first
    // attempt.
    assert_eq!(o.count(1, 1, End::Cancelled), 0);
}

#[test]
fn an_unlimited_layer_without_backoff_counts_its_late_retries_in_one_and_above_row() {
    // Two requests retry a dependency that always fails, with no backoff and no
    // limit, until the run stops at its event cap: tens of thousands of ordinals,
    // which share the row of MAX_ORDINAL instead of each growing the table.
    let text = r#"
duration = "1s"
[limits]
max_events = 200000
[dependency]
servers = "unlimited"
service_time = { kind = "deterministic", value = "1us" }
error_rate = 1.0
[[fleets]]
name = "f"
arrival = { kind = "constant", rate = 2 }
[[fleets.layers]]
max_attempts = "unlimited"
"#;
    let r = run(text, &[]);
    let o = &r.metrics.ordinals;
    let calls = r.metrics.totals.layer_calls[0];
    assert!(calls > 20 * u64::from(MAX_ORDINAL), "{calls} attempts");
    assert_eq!(o.max_ordinal(0), MAX_ORDINAL);
    let logical = count(&r, "logical");
    assert_eq!(o.count(0, MAX_ORDINAL - 1, ERROR), logical);
    // Every attempt is still counted once: the last row holds all the later ones.
    assert_eq!(layer_total(o, 0), calls);
    assert_eq!(
        at(o, 0, MAX_ORDINAL),
        calls - logical * u64::from(MAX_ORDINAL - 1)
    );
}
