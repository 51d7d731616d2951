//! The column dictionary: every results folder's `columns.csv`, and `retrysim columns`,
//! list exactly the columns of the folder's files, in file and header order, each with
//! a unit, a kind and a description.

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
    parse(&out.stdout)
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

/// `(file, column, ...)` rows of a CSV dictionary's text.
fn parse(text: &[u8]) -> Vec<Vec<String>> {
    let mut r = csv::Reader::from_reader(text);
    assert_eq!(
        r.headers().unwrap().iter().collect::<Vec<_>>(),
        ["file", "column", "unit", "kind", "description"]
    );
    r.records()
        .map(|rec| rec.unwrap().iter().map(String::from).collect())
        .collect()
}

/// Checks that a folder's `columns.csv` lists exactly the CSV files the folder holds,
/// each with exactly its header, in order; returns the dictionary's rows.
fn check_folder(dir: &Path) -> Vec<Vec<String>> {
    let dict = parse(&std::fs::read(dir.join("columns.csv")).unwrap());
    let mut files: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".csv"))
        .collect();
    files.sort();
    let mut listed: Vec<String> = dict.iter().map(|e| e[0].clone()).collect();
    listed.sort();
    listed.dedup();
    assert_eq!(listed, files, "{}", dir.display());
    for file in &files {
        let columns: Vec<String> = dict
            .iter()
            .filter(|e| &e[0] == file)
            .map(|e| e[1].clone())
            .collect();
        assert_eq!(
            columns,
            header(&dir.join(file)),
            "{file} in {}",
            dir.display()
        );
    }
    for e in &dict {
        assert!(!e[2].is_empty() && !e[4].is_empty(), "{e:?}");
        assert!(
            ["identity", "count", "measure", "flag"].contains(&e[3].as_str()),
            "{e:?}"
        );
    }
    dict
}

