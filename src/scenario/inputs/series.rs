//! Time series as monitoring systems export them: a CSV table with a time column and
//! a value column, or the JSON answer of Prometheus' `/api/v1/query_range` (a
//! `matrix` of series, one picked by its labels). Both give `(seconds, value)` points
//! in increasing time order; every rule broken names the file, the line (CSV) or the
//! point (`result[0].values[17]`), and what is allowed.

use std::collections::BTreeMap;

use serde::Deserialize;

/// One point: time in seconds (Unix time or any origin: only differences matter) and
/// the value as recorded.
pub(crate) type Point = (f64, f64);

/// Reads the series of a CSV table: `time` names the time column (seconds as a number,
/// or an RFC 3339 timestamp such as `2026-03-03T10:00:00Z`), `value` the value column.
/// Rows must be in strictly increasing time order; values finite and at least 0.
pub(crate) fn csv_points(text: &str, time: &str, value: &str) -> Result<Vec<Point>, String> {
    if text.trim().is_empty() {
        return Err("is empty".to_string());
    }
    let mut r = csv::ReaderBuilder::new()
        .trim(csv::Trim::All)
        .from_reader(text.as_bytes());
    let headers = r.headers().map_err(|e| format!("its header: {e}"))?.clone();
    let col = |name: &str, key: &str| {
        headers.iter().position(|h| h == name).ok_or_else(|| {
            format!(
                "has no column \"{name}\" (`{key}`); its columns: {}",
                headers
                    .iter()
                    .map(|h| format!("\"{h}\""))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })
    };
    let (ti, vi) = (col(time, "time")?, col(value, "value")?);
    let mut out: Vec<Point> = Vec::new();
    for rec in r.records() {
        let rec = rec.map_err(|e| match e.position() {
            Some(p) => format!("line {}: {e}", p.line()),
            None => e.to_string(),
        })?;
        let line = rec.position().map_or(0, |p| p.line());
        let at = |i: usize| rec.get(i).unwrap_or("");
        let t =
            parse_time(at(ti)).map_err(|why| format!("line {line}, column \"{time}\": {why}"))?;
        let v =
            parse_value(at(vi)).map_err(|why| format!("line {line}, column \"{value}\": {why}"))?;
        if let Some(&(prev, _)) = out.last() {
            if t <= prev {
                return Err(format!(
                    "line {line}, column \"{time}\": times must increase strictly (found {} after {})",
                    at(ti),
                    fmt_secs(prev)
                ));
            }
        }
        out.push((t, v));
    }
    if out.is_empty() {
        return Err("holds no rows".to_string());
    }
    Ok(out)
}

/// A Prometheus query answer's `data`, as `/api/v1/query` and `/api/v1/query_range`
/// give it: refused when empty, not JSON of that shape, or an error answer.
#[derive(Deserialize)]
pub(super) struct PromData {
    #[serde(rename = "resultType")]
    pub(super) result_type: String,
    pub(super) result: Vec<PromSeries>,
}

/// One series of a Prometheus answer: its labels, and its sample (`vector`) or its
/// samples (`matrix`).
#[derive(Deserialize)]
pub(super) struct PromSeries {
    #[serde(default)]
    pub(super) metric: BTreeMap<String, String>,
    pub(super) value: Option<(f64, String)>,
    #[serde(default)]
    pub(super) values: Vec<(f64, String)>,
}

/// The `data` of a Prometheus answer `text`, or what is wrong with it.
pub(super) fn prometheus_answer(text: &str) -> Result<PromData, String> {
    #[derive(Deserialize)]
    struct Answer {
        status: String,
        data: Option<PromData>,
        #[serde(rename = "errorType")]
        error_type: Option<String>,
        error: Option<String>,
    }
    if text.trim().is_empty() {
        return Err("is empty".to_string());
    }
    let a: Answer = serde_json::from_str(text).map_err(|e| {
        format!(
            "is not a Prometheus query answer (line {}, column {}: {e})",
            e.line(),
            e.column()
        )
    })?;
    if a.status != "success" {
        return Err(format!(
            "is a Prometheus error answer (status \"{}\"{}{})",
            a.status,
            a.error_type
                .map(|t| format!(", errorType \"{t}\""))
                .unwrap_or_default(),
            a.error
                .map(|t| format!(", error \"{t}\""))
                .unwrap_or_default()
        ));
    }
    a.data
        .ok_or_else(|| "is a Prometheus answer without `data`".to_string())
}

/// A series' labels as PromQL writes them: `{job="api",le="0.5"}`.
pub(super) fn labels(m: &BTreeMap<String, String>) -> String {
    let inner = m
        .iter()
        .map(|(k, v)| format!("{k}=\"{v}\""))
        .collect::<Vec<_>>()
        .join(",");
    format!("{{{inner}}}")
}

/// Reads the series of a Prometheus range-query answer: the one series of the matrix
/// whose labels include every `selector` pair (any series when the matrix holds one
/// and no selector is given). Values are strings in Prometheus' JSON (`"NaN"`,
/// `"+Inf"` among them); they must be finite and at least 0.
pub(crate) fn prometheus_points(
    text: &str,
    selector: &BTreeMap<String, String>,
) -> Result<Vec<Point>, String> {
    let data = prometheus_answer(text)?;
    if data.result_type != "matrix" {
        return Err(format!(
            "must hold a range query's answer, resultType \"matrix\" (found \"{}\")",
            data.result_type
        ));
    }
    let matching: Vec<usize> = (0..data.result.len())
        .filter(|&i| {
            selector
                .iter()
                .all(|(k, v)| data.result[i].metric.get(k) == Some(v))
        })
        .collect();
    let i = match matching.as_slice() {
        [i] => *i,
        _ => {
            let mut found: Vec<String> = data.result.iter().map(|s| labels(&s.metric)).collect();
            let more = found.len().saturating_sub(10);
            found.truncate(10);
            if more > 0 {
                found.push(format!("and {more} more"));
            }
            let found = if found.is_empty() {
                "none".to_string()
            } else {
                found.join(", ")
            };
            return Err(format!(
                "must hold exactly one series matching `series` {} (found {} of {}: {found})",
                labels(selector),
                matching.len(),
                data.result.len()
            ));
        }
    };
    let mut out: Vec<Point> = Vec::with_capacity(data.result[i].values.len());
    for (j, (t, v)) in data.result[i].values.iter().enumerate() {
        let here = || format!("result[{i}].values[{j}]");
        if !t.is_finite() {
            return Err(format!("{}: the time must be finite (found {t})", here()));
        }
        let v = parse_value(v).map_err(|why| format!("{}: {why}", here()))?;
        if let Some(&(prev, _)) = out.last() {
            if *t <= prev {
                return Err(format!(
                    "{}: times must increase strictly (found {} after {})",
                    here(),
                    fmt_secs(*t),
                    fmt_secs(prev)
                ));
            }
        }
        out.push((*t, v));
    }
    if out.is_empty() {
        return Err(format!(
            "series {} holds no values",
            labels(&data.result[i].metric)
        ));
    }
    Ok(out)
}

/// Joins the chunks of one recording (Prometheus caps a query at 11,000 points, so a
/// day may come in several files): in time order; a time two chunks share (the end of
/// one query is the start of the next) must hold the same value and is kept once.
pub(crate) fn join(chunks: Vec<Vec<Point>>) -> Result<Vec<Point>, (usize, String)> {
    let mut out: Vec<Point> = Vec::new();
    for (k, chunk) in chunks.into_iter().enumerate() {
        let mut pts = chunk.into_iter().peekable();
        if let (Some(&(last_t, last_v)), Some(&(t, v))) = (out.last(), pts.peek()) {
            if t < last_t || (t == last_t && v != last_v) {
                return Err((
                    k,
                    format!(
                        "must start after the file before it ends, at {} (found a point at {}{})",
                        fmt_secs(last_t),
                        fmt_secs(t),
                        if t == last_t {
                            format!(" with value {v}, not {last_v}")
                        } else {
                            String::new()
                        }
                    ),
                ));
            }
            if t == last_t {
                pts.next();
            }
        }
        out.extend(pts);
    }
    Ok(out)
}

/// A value: a finite number at least 0.
fn parse_value(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("must be a number (found \"{}\")", clip(s)))?;
    if !v.is_finite() || v < 0.0 {
        return Err(format!("must be a finite number at least 0 (found {s})"));
    }
    Ok(v)
}

