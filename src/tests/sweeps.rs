//! Sweeps: bytes independent of threads and shard split, resumable, merge refusals,
//! common random numbers across cells.

use std::path::Path;
use std::process::{Command, Output};

use crate::tests::common::{capped, ok, retrysim};

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
attempt_timeout = "100ms"
backoff = { kind = "exponential", base = "10ms", cap = "1s", jitter = "full" }
[[outages]]
start = "3s"
end = "5s"
mode = { kind = "fail" }
[sweep]
"fleets.0.layers.0.max_attempts" = [1, 2, 4]
"fleets.0.arrival.rate" = { from = 100, to = 400, step = 150 }
"#;

const FILES: [&str; 10] = [
    "summary.csv",
    "columns.csv",
    "aggregate.csv",
    "aggregate_long.csv",
    "timeseries.csv",
    "herd.csv",
    "attempts_by_ordinal.csv",
    "manifest.toml",
    "runs/000007/summary.csv",
    "runs/000007/attempts_by_ordinal.csv",
];

/// The same tables (manifests as [`crate::tests::common::comparable`] compares them).
fn same_files(a: &Path, b: &Path) {
    let read = |d: &Path, f: &str| crate::tests::common::comparable(&d.join(f));
    for f in FILES {
        let x = read(a, f);
        let y = read(b, f);
        assert!(
            x == y,
            "{f} differs between {} and {}",
            a.display(),
            b.display()
        );
    }
}

fn setup() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("sw.toml"), SWEEP).unwrap();
    d
}

#[test]
fn a_sweep_writes_the_same_bytes_with_one_or_two_jobs() {
    let d = setup();
    let p = d.path();
    ok(
        p,
        &[
            "sweep",
            "sw.toml",
            "--no-plots",
            "-q",
            "--jobs",
            "1",
            "--out",
            "j1",
        ],
    );
    ok(
        p,
        &[
            "sweep",
            "sw.toml",
            "--no-plots",
            "-q",
            "--jobs",
            "2",
            "--out",
            "j2",
        ],
    );
    same_files(&p.join("j1"), &p.join("j2"));
    let summary = std::fs::read_to_string(p.join("j1/summary.csv")).unwrap();
    assert_eq!(summary.lines().count(), 1 + 9 * 3);
    let header = summary.lines().next().unwrap();
    assert!(header.ends_with("param_fleets.0.layers.0.max_attempts,param_fleets.0.arrival.rate"));
    let aggregate = std::fs::read_to_string(p.join("j1/aggregate.csv")).unwrap();
    assert_eq!(aggregate.lines().count(), 1 + 9);
}

#[test]
fn one_two_and_three_shards_merge_into_the_unsharded_bytes() {
    let d = setup();
    let p = d.path();
    ok(p, &["sweep", "sw.toml", "--no-plots", "-q", "--out", "all"]);
    for n in 1..=3 {
        let mut dirs = vec![];
        for i in 0..n {
            let dir = format!("s{n}-{i}");
            ok(
                p,
                &[
                    "sweep",
                    "sw.toml",
                    "--no-plots",
                    "-q",
                    "--shard",
                    &format!("{i}/{n}"),
                    "--out",
                    &dir,
                ],
            );
            dirs.push(dir);
        }
        let merged = format!("m{n}");
        let mut args = vec!["merge", "--no-plots", "--out", &merged];
        // Shards in reverse order: the order given must not matter.
        args.extend(dirs.iter().rev().map(String::as_str));
        ok(p, &args);
        same_files(&p.join("all"), &p.join(&merged));
    }
}

#[test]
fn merge_refuses_incomplete_duplicate_and_foreign_shards() {
    let d = setup();
    let p = d.path();
    for i in 0..2 {
        ok(
            p,
            &[
                "sweep",
                "sw.toml",
                "--no-plots",
                "-q",
                "--shard",
                &format!("{i}/2"),
                "--out",
                &format!("a{i}"),
            ],
        );
    }
    ok(
        p,
        &[
            "sweep",
            "sw.toml",
            "--no-plots",
            "-q",
            "--shard",
            "1/2",
            "--seed",
            "9",
            "--out",
            "seed9",
        ],
    );
    ok(
        p,
        &[
            "sweep",
            "sw.toml",
            "--no-plots",
            "-q",
            "--shard",
            "1/2",
            "--set",
            "duration=\"11s\"",
            "--out",
            "other",
        ],
    );
    for (args, needle) in [
        (vec!["a0"], "incomplete"),
        (vec!["a0", "a0"], "given twice"),
        (vec!["a0", "seed9"], "seed"),
        (vec!["a0", "other"], "different scenario"),
        (vec!["a0", "nowhere"], "manifest"),
    ] {
        let mut a = vec!["merge", "--no-plots", "--out", "m"];
        a.extend(args.iter());
        let out = retrysim(p, &a);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains(needle),
            "{args:?}: expected {needle:?} in {err}"
        );
    }
}

