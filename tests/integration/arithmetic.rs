//! Hostile numbers through the command line: durations and rates that would overflow,
//! NaN and infinities, probabilities outside [0, 1], zero and negative rates, empty
//! windows, zero durations, and values that are each fine but add up to more than a
//! run can hold. Each gives exit code 2 and a message naming the file, the field and
//! the allowed range; nothing is written. Extreme values that are valid run to a result.

use std::process::Command;

const GOOD: &str = r#"
duration = "10s"
[dependency]
servers = 2
service_time = { kind = "exponential", mean = "10ms" }
[[fleets]]
name = "web"
arrival = { kind = "poisson", rate = 100 }
deadline = "2s"
[[fleets.layers]]
max_attempts = 3
attempt_timeout = "200ms"
backoff = { kind = "exponential", base = "10ms", cap = "1s", jitter = "full" }
[[outages]]
start = "2s"
end = "4s"
mode = { kind = "fail" }
"#;

fn retrysim(args: &[&str], dir: &std::path::Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_retrysim"))
        .current_dir(dir)
        .args(args)
        .output()
        .expect("run retrysim")
}

/// `text` (or GOOD with `--set` overrides) must be refused by `validate` and `run` with
/// exit code 2, a message naming the file and holding every `expect`, and no output.
fn refused(name: &str, text: &str, sets: &[&str], expect: &[&str]) {
    let d = tempfile::tempdir().unwrap();
    let file = format!("{name}.toml");
    std::fs::write(d.path().join(&file), text).unwrap();
    let mut set_args = vec![];
    for s in sets {
        set_args.extend(["--set", s]);
    }
    let mut validate = vec!["validate", file.as_str()];
    if !sets.is_empty() {
        // `validate` takes no overrides: check the overridden scenario through `explain`.
        validate = vec!["explain", file.as_str()];
        validate.extend(&set_args);
    }
    let mut run = vec!["run", file.as_str(), "--no-plots", "--out", "out"];
    run.extend(&set_args);
    for args in [validate, run] {
        let out = retrysim(&args, d.path());
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name} ({}): {err}", args[0]);
        assert!(!err.contains("panicked"), "{name}: {err}");
        assert!(err.starts_with("error: "), "{name}: {err}");
        assert!(
            err.contains(&file),
            "{name}: the message must name the file: {err}"
        );
        for e in expect {
            assert!(
                err.contains(e),
                "{name} ({}): expected {e:?} in: {err}",
                args[0]
            );
        }
        assert!(
            !d.path().join("out").exists(),
            "{name}: nothing may be written"
        );
    }
}

fn with(sets: &[&str]) -> (String, Vec<String>) {
    (
        GOOD.to_string(),
        sets.iter().map(|s| s.to_string()).collect(),
    )
}

fn refused_set(name: &str, set: &str, expect: &[&str]) {
    let (text, sets) = with(&[set]);
    let sets: Vec<&str> = sets.iter().map(String::as_str).collect();
    refused(name, &text, &sets, expect);
}

#[test]
fn durations_that_overflow_u64_nanoseconds_name_the_field() {
    for (name, set, field) in [
        (
            "duration",
            "duration=\"18446744073709551616ns\"",
            "duration",
        ),
        (
            "deadline",
            "fleets.0.deadline=\"99999999999h\"",
            "fleets[0].deadline",
        ),
        (
            "timeout",
            "fleets.0.layers.0.attempt_timeout=\"5124096h\"",
            "fleets[0].layers[0].attempt_timeout",
        ),
        (
            "base",
            "fleets.0.layers.0.backoff.base=\"99999999999999999999ns\"",
            "fleets[0].layers[0].backoff",
        ),
        ("outage", "outages.0.end=\"6000000h\"", "outages[0].end"),
    ] {
        refused_set(name, set, &[field, "too large", "584 years"]);
    }
}

#[test]
fn a_horizon_past_the_limit_names_duration_and_the_limit() {
    refused_set(
        "horizon",
        "drain=\"999999s\"",
        &["duration", "duration + drain must be at most 1000000s"],
    );
}

#[test]
fn a_rate_too_high_to_simulate_names_the_field_and_the_limit() {
    refused_set(
        "rate",
        "fleets.0.arrival.rate=1e308",
        &["fleets[0].arrival.rate", "at most 1e8 per second"],
    );
}

