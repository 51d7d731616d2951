//! Bad input: every kind gives exit code 2 and a message naming the file and field;
//! none panics.

use std::process::Command;

const GOOD: &str = r#"
duration = "10s"
[dependency]
servers = 2
service_time = { kind = "exponential", mean = "10ms" }
[[fleets]]
name = "web"
arrival = { kind = "poisson", rate = 100 }
[[fleets.layers]]
max_attempts = 3
[[outages]]
start = "2s"
end = "4s"
mode = { kind = "fail" }
"#;

fn check(name: &str, text: Option<&str>, expect: &[&str]) {
    let d = tempfile::tempdir().unwrap();
    let path = d.path().join(format!("{name}.toml"));
    if let Some(t) = text {
        std::fs::write(&path, t).unwrap();
    }
    for cmd in ["validate", "run"] {
        let mut c = Command::new(env!("CARGO_BIN_EXE_retrysim"));
        c.arg(cmd).arg(&path);
        if cmd == "run" {
            c.args(["--no-plots", "--out"]).arg(d.path().join("out"));
        }
        let out = c.output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name} ({cmd}): {err}");
        assert!(!err.contains("panicked"), "{name}: {err}");
        assert!(
            err.contains(&format!("{name}.toml")),
            "{name}: message must name the file: {err}"
        );
        for e in expect {
            assert!(err.contains(e), "{name} ({cmd}): expected {e:?} in: {err}");
        }
        assert!(
            !d.path().join("out").exists(),
            "{name}: nothing may be written"
        );
    }
}

#[test]
fn the_good_scenario_is_accepted() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("good.toml");
    std::fs::write(&p, GOOD).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_retrysim"))
        .arg("validate")
        .arg(&p)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn an_unknown_key_is_rejected_by_name() {
    check(
        "unknown_key",
        Some(&GOOD.replace("max_attempts = 3", "max_attempts = 3\nmax_attempt = 4")),
        &["fleets[0].layers[0]", "max_attempt"],
    );
}

#[test]
fn a_wrong_type_names_the_field() {
    check(
        "wrong_type",
        Some(&GOOD.replace("max_attempts = 3", "max_attempts = \"three\"")),
        &["fleets[0].layers[0].max_attempts"],
    );
}

#[test]
fn a_negative_rate_names_the_field() {
    check(
        "negative_rate",
        Some(&GOOD.replace("rate = 100", "rate = -5")),
        &["fleets[0].arrival.rate", "greater than 0", "-5"],
    );
}

#[test]
fn a_probability_outside_zero_to_one_names_the_field() {
    check(
        "bad_p",
        Some(&GOOD.replace("servers = 2", "servers = 2\nerror_rate = 1.5")),
        &["dependency.error_rate", "between 0 and 1", "1.5"],
    );
}

#[test]
fn zero_servers_names_the_field() {
    check(
        "zero_servers",
        Some(&GOOD.replace("servers = 2", "servers = 0")),
        &["dependency.servers", "at least 1"],
    );
}

#[test]
fn a_closed_choice_names_the_field_and_the_values_allowed() {
    // Also: a kind without keys refuses any.
    for (name, from, to, expect) in [
        (
            "dependency_kind",
            "servers = 2",
            "servers = 2\nkind = \"pool\"",
            [
                "dependency.kind: unknown variant `pool`",
                "`queue` or `occ`",
            ],
        ),
        (
            "discipline",
            "servers = 2",
            "servers = 2\ndiscipline = \"random\"",
            [
                "dependency.discipline: unknown variant `random`",
                "`fifo` or `lifo`",
            ],
        ),
        (
            "outage_kind",
            "start = \"2s\"",
            "kind = \"poisson\"\nstart = \"2s\"",
            [
                "outages[0].kind: unknown variant `poisson`",
                "`window` or `markov`",
            ],
        ),
        (
            "none_with_a_key",
            "max_attempts = 3",
            "max_attempts = 3\nbackoff = { kind = \"none\", base = \"1s\" }",
            ["fleets[0].layers[0].backoff", "unknown field `base`"],
        ),
        (
            "blackhole_with_a_key",
            "mode = { kind = \"fail\" }",
            "mode = { kind = \"blackhole\", p = 0.5 }",
            ["outages[0].mode", "unknown field `p`"],
        ),
        (
            "backoff_formula",
            "max_attempts = 3",
            "max_attempts = 3\nbackoff = { kind = \"envoy\", formula = \"newest\" }",
            [
                "fleets[0].layers[0].backoff.formula: unknown variant `newest`",
                "`current` or `documented`",
            ],
        ),
    ] {
        check(name, Some(&GOOD.replacen(from, to, 1)), &expect);
    }
}

#[test]
fn an_outage_ending_before_it_starts_names_the_field() {
    check(
        "end_before_start",
        Some(&GOOD.replace("end = \"4s\"", "end = \"1s\"")),
        &["outages[0].end", "after start"],
    );
}

#[test]
fn an_empty_file_is_rejected() {
    check("empty", Some("\n# nothing\n"), &["empty"]);
}

#[test]
fn text_that_is_not_toml_is_rejected_with_its_line() {
    check(
        "not_toml",
        Some("duration = \n[[fleets]\n"),
        &["not valid TOML", "line"],
    );
}

