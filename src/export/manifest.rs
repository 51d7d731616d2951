//! `manifest.toml`: what produced the files beside it — the resolved scenario, the
//! seed, the version — so a result can be reproduced and shards can be checked to
//! belong together.

use serde::{Deserialize, Serialize};

use crate::engine::rng::stream_id;
use crate::explain::Bound;
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

/// What kind of folder a manifest describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FolderKind {
    /// One scenario's runs (its replications).
    #[default]
    Run,
    /// A grid of cells times replications.
    Sweep,
}

impl FolderKind {
    /// As the manifest writes it: `"run"` or `"sweep"`.
    pub fn as_str(self) -> &'static str {
        match self {
            FolderKind::Run => "run",
            FolderKind::Sweep => "sweep",
        }
    }
}

/// `manifest.toml`, typed. Written in field order; read leniently: a missing table or
/// key takes its default (a manifest of an older retrysim may lack some), unknown keys
/// are ignored.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// `[retrysim]`: what wrote it.
    #[serde(default)]
    pub retrysim: Meta,
    /// `[run]`: what ran.
    pub run: RunTable,
    /// `[resolved]`: numbers derived from the scenario.
    #[serde(default)]
    pub resolved: Resolved,
    /// `[explain]`: the lints of `retrysim explain` that fire on the scenario; written
    /// only when one does.
    #[serde(default, skip_serializing_if = "Explain::is_empty")]
    pub explain: Explain,
    /// `[scenario]`: the scenario table after overrides, presets resolved.
    #[serde(default)]
    pub scenario: toml::Table,
    /// `[output]`, last: the files retrysim wrote in the folder (see
    /// [`crate::export::owner`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<Output>,
}

/// `[retrysim]`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Meta {
    /// The version of retrysim.
    #[serde(default)]
    pub version: String,
}

/// `[run]`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunTable {
    /// A run or a sweep.
    #[serde(default)]
    pub kind: FolderKind,
    /// The swept keys, in column order (empty for a run).
    #[serde(default)]
    pub params: Vec<String>,
    /// The scenario's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scenario: Option<String>,
    /// The scenario file as given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// The scenario's identity ([`Origin::identity`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub identity: Option<String>,
    /// The `--set` overrides and `--seed`, as typed.
    #[serde(default)]
    pub overrides: Vec<String>,
    /// The base seed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<i64>,
    /// Replications per cell.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replications: Option<i64>,
    /// Runs in the folder.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runs: Option<i64>,
    /// [`fingerprint`] of the resolved scenario table.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fingerprint: Option<String>,
    /// A sweep's number of grid cells.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cells: Option<i64>,
    /// A sweep shard, `I/N`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<String>,
    /// The scenario file's comment header (its leading `#` lines, the `# ` dropped:
    /// question, setup, answer), for the report to lead with ([`header_of`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub header: Option<String>,
}

/// `[resolved]`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Resolved {
    /// Capacity of the dependency, attempts per second (absent when unlimited).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity_per_s: Option<f64>,
    /// Offered load of the open and burst fleets, requests per second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offered_per_s: Option<f64>,
    /// `worst_case_attempts_<fleet>`: each fleet's N^L ([`worst_case_number`]), a
    /// number, or `"unlimited"`.
    #[serde(flatten)]
    pub worst_case: toml::Table,
}

/// `[explain]`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Explain {
    /// Each lint that fired, as `retrysim explain` prints it.
    #[serde(default)]
    pub lints: Vec<String>,
}

impl Explain {
    /// Whether no lint fired.
    pub fn is_empty(&self) -> bool {
        self.lints.is_empty()
    }
}

/// `[output]`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Output {
    /// Relative names of the files retrysim wrote, sorted, once each.
    pub files: Vec<String>,
}

impl Output {
    /// The list of `files`, sorted, once each.
    pub fn of(files: &[String]) -> Output {
        let mut files = files.to_vec();
        files.sort();
        files.dedup();
        Output { files }
    }
}

/// The first line of every manifest.
pub const HEADER: &str = "# Written by retrysim: what produced the files in this folder.\n";

