//! Dotted-path overrides of a scenario table: `--set KEY=VALUE` and sweep cells.
//!
//! A path is keys separated by dots; a number selects an array element
//! (`fleets.0.layers.1.max_attempts`) and `*` every element or entry
//! (`fleets.*.layers.*.max_attempts`). Missing tables on the way are created, so an
//! optional key can be set even when the file leaves it out.

/// Changes to a scenario given with it: `--set KEY=VALUE` overrides, then a seed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Overrides {
    /// `KEY=VALUE` overrides, applied in order.
    pub sets: Vec<String>,
    /// The base seed, replacing the scenario's `seed` (applied after `sets`).
    pub seed: Option<u64>,
}

impl Overrides {
    /// The overrides as typed on a command line (`--set k=v`, then `--seed N`): what
    /// a manifest records.
    pub fn typed(&self) -> Vec<String> {
        let mut o: Vec<String> = self.sets.iter().map(|s| format!("--set {s}")).collect();
        if let Some(s) = self.seed {
            o.push(format!("--seed {s}"));
        }
        o
    }
}

/// Splits `KEY=VALUE`; the value is read as a TOML value (`5`, `0.2`, `true`,
/// `{ kind = "fixed", delay = "1s" }`), or taken as a string when it is not one
/// (`60s`, `unlimited`).
pub(crate) fn parse_set(arg: &str) -> Result<(String, toml::Value), String> {
    let (key, raw) = arg.split_once('=').ok_or_else(|| {
        "expected KEY=VALUE, e.g. --set fleets.0.layers.0.max_attempts=5".to_string()
    })?;
    let key = key.trim();
    if key.is_empty() {
        return Err("the key before '=' is empty".to_string());
    }
    Ok((key.to_string(), parse_value(raw.trim())))
}

/// Reads a value as TOML, or as a plain string when it is not TOML.
pub(crate) fn parse_value(raw: &str) -> toml::Value {
    let doc = format!("v = {raw}");
    match toml::from_str::<toml::Table>(&doc) {
        Ok(mut t) => t
            .remove("v")
            .unwrap_or_else(|| toml::Value::String(raw.to_string())),
        Err(_) => toml::Value::String(raw.to_string()),
    }
}

/// Most dotted segments of an override or sweep key.
pub(crate) const MAX_KEY_DEPTH: usize = 32;

/// Sets `value` at the dotted `path` in `table`; a path of more than
/// [`MAX_KEY_DEPTH`] segments is refused.
pub(crate) fn apply(table: &mut toml::Table, path: &str, value: toml::Value) -> Result<(), String> {
    // Before any work: a path creates a table per segment, and deeper tables than
    // this would overflow the stack of whatever walks them (clone, drop).
    let depth = path.split('.').count();
    if depth > MAX_KEY_DEPTH {
        return Err(format!(
            "the key has {depth} dotted segments; at most {MAX_KEY_DEPTH} are allowed"
        ));
    }
    let parts: Vec<&str> = path.split('.').collect();
    if parts.iter().any(|p| p.is_empty()) {
        return Err(format!("'{path}' has an empty segment"));
    }
    set_in_table(table, &parts, 0, &value)
}

fn set_in_table(
    t: &mut toml::Table,
    parts: &[&str],
    i: usize,
    value: &toml::Value,
) -> Result<(), String> {
    if parts[i] == "*" {
        if t.is_empty() {
            return Err(format!(
                "'{}' matches nothing: the table is empty",
                parts[..=i].join(".")
            ));
        }
        for (_, child) in t.iter_mut() {
            set_here_or_below(child, parts, i, value)?;
        }
        return Ok(());
    }
    if i + 1 == parts.len() {
        t.insert(parts[i].to_string(), value.clone());
        return Ok(());
    }
    let child = t
        .entry(parts[i].to_string())
        .or_insert_with(|| toml::Value::Table(toml::Table::new()));
    set_in_value(child, parts, i + 1, value)
}

