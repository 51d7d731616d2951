//! Queue fleets (`arrival = { kind = "queue" }`): the exact counts of redelivery, the
//! dead-letter queue and duplicate deliveries, and consumers as an M/M/c queue.

use crate::tests::common::{count, mean_se, run, run_rep};

/// A queue fleet of `consumers` over a dependency; `{extra}` goes into the fleet.
fn queue(dependency: &str, publish: &str, consumers: u64, extra: &str) -> String {
    format!(
        r#"
duration = "20s"
[dependency]
{dependency}
[[fleets]]
name = "worker"
arrival = {{ kind = "queue", {publish} }}
consumers = {consumers}
{extra}
"#
    )
}

#[test]
fn an_always_failing_dependency_sees_handler_attempts_times_receives_per_message() {
    // 3 handler attempts × max_receive_count 5 = 15 attempts per message, every
    // message dead-lettered after its 5th receive. Poisson publishing, few consumers:
    // the messages queue, and the count stays exact.
    let text = queue(
        "servers = 4\nservice_time = { kind = \"exponential\", mean = \"5ms\" }\nerror_rate = 1.0",
        "rate = 20",
        3,
        "visibility_timeout = \"30s\"\nmax_receive_count = 5\n[[fleets.layers]]\nmax_attempts = 3",
    );
    let r = run(&text, &[]);
    let messages = count(&r, "messages");
    assert!(messages > 300, "{messages}");
    assert_eq!(count(&r, "attempts"), 15 * messages);
    assert_eq!(count(&r, "dlq"), messages);
    assert_eq!(count(&r, "deliveries"), 5 * messages);
    assert_eq!(count(&r, "redeliveries"), 4 * messages);
    assert_eq!(count(&r, "duplicate_deliveries"), 0);
    assert_eq!(count(&r, "messages_left"), 0);
    assert_eq!(count(&r, "succeeded"), 0);
    assert_eq!(count(&r, "logical"), 5 * messages);
    // Nothing was handled: no end-to-end latency.
    assert!(r
        .summary
        .get("end_to_end_latency_p99_ms")
        .unwrap()
        .as_f64()
        .is_none());
}

#[test]
fn a_handler_slower_than_its_visibility_timeout_delivers_each_message_twice() {
    // The handler takes 1.5 s against a 1 s visibility timeout: at 1 s the message is
    // visible again and another consumer receives it; at 1.5 s the first handler
    // succeeds and deletes it; the second succeeds at 2.5 s, after its own timeout
    // (2 s) found the message gone. Every message is delivered, and applied, twice.
    let text = queue(
        "servers = \"unlimited\"\nservice_time = \"1.5s\"",
        "rate = 10",
        100,
        "visibility_timeout = \"1s\"\nmax_receive_count = 5\nwrites = 1.0",
    );
    let r = run(&text, &[]);
    let messages = count(&r, "messages");
    assert!(messages > 150, "{messages}");
    assert_eq!(count(&r, "deliveries"), 2 * messages);
    assert_eq!(count(&r, "duplicate_deliveries"), messages);
    assert_eq!(count(&r, "redeliveries"), messages);
    assert_eq!(count(&r, "succeeded"), 2 * messages);
    assert_eq!(count(&r, "dlq"), 0);
    // Each message is one logical write, applied by both its handlers.
    assert_eq!(count(&r, "duplicates"), messages);
    assert_eq!(count(&r, "duplicate_applies"), messages);
    // Published to deleted: the first handler's 1.5 s.
    assert_eq!(
        r.summary.get("end_to_end_latency_p99_ms").unwrap().as_f64(),
        Some(1500.159)
    );
    // With the message id as the idempotency key, the second apply replays.
    let keyed = run(&text, &["fleets.0.idempotency_keys=true"]);
    assert_eq!(count(&keyed, "duplicate_deliveries"), messages);
    assert_eq!(count(&keyed, "duplicate_applies"), 0);
    assert_eq!(count(&keyed, "duplicates"), 0);
}