/// A time: seconds as a number, or an RFC 3339 timestamp (to Unix seconds).
pub(crate) fn parse_time(s: &str) -> Result<f64, String> {
    let s = s.trim();
    if let Ok(v) = s.parse::<f64>() {
        return if v.is_finite() {
            Ok(v)
        } else {
            Err(format!("must be a finite time (found {s})"))
        };
    }
    rfc3339(s).ok_or_else(|| {
        format!(
            "must be seconds (a number) or an RFC 3339 time such as 2026-03-03T10:00:00Z (found \"{}\")",
            clip(s)
        )
    })
}

/// `YYYY-MM-DD[T ]HH:MM:SS[.frac](Z|±HH:MM)` as Unix seconds.
fn rfc3339(s: &str) -> Option<f64> {
    let b = s.as_bytes();
    if b.len() < 20 || !s.is_ascii() {
        return None;
    }
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let t = &s[r];
        t.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| t.parse().ok())?
    };
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, se) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') {
        return None;
    }
    if b[13] != b':' || b[16] != b':' {
        return None;
    }
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || se > 60 {
        return None;
    }
    let mut rest = &s[19..];
    let mut frac = 0.0;
    if let Some(r) = rest.strip_prefix('.') {
        let n = r.bytes().take_while(u8::is_ascii_digit).count();
        if n == 0 {
            return None;
        }
        frac = format!("0.{}", &r[..n]).parse().ok()?;
        rest = &r[n..];
    }
    let offset = match rest {
        "Z" | "z" => 0,
        _ if rest.len() == 6
            && matches!(rest.as_bytes()[0], b'+' | b'-')
            && rest.as_bytes()[3] == b':' =>
        {
            let oh = rest[1..3].parse::<i64>().ok()?;
            let om = rest[4..6].parse::<i64>().ok()?;
            if oh > 23 || om > 59 {
                return None;
            }
            let o = oh * 3600 + om * 60;
            if rest.starts_with('-') {
                -o
            } else {
                o
            }
        }
        _ => return None,
    };
    // Days from civil (Howard Hinnant's algorithm).
    let yy = if mo <= 2 { y - 1 } else { y };
    let era = yy.div_euclid(400);
    let yoe = yy - era * 400;
    let mp = (mo + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let secs = days * 86_400 + h * 3600 + mi * 60 + se - offset;
    Some(secs as f64 + frac)
}