#[test]
fn nan_and_infinite_floats_name_the_field() {
    for (name, set, field) in [
        ("rate", "fleets.0.arrival.rate=nan", "fleets[0].arrival.rate"),
        ("writes", "fleets.0.writes=nan", "fleets[0].writes"),
        ("error_rate", "dependency.error_rate=inf", "dependency.error_rate"),
        ("tolerance", "recovery_tolerance=-inf", "recovery_tolerance"),
        (
            "multiplier",
            "fleets.0.layers.0.backoff.multiplier=inf",
            "fleets[0].layers[0].backoff.multiplier",
        ),
        (
            "profile",
            "fleets.0.load_profile=[{ at = \"1s\", multiplier = nan }]",
            "fleets[0].load_profile[0].multiplier",
        ),
        (
            "percent",
            "fleets.0.layers.0.budget={ kind = \"ratio\", percent = nan }",
            "fleets[0].layers[0].budget.percent",
        ),
        (
            "tokens",
            "fleets.0.layers.0.budget={ kind = \"token_bucket\", max_tokens = inf, token_ratio = 0.1 }",
            "fleets[0].layers[0].budget.max_tokens",
        ),
        ("outage_p", "outages.0.mode={ kind = \"error_rate\", p = nan }", "outages[0].mode.p"),
        ("slow", "outages.0.mode={ kind = \"slow\", factor = inf }", "outages[0].mode.factor"),
        (
            "expect",
            "expect=[{ metric = \"success_fraction\", min = nan }]",
            "expect[0].min",
        ),
    ] {
        refused_set(name, set, &[field, "finite"]);
    }
}

#[test]
fn probabilities_outside_zero_to_one_name_the_field() {
    for (name, set, field) in [
        ("writes", "fleets.0.writes=1.5", "fleets[0].writes"),
        ("error_rate", "dependency.error_rate=-0.1", "dependency.error_rate"),
        ("outage_p", "outages.0.mode={ kind = \"error_rate\", p = 2 }", "outages[0].mode.p"),
        ("tolerance", "recovery_tolerance=-1", "recovery_tolerance"),
        (
            "failure_rate",
            "fleets.0.layers.0.breaker={ kind = \"rate\", window_calls = 10, failure_rate = 1.01, open_for = \"1s\" }",
            "fleets[0].layers[0].breaker.failure_rate",
        ),
    ] {
        refused_set(name, set, &[field, "between 0 and 1"]);
    }
}

#[test]
fn zero_and_negative_rates_name_the_field() {
    for (name, set, field, rule) in [
        ("zero", "fleets.0.arrival.rate=0", "fleets[0].arrival.rate", "greater than 0"),
        ("negative", "fleets.0.arrival.rate=-5", "fleets[0].arrival.rate", "greater than 0"),
        (
            "constant",
            "fleets.0.arrival={ kind = \"constant\", rate = 0 }",
            "fleets[0].arrival.rate",
            "greater than 0",
        ),
        (
            "profile",
            "fleets.0.load_profile=[{ at = \"1s\", multiplier = -1 }]",
            "fleets[0].load_profile[0].multiplier",
            "between 0 and 1000",
        ),
        (
            "slow",
            "outages.0.mode={ kind = \"slow\", factor = 0 }",
            "outages[0].mode.factor",
            "greater than 0",
        ),
        (
            "min_per_sec",
            "fleets.0.layers.0.budget={ kind = \"ratio\", percent = 10, min_per_sec = -1 }",
            "fleets[0].layers[0].budget.min_per_sec",
            "must not be negative",
        ),
        (
            "token_ratio",
            "fleets.0.layers.0.budget={ kind = \"token_bucket\", max_tokens = 10, token_ratio = -1 }",
            "fleets[0].layers[0].budget.token_ratio",
            "between 0 and 1e6",
        ),
    ] {
        refused_set(name, set, &[field, rule]);
    }
}

#[test]
fn zero_length_windows_name_the_field() {
    for (name, set, field, rule) in [
        ("outage", "outages.0.end=\"2s\"", "outages[0].end", "must be after start 2s"),
        (
            "ratio_window",
            "fleets.0.layers.0.budget={ kind = \"ratio\", percent = 10, window = \"0s\" }",
            "fleets[0].layers[0].budget.window",
            "positive duration",
        ),
        (
            "window_calls",
            "fleets.0.layers.0.breaker={ kind = \"rate\", window_calls = 0, failure_rate = 0.5, open_for = \"1s\" }",
            "fleets[0].layers[0].breaker.window_calls",
            "at least 1",
        ),
        (
            "open_for",
            "fleets.0.layers.0.breaker={ kind = \"consecutive\", failures = 3, open_for = \"0s\" }",
            "fleets[0].layers[0].breaker.open_for",
            "positive duration",
        ),
        (
            "markov",
            "outages=[{ kind = \"markov\", mean_up = \"5s\", mean_down = \"0s\", mode = { kind = \"blackhole\" } }]",
            "outages[0].mean_down",
            "positive duration",
        ),
    ] {
        refused_set(name, set, &[field, rule]);
    }
}