#[test]
fn a_missing_file_is_rejected() {
    check("missing", None, &["cannot read"]);
}

#[test]
fn an_unknown_enum_value_lists_the_allowed_ones() {
    check(
        "bad_enum",
        Some(&GOOD.replace("kind = \"poisson\"", "kind = \"gaussian\"")),
        &["fleets[0].arrival", "gaussian", "poisson"],
    );
}

#[test]
fn a_duration_without_unit_or_too_large_is_rejected() {
    check(
        "no_unit",
        Some(&GOOD.replace("duration = \"10s\"", "duration = 10")),
        &["duration", "unit"],
    );
    check(
        "huge",
        Some(&GOOD.replace("duration = \"10s\"", "duration = \"99999999999h\"")),
        &["duration", "too large"],
    );
}

#[test]
fn non_finite_numbers_are_rejected() {
    check(
        "nan_rate",
        Some(&GOOD.replace("rate = 100", "rate = nan")),
        &["fleets[0].arrival.rate", "finite"],
    );
    check(
        "inf_rate",
        Some(&GOOD.replace("rate = 100", "rate = inf")),
        &["fleets[0].arrival.rate", "finite"],
    );
}

#[test]
fn a_zero_duration_and_zero_attempts_are_rejected() {
    check(
        "zero_duration",
        Some(&GOOD.replace("duration = \"10s\"", "duration = \"0s\"")),
        &["duration", "positive"],
    );
    check(
        "zero_attempts",
        Some(&GOOD.replace("max_attempts = 3", "max_attempts = 0")),
        &["fleets[0].layers[0].max_attempts", "at least 1"],
    );
}

#[test]
fn a_bad_set_override_is_rejected() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("s.toml");
    std::fs::write(&p, GOOD).unwrap();
    for set in [
        "fleets.5.name=x",
        "novalue",
        "fleets.0.layers.0.max_attempts=-1",
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_retrysim"))
            .args(["run", "--no-plots", "--set", set])
            .arg(&p)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{set}: {err}");
        assert!(!err.contains("panicked"));
    }
}

/// Runs retrysim in `dir` and gives up after `secs` seconds: input that makes it read
/// or work forever fails the test instead of hanging it.
fn bounded(dir: &std::path::Path, args: &[&str], secs: u64) -> std::process::Output {
    use std::time::{Duration, Instant};
    let mut child = Command::new(env!("CARGO_BIN_EXE_retrysim"))
        .current_dir(dir)
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > Duration::from_secs(secs) {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("retrysim {args:?} still running after {secs} s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{args:?}: {err}");
    out
}

/// `args` must exit with 2, a message holding every `expect`, at most `max_len` bytes.
fn refused_with(dir: &std::path::Path, args: &[&str], expect: &[&str], max_len: usize) -> String {
    let out = bounded(dir, args, 60);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(
        out.status.code(),
        Some(2),
        "{args:?}: {}",
        &err[..err.len().min(2000)]
    );
    assert!(
        err.len() <= max_len,
        "{args:?}: a {} byte message: {}",
        err.len(),
        &err[..2000.min(err.len())]
    );
    for e in expect {
        assert!(err.contains(e), "{args:?}: expected {e:?} in: {err}");
    }
    err
}

/// `n` fleets of one layer each.
fn fleets(n: usize) -> String {
    let mut t = GOOD.replace("[[fleets]]\nname = \"web\"", "[[fleets]]\nname = \"f0\"");
    for i in 1..n {
        t.push_str(&format!(
            "[[fleets]]\nname = \"f{i}\"\narrival = {{ kind = \"poisson\", rate = 1 }}\n[[fleets.layers]]\nmax_attempts = 2\n"
        ));
    }
    t
}

#[test]
fn a_hundred_thousand_fleets_are_refused_by_their_count_in_seconds() {
    // The cap used to be checked after a quadratic pass over the names: 70 s here.
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("many.toml"), fleets(100_000)).unwrap();
    let started = std::time::Instant::now();
    refused_with(
        d.path(),
        &["validate", "many.toml"],
        &[
            "many.toml",
            "fleets",
            "at most 1000 fleets are allowed",
            "found 100000",
        ],
        500,
    );
    assert!(started.elapsed().as_secs() < 15, "{:?}", started.elapsed());
    // Outages and profile points are capped before they are checked one by one too.
    let mut t = GOOD.to_string();
    for i in 0..100_000u64 {
        t.push_str(&format!(
            "[[outages]]\nstart = \"{}ms\"\nend = \"{}ms\"\nmode = {{ kind = \"fail\" }}\n",
            5000 + i,
            5001 + i
        ));
    }
    std::fs::write(d.path().join("outages.toml"), t).unwrap();
    refused_with(
        d.path(),
        &["validate", "outages.toml"],
        &[
            "outages",
            "at most 1000 outages are allowed",
            "found 100001",
        ],
        500,
    );
    let points: Vec<String> = (0..200_000)
        .map(|i| format!("{{ at = \"{i}ms\", multiplier = 1 }}"))
        .collect();
    let t = GOOD.replace(
        "rate = 100 }",
        &format!("rate = 100 }}\nload_profile = [{}]", points.join(", ")),
    );
    std::fs::write(d.path().join("profile.toml"), t).unwrap();
    refused_with(
        d.path(),
        &["validate", "profile.toml"],
        &[
            "fleets[0].load_profile",
            "at most 10000 points are allowed",
            "found 200000",
        ],
        500,
    );
    assert!(started.elapsed().as_secs() < 30, "{:?}", started.elapsed());
}