/// Seconds as messages show them.
fn fmt_secs(t: f64) -> String {
    format!("{t}")
}

/// A cell as a message quotes it: at most 40 characters.
fn clip(s: &str) -> String {
    match s.char_indices().nth(40) {
        Some((i, _)) => format!("{}...", &s[..i]),
        None => s.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_csv_with_a_missing_column_names_the_columns_it_has() {
        let e = csv_points("time,qps\n0,1\n", "time", "rps").unwrap_err();
        assert_eq!(
            e,
            "has no column \"rps\" (`value`); its columns: \"time\", \"qps\""
        );
    }

    #[test]
    fn bad_csv_values_name_the_line_and_column() {
        let e = csv_points("t,v\n0,1\n1,-2\n", "t", "v").unwrap_err();
        assert_eq!(
            e,
            "line 3, column \"v\": must be a finite number at least 0 (found -2)"
        );
        let e = csv_points("t,v\n0,1\n1,NaN\n", "t", "v").unwrap_err();
        assert!(
            e.starts_with("line 3, column \"v\": must be a finite"),
            "{e}"
        );
        let e = csv_points("t,v\n0,1\n0,2\n", "t", "v").unwrap_err();
        assert!(e.contains("times must increase strictly"), "{e}");
        assert_eq!(csv_points("t,v\n", "t", "v").unwrap_err(), "holds no rows");
    }

    #[test]
    fn a_prometheus_error_answer_is_refused_with_its_error() {
        let e = prometheus_points(
            r#"{"status":"error","errorType":"bad_data","error":"parse error"}"#,
            &BTreeMap::new(),
        )
        .unwrap_err();
        assert_eq!(
            e,
            "is a Prometheus error answer (status \"error\", errorType \"bad_data\", error \"parse error\")"
        );
    }

    #[test]
    fn a_matrix_of_several_series_needs_a_selector_matching_one() {
        let text = r#"{"status":"success","data":{"resultType":"matrix","result":[
            {"metric":{"job":"api","code":"200"},"values":[[0,"1"]]},
            {"metric":{"job":"api","code":"500"},"values":[[0,"2"]]}]}}"#;
        let e = prometheus_points(text, &BTreeMap::new()).unwrap_err();
        assert!(e.contains("found 2 of 2"), "{e}");
        let sel = BTreeMap::from([("code".to_string(), "500".to_string())]);
        assert_eq!(prometheus_points(text, &sel).unwrap(), vec![(0.0, 2.0)]);
    }

    #[test]
    fn prometheus_nan_and_vectors_are_refused() {
        let nan = r#"{"status":"success","data":{"resultType":"matrix","result":[
            {"metric":{},"values":[[0,"1"],[15,"NaN"]]}]}}"#;
        let e = prometheus_points(nan, &BTreeMap::new()).unwrap_err();
        assert!(
            e.starts_with("result[0].values[1]: must be a finite"),
            "{e}"
        );
        let vector = r#"{"status":"success","data":{"resultType":"vector","result":[]}}"#;
        assert!(prometheus_points(vector, &BTreeMap::new())
            .unwrap_err()
            .contains("resultType \"matrix\""));
    }

    #[test]
    fn rfc3339_times_agree_with_unix_time() {
        // 2024-02-29 (a leap day) 12:00 UTC is 1709208000.
        assert_eq!(parse_time("2024-02-29T12:00:00Z"), Ok(1_709_208_000.0));
        assert_eq!(parse_time("2024-02-29 13:30:00+01:30"), Ok(1_709_208_000.0));
        assert_eq!(parse_time("1969-12-31T23:59:59Z"), Ok(-1.0));
        assert!(parse_time("2024-13-01T00:00:00Z").is_err());
    }
}