#[test]
fn a_sweep_resumes_from_the_runs_on_disk_with_the_same_bytes() {
    let d = setup();
    let p = d.path();
    ok(
        p,
        &["sweep", "sw.toml", "--no-plots", "-q", "--out", "full"],
    );
    ok(
        p,
        &["sweep", "sw.toml", "--no-plots", "-q", "--out", "part"],
    );
    // Lose a third of the runs and the tables, as if it had been stopped part-way.
    for run in (0..27).step_by(3) {
        std::fs::remove_dir_all(p.join(format!("part/runs/{run:06}"))).unwrap();
    }
    for f in [
        "summary.csv",
        "aggregate.csv",
        "aggregate_long.csv",
        "timeseries.csv",
    ] {
        std::fs::remove_file(p.join("part").join(f)).unwrap();
    }
    let out = retrysim(p, &["sweep", "sw.toml", "--no-plots", "--out", "part"]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("9 run here (18 resumed from disk)"));
    same_files(&p.join("full"), &p.join("part"));
}

#[test]
fn a_folder_of_another_scenario_is_not_overwritten_without_force() {
    let d = setup();
    let p = d.path();
    ok(p, &["sweep", "sw.toml", "--no-plots", "-q", "--out", "x"]);
    let out = retrysim(
        p,
        &[
            "sweep",
            "sw.toml",
            "--no-plots",
            "-q",
            "--set",
            "duration=\"12s\"",
            "--out",
            "x",
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--force"));
    ok(
        p,
        &[
            "sweep",
            "sw.toml",
            "--no-plots",
            "-q",
            "--set",
            "duration=\"12s\"",
            "--out",
            "x",
            "--force",
        ],
    );
    let out = retrysim(p, &["run", "--no-plots", "-q", "--out", "x"]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "a run must not overwrite a sweep folder"
    );
}

#[test]
fn every_cell_sees_the_same_arrivals_in_the_same_replication() {
    let d = setup();
    let p = d.path();
    ok(p, &["sweep", "sw.toml", "--no-plots", "-q", "--out", "crn"]);
    let text = std::fs::read_to_string(p.join("crn/summary.csv")).unwrap();
    let mut rdr = csv::Reader::from_reader(text.as_bytes());
    let h = rdr.headers().unwrap().clone();
    let idx = |n: &str| h.iter().position(|c| c == n).unwrap();
    let (rate, rep, logical, seed) = (
        idx("param_fleets.0.arrival.rate"),
        idx("replication"),
        idx("logical"),
        idx("seed"),
    );
    let rows: Vec<csv::StringRecord> = rdr.records().map(|r| r.unwrap()).collect();
    for a in &rows {
        for b in &rows {
            if a[rate] == b[rate] && a[rep] == b[rep] {
                assert_eq!(
                    a[logical], b[logical],
                    "same rate and replication: same arrivals"
                );
                assert_eq!(a[seed], b[seed]);
            }
        }
    }
}

#[test]
fn bad_sweeps_are_rejected_with_the_key_named() {
    let d = setup();
    let p = d.path();
    for (sweep, needle) in [
        ("\"fleets.0.layers.0.max_attempts\" = []", "empty"),
        (
            "\"fleets.0.layers.0.max_attempts\" = [2, \"lots\"]",
            "fleets.0.layers.0.max_attempts",
        ),
        ("\"fleets.0.typo\" = [1]", "typo"),
        (
            "a = { from = 1, to = 2000, step = 1 }\nb = { from = 1, to = 2000, step = 1 }",
            "cap",
        ),
    ] {
        let text = format!(
            "{}{}\n",
            SWEEP.split("[sweep]").next().unwrap(),
            format_args!("[sweep]\n{sweep}")
        );
        std::fs::write(p.join("bad.toml"), text).unwrap();
        let out = retrysim(
            p,
            &["sweep", "bad.toml", "--no-plots", "-q", "--out", "bad"],
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{sweep}: {err}");
        assert!(
            err.contains(needle),
            "{sweep}: expected {needle:?} in {err}"
        );
        assert!(!p.join("bad").exists());
    }
}

/// Runs the Slurm script as one array task (or the merge) would: its own process.
fn slurm(dir: &Path, args: &[&str], task: Option<u32>) -> Output {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/slurm-array.sbatch");
    let mut c = Command::new("bash");
    c.current_dir(dir)
        .arg(&script)
        .args(args)
        .env("RETRYSIM", crate::tests::common::bin());
    if let Some(t) = task {
        // A resubmitted or stepped array: Slurm's own MIN and COUNT say nothing of
        // the shard, so they are set to mislead.
        c.env("SLURM_ARRAY_TASK_ID", t.to_string())
            .env("SLURM_ARRAY_TASK_MIN", "1")
            .env("SLURM_ARRAY_TASK_COUNT", "2");
    }
    c.output().unwrap()
}

#[test]
fn the_slurm_array_script_runs_shards_and_merges_them_into_the_unsharded_bytes() {
    let d = setup();
    let p = d.path();
    ok(p, &["sweep", "sw.toml", "--no-plots", "-q", "--out", "all"]);
    // Task 0 first, then tasks 1 and 2 as a resubmission (`--array=1,2`) would start
    // them, each its own process.
    for i in [0, 1, 2] {
        let out = slurm(p, &["run", "sw.toml", "slurm", "3"], Some(i));
        assert!(
            out.status.success(),
            "task {i}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(p.join(format!("slurm/shard-{i}/manifest.toml")).exists());
    }
    let out = slurm(p, &["run", "sw.toml", "slurm", "3"], Some(3));
    assert_eq!(out.status.code(), Some(2), "task 3 is no shard of 3");
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a shard of 3"));
    let out = slurm(p, &["merge", "sw.toml", "slurm", "3"], None);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The merge step draws plots too; the tables must match byte for byte.
    same_files(&p.join("all"), &p.join("slurm/merged"));
}

/// The book's cluster example sweeps a scenario with a grid, with as many array tasks
/// as the merge expects; its command lines run as written (shards as processes).
#[test]
fn the_book_cluster_example_names_a_sweep_and_one_shard_count() {
    let readme = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/src/guide/sweeps.md"),
    )
    .unwrap();
    let lines: Vec<&str> = readme
        .lines()
        .filter(|l| {
            l.contains("deploy/slurm-array.sbatch run")
                || l.contains("deploy/slurm-array.sbatch merge")
        })
        .collect();
    assert_eq!(lines.len(), 2, "{lines:?}");
    for l in &lines {
        let words: Vec<&str> = l.split_whitespace().collect();
        let at = words
            .iter()
            .position(|w| *w == "deploy/slurm-array.sbatch")
            .unwrap();
        let scenario = words[at + 2];
        let shards = words[at + 4].trim_end_matches(')');
        let text =
            std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(scenario)).unwrap();
        assert!(text.contains("\n[sweep]"), "{scenario} has no [sweep]");
        if l.contains(" run ") {
            assert!(
                l.contains(&format!("--array=0-{}", shards.parse::<u32>().unwrap() - 1)),
                "{l}"
            );
        }
        assert_eq!(shards, "8", "{l}");
    }
}

#[test]
fn the_kubernetes_job_runs_one_shard_per_completion_index() {
    let yaml = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/k8s-indexed-job.yaml"),
    )
    .unwrap();
    assert!(yaml.contains("completionMode: Indexed"));
    let completions: u32 = yaml
        .lines()
        .find_map(|l| l.trim().strip_prefix("completions: "))
        .unwrap()
        .parse()
        .unwrap();
    assert!(yaml.contains(&format!("{{ name: SHARDS, value: \"{completions}\" }}")));
    assert!(yaml.contains("--shard \"${JOB_COMPLETION_INDEX}/${SHARDS}\""));
    assert!(yaml.contains("retrysim merge /results/shard-* --out /results/merged"));
    // The image is one anybody can build: the Dockerfile's, tagged with the version.
    let tag = format!("image: retrysim:{}", env!("CARGO_PKG_VERSION"));
    assert_eq!(
        yaml.matches("image: ").count(),
        yaml.matches(&tag).count(),
        "{yaml}"
    );
    assert!(yaml.contains(&tag));
    let docker =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("Dockerfile")).unwrap();
    let stages: Vec<&str> = docker.lines().filter(|l| l.starts_with("FROM ")).collect();
    assert_eq!(
        stages.len(),
        2,
        "a build stage and a runtime stage: {stages:?}"
    );
    assert!(stages[0].starts_with("FROM rust:") && stages[0].ends_with(" AS build"));
    assert!(stages[1].contains("-slim"), "{stages:?}");
    assert!(docker.contains("cargo build --profile dist --locked"));
    assert!(docker.contains("COPY --from=build /src/target/dist/retrysim /usr/local/bin/retrysim"));
    // Every file the build stage copies exists, and it copies what Cargo.toml names.
    for l in docker
        .lines()
        .filter(|l| l.starts_with("COPY ") && !l.contains("--from"))
    {
        let words: Vec<&str> = l.split_whitespace().collect();
        for src in &words[1..words.len() - 1] {
            assert!(
                Path::new(env!("CARGO_MANIFEST_DIR")).join(src).exists(),
                "Dockerfile copies {src}, which does not exist"
            );
        }
    }
    // Cargo loads every member of the workspace: the build stage copies their manifests.
    let manifest: toml::Table =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml"))
            .unwrap()
            .parse()
            .unwrap();
    for member in manifest["workspace"]["members"].as_array().unwrap() {
        let member = member.as_str().unwrap();
        if member != "." {
            let copy = format!("COPY {member}/Cargo.toml ./{member}/");
            assert!(docker.contains(&copy), "Dockerfile lacks `{copy}`");
        }
    }
    // Its Rust is at least the crate's rust-version.
    let rust: Vec<u32> = stages[0]["FROM rust:".len()..]
        .split(['-', ' '])
        .next()
        .unwrap()
        .split('.')
        .map(|x| x.parse().unwrap())
        .collect();
    let cargo =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml")).unwrap();
    let need: Vec<u32> = cargo
        .lines()
        .find_map(|l| l.strip_prefix("rust-version = "))
        .unwrap()
        .trim_matches('"')
        .split('.')
        .map(|x| x.parse().unwrap())
        .collect();
    assert!(rust >= need, "{rust:?} < {need:?}");
}

