//! The scenario file's reference, from its schema: [`schema`] is the JSON Schema
//! schemars derives from the written forms ([`super::file::ScenarioFile`] and the
//! mechanisms' `Written` tables), doc comments as descriptions and the defaults
//! validation uses as `default`; [`markdown`] renders it as the book's scenario-key
//! page (`retrysim reference --markdown`), so the page is the parser's own account.

use serde_json::{Map, Value};

use super::file::ScenarioFile;

/// The JSON Schema (draft 2020-12) of a scenario file.
pub(crate) fn schema() -> Value {
    let generator = schemars::generate::SchemaSettings::draft2020_12().into_generator();
    let root = generator.into_root_schema_for::<ScenarioFile>();
    serde_json::to_value(root).expect("a schema is JSON")
}

/// The schema, a definition resolved where a `$ref` points to it.
struct Defs<'a>(
    &'a Map<String, Value>,
    std::cell::RefCell<Vec<(String, String)>>,
);

impl<'a> Defs<'a> {
    /// `s` with its `$ref` followed (once: definitions are not references).
    fn resolve(&self, s: &'a Value) -> &'a Value {
        match s.get("$ref").and_then(Value::as_str) {
            Some(r) => r
                .strip_prefix("#/$defs/")
                .and_then(|name| self.0.get(name))
                .unwrap_or(s),
            None => s,
        }
    }
}

/// A table of the reference: its path as written (`fleets.layers.backoff`), whether
/// it is a list of tables, the `kind` it is the variant of, and its schema.
struct Table<'a> {
    path: String,
    list: bool,
    kind: Option<String>,
    schema: &'a Value,
}

/// The reference as Markdown: a section per table, top level first, each with a row
/// per key (type and allowed values, default, doc), then the tables inside it.
pub(crate) fn markdown() -> String {
    let schema = schema();
    let empty = Map::new();
    let defs = Defs(
        schema
            .get("$defs")
            .and_then(Value::as_object)
            .unwrap_or(&empty),
        Default::default(),
    );
    let mut out = String::new();
    let mut queue = vec![Table {
        path: String::new(),
        list: false,
        kind: None,
        schema: &schema,
    }];
    // Depth first, in the order the keys are declared.
    while let Some(t) = queue.pop() {
        let mut inner = Vec::new();
        section(&mut out, &defs, &t, &mut inner);
        inner.reverse();
        queue.extend(inner);
    }
    out
}

/// The heading of a table: `[fleets.layers]`, `[[fleets]]`, `fleets.layers.backoff`
/// with `kind = "exponential"`.
fn heading(t: &Table) -> String {
    let name = match (t.path.is_empty(), t.list) {
        (true, _) => "Top level".to_string(),
        (false, true) => format!("`[[{}]]`", t.path),
        (false, false) => format!("`[{}]`", t.path),
    };
    match &t.kind {
        Some(k) => format!("{name} with `kind = \"{k}\"`"),
        None => name,
    }
}

/// One table's section; the tables inside it are pushed on `inner`.
fn section<'a>(out: &mut String, defs: &Defs<'a>, t: &Table<'a>, inner: &mut Vec<Table<'a>>) {
    let depth = t.path.matches('.').count() + usize::from(!t.path.is_empty());
    let level = "#".repeat((depth + 2).min(6));
    out.push_str(&format!("{level} {}\n\n", heading(t)));
    if let Some(d) = t.schema.get("description").and_then(Value::as_str) {
        if !t.path.is_empty() {
            out.push_str(&format!("{}\n\n", one_line(d)));
        }
    }
    let Some(props) = t.schema.get("properties").and_then(Value::as_object) else {
        return;
    };
    let required: Vec<&str> = t
        .schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    out.push_str("| key | type | default | description |\n| --- | --- | --- | --- |\n");
    for (key, prop) in props {
        if key == "kind" && t.kind.is_some() {
            continue;
        }
        let path = if t.path.is_empty() {
            key.clone()
        } else {
            format!("{}.{key}", t.path)
        };
        let ty = type_of(defs, prop, &path, inner);
        let default = match prop.get("default") {
            Some(v) => format!("`{}`", toml_value(v)),
            None if required.contains(&key.as_str()) => "required".to_string(),
            // Optional to the parser, required by validation (its doc says so).
            None if prop
                .get("description")
                .and_then(Value::as_str)
                .is_some_and(|d| d.contains("(required") || d.contains("; required")) =>
            {
                "required".to_string()
            }
            None => "—".to_string(),
        };
        let doc = prop
            .get("description")
            .and_then(Value::as_str)
            .map(one_line)
            .unwrap_or_default();
        out.push_str(&format!(
            "| `{key}` | {} | {default} | {} |\n",
            ty.replace('|', "\\|"),
            crate::export::markdown::prose(&doc).replace('|', "\\|")
        ));
    }
    out.push('\n');
}

