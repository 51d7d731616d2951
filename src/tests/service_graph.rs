//! Service graphs (`[[services]]`): the ground truths of issue 19, exactly where the
//! count is exact and within stated tolerances where it is statistical.

use crate::tests::common;

use common::{col, count, run};

/// A chain fleet → frontend → backend → db in which every tier retries `n` attempts
/// on every failure and the database always fails (`extra` is appended).
fn chain(n: u32, extra: &str) -> String {
    format!(
        r#"
duration = "10s"
[[services]]
name = "frontend"
servers = "unlimited"
service_time = "1ms"
[[services.calls]]
to = "backend"
[[services.calls.layers]]
max_attempts = {n}
[[services]]
name = "backend"
servers = "unlimited"
service_time = "1ms"
[[services.calls]]
to = "db"
[[services.calls.layers]]
max_attempts = {n}
[[services]]
name = "db"
servers = "unlimited"
service_time = "1ms"
error_rate = 1.0
[[fleets]]
name = "users"
arrival = {{ kind = "constant", rate = 20 }}
[[fleets.layers]]
max_attempts = {n}
{extra}
"#
    )
}

#[test]
fn three_retrying_tiers_multiply_to_n_cubed_attempts_at_the_database() {
    for (n, db) in [(3u64, 27u64), (4, 64), (1, 1), (2, 8)] {
        let r = run(&chain(n as u32, ""), &[]);
        let logical = count(&r, "logical");
        assert_eq!(logical, 200);
        assert_eq!(count(&r, "failed"), logical, "n = {n}");
        // The whole-run columns describe the service the fleet calls.
        assert_eq!(count(&r, "attempts"), n * logical);
        assert_eq!(count(&r, "errors"), n * logical);
        assert_eq!(col(&r, "service_frontend_attempts_per_request"), n as f64);
        assert_eq!(
            col(&r, "service_backend_attempts_per_request"),
            (n * n) as f64
        );
        assert_eq!(col(&r, "service_db_attempts_per_request"), db as f64);
        let sv = r
            .metrics
            .services
            .as_ref()
            .expect("a graph tracks services");
        let inbound: Vec<u64> = sv.services.iter().map(|t| t.totals.inbound).collect();
        assert_eq!(inbound, [n * logical, n * n * logical, db * logical]);
    }
}

#[test]
fn overloaded_answers_are_retried_only_at_the_tier_above_the_one_that_failed() {
    // The backend answers "overloaded" when its calls to the db fail; the frontend
    // and the fleet leave overloaded out of retry_on, so only the backend retries.
    let text = chain(3, "")
        .replace(
            "name = \"backend\"\nservers",
            "name = \"backend\"\non_failure = \"overloaded\"\nservers",
        )
        .replace(
            "name = \"frontend\"\nservers",
            "name = \"frontend\"\non_failure = \"overloaded\"\nservers",
        );
    // The frontend's layer and the fleet's: retry_on without overloaded.
    let text = text.replacen(
        "[[services.calls.layers]]\nmax_attempts = 3\n",
        "[[services.calls.layers]]\nmax_attempts = 3\nretry_on = [\"error\", \"timeout\"]\n",
        1,
    );
    let text = text.replace(
        "[[fleets.layers]]\nmax_attempts = 3\n",
        "[[fleets.layers]]\nmax_attempts = 3\nretry_on = [\"error\", \"timeout\"]\n",
    );
    let r = run(&text, &[]);
    let logical = count(&r, "logical");
    assert_eq!(col(&r, "service_frontend_attempts_per_request"), 1.0);
    assert_eq!(col(&r, "service_backend_attempts_per_request"), 1.0);
    assert_eq!(col(&r, "service_db_attempts_per_request"), 3.0);
    // The frontend's answers were all overloaded: counted in the whole-run columns.
    assert_eq!(count(&r, "overloaded"), logical);
    assert_eq!(count(&r, "errors"), 0);
    // Retried again at the fleet, the same graph sends 3 times as much.
    let again = run(
        &text.replace(
            "retry_on = [\"error\", \"timeout\"]\n\n",
            "retry_on = [\"error\", \"timeout\", \"overloaded\"]\n\n",
        ),
        &[],
    );
    assert_eq!(col(&again, "service_frontend_attempts_per_request"), 3.0);
    assert_eq!(col(&again, "service_db_attempts_per_request"), 9.0);
}

/// A frontend of `c` threads and no queue in front of a backend whose service time is
/// `s_ms`; Poisson arrivals at `rate`.
fn threads(c: u32, hold: bool, rate: f64) -> String {
    format!(
        r#"
duration = "40s"
[[services]]
name = "frontend"
servers = {c}
queue_limit = 0
hold_threads = {hold}
service_time = "1us"
[[services.calls]]
to = "backend"
[[services]]
name = "backend"
servers = "unlimited"
service_time = "100ms"
[[fleets]]
name = "users"
arrival = {{ kind = "poisson", rate = {rate} }}
"#
    )
}

