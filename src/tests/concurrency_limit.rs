//! Concurrency limits on a tier (issue 42): a fixed limit against Erlang's loss
//! formula, AIMD backing off under drops and growing back, Envoy's timer events, the
//! columns (only with a limit), determinism and bad input.

use std::process::Command;

use crate::model::outcome::Class;

use crate::tests::common::{col, count, ok, run, run_rep};

/// One fleet of `rate`/s poisson requests (one attempt each unless `layer` says more)
/// against a dependency of exponential 10 ms service, with `dep` appended.
fn scenario(dep: &str, rate: u32, duration: &str, layer: &str) -> String {
    format!(
        r#"
duration = "{duration}"
drain = "5s"
bucket = "1s"
[dependency]
servers = 1000
service_time = {{ kind = "exponential", mean = "10ms" }}
{dep}
[[fleets]]
name = "web"
arrival = {{ kind = "poisson", rate = {rate}, clients = 1000 }}
[[fleets.layers]]
name = "client"
{layer}
"#
    )
}

/// Erlang's loss formula B(k, a) by its recurrence.
fn erlang_b(k: u32, a: f64) -> f64 {
    (1..=k).fold(1.0, |b, j| a * b / (f64::from(j) + a * b))
}

#[test]
fn a_fixed_limit_without_a_queue_blocks_poisson_arrivals_as_erlang_b_says() {
    // k = 5 in flight, a = 400/s · 10 ms = 4 Erlang: B(5, 4) ≈ 0.199. The servers
    // never run out, so nothing waits and in flight is exactly in service: M/M/5/5.
    let k = 5;
    let b = erlang_b(k, 4.0);
    assert!((b - 0.19907).abs() < 1e-4, "{b}");
    let text = scenario(
        &format!("concurrency_limit = {{ kind = \"fixed\", limit = {k}, status = 503 }}"),
        400,
        "100s",
        "max_attempts = 1",
    );
    let mut fractions = vec![];
    for rep in 0..3 {
        let r = run_rep(&text, &[], rep);
        let refused = count(&r, "limit_rejected");
        assert_eq!(
            refused,
            r.metrics.totals.outcomes[Class::RateLimited as usize]
        );
        fractions.push(refused as f64 / r.metrics.totals.logical as f64);
        assert_eq!(col(&r, "concurrency_limit_mean"), 5.0);
        assert_eq!(
            (
                col(&r, "concurrency_limit_min"),
                col(&r, "concurrency_limit_max")
            ),
            (5.0, 5.0)
        );
    }
    let (m, se) = crate::tests::common::mean_se(&fractions);
    assert!(
        (m - b).abs() < 4.0 * se + 0.005,
        "blocking {m} ± {se} vs B(5, 4) = {b}"
    );
}

#[test]
fn a_refusal_is_a_rate_limited_rejection_with_the_limit_status_that_clients_retry() {
    // 503: retried by `rejected_5xx`; 429: not.
    for (status, retried) in [(503, true), (429, false)] {
        let text = scenario(
            &format!("concurrency_limit = {{ kind = \"fixed\", limit = 2, status = {status} }}"),
            400,
            "10s",
            "max_attempts = 2\nretry_on = [\"rejected_5xx\"]\nbackoff = { kind = \"none\" }",
        );
        let r = run(&text, &[]);
        let retries = r.metrics.totals.attempts - r.metrics.totals.logical;
        assert!(count(&r, "limit_rejected") > 500, "{status}");
        assert_eq!(retries > 0, retried, "{status}: {retries} retries");
    }
}

