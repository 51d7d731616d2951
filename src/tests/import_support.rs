//! What the importers' tests share: a scenario around one layer, a folder of files,
//! the upstream fixtures, loading, and the comparison of an import with the layer
//! written by hand (same model, same CSV bytes).

use std::path::{Path, PathBuf};

use crate::scenario::{load_file, Loaded, Overrides, ScenarioError};

use crate::tests::common::retrysim;

/// A scenario around one fleet layer, failures enough for retries to matter.
pub(crate) fn scenario(layer: &str) -> String {
    format!(
        "name = 'imp'\nseed = 7\nduration = '3s'\n\
         [dependency]\nservers = 4\nservice_time = '10ms'\nerror_rate = 0.3\n\
         [[fleets]]\nname = 'f'\narrival = {{ kind = 'poisson', rate = 300 }}\n\
         [[fleets.layers]]\n{layer}\n"
    )
}

/// A folder holding `files` (name, text).
pub(crate) fn folder(files: &[(&str, &str)]) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    for (name, text) in files {
        std::fs::write(d.path().join(name), text).unwrap();
    }
    d
}

pub(crate) fn fixture(name: &str) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/import")
        .join(name);
    std::fs::read_to_string(p).unwrap()
}

pub(crate) fn load(dir: &Path, name: &str) -> Result<Loaded, ScenarioError> {
    load_file(Some(&dir.join(name)), &Overrides::default())
}

pub(crate) fn loaded(dir: &Path, name: &str) -> Loaded {
    load(dir, name).unwrap_or_else(|e| panic!("{name} does not load: {e}"))
}

pub(crate) fn error(dir: &Path, name: &str) -> String {
    match load(dir, name) {
        Ok(_) => panic!("{name} loads"),
        Err(e) => e.to_string(),
    }
}

/// The validated scenario as text, the layers' preset names left out.
pub(crate) fn model(l: &Loaded) -> String {
    let mut s = l.scenario.clone();
    for f in &mut s.fleets {
        for layer in &mut f.layers {
            layer.preset = None;
        }
    }
    format!("{s:?}")
}

/// Runs `scenario` in `dir` into `out` and returns its CSV files, by name.
pub(crate) fn csvs(dir: &Path, scenario: &str, out: &str) -> Vec<(String, Vec<u8>)> {
    let o = retrysim(
        dir,
        &["run", scenario, "--out", out, "--no-plots", "-q", "-j", "1"],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir.join(out))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "csv"))
        .map(|p: PathBuf| {
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read(&p).unwrap(),
            )
        })
        .collect();
    files.sort();
    assert!(files.len() >= 4, "{files:?}");
    files
}

/// The imported and hand-written scenarios in `dir` are the same model and write the
/// same CSV bytes.
pub(crate) fn same_as_by_hand(dir: &Path) {
    let (a, b) = (loaded(dir, "imported.toml"), loaded(dir, "by_hand.toml"));
    assert_eq!(model(&a), model(&b));
    assert_eq!(
        csvs(dir, "imported.toml", "out_imported"),
        csvs(dir, "by_hand.toml", "out_by_hand")
    );
}