/// The type of a key as the page writes it (`duration`, `integer or "unlimited"`,
/// `one of "fifo", "lifo"`, `table`), pushing the tables it holds on `inner`.
fn type_of<'a>(defs: &Defs<'a>, s: &'a Value, path: &str, inner: &mut Vec<Table<'a>>) -> String {
    // A table written the same way in two places (a fleet's layers and a call's) is
    // described once, where it comes first.
    if let Some(r) = s
        .get("$ref")
        .and_then(Value::as_str)
        .filter(|_| is_table(defs.resolve(s)))
    {
        let mut seen = defs.1.borrow_mut();
        match seen.iter().find(|(name, _)| name == r) {
            Some((_, first)) if first != path => {
                let first = first.clone();
                drop(seen);
                return format!("as [`{first}`](#{})", anchor(&first, None));
            }
            Some(_) => {}
            None => seen.push((r.to_string(), path.to_string())),
        }
    }
    let s = defs.resolve(s);
    // An optional key: its schema without the `null` alternative.
    if let Some(alts) = s.get("anyOf").and_then(Value::as_array) {
        let alts: Vec<&Value> = alts
            .iter()
            .filter(|a| a.get("type").and_then(Value::as_str) != Some("null"))
            .collect();
        if alts.len() == 1 {
            return type_of(defs, alts[0], path, inner);
        }
        return alts
            .iter()
            .map(|a| type_of(defs, a, path, inner))
            .collect::<Vec<_>>()
            .join(" or ");
    }
    if let Some(c) = s.get("const") {
        return format!("`{}`", toml_value(c));
    }
    if let Some(e) = s.get("enum").and_then(Value::as_array) {
        return format!("one of {}", values(e.iter()));
    }
    if let Some(alts) = s.get("oneOf").and_then(Value::as_array) {
        // An enum of strings whose values have docs.
        if alts.iter().all(|a| a.get("const").is_some()) {
            return format!(
                "one of {}",
                values(alts.iter().filter_map(|a| a.get("const")))
            );
        }
        // A table by `kind`: a section per kind.
        let kinds: Vec<&str> = alts
            .iter()
            .filter_map(|a| a.pointer("/properties/kind/const").and_then(Value::as_str))
            .collect();
        // The table's own heading (the kinds' common description), then a section
        // per kind.
        inner.push(Table {
            path: path.to_string(),
            list: false,
            kind: None,
            schema: s,
        });
        for (a, k) in alts.iter().zip(&kinds) {
            inner.push(Table {
                path: path.to_string(),
                list: false,
                kind: Some(k.to_string()),
                schema: a,
            });
        }
        return format!(
            "table by `kind`: {}",
            kinds
                .iter()
                .map(|k| format!("[`{k}`](#{})", anchor(path, Some(k))))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    let types: Vec<&str> = match s.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .filter(|t| *t != "null")
            .collect(),
        _ => Vec::new(),
    };
    match types.first().copied() {
        Some("string") if s.get("format").and_then(Value::as_str) == Some("duration") => {
            "duration".into()
        }
        Some("integer") => match s.get("minimum").and_then(Value::as_f64) {
            Some(m) if m >= 1.0 => format!("integer ≥ {m}"),
            Some(_) => "integer ≥ 0".into(),
            None => "integer".into(),
        },
        Some("number") => "number".into(),
        Some("boolean") => "boolean".into(),
        Some("string") => "string".into(),
        Some("array") => {
            let raw = s.get("items");
            if let Some(r) = raw.and_then(|i| i.get("$ref")).and_then(Value::as_str) {
                let mut seen = defs.1.borrow_mut();
                match seen.iter().find(|(name, _)| name == r) {
                    Some((_, first)) if first != path => {
                        return format!(
                            "list of tables as [`[[{first}]]`](#{})",
                            anchor(first, None)
                        );
                    }
                    Some(_) => {}
                    None => seen.push((r.to_string(), path.to_string())),
                }
            }
            let items = raw.map(|i| defs.resolve(i));
            match items {
                Some(i) if i.get("properties").is_some() => {
                    inner.push(Table {
                        path: path.to_string(),
                        list: true,
                        kind: None,
                        schema: i,
                    });
                    format!("list of [tables](#{})", anchor(path, None))
                }
                Some(i) => format!("list of {}", type_of(defs, i, path, inner)),
                None => "list".into(),
            }
        }
        Some("object") if s.get("properties").is_some() => {
            inner.push(Table {
                path: path.to_string(),
                list: false,
                kind: None,
                schema: s,
            });
            format!("[table](#{})", anchor(path, None))
        }
        Some("object") => "table of keys and values".into(),
        _ => "any".into(),
    }
}

/// Whether a schema is a table of keys, or tables by `kind` (not an enum of words).
fn is_table(s: &Value) -> bool {
    s.get("properties").is_some()
        || s.get("oneOf")
            .and_then(Value::as_array)
            .is_some_and(|alts| alts.iter().any(|a| a.get("const").is_none()))
}

/// The id mdBook gives a table's heading (`fleetslayersbackoff-with-kind--fixed`).
fn anchor(path: &str, kind: Option<&str>) -> String {
    let id = path.replace('.', "");
    match kind {
        Some(k) => format!("{id}-with-kind--{k}"),
        None => id,
    }
}

/// Values as the page lists them: `"a"`, `"b"`.
fn values<'a>(vs: impl Iterator<Item = &'a Value>) -> String {
    vs.map(|v| format!("`{}`", toml_value(v)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A JSON value as TOML writes it.
fn toml_value(v: &Value) -> String {
    match v {
        Value::String(s) => format!("{s:?}"),
        other => other.to_string(),
    }
}

/// A doc comment on one line.
fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The literal a description names as the default, if it names one: `(default X)`,
    /// `(default X: why)`, `(default X, ...)`, or `` `X` (default `` / `X (default`.
    /// Absences (`none`, `unlimited`) and prose (`(default: ...)`) are not literals.
    fn literal_default(desc: &str) -> Option<String> {
        let d = one_line(desc);
        let literal = |x: &str| {
            let x = x.trim().trim_matches('`');
            let number = x.parse::<f64>().is_ok();
            let digits = x.trim_end_matches(|c: char| c.is_ascii_alphabetic());
            let unit = &x[digits.len()..];
            let duration = !digits.is_empty()
                && digits.parse::<f64>().is_ok()
                && ["ns", "us", "ms", "s", "m", "h"].contains(&unit);
            let quoted = x.len() > 1 && x.starts_with('"') && x.ends_with('"');
            (number || duration || quoted || x == "true" || x == "false").then(|| x.to_string())
        };
        if let Some(i) = d.find("(default ") {
            let rest = &d[i + "(default ".len()..];
            let end = rest.find([')', ':', ',', ' ']).unwrap_or(rest.len());
            // `(default 10 × base)` names a formula, not a literal.
            if !rest[end..].starts_with([')', ':', ',']) {
                return None;
            }
            return literal(&rest[..end]);
        }
        let i = d.find(" (default")?;
        let before = d[..i].rsplit(['(', ' ']).next()?;
        literal(before)
    }

    /// A duration literal in ns (`2m`, `120s`), for comparing defaults by value.
    fn ns(x: &str) -> Option<f64> {
        let digits = x.trim_end_matches(|c: char| c.is_ascii_alphabetic());
        let unit = match &x[digits.len()..] {
            "ns" => 1.0,
            "us" => 1e3,
            "ms" => 1e6,
            "s" => 1e9,
            "m" => 60e9,
            "h" => 3600e9,
            _ => return None,
        };
        Some(digits.parse::<f64>().ok()? * unit)
    }

    /// Every property of every table, as (path, schema).
    fn properties(v: &Value, path: &str, out: &mut Vec<(String, Value)>) {
        match v {
            Value::Object(o) => {
                if let Some(Value::Object(props)) = o.get("properties") {
                    for (k, p) in props {
                        out.push((format!("{path}.{k}"), p.clone()));
                    }
                }
                for (k, x) in o {
                    properties(x, &format!("{path}/{k}"), out);
                }
            }
            Value::Array(a) => a.iter().for_each(|x| properties(x, path, out)),
            _ => {}
        }
    }

    #[test]
    fn every_default_a_key_description_names_is_the_schema_default() {
        let mut props = Vec::new();
        properties(&schema(), "", &mut props);
        let mut wrong = Vec::new();
        for (path, p) in props {
            let Some(desc) = p.get("description").and_then(Value::as_str) else {
                continue;
            };
            let Some(named) = literal_default(desc) else {
                continue;
            };
            let schema_default = p.get("default").map(toml_value);
            let same = schema_default.as_deref().is_some_and(|s| {
                s == named
                    || ns(s.trim_matches('"')).is_some() && ns(s.trim_matches('"')) == ns(&named)
                    || s.trim_matches('"') == named
                    || s.parse::<f64>().ok() == named.parse::<f64>().ok()
                        && s.parse::<f64>().is_ok()
            });
            if !same {
                wrong.push(format!(
                    "{path}: doc says {named}, schema {schema_default:?}"
                ));
            }
        }
        assert!(
            wrong.is_empty(),
            "{} keys:\n{}",
            wrong.len(),
            wrong.join("\n")
        );
    }
}