#[test]
fn a_thousand_fleets_validate_in_time_linear_in_the_file() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("thousand.toml"), fleets(1000)).unwrap();
    let started = std::time::Instant::now();
    let out = bounded(d.path(), &["validate", "thousand.toml"], 60);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(started.elapsed().as_secs() < 5, "{:?}", started.elapsed());
    // Two fleets of one name are still found, in one pass.
    let t = fleets(1000).replace("name = \"f999\"", "name = \"f3\"");
    std::fs::write(d.path().join("dup.toml"), t).unwrap();
    refused_with(
        d.path(),
        &["validate", "dup.toml"],
        &["fleets[999].name", "\"f3\" is used by another fleet"],
        500,
    );
}

#[test]
fn devices_fifos_folders_and_huge_files_are_refused_without_reading_them() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("good.toml"), GOOD).unwrap();
    let fifo = d.path().join("fifo.toml");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    std::fs::create_dir(d.path().join("folder.toml")).unwrap();
    // Sparse: its size is in the metadata, not on the disk.
    let huge = std::fs::File::create(d.path().join("huge.toml")).unwrap();
    huge.set_len(17 << 20).unwrap();
    for (file, why) in [
        ("/dev/zero", "a device"),
        ("/dev/urandom", "a device"),
        ("fifo.toml", "a FIFO"),
        ("folder.toml", "a folder"),
        ("huge.toml", "more than the 16777216 bytes (16 MiB) allowed"),
    ] {
        for cmd in ["validate", "run"] {
            refused_with(
                d.path(),
                &[cmd, file, "--no-plots", "--out", "out"][..if cmd == "run" { 5 } else { 2 }],
                &[&format!("cannot read scenario '{file}'"), why],
                500,
            );
        }
        refused_with(
            d.path(),
            &["check", "good.toml", "--baseline", file],
            &[&format!("cannot read baseline '{file}'"), why],
            500,
        );
    }
    assert!(!d.path().join("out").exists());
}

#[test]
fn a_key_of_thousands_of_segments_is_refused_naming_its_depth() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("s.toml"), GOOD).unwrap();
    let key = vec!["a"; 30_000].join(".");
    let set = format!("{key}=1");
    refused_with(
        d.path(),
        &["run", "s.toml", "--no-plots", "--out", "out", "--set", &set],
        &[
            "--set a.a.a",
            "(59999 bytes)",
            "the key has 30000 dotted segments; at most 32 are allowed",
        ],
        1000,
    );
    let key = vec!["a"; 500_000].join(".");
    std::fs::write(
        d.path().join("sw.toml"),
        format!("{GOOD}\n[sweep]\n\"{key}\" = [1, 2]\n"),
    )
    .unwrap();
    refused_with(
        d.path(),
        &["sweep", "sw.toml", "--no-plots", "--out", "out"],
        &["sweep key 'a.a.a", "500000 dotted segments", "at most 32"],
        2000,
    );
    assert!(!d.path().join("out").exists());
}

#[test]
fn names_and_labels_with_control_characters_are_refused() {
    // Set the terminal title, clear the screen.
    let evil = "x\\u001b]0;pwned\\u0007\\u001b[2J";
    for (name, text, field) in [
        (
            "fleet_name",
            GOOD.replace("name = \"web\"", &format!("name = \"{evil}\"")),
            "fleets[0].name",
        ),
        (
            "layer_name",
            GOOD.replace(
                "max_attempts = 3",
                &format!("max_attempts = 3\nname = \"{evil}\""),
            ),
            "fleets[0].layers[0].name",
        ),
        (
            "scenario_name",
            format!("name = \"{evil}\"\n{GOOD}"),
            "name",
        ),
        (
            "metric",
            format!("{GOOD}\n[[expect]]\nmetric = \"{evil}\"\nmax = 1\n"),
            "expect[0].metric",
        ),
        (
            "tab",
            GOOD.replace("name = \"web\"", "name = \"a\\tb\""),
            "fleets[0].name",
        ),
    ] {
        check(name, Some(&text), &[field]);
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("e.toml"), &text).unwrap();
        let out = bounded(d.path(), &["explain", "e.toml"], 60);
        let all = [out.stdout, out.stderr].concat();
        assert_eq!(out.status.code(), Some(2), "{name}");
        assert!(
            !all.iter().any(|&b| b == 0x1b || b == 0x07 || b == b'\t'),
            "{name}: control characters printed raw: {}",
            String::from_utf8_lossy(&all)
        );
    }
}

#[test]
fn a_long_bad_value_is_cut_in_the_message() {
    let d = tempfile::tempdir().unwrap();
    let long = "n".repeat(10 << 20);
    for (file, text, expect) in [
        (
            "name.toml",
            GOOD.replace("name = \"web\"", &format!("name = \"{long}\"")),
            "fleets[0].name",
        ),
        (
            "kind.toml",
            GOOD.replace("kind = \"poisson\"", &format!("kind = \"{long}\"")),
            "fleets[0].arrival",
        ),
        (
            "layer.toml",
            GOOD.replace(
                "max_attempts = 3",
                &format!("max_attempts = 3\nname = \"{long}\""),
            ),
            "fleets[0].layers[0].name",
        ),
        (
            "syntax.toml",
            format!("{GOOD}\nx = [{long}\n"),
            "not valid TOML",
        ),
    ] {
        std::fs::write(d.path().join(file), text).unwrap();
        let err = refused_with(d.path(), &["validate", file], &[expect, "bytes)"], 2000);
        assert!(err.contains(&"n".repeat(50)), "{err}");
    }
}

