//! `report.html`: one self-contained page per result folder that leads with the
//! answer — the scenario file's own header (question, setup, answer), the headline
//! numbers (a run's headline columns; a sweep's cells with their intervals), the
//! `[[expect]]` results (PASS/FAIL, as `retrysim check` finds them), the warnings of
//! `explain` when the manifest records them — then every chart inline as SVG (a
//! sweep's charts of the metrics the expectations name first), the summary table and
//! the resolved scenario.
//!
//! The page loads nothing: no script, no stylesheet, no font, no image from anywhere,
//! so it opens from disk with no server and no network. Every text from the files is
//! escaped. The same folder gives the same bytes.

use std::fmt::Write as _;

// A number for the cell table: the CSV's float format.
use crate::metrics::format::shortest as fmt;

use super::data::FolderKind;
use super::expect::Expectations;
use super::sweep::SweepContext;
use super::{Drawn, Folder};

/// Rows of `summary.csv` shown at most (the file has them all).
pub(crate) const MAX_SUMMARY_ROWS: usize = 500;

/// Metrics shown in the headline table (a run's rows, a sweep's cells), when present.
const CELL_METRICS: [&str; 6] = crate::metrics::columns::HEADLINE;

const STYLE: &str = "body{font-family:sans-serif;margin:24px auto;max-width:1100px;color:#222;padding:0 12px}\
h1{font-size:1.6em;margin-bottom:4px}h2{font-size:1.25em;margin-top:32px;border-bottom:1px solid #ddd}\
.meta{color:#555;margin-top:0}figure{margin:16px 0}figure svg{max-width:100%;height:auto;border:1px solid #eee}\
figcaption{color:#555;font-size:.9em}.scroll{overflow-x:auto}\
table{border-collapse:collapse;font-size:.8em}th,td{border:1px solid #ddd;padding:3px 6px;text-align:right;white-space:nowrap}\
th{background:#f4f4f4;position:sticky;top:0}pre{background:#f7f7f7;padding:12px;overflow-x:auto;font-size:.85em}\
ul.lints li{margin:4px 0}td.pass{color:#1a7f37;font-weight:bold}td.fail{color:#cf222e;font-weight:bold}\
#question p{margin:6px 0}";

/// Escapes text for HTML content and attribute values.
pub(crate) fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

/// Prepares a chart's SVG for inlining: no XML declaration, no namespace URL (HTML
/// gives inline `<svg>` its namespace), and an accessible name.
pub(crate) fn inline_svg(svg: &str, title: &str) -> String {
    let body = match svg.find("<svg") {
        Some(i) => &svg[i..],
        None => svg,
    };
    let body = body.replacen(" xmlns=\"http://www.w3.org/2000/svg\"", "", 1);
    body.replacen(
        "<svg",
        &format!("<svg role=\"img\" aria-label=\"{}\"", escape(title)),
        1,
    )
}

/// The capacity the header states: the scenario's; over a sweep of
/// `dependency.servers` its range (capacity is linear in the servers); none, but a
/// pointer to the cells, when another swept key of the dependency or the services
/// changes it.
fn capacity_text(
    m: &crate::export::manifest::Manifest,
    sweep: Option<&super::data::Sweep>,
) -> Option<String> {
    let base = m.capacity_per_s()?;
    let Some(sw) = sweep.filter(|_| m.run.kind == FolderKind::Sweep) else {
        return Some(format!("capacity {base} attempts/s"));
    };
    let servers_base = m
        .scenario
        .get("dependency")
        .and_then(|d| d.get("servers"))
        .and_then(toml::Value::as_integer)
        .filter(|&n| n > 0);
    let mut text = None;
    for (k, key) in sw.keys.iter().enumerate() {
        if key == "dependency.servers" {
            let values: Option<Vec<f64>> = sw
                .cells
                .iter()
                .map(|c| c.values[k].parse::<f64>().ok())
                .collect();
            if let (Some(v), Some(n)) = (values, servers_base) {
                let per = base / n as f64;
                let lo = v.iter().copied().fold(f64::MAX, f64::min) * per;
                let hi = v.iter().copied().fold(f64::MIN, f64::max) * per;
                text = Some(format!(
                    "capacity {} to {} attempts/s (over <code>dependency.servers</code>)",
                    crate::metrics::format::shortest(lo),
                    crate::metrics::format::shortest(hi)
                ));
                continue;
            }
        }
        if key.starts_with("dependency.") || key.starts_with("services") {
            return Some(format!(
                "capacity varies by cell (swept <code>{}</code>)",
                escape(key)
            ));
        }
    }
    Some(text.unwrap_or(format!("capacity {base} attempts/s")))
}

