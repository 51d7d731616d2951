//! Exact and expected attempt counts of nested retry layers.

use crate::common;

use common::{col, count, run};

fn dead_dependency(n: u32, layers: u32) -> String {
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
    for i in 0..layers {
        s.push_str(&format!(
            "[[fleets.layers]]\nname = \"l{i}\"\nmax_attempts = {n}\n"
        ));
    }
    s
}

#[test]
fn an_always_failing_dependency_sees_exactly_n_to_the_l_attempts() {
    for (n, l) in [(3, 3), (4, 3), (2, 5), (5, 1), (1, 4), (3, 5), (2, 1)] {
        let r = run(&dead_dependency(n, l), &[]);
        let logical = count(&r, "logical");
        assert_eq!(logical, 200);
        let per = u64::from(n).pow(l);
        assert_eq!(count(&r, "attempts"), logical * per, "N={n} L={l}");
        assert_eq!(count(&r, "errors"), logical * per);
        assert_eq!(count(&r, "succeeded"), 0);
        assert_eq!(count(&r, "failed"), logical);
        for i in 0..l {
            assert_eq!(
                col(&r, &format!("attempts_layer_{i}")),
                f64::from(n).powi(i as i32 + 1),
                "layer {i} of N={n} L={l}"
            );
        }
    }
}

#[test]
fn three_layers_of_three_give_27_and_of_four_give_64() {
    assert_eq!(
        col(&run(&dead_dependency(3, 3), &[]), "amplification"),
        27.0
    );
    assert_eq!(
        col(&run(&dead_dependency(4, 3), &[]), "amplification"),
        64.0
    );
}

/// Independent failures with probability p and one layer of N attempts: attempts per
/// request (1 − p^N)/(1 − p), success 1 − p^N. 200k requests per case: the standard
/// error of the mean attempts is below 0.3%; tolerance 1.5%.
#[test]
fn independent_failures_give_the_geometric_attempt_count() {
    for (p, n) in [(0.1, 3), (0.5, 3), (0.5, 5), (0.9, 4), (0.3, 1)] {
        let text = format!(
            r#"
duration = "200s"
[dependency]
servers = "unlimited"
service_time = {{ kind = "deterministic", value = "1ms" }}
error_rate = {p}
[[fleets]]
name = "f"
arrival = {{ kind = "poisson", rate = 1000 }}
[[fleets.layers]]
max_attempts = {n}
"#
        );
        let r = run(&text, &[]);
        let pn = f64::powi(p, n);
        let attempts = (1.0 - pn) / (1.0 - p);
        let a = col(&r, "amplification");
        let s = col(&r, "success_fraction");
        assert!(
            (a / attempts - 1.0).abs() < 0.015,
            "p={p} N={n}: attempts {a} vs {attempts}"
        );
        assert!(
            (s - (1.0 - pn)).abs() < 0.01,
            "p={p} N={n}: success {s} vs {}",
            1.0 - pn
        );
    }
}

#[test]
fn an_outage_of_mode_fail_fails_every_attempt_that_starts_service() {
    let text = r#"
duration = "10s"
[dependency]
servers = "unlimited"
service_time = { kind = "deterministic", value = "1ms" }
[[fleets]]
name = "f"
arrival = { kind = "constant", rate = 100 }
[[fleets.layers]]
max_attempts = 2
[[outages]]
start = "2s"
end = "4s"
mode = { kind = "fail", after = "1ms" }
"#;
    let r = run(text, &[]);
    // 200 requests arrive in the outage and fail twice each; one arrival at 4s - 10ms
    // retries at 3.991 s (still inside). 1000 requests in all.
    assert_eq!(count(&r, "logical"), 1000);
    assert_eq!(count(&r, "failed"), 200);
    assert_eq!(count(&r, "errors"), 400);
    assert_eq!(count(&r, "attempts"), 1200);
}
