//! Shared helpers of both test binaries (the integration tests, and the white-box
//! tests of `src/tests/`, which include this file): run a scenario given as TOML text
//! through the public API, run the binary, pin a generated section.
#![allow(dead_code, unreachable_pub)]

use std::path::Path;
use std::process::{Command, Output};

use retrysim::{load_scenario_text, run_scenario, Loaded, Overrides, RunResult};

/// Parses and validates a scenario from TOML text, with `--set`-style overrides.
pub fn scenario(text: &str, sets: &[&str]) -> Loaded {
    let overrides = Overrides {
        sets: sets.iter().map(|s| s.to_string()).collect(),
        seed: None,
    };
    load_scenario_text("test.toml", text, &overrides)
        .unwrap_or_else(|e| panic!("scenario does not load: {e}"))
}

/// Runs replication `rep` of a scenario given as TOML text.
pub fn run_rep(text: &str, sets: &[&str], rep: u32) -> RunResult {
    run_scenario(&scenario(text, sets).scenario, rep)
}

/// Runs a scenario given as TOML text.
pub fn run(text: &str, sets: &[&str]) -> RunResult {
    run_rep(text, sets, 0)
}

/// A numeric summary column.
pub fn col(r: &RunResult, name: &str) -> f64 {
    r.summary
        .get(name)
        .unwrap_or_else(|| panic!("no column {name}"))
        .as_f64()
        .unwrap_or_else(|| panic!("column {name} is empty"))
}

/// An integer summary column.
pub fn count(r: &RunResult, name: &str) -> u64 {
    col(r, name) as u64
}

/// Mean and standard error of the mean.
pub fn mean_se(xs: &[f64]) -> (f64, f64) {
    let n = xs.len() as f64;
    let m = xs.iter().sum::<f64>() / n;
    let v = xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (n - 1.0);
    (m, (v / n).sqrt())
}

/// Whether `RETRYSIM_BLESS` asks a pinning test (golden values, the book's generated
/// pages) to rewrite its pins. Refused under CI (`CI` set and not `0` or `false`, as
/// CI services and `.ci/run` set it): pins are re-blessed by a person, in a commit that
/// says why, never by the pipeline that checks them.
pub fn bless() -> bool {
    if std::env::var_os("RETRYSIM_BLESS").is_none() {
        return false;
    }
    let ci = std::env::var("CI").unwrap_or_default();
    if !matches!(ci.as_str(), "" | "0" | "false") {
        panic!(
            "RETRYSIM_BLESS is refused under CI (CI={ci}): bless locally and commit the pins with the reason"
        );
    }
    true
}

/// The `retrysim` binary of this build. Cargo tells an integration test where it is;
/// the library's unit tests find it beside their executable (`target/<profile>/`, the
/// test executable being `target/<profile>/deps/retrysim-<hash>`), where `cargo test`
/// builds it for the integration tests (with `cargo test --lib` alone, run `cargo
/// build`, same profile, first).
pub fn bin() -> std::path::PathBuf {
    if let Some(path) = option_env!("CARGO_BIN_EXE_retrysim") {
        return path.into();
    }
    let exe = std::env::current_exe().expect("the test executable has a path");
    let profile = exe
        .parent()
        .and_then(Path::parent)
        .expect("the test executable is in target/<profile>/deps");
    let bin = profile.join(format!("retrysim{}", std::env::consts::EXE_SUFFIX));
    assert!(
        bin.is_file(),
        "no binary at {}: `cargo test` builds it; with `cargo test --lib`, run `cargo build` (same profile) first",
        bin.display()
    );
    bin
}

/// Runs the `retrysim` binary in `dir`; a panic is a test failure whatever the exit.
pub fn retrysim(dir: &Path, args: &[&str]) -> Output {
    let out = Command::new(bin())
        .current_dir(dir)
        .args(args)
        .output()
        .expect("the binary runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{args:?}: {err}");
    out
}

/// Runs the binary in `dir` and requires exit 0.
pub fn ok(dir: &Path, args: &[&str]) {
    let out = retrysim(dir, args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Runs the binary in `dir` under an address-space limit of `mib` MiB (`ulimit -v`):
/// a memory bound that did not hold ends the run with an allocation failure, which is
/// a test failure.
pub fn capped(dir: &Path, mib: u64, args: &[&str]) -> Output {
    let out = Command::new("sh")
        .current_dir(dir)
        .arg("-c")
        .arg(format!("ulimit -v {} && exec \"$0\" \"$@\"", mib << 10))
        .arg(bin())
        .args(args)
        .output()
        .expect("run retrysim under sh");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{args:?}: {err}");
    assert!(
        !err.contains("memory allocation"),
        "{args:?} ran out of its {mib} MiB: {err}"
    );
    out
}

/// A result file's bytes with what says *where* it was written left out, so two
/// folders of the same results compare equal: in `manifest.toml` (and `report.html`,
/// which shows it) the `identity` line, the scenario's absolute path; in the manifest
/// also its `[output]` list, which says whether charts were drawn. Other files as they are.
pub fn comparable(path: &Path) -> Vec<u8> {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    if !matches!(name, "manifest.toml" | "report.html") {
        return bytes;
    }
    let text = String::from_utf8(bytes).unwrap();
    // The manifest without its `[output]` table, its last.
    let text = match text.rfind("\n[output]\n") {
        Some(i) if name == "manifest.toml" => &text[..=i],
        _ => &text,
    };
    text.lines()
        .filter(|l| !l.starts_with("identity = "))
        .collect::<Vec<_>>()
        .join("\n")
        .into_bytes()
}

/// Checks that the part of the book page `docs/src/<page>` between `<!-- NAME:begin -->`
/// and `<!-- NAME:end -->` is `want` (what `command` prints); `RETRYSIM_BLESS=1`
/// rewrites it instead (refused under CI, as every pin); `filter` names the test in
/// the message.
pub fn pinned_section(page: &str, name: &str, want: &str, command: &str, filter: &str) {
    let begin = format!("<!-- {name}:begin -->\n");
    let end = format!("<!-- {name}:end -->");
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("docs/src")
        .join(page);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{page}: {e}"));
    let start = text
        .find(&begin)
        .unwrap_or_else(|| panic!("docs/src/{page} has no {begin:?}"))
        + begin.len();
    let stop = text[start..]
        .find(&end)
        .unwrap_or_else(|| panic!("docs/src/{page} has no {end:?}"))
        + start;
    if bless() {
        let new = format!("{}{want}{}", &text[..start], &text[stop..]);
        std::fs::write(&path, new).unwrap();
        return;
    }
    assert!(
        text[start..stop] == *want,
        "docs/src/{page} differs from `{command}`: RETRYSIM_BLESS=1 cargo test --release {filter}"
    );
}