/// N^L of a fleet as a number: the product of its layers' `max_attempts`
/// ([`crate::explain::worst_case_attempts`], the one computation of it), the dependency
/// attempts of one logical request when every attempt fails; `None` when a layer has
/// no cap (or the product overflows). The manifest and the sweep's amplification chart
/// read it here.
pub fn worst_case_number(layers: &[crate::model::config::LayerConfig]) -> Option<f64> {
    match crate::explain::worst_case_attempts(layers) {
        Bound::Finite(n) => Some(n as f64),
        Bound::Unbounded => None,
    }
}

/// The comment header of a scenario file's text: its leading lines that start with
/// `#`, without the `#` and one space after it, blank lines at either end dropped;
/// `None` when the file opens with something else.
pub fn header_of(text: &str) -> Option<String> {
    let lines: Vec<&str> = text
        .lines()
        .map_while(|l| l.trim_start().strip_prefix('#'))
        .map(|l| l.strip_prefix(' ').unwrap_or(l).trim_end())
        .collect();
    let first = lines.iter().position(|l| !l.is_empty())?;
    let last = lines.iter().rposition(|l| !l.is_empty())?;
    Some(lines[first..=last].join("\n"))
}

/// A scenario text whose [`header_of`] is `header`: each line behind `# ` (a merge
/// rebuilds its scenario from a shard's manifest, which keeps the header, not the file).
pub fn header_text(header: &str) -> String {
    header.lines().map(|l| format!("# {l}\n")).collect()
}

/// Why a manifest cannot be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadError {
    /// Not TOML.
    Syntax(String),
    /// TOML without a `[run]` table: not a manifest of retrysim.
    NoRun,
    /// A key of the wrong type or value (the message names it: `run.kind: ...`).
    Field(String),
}

impl Manifest {
    /// The manifest of a run or sweep of `loaded` with `runs` runs, which will write
    /// `files` (relative names; see [`crate::export::owner`]): a run's; set
    /// [`RunTable::kind`], `params`, `cells` and `shard` for a sweep.
    pub fn of(loaded: &Loaded, origin: &Origin, runs: u64, files: &[String]) -> Manifest {
        let s = &loaded.scenario;
        let mut worst_case = toml::Table::new();
        for f in &s.fleets {
            let worst: toml::Value = match worst_case_number(&f.layers) {
                Some(n) => n.into(),
                None => "unlimited".into(),
            };
            worst_case.insert(format!("worst_case_attempts_{}", f.name), worst);
        }
        Manifest {
            retrysim: Meta {
                version: env!("CARGO_PKG_VERSION").to_string(),
            },
            run: RunTable {
                kind: FolderKind::Run,
                params: Vec::new(),
                scenario: Some(s.name.clone()),
                source: Some(loaded.source.path.clone()),
                identity: Some(origin.identity.clone()),
                overrides: origin.overrides.clone(),
                seed: Some(s.seed as i64),
                replications: Some(i64::from(s.replications)),
                runs: Some(runs as i64),
                fingerprint: Some(fingerprint(&loaded.resolved)),
                cells: None,
                shard: None,
                header: header_of(&loaded.source.text),
            },
            resolved: Resolved {
                capacity_per_s: s.dependency.capacity(),
                offered_per_s: Some(
                    s.fleets
                        .iter()
                        .filter_map(|f| f.offered_rate(s.duration))
                        .sum(),
                ),
                worst_case,
            },
            explain: Explain {
                lints: crate::explain::lint::lints(s)
                    .iter()
                    .map(ToString::to_string)
                    .collect(),
            },
            scenario: loaded.resolved.clone(),
            output: Some(Output::of(files)),
        }
    }

    /// The manifest's text: [`HEADER`], then the tables in field order.
    pub fn render(&self) -> String {
        format!("{HEADER}{}", toml::to_string(self).unwrap_or_default())
    }

    /// Parses manifest text.
    pub fn parse(text: &str) -> Result<Manifest, ReadError> {
        let table: toml::Table = toml::from_str(text)
            .map_err(|e| ReadError::Syntax(e.to_string().trim().to_string()))?;
        if !table.get("run").is_some_and(toml::Value::is_table) {
            return Err(ReadError::NoRun);
        }
        serde_path_to_error::deserialize(toml::Value::Table(table))
            .map_err(|e| ReadError::Field(format!("{}: {}", e.path(), e.inner())))
    }