const TINY: &str = r#"
name = "tiny"
duration = "2s"
[dependency]
servers = 2
service_time = "10ms"
[[fleets]]
name = "web"
arrival = { kind = "poisson", rate = 20 }
[[fleets.layers]]
max_attempts = 2
"#;

/// A 160,000-cell grid: a shard plans it in memory proportional to its values and
/// builds only its own cells (before: 3.2 GB and 13-16 s for any shard).
#[test]
fn a_shard_of_a_huge_grid_plans_lazily() {
    let d = setup();
    let p = d.path();
    std::fs::write(
        p.join("huge.toml"),
        format!("{TINY}[sweep]\n\"fleets.0.arrival.rate\" = {{ from = 1, to = 400, step = 1 }}\n\"dependency.servers\" = {{ from = 1, to = 400, step = 1 }}\n"),
    )
    .unwrap();
    let out = capped(
        p,
        600,
        &[
            "sweep",
            "huge.toml",
            "--shard",
            "0/160000",
            "--no-plots",
            "-q",
            "--out",
            "h",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let summary = std::fs::read_to_string(p.join("h/summary.csv")).unwrap();
    assert_eq!(summary.lines().count(), 2, "one run: {summary}");
    let m = std::fs::read_to_string(p.join("h/manifest.toml")).unwrap();
    assert!(m.contains("cells = 160000"), "{m}");
}

/// `run` writes replications as they finish: memory does not grow with their number
/// (before: about 75 KB a run, kept to the end).
#[test]
fn many_replications_run_in_bounded_memory() {
    let d = setup();
    let p = d.path();
    std::fs::write(p.join("t.toml"), TINY).unwrap();
    let out = capped(
        p,
        400,
        &[
            "run",
            "t.toml",
            "--no-plots",
            "-q",
            "--out",
            "r",
            "--set",
            "replications=20000",
            "--set",
            "duration=\"200ms\"",
            "--set",
            "bucket=\"10ms\"",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let summary = std::fs::read_to_string(p.join("r/summary.csv")).unwrap();
    assert_eq!(summary.lines().count(), 20001);
    let agg = std::fs::read_to_string(p.join("r/aggregate.csv")).unwrap();
    assert_eq!(agg.lines().count(), 2);
    // `check` keeps each run's summary row, not its series or histogram (before:
    // about 44 KB a run here, 0.9 GB for these 20,000).
    std::fs::write(
        p.join("c.toml"),
        format!("{TINY}[[expect]]\nmetric = \"attempts\"\nmin = 0\n"),
    )
    .unwrap();
    let out = capped(
        p,
        400,
        &[
            "check",
            "c.toml",
            "-q",
            "--set",
            "replications=20000",
            "--set",
            "duration=\"200ms\"",
            "--set",
            "bucket=\"10ms\"",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn merge_refuses_a_shard_count_larger_than_the_sweep() {
    let d = setup();
    let p = d.path();
    ok(
        p,
        &[
            "sweep",
            "sw.toml",
            "--shard",
            "0/2",
            "--no-plots",
            "-q",
            "--out",
            "s0",
        ],
    );
    let m = p.join("s0/manifest.toml");
    let text = std::fs::read_to_string(&m)
        .unwrap()
        .replace("shard = \"0/2\"", "shard = \"0/1000000000000\"");
    std::fs::write(&m, text).unwrap();
    let out = capped(p, 1024, &["merge", "s0", "--out", "m", "--no-plots"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("at most one shard per run"), "{err}");
    assert!(!p.join("m").exists());
}

/// Swept text lands in CSV cells that a spreadsheet would evaluate: it is quoted.
#[test]
fn swept_text_cannot_inject_spreadsheet_formulas() {
    let d = setup();
    let p = d.path();
    std::fs::write(
        p.join("inj.toml"),
        format!("{TINY}[sweep]\n\"fleets.0.name\" = [\"=2+5\", \"@SUM(1)\", \"-x\", \"+cmd|' C calc'!A0\", \"plain\"]\n"),
    )
    .unwrap();
    ok(p, &["sweep", "inj.toml", "--no-plots", "-q", "--out", "i"]);
    for file in ["summary.csv", "aggregate.csv"] {
        let mut rdr = csv::Reader::from_path(p.join("i").join(file)).unwrap();
        let i = rdr
            .headers()
            .unwrap()
            .iter()
            .position(|c| c == "param_fleets.0.name")
            .unwrap();
        let cells: Vec<String> = rdr.records().map(|r| r.unwrap()[i].to_string()).collect();
        assert_eq!(
            cells,
            ["'=2+5", "'@SUM(1)", "'-x", "'+cmd|' C calc'!A0", "plain"],
            "{file}"
        );
    }
}

/// A sweep over whole layer stacks: labelled, `[sweep.labels]`-labelled and plain.
const LABELLED: &str = r#"
name = "lab"
duration = "4s"
replications = 2
[dependency]
servers = 4
service_time = { kind = "exponential", mean = "10ms" }
[[fleets]]
name = "web"
arrival = { kind = "poisson", rate = 300 }
[[fleets.layers]]
max_attempts = 3
[[outages]]
start = "1s"
end = "2s"
mode = { kind = "fail" }
[sweep]
"fleets.0.layers" = [
  { label = "no retries", value = [{ max_attempts = 1 }] },
  { label = "3 tries", value = [{ max_attempts = 3, attempt_timeout = "100ms" }] },
]
"fleets.0.layers.0.backoff" = [
  { kind = "none" },
  { kind = "exponential", base = "10ms", cap = "1s", jitter = "full" },
]
"fleets.0.arrival.rate" = [200, 300]
[sweep.labels]
"fleets.0.arrival.rate" = ["low", "high"]

[[expect]]
metric = "amplification"
max = 1
where = { "fleets.0.layers" = "no retries" }

[[expect]]
metric = "amplification"
min = 1.01
where = { "fleets.0.layers" = "3 tries", "fleets.0.arrival.rate" = "high" }
"#;

#[test]
fn swept_values_show_as_their_labels_in_columns_charts_and_checks() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    std::fs::write(p.join("lab.toml"), LABELLED).unwrap();
    ok(
        p,
        &["sweep", "lab.toml", "-q", "--format", "svg", "--out", "res"],
    );
    let mut rdr = csv::Reader::from_path(p.join("res/summary.csv")).unwrap();
    let h = rdr.headers().unwrap().clone();
    let col = |name: &str| h.iter().position(|c| c == name).unwrap();
    let (layers, backoff, rate) = (
        col("param_fleets.0.layers"),
        col("param_fleets.0.layers.0.backoff"),
        col("param_fleets.0.arrival.rate"),
    );
    let rows: Vec<csv::StringRecord> = rdr.records().map(Result::unwrap).collect();
    assert_eq!(rows.len(), 16);
    let cell = |r: &csv::StringRecord| {
        (
            r[layers].to_string(),
            r[backoff].to_string(),
            r[rate].to_string(),
        )
    };
    // Run 0 and run 15: the first and last cell, in grid order.
    assert_eq!(
        cell(&rows[0]),
        ("no retries".into(), "backoff=none".into(), "low".into())
    );
    assert_eq!(
        cell(&rows[15]),
        (
            "3 tries".into(),
            "backoff=exponential".into(),
            "high".into()
        )
    );
    // The labels are what each value is: one attempt per request without retries.
    let amp = col("amplification");
    for r in &rows {
        if &r[layers] == "no retries" {
            assert_eq!(&r[amp], "1");
        }
    }
    let agg = std::fs::read_to_string(p.join("res/aggregate.csv")).unwrap();
    assert!(agg.contains("3 tries,backoff=exponential,high"), "{agg}");
    // The legends name the policies by their labels (and not their TOML).
    let chart = std::fs::read_to_string(p.join("res/plots/metrics/amplification_vs_layers.svg"))
        .or_else(|_| std::fs::read_to_string(p.join("res/plots/metrics/amplification_vs_rate.svg")))
        .unwrap();
    assert!(chart.contains("no retries"), "{chart}");
    assert!(!chart.contains("max_attempts = "), "{chart}");
    let report = std::fs::read_to_string(p.join("res/report.html")).unwrap();
    assert!(report.contains("3 tries"));
    // `where` selects by label; the check table shows labels.
    let out = retrysim(p, &["check", "lab.toml", "-j", "2"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(
        text.contains("no retries, backoff=none, rate=low "),
        "{text}"
    );
    assert!(text.contains("check: 6 passed, 0 failed"), "{text}");
    // A label no value has is refused with the labels to choose from.
    std::fs::write(
        p.join("bad.toml"),
        LABELLED.replace(
            "\"fleets.0.layers\" = \"3 tries\"",
            "\"fleets.0.layers\" = \"3 retries\"",
        ),
    )
    .unwrap();
    let out = retrysim(p, &["check", "bad.toml"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("expect[1].where.fleets.0.layers"), "{err}");
    assert!(err.contains("labels: no retries, 3 tries"), "{err}");
    // Two values with one label are refused before anything runs.
    std::fs::write(
        p.join("twice.toml"),
        LABELLED.replace("\"low\", \"high\"", "\"low\", \"low\""),
    )
    .unwrap();
    let out = retrysim(p, &["sweep", "twice.toml", "--out", "t"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("twice.toml") && err.contains("values 0 and 1 have the same label 'low'"),
        "{err}"
    );
    assert!(!p.join("t").exists());
    // The dry run lists the labels.
    let out = retrysim(p, &["sweep", "lab.toml", "--dry-run"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("fleets.0.layers = [no retries, 3 tries] (2 values)"),
        "{text}"
    );
}

/// The runs of a sweep in memory start with the costly cells, yet come back in plan
/// order, each the run it would be alone, on 1 thread or 2.
#[test]
fn a_sweep_in_memory_returns_its_runs_in_plan_order_whatever_it_runs_first() {
    let text = r#"
duration = "5s"
replications = 2
[dependency]
servers = 10
service_time = { kind = "exponential", mean = "10ms" }
[[fleets]]
name = "f"
arrival = { kind = "poisson", rate = 100 }
[[fleets.layers]]
name = "l"
max_attempts = 3
attempt_timeout = "50ms"
[sweep]
"fleets.0.arrival.rate" = [100, 800, 300]
"#;
    let src = crate::scenario::Source {
        path: "s.toml".into(),
        stem: "s".into(),
        text: text.into(),
    };
    let plan = crate::sweep::plan(crate::scenario::load(src, &[]).unwrap()).unwrap();
    for threads in [1, 2] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        let results = pool.install(|| crate::sweep::run_in_memory(&plan)).unwrap();
        assert_eq!(results.len(), 6);
        for (i, r) in results.iter().enumerate() {
            assert_eq!(r.run, i as u64);
            let spec = plan.spec(r.run);
            let alone = crate::run::run_one(
                &plan.loaded(spec.cell).unwrap().scenario,
                &plan.layout,
                r.run,
                spec.replication,
            );
            assert_eq!(
                r.summary.get("logical").and_then(|v| v.as_f64()),
                alone.summary.get("logical").and_then(|v| v.as_f64()),
                "run {i} on {threads} threads"
            );
            assert_eq!(r.metrics.totals.events, alone.metrics.totals.events);
        }
    }
}

/// A merge rebuilds its scenario from the shards' manifests; the scenario file's
/// comment header (the report's question and answer) must come through too.
#[test]
fn a_merged_sweep_keeps_the_scenario_files_header() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    let text = format!("# Question: why?\n#\n#   Setup: indented\n{SWEEP}");
    std::fs::write(p.join("h.toml"), text).unwrap();
    ok(p, &["sweep", "h.toml", "--no-plots", "-q", "--out", "all"]);
    for i in 0..2 {
        let shard = format!("{i}/2");
        let out = format!("s{i}");
        ok(
            p,
            &[
                "sweep",
                "h.toml",
                "--no-plots",
                "-q",
                "--shard",
                &shard,
                "--out",
                &out,
            ],
        );
    }
    ok(p, &["merge", "--no-plots", "--out", "m", "s0", "s1"]);
    let manifest = std::fs::read_to_string(p.join("m/manifest.toml")).unwrap();
    assert!(
        manifest.contains("header = \"\"\"\nQuestion: why?\n\n  Setup: indented\"\"\""),
        "{manifest}"
    );
    same_files(&p.join("all"), &p.join("m"));
}

/// Cuts run `run`'s `file` in folder `dir` short: to `keep` of its bytes.
fn cut(dir: &Path, run: u64, file: &str, keep: impl Fn(&str) -> usize) {
    let f = dir.join(format!("runs/{run:06}/{file}"));
    let text = std::fs::read_to_string(&f).unwrap();
    std::fs::write(&f, &text[..keep(&text)]).unwrap();
}

/// The whole text less its last `n` bytes: the last row cut mid-way.
fn mid_row(n: usize) -> impl Fn(&str) -> usize {
    move |t: &str| t.len() - n
}

/// The text without its last line: a row lost whole.
fn last_row(t: &str) -> usize {
    t[..t.len() - 1].rfind('\n').map_or(0, |i| i + 1)
}

#[test]
fn a_resumed_sweep_runs_again_the_runs_whose_files_were_cut_short() {
    let d = setup();
    let p = d.path();
    ok(
        p,
        &["sweep", "sw.toml", "--no-plots", "-q", "--out", "full"],
    );
    ok(
        p,
        &["sweep", "sw.toml", "--no-plots", "-q", "--out", "part"],
    );
    let part = p.join("part");
    cut(&part, 4, "summary.csv", |_| 0);
    cut(&part, 10, "timeseries.csv", mid_row(7));
    cut(&part, 20, "timeseries.csv", last_row);
    cut(&part, 22, "herd.csv", mid_row(1));
    std::fs::remove_file(part.join("runs/000013/attempts_by_ordinal.csv")).unwrap();
    // A row cut mid-way then ended, and another run's row.
    let edit = |run: u64, file: &str, f: &dyn Fn(String) -> String| {
        let path = part.join(format!("runs/{run:06}/{file}"));
        std::fs::write(&path, f(std::fs::read_to_string(&path).unwrap())).unwrap();
    };
    edit(16, "timeseries.csv", &|t| {
        t[..t.len() - 40].to_string() + "\n"
    });
    edit(25, "summary.csv", &|t| t.replacen("25,", "24,", 1));
    let out = retrysim(p, &["sweep", "sw.toml", "--no-plots", "--out", "part"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("7 run here (20 resumed from disk)"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    for (run, why) in [
        (4, "summary.csv has 0 rows, expected 1"),
        (
            10,
            "timeseries.csv is cut short: its last line has no line end",
        ),
        (
            20,
            "timeseries.csv (one row per bucket: duration / bucket) has 9 rows, expected 10",
        ),
        (22, "herd.csv is cut short"),
        (13, "cannot read it: runs/000013/attempts_by_ordinal.csv: "),
        (16, "timeseries.csv, row 10: "),
        (25, "summary.csv, row 1: run '24', expected 25"),
    ] {
        let note = format!("note: run {run} on disk was not whole ('part/runs/{run:06}': {why}");
        assert!(err.contains(&note), "{note}\n{err}");
    }
    same_files(&p.join("full"), &part);
}

#[test]
fn merge_refuses_a_run_whose_files_were_cut_short_and_names_it() {
    let d = setup();
    let p = d.path();
    ok(p, &["sweep", "sw.toml", "--no-plots", "-q", "--out", "all"]);
    let shard = |i: u32| {
        ok(
            p,
            &[
                "sweep",
                "sw.toml",
                "--no-plots",
                "-q",
                "--shard",
                &format!("{i}/2"),
                "--out",
                &format!("a{i}"),
            ],
        )
    };
    shard(0);
    shard(1);
    let merge = || retrysim(p, &["merge", "--no-plots", "--out", "m", "a0", "a1"]);
    // (shard, run, file, the bytes kept, what the error says)
    type Cut = Box<dyn Fn(&str) -> usize>;
    let cases: [(&str, u64, &str, Cut, &str); 4] = [
        (
            "a1",
            3,
            "summary.csv",
            Box::new(|_| 0),
            "summary.csv has 0 rows, expected 1",
        ),
        (
            "a1",
            5,
            "timeseries.csv",
            Box::new(mid_row(3)),
            "timeseries.csv is cut short",
        ),
        (
            "a0",
            8,
            "timeseries.csv",
            Box::new(last_row),
            "timeseries.csv (one row per bucket: duration / bucket) has 9 rows, expected 10",
        ),
        (
            "a0",
            0,
            "attempts_by_ordinal.csv",
            Box::new(|t: &str| t.find('\n').map_or(0, |i| i + 4)),
            "attempts_by_ordinal.csv is cut short",
        ),
    ];
    for (dir, run, file, keep, why) in cases {
        cut(&p.join(dir), run, file, keep);
        let out = merge();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{file}: {err}");
        let says =
            format!("error: cannot merge: run {run} in '{dir}/runs/{run:06}' is incomplete: {why}");
        assert!(err.contains(&says), "{says}\n{err}");
        assert!(err.contains("run that shard again"), "{err}");
        assert!(!p.join("m").exists(), "{file}: the merge wrote something");
        // Running the shard again redoes that run, and the merge is whole.
        shard(if dir == "a0" { 0 } else { 1 });
    }
    let out = merge();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    same_files(&p.join("all"), &p.join("m"));
}

/// `sweep` ends, as `run` does, with numbers: a line per cell with its swept values,
/// runs and headline means (as `aggregate.csv` has them), then the expectations' rows
/// and a pass count; `-q` prints none of it.
#[test]
fn a_sweep_prints_a_line_per_cell_with_its_headline_means_and_the_expectations() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    let text = SWEEP.replace(
        "[sweep]",
        "[[expect]]\nmetric = \"success_fraction\"\nmin = 0.5\n[[expect]]\nmetric = \"amplification\"\nmax = 1.0\nwhere = { \"fleets.0.layers.0.max_attempts\" = 4 }\n[sweep]",
    );
    std::fs::write(p.join("sw.toml"), text).unwrap();
    let out = retrysim(p, &["sweep", "sw.toml", "--no-plots", "--out", "o"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = stdout.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.starts_with("cell  max_attempts  rate  runs  success  amplif."))
        .unwrap_or_else(|| panic!("no cell table:\n{stdout}"));
    // The means are aggregate.csv's, for the 9 cells in grid order.
    let agg = std::fs::read_to_string(p.join("o/aggregate.csv")).unwrap();
    let head: Vec<&str> = agg.lines().next().unwrap().split(',').collect();
    let col = |name: &str| head.iter().position(|h| *h == name).unwrap();
    for (i, row) in agg.lines().skip(1).enumerate() {
        let f: Vec<&str> = row.split(',').collect();
        let success: f64 = f[col("success_fraction_mean")].parse().unwrap();
        let amp: f64 = f[col("amplification_mean")].parse().unwrap();
        let line = lines[at + 1 + i];
        let words: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(words[0], i.to_string(), "{line}");
        assert_eq!(words[3], "3", "{line}");
        assert_eq!(words[4], format!("{:.2}%", 100.0 * success), "{line}");
        assert_eq!(words[5], format!("{amp:.3}"), "{line}");
    }
    assert!(lines[at + 10].starts_with("cell "), "{stdout}");
    // 9 cells pass the success bound; the 3 cells of 4 attempts make more than one
    // attempt per request during the outage.
    assert_eq!(
        stdout.matches(" pass\n").count() + stdout.matches(" FAIL\n").count(),
        12,
        "{stdout}"
    );
    assert!(
        stdout.contains("expectations: 9 of 12 pass (retrysim check exits 1 on these runs)"),
        "{stdout}"
    );
    assert!(stdout.ends_with("runs/}\n"), "{stdout}");
    // -q: nothing on stdout.
    let out = retrysim(p, &["sweep", "sw.toml", "--no-plots", "--out", "q", "-q"]);
    assert!(out.status.success());
    assert!(
        out.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}
