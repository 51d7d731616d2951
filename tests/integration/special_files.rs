//! Special files where retrysim reads or writes its own (issue 38): a FIFO would block a
//! reader for ever and a link to `/dev/zero` would feed it gigabytes. Every file read
//! back from a results folder (by `diff`, `plot`, a resumed sweep, `merge`) and every
//! manual page `man --out` would replace must be a regular file of a bounded size, as
//! scenario files must: anything else is an error naming the file, at once. Every
//! command runs under a timeout, so a reader that blocks fails the test instead of
//! hanging it.
#![cfg(unix)]

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::common::ok;

/// Longest a refusal may take.
const TIMEOUT: Duration = Duration::from_secs(60);

const A: &str = r#"
name = "alpha"
duration = "2s"
[dependency]
servers = 2
service_time = "10ms"
[[fleets]]
name = "web"
arrival = { kind = "poisson", rate = 50 }
"#;

/// Runs retrysim in `dir`, killing it (a test failure) if it is not done in time.
fn bounded(dir: &Path, args: &[&str]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_retrysim"))
        .current_dir(dir)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{args:?} did not finish within {TIMEOUT:?}: a special file blocked it");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{args:?}: {err}");
    out
}

/// Replaces `path` by a FIFO.
fn fifo(path: &Path) {
    let _ = std::fs::remove_file(path);
    let s = Command::new("mkfifo").arg(path).status().unwrap();
    assert!(s.success(), "mkfifo {path:?}");
}

/// Replaces `path` by a symbolic link to `/dev/zero`.
fn zero(path: &Path) {
    let _ = std::fs::remove_file(path);
    std::os::unix::fs::symlink("/dev/zero", path).unwrap();
}

/// Runs `args`, which must fail at once with an error naming `file` and `what`.
fn refused(dir: &Path, args: &[&str], file: &str, what: &str) {
    let out = bounded(dir, args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{args:?} succeeded: {err}");
    assert_eq!(
        out.status.code(),
        Some(2),
        "{args:?}: a special file is bad input (exit 2): {err}"
    );
    assert!(
        err.contains(file),
        "{args:?}: the error should name {file}: {err}"
    );
    assert!(
        err.contains(what),
        "{args:?}: the error should say {what}: {err}"
    );
}

fn setup() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("a.toml"), A).unwrap();
    d
}

#[test]
fn diff_refuses_a_fifo_or_a_device_in_a_result_folder_at_once() {
    let d = setup();
    let p = d.path();
    for out in ["a", "b"] {
        ok(p, &["run", "a.toml", "-q", "--no-plots", "--out", out]);
    }
    ok(p, &["diff", "a", "b", "-q"]);
    let b = p.join("b");
    fifo(&b.join("summary.csv"));
    refused(p, &["diff", "a", "b"], "summary.csv", "FIFO");
    zero(&b.join("summary.csv"));
    refused(p, &["diff", "a", "b"], "summary.csv", "a device");
    std::fs::remove_file(b.join("summary.csv")).unwrap();
    std::fs::copy(p.join("a/summary.csv"), b.join("summary.csv")).unwrap();
    fifo(&b.join("manifest.toml"));
    refused(p, &["diff", "a", "b"], "manifest.toml", "FIFO");
    zero(&b.join("manifest.toml"));
    refused(p, &["diff", "a", "b"], "manifest.toml", "a device");
}

#[test]
fn plot_refuses_a_fifo_or_a_device_in_a_result_folder_at_once() {
    let d = setup();
    let p = d.path();
    ok(p, &["run", "a.toml", "-q", "--no-plots", "--out", "r"]);
    for (file, make, what) in [
        ("timeseries.csv", fifo as fn(&Path), "FIFO"),
        ("summary.csv", zero, "a device"),
        ("manifest.toml", fifo, "FIFO"),
    ] {
        ok(p, &["run", "a.toml", "-q", "--no-plots", "--out", "r"]);
        make(&p.join("r").join(file));
        refused(p, &["plot", "r"], file, what);
        std::fs::remove_file(p.join("r").join(file)).unwrap();
    }
}

#[test]
fn a_resumed_sweep_and_a_merge_refuse_a_fifo_among_the_finished_runs_at_once() {
    let d = setup();
    let p = d.path();
    std::fs::write(
        p.join("s.toml"),
        format!("{A}[sweep]\n\"fleets.0.arrival.rate\" = [10, 20]\n"),
    )
    .unwrap();
    ok(p, &["sweep", "s.toml", "-q", "--no-plots", "--out", "sw"]);
    fifo(&p.join("sw/runs/000001/summary.csv"));
    refused(
        p,
        &["sweep", "s.toml", "-q", "--no-plots", "--out", "sw"],
        "runs/000001/summary.csv",
        "FIFO",
    );
    for s in ["0/2", "1/2"] {
        ok(
            p,
            &[
                "sweep",
                "s.toml",
                "-q",
                "--no-plots",
                "--shard",
                s,
                "--out",
                &format!("sh{}", &s[..1]),
            ],
        );
    }
    zero(&p.join("sh1/runs/000001/herd.csv"));
    refused(
        p,
        &["merge", "sh0", "sh1", "--out", "m", "--no-plots", "-q"],
        "runs/000001/herd.csv",
        "a device",
    );
}

/// The pages `man --out` writes into `dir`.
fn pages(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".1"))
        .collect();
    v.sort();
    v
}

#[test]
fn man_out_writes_no_page_when_one_cannot_be_written() {
    let d = setup();
    let p = d.path();
    let man = p.join("man");
    std::fs::create_dir_all(man.join("retrysim-run.1")).unwrap();
    refused(p, &["man", "--out", "man"], "retrysim-run.1", "folder");
    assert_eq!(pages(&man), ["retrysim-run.1"], "no page may be written");
    std::fs::remove_dir(man.join("retrysim-run.1")).unwrap();
    fifo(&man.join("retrysim-plot.1"));
    refused(p, &["man", "--out", "man"], "retrysim-plot.1", "FIFO");
    assert_eq!(pages(&man), ["retrysim-plot.1"], "no page may be written");
    zero(&man.join("retrysim-plot.1"));
    refused(p, &["man", "--out", "man"], "retrysim-plot.1", "a device");
    assert_eq!(pages(&man), ["retrysim-plot.1"], "no page may be written");
    std::fs::remove_file(man.join("retrysim-plot.1")).unwrap();
    ok(p, &["man", "--out", "man", "-q"]);
    assert!(pages(&man).len() > 5);
    // Written again over its own pages.
    ok(p, &["man", "--out", "man", "-q"]);
}
