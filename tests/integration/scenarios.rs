//! The scenario library: every `scenarios/*.toml` and every scenario of a folder of its
//! own with the files it reads (`scenarios/config_gate/gate.toml`), found at test time,
//! validates,
//! explains, carries expectations and meets them under `retrysim check`, and
//! `scenarios/README.md` lists exactly the files that exist.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Every `scenarios/*.toml` and `scenarios/*/*.toml`, as paths relative to the crate
/// root, sorted.
fn scenario_files() -> Vec<String> {
    let toml = |dir: &Path| -> Vec<PathBuf> {
        std::fs::read_dir(dir)
            .expect("a folder of scenarios")
            .map(|e| e.expect("a directory entry").path())
            .filter(|p| p.extension().is_some_and(|x| x == "toml"))
            .collect()
    };
    let top = root().join("scenarios");
    let mut paths = toml(&top);
    for e in std::fs::read_dir(&top).expect("scenarios/ exists") {
        let p = e.expect("a directory entry").path();
        if p.is_dir() && p.file_name().is_some_and(|n| n != "data") {
            paths.extend(toml(&p));
        }
    }
    let mut files: Vec<String> = paths
        .iter()
        .map(|p| {
            let rel = p.strip_prefix(root()).expect("under the crate root");
            rel.to_string_lossy().replace('\\', "/")
        })
        .collect();
    files.sort();
    assert!(
        files.len() >= 10,
        "expected the scenario library, found {files:?}"
    );
    files
}

fn retrysim(args: &[&str]) -> Output {
    let out = Command::new(env!("CARGO_BIN_EXE_retrysim"))
        .current_dir(root())
        .args(args)
        .output()
        .expect("the binary runs");
    assert!(
        !String::from_utf8_lossy(&out.stderr).contains("panicked"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn text(o: &Output) -> String {
    format!(
        "stdout:\n{}\nstderr:\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

#[test]
fn every_scenario_validates_and_explains() {
    for f in scenario_files() {
        let o = retrysim(&["validate", &f]);
        assert_eq!(o.status.code(), Some(0), "validate {f}\n{}", text(&o));
        let o = retrysim(&["explain", &f]);
        assert_eq!(o.status.code(), Some(0), "explain {f}\n{}", text(&o));
    }
}

#[test]
fn every_scenario_states_its_answer_with_expectations() {
    for f in scenario_files() {
        let src = std::fs::read_to_string(root().join(&f)).unwrap();
        assert!(
            src.starts_with('#'),
            "{f} must open with a comment that states its question"
        );
        let table: toml::Table = toml::from_str(&src).unwrap_or_else(|e| panic!("{f}: {e}"));
        let n = table
            .get("expect")
            .and_then(|v| v.as_array())
            .map_or(0, |a| a.len());
        assert!(n > 0, "{f} has no [[expect]]: it must prove its answer");
    }
}

#[test]
fn every_scenario_meets_its_expectations() {
    let files = scenario_files();
    let mut args = vec!["check", "--jobs", "2"];
    args.extend(files.iter().map(String::as_str));
    let o = retrysim(&args);
    let out = text(&o);
    assert_eq!(o.status.code(), Some(0), "retrysim check failed\n{out}");
    assert!(
        !out.contains("nothing to check"),
        "a scenario without expectations\n{out}"
    );
    let summary = String::from_utf8_lossy(&o.stdout)
        .lines()
        .rfind(|l| l.starts_with("check: "))
        .map(str::to_string)
        .expect("a summary line");
    assert!(summary.ends_with(", 0 failed"), "{summary}");
    for f in &files {
        assert!(out.contains(&format!("\n{f} ")), "no row for {f}\n{out}");
    }
}

/// The capacity plan's expectations hold for nearly every set of its 8 seeds (its
/// header gives the odds over 400 and 2000), not only for the ones it ships with: here
/// two other base seeds. The expectations it had before (16 servers recover in all 4
/// seeds, 14 stay metastable in all 4) failed with each of these.
#[test]
fn the_capacity_plan_holds_for_other_seeds() {
    for seed in ["3", "4"] {
        let o = retrysim(&[
            "check",
            "--jobs",
            "2",
            "--seed",
            seed,
            "scenarios/capacity_planning.toml",
        ]);
        assert_eq!(o.status.code(), Some(0), "seed {seed}\n{}", text(&o));
    }
}

#[test]
fn the_scenarios_readme_lists_every_scenario_and_no_other() {
    let readme = std::fs::read_to_string(root().join("scenarios/README.md")).unwrap();
    let listed: Vec<String> = readme
        .lines()
        .filter(|l| l.starts_with("| `"))
        .filter_map(|l| {
            let name = l.strip_prefix("| `")?.split('`').next()?;
            name.ends_with(".toml").then(|| name.to_string())
        })
        .collect();
    let listed_set: BTreeSet<String> = listed.iter().cloned().collect();
    assert_eq!(
        listed.len(),
        listed_set.len(),
        "a file listed twice: {listed:?}"
    );
    let files: BTreeSet<String> = scenario_files()
        .iter()
        .map(|f| f.strip_prefix("scenarios/").unwrap_or(f).to_string())
        .collect();
    let missing: Vec<_> = files.difference(&listed_set).collect();
    let extra: Vec<_> = listed_set.difference(&files).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "scenarios/README.md must have one `| `NAME.toml` | question |` row per scenario file: \
         missing {missing:?}, listed but absent {extra:?}"
    );
}
