//! The terminal summary of a sweep folder (`retrysim sweep` prints it, as `run` prints
//! its runs): one line per cell with the headline numbers (means over its
//! replications, from `aggregate.csv`), then the `[[expect]]` results as `retrysim
//! check` evaluates them on the folder's `summary.csv` (the report's rows).

use std::fmt::Write;
use std::path::Path;

use super::data::{self, CsvTable, Sweep};
use super::expect::ExpectRow;
use super::{Folder, PlotError};
use crate::check::short_keys;
use crate::metrics::columns::{
    AMPLIFICATION, METASTABLE, PEAK_INBOUND_RATIO, RECOVERY_TIME_S, SUCCESS_FRACTION,
    SUCCESS_LATENCY_P99_MS,
};

/// Longest swept value shown in a cell line; longer ones are cut in the middle.
const MAX_VALUE_CHARS: usize = 40;

/// Most expectation rows printed in full; past it only the failed rows are.
const MAX_EXPECT_ROWS: usize = 30;

/// The headline columns of a cell line: (column, header, how its mean is shown).
const COLUMNS: [(&str, &str, Shown); 6] = [
    (SUCCESS_FRACTION.name, "success", Shown::Percent),
    (AMPLIFICATION.name, "amplif.", Shown::Fixed(3)),
    (SUCCESS_LATENCY_P99_MS.name, "p99 ms", Shown::Fixed(1)),
    (PEAK_INBOUND_RATIO.name, "peak in", Shown::Fixed(2)),
    (RECOVERY_TIME_S.name, "recovery s", Shown::Fixed(1)),
    (METASTABLE.name, "metastable", Shown::OfRuns),
];

/// How a cell's mean is written.
#[derive(Clone, Copy)]
enum Shown {
    /// A fraction as a percentage with two decimals.
    Percent,
    /// A number with this many decimals.
    Fixed(usize),
    /// A 0/1 flag's mean as the runs it holds in: `2/3`.
    OfRuns,
}

/// The summary of the sweep folder `dir`: the cell table, then the expectations'
/// rows (all of them up to [`MAX_EXPECT_ROWS`], else the failed ones) and a count.
pub(crate) fn sweep_summary(dir: &Path) -> Result<String, PlotError> {
    let (manifest, manifest_text) = data::read_manifest(&dir.join("manifest.toml"))?;
    let summary = CsvTable::read(&dir.join("summary.csv"))?;
    let agg_path = dir.join("aggregate.csv");
    let agg = if agg_path.exists() {
        Some(CsvTable::read(&agg_path)?)
    } else {
        None
    };
    let sweep = Sweep::read(&manifest.run.params, &summary, agg.as_ref())?;
    let mut out = cell_table(&sweep);
    let folder = Folder {
        dir: dir.to_path_buf(),
        manifest,
        manifest_text,
        summary,
        series: Vec::new(),
        herd: Vec::new(),
        sweep: None,
        graph: None,
        services: Vec::new(),
        traces: None,
        trace_outages: None,
        left_out: Vec::new(),
        too_many_cells: 0,
    };
    let e = super::expect::evaluate(&folder);
    if let Some(err) = &e.error {
        let _ = writeln!(out, "expectations: not evaluated ({err})");
    } else if !e.rows.is_empty() {
        let passed = e.rows.iter().filter(|r| r.pass).count();
        if e.rows.len() <= MAX_EXPECT_ROWS {
            out.push_str(&expect_table(&e.rows));
        } else {
            let failed: Vec<ExpectRow> = e.rows.iter().filter(|r| !r.pass).cloned().collect();
            out.push_str(&expect_table(&failed));
        }
        let _ = writeln!(
            out,
            "expectations: {passed} of {} pass{}",
            e.rows.len(),
            if passed == e.rows.len() {
                ""
            } else {
                " (retrysim check exits 1 on these runs)"
            }
        );
    }
    Ok(out)
}

