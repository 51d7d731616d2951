//! Baselines: a committed CSV of a scenario's summary, and the drift of a new run from it.
//!
//! # The file
//!
//! One row per grid cell (one row for a scenario without `[sweep]`), in plan order:
//! `cell`, the `param_` columns, then every numeric summary column, each the mean over
//! the cell's replications (empty when any replication's value is empty), written with
//! at most 10 significant digits. `retrysim check S --baseline F --write-baseline`
//! writes it (atomically), when `F` is absent or already a baseline ([`may_overwrite`]).
//!
//! # The comparison
//!
//! For each cell and each metric, with `old` from the file and `new` from this run
//! (rounded as the file would record it), the drift is
//!
//! ```text
//! drift = |new − old| / max(|old|, floor(metric))
//! ```
//!
//! and the value fails when `drift > tolerance` (with a relative slack of 1e-9, so a
//! drift of exactly the tolerance passes). Both empty passes; one empty and not the other
//! fails. The tolerance is `--tolerance` (default 5%) unless the scenario's
//! `[check.tolerance]` table names the metric:
//!
//! ```toml
//! [check.tolerance]
//! latency_p99_ms = "20%"   # or 0.2
//! duplicates = 0           # must not change at all
//! ```
//!
//! [`drift_floor`] keeps relative drift meaningful near zero: 1 for `_ms` and `_s`
//! columns (a millisecond, a second), 0.01 for fractions, ratios and flags, 10 for
//! counts and rates (each column's `Column::floor` in the catalog). Columns whose
//! `Column::compared` is false (`events`, `truncated`, `offered_rate`) are written to
//! the file but compared only when `[check.tolerance]` names them.
//!
//! A metric this run has and the file lacks is reported and passes (a newer retrysim may
//! add columns); a metric the file has and this run lacks fails (the run's layout
//! changed). A file whose cells are not this plan's cells (count, swept keys or values)
//! is bad input: it belongs to another scenario or grid.

use std::path::Path;

use crate::export::csv::{cell, record};
use crate::metrics::columns::{param_column, summary_column, CELL, PARAM_PREFIX};
use crate::metrics::format::{percent, shortest, signed_percent};
use crate::metrics::summary::Cell;
use crate::run::RunResult;
use crate::scenario::ScenarioError;
use crate::sweep::plan::{render_value, Plan};

use super::expect::{check_metric, metric_columns};
use super::{
    cell_labels, cell_runs, render_number, Bound, CheckError, CheckRow, GroupValue, RowData,
};

/// The default tolerance of `--tolerance`: 5%.
pub const DEFAULT_TOLERANCE: f64 = 0.05;

/// Whether `metric` is compared when `[check.tolerance]` does not name it: the
/// catalog's `Column::compared` (the engine's event count, the truncation flag and the
/// offered rate are not: bookkeeping, an error of its own, an input).
pub fn compared(metric: &str) -> bool {
    summary_column(metric).is_none_or(|c| c.compared)
}

/// The absolute floor under `|old|` in the drift of `metric`: its catalog
/// `Column::floor` (1 for `_ms` and `_s` columns, 0.01 for fractions, ratios and
/// flags, 10 for counts and rates and for a name the catalog does not know).
///
/// ```
/// use retrysim::check::baseline::drift_floor;
/// assert_eq!(drift_floor("latency_p99_ms"), 1.0);
/// assert_eq!(drift_floor("recovery_time_s"), 1.0);
/// assert_eq!(drift_floor("success_fraction"), 0.01);
/// assert_eq!(drift_floor("attempts_layer_1"), 0.01);
/// assert_eq!(drift_floor("duplicates"), 10.0);
/// ```
pub fn drift_floor(metric: &str) -> f64 {
    summary_column(metric).map_or(10.0, |c| c.floor)
}

