//! Command-line arguments: each bad value gets a message that names the flag, what was
//! typed and what is allowed (never clap's "use '-- -1'" tip), and exit code 2.

use std::process::Command;

fn retrysim(args: &[&str]) -> (Option<i32>, String) {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(
        d.path().join("s.toml"),
        "duration = \"2s\"\n[dependency]\nservers = 2\nservice_time = \"10ms\"\n[[fleets]]\nname = \"a\"\narrival = { kind = \"poisson\", rate = 10 }\n[sweep]\n\"fleets.0.arrival.rate\" = [10, 20]\n[[expect]]\nmetric = \"success_fraction\"\nmin = 0\n",
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_retrysim"))
        .current_dir(d.path())
        .args(args)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!err.contains("panicked"), "{err}");
    (out.status.code(), err)
}

#[test]
fn negative_and_out_of_range_numbers_are_named_with_what_is_allowed() {
    for (args, needles) in [
        (
            &["run", "--seed", "-1", "--no-plots", "-q", "--out", "o"][..],
            &["--seed", "'-1'", "from 0 to 9223372036854775807"][..],
        ),
        (
            &["run", "--seed", "18446744073709551615", "-q", "--out", "o"][..],
            &["--seed", "from 0 to"][..],
        ),
        (
            &["sweep", "s.toml", "--jobs", "-1", "-q"][..],
            &["--jobs", "'-1'", "from 1 to 1024"][..],
        ),
        (
            &["sweep", "s.toml", "--jobs", "0", "-q"][..],
            &["--jobs", "'0'", "from 1 to 1024"][..],
        ),
        (
            &["sweep", "s.toml", "--jobs", "100000", "-q"][..],
            &["--jobs", "'100000'", "from 1 to 1024"][..],
        ),
        (
            &["check", "s.toml", "--jobs", "0", "-q"][..],
            &["--jobs", "from 1 to 1024"][..],
        ),
        (
            &["sweep", "s.toml", "--shard", "-1/2", "-q"][..],
            &["--shard", "-1"][..],
        ),
    ] {
        let (code, err) = retrysim(args);
        assert_eq!(code, Some(2), "{args:?}: {err}");
        assert!(!err.contains("tip:"), "{args:?}: {err}");
        for n in needles {
            assert!(err.contains(n), "{args:?}: {err}");
        }
    }
}

/// Every option that takes a number, found in each subcommand's `--help`: a negative,
/// non-numeric or huge value reaches its parser (never clap's `-- -1` tip, "invalid
/// digit" or "number too large"), and the message names the flag, the value and what
/// is allowed.
#[test]
fn every_numeric_option_names_its_range_for_negative_non_numeric_and_huge_values() {
    let search = [
        "search",
        "s.toml",
        "--key",
        "dependency.servers",
        "--range",
        "1..4",
    ];
    // (subcommand's leading arguments, flag, what the message says is allowed)
    let options: &[(&[&str], &str, &str)] = &[
        (&["run"], "--seed", "from 0 to 9223372036854775807"),
        (&["run"], "--jobs", "from 1 to 1024"),
        (&["run"], "--trace", "from 1 to 10000"),
        (&["sweep", "s.toml"], "--jobs", "from 1 to 1024"),
        (
            &["sweep", "s.toml"],
            "--seed",
            "from 0 to 9223372036854775807",
        ),
        (&["sweep", "s.toml"], "--shard", "0 <= I < N"),
        (&["check", "s.toml"], "--jobs", "from 1 to 1024"),
        (
            &["check", "s.toml"],
            "--seed",
            "from 0 to 9223372036854775807",
        ),
        (&["check", "s.toml"], "--tolerance", "fraction"),
        (&search, "--jobs", "from 1 to 1024"),
        (&search, "--seed", "from 0 to 9223372036854775807"),
        (&search, "--tolerance", "a positive number"),
        (&search[..4], "--range", "LOW..HIGH"),
        (&["diff", "a", "b"], "--fail-on", "BOUND a signed number"),
    ];
    // Value names of options that take no number.
    let words = [
        "WHEN",
        "DIR",
        "KEY=VALUE",
        "FORMAT",
        "FILE.csv",
        "KEY",
        "NAME",
        "LINT",
    ];
    for sub in [
        "run",
        "sweep",
        "merge",
        "plot",
        "validate",
        "columns",
        "check",
        "search",
        "diff",
        "explain",
        "lints",
        "completions",
        "man",
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_retrysim"))
            .args([sub, "--help"])
            .output()
            .unwrap();
        let help = String::from_utf8_lossy(&out.stdout);
        for line in help.lines() {
            let t = line.trim_start();
            // `-j, --jobs <N>` or `--seed <N>`.
            let t = match t.split_once(", ") {
                Some((short, rest)) if short.len() == 2 && short.starts_with('-') => rest,
                _ => t,
            };
            let Some((flag, value)) = t.strip_prefix("--").and_then(|l| l.split_once(" <")) else {
                continue;
            };
            let value = value.split('>').next().unwrap_or("");
            if words.contains(&value) {
                continue;
            }
            let flag = format!("--{flag}");
            assert!(
                options
                    .iter()
                    .any(|(args, f, _)| args[0] == sub && *f == flag.as_str()),
                "{sub} {flag} <{value}> takes a number: add it to this test"
            );
        }
    }
    for (lead, flag, allowed) in options {
        for value in ["-1", "-5%", "abc", "99999999999999999999999"] {
            if *flag == "--tolerance" && lead[0] == "search" && value.starts_with('9') {
                continue; // a width of 10^23 is allowed
            }
            let mut args = lead.to_vec();
            args.extend([*flag, value, "-q"]);
            let (code, err) = retrysim(&args);
            assert_eq!(code, Some(2), "{args:?}: {err}");
            for wrong in ["tip:", "-- -", "invalid digit", "too large", "is not in"] {
                assert!(!err.contains(wrong), "{args:?}: {err}");
            }
            for n in [*flag, value, allowed] {
                assert!(err.contains(n), "{args:?} ({n}): {err}");
            }
        }
    }
}

