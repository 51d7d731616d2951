//! Layers imported from the configuration files teams deploy: `import = { format =
//! "grpc_service_config", file = "service_config.json", service = "pkg.Svc", method =
//! "Get" }` on a layer of `[[fleets.layers]]` or `[[services.calls.layers]]`.
//!
//! Resolution happens on the TOML table, before presets and parsing, as presets do:
//! the format's importer maps the file onto the layer's written keys, which go under
//! the keys written beside `import` (those win, and a part table without `kind`, or
//! with the imported one, is filled key by key). `preset` and `import` both give a
//! whole policy, so a layer may not have both. The file is read relative to the
//! scenario, within [`MAX_INPUT_BYTES`](super::inputs::MAX_INPUT_BYTES), and recorded
//! in the manifest's `[[inputs]]` with its SHA-256.
//!
//! A part of a layer (`budget`, `breaker`, `hedging`) can be imported on its own,
//! `budget = { import = { ... } }`: the part of the policy the file maps is kept, under
//! the keys written beside it, and it wins over the layer's own import.
//!
//! Every key an importer writes carries its [`Provenance`] (the line and the field of
//! the file); whatever the file sets that retrysim cannot model is a [`Warning`], never
//! dropped silently (`--deny-unmodelled` makes those errors). A format is one file of
//! this folder: a [`Format`] in [`FORMATS`] with the selector keys it takes and a
//! function from the file's text to a [`Mapped`] layer.

pub(crate) mod aws_config;
pub(crate) mod envoy;
pub(crate) mod grpc;
pub(crate) mod istio;
pub(crate) mod json;
pub(crate) mod linkerd;
pub(crate) mod resilience4j;
pub(crate) mod yaml;

use std::collections::BTreeMap;
use std::path::Path;

use super::error::ScenarioError;
use super::inputs::InputRecord;
use super::Source;

/// Where a key of an imported layer came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Provenance {
    /// The line of the file (1-based).
    pub line: u64,
    /// The field of the file, as written (`methodConfig[0].retryPolicy.maxAttempts`).
    pub field: String,
    /// Why the value is what it is, when the field does not say (a rule of the format).
    pub note: Option<String>,
}

/// Something the file sets that the imported layer does not carry as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    /// The line of the file.
    pub line: u64,
    /// The field of the file, as written.
    pub setting: String,
    /// What retrysim does instead.
    pub message: String,
    /// Whether retrysim cannot model it at all (`--deny-unmodelled` refuses these);
    /// otherwise it is modelled as the library does it, and said because it surprises
    /// (gRPC lowering `maxAttempts` to 5).
    pub unmodelled: bool,
}

/// A file mapped onto a layer: its keys in order, each with its provenance.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Mapped {
    /// What the selector matched in the file (`methodConfig[0].name[1]`).
    pub matched: String,
    /// Dotted keys of the layer (`backoff.initial`), their values and provenance.
    pub keys: Vec<(String, toml::Value, Provenance)>,
    /// What the file sets that the layer does not carry.
    pub warnings: Vec<Warning>,
}

impl Mapped {
    /// Adds a key.
    pub fn set(&mut self, key: &str, value: impl Into<toml::Value>, line: u64, field: &str) {
        self.keys.push((
            key.to_string(),
            value.into(),
            Provenance {
                line,
                field: field.to_string(),
                note: None,
            },
        ));
    }

    /// Adds a key whose value a rule of the format gives.
    pub fn set_by_rule(
        &mut self,
        key: &str,
        value: impl Into<toml::Value>,
        line: u64,
        field: &str,
        note: &str,
    ) {
        self.set(key, value, line, field);
        if let Some(k) = self.keys.last_mut() {
            k.2.note = Some(note.to_string());
        }
    }

    /// Adds a warning about a setting retrysim cannot model.
    pub fn unmodelled(&mut self, line: u64, setting: &str, message: impl Into<String>) {
        self.warnings.push(Warning {
            line,
            setting: setting.to_string(),
            message: message.into(),
            unmodelled: true,
        });
    }

    /// Adds a warning about a rule of the format retrysim applies as the library does.
    pub fn note(&mut self, line: u64, setting: &str, message: impl Into<String>) {
        self.warnings.push(Warning {
            line,
            setting: setting.to_string(),
            message: message.into(),
            unmodelled: false,
        });
    }

