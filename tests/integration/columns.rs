//! `retrysim columns`: the column dictionary lists exactly the columns the run writes,
//! in file order, each with a unit, a kind and a description.

use std::path::Path;

use crate::common::retrysim;

/// `(file, column, unit, kind, description)` rows of `retrysim columns ARGS`.
fn dictionary(dir: &Path, args: &[&str]) -> Vec<Vec<String>> {
    let mut all = vec!["columns"];
    all.extend_from_slice(args);
    let out = retrysim(dir, &all);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut r = csv::Reader::from_reader(out.stdout.as_slice());
    assert_eq!(
        r.headers().unwrap().iter().collect::<Vec<_>>(),
        ["file", "column", "unit", "kind", "description"]
    );
    r.records()
        .map(|rec| rec.unwrap().iter().map(String::from).collect())
        .collect()
}

fn header(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap();
    let first = text.lines().next().unwrap_or_default().to_string();
    csv::Reader::from_reader(first.as_bytes())
        .headers()
        .unwrap()
        .iter()
        .map(String::from)
        .collect()
}

#[test]
fn the_dictionary_of_a_scenario_is_exactly_the_columns_its_run_writes() {
    let crate_root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let d = tempfile::tempdir().unwrap();
    // Three fleets of up to three layers: per-layer and per-fleet columns by name.
    let scn = crate_root.join("scenarios/amplification.toml");
    let scn = scn.to_str().unwrap();
    let out = d.path().join("out");
    let o = retrysim(
        d.path(),
        &[
            "run",
            scn,
            "--no-plots",
            "--out",
            out.to_str().unwrap(),
            "--set",
            "duration=\"5s\"",
        ],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let dict = dictionary(d.path(), &[scn, "--set", "duration=\"5s\""]);
    for file in [
        "summary.csv",
        "timeseries.csv",
        "herd.csv",
        "attempts_by_ordinal.csv",
    ] {
        let listed: Vec<String> = dict
            .iter()
            .filter(|e| e[0] == file)
            .map(|e| e[1].clone())
            .collect();
        assert_eq!(listed, header(&out.join(file)), "{file}");
    }
    assert!(dict.iter().any(|e| e[1] == "attempts_layer_2"));
    assert!(dict
        .iter()
        .any(|e| e[1].starts_with("fleet_") && e[1].ends_with("_logical")));
    for e in &dict {
        assert!(!e[2].is_empty() && !e[4].is_empty(), "{e:?}");
        assert!(
            ["identity", "count", "measure", "flag"].contains(&e[3].as_str()),
            "{e:?}"
        );
    }
}

#[test]
fn without_a_scenario_the_dictionary_lists_the_templates() {
    let d = tempfile::tempdir().unwrap();
    let dict = dictionary(d.path(), &[]);
    let names: Vec<&str> = dict.iter().map(|e| e[1].as_str()).collect();
    assert!(names.contains(&"attempts_layer_<i>"), "{names:?}");
    assert!(names.contains(&"fleet_<name>_logical"), "{names:?}");
    assert!(names.contains(&"amplification"));
    // A bad scenario is bad input.
    let o = retrysim(d.path(), &["columns", "missing.toml"]);
    assert_eq!(o.status.code(), Some(2));
}
