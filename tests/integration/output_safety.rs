//! Output safety: every file is written under a temporary name and renamed; a folder
//! holding results of another scenario (or results nobody can vouch for) is not
//! overwritten without `--force`, and with it, only what retrysim wrote is replaced.

use std::path::{Path, PathBuf};

use crate::common::{ok, retrysim};

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
        assert!(err.contains("holds no manifest.toml"), "{err}");
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
    // Even with --force, a file retrysim did not write is never overwritten: the
    // error names it and nothing changes.
    let before = tree(&p.join("bare"));
    let out = retrysim(
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
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("retrysim did not write it"), "{err}");
    assert_eq!(tree(&p.join("bare")), before);
    // Once the user moves them away, --force takes the folder.
    std::fs::remove_file(p.join("bare/manifest.toml")).unwrap();
    std::fs::rename(p.join("bare/summary.csv"), p.join("bare/mine.csv")).unwrap();
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
    assert!(p.join("bare/mine.csv").exists());
}

#[cfg(unix)]
#[test]
fn plot_and_sweep_refuse_a_plots_folder_that_is_a_symlink_and_never_overwrite_a_report() {
    let d = setup();
    let p = d.path();
    std::fs::write(
        p.join("s.toml"),
        format!("{A}[sweep]\n\"fleets.0.arrival.rate\" = [10, 20]\n"),
    )
    .unwrap();
    std::fs::create_dir(p.join("elsewhere")).unwrap();
    ok(p, &["sweep", "s.toml", "-q", "--no-plots", "--out", "sw"]);
    std::os::unix::fs::symlink(p.join("elsewhere"), p.join("sw/plots")).unwrap();
    for cmd in [
        &["plot", "sw"][..],
        &["sweep", "s.toml", "-q", "--out", "sw"][..],
    ] {
        let out = retrysim(p, cmd);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{cmd:?}: {err}");
        assert!(err.contains("symbolic link"), "{cmd:?}: {err}");
        assert_eq!(std::fs::read_dir(p.join("elsewhere")).unwrap().count(), 0);
    }
    // A report.html the user put beside a sweep's tables is theirs.
    std::fs::remove_file(p.join("sw/plots")).unwrap();
    std::fs::write(p.join("sw/report.html"), "my page").unwrap();
    for cmd in [
        &["plot", "sw"][..],
        &["sweep", "s.toml", "-q", "--out", "sw"][..],
    ] {
        let out = retrysim(p, cmd);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{cmd:?}: {err}");
        assert!(err.contains("retrysim did not write it"), "{cmd:?}: {err}");
    }
    assert_eq!(
        std::fs::read_to_string(p.join("sw/report.html")).unwrap(),
        "my page"
    );
    // Charts are listed as they are drawn; a redraw in another format replaces them.
    std::fs::remove_file(p.join("sw/report.html")).unwrap();
    ok(p, &["plot", "sw"]);
    let m = std::fs::read_to_string(p.join("sw/manifest.toml")).unwrap();
    assert!(m.contains("\"report.html\""), "{m}");
    assert!(m.contains(".png\""), "{m}");
    ok(p, &["plot", "sw", "--format", "svg"]);
    let m = std::fs::read_to_string(p.join("sw/manifest.toml")).unwrap();
    assert!(!m.contains(".png\""), "{m}");
    let pngs = std::fs::read_dir(p.join("sw/plots"))
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|x| x == "png")
        })
        .count();
    assert_eq!(pngs, 0, "the png charts were replaced by svg ones");
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
/// `text` up to its first unit-test module (`#[cfg(test)]` on a `mod` line).
fn test_modules_cut(text: &str) -> &str {
    let mut at = 0;
    while let Some(i) = text[at..].find("#[cfg(test)]") {
        let start = at + i;
        let rest = text[start + "#[cfg(test)]".len()..].trim_start();
        if rest.starts_with("mod ") {
            return &text[..start];
        }
        at = start + 1;
    }
    text
}