#[test]
fn every_folder_holds_the_dictionary_of_exactly_its_files() {
    let crate_root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    // Three fleets of up to three layers: per-layer and per-fleet columns by name; a
    // sweep over two keys.
    let scn = crate_root.join("scenarios/amplification.toml");
    let scn = scn.to_str().unwrap();
    let short = ["--set", "duration=\"5s\""];
    let go = |args: &[&str]| {
        let mut all = args.to_vec();
        all.extend(short);
        let o = retrysim(p, &all);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    };
    go(&["run", scn, "--no-plots", "-q", "--out", "one"]);
    go(&[
        "run",
        scn,
        "--no-plots",
        "-q",
        "--out",
        "two",
        "--set",
        "replications=2",
    ]);
    go(&["sweep", scn, "--no-plots", "-q", "--out", "grid"]);
    go(&[
        "sweep",
        scn,
        "--no-plots",
        "-q",
        "--out",
        "s0",
        "--shard",
        "0/2",
    ]);
    go(&[
        "sweep",
        scn,
        "--no-plots",
        "-q",
        "--out",
        "s1",
        "--shard",
        "1/2",
    ]);
    let o = retrysim(p, &["merge", "s0", "s1", "--out", "merged"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));

    let one = check_folder(&p.join("one"));
    assert!(one.iter().all(|e| !e[0].starts_with("aggregate")));
    assert!(one.iter().any(|e| e[1] == "attempts_layer_2"));
    assert!(one
        .iter()
        .any(|e| e[1].starts_with("fleet_") && e[1].ends_with("_logical")));
    let two = check_folder(&p.join("two"));
    let low = two
        .iter()
        .find(|e| e[0] == "aggregate.csv" && e[1] == "success_fraction_ci_low")
        .expect("the interval of success_fraction");
    assert!(low[4].contains("wilson"), "{low:?}");
    let grid = check_folder(&p.join("grid"));
    assert!(grid
        .iter()
        .any(|e| e[0] == "summary.csv" && e[1].starts_with("param_")));
    assert!(grid
        .iter()
        .any(|e| e[0] == "aggregate.csv" && e[1].starts_with("param_")));
    check_folder(&p.join("s0"));
    check_folder(&p.join("merged"));
    assert_eq!(
        std::fs::read(p.join("merged/columns.csv")).unwrap(),
        std::fs::read(p.join("grid/columns.csv")).unwrap()
    );
    // `retrysim columns SCENARIO` prints the dictionary of the folder it writes: the
    // sweep's for a scenario with a [sweep].
    let mut args = vec!["columns", scn];
    args.extend(short);
    let o = retrysim(p, &args);
    assert!(o.status.success());
    assert_eq!(o.stdout, std::fs::read(p.join("grid/columns.csv")).unwrap());
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

/// The book's columns page is the catalog, as `retrysim columns --markdown` prints it.
/// `RETRYSIM_BLESS=1` rewrites the page's tables (refused under CI).
#[test]
fn the_book_lists_every_column_with_its_unit() {
    let d = tempfile::tempdir().unwrap();
    let o = retrysim(d.path(), &["columns", "--markdown"]);
    assert!(o.status.success());
    let want = String::from_utf8(o.stdout).unwrap();
    crate::common::pinned_section(
        "reference/columns.md",
        "columns",
        &want,
        "retrysim columns --markdown",
        "columns::the_book_lists",
    );
    // Every column of a run's files has a row there, with a unit.
    let dict = dictionary(d.path(), &[]);
    for e in &dict {
        assert!(
            want.contains(&format!("| `{}` | {} |", e[1], e[2])),
            "{e:?}"
        );
    }
}

#[test]
fn a_service_graph_folder_lists_services_csv_and_its_bytes_do_not_depend_on_threads_or_shards() {
    let crate_root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    let scn = crate_root.join("scenarios/cascade.toml");
    let scn = scn.to_str().unwrap();
    let short = ["--set", "duration=\"25s\"", "--set", "replications=2"];
    let go = |args: &[&str]| {
        let mut all = args.to_vec();
        all.extend(short);
        let o = retrysim(p, &all);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    };
    go(&["sweep", scn, "--no-plots", "-q", "--out", "j1", "-j", "1"]);
    go(&["sweep", scn, "--no-plots", "-q", "--out", "j2", "-j", "2"]);
    for (i, s) in ["0/2", "1/2"].iter().enumerate() {
        let out = format!("s{i}");
        go(&[
            "sweep",
            scn,
            "--no-plots",
            "-q",
            "--out",
            &out,
            "--shard",
            s,
        ]);
    }
    let o = retrysim(p, &["merge", "s0", "s1", "--out", "merged"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let dict = check_folder(&p.join("j1"));
    assert!(dict
        .iter()
        .any(|e| e[0] == "services.csv" && e[1] == "threads_busy"));
    assert!(dict
        .iter()
        .any(|e| e[0] == "summary.csv" && e[1] == "service_db_attempts_per_request"));
    assert!(dict
        .iter()
        .any(|e| e[0] == "aggregate.csv" && e[1] == "service_db_shed_mean"));
    check_folder(&p.join("merged"));
    for f in [
        "services.csv",
        "summary.csv",
        "aggregate.csv",
        "columns.csv",
    ] {
        let want = std::fs::read(p.join("j1").join(f)).unwrap();
        for other in ["j2", "merged"] {
            assert_eq!(
                std::fs::read(p.join(other).join(f)).unwrap(),
                want,
                "{other}/{f}"
            );
        }
    }
    // 2 cells × 2 replications × 25 buckets × 3 services, and a header.
    let rows = std::fs::read_to_string(p.join("j1/services.csv")).unwrap();
    assert_eq!(rows.lines().count(), 1 + 2 * 2 * 25 * 3);
    // A [dependency] folder has no services.csv.
    let plain = crate_root.join("scenarios/default.toml");
    let o = retrysim(
        p,
        &[
            "run",
            plain.to_str().unwrap(),
            "--no-plots",
            "-q",
            "--out",
            "plain",
        ],
    );
    assert!(o.status.success());
    assert!(!p.join("plain/services.csv").exists());
}
