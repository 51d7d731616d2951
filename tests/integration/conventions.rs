//! The command line's conventions (issue 22): `-j` for `--jobs` and `--jobs` on `run`,
//! `sweep --dry-run` and the plan line, `-q` on every subcommand, examples in every
//! `--help`, `completions` and `man`, `--color`.

use std::path::Path;

use crate::common::{comparable, ok, retrysim};

/// Every file of a folder (not recursing), by name, in a comparable form.
fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, comparable(&p))
        })
        .collect();
    v.sort();
    v
}

#[test]
fn run_jobs_1_and_2_write_the_same_bytes() {
    let d = tempfile::tempdir().unwrap();
    for (j, out) in [("1", "one"), ("2", "two")] {
        ok(
            d.path(),
            &[
                "run",
                "--set",
                "replications=6",
                "-j",
                j,
                "--no-plots",
                "--out",
                out,
                "-q",
            ],
        );
    }
    let (a, b) = (files(&d.path().join("one")), files(&d.path().join("two")));
    assert!(a.iter().any(|(n, _)| n == "aggregate.csv"), "{a:?}");
    assert_eq!(a.len(), b.len());
    for ((na, ba), (nb, bb)) in a.iter().zip(&b) {
        assert_eq!(na, nb);
        assert!(ba == bb, "{na} differs between -j 1 and -j 2");
    }
    // Six replications, one summary row each.
    let summary = std::fs::read_to_string(d.path().join("one/summary.csv")).unwrap();
    assert_eq!(summary.lines().count(), 7);
}

#[test]
fn j_is_the_short_form_of_jobs_and_is_checked_like_it() {
    let d = tempfile::tempdir().unwrap();
    for sub in ["run", "sweep", "check", "search"] {
        let out = retrysim(d.path(), &[sub, "--help"]);
        let help = String::from_utf8_lossy(&out.stdout);
        assert!(help.contains("-j, --jobs <N>"), "{sub}: {help}");
        let out = retrysim(d.path(), &[sub, "x.toml", "-j", "0"]);
        assert_eq!(out.status.code(), Some(2), "{sub}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("--jobs <N>") && err.contains("from 1 to"),
            "{sub}: {err}"
        );
    }
}

const SWEEP: &str = r#"
name = "sw"
duration = "10s"
replications = 3
[dependency]
servers = 4
queue_limit = 50
service_time = { kind = "exponential", mean = "10ms" }
[[fleets]]
name = "web"
arrival = { kind = "poisson", rate = 300 }
[[fleets.layers]]
max_attempts = 3
[sweep]
"fleets.0.layers.0.max_attempts" = [1, 2, 4]
"fleets.0.arrival.rate" = { from = 100, to = 400, step = 150 }
"#;

#[test]
fn sweep_dry_run_prints_the_plan_and_writes_nothing() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("sw.toml"), SWEEP).unwrap();
    let out = retrysim(d.path(), &["sweep", "sw.toml", "--dry-run", "--out", "res"]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("fleets.0.layers.0.max_attempts = [1, 2, 4] (3 values)"),
        "{text}"
    );
    assert!(
        text.contains("fleets.0.arrival.rate = [100, 250, 400] (3 values)"),
        "{text}"
    );
    assert!(
        text.contains("9 cells × 3 replications = 27 runs → res/"),
        "{text}"
    );
    // (100 + 250 + 400)/s × 3 attempt limits × 10 s × 3 replications.
    assert!(text.contains("about 67500 logical requests"), "{text}");
    assert!(!d.path().join("res").exists());
    assert!(!d.path().join("output").exists());
    // The real sweep says the same line on stderr before it starts; -q silences it.
    let out = retrysim(
        d.path(),
        &[
            "sweep",
            "sw.toml",
            "--set",
            "duration=1s",
            "--no-plots",
            "--out",
            "res",
            "-j",
            "2",
        ],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("9 cells × 3 replications = 27 runs → res/"),
        "{err}"
    );
    let out = retrysim(
        d.path(),
        &[
            "sweep",
            "sw.toml",
            "--set",
            "duration=1s",
            "--no-plots",
            "--out",
            "q",
            "-q",
        ],
    );
    assert!(out.status.success());
    assert!(out.stderr.is_empty() && out.stdout.is_empty());
}

const SUBCOMMANDS: [&str; 16] = [
    "run",
    "sweep",
    "merge",
    "validate",
    "columns",
    "explain",
    "lints",
    "plot",
    "check",
    "search",
    "diff",
    "import",
    "presets",
    "reference",
    "completions",
    "man",
];

