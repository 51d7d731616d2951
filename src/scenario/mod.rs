//! Scenario files: reading, `--set` overrides, parsing and validation.
//!
//! ```text
//! text ─► toml::Table ─► overrides (--set, sweep cells) ─► imports ─► presets ─► ScenarioFile ─► validate ─► Scenario
//! ```
//! Unknown keys are rejected; every error names the file and the field path.

pub(crate) mod error;
pub(crate) mod file;
pub(crate) mod guard;
pub(crate) mod import;
pub(crate) mod inputs;
pub(crate) mod overrides;
pub(crate) mod preset;
pub(crate) mod reference;
pub(crate) mod suggest;
pub(crate) mod validate;

use std::path::Path;

pub(crate) use crate::model::config::Scenario;
pub use error::ScenarioError;
pub(crate) use file::ScenarioFile;
pub use overrides::Overrides;

/// The embedded default scenario (`scenarios/default.toml`): a short storm that recovers.
pub const DEFAULT_SCENARIO: &str = include_str!("../../scenarios/default.toml");

/// Largest scenario or baseline file read (16 MiB).
pub(crate) const MAX_FILE_BYTES: u64 = 16 << 20;

/// Reads a text file of at most [`MAX_FILE_BYTES`]: a path that is not a regular file
/// (a device such as `/dev/zero`, a FIFO, a folder) is refused before it is opened, a
/// larger file from its metadata, and the read itself stops past the cap in case the
/// file grows meanwhile.
pub(crate) fn read_text(path: &Path) -> std::io::Result<String> {
    crate::export::read::read_to_string(path, MAX_FILE_BYTES)
}

/// A scenario's text and where it came from.
#[derive(Debug, Clone)]
pub struct Source {
    /// How messages name it (the path as given, or `<embedded default>`).
    pub path: String,
    /// File stem: the default scenario name.
    pub stem: String,
    /// The TOML text.
    pub text: String,
}

impl Source {
    /// Reads a scenario file.
    pub fn read(path: &Path) -> Result<Source, ScenarioError> {
        let shown = path.display().to_string();
        let text = read_text(path).map_err(|source| ScenarioError::Read {
            path: shown.clone(),
            source,
        })?;
        // The stem is checked as a name when the file sets none (`validate`).
        let stem = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        Ok(Source {
            path: shown,
            stem,
            text,
        })
    }

    /// A scenario given as text rather than read from a file (the playground's):
    /// messages name it `path`, and its stem (the name it gets when it sets none) is
    /// that name's file stem, as if the text had been read from a file of that name.
    pub fn from_text(path: &str, text: &str) -> Source {
        Source {
            path: path.to_string(),
            stem: Path::new(path)
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default(),
            text: text.to_string(),
        }
    }

    /// The embedded default scenario.
    pub fn embedded_default() -> Source {
        Source {
            path: "<embedded default>".to_string(),
            stem: "default".to_string(),
            text: DEFAULT_SCENARIO.to_string(),
        }
    }

    /// Parses the text into a TOML table.
    pub fn table(&self) -> Result<toml::Table, ScenarioError> {
        if self.text.trim().is_empty() {
            return Err(ScenarioError::Empty {
                path: self.path.clone(),
            });
        }
        let table: toml::Table = toml::from_str(&self.text).map_err(|e| ScenarioError::Syntax {
            path: self.path.clone(),
            message: e.to_string().trim_end().to_string(),
        })?;
        if table.is_empty() {
            return Err(ScenarioError::Empty {
                path: self.path.clone(),
            });
        }
        Ok(table)
    }
}

/// A scenario parsed and validated, with the table it came from (overrides applied).
#[derive(Debug, Clone)]
pub struct Loaded {
    /// Where it came from.
    pub source: Source,
    /// The table after overrides, presets unresolved: what sweeps vary.
    pub table: toml::Table,
    /// The table with its presets resolved: what the manifest records.
    pub resolved: toml::Table,
    /// The parsed file.
    pub file: ScenarioFile,
    /// The validated scenario.
    pub scenario: Scenario,
    /// The data files it read, for the manifest.
    pub inputs: Vec<inputs::InputRecord>,
    /// The layers imported from configuration files, with provenance and warnings.
    pub imports: Vec<import::Imported>,
}

impl Loaded {
    /// The import warnings, as `run`, `check` and `explain` print them after
    /// `warning: `; `unmodelled_only` keeps those `--deny-unmodelled` refuses.
    pub fn import_warnings(&self, unmodelled_only: bool) -> Vec<String> {
        self.imports
            .iter()
            .flat_map(|i| {
                let all = i.warnings(&self.source.path);
                all.into_iter()
                    .zip(&i.mapped.warnings)
                    .filter(|(_, w)| w.unmodelled || !unmodelled_only)
                    .map(|(s, _)| s)
                    .collect::<Vec<_>>()
            })
            .collect()
    }
}

