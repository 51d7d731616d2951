//! The machine-readable outputs, through the binary: `check --format json` and `junit`
//! say what the text table says (values, bounds, results, exit codes), with and without
//! a baseline; the XML is well-formed and escaped; `run --json` is summary.csv, typed.

use std::collections::BTreeMap;
use std::process::Output;

use serde_json::Value;

use crate::common::retrysim;

/// No queueing, no faults, constant arrivals: every latency is the service time (10 ms)
/// and the amplification is exactly 1, in every cell.
const CALM: &str = r#"
name = "calm"
duration = "3s"
drain = "1s"
replications = 2
[dependency]
servers = "unlimited"
service_time = "10ms"
[[fleets]]
name = "web"
arrival = { kind = "constant", rate = 100 }
[[fleets.layers]]
max_attempts = 2
[sweep]
"fleets.0.arrival.rate" = [100, 200]
[[expect]]
metric = "amplification"
max = 1.5
[[expect]]
metric = "latency_mean_ms"
min = 9
max = 11
per = "run"
"#;

/// `CALM` with one more expectation that no cell meets (the latency is 10 ms).
fn failing() -> String {
    format!("{CALM}\n[[expect]]\nmetric = \"latency_p99_ms\"\nmax = 5\nwhere = {{ \"fleets.0.arrival.rate\" = 200 }}\n")
}

fn code(o: &Output) -> i32 {
    o.status.code().expect("exited with a code")
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).expect("stdout is UTF-8")
}

fn folder(files: &[(&str, &str)]) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    for (name, text) in files {
        std::fs::write(d.path().join(name), text).unwrap();
    }
    d
}

/// The rows of the text table: its fields, split at runs of two spaces or more.
fn table_rows(text: &str) -> Vec<Vec<String>> {
    let mut lines = text.lines().skip_while(|l| !l.starts_with("scenario  "));
    lines.next().expect("a table header");
    lines
        .take_while(|l| !l.starts_with("check: "))
        .map(|l| {
            l.split("  ")
                .map(str::trim)
                .filter(|f| !f.is_empty())
                .map(str::to_string)
                .collect()
        })
        .collect()
}

/// Runs `check` in each format; the exit codes agree. Returns (table rows, JSON, XML,
/// exit code).
fn all_formats(dir: &std::path::Path, args: &[&str]) -> (Vec<Vec<String>>, Value, String, i32) {
    let run = |format: &str| {
        let mut a = vec!["check"];
        a.extend(args);
        a.extend(["--format", format]);
        retrysim(dir, &a)
    };
    let (text, json, junit) = (run("text"), run("json"), run("junit"));
    assert_eq!(
        code(&text),
        code(&json),
        "{}",
        String::from_utf8_lossy(&json.stderr)
    );
    assert_eq!(code(&text), code(&junit));
    let doc: Value = serde_json::from_slice(&json.stdout).unwrap_or_else(|e| {
        panic!("stdout is one JSON document: {e}\n{}", stdout(&json));
    });
    (table_rows(&stdout(&text)), doc, stdout(&junit), code(&text))
}