#[test]
fn zero_durations_name_the_field() {
    for (set, field) in [
        ("duration=\"0s\"", "duration"),
        ("bucket=\"0ns\"", "bucket"),
        ("herd_bucket=\"0s\"", "herd_bucket"),
        ("fleets.0.deadline=\"0s\"", "fleets[0].deadline"),
        (
            "fleets.0.layers.0.attempt_timeout=\"0ms\"",
            "fleets[0].layers[0].attempt_timeout",
        ),
        (
            "dependency.service_time={ kind = \"exponential\", mean = \"0s\" }",
            "dependency.service_time.mean",
        ),
    ] {
        refused_set(field, set, &[field, "positive duration"]);
    }
}

#[test]
fn a_bucket_so_short_that_the_series_explodes_names_bucket() {
    refused_set(
        "tiny_bucket",
        "bucket=\"1us\"",
        &["bucket", "more than 1,000,000 buckets"],
    );
}

#[test]
fn markov_outages_with_tiny_means_name_the_field_and_the_cap() {
    refused_set(
        "markov_tiny",
        "outages=[{ kind = \"markov\", mean_up = \"1ns\", mean_down = \"1ns\", mode = { kind = \"fail\" } }]",
        &[
            "outages[0].mean_up",
            "outage windows",
            "at most 1000000",
            "mean_up + mean_down at least 70us",
        ],
    );
}

#[test]
fn too_many_outages_and_fleets_are_refused_with_the_cap() {
    let mut text = GOOD.to_string();
    for i in 0..1001 {
        text.push_str(&format!(
            "[[outages]]\nstart = \"{i}ms\"\nend = \"{}ms\"\nmode = {{ kind = \"fail\" }}\n",
            i + 1
        ));
    }
    refused(
        "outages",
        &text,
        &[],
        &["outages", "at most 1000 outages", "1002"],
    );
    let mut text = GOOD.split("[[outages]]").next().unwrap().to_string();
    for i in 0..1001 {
        text.push_str(&format!(
            "[[fleets]]\nname = \"f{i}\"\narrival = {{ kind = \"poisson\", rate = 1 }}\n"
        ));
    }
    refused(
        "fleets",
        &text,
        &[],
        &["fleets", "at most 1000 fleets", "1002"],
    );
}

#[test]
fn a_burst_larger_than_max_in_flight_names_count_and_the_limit() {
    refused_set(
        "burst",
        "fleets.0.arrival={ kind = \"burst\", at = \"1s\", count = 2000000 }",
        &[
            "fleets[0].arrival.count",
            "more than limits.max_in_flight = 1000000",
        ],
    );
    refused_set(
        "burst_late",
        "fleets.0.arrival={ kind = \"burst\", at = \"10s\", count = 10 }",
        &["fleets[0].arrival.at", "must be before duration 10s"],
    );
}

#[test]
fn closed_fleets_with_too_many_clients_name_the_field() {
    let mut text = GOOD.to_string();
    text.push_str(
        "[[fleets]]\nname = \"a\"\narrival = { kind = \"closed\", clients = 6000000, think_time = \"1s\" }\n\
         [[fleets]]\nname = \"b\"\narrival = { kind = \"closed\", clients = 6000000, think_time = \"1s\" }\n",
    );
    refused(
        "closed",
        &text,
        &[],
        &["fleets[2].arrival.clients", "12000000 clients", "10000000"],
    );
    refused_set(
        "one_fleet",
        "fleets.0.arrival={ kind = \"closed\", clients = 20000000, think_time = \"1s\" }",
        &["fleets[0].arrival.clients", "at most 10000000"],
    );
}

#[test]
fn layer_instances_whose_state_would_not_fit_in_memory_name_the_field() {
    refused_set(
        "instances",
        "fleets.0.layers.0={ max_attempts = 2, instances = 10000000, breaker = { kind = \"rate\", window_calls = 100000, failure_rate = 0.5, open_for = \"1s\" } }",
        &[
            "fleets[0].layers[0].instances",
            "GiB here",
            "at most 4.0 GiB",
        ],
    );
}