    /// The keys as a layer table (dotted keys nested).
    pub fn table(&self) -> toml::Table {
        let mut t = toml::Table::new();
        for (k, v, _) in &self.keys {
            let mut at = &mut t;
            let mut parts = k.split('.').peekable();
            while let Some(p) = parts.next() {
                if parts.peek().is_none() {
                    at.insert(p.to_string(), v.clone());
                } else {
                    at = at
                        .entry(p.to_string())
                        .or_insert_with(|| toml::Value::Table(toml::Table::new()))
                        .as_table_mut()
                        .expect("dotted keys of an importer nest tables");
                }
            }
        }
        t
    }
}

/// Why a file cannot be imported: where in it, and the rule broken.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Refusal {
    /// The line, when the file has one to name.
    pub line: Option<u64>,
    /// The field (empty for the file as a whole).
    pub field: String,
    /// The rule and what was found.
    pub message: String,
}

impl Refusal {
    /// A refusal at `line`, `field`.
    pub(crate) fn at(line: u64, field: &str, message: impl Into<String>) -> Refusal {
        Refusal {
            line: Some(line),
            field: field.to_string(),
            message: message.into(),
        }
    }

    /// The message after the file's name: `line 7, methodConfig[0].timeout: ...`.
    pub(crate) fn render(&self) -> String {
        match (self.line, self.field.is_empty()) {
            (Some(l), false) => format!("line {l}, {}: {}", self.field, self.message),
            (Some(l), true) => format!("line {l}: {}", self.message),
            (None, false) => format!("{}: {}", self.field, self.message),
            (None, true) => self.message.clone(),
        }
    }
}

/// Parses a configuration file written in JSON or YAML: JSON when its first character
/// (after white space) opens an object or an array, so a JSON file's errors are
/// serde_json's; YAML otherwise.
pub(crate) fn parse_tree(text: &str) -> Result<json::Node, (u64, String)> {
    match text
        .trim_start_matches(['\u{feff}', ' ', '\t', '\r', '\n'])
        .as_bytes()
        .first()
    {
        Some(b'{' | b'[') => json::parse(text),
        _ => yaml::parse(text),
    }
}

/// The selector of an import table: its keys other than `format` and `file`.
pub(crate) type Selector = BTreeMap<String, String>;

/// A configuration format retrysim imports.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Format {
    /// The name written in `format = "..."`.
    pub name: &'static str,
    /// What files it reads.
    pub about: &'static str,
    /// The selector keys it takes and what each names.
    pub selector: &'static [(&'static str, &'static str)],
    /// Maps the file's text onto a layer.
    pub map: fn(text: &str, selector: &Selector) -> Result<Mapped, Refusal>,
}

/// Every format, in the order messages list them.
pub(crate) const FORMATS: &[Format] = &[
    grpc::FORMAT,
    envoy::FORMAT,
    istio::FORMAT,
    linkerd::FORMAT,
    resilience4j::FORMAT,
    aws_config::FORMAT,
];

/// The format named `name`.
pub(crate) fn format(name: &str) -> Option<&'static Format> {
    FORMATS.iter().find(|f| f.name == name)
}

fn known_formats() -> String {
    FORMATS
        .iter()
        .map(|f| format!("\"{}\"", f.name))
        .collect::<Vec<_>>()
        .join(", ")
}

/// One layer's import: where it is, the file and what it gave.
#[derive(Debug, Clone, PartialEq)]
pub struct Imported {
    /// The layer (`fleets[0].layers[1]`).
    pub at: String,
    /// The format's name.
    pub format: &'static str,
    /// The file as written in the scenario.
    pub file: String,
    /// The mapped layer.
    pub mapped: Mapped,
    /// The keys written beside `import`, which override the file's.
    pub overridden: Vec<String>,
    /// The manifest's record of the file.
    pub record: InputRecord,
}

impl Imported {
    /// The warnings as `run`, `check` and `explain` print them (without `warning: `).
    pub fn warnings(&self, scenario: &str) -> Vec<String> {
        self.mapped
            .warnings
            .iter()
            .map(|w| {
                format!(
                    "scenario '{scenario}': {}.import: '{}' line {}, {}: {}",
                    self.at, self.file, w.line, w.setting, w.message
                )
            })
            .collect()
    }