    /// The dependency's capacity, attempts per second, when finite.
    pub fn capacity_per_s(&self) -> Option<f64> {
        self.resolved.capacity_per_s.filter(|v| v.is_finite())
    }

    /// The offered load, requests per second, when finite.
    pub fn offered_per_s(&self) -> Option<f64> {
        self.resolved.offered_per_s.filter(|v| v.is_finite())
    }

    /// The scenario's name, `unnamed` when the manifest has none.
    pub fn scenario_name(&self) -> &str {
        self.run.scenario.as_deref().unwrap_or("unnamed")
    }
}

/// Renders the manifest of a run of `loaded` (see [`Manifest::of`]).
pub fn render(loaded: &Loaded, origin: &Origin, runs: u64, files: &[String]) -> String {
    Manifest::of(loaded, origin, runs, files).render()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::{load, Source};

    fn loaded(text: &str) -> Loaded {
        let src = Source {
            path: "m.toml".into(),
            stem: "m".into(),
            text: text.into(),
        };
        load(src, &[]).expect("scenario loads")
    }

    const SCN: &str = "name = \"m\"\nduration = \"2s\"\n[dependency]\nservers = 2\nservice_time = \"10ms\"\n[[fleets]]\nname = \"web\"\narrival = { kind = \"poisson\", rate = 10 }\n[[fleets.layers]]\nmax_attempts = 3\n[[fleets.layers]]\nmax_attempts = \"unlimited\"\n";

    #[test]
    fn a_manifest_reads_back_as_it_was_written() {
        let origin = Origin {
            identity: "/x/m.toml".into(),
            overrides: vec!["seed=4".into()],
        };
        let mut m = Manifest::of(&loaded(SCN), &origin, 1, &["summary.csv".into()]);
        m.run.kind = FolderKind::Sweep;
        m.run.params = vec!["fleets.0.arrival.rate".into()];
        m.run.cells = Some(2);
        m.run.shard = Some("0/2".into());
        let text = m.render();
        assert!(text.starts_with(HEADER));
        assert!(
            text.ends_with("[output]\nfiles = [\"summary.csv\"]\n"),
            "{text}"
        );
        assert!(
            text.contains("worst_case_attempts_web = \"unlimited\"\n"),
            "{text}"
        );
        assert_eq!(Manifest::parse(&text), Ok(m));
    }

    #[test]
    fn the_lints_that_fire_are_recorded() {
        let m = Manifest::of(&loaded(SCN), &Origin::default(), 1, &[]);
        assert!(
            m.explain
                .lints
                .iter()
                .any(|l| l.starts_with("[too-many-attempts]")),
            "{:?}",
            m.explain.lints
        );
        assert!(m.render().contains("\n[explain]\nlints = ["));
    }

    #[test]
    fn a_header_survives_its_text() {
        for h in [
            "Question: q",
            "Question: q\n\n  Setup: x < y\n#tag",
            "a\n\n\nb",
        ] {
            assert_eq!(header_of(&header_text(h)).as_deref(), Some(h));
        }
    }

    #[test]
    fn the_header_is_the_leading_comment_block() {
        assert_eq!(header_of("name = \"x\"\n# late\n"), None);
        assert_eq!(header_of("#\n#\n\n# no\n"), None);
        assert_eq!(
            header_of("# Question: why?\n#\n#   Setup: x < y\n#\nname = \"x\"\n# Answer: no\n")
                .as_deref(),
            Some("Question: why?\n\n  Setup: x < y")
        );
        let m = Manifest::of(
            &loaded(&format!("# Question: q\n{SCN}")),
            &Origin::default(),
            1,
            &[],
        );
        assert_eq!(m.run.header.as_deref(), Some("Question: q"));
        assert_eq!(Manifest::parse(&m.render()), Ok(m));
    }

    #[test]
    fn bad_manifests_say_why() {
        assert_eq!(Manifest::parse("x = 1\n"), Err(ReadError::NoRun));
        assert!(matches!(Manifest::parse("[run"), Err(ReadError::Syntax(_))));
        match Manifest::parse("[run]\nkind = \"walk\"\n") {
            Err(ReadError::Field(e)) => assert!(e.starts_with("run.kind: "), "{e}"),
            other => panic!("{other:?}"),
        }
    }
}