#[test]
fn a_client_layers_fixed_limit_blocks_poisson_attempts_as_erlang_b_says() {
    // Netflix's client-side limiter on the layer, one instance: k = 5 attempts in
    // flight, a = 400/s · 10 ms = 4 Erlang, the servers never run out: B(5, 4).
    let b = erlang_b(5, 4.0);
    let text = scenario(
        "",
        400,
        "100s",
        "max_attempts = 1\ninstances = 1\nconcurrency_limit = { kind = \"fixed\", limit = 5 }",
    );
    let mut fractions = vec![];
    for rep in 0..3 {
        let r = run_rep(&text, &[], rep);
        let refused = r.metrics.totals.outcomes[Class::RateLimited as usize];
        assert!(
            r.summary.get("limit_rejected").is_none(),
            "no tier has a limit: the client's refusals are rate_limited attempts"
        );
        fractions.push(refused as f64 / r.metrics.totals.logical as f64);
    }
    let (m, se) = crate::tests::common::mean_se(&fractions);
    assert!(
        (m - b).abs() < 4.0 * se + 0.005,
        "blocking {m} ± {se} vs B(5, 4) = {b}"
    );
}

#[test]
fn a_client_limits_unavailable_is_retried_by_rejected_5xx_and_each_instance_has_its_own() {
    // The gRPC interceptor's UNAVAILABLE is not a 429, so `rejected_5xx` retries it;
    // 429 (the default) is not retried.
    for (status, retried) in [(", status = \"unavailable\"", true), ("", false)] {
        let text = scenario(
            "",
            400,
            "10s",
            &format!(
                "max_attempts = 2\ninstances = 1\nretry_on = [\"rejected_5xx\"]\nbackoff = {{ kind = \"none\" }}\nconcurrency_limit = {{ kind = \"fixed\", limit = 2{status} }}"
            ),
        );
        let r = run(&text, &[]);
        let refused = r.metrics.totals.outcomes[Class::RateLimited as usize];
        // Refused attempts are never sent: `attempts` counts those sent.
        let retries = r.metrics.totals.attempts + refused - r.metrics.totals.logical;
        assert!(refused > 500, "{status}: {refused}");
        assert_eq!(retries > 0, retried, "{status}: {retries} retries");
    }
    // Ten instances of a limit of 2: 20 in flight in all, few refusals at 4 Erlang.
    let one = scenario(
        "",
        400,
        "20s",
        "max_attempts = 1\ninstances = 1\nconcurrency_limit = { kind = \"fixed\", limit = 2 }",
    );
    let ten = one.replace("instances = 1", "instances = 10");
    let refused = |t: &str| run(t, &[]).metrics.totals.outcomes[Class::RateLimited as usize];
    let (r1, r10) = (refused(&one), refused(&ten));
    assert!(r10 * 5 < r1, "{r10} with ten instances vs {r1} with one");
}