    /// Lines for `explain`: each imported key, its value and where it came from.
    pub fn provenance(&self) -> Vec<String> {
        let mut out = vec![format!(
            "{}: imported from '{}' ({}, {})",
            self.at, self.file, self.format, self.mapped.matched
        )];
        for (k, v, p) in &self.mapped.keys {
            let over = if self.overridden.iter().any(|o| o == k) {
                " (overridden in the scenario)"
            } else {
                ""
            };
            out.push(format!(
                "  {k} = {v}  ← {}:{} {}{}{over}",
                self.file,
                p.line,
                p.field,
                p.note
                    .as_deref()
                    .map_or(String::new(), |n| format!(" ({n})"))
            ));
        }
        out
    }
}

/// Checks an import table and splits it: the format, the file, the selector.
fn parse_import<'a>(
    t: &'a toml::Value,
    field: &dyn Fn(&str, String) -> ScenarioError,
) -> Result<(&'static Format, &'a str, Selector), ScenarioError> {
    let Some(t) = t.as_table() else {
        return Err(field(
            "",
            format!(
                "must be a table {{ format = ..., file = ..., <selector> }} (found {})",
                t.type_str()
            ),
        ));
    };
    let s = |k: &str| -> Result<Option<&'a str>, ScenarioError> {
        match t.get(k) {
            None => Ok(None),
            Some(toml::Value::String(v)) => Ok(Some(v.as_str())),
            Some(v) => Err(field(
                &format!(".{k}"),
                format!("must be a string (found {})", v.type_str()),
            )),
        }
    };
    let Some(name) = s("format")? else {
        return Err(field(
            "",
            format!("needs `format` (known: {})", known_formats()),
        ));
    };
    let Some(fmt) = format(name) else {
        return Err(field(
            ".format",
            format!(
                "unknown format \"{}\" (known: {})",
                super::error::shown(name),
                known_formats()
            ),
        ));
    };
    let Some(file) = s("file")? else {
        return Err(field(
            "",
            "needs `file`: the path of the file, relative to the scenario".into(),
        ));
    };
    let mut selector = Selector::new();
    for k in t.keys() {
        if k == "format" || k == "file" {
            continue;
        }
        if !fmt.selector.iter().any(|(n, _)| n == k) {
            let allowed: Vec<String> = ["format", "file"]
                .iter()
                .copied()
                .chain(fmt.selector.iter().map(|(n, _)| *n))
                .map(|n| format!("`{n}`"))
                .collect();
            return Err(field(
                &format!(".{}", super::error::shown(k)),
                format!(
                    "is not a key of a {} import (allowed: {})",
                    fmt.name,
                    allowed.join(", ")
                ),
            ));
        }
        selector.insert(k.clone(), s(k)?.unwrap_or_default().to_string());
    }
    Ok((fmt, file, selector))
}

/// Checks the import table of the layer or part at `at`, refuses it beside a preset
/// (`preset`: the message), reads the file and maps it: the format, the file as
/// written, the mapping and the manifest's record.
fn read_import(
    source: &Source,
    base: &Path,
    at: &str,
    spec: &toml::Value,
    preset: Option<String>,
) -> Result<(&'static Format, String, Mapped, InputRecord), ScenarioError> {
    let field = |suffix: &str, message: String| ScenarioError::Field {
        path: source.path.clone(),
        field: format!("{at}.import{suffix}"),
        message,
    };
    let (fmt, file, selector) = parse_import(spec, &field)?;
    if let Some(m) = preset {
        return Err(field("", m));
    }
    let (text, record) = super::inputs::read_one(source, base, &format!("{at}.import.file"), file)?;
    let mapped =
        (fmt.map)(&text, &selector).map_err(|r| field("", format!("'{file}' {}", r.render())))?;
    Ok((fmt, file.to_string(), mapped, record))
}

