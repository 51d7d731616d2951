//! Interruptions part-way through a sweep: Ctrl-C (SIGINT) once, twice, and SIGKILL.
//! The folder holds only whole files (finished runs whole in `runs/NNNNNN/`, every CSV
//! parsing, nothing half-written at the top), and running the same command again
//! completes the sweep with the same bytes as an uninterrupted one.
//!
//! Timing: the sweep (60 runs of about 30 ms on 2 workers) is signalled as soon as 3
//! runs are on disk, so it is always part-way; every wait has a generous timeout
//! (120 s) and nothing asserts on speed.

use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

const SWEEP: &str = r#"
name = "long"
duration = "20s"
drain = "2s"
replications = 3
[dependency]
servers = 8
queue_limit = 100
service_time = { kind = "exponential", mean = "5ms" }
[[fleets]]
name = "web"
arrival = { kind = "poisson", rate = 1500 }
deadline = "1s"
[[fleets.layers]]
max_attempts = 3
attempt_timeout = "50ms"
backoff = { kind = "exponential", base = "5ms", cap = "200ms", jitter = "full" }
[[outages]]
start = "5s"
end = "8s"
mode = { kind = "fail" }
[sweep]
"fleets.0.arrival.rate" = [1000, 1300, 1600, 1900, 2200]
"fleets.0.layers.0.max_attempts" = [1, 2, 3, 4]
"#;

/// Runs in the sweep: 5 × 4 cells × 3 replications.
const RUNS: usize = 60;
/// Longest any step may take.
const TIMEOUT: Duration = Duration::from_secs(120);
/// The files a finished sweep folder holds at the top (`--no-plots`).
const TABLES: [&str; 8] = [
    "summary.csv",
    "columns.csv",
    "aggregate.csv",
    "aggregate_long.csv",
    "timeseries.csv",
    "herd.csv",
    "attempts_by_ordinal.csv",
    "manifest.toml",
];

fn sweep_cmd(dir: &Path, out: &str) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_retrysim"));
    c.current_dir(dir).args([
        "sweep",
        "sw.toml",
        "--no-plots",
        "--jobs",
        "2",
        "--out",
        out,
    ]);
    c
}

fn setup() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("sw.toml"), SWEEP).unwrap();
    d
}

/// The tables of an uninterrupted sweep, computed once for every test.
fn reference() -> &'static Vec<(String, Vec<u8>)> {
    static REF: OnceLock<Vec<(String, Vec<u8>)>> = OnceLock::new();
    REF.get_or_init(|| {
        let d = setup();
        let out = sweep_cmd(d.path(), "full").output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        tables(&d.path().join("full"))
    })
}

/// The tables' bytes, as [`crate::common::comparable`] compares them (the reference
/// ran in another folder).
fn tables(dir: &Path) -> Vec<(String, Vec<u8>)> {
    TABLES
        .iter()
        .map(|f| (f.to_string(), crate::common::comparable(&dir.join(f))))
        .collect()
}

/// Finished runs (`runs/NNNNNN`) in a sweep folder.
fn finished(out: &Path) -> usize {
    std::fs::read_dir(out.join("runs")).map_or(0, |rd| {
        rd.filter_map(Result::ok)
            .filter(|e| e.file_name().to_string_lossy().parse::<u64>().is_ok())
            .count()
    })
}