#[test]
fn a_duration_shorter_than_the_default_bucket_is_reported_as_duration() {
    let text = GOOD.replace("duration = \"10s\"", "duration = \"1us\"");
    check(
        "short",
        Some(&text),
        &["short.toml': duration: must be at least the time-series bucket, 1s by default (found 1us)", "set `bucket`"],
    );
    let text = GOOD.replace("duration = \"10s\"", "duration = \"999999s\"");
    check(
        "long_run",
        Some(&text),
        &[
            "duration: duration + drain must be at most",
            "+ 1m, the default drain)",
        ],
    );
    let text = GOOD.replace("duration = \"10s\"", "duration = \"10s\"\nbucket = \"20s\"");
    check(
        "long_bucket",
        Some(&text),
        &["bucket: must not be longer than duration 10s (found 20s)"],
    );
}

#[test]
fn a_file_stem_that_is_not_a_folder_name_needs_a_name_key() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("...toml"), GOOD).unwrap();
    for cmd in ["validate", "run"] {
        refused_with(
            d.path(),
            &[cmd, "...toml", "--no-plots"][..if cmd == "run" { 3 } else { 2 }],
            &[
                "scenario '...toml': name: is not set",
                "default name \"..\"",
                "set `name = ",
            ],
            1000,
        );
    }
    assert!(!d.path().join("summary.csv").exists());
    assert!(!d.path().join("output").exists());
    // With a name, the same file runs into output/<name>/.
    std::fs::write(d.path().join("...toml"), format!("name = \"dots\"\n{GOOD}")).unwrap();
    let out = bounded(d.path(), &["run", "...toml", "--no-plots", "-q"], 60);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(d.path().join("output/dots/summary.csv").exists());
    assert!(!d.path().join("summary.csv").exists());
    // A stem with a space is a fine folder name.
    std::fs::write(d.path().join("my run.toml"), GOOD).unwrap();
    let out = bounded(d.path(), &["validate", "my run.toml"], 60);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn limits_beyond_what_a_run_may_hold_are_refused_with_the_reason() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("s.toml"), GOOD).unwrap();
    refused_with(
        d.path(),
        &[
            "run",
            "s.toml",
            "--no-plots",
            "--out",
            "out",
            "--set",
            "limits.max_in_flight=1000000000000",
        ],
        &[
            "limits.max_in_flight: 1000000000000 requests in flight could take",
            "a run may take at most 8.0 GiB",
            "at most about",
        ],
        1000,
    );
    refused_with(
        d.path(),
        &[
            "run",
            "s.toml",
            "--no-plots",
            "--out",
            "out",
            "--set",
            "limits.max_events=10000000000000",
        ],
        &["limits.max_events", "must be at most 1000000000000"],
        1000,
    );
    assert!(!d.path().join("out").exists());
}

// Service graphs (issue 19): every rule of `[[services]]` names its field.

/// A good three-tier graph with a fan-out: front → back → [db, cache].
const GRAPH: &str = r#"
duration = "10s"
[[services]]
name = "front"
servers = 4
service_time = "1ms"
[[services.calls]]
to = "back"
[[services.calls.layers]]
max_attempts = 2
[[services]]
name = "back"
servers = 4
service_time = "1ms"
[[services.calls]]
to = ["db", "cache"]
[[services]]
name = "db"
servers = 4
service_time = "1ms"
[[services]]
name = "cache"
servers = 4
service_time = "1ms"
[[fleets]]
name = "web"
arrival = { kind = "poisson", rate = 100 }
[[fleets.layers]]
max_attempts = 3
"#;

/// `GRAPH` with the first `from` replaced by `to` (which must be there).
fn graph_with(from: &str, to: &str) -> String {
    assert!(GRAPH.contains(from), "{from}");
    GRAPH.replacen(from, to, 1)
}

/// `GRAPH` with `extra` inserted before the fleets.
fn graph_plus(extra: &str) -> String {
    graph_with("[[fleets]]", &format!("{extra}\n[[fleets]]"))
}

/// `GRAPH` with its services replaced by `services` (TOML text).
fn graph_services(services: &str) -> String {
    let i = GRAPH.find("[[services]]").unwrap();
    let j = GRAPH.find("[[fleets]]").unwrap();
    format!("{}{services}\n{}", &GRAPH[..i], &GRAPH[j..])
}

#[test]
fn the_good_graph_is_accepted() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("graph.toml");
    std::fs::write(&p, GRAPH).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_retrysim"))
        .arg("validate")
        .arg(&p)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn dependency_and_services_are_one_or_the_other() {
    check(
        "graph_both",
        Some(&graph_plus(
            "[dependency]\nservers = 1\nservice_time = \"1ms\"",
        )),
        &[
            "services: cannot be used together with [dependency]",
            "write the dependency as one of the [[services]]",
        ],
    );
    check(
        "graph_neither",
        Some(&graph_services("")),
        &["dependency: is required: a [dependency] table, or a graph of [[services]]"],
    );
}