/// Parses a tolerance: a percentage (`"5%"`) or a fraction (`0.05`, at most 1; write
/// `"150%"` for more).
///
/// ```
/// use retrysim::check::baseline::parse_tolerance;
/// assert_eq!(parse_tolerance("5%"), Ok(0.05));
/// assert_eq!(parse_tolerance("0.05"), Ok(0.05));
/// assert!(parse_tolerance("5").is_err());
/// assert!(parse_tolerance("-1%").is_err());
/// ```
pub fn parse_tolerance(text: &str) -> Result<f64, String> {
    let t = text.trim();
    let expected =
        || format!("expected a percentage such as 5% or a fraction such as 0.05 (found '{text}')");
    let value = match t.strip_suffix('%') {
        Some(p) => p.trim().parse::<f64>().map_err(|_| expected())? / 100.0,
        None => {
            let v = t.parse::<f64>().map_err(|_| expected())?;
            if v > 1.0 {
                return Err(format!(
                    "a fraction must be at most 1 (found '{text}'; write {text}% for a percentage)"
                ));
            }
            v
        }
    };
    if !value.is_finite() || value < 0.0 {
        return Err(format!(
            "must be 0 or more: a percentage such as 5% or a fraction from 0 to 1 such as 0.05 (found '{text}')"
        ));
    }
    Ok(value)
}

/// Renders a tolerance as a percentage (`5%`).
pub fn render_tolerance(t: f64) -> String {
    percent(t)
}

/// The tolerance of every metric: a default and the scenario's overrides.
#[derive(Debug, Clone, PartialEq)]
pub struct Tolerances {
    /// `--tolerance`.
    pub default: f64,
    /// `[check.tolerance]`, in file order.
    pub per_metric: Vec<(String, f64)>,
}

impl Tolerances {
    /// The tolerance of `metric`, and whether it is compared at all.
    pub fn of(&self, metric: &str) -> Option<f64> {
        match self.per_metric.iter().find(|(m, _)| m == metric) {
            Some((_, t)) => Some(*t),
            None if !compared(metric) => None,
            None => Some(self.default),
        }
    }
}

/// Validates the scenario's `[check.tolerance]` (each key a metric of the plan, each
/// value a tolerance) and combines it with the default.
pub fn tolerances(plan: &Plan, default: f64) -> Result<Tolerances, ScenarioError> {
    let mut per_metric = Vec::new();
    let table = plan
        .base
        .file
        .check
        .as_ref()
        .and_then(|c| c.tolerance.as_ref());
    for (k, v) in table.into_iter().flatten() {
        let field = format!("check.tolerance.{k}");
        check_metric(plan, &field, k)?;
        let parsed = match v {
            toml::Value::String(s) => parse_tolerance(s),
            toml::Value::Float(f) => parse_tolerance(&f.to_string()),
            toml::Value::Integer(i) => parse_tolerance(&i.to_string()),
            other => Err(format!(
                "expected a percentage such as \"5%\" or a fraction such as 0.05 (found {other})"
            )),
        };
        let t = parsed.map_err(|message| ScenarioError::Field {
            path: plan.base.source.path.clone(),
            field,
            message,
        })?;
        per_metric.push((k.clone(), t));
    }
    Ok(Tolerances {
        default,
        per_metric,
    })
}

/// A cell's mean of `metric`, rounded as a baseline records it (so a run compared with
/// its own baseline drifts by exactly 0).
fn recorded_mean(runs: &[RunResult], metric: &str) -> Option<f64> {
    GroupValue::of(runs, metric)
        .mean
        .and_then(|m| Cell::float(m).render().parse::<f64>().ok())
}

/// The baseline of a finished plan (results in plan order), as CSV text.
pub fn render(plan: &Plan, results: &[RunResult]) -> String {
    let metrics = metric_columns(plan);
    let mut header = vec![CELL.to_string()];
    header.extend(plan.params().iter().map(|k| param_column(k)));
    header.extend(metrics.iter().map(|m| m.to_string()));
    let mut out = record(&header);
    for (cell, runs) in plan.cells.iter().zip(cell_runs(plan, results)) {
        let mut line = vec![cell.index.to_string()];
        line.extend(cell.values.iter().map(render_value));
        for m in &metrics {
            line.push(recorded_mean(runs, m).map_or(String::new(), shortest));
        }
        out.push_str(&record(&line));
    }
    out
}

/// A baseline file as read.
#[derive(Debug, Clone, PartialEq)]
pub struct Baseline {
    /// The file as given.
    pub path: String,
    /// The swept keys (`param_` columns without the prefix), in order.
    pub params: Vec<String>,
    /// The metric columns, in order.
    pub metrics: Vec<String>,
    /// Per cell: its swept values as text, and one value per metric column.
    pub rows: Vec<(Vec<String>, Vec<Option<f64>>)>,
}

