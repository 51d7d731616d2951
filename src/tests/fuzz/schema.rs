//! The scenario schema as the parser itself states it, for the fuzzer's keys: an
//! unknown key put in a table makes serde list every key of that table ("unknown
//! field `x`, expected one of `a`, `b`"), an unknown `kind` every variant, an unknown
//! preset every preset. Nothing here is a hand list, so a key added to the schema is a
//! key the fuzzer mutates; [`covered`] (what the fuzzer knows how to fill) must match
//! it both ways.

use std::collections::{BTreeMap, BTreeSet};

use crate::scenario::{from_table, overrides, Source};
use toml::Value;

/// A key no table has.
const PROBE: &str = "__probe__";

/// A valid scenario with every optional table present, to probe from.
const BASE: &str = r#"
duration = "10s"
[limits]
[check]
[dependency]
servers = 2
service_time = "10ms"
[[fleets]]
name = "a"
arrival = { kind = "poisson", rate = 10 }
[[fleets.layers]]
max_attempts = 2
[[outages]]
start = "1s"
end = "2s"
mode = { kind = "fail" }
[[expect]]
metric = "logical"
min = 0
"#;

/// A table of the schema: its dotted path in [`BASE`] (with `kind = K` when it is one
/// variant of a tagged table) and its keys.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct Table {
    /// Dotted path (`fleets.0.layers.0.backoff`).
    pub path: String,
    /// The variant (`exponential`), for a tagged table.
    pub kind: Option<String>,
    /// Its keys (`kind` included for a variant).
    pub keys: Vec<String>,
}

/// Everything the probes found.
#[derive(Debug, Clone, Default)]
pub(super) struct Schema {
    /// Every table and variant.
    pub tables: Vec<Table>,
    /// The kinds of each tagged table, by path.
    pub kinds: BTreeMap<String, Vec<String>>,
    /// Preset names, by the path of the table that takes `preset`.
    pub presets: BTreeMap<String, Vec<String>>,
}

/// Untagged or free-form tables: their keys cannot be probed (`load_profile` is a list
/// of points or `{ ramp }`; `sweep`, `check.tolerance` and `expect.where` take any key).
pub(super) const UNPROBED: [&str; 3] = ["at", "multiplier", "ramp"];

/// Plain tables, by path.
const PLAIN: [&str; 7] = [
    "",
    "limits",
    "check",
    "dependency",
    "fleets.0",
    "fleets.0.layers.0",
    "outages.0",
];
/// The expectation table (probed apart: its `where` is free-form).
const EXPECT: &str = "expect.0";
/// Tagged tables, by path.
const TAGGED: [&str; 10] = [
    "dependency.service_time",
    "dependency.admission",
    "dependency.queue_policy",
    "fleets.0.arrival",
    "fleets.0.layers.0.backoff",
    "fleets.0.layers.0.budget",
    "fleets.0.layers.0.breaker",
    "fleets.0.layers.0.limiter",
    "fleets.0.layers.0.hop_latency",
    "outages.0.mode",
];
/// Tables that take a `preset`.
const PRESETS: [&str; 5] = [
    "fleets.0.layers.0",
    "fleets.0.layers.0.backoff",
    "fleets.0.layers.0.budget",
    "fleets.0.layers.0.breaker",
    "fleets.0.layers.0.limiter",
];

fn base() -> toml::Table {
    toml::from_str(BASE).expect("the probe base is TOML")
}

/// The error of loading `t` (the base must load, so a probe's error is its own).
fn error(t: toml::Table) -> Option<String> {
    let src = Source {
        path: "probe.toml".into(),
        stem: "probe".into(),
        text: String::new(),
    };
    from_table(&src, t).err().map(|e| e.to_string())
}

/// The names a message lists after `marker`: the `quoted` ones of serde's "expected one
/// of `a`, `b`" or "expected `a`", nothing for "there are no fields".
fn listed(message: &str, marker: &str) -> Option<Vec<String>> {
    let at = message.find(marker)?;
    let rest = &message[at + marker.len()..];
    if rest.contains("there are no fields") {
        return Some(Vec::new());
    }
    let rest = rest.split_once("expected")?.1;
    let names: Vec<String> = rest
        .split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect();
    (!names.is_empty()).then_some(names)
}