#[test]
fn poison_messages_fail_in_the_handler_until_the_dead_letter_queue() {
    // A healthy dependency, 30% poison, max_receive_count 4: each poison message is
    // received 4 times and never calls the dependency; the others once each.
    let text = queue(
        "servers = 8\nservice_time = { kind = \"exponential\", mean = \"10ms\" }",
        "rate = 50",
        8,
        "max_receive_count = 4\npoison = 0.3\n[[fleets.layers]]\nmax_attempts = 3",
    );
    let r = run(&text, &[]);
    let (messages, dlq) = (count(&r, "messages"), count(&r, "dlq"));
    // 1000 messages expected, 300 poison (sd 14.5).
    assert!((230..370).contains(&dlq), "{dlq} of {messages}");
    assert_eq!(count(&r, "deliveries"), messages - dlq + 4 * dlq);
    assert_eq!(count(&r, "attempts"), messages - dlq);
    assert_eq!(count(&r, "failed"), 4 * dlq);
    // Poison has its own random stream: the publish times do not move.
    let clean = run(&text, &["fleets.0.poison=0"]);
    assert_eq!(count(&clean, "messages"), messages);
    assert_eq!(count(&clean, "dlq"), 0);
}

#[test]
fn a_failed_message_waits_out_its_redelivery_delay_before_each_receive() {
    // One message at 0.5 s, always failing, redelivered 1 s after each failure:
    // received at 0.5, 1.5 and 2.5 s, then dead-lettered (max_receive_count 3).
    let text = queue(
        "servers = 1\nservice_time = \"1ms\"\nerror_rate = 1.0",
        "publish = \"burst\", at = \"500ms\", count = 1",
        1,
        "max_receive_count = 3\nredelivery_delay = \"1s\"",
    );
    let r = run(&text, &[]);
    assert_eq!(count(&r, "deliveries"), 3);
    assert_eq!(count(&r, "dlq"), 1);
    let q = r.metrics.queue.as_ref().unwrap();
    let redeliveries: Vec<u64> = q.rows.iter().take(4).map(|b| b.redeliveries).collect();
    assert_eq!(redeliveries, vec![0, 1, 1, 0]);
    let dlq: Vec<u64> = q.rows.iter().take(4).map(|b| b.dlq).collect();
    assert_eq!(dlq, vec![0, 0, 1, 0]);
}

#[test]
fn a_backlog_is_visible_in_the_depth_and_the_oldest_age() {
    // 100 messages at once, one consumer taking 100 ms each: the backlog drains at
    // 10 a second, and the oldest visible message ages one second per second.
    let text = queue(
        "servers = 1\nservice_time = \"100ms\"",
        "publish = \"burst\", at = \"0s\", count = 100",
        1,
        "",
    );
    let r = run(&text, &[]);
    let q = r.metrics.queue.as_ref().unwrap();
    let age: Vec<u64> = q
        .rows
        .iter()
        .take(11)
        .map(|b| b.oldest_age / 1_000_000)
        .collect();
    assert_eq!(
        age,
        vec![1000, 2000, 3000, 4000, 5000, 6000, 7000, 8000, 9000, 0, 0]
    );
    // 99 visible after the first receive, one fewer each 100 ms: 94.5 on average in
    // the first second.
    let depth = q.rows[0].depth_area as f64 / 1e9;
    assert!((depth - 94.5).abs() < 1e-6, "{depth}");
    assert_eq!(count(&r, "messages_left"), 0);
}