/// One line per cell: its index, swept values, runs and headline means.
fn cell_table(sweep: &Sweep) -> String {
    let mut header: Vec<String> = vec!["cell".into()];
    header.extend(short_keys(&sweep.keys));
    header.push("runs".into());
    let shown: Vec<&(&str, &str, Shown)> = COLUMNS
        .iter()
        .filter(|(c, _, _)| sweep.metrics.iter().any(|m| m == c))
        .collect();
    header.extend(shown.iter().map(|(_, h, _)| h.to_string()));
    let mut rows = vec![header];
    for (i, cell) in sweep.cells.iter().enumerate() {
        let mut row = vec![i.to_string()];
        row.extend(cell.values.iter().map(|v| cut(v)));
        row.push(cell.runs.to_string());
        for (c, _, how) in &shown {
            let empty = cell.empty.get(*c).copied().unwrap_or(0);
            row.push(match (cell.metrics.get(*c), how) {
                (None, _) => "-".into(),
                (Some(s), Shown::Percent) => format!("{:.2}%", 100.0 * s.mean),
                (Some(s), Shown::OfRuns) => {
                    format!("{}/{}", (s.mean * cell.runs as f64).round(), cell.runs)
                }
                (Some(s), Shown::Fixed(p)) => format!("{:.*}", *p, s.mean),
            });
            if empty > 0 {
                // `recovery_time_s` is empty in a run that never recovered.
                let last = row.last_mut().expect("pushed above");
                *last = format!("{last} ({empty} empty)");
            }
        }
        rows.push(row);
    }
    // Swept values read left-aligned, numbers right-aligned.
    aligned(&rows, |i| (1..=sweep.keys.len()).contains(&i))
}

/// The expectations' rows as `check` prints them, without its scenario column.
fn expect_table(rows: &[ExpectRow]) -> String {
    let mut lines = vec![["cell", "metric", "bound", "value", "result"]
        .map(String::from)
        .to_vec()];
    for r in rows {
        lines.push(vec![
            r.cell.clone(),
            r.metric.clone(),
            r.bound.clone(),
            r.value.clone(),
            if r.pass { "pass" } else { "FAIL" }.to_string(),
        ]);
    }
    aligned(&lines, |_| true)
}

/// Rows as aligned columns two spaces apart; `left(i)` says whether column `i` is
/// left-aligned (else right-aligned).
fn aligned(rows: &[Vec<String>], left: impl Fn(usize) -> bool) -> String {
    let cols = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..cols)
        .map(|i| {
            rows.iter()
                .map(|r| r.get(i).map_or(0, |f| f.chars().count()))
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for r in rows {
        let mut line = String::new();
        for (i, (f, w)) in r.iter().zip(&widths).enumerate() {
            if i > 0 {
                line.push_str("  ");
            }
            let pad = w - f.chars().count();
            if left(i) {
                line.push_str(f);
                line.extend(std::iter::repeat_n(' ', pad));
            } else {
                line.extend(std::iter::repeat_n(' ', pad));
                line.push_str(f);
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// A swept value of at most [`MAX_VALUE_CHARS`], cut in the middle (`kind = "exp…full"`).
fn cut(v: &str) -> String {
    let n = v.chars().count();
    if n <= MAX_VALUE_CHARS {
        return v.to_string();
    }
    let head = (MAX_VALUE_CHARS - 1) / 2;
    let tail = MAX_VALUE_CHARS - 1 - head;
    let s: String = v.chars().take(head).collect();
    let e: String = v.chars().skip(n - tail).collect();
    format!("{s}…{e}")
}

#[cfg(test)]
mod tests {
    use super::cut;

    #[test]
    fn a_long_swept_value_is_cut_in_the_middle_to_the_width() {
        assert_eq!(cut("none"), "none");
        let long = "{ kind = \"exponential\", base = \"100ms\", jitter = \"full\" }";
        let c = cut(long);
        assert_eq!(c.chars().count(), super::MAX_VALUE_CHARS);
        assert!(
            c.starts_with("{ kind = \"expo") && c.ends_with("\"full\" }"),
            "{c}"
        );
    }
}