impl Baseline {
    /// Parses baseline text (`path` names it in errors).
    pub fn parse(path: &str, text: &str) -> Result<Baseline, CheckError> {
        let bad = |message: String| CheckError::Baseline {
            path: path.to_string(),
            message,
        };
        let mut rdr = csv::ReaderBuilder::new()
            .has_headers(true)
            .from_reader(text.as_bytes());
        let header: Vec<String> = rdr
            .headers()
            .map_err(|e| bad(format!("not a CSV table: {e}")))?
            .iter()
            .map(str::to_string)
            .collect();
        if header.first().map(String::as_str) != Some(CELL) {
            return Err(bad(format!(
                "not a retrysim baseline: its first column must be 'cell' (found '{}')",
                header.first().cloned().unwrap_or_default()
            )));
        }
        let mut seen = std::collections::HashSet::with_capacity(header.len());
        for h in &header {
            if !seen.insert(h.as_str()) {
                return Err(bad(format!("column '{h}' appears twice")));
            }
        }
        let n_params = header[1..]
            .iter()
            .take_while(|h| h.starts_with(PARAM_PREFIX))
            .count();
        let params: Vec<String> = header[1..=n_params]
            .iter()
            .map(|h| h[PARAM_PREFIX.len()..].to_string())
            .collect();
        let metrics: Vec<String> = header[1 + n_params..].to_vec();
        if let Some(h) = metrics.iter().find(|h| h.starts_with(PARAM_PREFIX)) {
            return Err(bad(format!(
                "column '{h}' comes after the metrics: the param_ columns must follow 'cell'"
            )));
        }
        let mut rows = Vec::new();
        for (i, rec) in rdr.records().enumerate() {
            let rec = rec.map_err(|e| bad(format!("not a CSV table: {e}")))?;
            let line = i + 2;
            let cell = rec.get(0).unwrap_or("");
            if cell != i.to_string() {
                return Err(bad(format!(
                    "line {line}: cell must be {i}, the row's position (found '{cell}')"
                )));
            }
            let values: Vec<String> = (1..=n_params)
                .map(|j| rec.get(j).unwrap_or("").to_string())
                .collect();
            let mut nums = Vec::with_capacity(metrics.len());
            for (j, m) in metrics.iter().enumerate() {
                let f = rec.get(1 + n_params + j).unwrap_or("");
                nums.push(match f {
                    "" => None,
                    s => Some(s.parse::<f64>().ok().filter(|x| x.is_finite()).ok_or_else(
                        || bad(format!("line {line}, column '{m}': '{s}' is not a number")),
                    )?),
                });
            }
            rows.push((values, nums));
        }
        Ok(Baseline {
            path: path.to_string(),
            params,
            metrics,
            rows,
        })
    }

    /// Checks that the file's cells are `plan`'s cells (count, swept keys, values).
    pub fn check_shape(&self, plan: &Plan) -> Result<(), CheckError> {
        let scenario = &plan.base.source.path;
        let bad = |message: String| {
            CheckError::Baseline {
            path: self.path.clone(),
            message: format!(
                "{message}: it is not a baseline of this scenario's grid (refresh it with --write-baseline)"
            ),
        }
        };
        let params = plan.params();
        if self.params != params {
            let file = if self.params.is_empty() {
                "the file has no swept keys".to_string()
            } else {
                format!("the file's cells sweep {}", self.params.join(", "))
            };
            let here = if params.is_empty() {
                "has no [sweep]".to_string()
            } else {
                format!("sweeps {}", params.join(", "))
            };
            return Err(bad(format!("{file} but scenario '{scenario}' {here}")));
        }
        if self.rows.len() != plan.cells.len() {
            return Err(bad(format!(
                "the file has {} cell{} but scenario '{scenario}' has {}",
                self.rows.len(),
                if self.rows.len() == 1 { "" } else { "s" },
                plan.cells.len()
            )));
        }
        for (c, (values, _)) in plan.cells.iter().zip(&self.rows) {
            let here: Vec<String> = c.values.iter().map(render_value).collect();
            // As written (`'=x`, see export::csv::cell) or raw, as before the guard.
            let same = here.len() == values.len()
                && here.iter().zip(values).all(|(h, v)| cell(h) == cell(v));
            if !same {
                return Err(bad(format!(
                    "cell {} is ({}) in the file but ({}) in scenario '{scenario}'",
                    c.index,
                    values.join(", "),
                    here.join(", ")
                )));
            }
        }
        Ok(())
    }
}

