//! What the playground (web/) calls, natively: a scenario given as text loads as the
//! file of that name does, `run_tables` renders the rows `retrysim run` writes, and
//! `plot::run_charts` reads them as the charts do. (The page itself, in WebAssembly and
//! Chromium, is web/test/playground.mjs's.)

use std::path::Path;

use crate::{load_scenario, load_scenario_text, run_tables, run_to_folder, Overrides, Target};

fn scenario_file(name: &str) -> String {
    std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("scenarios")
            .join(name),
    )
    .unwrap()
}

/// A table's header and its rows of run 0.
fn run0(text: &str) -> String {
    let mut lines = text.lines();
    let mut out = format!("{}\n", lines.next().unwrap());
    for l in lines.filter(|l| l.starts_with("0,")) {
        out.push_str(l);
        out.push('\n');
    }
    out
}

#[test]
fn run_tables_renders_the_rows_retrysim_run_writes_for_run_0() {
    // A plain run, one with replications and a [sweep] (run takes its base point), a
    // service graph and a queue fleet: each lays its tables out its own way.
    for name in [
        "default.toml",
        "thundering_herd.toml",
        "cascade.toml",
        "queue_consumer.toml",
    ] {
        let d = tempfile::tempdir().unwrap();
        let file = d.path().join(name);
        std::fs::write(&file, scenario_file(name)).unwrap();
        let o = Overrides::default();
        let loaded = load_scenario(Some(&file), &o).unwrap();
        let out = d.path().join("out");
        let target = Target {
            scenario: Some(&file),
            overrides: &o,
            out: Some(&out),
            force: false,
        };
        run_to_folder(&loaded, &target).unwrap();
        let read = |f: &str| std::fs::read_to_string(out.join(f)).unwrap();
        let t = run_tables(&loaded, 0).unwrap();
        let summary = read("summary.csv");
        let mut rdr = csv::Reader::from_reader(summary.as_bytes());
        let header: Vec<String> = rdr.headers().unwrap().iter().map(String::from).collect();
        let row: Vec<String> = rdr
            .records()
            .next()
            .unwrap()
            .unwrap()
            .iter()
            .map(String::from)
            .collect();
        assert_eq!(t.summary_columns, header, "{name}");
        assert_eq!(t.summary_values, row, "{name}");
        assert_eq!(t.timeseries, run0(&read("timeseries.csv")), "{name}");
        assert_eq!(t.herd, run0(&read("herd.csv")), "{name}");
    }
}

#[test]
fn run_tables_runs_the_replication_asked_for_and_refuses_one_the_scenario_lacks() {
    let text = scenario_file("thundering_herd.toml");
    let loaded = load_scenario_text("herd.toml", &text, &Overrides::default()).unwrap();
    let second = run_tables(&loaded, 2).unwrap();
    assert_eq!(second.result.replication, 2);
    assert_eq!(second.result.seed, crate::run::replication_seed(1, 2));
    let e = run_tables(&loaded, 3).unwrap_err().to_string();
    assert_eq!(
        e,
        "scenario 'herd.toml': replications: the scenario has 3 replications: replication 3 is not one of them"
    );
}

#[test]
fn a_scenario_given_as_text_loads_and_fails_as_the_file_of_its_name() {
    let d = tempfile::tempdir().unwrap();
    let good = scenario_file("default.toml");
    let cases = [
        good.clone(),
        "name = \"x\"\nduration = \n".to_string(),
        good.replace("max_attempts = 3", "max_atempts = 3"),
        good.replace("servers = 10", "servers = -1"),
        String::new(),
    ];
    let o = Overrides {
        sets: vec!["duration=\"20s\"".into()],
        seed: Some(9),
    };
    for text in cases {
        let file = d.path().join("playground.toml");
        std::fs::write(&file, &text).unwrap();
        let shown = file.display().to_string();
        let from_file = load_scenario(Some(&file), &o);
        let from_text = load_scenario_text(&shown, &text, &o);
        match (from_file, from_text) {
            (Ok(a), Ok(b)) => {
                assert_eq!(format!("{:?}", a.scenario), format!("{:?}", b.scenario));
                assert_eq!(b.scenario.name, "default");
                assert_eq!(b.scenario.seed, 9);
            }
            (Err(a), Err(b)) => {
                assert_eq!(crate::error::chain(&a), crate::error::chain(&b));
                assert_eq!(a.exit_code(), b.exit_code());
            }
            (a, b) => panic!("file {:?} against text {:?}", a.err(), b.err()),
        }
    }
    // A scenario without a name is named for the file, as if read from it.
    let unnamed = good.replace("name = \"default\"\n", "");
    let l = load_scenario_text("lesson-3.toml", &unnamed, &Overrides::default()).unwrap();
    assert_eq!(l.scenario.name, "lesson-3");
}

#[test]
fn run_charts_reads_the_series_the_run_charts_draw() {
    let loaded = load_scenario(None, &Overrides::default()).unwrap();
    let t = run_tables(&loaded, 0).unwrap();
    let capacity = loaded.scenario.dependency.capacity();
    let c = crate::plot::run_charts(&t.timeseries, &t.herd, capacity).unwrap();
    // 60 s in 1 s buckets; the outage from 20 s to 30 s.
    assert_eq!(c.series.t.len(), 60);
    assert_eq!(c.outages, vec![(20.0, 30.0)]);
    assert_eq!(c.capacity, Some(1000.0));
    let labels: Vec<&str> = c.phase.iter().map(|b| b.label.as_str()).collect();
    assert_eq!(
        labels,
        ["before the outage", "during the outage", "after the outage"]
    );
    // Each branch starts where the one before it ended.
    assert_eq!(c.phase[1].points[0], *c.phase[0].points.last().unwrap());
    assert!(c.breaker_open.is_empty() && c.budget_exhausted.is_empty());
    // The herd is herd.csv's rows, 10 ms apart.
    assert_eq!(c.herd.t.len(), t.herd.lines().count() - 1);
    assert!((c.herd.width() - 0.01).abs() < 1e-12);
    // Unlimited servers have no capacity line.
    let c = crate::plot::run_charts(&t.timeseries, &t.herd, Some(f64::INFINITY)).unwrap();
    assert_eq!(c.capacity, None);
    // A malformed table is refused with the file's name.
    let e = crate::plot::run_charts("run,t\n0,x\n", &t.herd, None).unwrap_err();
    assert!(
        e.to_string().starts_with("cannot read 'timeseries.csv'"),
        "{e}"
    );
}