/// Sets `value` in `slot` if `parts[i]` is the last segment, else descends into it.
fn set_here_or_below(
    slot: &mut toml::Value,
    parts: &[&str],
    i: usize,
    value: &toml::Value,
) -> Result<(), String> {
    if i + 1 == parts.len() {
        *slot = value.clone();
        Ok(())
    } else {
        set_in_value(slot, parts, i + 1, value)
    }
}

fn set_in_value(
    node: &mut toml::Value,
    parts: &[&str],
    i: usize,
    value: &toml::Value,
) -> Result<(), String> {
    let here = parts[..i].join(".");
    match node {
        toml::Value::Table(t) => set_in_table(t, parts, i, value),
        toml::Value::Array(a) => {
            if parts[i] == "*" {
                if a.is_empty() {
                    return Err(format!("'{here}.*' matches nothing: the list is empty"));
                }
                for slot in a.iter_mut() {
                    set_here_or_below(slot, parts, i, value)?;
                }
                return Ok(());
            }
            let idx: usize = parts[i].parse().map_err(|_| {
                format!(
                    "'{here}' is a list: the next segment must be an index or '*', found '{}'",
                    parts[i]
                )
            })?;
            let len = a.len();
            let slot = a.get_mut(idx).ok_or_else(|| {
                let entries = if len == 1 { "entry" } else { "entries" };
                format!("index {idx} is past the end of '{here}' ({len} {entries})")
            })?;
            set_here_or_below(slot, parts, i, value)
        }
        other => {
            let t = other.type_str();
            let a = if t.starts_with(['a', 'i']) { "an" } else { "a" };
            Err(format!("'{here}' is {a} {t}, not a table"))
        }
    }
}

