//! `manifest.toml`: what produced the files beside it — the resolved scenario, the
//! seed, the version — so a result can be reproduced and shards can be checked to
//! belong together; and, in `[plot]`, what the charts need beyond the CSV files, so
//! a folder is redrawn from itself.

use serde::{Deserialize, Serialize};

use crate::engine::rng::stream_id;
use crate::explain::Bound;
use crate::model::config::{OutageTiming, Scenario};
use crate::scenario::Loaded;

/// The fingerprint of a scenario table: FNV-1a of its canonical TOML text.
pub(crate) fn fingerprint(table: &toml::Table) -> String {
    let text = toml::to_string(table).unwrap_or_default();
    format!("{:016x}", stream_id(&text))
}

/// The fingerprint of a loaded scenario: its resolved table's ([`fingerprint`]), and
/// the SHA-256 of each data file it read, so results of an older recording are not
/// taken for this one's.
pub(crate) fn fingerprint_of(loaded: &Loaded) -> String {
    if loaded.inputs.is_empty() {
        return fingerprint(&loaded.resolved);
    }
    let mut text = toml::to_string(&loaded.resolved).unwrap_or_default();
    for i in &loaded.inputs {
        text.push_str(&format!("\n{} {}", i.key, i.sha256));
    }
    format!("{:016x}", stream_id(&text))
}

/// Where a run's scenario came from, beyond its text: what decides whether a folder's
/// results are this scenario's.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Origin {
    /// The scenario's identity: its canonical file path, or `<embedded default>`.
    pub identity: String,
    /// The `--set` overrides and `--seed` given, as typed.
    pub overrides: Vec<String>,
}

impl Origin {
    /// The origin of a scenario read from `path` (or the embedded default).
    pub(crate) fn of(path: Option<&std::path::Path>, overrides: Vec<String>) -> Origin {
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
pub(crate) enum FolderKind {
    /// One scenario's runs (its replications).
    #[default]
    Run,
    /// A grid of cells times replications.
    Sweep,
}

impl FolderKind {}

/// `manifest.toml`, typed. Written in field order; read leniently: a missing table or
/// key takes its default (a manifest of an older retrysim may lack some), unknown keys
/// are ignored.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Manifest {
    /// `[retrysim]`: what wrote it.
    #[serde(default)]
    pub retrysim: Meta,
    /// `[run]`: what ran.
    pub run: RunTable,
    /// `[resolved]`: numbers derived from the scenario.
    #[serde(default)]
    pub resolved: Resolved,
    /// `[[inputs]]`: the data files the scenario read, with their SHA-256; written only
    /// when it read one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub inputs: Vec<crate::scenario::inputs::InputRecord>,
    /// `[explain]`: the lints of `retrysim explain` that fire on the scenario; written
    /// only when one does.
    #[serde(default, skip_serializing_if = "Explain::is_empty")]
    pub explain: Explain,
    /// `[scenario]`: the scenario table after overrides, presets resolved.
    #[serde(default)]
    pub scenario: toml::Table,
    /// `[plot]`: what the charts and the report need beyond the CSV files ([`Plot`]);
    /// absent in a manifest of a retrysim older than it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plot: Option<Plot>,
    /// `[output]`, last: the files retrysim wrote in the folder (see
    /// [`crate::export::owner`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<Output>,
}

/// `[retrysim]`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Meta {
    /// The version of retrysim.
    #[serde(default)]
    pub version: String,
}

/// `[run]`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct RunTable {
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
pub(crate) struct Resolved {
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
pub(crate) struct Explain {
    /// Each lint that fired, as `retrysim explain` prints it.
    #[serde(default)]
    pub lints: Vec<String>,
}

impl Explain {
    /// Whether no lint fired.
    pub(crate) fn is_empty(&self) -> bool {
        self.lints.is_empty()
    }
}

/// `[output]`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Output {
    /// Relative names of the files retrysim wrote, sorted, once each.
    pub files: Vec<String>,
}

impl Output {
    /// The list of `files`, sorted, once each.
    pub(crate) fn of(files: &[String]) -> Output {
        let mut files = files.to_vec();
        files.sort();
        files.dedup();
        Output { files }
    }
}

