//! `manifest.toml`: what produced the files beside it — the resolved scenario, the
//! seed, the version — so a result can be reproduced and shards can be checked to
//! belong together.

use crate::engine::rng::stream_id;
use crate::scenario::Loaded;

/// The fingerprint of a scenario table: FNV-1a of its canonical TOML text.
pub fn fingerprint(table: &toml::Table) -> String {
    let text = toml::to_string(table).unwrap_or_default();
    format!("{:016x}", stream_id(&text))
}

/// Where a run's scenario came from, beyond its text: what decides whether a folder's
/// results are this scenario's.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Origin {
    /// The scenario's identity: its canonical file path, or `<embedded default>`.
    pub identity: String,
    /// The `--set` overrides and `--seed` given, as typed.
    pub overrides: Vec<String>,
}

impl Origin {
    /// The origin of a scenario read from `path` (or the embedded default).
    pub fn of(path: Option<&std::path::Path>, overrides: Vec<String>) -> Origin {
        let identity = match path {
            Some(p) => std::fs::canonicalize(p)
                .unwrap_or_else(|_| p.to_path_buf())
                .display()
                .to_string(),
            None => "<embedded default>".to_string(),
        };
        Origin {
            identity,
            overrides,
        }
    }
}

/// Renders the manifest of a run or sweep of `loaded` with `runs` runs, which will
/// write `files` (relative names; see [`crate::export::owner`]).
///
/// `[run]` holds `kind` (`"run"` or `"sweep"`), `params` (the swept keys, in column
/// order), the scenario name, source and identity, the overrides, the seed, and the
/// fingerprint; `[resolved]` the capacity and offered load; `[scenario]` the scenario
/// table after overrides, with its presets resolved; `[output]`, last, the files.
pub fn render(
    loaded: &Loaded,
    origin: &Origin,
    runs: u64,
    extra: &[(&str, toml::Value)],
    files: &[String],
) -> String {
    let s = &loaded.scenario;
    let mut meta = toml::Table::new();
    meta.insert("version".into(), env!("CARGO_PKG_VERSION").into());
    let mut run = toml::Table::new();
    run.insert("kind".into(), "run".into());
    run.insert("params".into(), toml::Value::Array(Vec::new()));
    run.insert("scenario".into(), s.name.clone().into());
    run.insert("source".into(), loaded.source.path.clone().into());
    run.insert("identity".into(), origin.identity.clone().into());
    run.insert(
        "overrides".into(),
        toml::Value::Array(origin.overrides.iter().map(|o| o.as_str().into()).collect()),
    );
    run.insert("seed".into(), toml::Value::Integer(s.seed as i64));
    run.insert(
        "replications".into(),
        toml::Value::Integer(i64::from(s.replications)),
    );
    run.insert("runs".into(), toml::Value::Integer(runs as i64));
    run.insert("fingerprint".into(), fingerprint(&loaded.resolved).into());
    for (k, v) in extra {
        run.insert((*k).to_string(), v.clone());
    }
    let mut resolved = toml::Table::new();
    if let Some(c) = s.dependency.capacity() {
        resolved.insert("capacity_per_s".into(), c.into());
    }
    let offered: f64 = s
        .fleets
        .iter()
        .filter_map(|f| f.offered_rate(s.duration))
        .sum();
    resolved.insert("offered_per_s".into(), offered.into());
    for f in &s.fleets {
        // N^L, or "unlimited" when a layer has no attempt cap.
        let worst: toml::Value = match crate::explain::worst_case_attempts(&f.layers) {
            crate::explain::Bound::Finite(n) => (n as f64).into(),
            crate::explain::Bound::Unbounded => "unlimited".into(),
        };
        resolved.insert(format!("worst_case_attempts_{}", f.name), worst);
    }
    let mut root = toml::Table::new();
    root.insert("retrysim".into(), meta.into());
    root.insert("run".into(), run.into());
    root.insert("resolved".into(), resolved.into());
    root.insert("scenario".into(), loaded.resolved.clone().into());
    root.insert(
        "output".into(),
        crate::export::owner::output_table(files).into(),
    );
    format!(
        "# Written by retrysim: what produced the files in this folder.\n{}",
        toml::to_string(&root).unwrap_or_default()
    )
}