#[test]
fn every_subcommand_takes_q_and_quiet_ones_print_nothing_but_their_result() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    std::fs::write(p.join("sw.toml"), SWEEP).unwrap();
    for sub in SUBCOMMANDS {
        let out = retrysim(p, &[sub, "--help"]);
        let help = String::from_utf8_lossy(&out.stdout);
        assert!(help.contains("-q, --quiet"), "{sub}: {help}");
    }
    let quiet = |args: &[&str]| {
        let out = retrysim(p, args);
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        (out.stdout, out.stderr)
    };
    let silent = |args: &[&str]| {
        let (o, e) = quiet(args);
        assert!(
            o.is_empty() && e.is_empty(),
            "{args:?} printed: {}",
            String::from_utf8_lossy(&o)
        );
    };
    let set = ["--set", "duration=1s"];
    silent(&[&["run", "sw.toml", "-q", "--out", "r"][..], &set].concat());
    silent(&["plot", "r", "-q", "--format", "svg"]);
    silent(&["validate", "sw.toml", "-q"]);
    for s in ["0/2", "1/2"] {
        let o = format!("s{}", &s[..1]);
        silent(
            &[
                &[
                    "sweep",
                    "sw.toml",
                    "-q",
                    "--no-plots",
                    "--shard",
                    s,
                    "--out",
                    &o,
                ][..],
                &set,
            ]
            .concat(),
        );
    }
    silent(&["merge", "s0", "s1", "--out", "m", "--no-plots", "-q"]);
    assert!(p.join("m/aggregate.csv").is_file());
    // Subcommands whose only output is their result still print it.
    let (o, _) = quiet(&["columns", "-q"]);
    assert!(String::from_utf8_lossy(&o).starts_with("file,column,"));
    let (o, _) = quiet(&["explain", "sw.toml", "-q"]);
    assert!(!o.is_empty());
    let (o, _) = quiet(&["lints", "-q"]);
    assert!(String::from_utf8_lossy(&o).starts_with("id,why,"));
    // check and search had -q already: the help check above covers them.
}

#[test]
fn every_subcommand_help_ends_with_examples() {
    let d = tempfile::tempdir().unwrap();
    for sub in SUBCOMMANDS {
        let out = retrysim(d.path(), &[sub, "--help"]);
        let help = String::from_utf8_lossy(&out.stdout);
        let at = help
            .find("Examples:")
            .unwrap_or_else(|| panic!("{sub}: {help}"));
        let tail = &help[at..];
        assert!(tail.contains(&format!("  retrysim {sub}")), "{sub}: {tail}");
        assert!(
            !tail.contains("Options:"),
            "{sub}: examples are not at the end"
        );
    }
}

#[test]
fn the_crate_is_dual_licensed_and_ships_both_texts() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let read =
        |f: &str| std::fs::read_to_string(root.join(f)).unwrap_or_else(|e| panic!("{f}: {e}"));
    assert!(read("Cargo.toml").contains("license = \"MIT OR Apache-2.0\""));
    let mit = read("LICENSE-MIT");
    assert!(mit.starts_with("Copyright (c) 2026 the retrysim developers"));
    assert!(mit.contains("Permission is hereby granted, free of charge"));
    let apache = read("LICENSE-APACHE");
    assert!(apache.contains("Version 2.0, January 2004"));
    assert!(apache.contains("END OF TERMS AND CONDITIONS"));
    let readme = read("README.md");
    assert!(readme.contains("## Install") && readme.contains("cargo install --path ."));
    assert!(readme.contains("open output/default/report.html"));
}

#[test]
fn completions_for_each_shell_name_every_subcommand() {
    let d = tempfile::tempdir().unwrap();
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let out = retrysim(d.path(), &["completions", shell]);
        assert_eq!(out.status.code(), Some(0), "{shell}");
        let script = String::from_utf8_lossy(&out.stdout);
        assert!(script.len() > 1000, "{shell}: {script}");
        for sub in SUBCOMMANDS {
            assert!(script.contains(sub), "{shell} lacks {sub}");
        }
        // Options and their choices complete too.
        for word in ["dry-run", "fail-on", "color", "junit"] {
            assert!(script.contains(word), "{shell} lacks {word}");
        }
    }
    let shebang = retrysim(d.path(), &["completions", "bash"]);
    assert!(String::from_utf8_lossy(&shebang.stdout).contains("complete -F _retrysim"));
    let out = retrysim(d.path(), &["completions", "tcsh"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("invalid value 'tcsh'") && err.contains("bash"),
        "{err}"
    );
}