#[test]
fn a_call_must_name_services_that_exist_once_and_without_cycles() {
    let known = "(known: \"back\", \"cache\", \"db\", \"front\")";
    check(
        "graph_unknown_callee",
        Some(&graph_with("to = \"back\"", "to = \"bakc\"")),
        &["services[0].calls[0].to: names no service: \"bakc\"", known],
    );
    check(
        "graph_self_call",
        Some(&graph_with("to = \"back\"", "to = \"front\"")),
        &["services[0].calls[0].to: \"front\" calls itself: a service graph must be acyclic"],
    );
    check(
        "graph_cycle",
        Some(&graph_with("to = [\"db\", \"cache\"]", "to = [\"db\", \"front\"]")),
        &["services[1].calls[0].to: makes a cycle front → back → front: a service graph must be acyclic"],
    );
    check(
        "graph_callee_twice",
        Some(&graph_with(
            "to = [\"db\", \"cache\"]",
            "to = [\"db\", \"db\"]",
        )),
        &["services[1].calls[0].to: names \"db\" twice"],
    );
    check(
        "graph_empty_to",
        Some(&graph_with("to = [\"db\", \"cache\"]", "to = []")),
        &["services[1].calls[0].to: must name at least one service"],
    );
    let many: Vec<String> = (0..17).map(|k| format!("\"s{k}\"")).collect();
    check(
        "graph_fanout_cap",
        Some(&graph_with(
            "to = [\"db\", \"cache\"]",
            &format!("to = [{}]", many.join(", ")),
        )),
        &["services[1].calls[0].to: at most 16 callees are allowed (found 17)"],
    );
}

#[test]
fn a_join_must_be_a_word_or_a_quorum_the_callees_can_meet() {
    let fan = "to = [\"db\", \"cache\"]";
    for (name, join, expect) in [
        (
            "graph_quorum_0",
            "{ quorum = 0 }",
            "services[1].calls[0].join.quorum: must be between 1 and the 2 callees of `to` (found 0)",
        ),
        (
            "graph_quorum_3",
            "{ quorum = 3 }",
            "services[1].calls[0].join.quorum: must be between 1 and the 2 callees of `to` (found 3)",
        ),
        (
            "graph_quorum_negative",
            "{ quorum = -1 }",
            "services[1].calls[0].join: quorum must be a whole number of callees, at least 1 (found -1)",
        ),
        (
            "graph_quorum_float",
            "{ quorum = 1.5 }",
            "services[1].calls[0].join: quorum must be a whole number of callees, at least 1 (found 1.5)",
        ),
        (
            "graph_join_word",
            "\"most\"",
            "services[1].calls[0].join: must be \"all\", \"any\" or { quorum = k } (found \"most\")",
        ),
        (
            "graph_join_type",
            "5",
            "services[1].calls[0].join: invalid type: integer `5`, expected \"all\", \"any\" or { quorum = k }",
        ),
        (
            "graph_join_key",
            "{ quorm = 1 }",
            "services[1].calls[0].join.quorm: unknown field `quorm`, expected `quorum`",
        ),
    ] {
        check(
            name,
            Some(&graph_with(fan, &format!("{fan}\njoin = {join}"))),
            &[expect],
        );
    }
}

#[test]
fn service_names_are_column_safe_and_unique() {
    check(
        "graph_name_space",
        Some(&graph_with("name = \"db\"", "name = \"d b\"")),
        &[
            "services[2].name: must be 1 to 100 letters, digits, '_' or '-'",
            "(found \"d b\")",
        ],
    );
    check(
        "graph_name_twice",
        Some(&graph_with("name = \"cache\"", "name = \"db\"")),
        &["services[3].name: \"db\" is used by another service"],
    );
    check(
        "graph_name_missing",
        Some(&graph_with("name = \"db\"\n", "")),
        &["services[2]: missing field `name`"],
    );
}

#[test]
fn lists_of_services_and_calls_are_capped() {
    let calls = "[[services.calls]]\nto = \"back\"\n".repeat(17);
    check(
        "graph_too_many_calls",
        Some(&graph_with("[[services.calls]]\nto = \"back\"\n", &calls)),
        &["services[0].calls: at most 16 calls are allowed (found 17)"],
    );
    let services: String = (0..65)
        .map(|k| format!("[[services]]\nname = \"s{k}\"\nservers = 1\nservice_time = \"1ms\"\n"))
        .collect();
    check(
        "graph_too_many_services",
        Some(&graph_services(&services)),
        &["services: at most 64 services are allowed (found 65)"],
    );
}

