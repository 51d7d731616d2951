//! Service times from measured data (issue 43): `histogram` (Prometheus classic
//! buckets) and `quantiles`, written inline. Sampling is checked in
//! `src/model/dist.rs`; here, what a scenario makes of them.

use std::process::Command;

/// A scenario whose dependency's service time is `dist`.
fn scenario(dist: &str) -> String {
    format!(
        "duration = \"2s\"\n[dependency]\nservers = 4\nservice_time = {dist}\n\
         [[fleets]]\nname = \"web\"\narrival = {{ kind = \"poisson\", rate = 100 }}\n\
         [[fleets.layers]]\nmax_attempts = 2\n"
    )
}

/// Runs `retrysim <args> <scenario>` on `text`; (exit code, stdout, stderr).
fn retrysim(name: &str, text: &str, args: &[&str]) -> (Option<i32>, String, String) {
    let d = tempfile::tempdir().unwrap();
    let path = d.path().join(format!("{name}.toml"));
    std::fs::write(&path, text).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_retrysim"))
        .args(args)
        .arg(&path)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn bad(name: &str, dist: &str, expect: &[&str]) {
    let (code, _, err) = retrysim(name, &scenario(dist), &["validate"]);
    assert_eq!(code, Some(2), "{name}: {err}");
    assert!(!err.contains("panicked"), "{name}: {err}");
    assert!(err.contains(&format!("{name}.toml")), "{name}: {err}");
    for e in expect {
        assert!(err.contains(e), "{name}: expected {e:?} in: {err}");
    }
}

#[test]
fn bad_measured_distributions_are_refused_naming_the_field_and_the_rule() {
    let hist = |le: &str, counts: &str, max: &str| {
        format!("{{ kind = \"histogram\", le = {le}, counts = {counts}{max} }}")
    };
    bad(
        "falling",
        &hist("[\"5ms\", \"10ms\"]", "[6, 4]", ""),
        &[
            "dependency.service_time.counts[1]",
            "must be at least the count before it, 6",
            "cumulative",
            "found 4",
        ],
    );
    bad(
        "le_not_increasing",
        &hist("[\"5ms\", \"5ms\"]", "[1, 2]", ""),
        &[
            "dependency.service_time.le[1]",
            "must be above the bound before it, 5ms (found 5ms)",
        ],
    );
    bad(
        "inf_without_max",
        &hist("[\"5ms\"]", "[1, 3]", ""),
        &[
            "dependency.service_time.max",
            "is required when the +Inf bucket holds observations (2 above 5ms)",
        ],
    );
    bad(
        "max_below_last_bound",
        &hist("[\"5ms\", \"10ms\"]", "[1, 2, 3]", ", max = \"8ms\""),
        &[
            "dependency.service_time.max",
            "must be at least the last bound in le, 10ms (found 8ms)",
        ],
    );
    bad(
        "nan_count",
        &hist("[\"5ms\"]", "[nan]", ""),
        &[
            "dependency.service_time.counts[0]",
            "must be a finite count of at least 0 (found NaN)",
        ],
    );
    bad(
        "negative_count",
        &hist("[\"5ms\"]", "[-1]", ""),
        &["dependency.service_time.counts[0]", "(found -1)"],
    );
    bad(
        "empty_histogram",
        &hist("[\"5ms\"]", "[0, 0]", ""),
        &[
            "dependency.service_time.counts",
            "must hold at least one observation (found a total of 0)",
        ],
    );
    bad(
        "no_bounds",
        &hist("[]", "[]", ""),
        &["dependency.service_time.le", "at least one bucket"],
    );
    bad(
        "counts_length",
        &hist("[\"5ms\", \"10ms\"]", "[1]", ""),
        &[
            "dependency.service_time.counts",
            "one cumulative count per bound in le (2), then optionally the +Inf bucket's (3) (found 1)",
        ],
    );
    bad(
        "le_in_plain_seconds",
        &hist("[0.005]", "[1]", ""),
        &["dependency.service_time", "no unit"],
    );
    bad(
        "quantiles_falling",
        "{ kind = \"quantiles\", p50 = \"10ms\", p90 = \"8ms\", max = \"1s\" }",
        &[
            "dependency.service_time.p90",
            "must be at least p50 10ms (found 8ms)",
        ],
    );
    bad(
        "quantiles_max_below",
        "{ kind = \"quantiles\", p50 = \"10ms\", p99 = \"80ms\", max = \"50ms\" }",
        &[
            "dependency.service_time.max",
            "must be at least p99 80ms (found 50ms)",
        ],
    );
    bad(
        "quantiles_none",
        "{ kind = \"quantiles\", max = \"50ms\" }",
        &[
            "dependency.service_time",
            "must give at least one of p50, p90, p99 and p999",
        ],
    );
    bad(
        "quantiles_without_max",
        "{ kind = \"quantiles\", p50 = \"10ms\" }",
        &["dependency.service_time", "max"],
    );
}

#[test]
fn explain_gives_a_measured_service_times_quantiles_as_sampled() {
    // histogram_quantile's median of these buckets is 0.35 s (the example of
    // ClickHouse's quantilePrometheusHistogram docs).
    let text = scenario(
        "{ kind = \"histogram\", le = [\"0s\", \"500ms\", \"1s\"], counts = [6, 11, 14, 19], max = \"2s\" }",
    );
    let (code, out, err) = retrysim("hist", &text, &["explain"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.contains(
            "service time measured as a histogram of 4 buckets (19 observations), sampled linearly between them as p50 350ms, p90 1.62s, p99 1.962s, p99.9 1.996s, max 2s"
        ),
        "{out}"
    );
    let text = scenario(
        "{ kind = \"quantiles\", p50 = \"10ms\", p90 = \"25ms\", p99 = \"80ms\", p999 = \"200ms\", max = \"1s\" }",
    );
    let (code, out, err) = retrysim("q", &text, &["explain"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.contains("service time measured as quantiles, sampled linearly between them as p50 10ms, p90 25ms, p99 80ms, p99.9 200ms, max 1s"),
        "{out}"
    );
}

#[test]
fn a_measured_service_time_runs_and_gives_the_same_bytes_twice() {
    let text = scenario(
        "{ kind = \"histogram\", le = [\"5ms\", \"10ms\", \"50ms\"], counts = [40, 90, 99, 100], max = \"200ms\" }",
    );
    let d = tempfile::tempdir().unwrap();
    let path = d.path().join("h.toml");
    std::fs::write(&path, text).unwrap();
    let mut summaries = Vec::new();
    for out in ["a", "b"] {
        let o = Command::new(env!("CARGO_BIN_EXE_retrysim"))
            .args(["run", "--no-plots", "-q", "--out"])
            .arg(d.path().join(out))
            .arg(&path)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        summaries.push(std::fs::read(d.path().join(out).join("summary.csv")).unwrap());
    }
    assert_eq!(summaries[0], summaries[1]);
}