/// `[plot]`: what `retrysim plot` needs beyond the folder's CSV files, worked out from
/// the scenario when the folder is written, so the charts and the report are drawn from
/// the folder alone: an old folder is drawn as it was, whatever a newer retrysim makes
/// of its scenario.
///
/// ```toml
/// [plot]
/// labels = [["1", "3"]]              # per swept key: its values' labels (none in a run)
/// worst_case_attempts = [1.0, 9.0]   # a sweep's N^L per grid cell
///
/// [[plot.expect]]                    # each [[expect]], resolved against the grid
/// index = 0
/// metric = "amplification"
/// max = 1.5
/// per = "cell"
///
/// [plot.expect.select]               # the cells it applies to (absent: every cell)
/// "fleets.0.layers.0.max_attempts" = ["1"]
///
/// [[plot.graph.services]]            # a service graph's run: its shape
/// name = "db"
/// servers = 4
/// calls = []
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Plot {
    /// Per swept key (in `run.params` order), the labels of its values in order, as
    /// the `param_` columns show them; empty in a run folder (one cell). Grid cell `c`
    /// takes, of each key, the value at `c` written in mixed radix over the keys'
    /// numbers of values, the last key varying fastest.
    #[serde(default)]
    pub labels: Vec<Vec<String>>,
    /// A sweep's worst-case attempts per logical request of each grid cell, in cell
    /// order: the largest N^L of its fleets ([`cell_worst_case`]); the `amplification`
    /// chart's x axis.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub worst_case_attempts: Vec<Limit<f64>>,
    /// A sweep whose keys shape the retry stack but whose grid is too large to build
    /// every cell of (more than [`MAX_WORST_CASE_CELLS`]): its number of
    /// cells, and `worst_case_attempts` is empty (0: not left out).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub worst_case_cells: u64,
    /// Why the scenario's `[[expect]]` entries cannot be resolved against the folder's
    /// grid (the report says they were not evaluated).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expect_error: Option<String>,
    /// A run folder's `[[expect]]` entries that select sweep cells (`where`): it has
    /// no grid, so they are left out.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub expect_skipped: u64,
    /// `[[plot.expect]]`: the scenario's `[[expect]]` entries resolved against the
    /// folder's grid, as `retrysim check` resolves them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub expect: Vec<Expect>,
    /// `[plot.graph]`: the shape of a service graph, in a run folder of one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub graph: Option<GraphShape>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// A number that may be unlimited: the number, or `"unlimited"` in the TOML.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Limit<T> {
    /// A number.
    Finite(T),
    /// No limit.
    Unlimited,
}

/// How [`Limit::Unlimited`] is written.
const UNLIMITED: &str = "unlimited";

impl<T> Limit<T> {
    /// The number, `None` when unlimited.
    pub(crate) fn finite(self) -> Option<T> {
        match self {
            Limit::Finite(n) => Some(n),
            Limit::Unlimited => None,
        }
    }
}

impl<T: Serialize> Serialize for Limit<T> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Limit::Finite(n) => n.serialize(s),
            Limit::Unlimited => s.serialize_str(UNLIMITED),
        }
    }
}

impl<'de, T: serde::de::DeserializeOwned> Deserialize<'de> for Limit<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = toml::Value::deserialize(d)?;
        if v.as_str() == Some(UNLIMITED) {
            return Ok(Limit::Unlimited);
        }
        T::deserialize(v.clone()).map(Limit::Finite).map_err(|_| {
            serde::de::Error::custom(format!("expected a number or \"{UNLIMITED}\" (found {v})"))
        })
    }
}

/// What an expectation's bound applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum ExpectPer {
    /// Each selected cell's mean over its replications.
    Cell,
    /// Every run of each selected cell.
    Run,
}

/// `[[plot.expect]]`: one `[[expect]]` entry resolved against the folder's grid.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Expect {
    /// Its index in the scenario's `[[expect]]` list.
    pub index: u64,
    /// The summary column.
    pub metric: String,
    /// Lower bound.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<f64>,
    /// Upper bound.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<f64>,
    /// Per cell or per run.
    pub per: ExpectPer,
    /// The grid cells it applies to: per swept key it constrains, the labels of the
    /// values it selects; a key not listed takes every value (absent: every cell).
    #[serde(default, skip_serializing_if = "toml::Table::is_empty")]
    pub select: toml::Table,
}

