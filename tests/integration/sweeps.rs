//! Sweeps: bytes independent of threads and shard split, resumable, merge refusals,
//! common random numbers across cells.

use std::path::Path;
use std::process::{Command, Output};

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

const FILES: [&str; 6] = [
    "summary.csv",
    "aggregate.csv",
    "timeseries.csv",
    "herd.csv",
    "manifest.toml",
    "runs/000007/summary.csv",
];

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

fn same_files(a: &Path, b: &Path) {
    for f in FILES {
        let x = std::fs::read(a.join(f)).unwrap_or_else(|e| panic!("{}/{f}: {e}", a.display()));
        let y = std::fs::read(b.join(f)).unwrap_or_else(|e| panic!("{}/{f}: {e}", b.display()));
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
    for f in ["summary.csv", "aggregate.csv", "timeseries.csv"] {
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

#[test]
fn the_slurm_array_script_runs_shards_and_merges_them_into_the_unsharded_bytes() {
    let d = setup();
    let p = d.path();
    ok(p, &["sweep", "sw.toml", "--no-plots", "-q", "--out", "all"]);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/slurm-array.sbatch");
    let bin = env!("CARGO_BIN_EXE_retrysim");
    // Array tasks 0..3 as Slurm would start them (each its own process).
    for i in 0..3 {
        let out = Command::new("bash")
            .current_dir(p)
            .arg(&script)
            .args(["run", "sw.toml", "slurm"])
            .env("RETRYSIM", bin)
            .env("SLURM_ARRAY_TASK_ID", i.to_string())
            .env("SLURM_ARRAY_TASK_COUNT", "3")
            .env("SLURM_ARRAY_TASK_MIN", "0")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let out = Command::new("bash")
        .current_dir(p)
        .arg(&script)
        .args(["merge", "sw.toml", "slurm"])
        .env("RETRYSIM", bin)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The merge step draws plots too; the tables must match byte for byte.
    same_files(&p.join("all"), &p.join("slurm/merged"));
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
}