/// Every JSON row says what its table row says.
fn same_rows(table: &[Vec<String>], doc: &Value) {
    let rows: Vec<&Value> = doc["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| s["rows"].as_array().unwrap())
        .collect();
    assert_eq!(rows.len(), table.len());
    for (t, j) in table.iter().zip(&rows) {
        assert_eq!(t.len(), 6, "{t:?}");
        let cell = match j["run"].as_u64() {
            Some(r) if j["cell"]["label"] == "-" => format!("run {r}"),
            Some(r) => format!("run {r} ({})", j["cell"]["label"].as_str().unwrap()),
            None => j["cell"]["label"].as_str().unwrap().to_string(),
        };
        assert_eq!(t[0], j["scenario"].as_str().unwrap());
        assert_eq!(t[1], cell);
        assert_eq!(t[2], j["metric"].as_str().unwrap());
        assert_eq!(t[3], j["bound"]["text"].as_str().unwrap());
        assert_eq!(t[4], j["text"].as_str().unwrap());
        assert_eq!(t[5] == "pass", j["pass"].as_bool().unwrap());
        // The number is the table's, digit for digit.
        let shown = match t[4].split(' ').next().unwrap() {
            x if x.starts_with('(') => None,
            x => Some(x.parse::<f64>().unwrap()),
        };
        assert_eq!(j["value"].as_f64(), shown, "{t:?}");
        let n = j["mean_of"].as_u64().unwrap();
        assert_eq!(
            t[4].contains(&format!("(mean of {n})")),
            n > 1 && j["kind"] == "expect"
        );
        let empty = j["empty_in"].as_u64().unwrap();
        assert_eq!(empty > 0, shown.is_none(), "{t:?}");
        assert!(empty <= n, "{t:?}");
    }
    let failed = table.iter().filter(|t| t[5] == "FAIL").count();
    assert_eq!(doc["failed"].as_u64(), Some(failed as u64));
    assert_eq!(doc["passed"].as_u64(), Some((table.len() - failed) as u64));
}

#[test]
fn json_says_what_the_table_says_for_a_passing_and_a_failing_check() {
    let fail = failing();
    let d = folder(&[("calm.toml", CALM), ("fail.toml", &fail)]);
    let (table, doc, _, code) = all_formats(d.path(), &["calm.toml"]);
    assert_eq!(code, 0);
    same_rows(&table, &doc);
    assert_eq!(doc["result"], "pass");
    assert_eq!(doc["retrysim"], env!("CARGO_PKG_VERSION"));
    let s = &doc["scenarios"][0];
    assert_eq!(
        (&s["path"], &s["cells"], &s["replications"], &s["runs"]),
        (
            &Value::from("calm.toml"),
            &Value::from(2),
            &Value::from(2),
            &Value::from(4)
        )
    );
    // 2 cells of the amplification, 4 runs of the latency.
    let rows = s["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 6);
    assert_eq!(rows[0]["value"].as_f64(), Some(1.0));
    assert_eq!(rows[0]["mean_of"], 2);
    assert_eq!(rows[0]["bound"]["max"].as_f64(), Some(1.5));
    assert!(rows[0]["bound"]["min"].is_null());
    assert_eq!(rows[1]["cell"]["params"]["fleets.0.arrival.rate"], 200);
    assert_eq!(rows[1]["cell"]["index"], 1);
    for (i, r) in rows[2..].iter().enumerate() {
        assert_eq!(r["run"], i as u64);
        assert_eq!(r["value"].as_f64(), Some(10.0));
        assert_eq!(r["mean_of"], 1);
        assert_eq!(
            (r["bound"]["min"].as_f64(), r["bound"]["max"].as_f64()),
            (Some(9.0), Some(11.0))
        );
    }

    let (table, doc, xml, code) = all_formats(d.path(), &["fail.toml"]);
    assert_eq!(code, 1);
    same_rows(&table, &doc);
    assert_eq!(doc["result"], "fail");
    let last = &doc["scenarios"][0]["rows"][6];
    assert_eq!(last["cell"]["label"], "rate=200");
    // The 99th percentile of a 10 ms service time, within the histogram's precision.
    let p99 = last["value"].as_f64().unwrap();
    assert!((p99 - 10.0).abs() < 0.01 && last["pass"] == false, "{last}");
    assert_eq!(junit_counts(&xml), (7, 1));
}

#[test]
fn json_and_junit_report_a_baseline_and_write_it_too() {
    let d = folder(&[("calm.toml", CALM)]);
    let p = d.path();
    // --write-baseline with --format json: the file is written, stdout is the report.
    let o = retrysim(
        p,
        &[
            "check",
            "calm.toml",
            "--baseline",
            "b.csv",
            "--write-baseline",
            "--format",
            "json",
        ],
    );
    assert_eq!(code(&o), 0);
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    let written = &doc["scenarios"][0]["baseline_written"];
    assert_eq!(
        (&written["path"], &written["cells"]),
        (&Value::from("b.csv"), &Value::from(2))
    );
    assert!(String::from_utf8_lossy(&o.stderr).contains("wrote baseline b.csv (2 cells)"));
    let csv = std::fs::read_to_string(p.join("b.csv")).unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let base: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();

    // The same run: every baseline row passes with drift 0, against the file's values.
    let (table, doc, xml, code) = all_formats(p, &["calm.toml", "--baseline", "b.csv"]);
    assert_eq!(code, 0);
    same_rows(&table, &doc);
    let rows = doc["scenarios"][0]["rows"].as_array().unwrap();
    let baseline: Vec<&Value> = rows.iter().filter(|r| r["kind"] == "baseline").collect();
    assert!(baseline.len() > 40, "{}", baseline.len());
    for r in &baseline {
        let cell = r["cell"]["index"].as_u64().unwrap() as usize;
        let m = r["metric"].as_str().unwrap();
        let j = header.iter().position(|h| *h == m).unwrap();
        let old = base[cell][j];
        assert_eq!(r["bound"]["baseline"].as_f64(), old.parse().ok(), "{m}");
        assert_eq!(r["value"].as_f64(), old.parse().ok(), "{m}");
        assert_eq!(r["bound"]["tolerance"].as_f64(), Some(0.05));
        if !old.is_empty() {
            assert_eq!(r["bound"]["drift"].as_f64(), Some(0.0));
        }
        assert_eq!(r["pass"], true);
    }
    assert_eq!(junit_counts(&xml), (rows.len(), 0));

    // A service 20% slower: the latency columns drift by exactly +20% and fail.
    let (table, doc, xml, code) = all_formats(
        p,
        &[
            "calm.toml",
            "--baseline",
            "b.csv",
            "--set",
            "dependency.service_time=12ms",
        ],
    );
    assert_eq!(code, 1);
    same_rows(&table, &doc);
    let rows = doc["scenarios"][0]["rows"].as_array().unwrap();
    let r = rows
        .iter()
        .find(|r| r["metric"] == "latency_mean_ms" && r["kind"] == "baseline")
        .unwrap();
    assert_eq!(r["value"].as_f64(), Some(12.0));
    assert_eq!(r["bound"]["baseline"].as_f64(), Some(10.0));
    assert_eq!(r["bound"]["drift"].as_f64(), Some(0.2));
    assert_eq!(r["text"], "12 (+20.00%)");
    assert_eq!(r["pass"], false);
    let failed = doc["failed"].as_u64().unwrap() as usize;
    assert!(failed >= 2);
    assert_eq!(junit_counts(&xml), (rows.len(), failed));
    let tree = parse_xml(&xml);
    let message = tree
        .descendants("failure")
        .into_iter()
        .map(|f| f.attrs["message"].clone())
        .find(|m| m.contains("(+20.00%)"))
        .unwrap();
    assert_eq!(message, "value 12 (+20.00%) outside bound within 5% of 10");
}

#[test]
fn junit_is_well_formed_one_case_per_row_and_escapes_names() {
    let name = "a&b <\"q\"> 'x'.toml";
    let fail = failing();
    let d = folder(&[(name, &fail), ("calm.toml", CALM)]);
    let (table, doc, xml, code) = all_formats(d.path(), &[name, "calm.toml"]);
    assert_eq!(code, 1);
    same_rows(&table, &doc);
    assert_eq!(doc["scenarios"][0]["path"], name);
    assert!(xml.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites "));
    assert!(
        xml.contains("a&amp;b &lt;&quot;q&quot;&gt; &apos;x&apos;.toml"),
        "{xml}"
    );
    let root = parse_xml(&xml);
    assert_eq!(root.name, "testsuites");
    assert_eq!(root.attrs["tests"], table.len().to_string());
    assert_eq!(root.attrs["failures"], "1");
    let suites: Vec<&Element> = root
        .children
        .iter()
        .filter(|c| c.name == "testsuite")
        .collect();
    assert_eq!(suites.len(), 2);
    assert_eq!(suites[0].attrs["name"], name);
    assert_eq!(suites[1].attrs["name"], "calm.toml");
    for (s, rows) in suites.iter().zip(doc["scenarios"].as_array().unwrap()) {
        let rows = rows["rows"].as_array().unwrap();
        let cases: Vec<&Element> = s.children.iter().filter(|c| c.name == "testcase").collect();
        assert_eq!(cases.len(), rows.len());
        assert_eq!(s.attrs["tests"], rows.len().to_string());
        let failed = rows.iter().filter(|r| r["pass"] == false).count();
        assert_eq!(s.attrs["failures"], failed.to_string());
        for (c, r) in cases.iter().zip(rows) {
            assert_eq!(c.attrs["classname"], s.attrs["name"]);
            let label = r["cell"]["label"].as_str().unwrap();
            let cell = match r["run"].as_u64() {
                Some(n) => format!("run {n} ({label})"),
                None => label.to_string(),
            };
            let want = format!(
                "{cell} · {} {}",
                r["metric"].as_str().unwrap(),
                r["bound"]["text"].as_str().unwrap()
            );
            assert_eq!(c.attrs["name"], want);
            let failures = c.descendants("failure");
            assert_eq!(failures.len(), usize::from(r["pass"] == false));
            if let Some(f) = failures.first() {
                assert_eq!(
                    f.attrs["message"],
                    format!("value {} outside bound <= 5", r["text"].as_str().unwrap())
                );
                assert!(
                    f.text.contains(&format!("scenario: {name}\n")),
                    "{}",
                    f.text
                );
            }
        }
    }
}

#[test]
fn bad_input_in_any_format_is_an_error_on_stderr_and_nothing_on_stdout() {
    let bad = CALM.replace("metric = \"amplification\"", "metric = \"amplificaton\"");
    let d = folder(&[("bad.toml", &bad)]);
    for format in ["text", "json", "junit"] {
        let o = retrysim(d.path(), &["check", "bad.toml", "--format", format]);
        assert_eq!(code(&o), 2, "{format}");
        assert_eq!(stdout(&o), "", "{format}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains("error: scenario 'bad.toml': expect[0].metric"),
            "{err}"
        );
    }
    let o = retrysim(d.path(), &["check", "bad.toml", "--format", "xml"]);
    assert_eq!(code(&o), 2);
    assert!(String::from_utf8_lossy(&o.stderr).contains("possible values: text, json, junit"));
}

#[test]
fn runs_stopped_at_a_limit_make_the_report_incomplete_in_every_format() {
    let d = folder(&[("calm.toml", CALM)]);
    let (table, doc, xml, code) =
        all_formats(d.path(), &["calm.toml", "--set", "limits.max_events=100"]);
    assert_eq!(code, 2);
    same_rows(&table, &doc);
    assert_eq!(doc["result"], "incomplete");
    let t = &doc["scenarios"][0]["truncation"];
    assert_eq!(t["stopped_runs"], serde_json::json!([0, 1, 2, 3]));
    assert!(
        t["message"]
            .as_str()
            .unwrap()
            .starts_with("scenario 'calm.toml': 4 of 4 runs stopped early at a limit"),
        "{t}"
    );
    let root = parse_xml(&xml);
    assert_eq!(root.attrs["errors"], "1");
    let errors = root.descendants("error");
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0].attrs["message"], t["message"].as_str().unwrap());
    assert_eq!(root.descendants("testcase").len(), table.len() + 1);
}

#[test]
fn run_json_is_the_summary_csv_typed_and_nothing_else() {
    let text = CALM.replace("replications = 2", "replications = 3");
    let d = folder(&[("calm.toml", &text)]);
    let o = retrysim(
        d.path(),
        &["run", "calm.toml", "--out", "out", "--no-plots", "--json"],
    );
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    let out = stdout(&o);
    // The whole of stdout is one JSON array.
    let v: Value = serde_json::from_str(&out).expect("stdout is nothing but JSON");
    let runs = v.as_array().unwrap();
    let csv = std::fs::read_to_string(d.path().join("out/summary.csv")).unwrap();
    let mut rdr = csv::Reader::from_reader(csv.as_bytes());
    let header: Vec<String> = rdr.headers().unwrap().iter().map(str::to_string).collect();
    let records: Vec<csv::StringRecord> = rdr.records().map(Result::unwrap).collect();
    assert_eq!(runs.len(), 3);
    assert_eq!(records.len(), 3);
    for (obj, rec) in runs.iter().zip(&records) {
        let obj = obj.as_object().unwrap();
        assert_eq!(obj.len(), header.len());
        for (h, f) in header.iter().zip(rec.iter()) {
            let j = &obj[h.as_str()];
            match f {
                "" => assert!(j.is_null(), "{h}"),
                "true" | "false" => assert_eq!(j.as_bool(), Some(f == "true"), "{h}"),
                _ => assert_eq!(j.as_f64(), Some(f.parse::<f64>().unwrap()), "{h}: {f}"),
            }
        }
        // Typed: counts are integers, measures floats.
        assert!(obj["logical"].is_u64() && obj["run"].is_u64());
        assert!(obj["amplification"].is_f64() && obj["wasted_fraction"].is_f64());
        assert_eq!(obj["amplification"].as_f64(), Some(1.0));
        assert_eq!(obj["latency_mean_ms"].as_f64(), Some(10.0));
        assert_eq!(obj["metastable"], false);
    }
    // The keys come in the CSV's column order.
    let first = &out[..out.find('}').unwrap()];
    let at: Vec<usize> = header
        .iter()
        .map(|h| first.find(&format!("\"{h}\":")).unwrap())
        .collect();
    assert!(at.windows(2).all(|w| w[0] < w[1]));
    // The folder is written as without --json.
    for f in ["manifest.toml", "timeseries.csv", "columns.csv"] {
        assert!(d.path().join("out").join(f).is_file(), "{f}");
    }
    // With a [sweep], the note goes to stderr, not into the JSON.
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("note: the scenario has a [sweep]"), "{err}");
}