#[test]
fn sweep_refuses_a_scenario_without_a_grid_before_running_it() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(
        d.path().join("one.toml"),
        "duration = \"2s\"\n[dependency]\nservers = 2\nservice_time = \"10ms\"\n[[fleets]]\nname = \"a\"\narrival = { kind = \"poisson\", rate = 10 }\n",
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_retrysim"))
        .current_dir(d.path())
        .args(["sweep", "one.toml", "--out", "o", "-q"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("has no [sweep] table"), "{err}");
    assert!(err.contains("retrysim run"), "{err}");
    assert!(!d.path().join("o").exists(), "nothing is written");
}

/// The exit code says what kind of error it was: a bad field is bad input (2), an
/// output folder the file system will not create is an I/O error (3).
#[test]
fn an_unwritable_output_folder_exits_3_and_a_bad_field_exits_2() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    std::fs::write(p.join("afile"), "not a folder").unwrap();
    std::fs::write(
        p.join("s.toml"),
        "duration = \"2s\"\n[dependency]\nservers = 2\nservice_time = \"10ms\"\n[[fleets]]\nname = \"a\"\narrival = { kind = \"poisson\", rate = 10 }\n[sweep]\n\"fleets.0.arrival.rate\" = [10, 20]\n",
    )
    .unwrap();
    let code = |args: &[&str]| {
        let out = crate::common::retrysim(p, args);
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(err.starts_with("error: "), "{args:?}: {err}");
        (out.status.code(), err)
    };
    for args in [
        &["run", "s.toml", "-q", "--no-plots", "--out", "afile/sub"][..],
        &["sweep", "s.toml", "-q", "--no-plots", "--out", "afile/sub"][..],
    ] {
        let (c, err) = code(args);
        assert_eq!(c, Some(3), "{args:?}: {err}");
        assert!(err.contains("afile"), "{args:?}: {err}");
    }
    // A bad field, and a refused folder (the file itself), stay bad input.
    let (c, err) = code(&["run", "s.toml", "-q", "--set", "duration=0s", "--out", "o"]);
    assert_eq!(c, Some(2), "{err}");
    assert!(err.contains("duration"), "{err}");
    let (c, err) = code(&["run", "s.toml", "-q", "--out", "afile"]);
    assert_eq!(c, Some(2), "{err}");
}

/// `--seed` reaches the scenario as a number, after every `--set` (also one of `seed`),
/// and the manifest records it as typed.
#[test]
fn seed_overrides_the_scenario_and_a_set_seed() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    let args = [
        "run",
        "--no-plots",
        "--set",
        "seed=5",
        "--seed",
        "9",
        "--set",
        "duration=30s",
        "--out",
        "o",
    ];
    let out = crate::common::retrysim(p, &args);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains(", seed 9, "), "{stdout}");
    let m = std::fs::read_to_string(p.join("o/manifest.toml")).unwrap();
    assert!(m.contains("\"--seed 9\""), "{m}");
}

// Service graphs (issue 19): `--set` and `[sweep]` keys address `[[services]]` fields.