/// `[plot.graph]`: a service graph as the `graph` and `services` charts draw it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct GraphShape {
    /// `[[plot.graph.fleets]]`, in order.
    #[serde(default)]
    pub fleets: Vec<GraphFleet>,
    /// `[[plot.graph.services]]`, in order.
    #[serde(default)]
    pub services: Vec<GraphService>,
    /// `[[plot.graph.outages]]`, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub outages: Vec<GraphOutage>,
}

/// A fleet of a service graph.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct GraphFleet {
    /// Its name.
    pub name: String,
    /// The service it calls.
    pub target: String,
}

/// A service of a service graph.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct GraphService {
    /// Its name.
    pub name: String,
    /// Its servers.
    pub servers: Limit<u32>,
    /// The services its calls go to, in call order (a fan-out's callees in its order).
    pub calls: Vec<String>,
}

/// An outage of a service graph.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct GraphOutage {
    /// The service it hits; absent: every service.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service: Option<String>,
    /// Its window `[start, end)`, seconds; absent: random (Markov) windows, which
    /// `timeseries.csv` marks where they fell.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_s: Option<[f64; 2]>,
}

impl GraphShape {
    /// The shape of the service graph `scn`.
    pub(crate) fn of(scn: &Scenario) -> GraphShape {
        let service = |i: u16| {
            scn.services
                .get(usize::from(i))
                .map_or_else(String::new, |s| s.name.clone())
        };
        GraphShape {
            fleets: scn
                .fleets
                .iter()
                .map(|f| GraphFleet {
                    name: f.name.clone(),
                    target: service(f.target),
                })
                .collect(),
            services: scn
                .services
                .iter()
                .map(|s| GraphService {
                    name: s.name.clone(),
                    servers: s.capacity.servers.map_or(Limit::Unlimited, Limit::Finite),
                    calls: s
                        .calls
                        .iter()
                        .flat_map(|c| c.to.iter().map(|t| service(*t)))
                        .collect(),
                })
                .collect(),
            outages: scn
                .outages
                .iter()
                .map(|o| GraphOutage {
                    service: o.target.map(service),
                    window_s: match o.timing {
                        OutageTiming::Window { start, end } => {
                            Some([start as f64 / 1e9, end as f64 / 1e9])
                        }
                        OutageTiming::Markov { .. } => None,
                    },
                })
                .collect(),
        }
    }
}

/// The most cells whose N^L a sweep's manifest records: each is a build of the cell's
/// scenario when the sweep is written, and a chart of more points says no more.
pub(crate) const MAX_WORST_CASE_CELLS: usize = 10_000;

/// Whether a swept key changes the retry stack's worst case.
pub(crate) fn shapes_attempts(key: &str) -> bool {
    key.ends_with("max_attempts") || key.split('.').any(|p| p == "layers")
}

/// The worst-case attempts per logical request of a scenario: the largest N^L of its
/// fleets ([`worst_case_number`]), unlimited when one of them is.
pub(crate) fn cell_worst_case(scn: &Scenario) -> Limit<f64> {
    let mut worst: Option<f64> = None;
    for f in &scn.fleets {
        let Some(n) = worst_case_number(&f.layers) else {
            return Limit::Unlimited;
        };
        worst = Some(worst.map_or(n, |w| w.max(n)));
    }
    worst.map_or(Limit::Unlimited, Limit::Finite)
}

/// The manifest text without its `[plot]` table (what it says produced the files,
/// not what the charts were drawn from): the text before the last `[plot]` header,
/// which the manifest writes after every table but `[output]`. Apply it to the text
/// without `[output]` ([`crate::export::owner::without_output`]).
pub(crate) fn without_plot(text: &str) -> &str {
    match text.rfind("\n[plot]\n") {
        Some(i) => &text[..=i],
        None => text,
    }
}

/// The first line of every manifest.
pub(crate) const HEADER: &str = "# Written by retrysim: what produced the files in this folder.\n";