/// (test cases, failures) of a JUnit document, read from its root and counted.
fn junit_counts(xml: &str) -> (usize, usize) {
    let root = parse_xml(xml);
    let cases = root.descendants("testcase").len();
    let failures = root.descendants("failure").len();
    assert_eq!(root.attrs["tests"], cases.to_string());
    assert_eq!(root.attrs["failures"], failures.to_string());
    (cases, failures)
}

/// An XML element as the strict reader below finds it.
#[derive(Debug)]
struct Element {
    name: String,
    attrs: BTreeMap<String, String>,
    children: Vec<Element>,
    text: String,
}

impl Element {
    fn descendants(&self, name: &str) -> Vec<&Element> {
        let mut out = Vec::new();
        for c in &self.children {
            if c.name == name {
                out.push(c);
            }
            out.extend(c.descendants(name));
        }
        out
    }
}

/// Resolves the entities of XML text; panics on a raw `<`, a bare `&` or an unknown
/// entity.
fn unescape(s: &str) -> String {
    assert!(!s.contains('<'), "raw < in {s:?}");
    let mut out = String::new();
    let mut rest = s;
    while let Some(i) = rest.find('&') {
        out.push_str(&rest[..i]);
        let end = rest[i..]
            .find(';')
            .unwrap_or_else(|| panic!("bare & in {s:?}"))
            + i;
        let ent = &rest[i + 1..end];
        out.push(match ent {
            "amp" => '&',
            "lt" => '<',
            "gt" => '>',
            "quot" => '"',
            "apos" => '\'',
            _ if ent.starts_with('#') => char::from_u32(ent[1..].parse().unwrap()).unwrap(),
            _ => panic!("unknown entity &{ent}; in {s:?}"),
        });
        rest = &rest[end + 1..];
    }
    out.push_str(rest);
    out
}