/// Starts the sweep and returns it once at least `n` runs are on disk.
fn start_and_wait_for_runs(dir: &Path, n: usize) -> Child {
    let mut child = sweep_cmd(dir, "part")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while finished(&dir.join("part")) < n {
        if let Some(s) = child.try_wait().unwrap() {
            panic!("the sweep ended before it was interrupted: {s}");
        }
        assert!(
            started.elapsed() < TIMEOUT,
            "no runs on disk after {TIMEOUT:?}"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
    child
}

fn signal(child: &Child, sig: &str) {
    // The process may have ended already (after a first Ctrl-C): that is fine.
    let _ = Command::new("kill")
        .args(["-s", sig, &child.id().to_string()])
        .stderr(Stdio::null())
        .status();
}

fn wait(mut child: Child) -> (ExitStatus, String) {
    let started = Instant::now();
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            let mut err = String::new();
            std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
            assert!(!err.contains("panicked"), "{err}");
            return (s, err);
        }
        if started.elapsed() > TIMEOUT {
            let _ = child.kill();
            panic!("the sweep did not stop within {TIMEOUT:?} of the signal");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Checks that `out` holds only whole files: a readable manifest, no table and nothing
/// temporary at the top, and run folders that are each complete, with CSV rows that
/// parse. Temporary run folders (`runs/.tmp-*`) are allowed when the process could not
/// clean up (`tmp_allowed`). Returns the runs finished.
fn only_whole_files(out: &Path, tmp_allowed: bool) -> usize {
    let mut top: Vec<String> = std::fs::read_dir(out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    top.sort();
    assert_eq!(
        top,
        ["manifest.toml", "runs"],
        "an interrupted sweep writes no tables"
    );
    let manifest = std::fs::read_to_string(out.join("manifest.toml")).unwrap();
    toml::from_str::<toml::Table>(&manifest).expect("the manifest is whole");
    let mut runs = 0;
    for e in std::fs::read_dir(out.join("runs")).unwrap() {
        let e = e.unwrap();
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with(".tmp-") {
            assert!(tmp_allowed, "a temporary run folder is left: {name}");
            continue;
        }
        assert!(
            name.len() == 6 && name.parse::<u64>().is_ok(),
            "unexpected entry {name}"
        );
        let mut files: Vec<String> = std::fs::read_dir(e.path())
            .unwrap()
            .map(|f| f.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        files.sort();
        assert_eq!(
            files,
            [
                "attempts_by_ordinal.csv",
                "herd.csv",
                "summary.csv",
                "timeseries.csv"
            ],
            "run {name}"
        );
        for f in &files {
            let text = std::fs::read_to_string(e.path().join(f)).unwrap();
            assert!(text.is_empty() || text.ends_with('\n'), "{name}/{f} is cut");
            let mut rdr = csv::ReaderBuilder::new()
                .has_headers(false)
                .from_reader(text.as_bytes());
            let widths: Vec<usize> = rdr.records().map(|r| r.unwrap().len()).collect();
            assert!(
                widths.windows(2).all(|w| w[0] == w[1]),
                "{name}/{f}: ragged rows"
            );
            if f == "summary.csv" {
                assert_eq!(widths.len(), 1, "{name}: one summary row");
            }
        }
        runs += 1;
    }
    runs
}

/// Runs the same command again and checks the result equals the uninterrupted sweep.
fn rerun_completes(dir: &Path, before: usize) {
    let out = sweep_cmd(dir, "part").output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(&format!(
            "{} run here ({before} resumed from disk)",
            RUNS - before
        )),
        "{stdout}"
    );
    let part = dir.join("part");
    assert!(
        tables(&part) == *reference(),
        "the resumed sweep differs from an uninterrupted one"
    );
    for e in std::fs::read_dir(part.join("runs")).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().into_owned();
        assert!(!name.starts_with(".tmp-"), "left after the rerun: {name}");
    }
    assert_eq!(finished(&part), RUNS);
}

#[test]
fn ctrl_c_part_way_through_a_sweep_keeps_finished_runs_and_a_rerun_completes_them() {
    reference();
    let d = setup();
    let child = start_and_wait_for_runs(d.path(), 3);
    signal(&child, "INT");
    let (status, err) = wait(child);
    assert_eq!(status.code(), Some(130), "{err}");
    assert!(err.contains("interrupted"), "{err}");
    assert!(err.contains("run the same command again"), "{err}");
    let runs = only_whole_files(&d.path().join("part"), false);
    assert!((3..RUNS).contains(&runs), "{runs} runs on disk");
    assert!(
        err.contains(&format!("{runs} of {RUNS} runs are on disk")),
        "{err}"
    );
    rerun_completes(d.path(), runs);
}

#[test]
fn a_second_ctrl_c_quits_at_once_and_a_rerun_still_completes() {
    reference();
    let d = setup();
    let child = start_and_wait_for_runs(d.path(), 3);
    signal(&child, "INT");
    signal(&child, "INT");
    let (status, err) = wait(child);
    assert_eq!(status.code(), Some(130), "{err}");
    let runs = only_whole_files(&d.path().join("part"), true);
    assert!((3..RUNS).contains(&runs), "{runs} runs on disk");
    rerun_completes(d.path(), runs);
}

#[test]
fn a_sweep_killed_part_way_holds_only_whole_runs_and_a_rerun_completes_it() {
    reference();
    let d = setup();
    let child = start_and_wait_for_runs(d.path(), 3);
    signal(&child, "KILL");
    let (status, _) = wait(child);
    assert_eq!(status.signal(), Some(9));
    let runs = only_whole_files(&d.path().join("part"), true);
    assert!((3..RUNS).contains(&runs), "{runs} runs on disk");
    rerun_completes(d.path(), runs);
}

#[test]
fn an_interrupted_sweep_refuses_to_be_taken_over_by_another_scenario() {
    let d = setup();
    let child = start_and_wait_for_runs(d.path(), 3);
    signal(&child, "INT");
    let (status, err) = wait(child);
    assert_eq!(status.code(), Some(130), "{err}");
    let out: Output = sweep_cmd(d.path(), "part")
        .args(["--set", "duration=\"21s\""])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("--force"), "{err}");
}

/// Issue 38: `run` into a folder that holds its earlier results writes the new ones
/// beside them and swaps them in only when complete. The scenario's base point, a
/// replication at a time: 300 replications of about 30 ms.
fn run_cmd(dir: &Path, replications: u32) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_retrysim"));
    c.current_dir(dir).args([
        "run",
        "sw.toml",
        "-q",
        "--jobs",
        "1",
        "--out",
        "out",
        "--set",
        &format!("replications={replications}"),
    ]);
    c
}

/// Every file under `dir` with its bytes, leaving out hidden `.tmp-*` entries (what
/// a killed writer leaves and the next run removes).
fn results(dir: &Path) -> Vec<(std::path::PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with(".tmp-")
            {
                continue;
            }
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

/// Whether `dir` holds a `.tmp-*` entry at its top.
fn writing(dir: &Path) -> bool {
    std::fs::read_dir(dir).is_ok_and(|rd| {
        rd.filter_map(Result::ok)
            .any(|e| e.file_name().to_string_lossy().starts_with(".tmp-"))
    })
}

/// Runs 2 replications into `out` (with charts), then starts 300 more into the same
/// folder and returns that process once it is writing.
fn replace_part_way(dir: &Path) -> (Vec<(std::path::PathBuf, Vec<u8>)>, Child) {
    let first = run_cmd(dir, 2).output().unwrap();
    assert!(
        first.status.success(),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    let old = results(&dir.join("out"));
    assert!(old.iter().any(|(f, _)| f.ends_with("report.html")));
    let mut child = run_cmd(dir, 300)
        .arg("--no-plots")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while !writing(&dir.join("out")) {
        if let Some(s) = child.try_wait().unwrap() {
            panic!("the run ended before it was interrupted: {s}");
        }
        assert!(
            started.elapsed() < TIMEOUT,
            "nothing written after {TIMEOUT:?}"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
    // Some replications in.
    std::thread::sleep(Duration::from_millis(300));
    (old, child)
}

#[test]
fn a_run_killed_while_it_replaces_its_folder_leaves_the_old_results_whole() {
    let d = setup();
    let (old, child) = replace_part_way(d.path());
    signal(&child, "KILL");
    let (status, _) = wait(child);
    assert_eq!(status.signal(), Some(9));
    let out = d.path().join("out");
    assert!(results(&out) == old, "the old results changed");
    // The next run removes what the killed one left.
    let again = run_cmd(d.path(), 1).arg("--no-plots").output().unwrap();
    assert!(
        again.status.success(),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
    assert!(!writing(&out), "a temporary entry is left");
    assert!(
        !out.join("report.html").exists(),
        "the old charts are replaced"
    );
}

#[test]
fn ctrl_c_while_a_run_replaces_its_folder_leaves_the_old_results_and_nothing_else() {
    let d = setup();
    let (old, child) = replace_part_way(d.path());
    signal(&child, "INT");
    let (status, err) = wait(child);
    assert_eq!(status.code(), Some(130), "{err}");
    assert!(err.contains("interrupted"), "{err}");
    let out = d.path().join("out");
    assert!(results(&out) == old, "the old results changed");
    assert!(!writing(&out), "a temporary entry is left");
}
