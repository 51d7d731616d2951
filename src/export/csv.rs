//! CSV rendering of summaries, time series and herd series, and the one writer every
//! CSV record of every file goes through ([`Records`]: no field starts a formula).
//!
//! Rows are rendered per run into strings, so files can be assembled from runs in plan
//! order whatever order they finished in (and shards can be merged byte for byte).

use crate::engine::time::{to_millis, to_secs};
#[cfg(any(test, feature = "dev-hooks"))]
use crate::metrics::columns::QUEUE_GROUP;
use crate::metrics::columns::{FileRow, Group, GroupFile};
use crate::metrics::summary::{Cell, Layout, Summary};
use crate::metrics::BucketRow;
use crate::run::RunResult;

pub(crate) use crate::metrics::columns::{
    ATTEMPTS_BY_ORDINAL_COLUMNS, HERD_COLUMNS, TIMESERIES_COLUMNS,
};

/// A writer of CSV records into memory, the one way retrysim writes a CSV record: RFC
/// 4180 quoting where needed (a field holding a comma, quote or line break is quoted,
/// its quotes doubled), `\n` line ends, and every field passed through [`cell`], so no
/// field a user's text reaches (a name, a label, a swept value) starts a formula.
pub(crate) struct Records<W: std::io::Write = Vec<u8>>(::csv::Writer<W>);

impl Records {
    /// An empty writer.
    pub(crate) fn new() -> Records {
        Records::appending(Vec::new())
    }

    /// A writer that appends to `out`.
    fn appending(out: Vec<u8>) -> Records {
        Records::to(out)
    }

    /// Writes one record, each field as [`cell`] makes it.
    pub(crate) fn record<I, S>(&mut self, fields: I)
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        // Writing into memory cannot fail.
        let _ = self.write(fields);
    }

    /// The text written.
    pub(crate) fn text(self) -> String {
        // Every field written is UTF-8.
        let bytes = self.0.into_inner().unwrap_or_default();
        String::from_utf8(bytes).unwrap_or_default()
    }
}

impl<W: std::io::Write> Records<W> {
    /// A writer of records into `out` (a file streamed a row at a time).
    pub(crate) fn to(out: W) -> Records<W> {
        Records(
            ::csv::WriterBuilder::new()
                .terminator(::csv::Terminator::Any(b'\n'))
                .from_writer(out),
        )
    }

    /// Writes one record, each field as [`cell`] makes it, and says whether `out`
    /// took it.
    pub(crate) fn write<I, S>(&mut self, fields: I) -> std::io::Result<()>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        Ok(self.0.write_record(fields.into_iter().map(Field::of))?)
    }

    /// Flushes what is buffered into `out`.
    pub(crate) fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

/// A field as written: as it is, or with the leading `'` of [`cell`].
enum Field<S> {
    As(S),
    Quoted(String),
}

impl<S: AsRef<str>> Field<S> {
    fn of(f: S) -> Field<S> {
        if runs_as_formula(f.as_ref()) {
            Field::Quoted(format!("'{}", f.as_ref()))
        } else {
            Field::As(f)
        }
    }
}

impl<S: AsRef<str>> AsRef<[u8]> for Field<S> {
    fn as_ref(&self) -> &[u8] {
        match self {
            Field::As(s) => s.as_ref().as_bytes(),
            Field::Quoted(s) => s.as_bytes(),
        }
    }
}

/// Whether a spreadsheet opening a CSV could run `field` as a formula: it starts with
/// `=`, `+`, `-`, `@`, a tab or a carriage return (OWASP's list) and is not a finite
/// number (`-0.5` and `+3` are read as numbers).
pub(crate) fn runs_as_formula(field: &str) -> bool {
    matches!(
        field.as_bytes().first(),
        Some(b'=' | b'+' | b'-' | b'@' | b'\t' | b'\r')
    ) && !field.parse::<f64>().is_ok_and(f64::is_finite)
}

/// A field as every CSV retrysim writes holds it: with a leading `'` when a spreadsheet
/// could run it ([`runs_as_formula`]), so it shows the text and never evaluates it;
/// anything else as it is. [`uncell`] reads it back.
pub(crate) fn cell(field: &str) -> std::borrow::Cow<'_, str> {
    if runs_as_formula(field) {
        format!("'{field}").into()
    } else {
        field.into()
    }
}

