//! The optimistic-concurrency dependency and the classic jitter study.

use crate::tests::common;

use common::{col, count, run, run_rep};

fn occ(clients: u64, hop: &str, backoff: &str) -> String {
    format!(
        r#"
duration = "1s"
drain = "600s"
[dependency]
kind = "occ"
[[fleets]]
name = "w"
arrival = {{ kind = "burst", at = "0s", count = {clients} }}
[[fleets.layers]]
max_attempts = "unlimited"
hop_latency = {hop}
backoff = {backoff}
"#
    )
}

const STUDY_HOP: &str = r#"{ kind = "normal", mean = "10ms", sd = "2ms" }"#;
const POLICIES: [&str; 5] = [
    r#"{ kind = "none" }"#,
    r#"{ kind = "exponential", base = "10ms", cap = "2s" }"#,
    r#"{ kind = "exponential", base = "10ms", cap = "2s", jitter = "full" }"#,
    r#"{ kind = "exponential", base = "10ms", cap = "2s", jitter = "equal" }"#,
    r#"{ kind = "exponential", base = "5ms", cap = "2s", jitter = "decorrelated" }"#,
];

#[test]
fn one_client_makes_one_write_call_in_four_network_legs() {
    let r = run(&occ(1, "\"10ms\"", POLICIES[2]), &[]);
    assert_eq!(count(&r, "write_calls"), 1);
    assert_eq!(count(&r, "conflicts"), 0);
    assert_eq!(col(&r, "latency_mean_ms"), 40.0);
    assert_eq!(col(&r, "completion_time_s"), 0.04);
}

#[test]
fn two_clients_that_start_together_make_exactly_three_write_calls_under_every_policy() {
    for policy in POLICIES {
        let r = run(&occ(2, "\"10ms\"", policy), &[]);
        assert_eq!(count(&r, "write_calls"), 3, "{policy}");
        assert_eq!(count(&r, "conflicts"), 1, "{policy}");
        assert_eq!(count(&r, "succeeded"), 2, "{policy}");
        // With the study's random latency too, over 20 seeds.
        for rep in 0..20 {
            let r = run_rep(&occ(2, STUDY_HOP, policy), &[], rep);
            assert_eq!(count(&r, "write_calls"), 3, "{policy}, replication {rep}");
        }
    }
}

fn mean_work(clients: u64, policy: &str) -> f64 {
    let reps = 8;
    (0..reps)
        .map(|rep| {
            col(
                &run_rep(&occ(clients, STUDY_HOP, policy), &[], rep),
                "write_calls",
            )
        })
        .sum::<f64>()
        / reps as f64
}

/// Work against clients on a log-log scale between 30 and 150 clients: about
/// quadratic (slope ≥ 1.6) with no backoff; full jitter grows much more slowly.
#[test]
fn work_grows_quadratically_without_backoff_and_far_slower_with_full_jitter() {
    let slope = |policy: &str| {
        let (a, b) = (mean_work(30, policy), mean_work(150, policy));
        ((b / a).ln() / 5f64.ln(), b)
    };
    let (none, none_work) = slope(POLICIES[0]);
    let (full, full_work) = slope(POLICIES[2]);
    assert!(none >= 1.6, "no backoff: slope {none}");
    assert!(full <= 1.4, "full jitter: slope {full}");
    assert!(
        full_work < 0.4 * none_work,
        "full {full_work} vs none {none_work}"
    );
}

#[test]
fn every_client_stops_after_its_success() {
    let r = run(&occ(50, STUDY_HOP, POLICIES[2]), &[]);
    assert_eq!(count(&r, "succeeded"), 50);
    assert_eq!(count(&r, "write_calls"), 50 + count(&r, "conflicts"));
    assert_eq!(count(&r, "in_flight"), 0);
}

#[test]
fn queue_settings_and_outages_are_refused_for_an_occ_record() {
    let bad =
        occ(2, "\"10ms\"", POLICIES[0]).replace("kind = \"occ\"", "kind = \"occ\"\nservers = 3");
    let src = crate::scenario::Source {
        path: "o.toml".into(),
        stem: "o".into(),
        text: bad,
    };
    let e = crate::scenario::load(src, &[]).unwrap_err().to_string();
    assert!(e.contains("dependency.servers") && e.contains("occ"), "{e}");
    let bad = format!(
        "{}[[outages]]\nstart = \"0s\"\nend = \"1s\"\nmode = {{ kind = \"blackhole\" }}\n",
        occ(2, "\"10ms\"", POLICIES[0])
    );
    let src = crate::scenario::Source {
        path: "o.toml".into(),
        stem: "o".into(),
        text: bad,
    };
    let e = crate::scenario::load(src, &[]).unwrap_err().to_string();
    assert!(e.contains("outages"), "{e}");
}