/// The examples of this file's docs, as unit tests (the module is the crate's own,
/// so rustdoc cannot run them).
#[cfg(test)]
mod doc_examples {
    #[test]
    fn csv_points_example() {
        use crate::scenario::inputs::series::csv_points;
        let text = "t,rps\n0,100\n60,250.5\n";
        assert_eq!(
            csv_points(text, "t", "rps").unwrap(),
            vec![(0.0, 100.0), (60.0, 250.5)]
        );
        assert!(csv_points("t,rps\n60,1\n0,1\n", "t", "rps")
            .unwrap_err()
            .contains("line 3"));
    }

    #[test]
    fn prometheus_points_example() {
        use crate::scenario::inputs::series::prometheus_points;
        let text = r#"{"status":"success","data":{"resultType":"matrix","result":[
          {"metric":{"job":"api"},"values":[[1700000000,"10"],[1700000015,"12.5"]]}]}}"#;
        let pts = prometheus_points(text, &Default::default()).unwrap();
        assert_eq!(pts, vec![(1700000000.0, 10.0), (1700000015.0, 12.5)]);
    }

    #[test]
    fn join_example() {
        use crate::scenario::inputs::series::join;
        let day = join(vec![
            vec![(0.0, 1.0), (15.0, 2.0)],
            vec![(15.0, 2.0), (30.0, 3.0)],
        ])
        .unwrap();
        assert_eq!(day, vec![(0.0, 1.0), (15.0, 2.0), (30.0, 3.0)]);
        assert!(join(vec![vec![(0.0, 1.0), (15.0, 2.0)], vec![(10.0, 2.0)]]).is_err());
    }

    #[test]
    fn parse_time_example() {
        use crate::scenario::inputs::series::parse_time;
        assert_eq!(parse_time("1700000000.5"), Ok(1700000000.5));
        assert_eq!(parse_time("1970-01-02T00:00:01Z"), Ok(86401.0));
        assert_eq!(
            parse_time("2026-03-03T10:00:00.250+01:00"),
            Ok(1772528400.25)
        );
        assert!(parse_time("yesterday").is_err());
    }
}