#[test]
fn targets_of_fleets_and_outages_name_a_service() {
    let known = "(known: \"back\", \"cache\", \"db\", \"front\")";
    check(
        "graph_fleet_target",
        Some(&graph_with(
            "name = \"web\"",
            "name = \"web\"\ntarget = \"frnot\"",
        )),
        &["fleets[0].target: names no service: \"frnot\"", known],
    );
    check(
        "graph_two_roots",
        Some(&graph_plus(
            "[[services]]\nname = \"lonely\"\nservers = 1\nservice_time = \"1ms\"",
        )),
        &["fleets[0].target: is required: more than one service is called by no other (\"front\", \"lonely\"), so name the one this fleet calls"],
    );
    check(
        "graph_outage_target",
        Some(&format!(
            "{GRAPH}[[outages]]\nstart = \"1s\"\nend = \"2s\"\nmode = {{ kind = \"fail\" }}\ntarget = \"dbb\"\n"
        )),
        &["outages[0].target: names no service: \"dbb\"", known],
    );
    // With [dependency], the one service is called "dependency".
    check(
        "dependency_outage_target",
        Some(&GOOD.replace(
            "mode = { kind = \"fail\" }",
            "mode = { kind = \"fail\" }\ntarget = \"db\"",
        )),
        &["outages[0].target: names no service: \"db\" (known: \"dependency\")"],
    );
}

#[test]
fn a_service_needs_servers_and_a_service_time() {
    check(
        "graph_no_servers",
        Some(&graph_with(
            "name = \"db\"\nservers = 4\n",
            "name = \"db\"\n",
        )),
        &["services[2].servers: is required: the requests service \"db\" serves at once, its threads (a count or \"unlimited\")"],
    );
    check(
        "graph_no_service_time",
        Some(&graph_with(
            "name = \"db\"\nservers = 4\nservice_time = \"1ms\"\n",
            "name = \"db\"\nservers = 4\n",
        )),
        &["services[2].service_time: is required: the own work of service \"db\" per request"],
    );
}

#[test]
fn graph_values_of_the_wrong_shape_name_the_field() {
    for (name, text, expect) in [
        (
            "graph_to_number",
            graph_with("to = \"back\"", "to = 5"),
            "services[0].calls[0].to: invalid type: integer `5`, expected a service name (to = \"backend\") or a list of them",
        ),
        (
            "graph_to_mixed",
            graph_with("to = \"back\"", "to = [\"back\", 5]"),
            "services[0].calls[0].to[1]: invalid type: integer `5`, expected a string",
        ),
        (
            "graph_calls_string",
            graph_with(
                "[[services.calls]]\nto = \"back\"\n[[services.calls.layers]]\nmax_attempts = 2\n",
                "calls = \"x\"\n",
            ),
            "services[0].calls: invalid type: string \"x\", expected a list",
        ),
        (
            "graph_services_number",
            graph_services("services = 3"),
            "services: invalid type: integer `3`, expected a list",
        ),
        (
            "graph_hold_threads",
            graph_with("name = \"db\"", "name = \"db\"\nhold_threads = \"yes\""),
            "services[2].hold_threads: invalid type: string \"yes\", expected a boolean",
        ),
        (
            "graph_on_failure",
            graph_with("name = \"db\"", "name = \"db\"\non_failure = \"fail\""),
            "services[2].on_failure: unknown variant `fail`, expected `error` or `overloaded`",
        ),
        (
            "graph_call_key",
            graph_with("to = \"back\"", "to = \"back\"\nretries = 2"),
            "services[0].calls[0].retries: unknown field `retries`, expected one of `to`, `join`",
        ),
        (
            "graph_call_layer_preset",
            graph_with("max_attempts = 2", "preset = \"grcp\""),
            "services[0].calls[0].layers[0].preset: unknown preset \"grcp\"",
        ),
    ] {
        check(name, Some(&text), &[expect]);
    }
}

// "Did you mean" (issue 22): a misspelt key or choice gets the closest name offered.