/// Renders the report of `folder` with its drawn charts and its expectations' results.
pub(crate) fn render(folder: &Folder, drawn: &[Drawn], expectations: &Expectations) -> String {
    let m = &folder.manifest;
    let mut h = String::new();
    let name = escape(m.scenario_name());
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>retrysim: {name}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n\
         <h1>retrysim report: {name}</h1>\n"
    );
    let mut meta: Vec<String> = vec![match m.run.kind {
        FolderKind::Run => "run".to_string(),
        FolderKind::Sweep => format!(
            "sweep over {}",
            m.run
                .params
                .iter()
                .map(|p| format!("<code>{}</code>", escape(p)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }];
    if let Some(s) = m.run.seed {
        meta.push(format!("seed {s}"));
    }
    if let Some(r) = m.run.runs {
        meta.push(format!("{r} run{}", if r == 1 { "" } else { "s" }));
    }
    if let Some(c) = capacity_text(m, folder.sweep.as_ref()) {
        meta.push(c);
    }
    if let Some(o) = m.offered_per_s() {
        meta.push(format!("offered {o} requests/s"));
    }
    let _ = writeln!(h, "<p class=\"meta\">{}</p>", meta.join(" · "));

    header_section(&mut h, m.run.header.as_deref());
    headline_section(&mut h, folder);
    expect_section(&mut h, expectations);
    if !m.explain.lints.is_empty() {
        h.push_str("<section id=\"lints\">\n<h2>Warnings from <code>retrysim explain</code></h2>\n<ul class=\"lints\">\n");
        for l in &m.explain.lints {
            let _ = writeln!(h, "<li>{}</li>", escape(l));
        }
        h.push_str("</ul>\n</section>\n");
    }

    h.push_str("<section id=\"plots\">\n<h2>Charts</h2>\n");
    if !folder.left_out.is_empty() {
        let _ = writeln!(
            h,
            "<p>Left out: {}. This folder's <code>manifest.toml</code> was written by an older retrysim, without the <code>[plot]</code> table {} drawn from (run the same command again to write it).</p>",
            folder.left_out.join(" and "),
            if folder.left_out.len() == 1 { "it is" } else { "they are" }
        );
    }
    if folder.too_many_cells > 0 {
        let _ = writeln!(
            h,
            "<p>Left out: the amplification chart (<code>amplification</code>). The sweep has {} cells, more than the {} whose N^L its manifest records.</p>",
            folder.too_many_cells,
            crate::export::manifest::MAX_WORST_CASE_CELLS
        );
    }
    if drawn.is_empty() {
        h.push_str("<p>No chart applies to this folder.</p>\n");
    }
    if m.run.kind == FolderKind::Run && folder.series.len() > 1 {
        let _ = writeln!(
            h,
            "<p>The charts show run {} of the {} runs in this folder.</p>",
            folder.series[0].run,
            folder.series.len()
        );
    }
    let figure = |h: &mut String, d: &Drawn| {
        let file = d
            .path
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_default();
        let rel = match d.name.rsplit_once('/') {
            Some((sub, _)) => format!("plots/{sub}/{file}"),
            None => format!("plots/{file}"),
        };
        let what = d
            .caption
            .as_ref()
            .map(|c| format!("<br>{}", escape(c)))
            .unwrap_or_default();
        let _ = write!(
            h,
            "<figure id=\"plot-{}\">\n{}<figcaption>{} — <code>{}</code>{what}</figcaption>\n</figure>\n",
            escape(&d.name.replace('/', "-")),
            inline_svg(&d.svg, &d.title),
            escape(&d.title),
            escape(&rel)
        );
    };
    for d in drawn.iter().filter(|d| d.main) {
        figure(&mut h, d);
    }
    let rest: Vec<&Drawn> = drawn.iter().filter(|d| !d.main).collect();
    if !rest.is_empty() {
        let _ = writeln!(
            h,
            "<details id=\"metric-charts\">\n<summary>Every metric that varies, against each swept key ({} charts)</summary>",
            rest.len()
        );
        for d in rest {
            figure(&mut h, d);
        }
        h.push_str("</details>\n");
    }
    h.push_str("</section>\n");

    let s = &folder.summary;
    h.push_str("<section id=\"summary\">\n<h2>Summary</h2>\n");
    if s.rows.len() > MAX_SUMMARY_ROWS {
        let _ = writeln!(
            h,
            "<p>The first {MAX_SUMMARY_ROWS} of {} rows of <code>summary.csv</code>.</p>",
            s.rows.len()
        );
    } else {
        h.push_str("<p>One row per run, as in <code>summary.csv</code>.</p>\n");
    }
    h.push_str("<div class=\"scroll\">\n<table id=\"summary-table\">\n<thead><tr>");
    for c in &s.headers {
        let _ = write!(h, "<th>{}</th>", escape(c));
    }
    h.push_str("</tr></thead>\n<tbody>\n");
    for row in s.rows.iter().take(MAX_SUMMARY_ROWS) {
        h.push_str("<tr>");
        for c in row {
            let _ = write!(h, "<td>{}</td>", escape(c));
        }
        h.push_str("</tr>\n");
    }
    h.push_str("</tbody>\n</table>\n</div>\n</section>\n");

    let _ = write!(
        h,
        "<section id=\"scenario\">\n<h2>Resolved scenario</h2>\n\
         <p>The folder's <code>manifest.toml</code>: what produced these files.</p>\n\
         <pre>{}</pre>\n</section>\n</body>\n</html>\n",
        escape(&folder.manifest_text)
    );
    h
}

/// The scenario file's header as paragraphs (a blank line separates them).
fn header_section(h: &mut String, header: Option<&str>) {
    let Some(text) = header else { return };
    h.push_str("<section id=\"question\">\n<h2>The scenario</h2>\n");
    for para in text.split("\n\n") {
        let para = para.trim_matches('\n');
        if !para.is_empty() {
            let _ = writeln!(h, "<p>{}</p>", escape(para));
        }
    }
    h.push_str("</section>\n");
}

/// The headline numbers: a sweep's cells (means and intervals), a run's rows of the
/// headline columns of `summary.csv`.
fn headline_section(h: &mut String, folder: &Folder) {
    let m = &folder.manifest;
    if let Some(sw) = &folder.sweep {
        let ctx = SweepContext::new(sw, m);
        h.push_str("<section id=\"headline\">\n<h2>Headline numbers, per cell</h2>\n");
        if sw.has_intervals {
            h.push_str("<p>Mean over the replications [95% confidence interval], from <code>aggregate.csv</code>.</p>\n");
        } else {
            h.push_str("<p>Mean over the replications, from <code>summary.csv</code> (no <code>aggregate.csv</code>: no intervals).</p>\n");
        }
        h.push_str("<div class=\"scroll\">\n<table id=\"cell-table\">\n<thead><tr><th>cell</th>");
        for s in &ctx.short {
            let _ = write!(h, "<th>{}</th>", escape(s));
        }
        h.push_str("<th>runs</th>");
        let metrics: Vec<&str> = CELL_METRICS
            .iter()
            .copied()
            .filter(|c| sw.metrics.iter().any(|m| m == c))
            .collect();
        for c in &metrics {
            let _ = write!(h, "<th>{}</th>", escape(c));
        }
        h.push_str("</tr></thead>\n<tbody>\n");
        for (i, cell) in sw.cells.iter().enumerate() {
            let _ = write!(h, "<tr><td>{i}</td>");
            for v in &cell.values {
                let _ = write!(h, "<td>{}</td>", escape(v));
            }
            let _ = write!(h, "<td>{}</td>", cell.runs);
            for c in &metrics {
                match cell.metrics.get(*c) {
                    Some(s) if s.low != s.high => {
                        let _ = write!(
                            h,
                            "<td>{} [{}, {}]</td>",
                            fmt(s.mean),
                            fmt(s.low),
                            fmt(s.high)
                        );
                    }
                    Some(s) => {
                        let _ = write!(h, "<td>{}</td>", fmt(s.mean));
                    }
                    None => h.push_str("<td></td>"),
                }
            }
            h.push_str("</tr>\n");
        }
        h.push_str("</tbody>\n</table>\n</div>\n</section>\n");
    } else {
        run_headline(h, &folder.summary);
    }
}

/// A run folder's headline columns, one row per run (at most [`MAX_SUMMARY_ROWS`]).
fn run_headline(h: &mut String, s: &super::table::CsvTable) {
    let cols: Vec<(&str, usize)> = CELL_METRICS
        .iter()
        .filter_map(|c| s.index(c).ok().map(|i| (*c, i)))
        .collect();
    let Ok(run_col) = s.index(crate::metrics::columns::RUN.name) else {
        return;
    };
    if cols.is_empty() || s.rows.is_empty() {
        return;
    }
    h.push_str("<section id=\"headline\">\n<h2>Headline numbers</h2>\n");
    h.push_str(
        "<p>Per run, from <code>summary.csv</code> (every column is in the summary below).</p>\n",
    );
    h.push_str("<div class=\"scroll\">\n<table id=\"headline-table\">\n<thead><tr><th>run</th>");
    for (c, _) in &cols {
        let _ = write!(h, "<th>{}</th>", escape(c));
    }
    h.push_str("</tr></thead>\n<tbody>\n");
    for row in s.rows.iter().take(MAX_SUMMARY_ROWS) {
        let _ = write!(h, "<tr><td>{}</td>", escape(&row[run_col]));
        for (_, i) in &cols {
            let _ = write!(h, "<td>{}</td>", escape(&row[*i]));
        }
        h.push_str("</tr>\n");
    }
    h.push_str("</tbody>\n</table>\n</div>\n</section>\n");
}

/// The `[[expect]]` results: a PASS or FAIL row per expectation and cell (or run).
fn expect_section(h: &mut String, e: &Expectations) {
    if e.rows.is_empty() && e.skipped == 0 && e.error.is_none() {
        return;
    }
    h.push_str("<section id=\"expectations\">\n<h2>Expectations (<code>[[expect]]</code>)</h2>\n");
    if let Some(err) = &e.error {
        let _ = writeln!(h, "<p>Not evaluated: {}</p>", escape(err));
    }
    if !e.rows.is_empty() {
        let passed = e.rows.iter().filter(|r| r.pass).count();
        let _ = writeln!(
            h,
            "<p>{passed} of {} pass, evaluated on <code>summary.csv</code> as <code>retrysim check</code> evaluates them (a cell's value: the mean over its replications).</p>",
            e.rows.len()
        );
        h.push_str("<div class=\"scroll\">\n<table id=\"expect-table\">\n<thead><tr><th>result</th><th>metric</th><th>bound</th><th>value</th><th>cell</th></tr></thead>\n<tbody>\n");
        for r in &e.rows {
            let (class, word) = if r.pass {
                ("pass", "PASS")
            } else {
                ("fail", "FAIL")
            };
            let _ = writeln!(
                h,
                "<tr><td class=\"{class}\">{word}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                escape(&r.metric),
                escape(&r.bound),
                escape(&r.value),
                escape(&r.cell)
            );
        }
        h.push_str("</tbody>\n</table>\n</div>\n");
    }
    if e.skipped > 0 {
        let _ = writeln!(
            h,
            "<p>{} expectation{} select sweep cells (<code>where</code>): <code>retrysim sweep</code> or <code>retrysim check</code> evaluates {}.</p>",
            e.skipped,
            if e.skipped == 1 { "" } else { "s" },
            if e.skipped == 1 { "it" } else { "them" }
        );
    }
    h.push_str("</section>\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_escaped() {
        assert_eq!(
            escape("<a href=\"x\">&'"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
    }

    #[test]
    fn inline_svg_drops_the_namespace_url_and_gets_a_name() {
        let svg = "<svg width=\"10\" height=\"10\" viewBox=\"0 0 10 10\" xmlns=\"http://www.w3.org/2000/svg\">\n</svg>\n";
        let s = inline_svg(svg, "a < b");
        assert!(!s.contains("http"), "{s}");
        assert!(
            s.starts_with("<svg role=\"img\" aria-label=\"a &lt; b\" width=\"10\""),
            "{s}"
        );
    }
}
