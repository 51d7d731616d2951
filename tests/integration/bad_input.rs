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
