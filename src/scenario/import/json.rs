//! JSON with the line of every value and key, for importers' messages and provenance.
//!
//! serde_json checks the text first (its errors name the line and column, and it
//! limits nesting), then a small reader over the same, now known valid, text records
//! where each value and key starts. Time is linear in the text.

/// A JSON value and the line (1-based) where it starts.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Node {
    /// Where the value starts.
    pub line: u64,
    /// The value.
    pub value: Value,
}

/// A JSON value whose members keep their lines.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Value {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number: its value and its text as written (`2`, `1.0`).
    Number(f64, String),
    /// A string.
    String(String),
    /// An array.
    Array(Vec<Node>),
    /// An object: each member's key, the key's line, and its value, in file order.
    Object(Vec<Member>),
}

/// One member of an object.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Member {
    /// The key as written.
    pub key: String,
    /// The line of the key.
    pub line: u64,
    /// The value.
    pub node: Node,
}

impl Value {
    /// What a message calls this kind of value.
    pub(crate) fn kind(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "a boolean",
            Value::Number(..) => "a number",
            Value::String(_) => "a string",
            Value::Array(_) => "an array",
            Value::Object(_) => "an object",
        }
    }
}

/// Parses `text`: the tree, or the line of the error and serde_json's message.
pub(crate) fn parse(text: &str) -> Result<Node, (u64, String)> {
    if let Err(e) = serde_json::from_str::<serde::de::IgnoredAny>(text) {
        let line = e.line().max(1) as u64;
        let m = e.to_string();
        // "expected `:` at line 3 column 5": the line is said beside the file.
        let m = match m.rfind(" at line ") {
            Some(k) if e.column() > 0 => format!("{} (column {})", &m[..k], e.column()),
            Some(k) => m[..k].to_string(),
            None => m,
        };
        return Err((line, format!("is not valid JSON: {m}")));
    }
    let mut r = Reader {
        b: text.as_bytes(),
        at: 0,
        line: 1,
    };
    r.value()
        .ok_or_else(|| (r.line, "is not valid JSON".to_string()))
}

/// The reader: the position and its line.
struct Reader<'a> {
    b: &'a [u8],
    at: usize,
    line: u64,
}

impl Reader<'_> {
    fn skip_ws(&mut self) {
        while let Some(&c) = self.b.get(self.at) {
            match c {
                b'\n' => self.line += 1,
                b' ' | b'\t' | b'\r' => {}
                _ => break,
            }
            self.at += 1;
        }
    }

    fn eat(&mut self, c: u8) -> Option<()> {
        self.skip_ws();
        (self.b.get(self.at) == Some(&c)).then(|| self.at += 1)
    }

    fn value(&mut self) -> Option<Node> {
        self.skip_ws();
        let line = self.line;
        let value = match *self.b.get(self.at)? {
            b'{' => {
                self.at += 1;
                let mut members = Vec::new();
                if self.eat(b'}').is_none() {
                    loop {
                        self.skip_ws();
                        let kline = self.line;
                        let key = self.string()?;
                        self.eat(b':')?;
                        let node = self.value()?;
                        members.push(Member {
                            key,
                            line: kline,
                            node,
                        });
                        if self.eat(b',').is_none() {
                            self.eat(b'}')?;
                            break;
                        }
                    }
                }
                Value::Object(members)
            }
            b'[' => {
                self.at += 1;
                let mut items = Vec::new();
                if self.eat(b']').is_none() {
                    loop {
                        items.push(self.value()?);
                        if self.eat(b',').is_none() {
                            self.eat(b']')?;
                            break;
                        }
                    }
                }
                Value::Array(items)
            }
            b'"' => Value::String(self.string()?),
            b't' => self.word("true", Value::Bool(true))?,
            b'f' => self.word("false", Value::Bool(false))?,
            b'n' => self.word("null", Value::Null)?,
            _ => {
                let start = self.at;
                while self
                    .b
                    .get(self.at)
                    .is_some_and(|c| c.is_ascii_digit() || b"+-.eE".contains(c))
                {
                    self.at += 1;
                }
                let text = std::str::from_utf8(&self.b[start..self.at]).ok()?;
                Value::Number(text.parse().ok()?, text.to_string())
            }
        };
        Some(Node { line, value })
    }

    fn word(&mut self, w: &str, v: Value) -> Option<Value> {
        let end = self.at + w.len();
        (self.b.get(self.at..end)? == w.as_bytes()).then(|| {
            self.at = end;
            v
        })
    }

    /// A string at the position (valid JSON: serde_json decodes it).
    fn string(&mut self) -> Option<String> {
        let start = self.at;
        if self.b.get(self.at) != Some(&b'"') {
            return None;
        }
        self.at += 1;
        loop {
            match *self.b.get(self.at)? {
                b'\\' => self.at += 2,
                b'"' => {
                    self.at += 1;
                    break;
                }
                _ => self.at += 1,
            }
        }
        let raw = std::str::from_utf8(&self.b[start..self.at]).ok()?;
        serde_json::from_str(raw).ok()
    }
}

/// The member of `members` named `name`, compared as grpc-go's `encoding/json` does:
/// case-insensitively, the last one written winning.
pub(crate) fn get<'a>(members: &'a [Member], name: &str) -> Option<&'a Member> {
    members
        .iter()
        .rev()
        .find(|m| m.key.eq_ignore_ascii_case(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_value_and_key_keeps_its_line() {
        let n = parse("{\n \"a\": [1,\n  \"x\\\"y\"],\n \"B\":\n  {\"c\": null}\n}").unwrap();
        let Value::Object(m) = &n.value else { panic!() };
        assert_eq!((m[0].key.as_str(), m[0].line), ("a", 2));
        let Value::Array(items) = &m[0].node.value else {
            panic!()
        };
        assert_eq!(items[1].line, 3);
        assert_eq!(items[1].value, Value::String("x\"y".into()));
        assert_eq!(get(m, "b").unwrap().node.line, 5);
        assert_eq!(get(m, "b").unwrap().line, 4);
    }

    #[test]
    fn invalid_json_names_the_line() {
        let (line, m) = parse("{\n \"a\": 1\n \"b\": 2\n}").unwrap_err();
        assert_eq!(line, 3);
        assert!(
            m.starts_with("is not valid JSON: expected `,` or `}`"),
            "{m}"
        );
    }

    #[test]
    fn the_last_member_of_a_name_wins_whatever_its_case() {
        let n = parse("{\"maxAttempts\": 2, \"MaxAttempts\": 3}").unwrap();
        let Value::Object(m) = &n.value else { panic!() };
        assert_eq!(get(m, "maxattempts").unwrap().key, "MaxAttempts");
    }
}