/// Erlang's loss formula B(c, a), by its stable recursion.
fn erlang_b(c: u32, a: f64) -> f64 {
    (1..=c).fold(1.0, |b, k| a * b / (f64::from(k) + a * b))
}

#[test]
fn held_threads_cap_a_tier_at_c_over_s_and_async_ones_do_not() {
    // c = 10 threads held for the backend's 100 ms: at most c/S = 100 requests/s.
    // Offered 300/s, the frontend is an Erlang loss system with a = 30 erlangs
    // (insensitive to the service distribution): blocking B(10, 30) = 0.6687.
    let r = run(&threads(10, true, 300.0), &[]);
    let logical = col(&r, "logical");
    let served = col(&r, "succeeded");
    // The hard bound: c/S per second over 40 s, plus the c in service at the end.
    assert!(served <= 100.0 * 40.0 + 10.0, "served {served}");
    let b = erlang_b(10, 30.0);
    let blocked = col(&r, "service_frontend_rejected") / logical;
    // 12,000 arrivals: the blocking fraction's sd is about 0.005; 0.02 is 4 sd.
    assert!((blocked - b).abs() < 0.02, "blocking {blocked} vs B = {b}");
    assert!(col(&r, "service_frontend_utilisation_peak") > 0.9);
    // Asynchronous: the thread is busy for the frontend's own 1 µs only.
    let r = run(&threads(10, false, 300.0), &[]);
    assert_eq!(col(&r, "service_frontend_rejected"), 0.0);
    assert_eq!(col(&r, "succeeded"), col(&r, "logical"));
    assert!(col(&r, "service_frontend_utilisation_peak") < 0.01);
}

/// A frontend that fans out to two callees failing with p1 and p2, joined by `join`.
fn fan_out(join: &str, p: [f64; 3], to: &str) -> String {
    format!(
        r#"
duration = "100s"
[[services]]
name = "frontend"
servers = "unlimited"
service_time = "1ms"
[[services.calls]]
to = {to}
join = {join}
[[services]]
name = "a"
servers = "unlimited"
service_time = "1ms"
error_rate = {}
[[services]]
name = "b"
servers = "unlimited"
service_time = "2ms"
error_rate = {}
[[services]]
name = "c"
servers = "unlimited"
service_time = "3ms"
error_rate = {}
[[fleets]]
name = "users"
target = "frontend"
arrival = {{ kind = "poisson", rate = 200 }}
"#,
        p[0], p[1], p[2]
    )
}

#[test]
fn a_fan_out_succeeds_as_its_join_says() {
    let (p1, p2, p3) = (0.2, 0.3, 0.4);
    let ab = r#"["a", "b"]"#;
    let abc = r#"["a", "b", "c"]"#;
    let two_of_three = (1.0 - p1) * (1.0 - p2) * (1.0 - p3)
        + p1 * (1.0 - p2) * (1.0 - p3)
        + (1.0 - p1) * p2 * (1.0 - p3)
        + (1.0 - p1) * (1.0 - p2) * p3;
    for (join, to, want) in [
        ("\"all\"", ab, (1.0 - p1) * (1.0 - p2)),
        ("\"any\"", ab, 1.0 - p1 * p2),
        ("{ quorum = 2 }", abc, two_of_three),
        ("{ quorum = 1 }", abc, 1.0 - p1 * p2 * p3),
    ] {
        let r = run(&fan_out(join, [p1, p2, p3], to), &[]);
        let n = col(&r, "logical");
        let got = col(&r, "success_fraction");
        // About 20,000 requests: the sd of a fraction is at most 0.0035; 0.015 is > 4 sd.
        assert!(n > 19_000.0);
        assert!(
            (got - want).abs() < 0.015,
            "join {join} over {to}: {got} vs {want}"
        );
    }
}

