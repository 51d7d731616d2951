//! Same scenario and seed: the same bytes, whatever the thread count; a policy change
//! leaves the arrivals untouched (common random numbers).

use crate::tests::common;

use std::path::Path;
use std::process::Command;

fn retrysim(args: &[&str], threads: &str) -> std::process::Output {
    Command::new(crate::tests::common::bin())
        .args(args)
        .env("RAYON_NUM_THREADS", threads)
        .output()
        .expect("run retrysim")
}

fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read(&p).unwrap(),
            )
        })
        .collect();
    v.sort();
    v
}

#[test]
fn the_same_scenario_and_seed_give_byte_identical_files_at_any_thread_count() {
    let d = tempfile::tempdir().unwrap();
    let a = d.path().join("a");
    let b = d.path().join("b");
    let common_args = [
        "run",
        "--no-plots",
        "-q",
        "--set",
        "replications=3",
        "--set",
        "duration=\"20s\"",
    ];
    let mut args_a = common_args.to_vec();
    args_a.extend(["--out", a.to_str().unwrap()]);
    let mut args_b = common_args.to_vec();
    args_b.extend(["--out", b.to_str().unwrap()]);
    assert!(retrysim(&args_a, "1").status.success());
    assert!(retrysim(&args_b, "2").status.success());
    let fa = files(&a);
    assert!(fa.len() >= 5);
    // attempts_by_ordinal.csv has a header and rows of each of the 3 runs.
    let ord = fa
        .iter()
        .find(|(n, _)| n == "attempts_by_ordinal.csv")
        .unwrap();
    assert!(String::from_utf8_lossy(&ord.1).lines().count() > 3);
    assert_eq!(fa, files(&b));
    // A different seed changes the results.
    let c = d.path().join("c");
    let mut args_c = common_args.to_vec();
    args_c.extend(["--out", c.to_str().unwrap(), "--seed", "2"]);
    assert!(retrysim(&args_c, "2").status.success());
    let sa = std::fs::read(a.join("summary.csv")).unwrap();
    let sc = std::fs::read(c.join("summary.csv")).unwrap();
    assert_ne!(sa, sc);
}

const BASE: &str = r#"
duration = "20s"
bucket = "10ms"
[dependency]
servers = 4
queue_limit = 20
service_time = { kind = "exponential", mean = "10ms" }
[[fleets]]
name = "web"
arrival = { kind = "poisson", rate = 300, clients = 10 }
writes = 0.3
[[outages]]
start = "5s"
end = "8s"
mode = { kind = "fail" }
"#;

#[test]
fn a_policy_change_leaves_the_arrival_sequence_unchanged() {
    let plain = common::run(BASE, &[]);
    let layered = format!(
        "{BASE}[[fleets.layers]]\nmax_attempts = 4\nattempt_timeout = \"50ms\"\nbackoff = {{ kind = \"exponential\", base = \"20ms\", cap = \"1s\", jitter = \"decorrelated\" }}\n[[fleets.layers]]\nmax_attempts = 2\n"
    );
    let retried = common::run(&layered, &[]);
    let offered = |r: &crate::run::RunResult| -> Vec<u64> {
        r.metrics.buckets.iter().map(|b| b.offered).collect()
    };
    assert_eq!(offered(&plain), offered(&retried));
    assert!(common::col(&retried, "attempts") > common::col(&plain, "attempts"));
    // Changing only the jitter mode keeps the arrivals too.
    let full = layered.replace("decorrelated", "full");
    assert_eq!(offered(&common::run(&full, &[])), offered(&retried));
}