/// The text a [`cell`] holds: `'=1+2` is `=1+2`; a cell it did not quote is itself.
pub(crate) fn uncell(cell: &str) -> &str {
    match cell.strip_prefix('\'') {
        Some(rest) if runs_as_formula(rest) => rest,
        _ => cell,
    }
}

/// Renders one CSV record and a newline, each field as [`cell`] makes it.
pub(crate) fn record<I, S>(fields: I) -> String
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    let mut w = Records::new();
    w.record(fields);
    w.text()
}

/// The column dictionary as CSV (`file, column, unit, kind, description`).
pub(crate) fn dictionary(entries: &[crate::metrics::columns::Entry]) -> String {
    let mut out = record(crate::metrics::columns::DICTIONARY_HEADER);
    for e in entries {
        out.push_str(&record([
            e.file,
            e.column.as_str(),
            e.unit,
            e.kind,
            e.description.as_str(),
        ]));
    }
    out
}

/// The lint table as CSV (`id, why, fires_when`), as `retrysim lints` prints it.
pub(crate) fn lints(rules: &[crate::explain::lint::Rule]) -> String {
    let mut out = record(crate::explain::lint::LINTS_HEADER);
    for r in rules {
        out.push_str(&record([r.id, r.why, r.fires_when]));
    }
    out
}

/// Renders typed rows, one record each, cells as [`Cell::render`] writes them.
pub(crate) fn rows<'a>(rows: impl IntoIterator<Item = &'a [Cell]>) -> String {
    let mut w = Records::new();
    for row in rows {
        w.record(row.iter().map(Cell::render));
    }
    w.text()
}

/// Text as a spreadsheet shows it and never evaluates it: a cell that starts with
/// `=`, `+`, `-`, `@`, a tab or a carriage return gets a leading `'` (OWASP's rule
/// against formula injection), even one that reads as a number (a label `-1`); the
/// writer ([`cell`]) leaves numbers alone.
pub(crate) fn spreadsheet_safe(text: String) -> String {
    if text.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        format!("'{text}")
    } else {
        text
    }
}

/// One summary row laid out on `columns` (missing columns are empty).
pub(crate) fn summary_row(s: &Summary, columns: &[String]) -> String {
    let cells: Vec<Cell> = columns
        .iter()
        .map(|c| s.get(c).cloned().unwrap_or(Cell::Empty))
        .collect();
    rows([&cells[..]])
}

/// The time-series rows of a run. Rates and time-weighted means are normalised by each
/// bucket's real width: a partial last bucket `[t, duration)` by `duration - t`. After
/// the fixed columns come the queue's ([`QUEUE_SERIES_COLUMNS`]) when the run has a
/// queue fleet; a folder lays its rows out with [`timeseries_rows_laid`].
#[cfg(any(test, feature = "dev-hooks"))]
pub(crate) fn timeseries_rows(r: &RunResult, dependency_servers: Option<u32>) -> String {
    let queue: &[(&Group, bool)] = if r.metrics.queue.is_some() {
        &[(&QUEUE_GROUP, true)]
    } else {
        &[]
    };
    timeseries_rows_laid(r, dependency_servers, queue)
}

/// The time-series rows of a run, laid out as its folder's header: after the fixed
/// columns, the `timeseries.csv` columns of each group of `groups`
/// ([`Layout::series_groups`]), empty where the `bool` says the run's scenario does
/// not use the group.
pub(crate) fn timeseries_rows_laid(
    r: &RunResult,
    dependency_servers: Option<u32>,
    groups: &[(&Group, bool)],
) -> String {
    let mut out: Option<Records> = None;
    timeseries_cells_laid(r, dependency_servers, groups, &mut |row| match &mut out {
        Some(w) => w.record(row.iter().map(Cell::render)),
        None => {
            let first = rows([row]);
            // Sized from the first row (plus a margin), so a long run's text is not
            // grown by doubling: this string is most of the memory that grows with
            // the horizon.
            let mut text = Vec::with_capacity(first.len() * r.metrics.buckets.len() * 9 / 8);
            text.extend_from_slice(first.as_bytes());
            out = Some(Records::appending(text));
        }
    });
    out.map_or_else(String::new, Records::text)
}

