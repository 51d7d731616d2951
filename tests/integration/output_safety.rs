//! Output safety: every file is written under a temporary name and renamed; a folder
//! holding results of another scenario (or results nobody can vouch for) is not
//! overwritten without `--force`, and with it, only what retrysim wrote is replaced.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const A: &str = r#"
name = "alpha"
duration = "5s"
[dependency]
servers = 2
service_time = "10ms"
[[fleets]]
name = "web"
arrival = { kind = "poisson", rate = 50 }
"#;

fn retrysim(dir: &Path, args: &[&str]) -> Output {
    let out = Command::new(env!("CARGO_BIN_EXE_retrysim"))
        .current_dir(dir)
        .args(args)
        .output()
        .expect("run retrysim");
    assert!(!String::from_utf8_lossy(&out.stderr).contains("panicked"));
    out
}

fn ok(dir: &Path, args: &[&str]) {
    let out = retrysim(dir, args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn setup() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("a.toml"), A).unwrap();
    std::fs::write(d.path().join("b.toml"), A.replace("alpha", "beta")).unwrap();
    d
}

/// Every file under `dir`, relative, with its bytes.
fn tree(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let bytes = std::fs::read(&p).unwrap();
                out.push((p.strip_prefix(dir).unwrap().to_path_buf(), bytes));
            }
        }
    }
    out.sort();
    out
}

fn no_temporaries(dir: &Path) {
    for (p, _) in tree(dir) {
        assert!(
            !p.components()
                .any(|c| c.as_os_str().to_string_lossy().starts_with(".tmp-")),
            "a temporary file is left: {p:?}"
        );
    }
}