/// Parses and validates a table (after any overrides).
pub(crate) fn from_table(source: &Source, table: toml::Table) -> Result<Loaded, ScenarioError> {
    guard::lists(&source.path, &table)?;
    let (imported, imports) = match import::resolve(source, &table)? {
        Some((t, i)) => (Some(t), i),
        None => (None, Vec::new()),
    };
    let expanded = imported.as_ref().unwrap_or(&table);
    let mut resolved = preset::resolve(&source.path, expanded)?;
    let mut file: ScenarioFile =
        serde_path_to_error::deserialize(toml::Value::Table(std::mem::take(&mut resolved.parse)))
            .map_err(|e| parse_error(source, expanded, &resolved.table, &e))?;
    resolved.fill_part_presets(&mut file);
    let mut inputs = inputs::read(source, &mut file)?;
    inputs
        .records
        .extend(imports.iter().map(|i| i.record.clone()));
    let scenario =
        validate::validate(&file, &source.path, &source.stem).map_err(|e| inputs.name_rows(e))?;
    guard::check(&scenario, &source.path)?;
    Ok(Loaded {
        source: source.clone(),
        table,
        resolved: resolved.table,
        file,
        scenario,
        inputs: inputs.records,
        imports,
    })
}

/// A parse error as the user reads it: where (the field, with the key serde could not
/// name), and what is allowed there in the file's terms, not Rust's
/// ([`error::in_user_terms`]; a [`error::Probe`] asks serde for the names allowed).
fn parse_error(
    source: &Source,
    table: &toml::Table,
    resolved: &toml::Table,
    e: &serde_path_to_error::Error<toml::de::Error>,
) -> ScenarioError {
    // The TOML value deserializer appends "in `a.b.c`": the path says it better.
    let inner = e
        .inner()
        .to_string()
        .lines()
        .filter(|l| !l.starts_with("in `"))
        .collect::<Vec<_>>()
        .join(" ");
    let mut field = field_path(e.path());
    let key = culprit(resolved, e.path(), &inner);
    if let Some(key) = &key {
        field = format!("{field}.{key}");
    }
    let mut at = toml::Value::Table(resolved.clone());
    let found = value_at(&mut at, e.path(), key.as_deref()).map(|v| v.clone());
    let names = error::Probe::of(&inner)
        .and_then(|p| probe(source, table, e.path(), key.as_deref(), p))
        .unwrap_or_default();
    let message = error::in_user_terms(&inner, found.as_ref(), &names);
    ScenarioError::Field {
        path: source.path.clone(),
        field,
        message: suggest::did_you_mean(message.trim_end()),
    }
}

/// The value at a parse error's `path` (and `key`, see [`culprit`]) in `root`.
fn value_at<'a>(
    root: &'a mut toml::Value,
    path: &serde_path_to_error::Path,
    key: Option<&str>,
) -> Option<&'a mut toml::Value> {
    use serde_path_to_error::Segment;
    let mut at = root;
    for seg in path.iter() {
        at = match seg {
            Segment::Map { key } => at.as_table_mut()?.get_mut(key.as_str())?,
            Segment::Seq { index } => at.as_array_mut()?.get_mut(*index)?,
            _ => return None,
        };
    }
    match key {
        Some(k) => at.as_table_mut()?.get_mut(k),
        None => Some(at),
    }
}

/// The names allowed where a parse error is: the file parsed again with the probe's
/// value there, and the names serde's error then lists.
fn probe(
    source: &Source,
    table: &toml::Table,
    path: &serde_path_to_error::Path,
    key: Option<&str>,
    p: error::Probe,
) -> Option<Vec<String>> {
    let mut parse = toml::Value::Table(preset::resolve(&source.path, table).ok()?.parse);
    *value_at(&mut parse, path, key)? = p.value();
    let e = serde_path_to_error::deserialize::<_, ScenarioFile>(parse).err()?;
    error::Probe::names(&e.inner().to_string())
}

/// The key of the table at `path` that a parse error is about, when serde cannot say:
/// inside a table chosen by its `kind` (a policy), the path stops at the table, so an
/// unknown choice (`formula = "newest"`) or a value of the wrong type is matched to the
/// one key (other than `kind`) that holds the value the message quotes.
fn culprit(root: &toml::Table, path: &serde_path_to_error::Path, message: &str) -> Option<String> {
    use serde_path_to_error::Segment;
    let mut at = root.get(match path.iter().next()? {
        Segment::Map { key } => key.as_str(),
        _ => return None,
    })?;
    for seg in path.iter().skip(1) {
        at = match seg {
            Segment::Map { key } => at.as_table()?.get(key.as_str())?,
            Segment::Seq { index } => at.as_array()?.get(*index)?,
            _ => return None,
        };
    }
    let table = at.as_table()?;
    let quoted = |open: &str, close: char| {
        let rest = &message[message.find(open)? + open.len()..];
        Some(rest[..rest.find(close)?].to_string())
    };
    let matches = |v: &toml::Value| -> bool {
        if let Some(x) = quoted("unknown variant `", '`') {
            return v.as_str() == Some(x.as_str());
        }
        if let Some(x) = quoted("invalid type: string \"", '"')
            .or_else(|| quoted("invalid value: string \"", '"'))
        {
            return v.as_str() == Some(x.as_str());
        }
        if let Some(x) = quoted("invalid type: integer `", '`')
            .or_else(|| quoted("invalid value: integer `", '`'))
        {
            return v.as_integer().map(|i| i.to_string()) == Some(x);
        }
        if let Some(x) = quoted("invalid type: floating point `", '`') {
            return v.as_float().map(|f| f.to_string()) == Some(x);
        }
        if let Some(x) = quoted("duration ", ' ').or_else(|| quoted("window ", ' ')) {
            if message.contains(" has no unit") {
                return v.as_integer().map(|i| i.to_string()) == Some(x.clone())
                    || v.as_float().map(|f| f.to_string()) == Some(x);
            }
        }
        if let Some(x) = quoted("invalid type: boolean `", '`') {
            return v.as_bool().map(|b| b.to_string()) == Some(x);
        }
        false
    };
    let mut found = table
        .iter()
        .filter(|(k, v)| k.as_str() != "kind" && matches(v))
        .map(|(k, _)| k.clone());
    let key = found.next()?;
    found.next().is_none().then_some(key)
}

