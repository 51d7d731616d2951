//! The reports of a check, each rendered from the same computed rows ([`Checked`]), so
//! the formats cannot disagree:
//!
//! - [`render_table`] and [`render_failures`]: the text table and its `FAIL` lines;
//! - [`json`]: one JSON document (the version, then per scenario its plan, every row
//!   with its bound and value as numbers, its truncation, and the overall result);
//! - [`junit`]: JUnit XML, as GitHub Actions, GitLab and Jenkins read it: one
//!   `<testsuite>` per scenario, one `<testcase>` per row, a `<failure>` with the value
//!   and the bound for each failed row, and an `<error>` test case ("all runs complete")
//!   when runs stopped early at a limit.
//!
//! Numbers in the JSON have the text of the table and the CSV files
//! (`crate::metrics::format::shortest`).

use serde::Serialize;

use crate::export::json::Num;

use super::{Bound, CheckRow, Checked, GroupValue};

/// Renders rows as a table with aligned columns (and a header line).
pub fn render_table(rows: &[CheckRow]) -> String {
    let header = ["scenario", "cell", "metric", "bound", "value", "result"];
    let lines: Vec<[&str; 6]> = rows
        .iter()
        .map(|r| {
            [
                r.scenario.as_str(),
                r.cell.as_str(),
                r.metric.as_str(),
                r.bound.as_str(),
                r.value.as_str(),
                if r.pass { "pass" } else { "FAIL" },
            ]
        })
        .collect();
    let mut widths = header.map(|h| h.chars().count());
    for l in &lines {
        for (w, f) in widths.iter_mut().zip(l) {
            *w = (*w).max(f.chars().count());
        }
    }
    let mut out = String::new();
    for l in std::iter::once(&header).chain(&lines) {
        let mut line = String::new();
        for (i, (f, w)) in l.iter().zip(widths).enumerate() {
            if i > 0 {
                line.push_str("  ");
            }
            line.push_str(f);
            line.extend(std::iter::repeat_n(' ', w - f.chars().count()));
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// One line per failed row: `FAIL scenario cell metric: value not bound`.
pub fn render_failures(rows: &[CheckRow]) -> String {
    rows.iter()
        .filter(|r| !r.pass)
        .map(|r| {
            format!(
                "FAIL {} {} {}: {} not {}\n",
                r.scenario, r.cell, r.metric, r.value, r.bound
            )
        })
        .collect()
}

/// The overall result of checked scenarios: `pass`, `fail` (a row failed) or
/// `incomplete` (runs stopped early at a limit: the check cannot pass, exit 2).
pub fn result(checked: &[Checked]) -> &'static str {
    if checked.iter().any(|c| c.truncation.is_some()) {
        "incomplete"
    } else if checked.iter().flat_map(|c| &c.rows).any(|r| !r.pass) {
        "fail"
    } else {
        "pass"
    }
}

#[derive(Serialize)]
struct Document<'a> {
    retrysim: &'static str,
    result: &'static str,
    passed: usize,
    failed: usize,
    scenarios: Vec<ScenarioDoc<'a>>,
}

#[derive(Serialize)]
struct ScenarioDoc<'a> {
    path: &'a str,
    name: &'a str,
    cells: usize,
    replications: u32,
    runs: u64,
    result: &'static str,
    passed: usize,
    failed: usize,
    nothing_to_check: bool,
    baseline_written: Option<Written>,
    truncation: Option<TruncationDoc>,
    rows: Vec<RowDoc<'a>>,
}

#[derive(Serialize)]
struct Written {
    path: String,
    cells: usize,
}

#[derive(Serialize)]
struct TruncationDoc {
    message: String,
    stopped_runs: Vec<u64>,
}

#[derive(Serialize)]
struct RowDoc<'a> {
    scenario: &'a str,
    kind: &'static str,
    cell: CellDoc<'a>,
    run: Option<u64>,
    metric: &'a str,
    bound: BoundDoc<'a>,
    value: Num,
    mean_of: usize,
    empty_in: usize,
    text: &'a str,
    pass: bool,
}

#[derive(Serialize)]
struct CellDoc<'a> {
    index: Option<usize>,
    label: &'a str,
    params: serde_json::Map<String, serde_json::Value>,
}

#[derive(Serialize)]
#[serde(untagged)]
enum BoundDoc<'a> {
    Expect {
        text: &'a str,
        expect: usize,
        min: Num,
        max: Num,
    },
    Baseline {
        text: &'a str,
        baseline: Num,
        tolerance: Num,
        drift: Num,
    },
}

/// A `param_` value as JSON: a boolean or a number as its text reads (the text kept:
/// `3` stays `3`), otherwise the text.
fn param_value(text: &str) -> serde_json::Value {
    let json = crate::export::json::field("param_", text);
    serde_json::from_str(&json).unwrap_or_else(|_| serde_json::Value::String(text.into()))
}