/// Resolves the import of one layer in place (`at`: its field path).
fn import_layer(
    source: &Source,
    base: &Path,
    at: &str,
    layer: &mut toml::Table,
) -> Result<Option<Imported>, ScenarioError> {
    let Some(spec) = layer.get("import").cloned() else {
        return Ok(None);
    };
    let preset = layer.contains_key("preset").then(|| {
        "cannot be combined with `preset` on the same layer: each gives a whole policy (write the keys to change beside `import`)".to_string()
    });
    let (fmt, file, mapped, record) = read_import(source, base, at, &spec, preset)?;
    let overridden = mapped
        .keys
        .iter()
        .map(|(k, _, _)| k.clone())
        .filter(|k| written(layer, k))
        .collect();
    super::preset::merge_layer(layer, &mapped.table());
    Ok(Some(Imported {
        at: at.to_string(),
        format: fmt.name,
        file: file.to_string(),
        mapped,
        overridden,
        record,
    }))
}

/// The parts of a layer that can be imported on their own: `budget = { import = {
/// ... } }` takes the part of the policy the file maps onto it.
pub(crate) const PARTS: [&str; 3] = ["budget", "breaker", "hedging"];

/// Resolves the import of one part of a layer in place (`at`: the layer's field path).
/// The file is mapped as a layer's import would be; the part's keys are kept, under
/// the keys written beside `import`.
fn import_part(
    source: &Source,
    base: &Path,
    at: &str,
    part: &str,
    layer: &mut toml::Table,
) -> Result<Option<Imported>, ScenarioError> {
    let Some(toml::Value::Table(pt)) = layer.get(part) else {
        return Ok(None);
    };
    let Some(spec) = pt.get("import").cloned() else {
        return Ok(None);
    };
    let at = format!("{at}.{part}");
    let preset = pt.contains_key("preset").then(|| {
        format!("cannot be combined with `preset` on the same {part}: each gives the whole {part}")
    });
    let (fmt, file, mut mapped, record) = read_import(source, base, &at, &spec, preset)?;
    let prefix = format!("{part}.");
    let gives: Vec<String> = mapped
        .keys
        .iter()
        .map(|(k, _, _)| k.split('.').next().unwrap_or_default().to_string())
        .fold(Vec::new(), |mut v, k| {
            if !v.contains(&k) {
                v.push(k);
            }
            v
        });
    mapped.keys.retain(|(k, _, _)| k.starts_with(&prefix));
    if mapped.keys.is_empty() {
        return Err(ScenarioError::Field {
            path: source.path.clone(),
            field: format!("{at}.import"),
            message: format!(
                "'{file}' gives no {part} for {} (it gives: {})",
                mapped.matched,
                if gives.is_empty() {
                    "nothing".to_string()
                } else {
                    gives.join(", ")
                }
            ),
        });
    }
    let overridden = mapped
        .keys
        .iter()
        .map(|(k, _, _)| k.clone())
        .filter(|k| written(layer, k))
        .collect();
    let table = mapped.table();
    let Some(toml::Value::Table(imported)) = table.get(part) else {
        return Ok(None);
    };
    let Some(toml::Value::Table(pt)) = layer.get_mut(part) else {
        return Ok(None);
    };
    if let (Some(uk), Some(ik)) = (pt.get("kind"), imported.get("kind")) {
        if uk != ik {
            return Err(ScenarioError::Field {
                path: source.path.clone(),
                field: format!("{at}.kind"),
                message: format!(
                    "{uk} conflicts with the imported {part} (kind {ik}): leave `kind` out or drop the import"
                ),
            });
        }
    }
    pt.remove("import");
    for (k, v) in imported {
        if !pt.contains_key(k) {
            pt.insert(k.clone(), v.clone());
        }
    }
    Ok(Some(Imported {
        at,
        format: fmt.name,
        file: file.to_string(),
        mapped,
        overridden,
        record,
    }))
}

/// Whether the dotted key `k` is written in `layer` (before the import is merged).
fn written(layer: &toml::Table, k: &str) -> bool {
    let mut at = layer;
    let mut parts = k.split('.').peekable();
    while let Some(p) = parts.next() {
        match at.get(p) {
            None => return false,
            Some(toml::Value::Table(t)) if parts.peek().is_some() => at = t,
            Some(_) => return parts.peek().is_none(),
        }
    }
    false
}

