//! YAML read into the same tree as [`json`](super::json), with the line of every
//! value and key, so an importer reads a YAML file and a JSON file with one code path.
//!
//! The events come from `saphyr-parser` (YAML 1.2), each with its span. Plain scalars
//! are typed by the YAML 1.2 core schema (`null`, `~` and empty are null; `true` and
//! `false` in three spellings; decimal, octal `0o` and hex `0x` integers; floats with
//! `.inf` and `.nan`); quoted and block scalars are strings, as is anything tagged
//! `!!str`. Aliases are expanded, within [`MAX_VALUES`] values in all (a "billion
//! laughs" file is refused before it is built); nesting is limited to [`MAX_DEPTH`].
//! A file may hold several documents (`---`), as Kubernetes manifests do.

use std::collections::HashMap;

use saphyr_parser::{Event, Parser, ScalarStyle, Span};

use super::json::{Member, Node, Value};

/// Values a file may expand to, aliases counted each time they are used.
pub(crate) const MAX_VALUES: usize = 1 << 20;
/// How deep collections may nest (serde_json's limit for JSON files is 128).
pub(crate) const MAX_DEPTH: usize = 128;

/// Parses a file of one document (an empty file is `null`); several are refused.
pub(crate) fn parse(text: &str) -> Result<Node, (u64, String)> {
    let mut docs = parse_documents(text)?;
    match docs.len() {
        0 => Ok(Node {
            line: 1,
            value: Value::Null,
        }),
        1 => Ok(docs.remove(0)),
        _ => Err((
            docs[1].line,
            format!(
                "holds {} YAML documents: this format reads one (split the file)",
                docs.len()
            ),
        )),
    }
}

/// Parses every document of a file, in order.
pub(crate) fn parse_documents(text: &str) -> Result<Vec<Node>, (u64, String)> {
    let mut b = Builder::default();
    let mut parser = Parser::new_from_str(text);
    while let Some(next) = parser.next_event() {
        let (event, span) = next.map_err(|e| {
            (
                e.marker().line().max(1) as u64,
                format!(
                    "is not valid YAML: {} (column {})",
                    e.info(),
                    e.marker().col() + 1
                ),
            )
        })?;
        b.event(event, span)?;
    }
    Ok(b.docs)
}

/// A collection being built.
enum Open {
    /// A sequence: its line, anchor and items.
    Seq(u64, usize, Vec<Node>),
    /// A mapping: its line, anchor, members and the key read, waiting for its value.
    Map(u64, usize, Vec<Member>, Option<(String, u64)>),
}

/// Builds documents from events.
#[derive(Default)]
struct Builder {
    docs: Vec<Node>,
    stack: Vec<Open>,
    /// Anchored nodes and how many values each holds.
    anchors: HashMap<usize, (Node, usize)>,
    /// Values built so far, aliases expanded.
    values: usize,
}

/// The values in `n` (itself and everything under it).
fn size(n: &Node) -> usize {
    1 + match &n.value {
        Value::Array(items) => items.iter().map(size).sum(),
        Value::Object(members) => members.iter().map(|m| size(&m.node)).sum(),
        _ => 0,
    }
}

impl Builder {
    fn event(&mut self, event: Event<'_>, span: Span) -> Result<(), (u64, String)> {
        let line = span.start.line().max(1) as u64;
        match event {
            Event::SequenceStart(anchor, _) => self.open(Open::Seq(line, anchor, Vec::new()), line),
            Event::MappingStart(anchor, _) => {
                self.open(Open::Map(line, anchor, Vec::new(), None), line)
            }
            Event::SequenceEnd | Event::MappingEnd => {
                let (anchor, node) = match self.stack.pop() {
                    Some(Open::Seq(line, anchor, items)) => (
                        anchor,
                        Node {
                            line,
                            value: Value::Array(items),
                        },
                    ),
                    Some(Open::Map(line, anchor, members, _)) => (
                        anchor,
                        Node {
                            line,
                            value: Value::Object(members),
                        },
                    ),
                    None => return Ok(()),
                };
                self.anchor(anchor, &node);
                self.add(node)
            }
            Event::Scalar(text, style, anchor, tag) => {
                self.count(1, line)?;
                let as_str = tag.as_ref().is_some_and(|t| t.suffix == "str");
                let value = if style == ScalarStyle::Plain && !as_str {
                    typed(&text)
                } else {
                    Value::String(text.into_owned())
                };
                let node = Node { line, value };
                self.anchor(anchor, &node);
                self.add(node)
            }
            Event::Alias(id) => {
                let Some((node, n)) = self.anchors.get(&id) else {
                    return Err((line, "is not valid YAML: an alias names no anchor".into()));
                };
                let (mut node, n) = (node.clone(), *n);
                self.count(n, line)?;
                node.line = line;
                self.add(node)
            }
            Event::DocumentEnd => {
                self.anchors.clear();
                Ok(())
            }
            Event::Nothing | Event::StreamStart | Event::StreamEnd | Event::DocumentStart(_) => {
                Ok(())
            }
        }
    }