#[test]
fn a_client_limit_is_refused_as_envoys_kind_or_beside_hedging() {
    let d = tempfile::tempdir().unwrap();
    for (name, layer, want) in [
        (
            "envoy",
            "max_attempts = 1\nconcurrency_limit = { kind = \"envoy_gradient\" }",
            "fleets[0].layers[0].concurrency_limit.kind: unknown variant `envoy_gradient`, expected one of `fixed`, `aimd`, `vegas`, `gradient2`",
        ),
        (
            "hedge",
            "max_attempts = 1\nconcurrency_limit = { kind = \"aimd\" }\nhedging = { max_attempts = 2, delay = \"5ms\" }",
            "fleets[0].layers[0].concurrency_limit: a hedging layer cannot also have a concurrency limit",
        ),
    ] {
        let f = format!("{name}.toml");
        std::fs::write(d.path().join(&f), scenario("", 100, "1s", layer)).unwrap();
        let o = crate::tests::common::retrysim(d.path(), &["run", &f, "-q", "--no-plots"]);
        assert_eq!(o.status.code(), Some(2), "{name}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(want), "{name}: {err}");
    }
}

#[test]
fn explain_describes_a_client_layers_limit() {
    let d = tempfile::tempdir().unwrap();
    let text = scenario(
        "",
        100,
        "1s",
        "max_attempts = 1\ninstances = 1\nconcurrency_limit = { kind = \"gradient2\" }",
    );
    std::fs::write(d.path().join("c.toml"), text).unwrap();
    let o = crate::tests::common::retrysim(d.path(), &["explain", "c.toml"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("concurrency_limit (1 instance): client-side concurrency limit per instance, around each attempt (Netflix ConcurrencyLimitClientInterceptor"),
        "{out}"
    );
    assert!(out.contains("refused callers are answered 429"), "{out}");
}

#[test]
fn aimd_backs_off_while_answers_come_too_late_and_grows_back_after() {
    // 1000/s of 10 ms work: about 10 in flight. From 10 s to 20 s the service is 10
    // times slower, the client gives up after 30 ms, and the answers it no longer
    // waits for are AIMD's drops.
    let mut text = scenario(
        "concurrency_limit = { kind = \"aimd\", initial_limit = 40, min_limit = 2, max_limit = 200 }",
        1000,
        "40s",
        "max_attempts = 1\nattempt_timeout = \"30ms\"",
    );
    text.push_str(
        "[[outages]]\nstart = \"10s\"\nend = \"20s\"\nmode = { kind = \"slow\", factor = 10 }\n",
    );
    let r = run(&text, &[]);
    let c = r.metrics.limits.as_ref().expect("limit series");
    let mean = |i: usize| c.bucket_mean(0, i).unwrap();
    let before = mean(9);
    let during = (11..20).map(mean).fold(f64::MAX, f64::min);
    let after = mean(39);
    assert!(before >= 15.0, "grown to about twice in flight: {before}");
    assert!(during <= 5.0, "backed off: {during}");
    assert!(after >= 15.0, "grown back: {after}");
    assert_eq!(
        col(&r, "concurrency_limit_min"),
        f64::from(c.tiers[0].as_ref().unwrap().min)
    );
    assert!(col(&r, "concurrency_limit_min") <= during);
    assert!(count(&r, "limit_rejected") > 0);
}

#[test]
fn envoys_gradient_controller_updates_its_limit_on_its_timer_events() {
    // Its limit is pinned at min_concurrency (3) until the first minRTT window has its
    // 50 samples; then each 100 ms update moves it from the samples. Without the
    // timer events the limit would stay 3 all run.
    let text = scenario(
        "concurrency_limit = { kind = \"envoy_gradient\", update_interval = \"100ms\", min_rtt_interval = \"5s\" }",
        1000,
        "20s",
        "max_attempts = 1",
    );
    let r = run(&text, &[]);
    let c = r.metrics.limits.as_ref().expect("limit series");
    let t = c.tiers[0].as_ref().unwrap();
    assert_eq!(t.min, 3, "pinned during the minRTT windows");
    assert!(t.max >= 10, "grown by its updates: {}", t.max);
    let means: Vec<f64> = (0..20).map(|i| c.bucket_mean(0, i).unwrap()).collect();
    assert!(means.windows(2).any(|w| w[0] != w[1]), "{means:?}");
    assert!(col(&r, "concurrency_limit_mean") > 3.0);
}

#[test]
fn the_limit_columns_appear_only_with_a_limit_and_the_same_seed_gives_the_same_bytes() {
    let d = tempfile::tempdir().unwrap();
    let with = scenario(
        "concurrency_limit = { kind = \"vegas\", status = \"unavailable\" }",
        500,
        "5s",
        "max_attempts = 3",
    );
    let without = scenario("", 500, "5s", "max_attempts = 3");
    std::fs::write(d.path().join("with.toml"), &with).unwrap();
    std::fs::write(d.path().join("without.toml"), &without).unwrap();
    let read =
        |dir: &str, file: &str| std::fs::read_to_string(d.path().join(dir).join(file)).unwrap();
    ok(d.path(), &["run", "with.toml", "--no-plots", "--out", "a"]);
    ok(d.path(), &["run", "with.toml", "--no-plots", "--out", "b"]);
    ok(
        d.path(),
        &["run", "without.toml", "--no-plots", "--out", "c"],
    );
    for f in ["summary.csv", "timeseries.csv"] {
        assert_eq!(read("a", f), read("b", f), "{f}");
    }
    let header = |dir: &str, f: &str| read(dir, f).lines().next().unwrap().to_string();
    for c in [
        "concurrency_limit_mean",
        "concurrency_limit_min",
        "concurrency_limit_max",
        "limit_rejected",
    ] {
        assert!(header("a", "summary.csv").split(',').any(|h| h == c), "{c}");
        assert!(!header("c", "summary.csv").contains(c), "{c}");
    }
    for c in ["concurrency_limit", "limit_rejected"] {
        assert!(
            header("a", "timeseries.csv").split(',').any(|h| h == c),
            "{c}"
        );
        assert!(
            !header("c", "timeseries.csv").split(',').any(|h| h == c),
            "{c}"
        );
    }
}

/// A graph whose `back` tier has a fixed limit of 2 and `front` none.
const GRAPH: &str = r#"
duration = "10s"
[[services]]
name = "front"
servers = 100
service_time = "1ms"
[[services.calls]]
to = ["back"]
[[services.calls.layers]]
max_attempts = 1
[[services]]
name = "back"
servers = 100
service_time = { kind = "exponential", mean = "10ms" }
concurrency_limit = { kind = "fixed", limit = 2 }
[[fleets]]
name = "web"
target = "front"
arrival = { kind = "poisson", rate = 400 }
"#;

#[test]
fn a_graph_tier_with_a_limit_has_its_own_summary_columns() {
    let r = run(GRAPH, &[]);
    let refused = count(&r, "concurrency_limit_back_rejected");
    assert!(refused > 1000, "{refused}");
    assert_eq!(refused, count(&r, "limit_rejected"));
    assert_eq!(col(&r, "concurrency_limit_back_max"), 2.0);
    assert!(r.summary.get("concurrency_limit_front_mean").is_none());
    assert!(
        r.summary
            .get("concurrency_limit_mean")
            .is_some_and(|c| c.as_f64().is_none()),
        "the tier the fleet calls has no limit: empty"
    );
}

#[test]
fn services_csv_gives_each_limited_tier_its_limit_and_refusals_per_bucket() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("g.toml"), GRAPH).unwrap();
    ok(
        d.path(),
        &["run", "g.toml", "--no-plots", "-q", "--out", "out"],
    );
    let text = std::fs::read_to_string(d.path().join("out/services.csv")).unwrap();
    let mut rows = csv::Reader::from_reader(text.as_bytes());
    let head: Vec<String> = rows.headers().unwrap().iter().map(String::from).collect();
    let at = |n: &str| head.iter().position(|h| h == n).unwrap();
    assert_eq!(
        &head[head.len() - 2..],
        ["concurrency_limit", "limit_rejected"],
        "appended after the fixed columns"
    );
    let (service, limit, refused) = (at("service"), at("concurrency_limit"), at("limit_rejected"));
    let mut total = 0;
    let mut back = 0;
    for r in rows.records() {
        let r = r.unwrap();
        if &r[service] == "back" {
            assert_eq!(&r[limit], "2");
            total += r[refused].parse::<u64>().unwrap();
            back += 1;
        } else {
            assert_eq!((&r[limit], &r[refused]), ("", ""), "front has no limit");
        }
    }
    assert_eq!(back, 10, "one row per bucket");
    let summary = std::fs::read_to_string(d.path().join("out/summary.csv")).unwrap();
    let mut s = csv::Reader::from_reader(summary.as_bytes());
    let h = s.headers().unwrap().clone();
    let row = s.records().next().unwrap().unwrap();
    let whole: u64 = row[h
        .iter()
        .position(|c| c == "concurrency_limit_back_rejected")
        .unwrap()]
    .parse()
    .unwrap();
    assert!(
        total > 1000 && total <= whole,
        "{total} of {whole} (the drain's are after)"
    );
    let dict = std::fs::read_to_string(d.path().join("out/columns.csv")).unwrap();
    assert!(
        dict.contains("services.csv,concurrency_limit,"),
        "listed in the dictionary"
    );
}