/// A million cells plan from their values alone: a shard builds only its own cells
/// (before, planning built and kept every cell's scenario: most of a minute and GBs).
#[test]
fn a_million_cell_sweep_plans_lazily_and_a_shard_runs_only_its_runs() {
    let mut text = GOOD.to_string();
    text.push_str(
        "[sweep]\n\"fleets.0.arrival.rate\" = { from = 1, to = 1000, step = 1 }\n\"fleets.0.layers.0.max_attempts\" = { from = 1, to = 1000, step = 1 }\n",
    );
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("grid.toml"), &text).unwrap();
    let started = std::time::Instant::now();
    let out = retrysim(
        &[
            "sweep",
            "grid.toml",
            "--shard",
            "999999/1000000",
            "--no-plots",
            "-q",
            "--out",
            "out",
            "--set",
            "duration=\"5s\"",
        ],
        d.path(),
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let summary = std::fs::read_to_string(d.path().join("out/summary.csv")).unwrap();
    assert_eq!(summary.lines().count(), 2, "{summary}");
    assert!(summary.contains(",1000,1000\n"), "the last cell: {summary}");
    assert!(started.elapsed() < std::time::Duration::from_secs(30));
    // Its manifest does not build the million cells for their N^L: it says how many
    // there are, and the report says why the amplification chart is left out.
    let manifest = std::fs::read_to_string(d.path().join("out/manifest.toml")).unwrap();
    assert!(
        manifest.contains("\nworst_case_cells = 1000000\n"),
        "{manifest}"
    );
    assert!(!manifest.contains("\nworst_case_attempts = "), "{manifest}");
    let out = retrysim(&["plot", "out", "-q", "--format", "svg"], d.path());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let html = std::fs::read_to_string(d.path().join("out/report.html")).unwrap();
    assert!(
        html.contains("<p>Left out: the amplification chart (<code>amplification</code>). The sweep has 1000000 cells, more than the 10000 whose N^L its manifest records.</p>"),
        "{html}"
    );
}

#[test]
fn extreme_but_valid_values_run_to_a_result() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("x.toml"), GOOD).unwrap();
    let max = "\"18446744073709551615ns\"";
    for sets in [
        vec![
            format!("fleets.0.layers.0.backoff.base={max}"),
            "fleets.0.layers.0.backoff.cap={max}".replace("{max}", max),
        ],
        vec![format!("fleets.0.deadline={max}")],
        vec![format!("fleets.0.layers.0.hop_latency={max}")],
        vec![
            format!("dependency.retry_after={max}"),
            "dependency.queue_limit=0".into(),
        ],
        vec![format!("dependency.per_concurrent={max}")],
        vec![format!(
            "dependency.service_time={{ kind = \"uniform\", min = \"0s\", max = {max} }}"
        )],
        vec![format!(
            "dependency.service_time={{ kind = \"lognormal\", median = \"1ns\", p99 = {max} }}"
        )],
        vec![
            "fleets.0.layers.0.backoff.multiplier=1000".into(),
            "fleets.0.layers.0.max_attempts=\"unlimited\"".into(),
        ],
        vec!["fleets.0.arrival.rate=1e-9".into()],
        vec!["outages.0.mode={ kind = \"slow\", factor = 1e6 }".into()],
        // Found by review: the bucket after an outage ending at the end of time
        // overflowed the recovery analysis (a panic in release builds).
        vec![
            "duration=\"100us\"".into(),
            "bucket=\"1ns\"".into(),
            "drain=\"0s\"".into(),
            "outages.0.start=\"0s\"".into(),
            format!("outages.0.end={max}"),
            "fleets.0.arrival.rate=1e6".into(),
        ],
        vec![
            "outages.0.mode={ kind = \"fail\", after = \"0s\" }".into(),
            "fleets.0.layers.0.backoff={ kind = \"none\" }".into(),
        ],
    ] {
        let mut args = vec![
            "run",
            "x.toml",
            "--no-plots",
            "-q",
            "--out",
            "out",
            "--force",
        ];
        for s in &sets {
            args.extend(["--set", s.as_str()]);
        }
        let out = retrysim(&args, d.path());
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{sets:?}: {err}");
        let summary = std::fs::read_to_string(d.path().join("out/summary.csv")).unwrap();
        let row = summary.lines().nth(1).expect("a summary row");
        assert!(
            !row.to_lowercase().contains("nan") && !row.contains("inf"),
            "{sets:?}: {summary}"
        );
    }
}
