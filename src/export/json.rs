//! JSON on stdout (`retrysim check --format json`, `retrysim run --json`): numbers are
//! written with the very text the CSV files give them ([`shortest`], or the CSV field
//! itself), so a value read from the JSON is the value read from the CSV, digit for digit.
//!
//! A summary table becomes an array of objects, one per row, whose keys are the CSV's
//! columns in order and whose values are typed by the column catalog: counts and run
//! identities are integers, measures are floats (`0` is written `0.0`), flags are
//! booleans, an empty field is `null`; a column the catalog does not know (a `param_`
//! column) is a boolean, a number or a string, as its text reads.

use serde::ser::Error as _;
use serde::{Serialize, Serializer};
use serde_json::value::RawValue;

use crate::metrics::columns::{summary_column, Kind};
use crate::metrics::format::shortest;

/// A number as JSON: its [`shortest`] text, or `null` when empty or not finite.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Num(pub Option<f64>);

impl Serialize for Num {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0.filter(|x| x.is_finite()) {
            Some(x) => raw(shortest(x)).map_err(S::Error::custom)?.serialize(s),
            None => s.serialize_none(),
        }
    }
}

fn raw(text: String) -> Result<Box<RawValue>, serde_json::Error> {
    RawValue::from_string(text)
}

/// Whether `s` is a number as JSON (RFC 8259) writes one: `-?(0|[1-9][0-9]*)(\.[0-9]+)?
/// ([eE][+-]?[0-9]+)?`.
pub(crate) fn is_number(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = usize::from(b.first() == Some(&b'-'));
    let digits = |i: &mut usize| {
        let start = *i;
        while b.get(*i).is_some_and(u8::is_ascii_digit) {
            *i += 1;
        }
        *i - start
    };
    let int_start = i;
    let n = digits(&mut i);
    if n == 0 || (n > 1 && b[int_start] == b'0') {
        return false;
    }
    if b.get(i) == Some(&b'.') {
        i += 1;
        if digits(&mut i) == 0 {
            return false;
        }
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return false;
        }
    }
    i == b.len()
}

/// A CSV field of column `column` as JSON text (see the module docs for the types).
pub(crate) fn field(column: &str, text: &str) -> String {
    let string = || serde_json::to_string(text).unwrap_or_else(|_| "null".to_string());
    if text.is_empty() {
        return "null".to_string();
    }
    let is_bool = text == "true" || text == "false";
    match summary_column(column).map(|c| c.kind) {
        Some(Kind::Flag) if is_bool => text.to_string(),
        Some(Kind::Count | Kind::Identity)
            if is_number(text) && !text.contains(['.', 'e', 'E']) =>
        {
            text.to_string()
        }
        Some(Kind::Measure) if is_number(text) => {
            if text.contains(['.', 'e', 'E']) {
                text.to_string()
            } else {
                format!("{text}.0")
            }
        }
        Some(_) => string(),
        None if is_bool || is_number(text) => text.to_string(),
        None => string(),
    }
}

/// A CSV table (a header line, then rows) as a JSON array of objects, one per row, keys
/// in column order, two-space indented, with a final newline.
pub(crate) fn table(csv_text: &str) -> Result<String, csv::Error> {
    let mut rdr = csv::ReaderBuilder::new()
        .has_headers(true)
        .from_reader(csv_text.as_bytes());
    let header: Vec<String> = rdr.headers()?.iter().map(str::to_string).collect();
    let keys: Vec<String> = header
        .iter()
        .map(|h| serde_json::to_string(h).unwrap_or_else(|_| "\"\"".to_string()))
        .collect();
    let mut objects = Vec::new();
    for rec in rdr.records() {
        let rec = rec?;
        let members: Vec<String> = header
            .iter()
            .zip(&keys)
            .enumerate()
            .map(|(i, (h, k))| format!("    {k}: {}", field(h, rec.get(i).unwrap_or(""))))
            .collect();
        objects.push(format!("  {{\n{}\n  }}", members.join(",\n")));
    }
    if objects.is_empty() {
        return Ok("[]\n".to_string());
    }
    Ok(format!("[\n{}\n]\n", objects.join(",\n")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_written_as_the_csv_writes_them() {
        let j = |x| serde_json::to_string(&Num(x)).unwrap();
        assert_eq!(j(Some(0.1 + 0.2)), "0.3");
        assert_eq!(j(Some(2.0)), "2");
        assert_eq!(j(Some(-1e-7)), "-0.0000001");
        assert_eq!(j(Some(1e21)), "1000000000000000000000");
        assert_eq!(j(None), "null");
        assert_eq!(j(Some(f64::NAN)), "null");
        for x in [0.1 + 0.2, 1.0 / 3.0, 123456.789, -2.5e-12, 6.02e23] {
            let back: f64 = serde_json::from_str(&j(Some(x))).unwrap();
            assert_eq!(back, shortest(x).parse::<f64>().unwrap());
        }
    }

    #[test]
    fn a_table_escapes_its_keys_and_strings_and_parses_back() {
        let csv = "run,param_name,blocking_fraction\n0,\"a \"\"q\"\" \\ b\n\tc\",\n1,x,0\n";
        let json = table(csv).unwrap();
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(v[0]["param_name"], "a \"q\" \\ b\n\tc");
        assert!(v[0]["blocking_fraction"].is_null());
        assert!(v[1]["blocking_fraction"].is_f64());
        assert!(v[1]["run"].is_u64());
        assert_eq!(table("run,x\n").unwrap(), "[]\n");
    }

    #[test]
    fn a_field_that_is_not_of_its_columns_kind_is_a_string() {
        assert_eq!(field("logical", "1.5"), "\"1.5\"");
        assert_eq!(field("metastable", "1"), "\"1\"");
        assert_eq!(field("amplification", "inf"), "\"inf\"");
        assert_eq!(field("param_x", "01"), "\"01\"");
        assert_eq!(field("param_x", "true"), "true");
    }
}

/// The examples of this file's docs, as unit tests (the module is the crate's own,
/// so rustdoc cannot run them).
#[cfg(test)]
mod doc_examples {
    #[test]
    fn is_number_example() {
        use crate::export::json::is_number;
        assert!(is_number("0") && is_number("-1.25") && is_number("3e-7"));
        assert!(!is_number("01") && !is_number("1.") && !is_number(".5") && !is_number("+1"));
        assert!(!is_number("NaN") && !is_number("inf") && !is_number(""));
    }

    #[test]
    fn field_example() {
        use crate::export::json::field;
        assert_eq!(field("logical", "41725"), "41725");
        assert_eq!(field("amplification", "1.5"), "1.5");
        assert_eq!(field("recovery_time_s", "0"), "0.0");
        assert_eq!(field("recovery_time_s", ""), "null");
        assert_eq!(field("metastable", "false"), "false");
        assert_eq!(
            field("param_policy", "no \"retries\""),
            r#""no \"retries\"""#
        );
    }

    #[test]
    fn table_example() {
        use crate::export::json::table;
        let json = table("run,amplification,metastable\n0,1.5,false\n").unwrap();
        assert_eq!(json, "[\n  {\n    \"run\": 0,\n    \"amplification\": 1.5,\n    \"metastable\": false\n  }\n]\n");
    }
}