    /// Counts `n` more values, within [`MAX_VALUES`].
    fn count(&mut self, n: usize, line: u64) -> Result<(), (u64, String)> {
        self.values = self.values.saturating_add(n);
        if self.values > MAX_VALUES {
            return Err((
                line,
                format!("expands to more than {MAX_VALUES} values (aliases included): retrysim reads configuration files, not data"),
            ));
        }
        Ok(())
    }

    fn open(&mut self, o: Open, line: u64) -> Result<(), (u64, String)> {
        if self.stack.len() >= MAX_DEPTH {
            return Err((line, format!("nests deeper than {MAX_DEPTH} levels")));
        }
        self.count(1, line)?;
        self.stack.push(o);
        Ok(())
    }

    fn anchor(&mut self, anchor: usize, node: &Node) {
        if anchor != 0 {
            self.anchors.insert(anchor, (node.clone(), size(node)));
        }
    }

    /// Puts a finished node where it belongs: a sequence's item, a mapping's key or
    /// value, or a document.
    fn add(&mut self, node: Node) -> Result<(), (u64, String)> {
        match self.stack.last_mut() {
            None => self.docs.push(node),
            Some(Open::Seq(_, _, items)) => items.push(node),
            Some(Open::Map(_, _, members, key)) => match key.take() {
                Some((key, line)) => {
                    // A block collection starts on the line after its key: its
                    // setting is said at the key, as a JSON object's would be.
                    let mut node = node;
                    if matches!(node.value, Value::Array(_) | Value::Object(_)) {
                        node.line = node.line.min(line);
                    }
                    members.push(Member { key, line, node })
                }
                None => {
                    let key = match node.value {
                        Value::String(s) => s,
                        Value::Number(_, t) => t,
                        Value::Bool(b) => b.to_string(),
                        Value::Null => String::new(),
                        Value::Array(_) | Value::Object(_) => {
                            return Err((
                                node.line,
                                "has a sequence or mapping as a key: configuration keys are names"
                                    .into(),
                            ));
                        }
                    };
                    *key_slot(&mut self.stack) = Some((key, node.line));
                }
            },
        }
        Ok(())
    }
}

/// The pending key of the innermost mapping.
fn key_slot(stack: &mut [Open]) -> &mut Option<(String, u64)> {
    match stack.last_mut() {
        Some(Open::Map(_, _, _, key)) => key,
        _ => unreachable!("called on a mapping"),
    }
}

/// A plain scalar typed by the YAML 1.2 core schema.
fn typed(s: &str) -> Value {
    match s {
        "" | "~" | "null" | "Null" | "NULL" => return Value::Null,
        "true" | "True" | "TRUE" => return Value::Bool(true),
        "false" | "False" | "FALSE" => return Value::Bool(false),
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" => {
            return Value::Number(f64::INFINITY, s.to_string());
        }
        "-.inf" | "-.Inf" | "-.INF" => return Value::Number(f64::NEG_INFINITY, s.to_string()),
        ".nan" | ".NaN" | ".NAN" => return Value::Number(f64::NAN, s.to_string()),
        _ => {}
    }
    let radix = |digits: &str, r: u32| {
        (!digits.is_empty())
            .then(|| u64::from_str_radix(digits, r).ok())
            .flatten()
            .map(|v| Value::Number(v as f64, s.to_string()))
    };
    if let Some(d) = s.strip_prefix("0o") {
        if let Some(v) = radix(d, 8) {
            return v;
        }
    }
    if let Some(d) = s.strip_prefix("0x") {
        if let Some(v) = radix(d, 16) {
            return v;
        }
    }
    if is_core_number(s) {
        if let Ok(v) = s.parse::<f64>() {
            return Value::Number(v, s.to_string());
        }
    }
    Value::String(s.to_string())
}