const GRAPH: &str = "duration = \"2s\"\n\
[[services]]\nname = \"front\"\nservers = 4\nservice_time = \"1ms\"\n\
[[services.calls]]\nto = \"back\"\n\
[[services]]\nname = \"back\"\nservers = 4\nservice_time = \"1ms\"\n\
[[services.calls]]\nto = [\"db\", \"cache\"]\n[[services.calls.layers]]\nmax_attempts = 2\n\
[[services]]\nname = \"db\"\nservers = 4\nservice_time = \"1ms\"\n\
[[services]]\nname = \"cache\"\nservers = 4\nservice_time = \"1ms\"\n\
[[fleets]]\nname = \"a\"\narrival = { kind = \"poisson\", rate = 10 }\n";

#[test]
fn set_and_sweep_keys_reach_service_graph_fields() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    std::fs::write(p.join("g.toml"), GRAPH).unwrap();
    // --set reaches a service: the manifest records the value run.
    let out = crate::common::retrysim(
        p,
        &[
            "run",
            "g.toml",
            "-q",
            "--no-plots",
            "--set",
            "services.1.servers=7",
            "--out",
            "o",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let m: toml::Table =
        toml::from_str(&std::fs::read_to_string(p.join("o/manifest.toml")).unwrap()).unwrap();
    let services = m["scenario"]["services"].as_array().unwrap();
    assert_eq!(services[1]["name"].as_str(), Some("back"));
    assert_eq!(services[1]["servers"].as_integer(), Some(7));
    assert_eq!(services[0]["servers"].as_integer(), Some(4));
    // A bad --set value names the service's field.
    let out = crate::common::retrysim(
        p,
        &[
            "run",
            "g.toml",
            "-q",
            "--set",
            "services.2.servers=0",
            "--out",
            "bad",
        ],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("services[2].servers: must be at least 1 (found 0)"),
        "{err}"
    );
    assert!(!p.join("bad").exists());
    // A sweep over a service call's layer plans its values, and refuses a bad one by
    // the field it lands in.
    let key = "services.1.calls.0.layers.0.max_attempts";
    std::fs::write(
        p.join("s.toml"),
        format!("{GRAPH}[sweep]\n\"{key}\" = [1, 3]\n"),
    )
    .unwrap();
    let out = crate::common::retrysim(p, &["sweep", "s.toml", "--dry-run"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains(&format!("  {key} = [1, 3] (2 values)")),
        "{stdout}"
    );
    assert!(
        stdout.contains("2 cells × 1 replication = 2 runs"),
        "{stdout}"
    );
    std::fs::write(
        p.join("s.toml"),
        format!("{GRAPH}[sweep]\n\"{key}\" = [1, 0]\n"),
    )
    .unwrap();
    let out = crate::common::retrysim(p, &["sweep", "s.toml", "--dry-run"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!(
            "sweep key '{key}': value 0: services[1].calls[0].layers[0].max_attempts: must be at least 1 (found 0)"
        )),
        "{err}"
    );
}

/// `validate` refuses what `run`, `sweep` and `check` would refuse before running: a
/// cell of the [sweep] grid and an [[expect]] row, with the same message; a valid
/// scenario with both is ok.
#[test]
fn validate_checks_every_sweep_cell_and_expectation_as_check_does() {
    let d = tempfile::tempdir().unwrap();
    let base = "duration = \"2s\"\n[dependency]\nservers = 2\nservice_time = \"10ms\"\n[[fleets]]\nname = \"a\"\narrival = { kind = \"poisson\", rate = 10 }\n[[fleets.layers]]\nmax_attempts = 2\n";
    for (name, tail) in [
        ("good.toml", "[sweep]\n\"fleets.0.layers.0.max_attempts\" = [2, 3]\n[[expect]]\nmetric = \"success_fraction\"\nmin = 0\n"),
        ("cell.toml", "[sweep]\n\"fleets.0.layers.0.max_attempts\" = [2, 0]\n"),
        ("expect.toml", "[[expect]]\nmetric = \"nope\"\nmax = 1\n"),
    ] {
        std::fs::write(d.path().join(name), format!("{base}{tail}")).unwrap();
    }
    let run = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_retrysim"))
            .current_dir(d.path())
            .args(args)
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    assert_eq!(
        run(&["validate", "good.toml", "-q"]),
        (Some(0), String::new())
    );
    for (file, want) in [
        ("cell.toml", "error: scenario 'cell.toml': sweep key 'fleets.0.layers.0.max_attempts': value 0: fleets[0].layers[0].max_attempts: must be at least 1 (found 0)"),
        ("expect.toml", "error: scenario 'expect.toml': expect[0].metric: no summary column 'nope'"),
    ] {
        let (code, err) = run(&["validate", file]);
        assert_eq!(code, Some(2), "{err}");
        assert!(err.contains(want), "{want}\n{err}");
        let (code, check_err) = run(&["check", file]);
        assert_eq!(code, Some(2));
        assert_eq!(err, check_err, "validate and check say the same");
    }
}