/// Reads a baseline file.
pub fn read(path: &Path) -> Result<Baseline, CheckError> {
    let shown = path.display().to_string();
    let text = crate::scenario::read_text(path).map_err(|source| match source.kind() {
        std::io::ErrorKind::NotFound => CheckError::Missing {
            path: shown.clone(),
        },
        _ => CheckError::Read {
            path: shown.clone(),
            source,
        },
    })?;
    Baseline::parse(&shown, &text)
}

/// Whether `--write-baseline` may write `path`: it is absent, or it already reads as a
/// baseline (of any grid: refreshing one is the point), or `force` is set. Anything
/// else (a scenario, some other CSV, a file that cannot be read) is refused, so a
/// mistyped `--baseline` cannot replace a file retrysim did not write.
pub fn may_overwrite(path: &Path, force: bool) -> Result<(), CheckError> {
    if force {
        return Ok(());
    }
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        _ => {}
    }
    let reason = match read(path) {
        Ok(_) | Err(CheckError::Missing { .. }) => return Ok(()),
        Err(CheckError::Baseline { message, .. }) => message,
        Err(CheckError::Read { source, .. }) => format!("cannot read it: {source}"),
        Err(e) => e.to_string(),
    };
    Err(CheckError::NotABaseline {
        path: path.display().to_string(),
        reason,
    })
}