/// `[-+]? ( \. [0-9]+ | [0-9]+ ( \. [0-9]* )? ) ( [eE] [-+]? [0-9]+ )?`: the core
/// schema's int and float (Rust's parser alone would take `inf` and `1_0`-less forms).
fn is_core_number(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = usize::from(matches!(b.first(), Some(b'-' | b'+')));
    let digits = |i: &mut usize| {
        let start = *i;
        while b.get(*i).is_some_and(u8::is_ascii_digit) {
            *i += 1;
        }
        *i - start
    };
    let int = digits(&mut i);
    let frac = if b.get(i) == Some(&b'.') {
        i += 1;
        Some(digits(&mut i))
    } else {
        None
    };
    match frac {
        None if int == 0 => return false,
        Some(0) if int == 0 => return false,
        _ => {}
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'-' | b'+')) {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return false;
        }
    }
    i == b.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn members(n: &Node) -> &[Member] {
        match &n.value {
            Value::Object(m) => m,
            v => panic!("not a mapping: {v:?}"),
        }
    }

    #[test]
    fn every_value_and_key_keeps_its_line() {
        let n = parse("a:\n  - 1\n  - 'x'\nb:\n  c: ~\n").unwrap();
        let m = members(&n);
        assert_eq!((m[0].key.as_str(), m[0].line), ("a", 1));
        let Value::Array(items) = &m[0].node.value else {
            panic!()
        };
        assert_eq!((items[0].line, items[1].line), (2, 3));
        assert_eq!(items[0].value, Value::Number(1.0, "1".into()));
        assert_eq!(items[1].value, Value::String("x".into()));
        assert_eq!((m[1].key.as_str(), m[1].line), ("b", 4));
        // A block collection is said at its key's line.
        assert_eq!((m[0].node.line, m[1].node.line), (1, 4));
        let c = &members(&m[1].node)[0];
        assert_eq!((c.line, &c.node.value), (5, &Value::Null));
    }

    #[test]
    fn plain_scalars_are_typed_by_the_core_schema() {
        for (s, v) in [
            ("3", Value::Number(3.0, "3".into())),
            ("-0.25", Value::Number(-0.25, "-0.25".into())),
            ("1e3", Value::Number(1000.0, "1e3".into())),
            ("0x1F", Value::Number(31.0, "0x1F".into())),
            ("0o17", Value::Number(15.0, "0o17".into())),
            ("True", Value::Bool(true)),
            ("FALSE", Value::Bool(false)),
            ("~", Value::Null),
            ("25ms", Value::String("25ms".into())),
            ("0.5s", Value::String("0.5s".into())),
            ("yes", Value::String("yes".into())),
            ("1_000", Value::String("1_000".into())),
            ("inf", Value::String("inf".into())),
            (".", Value::String(".".into())),
        ] {
            assert_eq!(typed(s), v, "{s}");
        }
        let n = parse("a: '3'\nb: !!str 4\nc: \"true\"\n").unwrap();
        for m in members(&n) {
            assert!(matches!(m.node.value, Value::String(_)), "{m:?}");
        }
    }

    #[test]
    fn flow_style_and_json_read_the_same() {
        let y = parse("{\"a\": [1, 2], \"b\": {\"c\": \"d\"}}").unwrap();
        let j = super::super::json::parse("{\"a\": [1, 2], \"b\": {\"c\": \"d\"}}").unwrap();
        assert_eq!(y, j);
    }

    #[test]
    fn aliases_expand_within_the_cap() {
        let n = parse("base: &b {x: 1}\nuse: *b\n").unwrap();
        let m = members(&n);
        assert_eq!(
            members(&m[1].node)[0].node.value,
            Value::Number(1.0, "1".into())
        );
        assert_eq!(m[1].node.line, 2);
        let mut laughs = String::from("a: &a [x, x, x, x, x, x, x, x, x, x]\n");
        for (i, c) in ('b'..='k').enumerate() {
            let p = (b'a' + i as u8) as char;
            laughs.push_str(&format!(
                "{c}: &{c} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n"
            ));
        }
        let (_, m) = parse(&laughs).unwrap_err();
        assert!(m.contains("more than 1048576 values"), "{m}");
    }

    #[test]
    fn documents_split_and_errors_name_the_line() {
        let d = parse_documents("kind: A\n---\nkind: B\n").unwrap();
        assert_eq!(d.len(), 2);
        assert_eq!(members(&d[1])[0].line, 3);
        let (line, m) = parse("kind: A\n---\nkind: B\n").unwrap_err();
        assert_eq!(line, 3);
        assert!(m.contains("2 YAML documents"), "{m}");
        let (line, m) = parse("a: 1\nb: [1, 2\nc: 3\n").unwrap_err();
        assert!(line >= 2, "{line}");
        assert!(m.starts_with("is not valid YAML: "), "{m}");
        let (_, m) = parse(&"[".repeat(200)).unwrap_err();
        assert!(
            m.contains("128") || m.starts_with("is not valid YAML"),
            "{m}"
        );
        assert_eq!(parse("").unwrap().value, Value::Null);
        let (_, m) = parse("? [a]\n: 1\n").unwrap_err();
        assert!(m.contains("as a key"), "{m}");
    }
}