fn row_doc(r: &CheckRow) -> RowDoc<'_> {
    let d = &r.data;
    let (kind, bound) = match d.bound {
        Bound::Expect { index, min, max } => (
            "expect",
            BoundDoc::Expect {
                text: &r.bound,
                expect: index,
                min: Num(min),
                max: Num(max),
            },
        ),
        Bound::Baseline {
            baseline,
            tolerance,
            drift,
        } => (
            "baseline",
            BoundDoc::Baseline {
                text: &r.bound,
                baseline: Num(baseline),
                tolerance: Num(Some(tolerance)),
                drift: Num(drift),
            },
        ),
        Bound::NotInBaseline { tolerance } => (
            "baseline",
            BoundDoc::Baseline {
                text: &r.bound,
                baseline: Num(None),
                tolerance: Num(Some(tolerance)),
                drift: Num(None),
            },
        ),
        Bound::Absent => (
            "baseline",
            BoundDoc::Baseline {
                text: &r.bound,
                baseline: Num(None),
                tolerance: Num(None),
                drift: Num(None),
            },
        ),
    };
    let GroupValue { mean, empty, runs } = d.value;
    RowDoc {
        scenario: &r.scenario,
        kind,
        cell: CellDoc {
            index: d.cell,
            label: &d.label,
            params: d
                .params
                .iter()
                .map(|(k, v)| (k.clone(), param_value(v)))
                .collect(),
        },
        run: d.run,
        metric: &r.metric,
        bound,
        value: Num(mean),
        mean_of: runs,
        empty_in: empty,
        text: &r.value,
        pass: r.pass,
    }
}

fn counts(rows: &[CheckRow]) -> (usize, usize) {
    let failed = rows.iter().filter(|r| !r.pass).count();
    (rows.len() - failed, failed)
}

/// The check as one JSON document (two-space indented, with a final newline).
pub fn json(checked: &[Checked]) -> String {
    let scenarios: Vec<ScenarioDoc> = checked
        .iter()
        .map(|c| {
            let (passed, failed) = counts(&c.rows);
            ScenarioDoc {
                path: &c.path,
                name: &c.name,
                cells: c.cells,
                replications: c.replications,
                runs: c.cells as u64 * u64::from(c.replications),
                result: result(std::slice::from_ref(c)),
                passed,
                failed,
                nothing_to_check: c.nothing_to_check,
                baseline_written: c.wrote_baseline.as_ref().map(|(p, cells)| Written {
                    path: p.display().to_string(),
                    cells: *cells,
                }),
                truncation: c.truncation.as_ref().map(|t| TruncationDoc {
                    message: t.to_string(),
                    stopped_runs: t.stopped.iter().map(|(r, _)| *r).collect(),
                }),
                rows: c.rows.iter().map(row_doc).collect(),
            }
        })
        .collect();
    let doc = Document {
        retrysim: env!("CARGO_PKG_VERSION"),
        result: result(checked),
        passed: scenarios.iter().map(|s| s.passed).sum(),
        failed: scenarios.iter().map(|s| s.failed).sum(),
        scenarios,
    };
    let mut out = serde_json::to_string_pretty(&doc)
        .unwrap_or_else(|e| format!("{{\"error\": {:?}}}", e.to_string()));
    out.push('\n');
    out
}

/// `s` escaped for XML text or an attribute value: the five special characters as
/// entities, tabs and line breaks as character references (an attribute keeps them),
/// and characters XML 1.0 cannot hold as U+FFFD.
///
/// ```
/// use retrysim::check::report::xml_escape;
/// assert_eq!(xml_escape("a<b & \"c\" 'd'>"), "a&lt;b &amp; &quot;c&quot; &apos;d&apos;&gt;");
/// assert_eq!(xml_escape("x\ny\u{1}"), "x&#10;y\u{fffd}");
/// ```
pub fn xml_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' => out.push_str("&#9;"),
            '\n' => out.push_str("&#10;"),
            '\r' => out.push_str("&#13;"),
            c if (c as u32) < 0x20 || c == '\u{fffe}' || c == '\u{ffff}' => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}

/// The name of a row's test case: `cell · metric bound` (`metric bound` without a
/// sweep).
pub fn case_name(r: &CheckRow) -> String {
    if r.cell == "-" {
        format!("{} {}", r.metric, r.bound)
    } else {
        format!("{} · {} {}", r.cell, r.metric, r.bound)
    }
}