#[test]
fn unit_test_modules_are_cut_and_test_only_items_are_read() {
    let text = "fn a() {}\n#[cfg(test)]\nfn b() {}\n#[cfg(test)]\nmod tests {}\n";
    assert_eq!(
        test_modules_cut(text),
        "fn a() {}\n#[cfg(test)]\nfn b() {}\n"
    );
    assert_eq!(test_modules_cut("fn a() {}\n"), "fn a() {}\n");
}

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
            // The white-box tests (src/tests/) and the unit-test modules may write
            // fixtures however they like; the atomic writer's `AtomicFile::create(` is
            // the way to write. A test-only item elsewhere is still read.
            if rel.starts_with("tests/") {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            let code = test_modules_cut(&text);
            let code = code.replace("AtomicFile::create(", "");
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

/// Issue 15's repro: a folder without a manifest is not retrysim's, whatever it holds.
#[test]
fn a_folder_without_a_manifest_is_refused_and_force_leaves_its_files_alone() {
    let d = setup();
    let p = d.path();
    std::fs::create_dir_all(p.join("site/plots")).unwrap();
    std::fs::write(p.join("site/plots/photo.txt"), "keep").unwrap();
    std::fs::write(p.join("site/report.html"), "my page").unwrap();
    std::fs::write(p.join("site/.tmp-notes"), "mine").unwrap();
    let before = tree(&p.join("site"));
    for cmd in [
        &["run", "--out", "site", "--no-plots", "-q"][..],
        &["run", "a.toml", "--out", "site", "-q"][..],
    ] {
        let out = retrysim(p, cmd);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{cmd:?}: {err}");
        assert!(err.contains("holds no manifest.toml"), "{err}");
        assert!(err.contains("--force"), "{err}");
        assert_eq!(tree(&p.join("site")), before, "{cmd:?}: nothing may change");
    }
    ok(p, &["run", "--out", "site", "--no-plots", "-q", "--force"]);
    for (f, text) in [
        ("site/plots/photo.txt", "keep"),
        ("site/report.html", "my page"),
        ("site/.tmp-notes", "mine"),
    ] {
        assert_eq!(std::fs::read_to_string(p.join(f)).unwrap(), text, "{f}");
    }
    // Now the folder is retrysim's: a second run replaces only its own files.
    ok(p, &["run", "--out", "site", "--no-plots", "-q"]);
    assert_eq!(
        std::fs::read_to_string(p.join("site/plots/photo.txt")).unwrap(),
        "keep"
    );
}

#[test]
fn a_folder_is_one_folder_however_it_is_spelt() {
    let d = setup();
    let p = d.path();
    // `new/..` is this folder, which is not empty and not retrysim's.
    let out = retrysim(p, &["run", "a.toml", "--out", "new/..", "--no-plots", "-q"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(!p.join("summary.csv").exists());
    assert!(!p.join("manifest.toml").exists());
    // The same scenario by another path is the same scenario.
    ok(p, &["run", "a.toml", "--out", "out", "--no-plots", "-q"]);
    ok(
        p,
        &["run", "./a.toml", "--out", "./out/", "--no-plots", "-q"],
    );
    std::fs::create_dir(p.join("sub")).unwrap();
    ok(
        &p.join("sub"),
        &["run", "../a.toml", "--out", "../out", "--no-plots", "-q"],
    );
    // Other overrides and another seed replace the scenario's own results; the
    // manifest says which run the folder holds.
    ok(
        p,
        &[
            "run",
            "a.toml",
            "--out",
            "out",
            "--no-plots",
            "-q",
            "--seed",
            "7",
            "--set",
            "duration=\"3s\"",
        ],
    );
    let m = std::fs::read_to_string(p.join("out/manifest.toml")).unwrap();
    assert!(m.contains("--seed 7"), "{m}");
    assert!(m.contains("'--set duration=\"3s\"'"), "{m}");
    assert!(m.contains("seed = 7"), "{m}");
    let identity = std::fs::canonicalize(p.join("a.toml")).unwrap();
    assert!(
        m.contains(&format!("identity = \"{}\"", identity.display())),
        "{m}"
    );
    // Another scenario is still refused.
    let out = retrysim(p, &["run", "b.toml", "--out", "out", "--no-plots", "-q"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn the_manifest_lists_every_file_retrysim_wrote() {
    let d = setup();
    let p = d.path();
    ok(
        p,
        &[
            "run",
            "a.toml",
            "--out",
            "out",
            "--no-plots",
            "-q",
            "--set",
            "replications=2",
        ],
    );
    let m: toml::Table =
        toml::from_str(&std::fs::read_to_string(p.join("out/manifest.toml")).unwrap()).unwrap();
    let files: Vec<&str> = m["output"]["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    let mut on_disk: Vec<String> = tree(&p.join("out"))
        .into_iter()
        .map(|(f, _)| f.display().to_string())
        .collect();
    on_disk.sort();
    assert_eq!(
        files,
        on_disk.iter().map(String::as_str).collect::<Vec<_>>(),
        "listed vs written"
    );
    // A tampered list cannot make retrysim remove a file that is not its own.
    std::fs::write(p.join("keep.txt"), "mine").unwrap();
    let text = std::fs::read_to_string(p.join("out/manifest.toml"))
        .unwrap()
        .replace(
            "\"herd.csv\"",
            "\"herd.csv\", \"../keep.txt\", \"../a.toml\"",
        );
    std::fs::write(p.join("out/manifest.toml"), text).unwrap();
    ok(p, &["run", "a.toml", "--out", "out", "--no-plots", "-q"]);
    assert!(p.join("keep.txt").exists());
    assert!(p.join("a.toml").exists());
}

#[cfg(unix)]
#[test]
fn output_paths_that_are_symlinks_are_refused() {
    let d = setup();
    let p = d.path();
    std::fs::write(
        p.join("s.toml"),
        format!("{A}[sweep]\n\"fleets.0.arrival.rate\" = [10, 20]\n"),
    )
    .unwrap();
    std::fs::create_dir(p.join("elsewhere")).unwrap();
    // A sweep's runs/ that points elsewhere.
    ok(p, &["sweep", "s.toml", "--no-plots", "-q", "--out", "sw"]);
    std::fs::remove_dir_all(p.join("sw/runs")).unwrap();
    std::os::unix::fs::symlink(p.join("elsewhere"), p.join("sw/runs")).unwrap();
    let out = retrysim(p, &["sweep", "s.toml", "--no-plots", "-q", "--out", "sw"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("symbolic link"), "{err}");
    // A table that is a link to someone's file.
    ok(p, &["run", "a.toml", "--no-plots", "-q", "--out", "out"]);
    std::fs::write(p.join("elsewhere/precious.csv"), "mine").unwrap();
    std::fs::remove_file(p.join("out/summary.csv")).unwrap();
    std::os::unix::fs::symlink(p.join("elsewhere/precious.csv"), p.join("out/summary.csv"))
        .unwrap();
    let out = retrysim(p, &["run", "a.toml", "--no-plots", "-q", "--out", "out"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("symbolic link"), "{err}");
    assert_eq!(
        std::fs::read_to_string(p.join("elsewhere/precious.csv")).unwrap(),
        "mine"
    );
    assert!(std::fs::read_dir(p.join("elsewhere")).unwrap().count() == 1);
}

#[test]
fn a_file_given_as_the_output_folder_is_named_as_such() {
    let d = setup();
    let p = d.path();
    std::fs::write(p.join("afile"), "x").unwrap();
    let out = retrysim(p, &["run", "a.toml", "--no-plots", "-q", "--out", "afile"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("'afile' is a file, not a folder"), "{err}");
    assert_eq!(std::fs::read_to_string(p.join("afile")).unwrap(), "x");
}

/// `max_attempts = "unlimited"` has no N^L: the manifest says so (it read 4.29e9).
#[test]
fn the_manifest_says_unlimited_attempts_are_unlimited() {
    let d = setup();
    let p = d.path();
    std::fs::write(
        p.join("u.toml"),
        format!("{A}[[fleets.layers]]\nmax_attempts = \"unlimited\"\nattempt_timeout = \"50ms\"\n"),
    )
    .unwrap();
    ok(p, &["run", "u.toml", "-q", "--no-plots", "--out", "u"]);
    let m = std::fs::read_to_string(p.join("u/manifest.toml")).unwrap();
    assert!(m.contains("worst_case_attempts_web = \"unlimited\""), "{m}");
    ok(p, &["run", "a.toml", "-q", "--no-plots", "--out", "a"]);
    let m = std::fs::read_to_string(p.join("a/manifest.toml")).unwrap();
    assert!(m.contains("worst_case_attempts_web = 1.0"), "{m}");
}

/// Issue 38: a run into its own folder that is refused on its way (a folder the user
/// put where the new run writes `trace.json`) leaves the old results as they were:
/// they are replaced only once the new ones are complete.
#[test]
fn a_run_refused_on_its_way_leaves_the_old_results_as_they_were() {
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
            "replications=2",
        ],
    );
    std::fs::create_dir(p.join("out/trace.json")).unwrap();
    std::fs::write(p.join("out/trace.json/mine.txt"), "mine").unwrap();
    let before = tree(&p.join("out"));
    assert!(before.iter().any(|(f, _)| f.ends_with("report.html")));
    let out = retrysim(
        p,
        &[
            "run",
            "a.toml",
            "-q",
            "--no-plots",
            "--out",
            "out",
            "--trace",
            "5",
        ],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("trace.json"), "{err}");
    assert_eq!(tree(&p.join("out")), before, "the old results must stay");
    no_temporaries(&p.join("out"));
}

/// The sweep of [`A`] over two rates, written as `s.toml`.
fn sweep_file(p: &Path, rates: &str) {
    std::fs::write(
        p.join("s.toml"),
        format!("{A}[sweep]\n\"fleets.0.arrival.rate\" = [{rates}]\n"),
    )
    .unwrap();
}

/// The files `[output] files` of `dir`'s manifest lists.
fn listed(dir: &Path) -> Vec<String> {
    let m: toml::Table =
        toml::from_str(&std::fs::read_to_string(dir.join("manifest.toml")).unwrap()).unwrap();
    m["output"]["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect()
}

/// Issue 38: a sweep's charts of each metric against each key are drawn into
/// `plots/metrics/`; the folder stays retrysim's: it can be redrawn, resumed (also
/// after a kill while drawing) and forced, and its manifest keeps listing the charts.
#[test]
fn a_sweep_with_charts_in_plots_metrics_can_be_redrawn_resumed_and_forced() {
    let d = setup();
    let p = d.path();
    sweep_file(p, "10, 20");
    ok(p, &["sweep", "s.toml", "-q", "--out", "sw"]);
    let metrics = |dir: &Path| -> Vec<String> {
        listed(dir)
            .into_iter()
            .filter(|f| f.starts_with("plots/metrics/"))
            .collect()
    };
    let charts = metrics(&p.join("sw"));
    assert!(!charts.is_empty(), "{:?}", listed(&p.join("sw")));
    for f in &charts {
        assert!(p.join("sw").join(f).is_file(), "{f}");
    }
    // Redrawn, and resumed: the charts stay listed.
    ok(p, &["plot", "sw"]);
    assert_eq!(metrics(&p.join("sw")), charts);
    ok(p, &["sweep", "s.toml", "-q", "--out", "sw"]);
    assert_eq!(metrics(&p.join("sw")), charts);
    ok(p, &["sweep", "s.toml", "-q", "--no-plots", "--out", "sw"]);
    assert_eq!(metrics(&p.join("sw")), charts, "kept for the next drawing");
    // Killed while drawing: a chart missing, another half-written.
    std::fs::remove_file(p.join("sw").join(&charts[0])).unwrap();
    std::fs::write(p.join("sw/plots/metrics/.tmp-99999-0-x.png"), "half").unwrap();
    ok(p, &["sweep", "s.toml", "-q", "--out", "sw"]);
    assert!(p.join("sw").join(&charts[0]).is_file());
    no_temporaries(&p.join("sw"));
    // Another format replaces them; a user's file beside them stays.
    std::fs::write(p.join("sw/plots/metrics/mine.txt"), "mine").unwrap();
    ok(p, &["plot", "sw", "--format", "svg"]);
    let svg = metrics(&p.join("sw"));
    assert!(svg.iter().all(|f| f.ends_with(".svg")), "{svg:?}");
    for f in &charts {
        assert!(!p.join("sw").join(f).exists(), "{f} left");
    }
    // Another sweep, forced: the old charts go with it.
    sweep_file(p, "10, 30");
    ok(
        p,
        &[
            "sweep",
            "s.toml",
            "-q",
            "--no-plots",
            "--out",
            "sw",
            "--force",
        ],
    );
    for f in &svg {
        assert!(!p.join("sw").join(f).exists(), "{f} left");
    }
    assert_eq!(
        std::fs::read_to_string(p.join("sw/plots/metrics/mine.txt")).unwrap(),
        "mine"
    );
    std::fs::remove_file(p.join("sw/plots/metrics/mine.txt")).unwrap();
    ok(p, &["sweep", "s.toml", "-q", "--out", "sw"]);
    assert!(!metrics(&p.join("sw")).is_empty());
    // A run forced over it removes the charts and their folders.
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
    assert!(!p.join("sw/plots").exists(), "plots/ is left");
    no_temporaries(&p.join("sw"));
}