#[test]
fn a_fan_out_cancels_the_rest_once_decided_unless_told_not_to() {
    // `any` over a fast callee that always succeeds and a slow one: the slow callee's
    // request is cancelled in its queue, or served when left running.
    let text = |cancel: bool| {
        format!(
            r#"
duration = "20s"
drain = "200s"
[[services]]
name = "frontend"
servers = "unlimited"
service_time = "1ms"
[[services.calls]]
to = ["fast", "slow"]
join = "any"
cancel_rest = {cancel}
[[services]]
name = "fast"
servers = "unlimited"
service_time = "1ms"
[[services]]
name = "slow"
servers = 1
service_time = "50ms"
[[fleets]]
name = "users"
target = "frontend"
arrival = {{ kind = "constant", rate = 100 }}
"#
        )
    };
    let cancel = run(&text(true), &[]);
    let keep = run(&text(false), &[]);
    for r in [&cancel, &keep] {
        assert_eq!(col(r, "success_fraction"), 1.0);
    }
    let served = |r: &crate::run::RunResult| {
        r.metrics.services.as_ref().unwrap().services[2]
            .totals
            .served
    };
    // One server of 50 ms serves at most 20/s of the 100/s: cancelled, the queue
    // empties and almost nothing is served; left running, the drain serves all 2000.
    assert_eq!(served(&keep), 2000);
    assert!(served(&cancel) < 450, "served {}", served(&cancel));
}

/// A burst at 1 s through three tiers whose work would go on long after the fleet's
/// 300 ms deadline: `propagate` passes the deadline down every call.
fn deadline(propagate: bool) -> String {
    format!(
        r#"
duration = "5s"
bucket = "100ms"
[[services]]
name = "frontend"
servers = "unlimited"
service_time = "1ms"
[[services.calls]]
to = "backend"
propagate_deadline = {propagate}
[[services.calls.layers]]
max_attempts = 5
attempt_timeout = "100ms"
backoff = {{ kind = "fixed", delay = "50ms" }}
[[services]]
name = "backend"
servers = "unlimited"
service_time = "1ms"
[[services.calls]]
to = "db"
propagate_deadline = {propagate}
[[services.calls.layers]]
max_attempts = 5
attempt_timeout = "40ms"
[[services]]
name = "db"
servers = 4
service_time = "60ms"
[[fleets]]
name = "users"
deadline = "300ms"
propagate_deadline = {propagate}
arrival = {{ kind = "burst", at = "1s", count = 50 }}
[[fleets.layers]]
max_attempts = 3
"#
    )
}

#[test]
fn a_propagated_deadline_means_no_attempt_starts_anywhere_after_it() {
    let late = |r: &crate::run::RunResult| -> u64 {
        // Buckets of 100 ms: the deadline is 1.3 s, the start of bucket 13.
        let sv = r.metrics.services.as_ref().unwrap();
        sv.services
            .iter()
            .map(|t| t.rows[13..].iter().map(|b| b.inbound).sum::<u64>())
            .sum()
    };
    let on = run(&deadline(true), &[]);
    let off = run(&deadline(false), &[]);
    assert_eq!(late(&on), 0, "attempts after the deadline");
    assert!(late(&off) > 100, "the control runs on: {}", late(&off));
    // The db's queue holds work whose deadline passes: dropped, counted as shed.
    assert!(col(&on, "service_db_shed") > 0.0);
    assert_eq!(col(&off, "service_db_shed"), 0.0);
    assert_eq!(count(&on, "deadline_exceeded"), 50);
}

#[test]
fn cancel_on_timeout_frees_the_threads_held_below() {
    // The fleet gives up after 100 ms on a backend that takes 1 s; with
    // cancel_on_timeout the frontend's thread is freed then, not a second later.
    let text = |cancel: bool| {
        format!(
            r#"
duration = "20s"
[[services]]
name = "frontend"
servers = 1000
service_time = "1us"
[[services.calls]]
to = "backend"
[[services]]
name = "backend"
servers = "unlimited"
service_time = "1s"
[[fleets]]
name = "users"
arrival = {{ kind = "constant", rate = 50 }}
[[fleets.layers]]
max_attempts = 1
attempt_timeout = "100ms"
cancel_on_timeout = {cancel}
"#
        )
    };
    let busy = |cancel: bool| {
        let r = run(&text(cancel), &[]);
        col(&r, "service_frontend_utilisation_peak") * 1000.0
    };
    // Little's law: 50/s × 1 s = 50 threads, or 50/s × 0.1 s = 5.
    let (kept, freed) = (busy(false), busy(true));
    assert!((kept - 50.0).abs() < 1.5, "{kept}");
    assert!((freed - 5.0).abs() < 0.5, "{freed}");
}

#[test]
fn outages_hit_only_their_target() {
    let text = chain(1, "")
        .replace("error_rate = 1.0\n", "")
        .replace(
            "[[fleets]]",
            "[[outages]]\ntarget = \"backend\"\nstart = \"2s\"\nend = \"4s\"\nmode = { kind = \"fail\" }\n[[fleets]]",
        );
    let r = run(&text, &[]);
    // 2 s of 10 s fail at the backend: 40 of 200, and the db sees the other 160.
    assert_eq!(count(&r, "failed"), 40);
    assert_eq!(
        r.metrics.services.as_ref().unwrap().services[2]
            .totals
            .inbound,
        160
    );
}