#[test]
fn man_prints_the_page_and_writes_one_per_subcommand() {
    let d = tempfile::tempdir().unwrap();
    let out = retrysim(d.path(), &["man"]);
    assert_eq!(out.status.code(), Some(0));
    let page = String::from_utf8_lossy(&out.stdout);
    assert!(page.contains(".TH retrysim 1"), "{page}");
    let mut at = 0;
    for section in [
        ".SH NAME",
        ".SH SYNOPSIS",
        ".SH DESCRIPTION",
        ".SH OPTIONS",
        ".SH SUBCOMMANDS",
        ".SH VERSION",
    ] {
        let i = page[at..]
            .find(section)
            .unwrap_or_else(|| panic!("{section} missing or out of order: {page}"));
        at += i;
    }
    for sub in SUBCOMMANDS {
        assert!(page.contains(&format!("retrysim\\-{sub}(1)")), "{sub}");
    }
    let out = retrysim(d.path(), &["man", "--out", "man1"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "wrote 17 manual pages to man1/\n"
    );
    let sweep = std::fs::read_to_string(d.path().join("man1/retrysim-sweep.1")).unwrap();
    assert!(sweep.contains(".TH retrysim-sweep 1"), "{sweep}");
    assert!(sweep.contains("\\-\\-dry\\-run"), "{sweep}");
    // The examples of --help are in the page.
    assert!(sweep.contains("Examples:"), "{sweep}");
    for sub in SUBCOMMANDS {
        assert!(
            d.path().join(format!("man1/retrysim-{sub}.1")).is_file(),
            "{sub}"
        );
    }
    assert!(!d.path().join("man1/retrysim-help.1").exists());
    // Its own pages are replaced; a file of that name it did not write is not, and
    // nothing else in the folder is written either.
    let out = retrysim(d.path(), &["man", "--out", "man1", "-q"]);
    assert_eq!(out.status.code(), Some(0));
    std::fs::write(d.path().join("man1/retrysim-run.1"), "someone else's page").unwrap();
    std::fs::remove_file(d.path().join("man1/retrysim-sweep.1")).unwrap();
    let out = retrysim(d.path(), &["man", "--out", "man1"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("retrysim-run.1") && err.contains("not a retrysim manual page"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(d.path().join("man1/retrysim-run.1")).unwrap(),
        "someone else's page"
    );
    assert!(!d.path().join("man1/retrysim-sweep.1").exists());
    std::fs::remove_file(d.path().join("man1/retrysim-run.1")).unwrap();
    // A folder under a file cannot be written: exit 3, naming it.
    std::fs::write(d.path().join("f"), "x").unwrap();
    let out = retrysim(d.path(), &["man", "--out", "f/man1", "-q"]);
    assert_eq!(out.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&out.stderr).contains("f/man1"));
}

/// Runs the binary with `NO_COLOR` set to `no_color` (or removed).
fn with_no_color(dir: &Path, no_color: Option<&str>, args: &[&str]) -> std::process::Output {
    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_retrysim"));
    c.current_dir(dir).args(args);
    match no_color {
        Some(v) => c.env("NO_COLOR", v),
        None => c.env_remove("NO_COLOR"),
    };
    c.output().unwrap()
}

#[test]
fn color_always_paints_help_errors_and_check_never_and_pipes_do_not() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    std::fs::write(p.join("sw.toml"), SWEEP).unwrap();
    let esc = |b: &[u8]| b.contains(&0x1b);
    // Help (clap's own output) follows --color, wherever it stands.
    for args in [
        &["--color", "always", "run", "--help"][..],
        &["run", "--help", "--color=always"],
    ] {
        let out = with_no_color(p, Some("1"), args);
        assert!(esc(&out.stdout), "{args:?}");
    }
    for (nc, flag) in [(None, "never"), (Some("1"), "auto"), (None, "auto")] {
        let out = with_no_color(p, nc, &["--color", flag, "run", "--help"]);
        assert!(out.status.success() && !esc(&out.stdout), "{nc:?} {flag}");
    }
    // clap's errors and ours.
    let out = with_no_color(p, None, &["--color", "always", "run", "--bogus"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(esc(&out.stderr));
    let out = with_no_color(p, None, &["run", "missing.toml", "--color", "always"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.starts_with("\x1b[1;31merror:\x1b[0m "), "{err}");
    // check's pass/FAIL words and summary line; nothing when piped (auto) or never.
    let default = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/default.toml");
    let default = default.to_str().unwrap();
    let check = |flag: &str| with_no_color(p, None, &["check", default, "--color", flag]);
    let always = check("always");
    let text = String::from_utf8_lossy(&always.stdout);
    assert!(text.contains("\x1b[32mpass\x1b[0m"), "{text}");
    assert!(text.contains("\x1b[32mcheck: "), "{text}");
    for flag in ["auto", "never"] {
        let out = check(flag);
        assert!(!esc(&out.stdout) && !esc(&out.stderr), "{flag}");
        // The same words, uncoloured.
        let plain = String::from_utf8_lossy(&out.stdout).into_owned();
        let stripped = text
            .replace("\x1b[32m", "")
            .replace("\x1b[1;31m", "")
            .replace("\x1b[0m", "");
        assert_eq!(plain, stripped);
    }
    let out = with_no_color(p, None, &["--color", "sometimes", "validate", "sw.toml"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("[possible values: auto, always, never]"));
}