#[test]
fn consumers_without_failures_are_an_m_m_c_queue() {
    // λ = 32/s, c = 4 consumers, exponential handling of mean 100 ms (μ = 10): ρ = 0.8.
    // Erlang C gives the mean number waiting, Lq = C(c, a) ρ / (1 − ρ) ≈ 2.386. The
    // mean over the buckets of the queue_depth column, over 8 replications of 400 s
    // (12,800 messages each), is within 4 standard errors and 10% of it.
    let (lambda, mu, c) = (32.0, 10.0, 4usize);
    let a: f64 = lambda / mu;
    let rho = a / c as f64;
    let mut term = 1.0;
    let mut sum = 0.0;
    for k in 0..c {
        sum += term;
        term *= a / (k + 1) as f64;
    }
    let last = term / (1.0 - rho);
    let erlang_c = last / (sum + last);
    let lq = erlang_c * rho / (1.0 - rho);
    let text = r#"
duration = "400s"
bucket = "10s"
[dependency]
servers = "unlimited"
service_time = { kind = "exponential", mean = "100ms" }
[[fleets]]
name = "worker"
arrival = { kind = "queue", rate = 32 }
consumers = 4
visibility_timeout = "1h"
"#;
    let means: Vec<f64> = (0..8)
        .map(|rep| {
            let r = run_rep(text, &[], rep);
            let q = r.metrics.queue.as_ref().unwrap();
            let area: u128 = q.rows.iter().map(|b| b.depth_area).sum();
            area as f64 / r.metrics.duration as f64
        })
        .collect();
    let (m, se) = mean_se(&means);
    assert!(
        (m - lq).abs() < (4.0 * se).max(0.0) && (m - lq).abs() < 0.1 * lq,
        "mean queue depth {m:.3} ± {se:.3}, Erlang C {lq:.3}"
    );
}

#[test]
fn only_a_queue_scenario_has_the_queue_columns() {
    let plain = run(
        r#"
duration = "2s"
[dependency]
servers = 1
service_time = "1ms"
[[fleets]]
name = "web"
arrival = { kind = "constant", rate = 10 }
"#,
        &[],
    );
    for c in [
        "messages",
        "dlq",
        "redeliveries",
        "end_to_end_latency_p99_ms",
    ] {
        assert!(plain.summary.get(c).is_none(), "{c}");
    }
    assert!(plain.metrics.queue.is_none());
    let ts = crate::export::csv::timeseries_rows(&plain, Some(1));
    assert_eq!(
        ts.lines().next().unwrap().split(',').count(),
        crate::export::csv::TIMESERIES_COLUMNS.len()
    );
}

#[test]
fn a_message_that_fails_without_time_passing_is_redelivered_one_event_at_a_time() {
    // The shipped scenario with no dead-letter queue: a poison message fails, is
    // visible again at once (redelivery_delay 0s) and is received again, forever, at
    // the same instant. Each redelivery is an event, so `[limits]` stops the run
    // (under 1 GiB of address space, where one endless event would exhaust memory).
    let d = tempfile::tempdir().unwrap();
    let scenario =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/queue_consumer.toml");
    let scenario = scenario.to_str().unwrap();
    let out = crate::tests::common::capped(
        d.path(),
        1024,
        &[
            "run",
            scenario,
            "--no-plots",
            "-q",
            "--out",
            "o",
            "--set",
            "fleets.0.max_receive_count=\"unlimited\"",
            "--set",
            "limits.max_events=1000000",
        ],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("limits.max_events = 1000000 events handled"),
        "{err}"
    );
    let summary = std::fs::read_to_string(d.path().join("o/summary.csv")).unwrap();
    let mut lines = summary.lines();
    let (head, row) = (lines.next().unwrap(), lines.next().unwrap());
    let field = |name: &str| {
        let i = head.split(',').position(|c| c == name).unwrap();
        row.split(',').nth(i).unwrap().to_string()
    };
    assert_eq!(field("truncated"), "true");
    assert_eq!(field("events"), "1000000");
    assert_eq!(field("dlq"), "0");
    // The poison message's receives are most of the events.
    let deliveries: u64 = field("deliveries").parse().unwrap();
    assert!(deliveries > 100_000, "{deliveries}");
}

#[test]
fn a_redelivery_at_once_outside_the_receive_loop_changes_nothing() {
    // A handler failing after time passed (1 ms of service) is redelivered from its
    // own end, as before: exactly the same deliveries with redelivery_delay 0s.
    let text = queue(
        "servers = 1\nservice_time = \"1ms\"\nerror_rate = 1.0",
        "publish = \"burst\", at = \"500ms\", count = 3",
        1,
        "max_receive_count = 3\n[[fleets.layers]]\nmax_attempts = 1",
    );
    let r = run(&text, &[]);
    assert_eq!(count(&r, "deliveries"), 9);
    assert_eq!(count(&r, "dlq"), 3);
}