/// The cells of [`timeseries_rows_laid`], one row at a time, to `row` (the Python
/// package's typed tables take them so).
pub(crate) fn timeseries_cells_laid(
    r: &RunResult,
    dependency_servers: Option<u32>,
    groups: &[(&Group, bool)],
    each: &mut dyn FnMut(&[Cell]),
) {
    let m = &r.metrics;
    let outage = outage_per_bucket(r);
    for (i, (b, &outage_ns)) in m.buckets.iter().zip(&outage).enumerate() {
        let mut row = timeseries_cells(r, dependency_servers, b, outage_ns).to_vec();
        for (g, used) in groups {
            if *used {
                (g.series_cells)(m, i, &mut row);
            } else {
                row.resize(row.len() + g.series.len(), Cell::Empty);
            }
        }
        each(&row);
    }
}

/// The header of `timeseries.csv` of a folder of `layout`: the fixed columns, then
/// those of its groups ([`Layout::series_groups`]).
pub(crate) fn timeseries_header(layout: &Layout) -> String {
    let extra = layout
        .used_groups()
        .flat_map(|(g, _)| g.series.iter().map(|c| c.name));
    record(TIMESERIES_COLUMNS.iter().copied().chain(extra))
}

/// One `timeseries.csv` row, laid out on [`TIMESERIES_COLUMNS`].
fn timeseries_cells(
    r: &RunResult,
    dependency_servers: Option<u32>,
    b: &BucketRow,
    outage_ns: u64,
) -> [Cell; TIMESERIES_COLUMNS.len()] {
    let width = r.metrics.width(b);
    let bs = to_secs(width);
    let bns = width as f64;
    let per_s = |x: u64| Cell::float(x as f64 / bs);
    let ms = |v: Option<u64>| v.map_or(Cell::Empty, |v| Cell::float(to_millis(v)));
    [
        Cell::Int(r.run),
        Cell::Int(u64::from(r.replication)),
        Cell::float(to_secs(b.t)),
        per_s(b.offered),
        per_s(b.inbound),
        per_s(b.served),
        per_s(b.successes),
        Cell::ratio(b.successes as f64, b.completions as f64),
        Cell::ratio(b.inbound as f64, b.offered as f64),
        Cell::float(b.queue_area as f64 / bns),
        Cell::Int(b.queue_max),
        match dependency_servers {
            Some(s) => Cell::float(b.busy_area as f64 / bns / f64::from(s)),
            None => Cell::Empty,
        },
        Cell::float(b.wasted_ns as f64 / 1e9),
        if r.breaker_instances == 0 {
            Cell::Empty
        } else {
            Cell::float(b.breaker_area as f64 / bns / r.breaker_instances as f64)
        },
        b.budget_level.map_or(Cell::Empty, Cell::float),
        Cell::Int(b.completions),
        Cell::Int(b.outcomes[1]),
        Cell::Int(b.outcomes[2]),
        Cell::Int(b.outcomes[3]),
        Cell::Int(b.outcomes[4]),
        Cell::Int(b.outcomes[5]),
        Cell::Int(b.outcomes[6]),
        ms(b.latency_p50),
        ms(b.latency_p99),
        Cell::float((outage_ns as f64 / bns).min(1.0)),
        ms(b.success_latency_p50),
        ms(b.success_latency_p99),
        ms(b.failure_latency_p50),
        Cell::ratio(b.wait_ns as f64 / 1e6, b.started as f64),
        Cell::ratio(b.waited as f64, b.admitted as f64),
        Cell::ratio(b.blocked as f64, b.inbound as f64),
        Cell::float((b.queue_area + b.busy_area) as f64 / bns),
    ]
}

/// Outage time (ns, summed over windows) in each bucket, within the bucket's real width.
/// Each window visits only the buckets it overlaps, so a run with many windows and many
/// buckets stays linear.
fn outage_per_bucket(r: &RunResult) -> Vec<u64> {
    let m = &r.metrics;
    let mut ns = vec![0u64; m.buckets.len()];
    for w in &r.windows {
        let first = w.start / m.bucket;
        let last = w.end.saturating_sub(1) / m.bucket;
        if w.end <= w.start || first >= ns.len() as u64 {
            continue;
        }
        for i in first as usize..=(last as usize).min(ns.len() - 1) {
            let t = m.buckets[i].t;
            let overlap = w
                .end
                .min(t.saturating_add(m.width(&m.buckets[i])))
                .saturating_sub(w.start.max(t));
            ns[i] = ns[i].saturating_add(overlap);
        }
    }
    ns
}