/// A strict reader of the XML subset JUnit files use (a declaration, elements,
/// attributes in double quotes, text): panics on anything malformed, and requires one
/// root and every element closed in order.
fn parse_xml(xml: &str) -> Element {
    let body = xml
        .strip_prefix("<?xml version=\"1.0\" encoding=\"UTF-8\"?>")
        .expect("an XML declaration");
    let mut stack: Vec<Element> = vec![Element {
        name: String::new(),
        attrs: BTreeMap::new(),
        children: Vec::new(),
        text: String::new(),
    }];
    let mut rest = body;
    while !rest.is_empty() {
        let lt = rest.find('<').unwrap_or(rest.len());
        let text = unescape(&rest[..lt]);
        let top = stack.last_mut().unwrap();
        if top.name.is_empty() {
            assert!(text.trim().is_empty(), "text outside the root: {text:?}");
        }
        top.text.push_str(&text);
        rest = &rest[lt..];
        if rest.is_empty() {
            break;
        }
        let gt = rest.find('>').expect("a closed tag");
        let tag = &rest[1..gt];
        rest = &rest[gt + 1..];
        if let Some(name) = tag.strip_prefix('/') {
            let done = stack.pop().unwrap();
            assert_eq!(done.name, name, "closing tag out of order");
            stack.last_mut().unwrap().children.push(done);
            continue;
        }
        let (tag, empty) = match tag.strip_suffix('/') {
            Some(t) => (t, true),
            None => (tag, false),
        };
        let name_end = tag.find(char::is_whitespace).unwrap_or(tag.len());
        let name = &tag[..name_end];
        assert!(!name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'));
        let mut attrs = BTreeMap::new();
        let mut a = tag[name_end..].trim_start();
        while !a.is_empty() {
            let eq = a.find("=\"").expect("attribute=\"value\"");
            let key = &a[..eq];
            assert!(
                key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'),
                "{key}"
            );
            let close = a[eq + 2..].find('"').expect("a closing quote") + eq + 2;
            let value = &a[eq + 2..close];
            assert!(!value.contains('>'), "raw > in an attribute");
            assert!(
                attrs.insert(key.to_string(), unescape(value)).is_none(),
                "{key} twice"
            );
            a = a[close + 1..].trim_start();
        }
        let e = Element {
            name: name.to_string(),
            attrs,
            children: Vec::new(),
            text: String::new(),
        };
        if empty {
            stack.last_mut().unwrap().children.push(e);
        } else {
            stack.push(e);
        }
    }
    assert_eq!(stack.len(), 1, "unclosed elements");
    let mut doc = stack.pop().unwrap();
    assert_eq!(doc.children.len(), 1, "one root");
    doc.children.pop().unwrap()
}