/// Renders where a parse error is, as messages name fields (`fleets[0].layers[1].name`);
/// a key that is not a bare TOML key is quoted (`""`, `"a b"`), and the root is
/// `(top level)`.
fn field_path(p: &serde_path_to_error::Path) -> String {
    use serde_path_to_error::Segment;
    let mut out = String::new();
    for seg in p {
        let key = match seg {
            Segment::Seq { index } => {
                out.push_str(&format!("[{index}]"));
                continue;
            }
            Segment::Map { key } | Segment::Enum { variant: key } => {
                let bare = !key.is_empty()
                    && key
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
                if bare {
                    key.clone()
                } else {
                    format!("{key:?}")
                }
            }
            Segment::Unknown => "?".to_string(),
        };
        if !out.is_empty() {
            out.push('.');
        }
        out.push_str(&key);
    }
    if out.is_empty() {
        "(top level)".to_string()
    } else {
        out
    }
}

/// Reads a scenario file (`None`: the embedded default), applies the overrides, and
/// parses and validates it.
pub(crate) fn load_file(
    path: Option<&Path>,
    overrides: &Overrides,
) -> Result<Loaded, ScenarioError> {
    let source = match path {
        Some(p) => Source::read(p)?,
        None => Source::embedded_default(),
    };
    load_overridden(source, overrides)
}

/// Parses and validates a scenario given as text, with its overrides, touching no
/// file: messages name it `path` exactly as they name a file of that name read by
/// [`load_file`], so the same text gives the same errors.
pub(crate) fn load_text(
    path: &str,
    text: &str,
    overrides: &Overrides,
) -> Result<Loaded, ScenarioError> {
    load_overridden(Source::from_text(path, text), overrides)
}

/// Applies the overrides to a scenario's text, then parses and validates it.
fn load_overridden(source: Source, overrides: &Overrides) -> Result<Loaded, ScenarioError> {
    let mut table = source.table()?;
    apply_sets(&source, &mut table, &overrides.sets)?;
    if let Some(seed) = overrides.seed {
        // Manifests and CSV files hold seeds as signed 64-bit integers.
        let seed = i64::try_from(seed).map_err(|_| ScenarioError::Override {
            path: source.path.clone(),
            key: "--seed".into(),
            message: format!("must be at most {} (found {seed})", i64::MAX),
        })?;
        table.insert("seed".into(), toml::Value::Integer(seed));
    }
    from_table(&source, table)
}

/// Reads, overrides (`KEY=VALUE` strings), parses and validates a scenario.
#[cfg(any(test, feature = "dev-hooks"))]
pub(crate) fn load(source: Source, sets: &[String]) -> Result<Loaded, ScenarioError> {
    let mut table = source.table()?;
    apply_sets(&source, &mut table, sets)?;
    from_table(&source, table)
}

/// Applies `KEY=VALUE` overrides, in order, to the table of `source`.
pub(crate) fn apply_sets(
    source: &Source,
    table: &mut toml::Table,
    sets: &[String],
) -> Result<(), ScenarioError> {
    for s in sets {
        let (key, value) = overrides::parse_set(s).map_err(|message| ScenarioError::Override {
            path: source.path.clone(),
            key: s.clone(),
            message,
        })?;
        overrides::apply(table, &key, value).map_err(|message| ScenarioError::Override {
            path: source.path.clone(),
            key,
            message,
        })?;
    }
    Ok(())
}

/// The examples of this file's docs, as unit tests (the module is the crate's own,
/// so rustdoc cannot run them).
#[cfg(test)]
mod doc_examples {
    #[test]
    fn from_text_example() {
        let s = crate::scenario::Source::from_text("playground.toml", "seed = 1");
        assert_eq!(
            (s.path.as_str(), s.stem.as_str()),
            ("playground.toml", "playground")
        );
    }
}