/// The herd rows of a run (fine-bucket inbound counts).
pub(crate) fn herd_rows(r: &RunResult) -> String {
    let mut w = Records::new();
    herd_cells(r, &mut |row| w.record(row.iter().map(Cell::render)));
    w.text()
}

/// The cells of [`herd_rows`], one row at a time, to `each`.
pub(crate) fn herd_cells(r: &RunResult, each: &mut dyn FnMut(&[Cell])) {
    let Some((start, width, counts)) = &r.metrics.herd else {
        return;
    };
    for (i, c) in counts.iter().enumerate() {
        let t = start + i as u64 * width;
        let row: [Cell; HERD_COLUMNS.len()] = [
            Cell::Int(r.run),
            Cell::Int(u64::from(r.replication)),
            Cell::float(to_secs(t)),
            Cell::Int(*c),
        ];
        each(&row);
    }
}

/// The `services.csv` rows of a run of a service graph, bucket by bucket and within a
/// bucket in `[[services]]` order (`names`), with the columns of `groups` (those of
/// the layout that write `services.csv`, in order); empty for a `[dependency]` run.
pub(crate) fn services_rows(r: &RunResult, names: &[String], groups: &[&GroupFile]) -> String {
    let mut w = Records::new();
    services_cells(r, names, groups, &mut |row| {
        w.record(row.iter().map(Cell::render));
    });
    w.text()
}

/// The cells of [`services_rows`], one row at a time, to `each`.
pub(crate) fn services_cells(
    r: &RunResult,
    names: &[String],
    groups: &[&GroupFile],
    each: &mut dyn FnMut(&[Cell]),
) {
    let Some(sv) = &r.metrics.services else {
        return;
    };
    let mut cells = Vec::new();
    let buckets = sv.services.first().map_or(0, |t| t.rows.len());
    for i in 0..buckets {
        let t = to_secs(i as u64 * sv.bucket());
        for k in 0..sv.services.len() {
            let name = names.get(k).map_or("", String::as_str);
            let row = FileRow {
                run: r.run,
                replication: r.replication,
                bucket: i,
                t,
                service: k,
                name,
            };
            cells.clear();
            for g in groups {
                (g.cells)(&r.metrics, &row, &mut cells);
            }
            each(&cells);
        }
    }
}

/// The `attempts_by_ordinal.csv` rows of a run: counts above 0 by layer, ordinal and
/// outcome, in that order (see [`crate::metrics::ordinal`]).
pub(crate) fn ordinal_rows(r: &RunResult) -> String {
    let mut w = Records::new();
    ordinal_cells(r, &mut |row| w.record(row.iter().map(Cell::render)));
    w.text()
}