/// Resolves every `import` of a scenario table's layers; `None` when there is none
/// (the table is used as it is).
pub(crate) fn resolve(
    source: &Source,
    table: &toml::Table,
) -> Result<Option<(toml::Table, Vec<Imported>)>, ScenarioError> {
    let has = |layers: &Option<&mut Vec<toml::Value>>| {
        layers.as_ref().is_some_and(|l| {
            l.iter().any(|l| {
                l.get("import").is_some()
                    || PARTS
                        .iter()
                        .any(|p| l.get(p).is_some_and(|t| t.get("import").is_some()))
            })
        })
    };
    let mut probe = table.clone();
    let any = super::preset::fleet_layers(&mut probe).iter().any(has)
        || super::preset::call_layers(&mut probe)
            .iter()
            .flatten()
            .any(has);
    if !any {
        return Ok(None);
    }
    let base = Path::new(&source.path)
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    let mut table = probe;
    let mut out = Vec::new();
    let mut each = |at: String, layers: &mut Vec<toml::Value>| -> Result<(), ScenarioError> {
        for (li, layer) in layers.iter_mut().enumerate() {
            if let Some(t) = layer.as_table_mut() {
                let at = format!("{at}[{li}]");
                // The parts first: what they import wins over the layer's import.
                for part in PARTS {
                    out.extend(import_part(source, &base, &at, part, t)?);
                }
                out.extend(import_layer(source, &base, &at, t)?);
            }
        }
        Ok(())
    };
    for (fi, layers) in super::preset::fleet_layers(&mut table)
        .into_iter()
        .enumerate()
    {
        if let Some(l) = layers {
            each(format!("fleets[{fi}].layers"), l)?;
        }
    }
    for (si, calls) in super::preset::call_layers(&mut table)
        .into_iter()
        .enumerate()
    {
        for (ci, layers) in calls.into_iter().enumerate() {
            if let Some(l) = layers {
                each(format!("services[{si}].calls[{ci}].layers"), l)?;
            }
        }
    }
    Ok(Some((table, out)))
}

/// `retrysim import`: maps `path` with `format` and `selector`, as an import of a
/// scenario in the file's folder would; errors name the file.
pub(crate) fn import_file(
    path: &Path,
    format_name: &str,
    selector: &Selector,
) -> Result<Mapped, crate::Error> {
    let fmt = format(format_name).ok_or_else(|| {
        crate::Error::bad_input(format!(
            "--format: unknown format \"{}\" (known: {})",
            super::error::shown(format_name),
            known_formats()
        ))
    })?;
    for k in selector.keys() {
        if !fmt.selector.iter().any(|(n, _)| n == k) {
            return Err(crate::Error::bad_input(format!(
                "--{}: not a selector of {} (allowed: {})",
                k.replace('_', "-"),
                fmt.name,
                fmt.selector
                    .iter()
                    .map(|(n, _)| format!("--{}", n.replace('_', "-")))
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
    }
    let bytes = crate::export::read::read(path, super::inputs::MAX_INPUT_BYTES)
        .map_err(|e| crate::Error::io("cannot read", path, e))?;
    let text = String::from_utf8(bytes).map_err(|e| {
        crate::Error::bad_input(format!("'{}' is not UTF-8 text: {e}", path.display()))
    })?;
    (fmt.map)(&text, selector)
        .map_err(|r| crate::Error::bad_input(format!("'{}' {}", path.display(), r.render())))
}

/// The layer as TOML, each key commented with the line and field it came from; the
/// keys are dotted, so the text goes as it is under a `[[fleets.layers]]` header.
pub(crate) fn render(mapped: &Mapped, file: &str) -> String {
    let lines: Vec<String> = mapped
        .keys
        .iter()
        .map(|(k, v, _)| format!("{k} = {v}"))
        .collect();
    let width = lines.iter().map(|l| l.chars().count()).max().unwrap_or(0);
    let mut out = String::new();
    for (l, (_, _, p)) in lines.iter().zip(&mapped.keys) {
        let pad = width - l.chars().count();
        out.push_str(&format!(
            "{l}{:pad$}  # {file}:{} {}{}\n",
            "",
            p.line,
            p.field,
            p.note
                .as_deref()
                .map_or(String::new(), |n| format!(" ({n})"))
        ));
    }
    for w in &mapped.warnings {
        out.push_str(&format!(
            "# {}: {file}:{} {}: {}\n",
            if w.unmodelled { "unmodelled" } else { "note" },
            w.line,
            w.setting,
            w.message
        ));
    }
    out
}