fn set(t: &mut toml::Table, path: &str, v: Value) {
    let full = if path.is_empty() {
        v
    } else {
        overrides::apply(t, path, v).unwrap_or_else(|e| panic!("{path}: {e}"));
        return;
    };
    if let Value::Table(x) = full {
        t.extend(x);
    }
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// The keys of the table at `path` once `prepare` has run on the base; `None` when
/// an unknown key loads (serde lets a unit variant of a tagged enum ignore them).
fn keys_at(path: &str, prepare: &dyn Fn(&mut toml::Table)) -> Option<Vec<String>> {
    let mut t = base();
    prepare(&mut t);
    set(&mut t, &join(path, PROBE), Value::Integer(1));
    let msg = error(t)?;
    let marker = format!("unknown field `{PROBE}`");
    Some(listed(&msg, &marker).unwrap_or_else(|| panic!("{path}: no key list in: {msg}")))
}

/// Probes the whole schema.
pub(super) fn probe() -> Schema {
    assert_eq!(error(base()), None, "the probe base must load");
    let mut s = Schema::default();
    for path in PLAIN.iter().chain([&EXPECT]) {
        s.tables.push(Table {
            path: path.to_string(),
            kind: None,
            keys: keys_at(path, &|_| {}).unwrap_or_else(|| panic!("{path}: an unknown key loads")),
        });
    }
    for path in TAGGED {
        let mut t = base();
        let mut kind = toml::Table::new();
        kind.insert("kind".into(), Value::String(PROBE.into()));
        set(&mut t, path, Value::Table(kind));
        let msg = error(t).unwrap_or_else(|| panic!("{path}: an unknown kind loads"));
        let marker = format!("unknown variant `{PROBE}`");
        let kinds = listed(&msg, &marker).unwrap_or_else(|| panic!("{path}: no kinds in: {msg}"));
        for k in &kinds {
            let only_kind = |t: &mut toml::Table| {
                let mut v = toml::Table::new();
                v.insert("kind".into(), Value::String(k.clone()));
                set(t, path, Value::Table(v));
            };
            let mut keys = keys_at(path, &only_kind).unwrap_or_default();
            keys.push("kind".into());
            s.tables.push(Table {
                path: path.to_string(),
                kind: Some(k.clone()),
                keys,
            });
        }
        s.kinds.insert(path.to_string(), kinds);
    }
    for path in PRESETS {
        let mut t = base();
        set(&mut t, &join(path, "preset"), Value::String(PROBE.into()));
        let msg = error(t).unwrap_or_else(|| panic!("{path}: an unknown preset loads"));
        let names = msg
            .split_once("(known: ")
            .and_then(|(_, r)| r.split_once(')'))
            .map(|(l, _)| l.split(", ").map(str::to_string).collect::<Vec<_>>())
            .unwrap_or_else(|| panic!("{path}: no preset list in: {msg}"));
        s.presets.insert(path.to_string(), names);
    }
    s
}

impl Schema {
    /// Every key of every table, the unprobed ones included.
    pub(super) fn keys(&self) -> BTreeSet<String> {
        let mut k: BTreeSet<String> = self.tables.iter().flat_map(|t| t.keys.clone()).collect();
        k.extend(UNPROBED.map(str::to_string));
        k
    }

    /// Dotted paths of every key in the probe base's layout (`fleets.0.layers.0.max_attempts`),
    /// for `--set`-style mutations.
    pub(super) fn paths(&self) -> Vec<String> {
        let mut p: BTreeSet<String> = BTreeSet::new();
        for t in &self.tables {
            for k in &t.keys {
                p.insert(join(&t.path, k));
            }
        }
        p.into_iter().collect()
    }

    /// The variants of the tagged table at `path`, each with its keys (`kind` left out).
    pub(super) fn variants(&self, path: &str) -> Vec<(String, Vec<String>)> {
        self.tables
            .iter()
            .filter(|t| t.path == path)
            .filter_map(|t| {
                let keys = t.keys.iter().filter(|k| *k != "kind").cloned().collect();
                t.kind.clone().map(|k| (k, keys))
            })
            .collect()
    }
}

#[test]
fn the_probes_find_every_table_and_kind() {
    let s = probe();
    let kinds = |p: &str| s.kinds[p].len();
    assert!(kinds("fleets.0.layers.0.backoff") >= 11, "{:?}", s.kinds);
    assert!(kinds("fleets.0.layers.0.limiter") >= 1, "{:?}", s.kinds);
    let layer = &s
        .tables
        .iter()
        .find(|t| t.path == "fleets.0.layers.0")
        .unwrap()
        .keys;
    for k in ["limiter", "total_timeout", "preset", "max_attempts"] {
        assert!(layer.contains(&k.to_string()), "{layer:?}");
    }
    assert!(!s.presets["fleets.0.layers.0"].is_empty());
}

#[test]
fn every_schema_key_is_one_the_fuzzer_fills_and_no_other() {
    let schema = probe().keys();
    let known: BTreeSet<String> = super::covered().into_iter().map(str::to_string).collect();
    let missing: Vec<_> = schema.difference(&known).collect();
    let stale: Vec<_> = known.difference(&schema).collect();
    assert!(
        missing.is_empty(),
        "keys of the schema the fuzzer has no value for (add them to `value_for`): {missing:?}"
    );
    assert!(
        stale.is_empty(),
        "keys the fuzzer fills that no table has: {stale:?}"
    );
}