/// The cells of [`ordinal_rows`], one row at a time, to `each`.
pub(crate) fn ordinal_cells(r: &RunResult, each: &mut dyn FnMut(&[Cell])) {
    for (layer, ordinal, end, n) in r.metrics.ordinals.rows() {
        let row: [Cell; ATTEMPTS_BY_ORDINAL_COLUMNS.len()] = [
            Cell::Int(r.run),
            Cell::Int(layer as u64),
            Cell::Int(u64::from(ordinal)),
            Cell::Text(end.name().to_string()),
            Cell::Int(n),
        ];
        each(&row);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::summary::Layout;
    use crate::run::run_one;
    use crate::scenario::{load, Source};

    /// 2.5 s of constant arrivals at 10/s (at 0, 0.1, ..., 2.4 s) in 1 s buckets, each
    /// served for 300 ms at once (10 servers): the last bucket is [2, 2.5), and the
    /// completions at 2.5, 2.6 and 2.7 s are drain.
    const PARTIAL: &str = r#"
name = "partial"
duration = "2.5s"
bucket = "1s"

[dependency]
servers = 10
queue_limit = "unlimited"
service_time = { kind = "deterministic", value = "300ms" }

[[fleets]]
name = "web"
arrival = { kind = "constant", rate = 10 }

[[outages]]
start = "2s"
end = "3s"
mode = { kind = "slow", factor = 1 }
"#;

    fn run(text: &str) -> RunResult {
        let src = Source {
            path: "partial.toml".into(),
            stem: "partial".into(),
            text: text.into(),
        };
        let l = load(src, &[]).expect("scenario loads");
        run_one(&l.scenario, &Layout::of(&l.scenario), 0, 0)
    }

    fn rows(r: &RunResult) -> Vec<Vec<String>> {
        timeseries_rows(r, Some(10))
            .lines()
            .map(|l| l.split(',').map(str::to_string).collect())
            .collect()
    }

    fn col(name: &str) -> usize {
        TIMESERIES_COLUMNS.iter().position(|c| *c == name).unwrap()
    }

    #[test]
    fn a_partial_last_bucket_is_normalised_by_its_real_width() {
        let r = run(PARTIAL);
        let rows = rows(&r);
        assert_eq!(rows.len(), 3);
        let last = &rows[2];
        assert_eq!(last[col("t")], "2");
        // 5 arrivals in half a second: 10 per second, not 5.
        assert_eq!(last[col("offered")], "10");
        assert_eq!(last[col("inbound")], "10");
        // Completions at 2.0 ... 2.4 s only; those at 2.5 s and later are drain.
        assert_eq!(last[col("completions")], "5");
        assert_eq!(last[col("served")], "10");
        assert_eq!(last[col("goodput")], "10");
        // 3 of 10 servers busy all through [2, 2.5): the drain's tail is not in it.
        assert_eq!(last[col("utilisation")], "0.3");
        // The outage [2, 3) covers all of the last bucket's real width.
        assert_eq!(last[col("outage")], "1");
        // The summary still counts the drain.
        assert_eq!(r.summary.get("logical"), Some(&Cell::Int(25)));
        assert_eq!(r.summary.get("succeeded"), Some(&Cell::Int(25)));
        assert_eq!(r.summary.get("served"), Some(&Cell::Int(25)));
    }

    #[test]
    fn a_partial_last_bucket_sets_the_peak_by_its_rate() {
        // Twice the rate from 2 s: 10 arrivals in [2, 2.5) = 20/s, the busiest bucket
        // (capacity 10 / 0.3 s = 33.3/s).
        let text = PARTIAL.replace(
            "rate = 10 }",
            "rate = 10 }\nload_profile = [{ at = \"2s\", multiplier = 2 }]",
        );
        let r = run(&text);
        assert_eq!(rows(&r)[2][col("inbound")], "20");
        let peak = r.summary.get("peak_inbound").and_then(Cell::as_f64);
        assert_eq!(peak, Some(20.0));
        let ratio = r.summary.get("peak_inbound_ratio").and_then(Cell::as_f64);
        assert!((ratio.unwrap() - 0.6).abs() < 1e-9, "{ratio:?}");
    }

    /// Two fleets, two layers: every templated column appears.
    const WIDE: &str = r#"
name = "wide"
duration = "2s"
bucket = "1s"

[dependency]
servers = 2
service_time = "10ms"

[[fleets]]
name = "a"
arrival = { kind = "constant", rate = 10 }
[[fleets.layers]]
max_attempts = 2
[[fleets.layers]]
max_attempts = 2

[[fleets]]
name = "b"
arrival = { kind = "constant", rate = 10 }
"#;

    #[test]
    fn the_writers_lay_their_rows_out_on_the_catalog() {
        use crate::metrics::columns::{self, HERD, SUMMARY_BASE, SUMMARY_EXTRA, TIMESERIES};
        let r = run(WIDE);
        let src = Source {
            path: "wide.toml".into(),
            stem: "wide".into(),
            text: WIDE.into(),
        };
        let layout = Layout::of(&load(src, &[]).unwrap().scenario);
        let header = layout.columns();
        // The summary's cells, in order, are the header's names.
        let names: Vec<&str> = r.summary.cells.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, header);
        // The header is the catalog: base, layers, extras, fleets.
        let mut expected: Vec<String> = SUMMARY_BASE.iter().map(|c| c.name.into()).collect();
        expected.extend((0..2).map(columns::layer_column));
        expected.extend(SUMMARY_EXTRA.iter().map(|c| c.name.to_string()));
        for f in ["a", "b"] {
            expected.extend(
                columns::FLEET_COLUMNS
                    .iter()
                    .map(|c| columns::fleet_column(f, c)),
            );
        }
        assert_eq!(header, expected);
        assert!(header.iter().all(|h| columns::summary_column(h).is_some()));
        let line = summary_row(&r.summary, &header);
        assert_eq!(line.trim_end().split(',').count(), header.len());
        // Time series and herd rows have one field per catalog column.
        let ts = timeseries_rows(&r, Some(2));
        assert!(!ts.is_empty());
        for l in ts.lines() {
            assert_eq!(l.split(',').count(), TIMESERIES.len(), "{l}");
        }
        assert_eq!(
            TIMESERIES_COLUMNS.to_vec(),
            TIMESERIES.map(|c| c.name).to_vec()
        );
        assert_eq!(HERD_COLUMNS.to_vec(), HERD.map(|c| c.name).to_vec());
        for l in herd_rows(&r).lines() {
            assert_eq!(l.split(',').count(), HERD.len(), "{l}");
        }
        let ord = ordinal_rows(&r);
        assert!(!ord.is_empty());
        for l in ord.lines() {
            assert_eq!(
                l.split(',').count(),
                columns::ATTEMPTS_BY_ORDINAL.len(),
                "{l}"
            );
        }
    }

    #[test]
    fn records_are_quoted_as_rfc_4180_says() {
        assert_eq!(record(["a", "", "b"]), "a,,b\n");
        assert_eq!(
            record(["x\ny", "c\rr", "q\"q"]),
            "\"x\ny\",\"c\rr\",\"q\"\"q\"\n"
        );
        assert_eq!(record(["'=1+2", " lead"]), "'=1+2, lead\n");
    }

    #[test]
    fn every_field_that_would_start_a_formula_gets_a_quote_and_numbers_stay() {
        assert_eq!(
            record(["=1+2", "+x", "-y", "@z", "\tt", "\rr", "-1.5", "+2", "-inf", "a=b"]),
            "'=1+2,'+x,'-y,'@z,'\tt,\"'\rr\",-1.5,+2,'-inf,a=b\n"
        );
        let rows_text = super::rows([&[Cell::Text("=x".into()), Cell::Float(-0.5)][..]]);
        assert_eq!(rows_text, "'=x,-0.5\n");
        for f in ["=1+2", "-y", "-0.5", "web", "'", "'a", ""] {
            assert_eq!(uncell(&cell(f)), f);
        }
    }
}