/// Compares the results of `plan` (in plan order) with a baseline: one row per cell and
/// compared metric, then one per metric the file has and the run lacks.
pub fn compare(
    plan: &Plan,
    base: &Baseline,
    tol: &Tolerances,
    results: &[RunResult],
) -> Result<Vec<CheckRow>, CheckError> {
    base.check_shape(plan)?;
    let labels = cell_labels(plan);
    let metrics = metric_columns(plan);
    let scenario = plan.base.source.path.clone();
    let in_base: std::collections::HashMap<&str, usize> = base
        .metrics
        .iter()
        .enumerate()
        .map(|(j, m)| (m.as_str(), j))
        .collect();
    let mut rows = Vec::new();
    for ((c, runs), (_, old_row)) in plan
        .cells
        .iter()
        .zip(cell_runs(plan, results))
        .zip(&base.rows)
    {
        for m in &metrics {
            let Some(t) = tol.of(m) else { continue };
            let new = recorded_mean(runs, m);
            let group = GroupValue {
                mean: new,
                ..GroupValue::of(runs, m)
            };
            let mut row = CheckRow {
                scenario: scenario.clone(),
                cell: labels[c.index].clone(),
                metric: m.to_string(),
                bound: String::new(),
                value: render_number(new),
                pass: true,
                data: RowData::of_cell(
                    plan,
                    c.index,
                    &labels[c.index],
                    group,
                    Bound::NotInBaseline { tolerance: t },
                ),
            };
            match in_base.get(m).copied() {
                None => row.bound = "(not in baseline)".to_string(),
                Some(j) => {
                    let old = old_row[j];
                    row.bound = format!("within {} of {}", render_tolerance(t), render_number(old));
                    let mut drift = None;
                    match (old, new) {
                        (Some(o), Some(n)) => {
                            let rel = (n - o) / o.abs().max(drift_floor(m));
                            row.pass = rel.abs() <= t * (1.0 + 1e-9);
                            row.value = format!("{} ({})", shortest(n), signed_percent(rel));
                            drift = Some(rel);
                        }
                        (None, None) => {}
                        _ => row.pass = false,
                    }
                    row.data.bound = Bound::Baseline {
                        baseline: old,
                        tolerance: t,
                        drift,
                    };
                }
            }
            rows.push(row);
        }
    }
    let here: std::collections::HashSet<&str> = metrics.iter().copied().collect();
    for m in &base.metrics {
        if !here.contains(m.as_str()) {
            rows.push(CheckRow {
                scenario: scenario.clone(),
                cell: "-".to_string(),
                metric: m.clone(),
                bound: "present (as in baseline)".to_string(),
                value: "(absent)".to_string(),
                pass: false,
                data: RowData {
                    cell: None,
                    label: "-".to_string(),
                    params: Vec::new(),
                    run: None,
                    value: GroupValue {
                        mean: None,
                        empty: 0,
                        runs: 0,
                    },
                    bound: Bound::Absent,
                },
            });
        }
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 300,000 columns, the last a twin of the first: the check compared each column
    /// with every one before it (12 s for 100,000 columns, so about 100 s here); a set
    /// takes milliseconds. The bound is far from both.
    #[test]
    fn a_twin_among_300000_columns_is_found_in_linear_time() {
        let n = 300_000;
        let mut header = vec!["cell".to_string()];
        header.extend((0..n).map(|i| format!("m{i}")));
        header.push("m0".into());
        let text = header.join(",") + "\n";
        let start = std::time::Instant::now();
        let e = Baseline::parse("b.csv", &text).unwrap_err();
        let took = start.elapsed();
        assert_eq!(e.to_string(), "baseline 'b.csv': column 'm0' appears twice");
        assert!(took < std::time::Duration::from_secs(10), "{took:?}");
    }

    #[test]
    fn tolerances_parse_as_percentages_or_fractions() {
        assert_eq!(parse_tolerance("5%"), Ok(0.05));
        assert_eq!(parse_tolerance(" 20 % "), Ok(0.2));
        assert_eq!(parse_tolerance("150%"), Ok(1.5));
        assert_eq!(parse_tolerance("0"), Ok(0.0));
        assert_eq!(parse_tolerance("1"), Ok(1.0));
        for bad in ["", "%", "abc", "5", "-0.1", "nan%", "inf%", "1e400%"] {
            assert!(parse_tolerance(bad).is_err(), "{bad}");
        }
        assert!(parse_tolerance("5").unwrap_err().contains("write 5%"));
        assert_eq!(render_tolerance(0.05), "5%");
        assert_eq!(render_tolerance(0.2), "20%");
    }

    #[test]
    fn overrides_win_and_extras_are_skipped_unless_named() {
        let t = Tolerances {
            default: 0.05,
            per_metric: vec![("latency_p99_ms".into(), 0.2), ("events".into(), 0.5)],
        };
        assert_eq!(t.of("latency_p99_ms"), Some(0.2));
        assert_eq!(t.of("amplification"), Some(0.05));
        assert_eq!(t.of("events"), Some(0.5));
        assert_eq!(t.of("truncated"), None);
        assert_eq!(t.of("offered_rate"), None);
    }

    fn small_plan() -> (Plan, Vec<RunResult>) {
        let text = "duration = \"2s\"\nreplications = 2\n[dependency]\nservers = 2\nservice_time = \"10ms\"\n[[fleets]]\nname = \"a\"\narrival = { kind = \"poisson\", rate = 50 }\n[[fleets.layers]]\nmax_attempts = 3\n[sweep]\n\"fleets.0.arrival.rate\" = [50, 100]\n";
        let src = crate::scenario::Source {
            path: "s.toml".into(),
            stem: "s".into(),
            text: text.into(),
        };
        let p = crate::sweep::plan(crate::scenario::load(src, &[]).unwrap()).unwrap();
        let results = crate::sweep::run_in_memory(&p);
        (p, results.unwrap())
    }

    fn row<'a>(rows: &'a [CheckRow], cell: &str, metric: &str) -> &'a CheckRow {
        rows.iter()
            .find(|r| r.cell == cell && r.metric == metric)
            .unwrap_or_else(|| panic!("no row {cell} {metric}"))
    }

    #[test]
    fn a_run_compared_with_its_own_baseline_drifts_by_nothing() {
        let (p, results) = small_plan();
        let text = render(&p, &results);
        let b = Baseline::parse("b.csv", &text).unwrap();
        assert_eq!(b.rows.len(), 2);
        assert_eq!(b.params, ["fleets.0.arrival.rate"]);
        let t = tolerances(&p, 0.0).unwrap();
        let rows = compare(&p, &b, &t, &results).unwrap();
        assert!(rows.iter().all(|r| r.pass), "{rows:?}");
        assert!(!rows.iter().any(|r| !compared(&r.metric)));
        assert_eq!(
            row(&rows, "rate=100", "logical").bound,
            format!("within 0% of {}", render_number(b.rows[1].1[0]))
        );
    }

    #[test]
    fn drift_beyond_the_tolerance_fails_and_within_it_passes() {
        let (p, results) = small_plan();
        let mut b = Baseline::parse("b.csv", &render(&p, &results)).unwrap();
        let j = |m: &str| b.metrics.iter().position(|x| x == m).unwrap();
        let (lat, logical, dup) = (j("latency_mean_ms"), j("logical"), j("duplicates"));
        let old = b.rows[0].1[lat].unwrap();
        // new = old / 1.04 is 3.8% below old; new = old / 1.06 is 5.7% below.
        b.rows[0].1[lat] = Some(old * 1.04);
        b.rows[1].1[logical] = b.rows[1].1[logical].map(|x| x * 1.06);
        b.rows[1].1[dup] = Some(0.4); // 0 now: below the floor of 10, a drift of 4%
        let t = tolerances(&p, 0.05).unwrap();
        let rows = compare(&p, &b, &t, &results).unwrap();
        assert!(row(&rows, "rate=50", "latency_mean_ms").pass);
        let r = row(&rows, "rate=100", "logical");
        assert!(!r.pass, "{r:?}");
        assert!(r.value.ends_with("(-5.66%)"), "{r:?}");
        assert!(row(&rows, "rate=100", "duplicates").pass);
        // An empty old value against a present new one fails.
        b.rows[0].1[logical] = None;
        let rows = compare(&p, &b, &t, &results).unwrap();
        assert!(!row(&rows, "rate=50", "logical").pass);
    }

    #[test]
    fn a_column_new_to_the_run_passes_and_one_it_lost_fails() {
        let (p, results) = small_plan();
        let mut b = Baseline::parse("b.csv", &render(&p, &results)).unwrap();
        let j = b.metrics.iter().position(|x| x == "herd_peak").unwrap();
        b.metrics[j] = "attempts_layer_7".into();
        let rows = compare(&p, &b, &tolerances(&p, 0.05).unwrap(), &results).unwrap();
        let r = row(&rows, "rate=50", "herd_peak");
        assert!(r.pass && r.bound == "(not in baseline)", "{r:?}");
        let r = row(&rows, "-", "attempts_layer_7");
        assert!(!r.pass, "{r:?}");
        assert_eq!(
            super::super::render_failures(std::slice::from_ref(r)),
            "FAIL s.toml - attempts_layer_7: (absent) not present (as in baseline)\n"
        );
    }

    #[test]
    fn a_baseline_parses_and_refuses_what_is_not_one() {
        let b = Baseline::parse(
            "b.csv",
            "cell,param_k,amplification,recovery_time_s\n0,1,1.5,\n1,2,2,3.25\n",
        )
        .unwrap();
        assert_eq!(b.params, ["k"]);
        assert_eq!(b.metrics, ["amplification", "recovery_time_s"]);
        assert_eq!(
            b.rows[1],
            (vec!["2".to_string()], vec![Some(2.0), Some(3.25)])
        );
        assert_eq!(b.rows[0].1[1], None);
        for (text, needle) in [
            ("run,x\n0,1\n", "first column must be 'cell' (found 'run')"),
            ("cell,x\n1,1\n", "line 2: cell must be 0"),
            (
                "cell,x\n0,abc\n",
                "line 2, column 'x': 'abc' is not a number",
            ),
            ("cell,x,x\n0,1,1\n", "column 'x' appears twice"),
            ("cell,x\n0,1,2\n", "not a CSV table"),
            ("cell,x,param_k\n0,1,2\n", "must follow 'cell'"),
        ] {
            let e = Baseline::parse("b.csv", text).unwrap_err().to_string();
            assert!(e.starts_with("baseline 'b.csv': "), "{e}");
            assert!(e.contains(needle), "{text}: {e}");
        }
    }
}