/// Reads the value at a dotted path, if present.
pub(crate) fn get<'a>(table: &'a toml::Table, path: &str) -> Option<&'a toml::Value> {
    let mut parts = path.split('.');
    let mut node = table.get(parts.next()?)?;
    for p in parts {
        node = match node {
            toml::Value::Table(t) => t.get(p)?,
            toml::Value::Array(a) => a.get(p.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(node)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sets_nested_array_entries_and_creates_tables() {
        let mut t: toml::Table = toml::from_str(
            "[[fleets]]\nname='a'\n[[fleets.layers]]\nmax_attempts=3\n[[fleets.layers]]\nmax_attempts=2",
        )
        .unwrap();
        apply(
            &mut t,
            "fleets.0.layers.1.max_attempts",
            toml::Value::Integer(7),
        )
        .unwrap();
        apply(
            &mut t,
            "fleets.0.layers.0.backoff.kind",
            toml::Value::String("none".into()),
        )
        .unwrap();
        assert_eq!(
            get(&t, "fleets.0.layers.1.max_attempts"),
            Some(&toml::Value::Integer(7))
        );
        assert_eq!(
            get(&t, "fleets.0.layers.0.backoff.kind").and_then(|v| v.as_str()),
            Some("none")
        );
        assert!(apply(&mut t, "fleets.x.name", toml::Value::Integer(1)).is_err());
        assert!(apply(&mut t, "fleets.0.name.x", toml::Value::Integer(1)).is_err());
        assert!(apply(&mut t, "a..b", toml::Value::Integer(1)).is_err());
    }

    #[test]
    fn a_star_sets_every_element() {
        let mut t: toml::Table = toml::from_str(
            "[[fleets]]\n[[fleets.layers]]\nmax_attempts=3\n[[fleets.layers]]\nmax_attempts=2\n[[fleets]]\n[[fleets.layers]]\nmax_attempts=1",
        )
        .unwrap();
        apply(
            &mut t,
            "fleets.*.layers.*.max_attempts",
            toml::Value::Integer(9),
        )
        .unwrap();
        for p in [
            "fleets.0.layers.0",
            "fleets.0.layers.1",
            "fleets.1.layers.0",
        ] {
            assert_eq!(
                get(&t, &format!("{p}.max_attempts")),
                Some(&toml::Value::Integer(9))
            );
        }
        let mut empty: toml::Table = toml::from_str("fleets = []").unwrap();
        assert!(apply(&mut empty, "fleets.*.name", toml::Value::Integer(1)).is_err());
    }

    #[test]
    fn values_are_toml_or_strings() {
        assert_eq!(parse_value("0.25"), toml::Value::Float(0.25));
        assert_eq!(parse_value("true"), toml::Value::Boolean(true));
        assert_eq!(parse_value("\"x\""), toml::Value::String("x".into()));
        assert_eq!(
            parse_value("unlimited"),
            toml::Value::String("unlimited".into())
        );
        assert!(parse_value("{ kind = \"none\" }").is_table());
        assert!(parse_set("novalue").is_err());
    }

    #[test]
    fn keys_address_the_fields_of_a_service_graph() {
        let text = "duration = '2s'\n\
            [[services]]\nname = 'front'\nservers = 4\nservice_time = '1ms'\n\
            [[services.calls]]\nto = 'back'\n\
            [[services]]\nname = 'back'\nservers = 4\nservice_time = '1ms'\n\
            [[services.calls]]\nto = ['db']\n[[services.calls.layers]]\nmax_attempts = 2\n\
            [[services]]\nname = 'db'\nservers = 4\nservice_time = '1ms'\n\
            [[fleets]]\nname = 'a'\narrival = { kind = 'poisson', rate = 10 }\n";
        let source = crate::scenario::Source {
            path: "g.toml".into(),
            stem: "g".into(),
            text: text.into(),
        };
        let sets = [
            "services.2.servers=5".to_string(),
            "services.1.calls.0.layers.0.max_attempts=3".to_string(),
            "services.*.queue_limit=8".to_string(),
        ];
        let scn = crate::scenario::load(source.clone(), &sets)
            .unwrap()
            .scenario;
        assert_eq!(scn.services[2].capacity.servers, Some(5));
        assert_eq!(scn.services[1].capacity.servers, Some(4));
        let attempts = |s: usize| scn.services[s].calls[0].layers[0].max_attempts.limit();
        assert_eq!(attempts(1), Some(3));
        assert!(scn
            .services
            .iter()
            .all(|s| s.capacity.queue_limit == Some(8)));
        // A missing list is created as a table, as for fleets: parsing names it.
        let sets = ["services.0.calls.0.layers.0.max_attempts=4".to_string()];
        let e = crate::scenario::load(source, &sets)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("services[0].calls[0].layers: invalid type: table, expected a list"),
            "{e}"
        );
    }
}

/// The examples of this file's docs, as unit tests (the module is the crate's own,
/// so rustdoc cannot run them).
#[cfg(test)]
mod doc_examples {
    #[test]
    fn parse_set_example() {
        use crate::scenario::overrides::parse_set;
        let (k, v) = parse_set("fleets.0.layers.0.max_attempts=5").unwrap();
        assert_eq!(k, "fleets.0.layers.0.max_attempts");
        assert_eq!(v, toml::Value::Integer(5));
        assert_eq!(
            parse_set("duration=30s").unwrap().1,
            toml::Value::String("30s".into())
        );
    }

    #[test]
    fn apply_example() {
        use crate::scenario::overrides::apply;
        let mut t: toml::Table = toml::from_str("[[fleets]]\nname = 'a'").unwrap();
        apply(
            &mut t,
            "fleets.0.deadline",
            toml::Value::String("1s".into()),
        )
        .unwrap();
        assert_eq!(t["fleets"][0]["deadline"].as_str(), Some("1s"));
        assert!(apply(&mut t, "fleets.3.deadline", toml::Value::Integer(1)).is_err());
    }
}