/// The check as JUnit XML: one `<testsuite>` per scenario, one `<testcase>` per row.
pub fn junit(checked: &[Checked]) -> String {
    let mut suites = String::new();
    let (mut tests, mut failures, mut errors) = (0, 0, 0);
    for c in checked {
        let (_, failed) = counts(&c.rows);
        let error = usize::from(c.truncation.is_some());
        let n = c.rows.len() + error;
        tests += n;
        failures += failed;
        errors += error;
        let path = xml_escape(&c.path);
        suites.push_str(&format!(
            "  <testsuite name=\"{path}\" tests=\"{n}\" failures=\"{failed}\" errors=\"{error}\" skipped=\"0\">\n"
        ));
        suites.push_str(&format!(
            "    <properties>\n      <property name=\"scenario\" value=\"{}\"/>\n      <property name=\"runs\" value=\"{} cells × {} replications = {} runs\"/>\n    </properties>\n",
            xml_escape(&c.name),
            c.cells,
            c.replications,
            c.cells as u64 * u64::from(c.replications),
        ));
        for r in &c.rows {
            let head = format!(
                "    <testcase classname=\"{path}\" name=\"{}\"",
                xml_escape(&case_name(r))
            );
            if r.pass {
                suites.push_str(&format!("{head}/>\n"));
            } else {
                let message = format!("value {} outside bound {}", r.value, r.bound);
                let body = format!(
                    "scenario: {}\ncell: {}\nmetric: {}\nbound: {}\nvalue: {}",
                    r.scenario, r.cell, r.metric, r.bound, r.value
                );
                suites.push_str(&format!(
                    "{head}>\n      <failure message=\"{}\" type=\"{}\">{}</failure>\n    </testcase>\n",
                    xml_escape(&message),
                    if matches!(r.data.bound, Bound::Expect { .. }) {
                        "expect"
                    } else {
                        "baseline"
                    },
                    // Text keeps its line breaks (an attribute would not).
                    xml_escape(&body).replace("&#10;", "\n"),
                ));
            }
        }
        if let Some(t) = &c.truncation {
            let message = t.to_string();
            suites.push_str(&format!(
                "    <testcase classname=\"{path}\" name=\"all runs complete\">\n      <error message=\"{}\" type=\"truncated\">{}</error>\n    </testcase>\n",
                xml_escape(&message),
                xml_escape(&message),
            ));
        }
        suites.push_str("  </testsuite>\n");
    }
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"retrysim check\" tests=\"{tests}\" failures=\"{failures}\" errors=\"{errors}\">\n{suites}</testsuites>\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::RowData;

    fn row(cell: &str, pass: bool) -> CheckRow {
        CheckRow {
            scenario: "s.toml".into(),
            cell: cell.into(),
            metric: "amplification".into(),
            bound: "<= 1.5".into(),
            value: "2.25".into(),
            pass,
            data: RowData {
                cell: Some(0),
                label: cell.into(),
                params: vec![("fleets.0.name".into(), "a&b".into())],
                run: None,
                value: GroupValue {
                    mean: Some(2.25),
                    empty: 0,
                    runs: 1,
                },
                bound: Bound::Expect {
                    index: 0,
                    min: None,
                    max: Some(1.5),
                },
            },
        }
    }

    #[test]
    fn the_table_aligns_its_columns_and_names_failures() {
        let rows = [row("max_attempts=1", true), row("max_attempts=10", false)];
        let t = render_table(&rows);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines.len(), 3);
        let col = |l: &str| l.find("amplification").unwrap();
        assert_eq!(col(lines[1]), col(lines[2]));
        assert_eq!(lines[0].find("metric"), Some(col(lines[1])));
        assert!(lines[1].ends_with("pass") && lines[2].ends_with("FAIL"));
        assert_eq!(
            render_failures(&rows),
            "FAIL s.toml max_attempts=10 amplification: 2.25 not <= 1.5\n"
        );
    }

    fn checked(rows: Vec<CheckRow>) -> Checked {
        Checked {
            path: "a<b>&'c\".toml".into(),
            name: "n".into(),
            cells: 2,
            replications: 3,
            rows,
            wrote_baseline: None,
            nothing_to_check: false,
            truncation: None,
        }
    }

    #[test]
    fn junit_counts_and_escapes() {
        let c = checked(vec![row("k=1", true), row("k=2", false)]);
        let x = junit(std::slice::from_ref(&c));
        assert!(x.contains(
            "<testsuites name=\"retrysim check\" tests=\"2\" failures=\"1\" errors=\"0\">"
        ));
        assert!(x.contains(
            "<testsuite name=\"a&lt;b&gt;&amp;&apos;c&quot;.toml\" tests=\"2\" failures=\"1\""
        ));
        assert!(x.contains("name=\"k=1 · amplification &lt;= 1.5\"/>"));
        assert!(
            x.contains("<failure message=\"value 2.25 outside bound &lt;= 1.5\" type=\"expect\">")
        );
        assert_eq!(x.matches("<testcase ").count(), 2);
    }

    #[test]
    fn json_has_the_rows_as_numbers() {
        let c = checked(vec![row("k=1", true), row("k=2", false)]);
        let v: serde_json::Value = serde_json::from_str(&json(&[c])).unwrap();
        assert_eq!(v["result"], "fail");
        assert_eq!(
            (v["passed"].as_u64(), v["failed"].as_u64()),
            (Some(1), Some(1))
        );
        let r = &v["scenarios"][0]["rows"][1];
        assert_eq!(r["value"].as_f64(), Some(2.25));
        assert_eq!(r["bound"]["max"].as_f64(), Some(1.5));
        assert!(r["bound"]["min"].is_null());
        assert_eq!(r["cell"]["params"]["fleets.0.name"], "a&b");
        assert_eq!(r["pass"], false);
        assert_eq!(v["scenarios"][0]["runs"], 6);
    }
}