#[test]
fn services_csv_keeps_its_fixed_columns_without_a_limit() {
    let d = tempfile::tempdir().unwrap();
    let plain = GRAPH.replace("concurrency_limit = { kind = \"fixed\", limit = 2 }", "");
    std::fs::write(d.path().join("g.toml"), plain).unwrap();
    ok(
        d.path(),
        &["run", "g.toml", "--no-plots", "-q", "--out", "out"],
    );
    let text = std::fs::read_to_string(d.path().join("out/services.csv")).unwrap();
    let head = text.lines().next().unwrap();
    assert_eq!(head, crate::metrics::columns::SERVICES_COLUMNS.join(","));
}

#[test]
fn a_sweep_writes_each_cells_limit_in_services_csv() {
    let d = tempfile::tempdir().unwrap();
    let swept = format!("{GRAPH}\n[sweep]\n\"services.1.concurrency_limit.limit\" = [2, 50]\n");
    std::fs::write(d.path().join("g.toml"), swept).unwrap();
    ok(
        d.path(),
        &["sweep", "g.toml", "--no-plots", "-q", "--out", "out"],
    );
    let text = std::fs::read_to_string(d.path().join("out/services.csv")).unwrap();
    let mut rows = csv::Reader::from_reader(text.as_bytes());
    let head = rows.headers().unwrap().clone();
    let (run, service, limit) = (
        head.iter().position(|h| h == "run").unwrap(),
        head.iter().position(|h| h == "service").unwrap(),
        head.iter().position(|h| h == "concurrency_limit").unwrap(),
    );
    let mut seen = std::collections::BTreeSet::new();
    for r in rows.records() {
        let r = r.unwrap();
        if &r[service] == "back" {
            seen.insert((r[run].to_string(), r[limit].to_string()));
        }
    }
    assert_eq!(
        seen.into_iter()
            .map(|(_, l)| l)
            .collect::<std::collections::BTreeSet<_>>(),
        ["2".to_string(), "50".to_string()].into()
    );
}