/// N^L of a fleet as a number: the product of its layers' `max_attempts`
/// ([`crate::explain::worst_case_attempts`], the one computation of it), the dependency
/// attempts of one logical request when every attempt fails; `None` when a layer has
/// no cap (or the product overflows). The manifest and the sweep's amplification chart
/// read it here.
pub(crate) fn worst_case_number(layers: &[crate::model::config::LayerConfig]) -> Option<f64> {
    match crate::explain::worst_case_attempts(layers) {
        Bound::Finite(n) => Some(n as f64),
        Bound::Unbounded => None,
    }
}

/// The comment header of a scenario file's text: its leading lines that start with
/// `#`, without the `#` and one space after it, blank lines at either end dropped;
/// `None` when the file opens with something else.
pub(crate) fn header_of(text: &str) -> Option<String> {
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
pub(crate) fn header_text(header: &str) -> String {
    header.lines().map(|l| format!("# {l}\n")).collect()
}

/// Why a manifest cannot be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ReadError {
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
    /// [`RunTable::kind`], `params`, `cells` and `shard` for a sweep, and
    /// [`Manifest::plot`].
    pub(crate) fn of(loaded: &Loaded, origin: &Origin, runs: u64, files: &[String]) -> Manifest {
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
                fingerprint: Some(fingerprint_of(loaded)),
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
            inputs: loaded.inputs.clone(),
            explain: Explain {
                lints: crate::explain::lint::lints(s)
                    .iter()
                    .map(ToString::to_string)
                    .collect(),
            },
            scenario: loaded.resolved.clone(),
            plot: None,
            output: Some(Output::of(files)),
        }
    }

    /// The manifest's text: [`HEADER`], then the tables in field order.
    pub(crate) fn render(&self) -> String {
        format!("{HEADER}{}", toml::to_string(self).unwrap_or_default())
    }

    /// Parses manifest text.
    pub(crate) fn parse(text: &str) -> Result<Manifest, ReadError> {
        let table: toml::Table = toml::from_str(text)
            .map_err(|e| ReadError::Syntax(e.to_string().trim().to_string()))?;
        if !table.get("run").is_some_and(toml::Value::is_table) {
            return Err(ReadError::NoRun);
        }
        serde_path_to_error::deserialize(toml::Value::Table(table))
            .map_err(|e| ReadError::Field(format!("{}: {}", e.path(), e.inner())))
    }

    /// The dependency's capacity, attempts per second, when finite.
    pub(crate) fn capacity_per_s(&self) -> Option<f64> {
        self.resolved.capacity_per_s.filter(|v| v.is_finite())
    }

    /// The offered load, requests per second, when finite.
    pub(crate) fn offered_per_s(&self) -> Option<f64> {
        self.resolved.offered_per_s.filter(|v| v.is_finite())
    }

    /// The scenario's name, `unnamed` when the manifest has none.
    pub(crate) fn scenario_name(&self) -> &str {
        self.run.scenario.as_deref().unwrap_or("unnamed")
    }
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

    const GRAPH: &str = "name = \"g\"\nduration = \"10s\"\n[[services]]\nname = \"front\"\nservers = 4\nservice_time = \"1ms\"\n[[services.calls]]\nto = [\"a\", \"b\"]\n[[services.calls]]\nto = \"b\"\n[[services]]\nname = \"a\"\nservers = \"unlimited\"\nservice_time = \"1ms\"\n[[services]]\nname = \"b\"\nservers = 2\nservice_time = \"1ms\"\n[[fleets]]\nname = \"users\"\narrival = { kind = \"poisson\", rate = 10 }\n[[fleets.layers]]\nmax_attempts = 2\n[[outages]]\ntarget = \"b\"\nstart = \"2s\"\nend = \"3500ms\"\nmode = { kind = \"fail\" }\n[[outages]]\nkind = \"markov\"\nmean_up = \"5s\"\nmean_down = \"1s\"\nmode = { kind = \"fail\" }\n";

    #[test]
    fn the_plot_table_records_the_graph_the_worst_cases_and_the_expectations_and_reads_back() {
        let mut m = Manifest::of(
            &loaded(GRAPH),
            &Origin::default(),
            1,
            &["summary.csv".into()],
        );
        let graph = GraphShape::of(&loaded(GRAPH).scenario);
        assert_eq!(
            graph.fleets,
            vec![GraphFleet {
                name: "users".into(),
                target: "front".into()
            }]
        );
        assert_eq!(graph.services[0].calls, vec!["a", "b", "b"]);
        assert_eq!(graph.services[0].servers, Limit::Finite(4));
        assert_eq!(graph.services[1].servers, Limit::Unlimited);
        assert_eq!(
            graph.outages,
            vec![
                GraphOutage {
                    service: Some("b".into()),
                    window_s: Some([2.0, 3.5])
                },
                GraphOutage {
                    service: None,
                    window_s: None
                }
            ]
        );
        let mut select = toml::Table::new();
        select.insert("fleets.0.arrival.rate".into(), vec!["200"].into());
        m.plot = Some(Plot {
            labels: vec![vec!["100".into(), "200".into()]],
            worst_case_attempts: vec![Limit::Finite(27.0), Limit::Unlimited],
            worst_case_cells: 0,
            expect_error: None,
            expect_skipped: 1,
            expect: vec![Expect {
                index: 2,
                metric: "amplification".into(),
                min: None,
                max: Some(1.5),
                per: ExpectPer::Run,
                select,
            }],
            graph: Some(graph),
        });
        let text = m.render();
        for line in [
            "\n[plot]\nlabels = [[\"100\", \"200\"]]\nworst_case_attempts = [27.0, \"unlimited\"]\nexpect_skipped = 1\n",
            "\n[[plot.expect]]\nindex = 2\nmetric = \"amplification\"\nmax = 1.5\nper = \"run\"\n",
            "\n[plot.expect.select]\n\"fleets.0.arrival.rate\" = [\"200\"]\n",
            "\n[[plot.graph.services]]\nname = \"a\"\nservers = \"unlimited\"\ncalls = []\n",
            "\n[[plot.graph.outages]]\nservice = \"b\"\nwindow_s = [2.0, 3.5]\n",
        ] {
            assert!(text.contains(line), "{line} not in {text}");
        }
        // Between the scenario and the file list, which stays last.
        let plot = text.find("\n[plot]\n").unwrap();
        assert!(text.find("\n[scenario]\n").unwrap() < plot);
        assert!(plot < text.find("\n[output]\n").unwrap());
        assert_eq!(Manifest::parse(&text), Ok(m.clone()));
        // What the report shows: the manifest as before, without the table.
        let mut old = m;
        old.plot = None;
        let shown = crate::export::owner::without_output(&text);
        assert_eq!(
            without_plot(shown),
            crate::export::owner::without_output(&old.render())
        );
    }

    #[test]
    fn a_worst_case_is_the_largest_fleet_s_unless_one_is_unlimited() {
        let two = SCN.replace("max_attempts = \"unlimited\"", "max_attempts = 4");
        assert_eq!(cell_worst_case(&loaded(&two).scenario), Limit::Finite(12.0));
        assert_eq!(cell_worst_case(&loaded(SCN).scenario), Limit::Unlimited);
        let more = format!("{two}[[fleets]]\nname = \"b\"\narrival = {{ kind = \"poisson\", rate = 1 }}\n[[fleets.layers]]\nmax_attempts = 20\n");
        assert_eq!(
            cell_worst_case(&loaded(&more).scenario),
            Limit::Finite(20.0)
        );
    }

    #[test]
    fn a_bad_plot_table_names_the_key_and_what_it_holds() {
        let text = "[run]\nkind = \"sweep\"\n[plot]\nworst_case_attempts = [3, \"lots\"]\n";
        match Manifest::parse(text) {
            Err(ReadError::Field(e)) => assert!(
                e.starts_with(
                    "plot.worst_case_attempts[1]: expected a number or \"unlimited\" (found \"lots\")"
                ),
                "{e}"
            ),
            other => panic!("{other:?}"),
        }
        // An integer reads as the number it is.
        let m = Manifest::parse("[run]\n[plot]\nworst_case_attempts = [3]\n").unwrap();
        assert_eq!(
            m.plot.unwrap().worst_case_attempts,
            vec![Limit::Finite(3.0)]
        );
        // A manifest of an older retrysim has none.
        assert_eq!(Manifest::parse("[run]\n").unwrap().plot, None);
    }
}