#[test]
fn run_refuses_a_folder_of_another_scenario_without_force_and_replaces_it_with_force() {
    let d = setup();
    let p = d.path();
    ok(p, &["run", "a.toml", "-q", "--out", "out"]);
    let before = tree(&p.join("out"));
    let out = retrysim(p, &["run", "b.toml", "-q", "--no-plots", "--out", "out"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("holds the results of scenario 'alpha'"),
        "{err}"
    );
    assert!(err.contains("--force"), "{err}");
    assert_eq!(tree(&p.join("out")), before, "nothing may change");
    ok(
        p,
        &[
            "run",
            "b.toml",
            "-q",
            "--no-plots",
            "--out",
            "out",
            "--force",
        ],
    );
    let manifest = std::fs::read_to_string(p.join("out/manifest.toml")).unwrap();
    assert!(manifest.contains("scenario = \"beta\""), "{manifest}");
    // alpha's plots and report are gone with it: the folder holds beta alone.
    assert!(!p.join("out/plots").exists());
    assert!(!p.join("out/report.html").exists());
    no_temporaries(&p.join("out"));
}

#[test]
fn run_refuses_a_sweep_folder_and_results_without_a_manifest() {
    let d = setup();
    let p = d.path();
    std::fs::write(
        p.join("s.toml"),
        format!("{A}[sweep]\n\"fleets.0.arrival.rate\" = [10, 20]\n"),
    )
    .unwrap();
    ok(p, &["sweep", "s.toml", "-q", "--no-plots", "--out", "sw"]);
    let out = retrysim(p, &["run", "a.toml", "-q", "--no-plots", "--out", "sw"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("holds the results of a sweep"));
    ok(
        p,
        &[
            "run",
            "a.toml",
            "-q",
            "--no-plots",
            "--out",
            "sw",
            "--force",
        ],
    );
    assert!(
        !p.join("sw/runs").exists(),
        "the sweep's runs are replaced too"
    );
    assert!(!p.join("sw/aggregate.csv").exists());

    std::fs::create_dir(p.join("bare")).unwrap();
    std::fs::write(p.join("bare/summary.csv"), "someone's results\n").unwrap();
    for cmd in ["run", "sweep"] {
        let file = if cmd == "run" { "a.toml" } else { "s.toml" };
        let out = retrysim(p, &[cmd, file, "-q", "--no-plots", "--out", "bare"]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{cmd}: {err}");
        assert!(
            err.contains("holds results without a manifest.toml"),
            "{err}"
        );
        assert_eq!(
            std::fs::read_to_string(p.join("bare/summary.csv")).unwrap(),
            "someone's results\n"
        );
    }
    std::fs::write(p.join("bare/manifest.toml"), "not = [toml").unwrap();
    let out = retrysim(p, &["run", "a.toml", "-q", "--no-plots", "--out", "bare"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("manifest.toml retrysim cannot read"), "{err}");
    ok(
        p,
        &[
            "run",
            "a.toml",
            "-q",
            "--no-plots",
            "--out",
            "bare",
            "--force",
        ],
    );
}

#[test]
fn force_replaces_only_what_retrysim_wrote() {
    let d = setup();
    let p = d.path();
    ok(p, &["run", "a.toml", "-q", "--out", "out"]);
    std::fs::write(p.join("out/notes.txt"), "mine").unwrap();
    ok(
        p,
        &[
            "run",
            "b.toml",
            "-q",
            "--no-plots",
            "--out",
            "out",
            "--force",
        ],
    );
    assert_eq!(
        std::fs::read_to_string(p.join("out/notes.txt")).unwrap(),
        "mine"
    );
}

#[test]
fn a_rerun_into_its_own_folder_leaves_no_stale_files() {
    let d = setup();
    let p = d.path();
    ok(
        p,
        &[
            "run",
            "a.toml",
            "-q",
            "--out",
            "out",
            "--set",
            "replications=3",
        ],
    );
    assert!(p.join("out/aggregate.csv").exists());
    assert!(p.join("out/plots").exists());
    // The same scenario again, one replication and no plots: nothing of the first
    // run may remain to be read as this one's.
    ok(p, &["run", "a.toml", "-q", "--no-plots", "--out", "out"]);
    assert!(!p.join("out/aggregate.csv").exists());
    assert!(!p.join("out/plots").exists());
    let summary = std::fs::read_to_string(p.join("out/summary.csv")).unwrap();
    assert_eq!(summary.lines().count(), 2);
}

#[test]
fn leftovers_of_a_killed_writer_are_removed_by_the_next_run_or_sweep() {
    let d = setup();
    let p = d.path();
    ok(p, &["run", "a.toml", "-q", "--out", "out"]);
    std::fs::write(p.join("out/.tmp-99999-0-summary.csv"), "half").unwrap();
    std::fs::write(p.join("out/plots/.tmp-99999-1-timeseries.png"), "half").unwrap();
    ok(p, &["run", "a.toml", "-q", "--no-plots", "--out", "out"]);
    no_temporaries(&p.join("out"));

    std::fs::write(
        p.join("s.toml"),
        format!("{A}[sweep]\n\"fleets.0.arrival.rate\" = [10, 20]\n"),
    )
    .unwrap();
    ok(p, &["sweep", "s.toml", "-q", "--no-plots", "--out", "sw"]);
    std::fs::write(p.join("sw/.tmp-99999-2-aggregate.csv"), "half").unwrap();
    std::fs::create_dir(p.join("sw/runs/.tmp-99999-3-000001")).unwrap();
    ok(p, &["sweep", "s.toml", "-q", "--out", "sw"]);
    no_temporaries(&p.join("sw"));
}

/// Every place in the source that opens a file for writing. Only two may: the atomic
/// writer (a temporary file, then a rename) and the run store (files inside a
/// temporary folder, then a rename of the folder).
#[test]
fn no_code_writes_a_file_in_place() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let allowed = ["export/atomic.rs", "sweep/store.rs"];
    let patterns = [
        "fs::write(",
        "File::create(",
        "OpenOptions",
        "BitMapBackend::new(",
        "SVGBackend::new(",
        "fs::copy(",
    ];
    let mut offenders = Vec::new();
    let mut stack = vec![src.clone()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let path = e.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let rel = path
                .strip_prefix(&src)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            let text = std::fs::read_to_string(&path).unwrap();
            // Unit tests may write fixtures however they like.
            let code = text.split("#[cfg(test)]").next().unwrap_or("");
            for pat in patterns {
                if code.contains(pat) && !allowed.contains(&rel.as_str()) {
                    offenders.push(format!("{rel}: {pat}"));
                }
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "write through crate::export::write_atomic instead: {offenders:?}"
    );
    let store = std::fs::read_to_string(src.join("sweep/store.rs")).unwrap();
    assert!(store.contains("std::fs::write(tmp.join(name)"));
}