/// The examples of this file's docs, as unit tests (the module is the crate's own,
/// so rustdoc cannot run them).
#[cfg(test)]
mod doc_examples {
    #[test]
    fn runs_as_formula_example() {
        use crate::export::csv::runs_as_formula;
        assert!(runs_as_formula("=HYPERLINK(\"http://x\")"));
        assert!(runs_as_formula("-2+3") && runs_as_formula("@SUM(A1)") && runs_as_formula("-inf"));
        assert!(!runs_as_formula("-0.5") && !runs_as_formula("1e-9") && !runs_as_formula("web"));
    }

    #[test]
    fn cell_example() {
        use crate::export::csv::cell;
        assert_eq!(cell("=1+2"), "'=1+2");
        assert_eq!(cell("-0.25"), "-0.25");
        assert_eq!(cell("'=1+2"), "'=1+2");
    }

    #[test]
    fn uncell_example() {
        use crate::export::csv::uncell;
        assert_eq!(uncell("'=1+2"), "=1+2");
        assert_eq!(uncell("'quoted"), "'quoted");
        assert_eq!(uncell("-frontend"), "-frontend");
    }

    #[test]
    fn record_example() {
        use crate::export::csv::record;
        assert_eq!(
            record(["a", "b,c", "say \"hi\""]),
            "a,\"b,c\",\"say \"\"hi\"\"\"\n"
        );
    }

    #[test]
    fn spreadsheet_safe_example() {
        use crate::export::csv::spreadsheet_safe;
        assert_eq!(spreadsheet_safe("=2+5".into()), "'=2+5");
        assert_eq!(spreadsheet_safe("@SUM(1)".into()), "'@SUM(1)");
        assert_eq!(spreadsheet_safe("exponential".into()), "exponential");
    }
}
