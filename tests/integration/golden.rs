//! Golden outputs: the bytes every shipped scenario writes, pinned by a hash per file,
//! so a change of structure (a refactor, a move of code) is proven not to change a
//! result. A run folder (`run`, with its charts for the default scenario) and, where
//! the scenario has a `[sweep]`, a sweep folder, both as the CLI writes them.
//!
//! When a change is *meant* to change results, regenerate the pins and say why in the
//! commit: `RETRYSIM_BLESS=1 cargo test --release --test integration golden::`.

use std::collections::BTreeMap;
use std::path::Path;

use crate::common::{comparable, ok};

const GOLDEN: &str = "tests/fixtures/golden.txt";

/// FNV-1a of the bytes: stable across machines and Rust versions.
fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Every file below `dir` (but a sweep's `runs/`), relative, with its hash.
fn hashes(dir: &Path, prefix: &str, out: &mut BTreeMap<String, u64>) {
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            let rel = p.strip_prefix(dir).unwrap().display().to_string();
            if p.is_dir() {
                if rel != "runs" {
                    stack.push(p);
                }
            } else {
                out.insert(format!("{prefix}/{rel}"), fnv(&comparable(&p)));
            }
        }
    }
}

#[test]
fn every_shipped_scenario_writes_its_golden_bytes() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let d = tempfile::tempdir().unwrap();
    let mut got = BTreeMap::new();
    let mut files: Vec<String> = std::fs::read_dir(root.join("scenarios"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".toml"))
        .collect();
    files.sort();
    for f in &files {
        let stem = f.trim_end_matches(".toml");
        // Relative to the crate root, so the manifest's `source` is the same on
        // every checkout.
        let src = format!("scenarios/{f}");
        let src = src.as_str();
        let run_out = d.path().join(format!("run-{stem}"));
        let mut args = vec!["run", src, "-q", "--out", run_out.to_str().unwrap()];
        if stem != "default" {
            args.push("--no-plots");
        }
        ok(root, &args);
        hashes(&run_out, &format!("{stem}/run"), &mut got);
        let text = std::fs::read_to_string(root.join("scenarios").join(f)).unwrap();
        if text.contains("\n[sweep]") {
            let sweep_out = d.path().join(format!("sweep-{stem}"));
            ok(
                root,
                &[
                    "sweep",
                    src,
                    "-q",
                    "--no-plots",
                    "--out",
                    sweep_out.to_str().unwrap(),
                ],
            );
            hashes(&sweep_out, &format!("{stem}/sweep"), &mut got);
        }
    }
    let rendered: String = got.iter().map(|(k, v)| format!("{k} {v:016x}\n")).collect();
    let path = root.join(GOLDEN);
    if std::env::var_os("RETRYSIM_BLESS").is_some() {
        std::fs::write(&path, &rendered).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{GOLDEN}: {e} (bless it: RETRYSIM_BLESS=1)"));
    let want: BTreeMap<&str, &str> = want.lines().filter_map(|l| l.split_once(' ')).collect();
    let mut diffs = Vec::new();
    for (k, v) in &got {
        match want.get(k.as_str()) {
            Some(w) if *w == format!("{v:016x}") => {}
            Some(_) => diffs.push(format!("changed: {k}")),
            None => diffs.push(format!("new: {k}")),
        }
    }
    for k in want.keys() {
        if !got.contains_key(*k) {
            diffs.push(format!("gone: {k}"));
        }
    }
    assert!(
        diffs.is_empty(),
        "{} output files differ from {GOLDEN} (if the change is meant to change results, bless it and say why):\n{}",
        diffs.len(),
        diffs.join("\n")
    );
}