#[test]
fn bad_limits_name_the_field_and_what_is_allowed() {
    let d = tempfile::tempdir().unwrap();
    for (name, dep, want) in [
        ("kind", "concurrency_limit = { kind = \"bbr\" }", "dependency.concurrency_limit.kind: unknown variant `bbr`, expected one of `fixed`, `aimd`, `vegas`, `gradient2`, `envoy_gradient`"),
        ("status", "concurrency_limit = { kind = \"fixed\", limit = 3, status = 500 }", "dependency.concurrency_limit.status: must be 429, 503 or \"unavailable\" (found 500)"),
        ("limit", "concurrency_limit = { kind = \"fixed\" }", "dependency.concurrency_limit.limit: is required for kind = \"fixed\""),
        ("both", "concurrency_limit = { kind = \"fixed\", limit = 3, status = 503 }\nadmission = { kind = \"fixed_window\", limit = 10, window = \"1s\" }", "dependency.concurrency_limit.status: must be admission's status 429: both refusals are answered rate_limited (found 503)"),
    ] {
        let p = d.path().join(format!("{name}.toml"));
        std::fs::write(&p, scenario(dep, 10, "1s", "max_attempts = 1")).unwrap();
        let out = Command::new(crate::tests::common::bin())
            .arg("validate")
            .arg(&p)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name}: {err}");
        assert!(err.contains(&format!("{name}.toml")), "{err}");
        assert!(err.contains(want), "{name}: {want} in {err}");
    }
}