#[test]
fn a_misspelt_key_or_choice_gets_the_closest_name() {
    let d = tempfile::tempdir().unwrap();
    let base = "duration = \"10s\"\n[dependency]\nservers = 2\nservice_time = \"10ms\"\n[[fleets]]\nname = \"a\"\narrival = { kind = \"poisson\", rate = 10 }\n";
    for (from, to, field, want) in [
        (
            "service_time =",
            "servic_time =",
            "dependency.servic_time",
            "did you mean `service_time`?",
        ),
        (
            "arrival =",
            "arival =",
            "fleets[0].arival",
            "did you mean `arrival`?",
        ),
        (
            "kind = \"poisson\"",
            "kind = \"poison\"",
            "fleets[0].arrival",
            "did you mean `poisson`?",
        ),
    ] {
        let p = d.path().join("typo.toml");
        std::fs::write(&p, base.replacen(from, to, 1)).unwrap();
        let o = crate::common::retrysim(d.path(), &["validate", p.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(2));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(field) && err.contains(want), "{err}");
    }
    // A key nothing is close to gets no guess.
    let p = d.path().join("far.toml");
    std::fs::write(
        &p,
        base.replacen("servers = 2", "servers = 2\ncolour = 1", 1),
    )
    .unwrap();
    let o = crate::common::retrysim(d.path(), &["validate", p.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("unknown field `colour`") && !err.contains("did you mean"),
        "{err}"
    );
    // `--set` keys are checked the same way.
    let p = d.path().join("ok.toml");
    std::fs::write(&p, base).unwrap();
    let o = crate::common::retrysim(
        d.path(),
        &[
            "explain",
            p.to_str().unwrap(),
            "--set",
            "dependency.sevrers=3",
        ],
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("did you mean `servers`?"), "{err}");
}

/// A queue fleet (`arrival = { kind = "queue" }`) that validates.
const QUEUE: &str = r#"
duration = "10s"
[dependency]
servers = 2
service_time = "10ms"
[[fleets]]
name = "worker"
arrival = { kind = "queue", rate = 100 }
consumers = 4
visibility_timeout = "30s"
max_receive_count = 5
"#;

#[test]
fn queue_fleet_rules_name_the_field_and_what_is_allowed() {
    for (name, text, expect) in [
        (
            "queue_key_elsewhere",
            GOOD.replace("rate = 100 }", "rate = 100 }\nconsumers = 3"),
            vec!["fleets[0].consumers", "queue fleet only"],
        ),
        (
            "queue_poison_elsewhere",
            GOOD.replace("rate = 100 }", "rate = 100 }\npoison = 0.1"),
            vec!["fleets[0].poison", "queue fleet only"],
        ),
        (
            "queue_no_consumers",
            QUEUE.replace("consumers = 4\n", ""),
            vec!["fleets[0].consumers", "required"],
        ),
        (
            "queue_zero_consumers",
            QUEUE.replace("consumers = 4", "consumers = 0"),
            vec!["fleets[0].consumers", "at least 1"],
        ),
        (
            "queue_no_rate",
            QUEUE.replace("rate = 100", "publish = \"poisson\""),
            vec!["fleets[0].arrival.rate", "required"],
        ),
        (
            "queue_burst_rate",
            QUEUE.replace(
                "rate = 100",
                "rate = 5, publish = \"burst\", at = \"1s\", count = 3",
            ),
            vec!["fleets[0].arrival.rate", "burst"],
        ),
        (
            "queue_burst_no_count",
            QUEUE.replace("rate = 100", "publish = \"burst\", at = \"1s\""),
            vec!["fleets[0].arrival.count", "required"],
        ),
        (
            "queue_count_poisson",
            QUEUE.replace("rate = 100", "rate = 100, count = 4"),
            vec!["fleets[0].arrival.count", "burst"],
        ),
        (
            "queue_bad_publish",
            QUEUE.replace("rate = 100", "rate = 100, publish = \"closed\""),
            vec!["publish", "poisson", "constant", "burst"],
        ),
        (
            "queue_zero_visibility",
            QUEUE.replace("\"30s\"", "\"0s\""),
            vec!["fleets[0].visibility_timeout", "positive"],
        ),
        (
            "queue_zero_receives",
            QUEUE.replace("max_receive_count = 5", "max_receive_count = 0"),
            vec!["fleets[0].max_receive_count", "at least 1"],
        ),
        (
            "queue_poison_above_one",
            QUEUE.replace(
                "max_receive_count = 5",
                "max_receive_count = 5\npoison = 1.5",
            ),
            vec!["fleets[0].poison", "between 0 and 1"],
        ),
        (
            "queue_clients",
            QUEUE.replace("rate = 100", "rate = 100, clients = 3"),
            vec!["fleets[0].arrival", "clients"],
        ),
        (
            "queue_burst_profile",
            QUEUE.replace(
                "rate = 100 }",
                "publish = \"burst\", at = \"1s\", count = 3 }\nload_profile = [{ at = \"2s\", multiplier = 2 }]",
            ),
            vec!["fleets[0].load_profile", "poisson and constant"],
        ),
        (
            "queue_occ",
            QUEUE.replace("servers = 2\nservice_time = \"10ms\"", "kind = \"occ\""),
            vec!["fleets[0].arrival.kind", "occ"],
        ),
    ] {
        check(name, Some(&text), &expect);
    }
}

#[test]
fn the_queue_scenario_is_accepted() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("queue.toml");
    std::fs::write(&p, QUEUE).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_retrysim"))
        .arg("validate")
        .arg(&p)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn bad_bulkheads_and_pools_name_the_field_and_the_rule() {
    let with =
        |keys: &str| GOOD.replace("[[fleets.layers]]", &format!("{keys}\n[[fleets.layers]]"));
    check(
        "bulkhead_zero",
        Some(&with("max_concurrent = 0")),
        &[
            "fleets[0].max_concurrent",
            "between 1 and 10000000 (found 0)",
        ],
    );
    check(
        "bulkhead_queue_alone",
        Some(&with("bulkhead_queue = 5")),
        &["fleets[0].bulkhead_queue", "needs max_concurrent"],
    );
    check(
        "pool_zero",
        Some(&with("pool = { size = 0 }")),
        &["fleets[0].pool.size", "between 1 and 10000000 (found 0)"],
    );
    check(
        "pool_unknown_key",
        Some(&with("pool = { size = 2, timeout = \"1s\" }")),
        &["unknown field `timeout`"],
    );
    let no_layers = GOOD.replace(
        "[[fleets.layers]]\nmax_attempts = 3\n",
        "pool = { size = 2 }\n",
    );
    check(
        "pool_without_layers",
        Some(&no_layers),
        &["fleets[0].pool", "at least one retry layer"],
    );
}

#[test]
fn a_layer_with_both_retries_and_hedging_is_refused_by_name() {
    let hedging = "hedging = { max_attempts = 3, delay = \"50ms\" }\n";
    check(
        "hedging_and_retries",
        Some(&GOOD.replace(
            "max_attempts = 3\n",
            &format!("max_attempts = 3\n{hedging}"),
        )),
        &[
            "fleets[0].layers[0].max_attempts",
            "must be 1 on a layer with hedging",
            "(found 3)",
        ],
    );
    check(
        "hedging_one_copy",
        Some(&GOOD.replace(
            "max_attempts = 3\n",
            "max_attempts = 1\nhedging = { max_attempts = 0 }\n",
        )),
        &[
            "fleets[0].layers[0].hedging.max_attempts",
            "between 1 and 16",
        ],
    );
    check(
        "hedging_with_timeout",
        Some(&GOOD.replace(
            "max_attempts = 3\n",
            &format!("max_attempts = 1\nattempt_timeout = \"1s\"\n{hedging}"),
        )),
        &[
            "fleets[0].layers[0].hedging",
            "cannot be combined with attempt_timeout",
        ],
    );
    check(
        "hedging_non_fatal",
        Some(&GOOD.replace(
            "max_attempts = 3\n",
            "max_attempts = 1\nhedging = { max_attempts = 2, non_fatal = [\"oops\"] }\n",
        )),
        &[
            "fleets[0].layers[0].hedging.non_fatal[0]",
            "unknown outcome class",
        ],
    );
}

/// Issue 38: a value of the wrong type is told in the file's terms (a table and its
/// keys, a `kind` and its choices, a whole number and its range), never Rust's
/// (`struct PoolFile`, `internally tagged enum ArrivalFile`, `u64`).
#[test]
fn a_value_of_the_wrong_type_says_what_the_file_must_hold_there() {
    let arrival = "arrival = { kind = \"poisson\", rate = 100 }";
    let layer = "max_attempts = 3";
    for (name, from, to, expect) in [
        (
            "pool_number",
            arrival,
            "arrival = { kind = \"poisson\", rate = 100 }\npool = 3",
            "fleets[0].pool: invalid type: integer `3`, expected a table with keys among `size`, `acquire_timeout`, `hold_during_backoff`",
        ),
        (
            "arrival_number",
            arrival,
            "arrival = 5",
            "fleets[0].arrival: invalid type: integer `5`, expected a table with `kind` one of `poisson`, `constant`, `closed`, `burst`, `queue`",
        ),
        (
            "clients_negative",
            arrival,
            "arrival = { kind = \"poisson\", rate = 100, clients = -3 }",
            "fleets[0].arrival.clients: invalid value: integer `-3`, expected a whole number from 0 to 9223372036854775807",
        ),
        (
            "rate_text",
            arrival,
            "arrival = { kind = \"poisson\", rate = \"x\" }",
            "fleets[0].arrival.rate: invalid type: string \"x\", expected a number",
        ),
        (
            "instances_fraction",
            layer,
            "max_attempts = 3\ninstances = 1.5",
            "fleets[0].layers[0].instances: invalid type: floating point `1.5`, expected a whole number from 0 to 9223372036854775807",
        ),
        (
            "jitter_number",
            layer,
            "max_attempts = 3\nbackoff = { kind = \"exponential\", base = \"1ms\", cap = \"1s\", jitter = 3 }",
            "fleets[0].layers[0].backoff.jitter: invalid type: integer `3`, expected one of `none`, `full`, `equal`, `decorrelated`",
        ),
        (
            "outage_kind_number",
            "start = \"2s\"",
            "kind = 3\nstart = \"2s\"",
            "outages[0].kind: invalid type: integer `3`, expected one of `window`, `markov`",
        ),
        (
            "reject_status_negative",
            "servers = 2",
            "servers = 2\nreject_status = -5",
            "dependency.reject_status: invalid value: integer `-5`, expected a whole number from 0 to 65535",
        ),
        (
            "layers_table",
            "[[fleets.layers]]\nmax_attempts = 3",
            "layers = { max_attempts = 3 }",
            "fleets[0].layers: invalid type: table, expected a list",
        ),
    ] {
        let text = GOOD.replacen(from, to, 1);
        assert_ne!(text, GOOD, "{name}");
        check(name, Some(&text), &[expect]);
    }
}

#[test]
fn a_bad_queue_policy_names_the_field_and_what_is_allowed() {
    for (name, policy, expect) in [
        (
            "queue_policy_kind",
            "queue_policy = { kind = \"red\" }",
            "dependency.queue_policy.kind: unknown variant `red`, expected one of `codel`, `codel_timeout`, `adaptive_lifo`",
        ),
        (
            "queue_policy_threshold",
            "queue_policy = { kind = \"adaptive_lifo\" }",
            "dependency.queue_policy.threshold: is required for kind = \"adaptive_lifo\"",
        ),
        (
            "queue_policy_interval",
            "queue_policy = { kind = \"codel\", target = \"200ms\" }",
            "dependency.queue_policy.interval: must be longer than target 200ms, as folly's Codel requires (found 100ms)",
        ),
        (
            "queue_policy_lifo",
            "queue_policy = { kind = \"adaptive_lifo\", threshold = 4 }\ndiscipline = \"lifo\"",
            "dependency.discipline: must be \"fifo\" or left out with queue_policy kind = \"adaptive_lifo\"",
        ),
        (
            "queue_policy_key",
            "queue_policy = { kind = \"codel\", threshold = 4 }",
            "dependency.queue_policy: unknown field `threshold`, expected `target` or `interval`",
        ),
    ] {
        let text = GOOD.replacen("servers = 2", &format!("servers = 2\n{policy}"), 1);
        check(name, Some(&text), &[expect]);
    }
}
