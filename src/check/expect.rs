//! `[[expect]]`: bounds on summary columns, resolved against a sweep plan and evaluated
//! on its results.
//!
//! ```toml
//! [[expect]]
//! metric = "amplification"          # a numeric summary column of this scenario
//! max = 1.5                         # and/or min; both: the value must be in [min, max]
//! where = { "fleets.0.layers.0.max_attempts" = 3 }   # optional: which grid cells
//! per = "cell"                      # "cell" (default) or "run"
//! ```
//!
//! - `per = "cell"`: the bound applies to each selected cell's value, the mean over its
//!   replications (see [`super::GroupValue`]); for a scenario without `[sweep]` that is
//!   the run, or the mean of its replications.
//! - `per = "run"`: the bound applies to every run of each selected cell.
//! - `where` keys are swept keys, as written in `[sweep]` (`"fleets.0.arrival.rate"`) or
//!   as their column (`"param_fleets.0.arrival.rate"`); an unquoted dotted key (which TOML
//!   reads as nested tables) works too. A value selects the cells whose `param_` column
//!   renders the same ([`render_value`]), so `3` and `3.0` both select `3`.
//! - An empty value fails every bound.
//!
//! Everything is checked before anything runs; each error names the field:
//! `expect[i].metric`, `expect[i].where.<key>`, `expect[i].min`, `expect[i].per`.

use crate::metrics::columns::{is_identity, PARAM_PREFIX};
use crate::metrics::format::shortest as format_float;
use crate::run::RunResult;
use crate::scenario::ScenarioError;
use crate::sweep::aggregate::is_metric;
use crate::sweep::plan::{render_value, Plan};

use super::{cell_labels, cell_runs, render_number, Bound, CheckRow, GroupValue, RowData};

pub(crate) use crate::scenario::file::Per;

/// A validated `[[expect]]` entry.
#[derive(Debug, Clone, PartialEq)]
pub struct Expectation {
    /// Its index in the file's `[[expect]]` list.
    pub index: usize,
    /// The summary column.
    pub metric: String,
    /// Lower bound.
    pub min: Option<f64>,
    /// Upper bound.
    pub max: Option<f64>,
    /// The grid cells it applies to (indices into `plan.cells`), in order.
    pub cells: Vec<usize>,
    /// Per cell or per run.
    pub per: Per,
}

impl Expectation {
    /// The bound as text: `<= 1.5`, `>= 0.9`, `in [0.9, 1]` ([`bound_text`]).
    pub fn bound(&self) -> String {
        bound_text(self.min, self.max)
    }

    /// Whether `value` meets the bound; an empty value never does ([`within`]).
    pub fn holds(&self, value: Option<f64>) -> bool {
        within(self.min, self.max, value)
    }
}

/// A bound `[min, max]` as text: `<= 1.5`, `>= 0.9`, `in [0.9, 1]`, `(any)`; the
/// report's expectations print it too.
pub fn bound_text(min: Option<f64>, max: Option<f64>) -> String {
    match (min, max) {
        (Some(lo), Some(hi)) => format!("in [{}, {}]", format_float(lo), format_float(hi)),
        (Some(lo), None) => format!(">= {}", format_float(lo)),
        (None, Some(hi)) => format!("<= {}", format_float(hi)),
        (None, None) => "(any)".to_string(),
    }
}

/// Whether `value` lies in `[min, max]` (a missing end is no bound); an empty value
/// never does.
pub fn within(min: Option<f64>, max: Option<f64>, value: Option<f64>) -> bool {
    match value {
        None => false,
        Some(x) => min.is_none_or(|lo| x >= lo) && max.is_none_or(|hi| x <= hi),
    }
}

fn field_err(plan: &Plan, field: String, message: String) -> ScenarioError {
    ScenarioError::Field {
        path: plan.base.source.path.clone(),
        field,
        message,
    }
}

/// The numeric summary columns of a plan: what expectations and baselines may name.
pub(crate) fn metric_columns(plan: &Plan) -> Vec<&str> {
    plan.columns
        .iter()
        .map(String::as_str)
        .filter(|c| is_metric(c))
        .collect()
}

/// Checks that `name` is a numeric summary column of `plan`; the error names `field`.
pub(crate) fn check_metric(plan: &Plan, field: &str, name: &str) -> Result<(), ScenarioError> {
    let metrics = metric_columns(plan);
    if metrics.contains(&name) {
        return Ok(());
    }
    let message = if name.starts_with(PARAM_PREFIX) {
        format!("'{name}' is a swept parameter, not a metric (select cells with `where`)")
    } else if is_identity(name) {
        format!("'{name}' identifies a run, not a metric")
    } else {
        format!("no summary column '{name}' (known: {})", metrics.join(", "))
    };
    Err(field_err(plan, field.to_string(), message))
}

/// Flattens a `where` table into `(axis index, dotted key as written, value)`; nested
/// tables are followed until their dotted path names a swept key.
fn where_entries(
    plan: &Plan,
    i: usize,
    table: &toml::Table,
    prefix: &str,
    out: &mut Vec<(usize, String, toml::Value)>,
) -> Result<(), ScenarioError> {
    for (k, v) in table {
        let key = format!("{prefix}{k}");
        let axis = plan
            .axes
            .iter()
            .position(|a| a.key == key || format!("{PARAM_PREFIX}{}", a.key) == key);
        match (axis, v) {
            (Some(a), _) => {
                if let Some((_, other, _)) = out.iter().find(|(b, _, _)| *b == a) {
                    return Err(field_err(
                        plan,
                        format!("expect[{i}].where.{key}"),
                        format!("selects the same swept key as `where.{other}`"),
                    ));
                }
                out.push((a, key, v.clone()));
            }
            (None, toml::Value::Table(t)) => where_entries(plan, i, t, &format!("{key}."), out)?,
            (None, _) => {
                let message = if plan.axes.is_empty() {
                    "the scenario has no [sweep]: `where` selects grid cells by swept keys"
                        .to_string()
                } else {
                    format!(
                        "'{key}' is not a swept key (swept: {})",
                        plan.params().join(", ")
                    )
                };
                return Err(field_err(plan, format!("expect[{i}].where.{key}"), message));
            }
        }
    }
    Ok(())
}

/// Validates the plan's `[[expect]]` entries against its columns and grid.
pub fn resolve(plan: &Plan) -> Result<Vec<Expectation>, ScenarioError> {
    let mut out = Vec::new();
    for (i, e) in plan.base.file.expect.iter().enumerate() {
        check_metric(plan, &format!("expect[{i}].metric"), &e.metric)?;
        if let (Some(lo), Some(hi)) = (e.min, e.max) {
            if lo > hi {
                return Err(field_err(
                    plan,
                    format!("expect[{i}].min"),
                    format!(
                        "must be at most max (found min {} > max {})",
                        format_float(lo),
                        format_float(hi)
                    ),
                ));
            }
        }
        let per = e.per.unwrap_or(Per::Cell);
        let mut entries = Vec::new();
        if let Some(w) = &e.where_ {
            where_entries(plan, i, w, "", &mut entries)?;
        }
        // Per swept key, the indices of the values selected: those equal to the
        // `where` value, or, for a string, the one it labels.
        let mut wanted: Vec<(usize, Vec<usize>)> = Vec::new();
        for (a, key, v) in &entries {
            let axis = &plan.axes[*a];
            let text = canonical(v);
            let mut picks: Vec<usize> = (0..axis.values.len())
                .filter(|&j| canonical(&axis.values[j]) == text)
                .collect();
            if let (true, Some(s)) = (picks.is_empty(), v.as_str()) {
                picks.extend(axis.labels.iter().position(|l| l == s));
            }
            if picks.is_empty() {
                let swept: Vec<String> = axis.values.iter().map(render_value).collect();
                let labelled = axis
                    .values
                    .iter()
                    .zip(&axis.labels)
                    .any(|(x, l)| &render_value(x) != l);
                let labels = if labelled {
                    format!("; labels: {}", axis.labels.join(", "))
                } else {
                    String::new()
                };
                return Err(field_err(
                    plan,
                    format!("expect[{i}].where.{key}"),
                    format!(
                        "no cell has {} = {text} (swept values: {}{labels})",
                        axis.key,
                        swept.join(", ")
                    ),
                ));
            }
            wanted.push((*a, picks));
        }
        let cells = plan
            .cells
            .iter()
            .filter(|c| {
                wanted
                    .iter()
                    .all(|(a, picks)| c.picks.get(*a).is_some_and(|p| picks.contains(p)))
            })
            .map(|c| c.index)
            .collect();
        out.push(Expectation {
            index: i,
            metric: e.metric.clone(),
            min: e.min,
            max: e.max,
            cells,
            per,
        });
    }
    Ok(out)
}

/// A run's summary values, wherever they are held: a run just made ([`RunResult`]) or
/// a row of a result folder's `summary.csv` (the report's expectations).
pub trait RunValues {
    /// The run's index.
    fn run(&self) -> u64;
    /// The run's value of `metric`, `None` when empty or not finite.
    fn value(&self, metric: &str) -> Option<f64>;
}

impl RunValues for RunResult {
    fn run(&self) -> u64 {
        self.run
    }

    fn value(&self, metric: &str) -> Option<f64> {
        self.summary
            .get(metric)
            .and_then(|c| c.as_f64())
            .filter(|x| x.is_finite())
    }
}

/// Evaluates expectations on the results of `plan` (in plan order): one row per selected
/// cell, or per run with `per = "run"`, in the order of the expectations.
pub fn check_plan(
    plan: &Plan,
    expectations: &[Expectation],
    results: &[RunResult],
) -> Vec<CheckRow> {
    let groups: Vec<Vec<&RunResult>> = cell_runs(plan, results)
        .into_iter()
        .map(|g| g.iter().collect())
        .collect();
    check_groups(plan, expectations, &groups)
}

/// Evaluates expectations on the runs of each cell of `plan` (`groups[c]`: cell `c`'s
/// runs; a cell without runs, as in a sweep shard, gives no row): [`check_plan`]'s
/// rows, from runs held anywhere.
pub fn check_groups<R: RunValues>(
    plan: &Plan,
    expectations: &[Expectation],
    groups: &[Vec<&R>],
) -> Vec<CheckRow> {
    let labels = cell_labels(plan);
    let scenario = plan.base.source.path.clone();
    let mut rows = Vec::new();
    for e in expectations {
        for &c in &e.cells {
            let Some(runs) = groups.get(c).filter(|g| !g.is_empty()) else {
                continue;
            };
            let bound = Bound::Expect {
                index: e.index,
                min: e.min,
                max: e.max,
            };
            let row = |cell: String, value: GroupValue, run: Option<u64>| CheckRow {
                scenario: scenario.clone(),
                cell,
                metric: e.metric.clone(),
                bound: e.bound(),
                value: match run {
                    None => value.render(),
                    Some(_) => render_number(value.mean),
                },
                pass: e.holds(value.mean),
                data: RowData {
                    run,
                    ..RowData::of_cell(plan, c, &labels[c], value, bound)
                },
            };
            match e.per {
                Per::Cell => {
                    let values: Vec<Option<f64>> =
                        runs.iter().map(|r| r.value(&e.metric)).collect();
                    let g = GroupValue::of_values(&values);
                    rows.push(row(labels[c].clone(), g, None));
                }
                Per::Run => {
                    for r in runs.iter() {
                        let v = r.value(&e.metric);
                        let cell = if plan.axes.is_empty() {
                            format!("run {}", r.run())
                        } else {
                            format!("run {} ({})", r.run(), labels[c])
                        };
                        rows.push(row(cell, GroupValue::single(v), Some(r.run())));
                    }
                }
            }
        }
    }
    rows
}

/// A value rendered as a `param_` column would show it, with the keys of every table
/// sorted, so a `where` value matches however its table's keys are ordered.
fn canonical(v: &toml::Value) -> String {
    fn sorted(v: &toml::Value) -> toml::Value {
        match v {
            toml::Value::Table(t) => {
                let mut keys: Vec<&String> = t.keys().collect();
                keys.sort();
                toml::Value::Table(
                    keys.into_iter()
                        .map(|k| (k.clone(), sorted(&t[k])))
                        .collect(),
                )
            }
            toml::Value::Array(a) => toml::Value::Array(a.iter().map(sorted).collect()),
            other => other.clone(),
        }
    }
    render_value(&sorted(v))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::{load, Source};
    use crate::sweep::plan::plan;

    fn plan_of(expect: &str, sweep: &str) -> Result<Vec<Expectation>, String> {
        let text = format!(
            "duration = \"1s\"\n[dependency]\nservers = 2\nservice_time = \"10ms\"\n[[fleets]]\nname = \"a\"\narrival = {{ kind = \"poisson\", rate = 10 }}\n[[fleets.layers]]\nmax_attempts = 3\n{expect}\n{sweep}\n"
        );
        let src = Source {
            path: "s.toml".into(),
            stem: "s".into(),
            text,
        };
        let p = plan(load(src, &[]).map_err(|e| e.to_string())?).map_err(|e| e.to_string())?;
        resolve(&p).map_err(|e| e.to_string())
    }

    const SWEEP: &str = "[sweep]\n\"fleets.0.layers.0.max_attempts\" = [1, 2, 3]\n\"fleets.0.arrival.rate\" = [10.0, 20]";

    #[test]
    fn a_table_value_in_where_matches_whatever_its_key_order() {
        let sweep = "[sweep]\n\"fleets.0.layers.0.backoff\" = [{ kind = \"none\" }, { kind = \"fixed\", delay = \"1s\" }]";
        let e = plan_of(
            "[[expect]]\nmetric = \"amplification\"\nmax = 2\nwhere = { \"fleets.0.layers.0.backoff\" = { delay = \"1s\", kind = \"fixed\" } }",
            sweep,
        )
        .unwrap();
        assert_eq!(e[0].cells, vec![1]);
    }

    #[test]
    fn where_selects_cells_by_key_column_name_or_nested_tables() {
        for w in [
            "where = { \"fleets.0.layers.0.max_attempts\" = 2 }",
            "where = { \"param_fleets.0.layers.0.max_attempts\" = 2 }",
            "where = { fleets.0.layers.0.max_attempts = 2.0 }",
        ] {
            let e = plan_of(
                &format!("[[expect]]\nmetric = \"amplification\"\nmax = 2\n{w}"),
                SWEEP,
            )
            .unwrap();
            assert_eq!(e[0].cells, vec![2, 3], "{w}");
        }
        let e = plan_of(
            "[[expect]]\nmetric = \"amplification\"\nmax = 2\nwhere = { \"fleets.0.arrival.rate\" = 10, \"fleets.0.layers.0.max_attempts\" = 3 }",
            SWEEP,
        )
        .unwrap();
        assert_eq!(e[0].cells, vec![4]);
        let e = plan_of(
            "[[expect]]\nmetric = \"amplification\"\nmin = 1\nper = \"run\"",
            SWEEP,
        )
        .unwrap();
        assert_eq!(e[0].cells, (0..6).collect::<Vec<_>>());
        assert_eq!(e[0].per, Per::Run);
    }

    #[test]
    fn bad_expectations_name_the_field() {
        for (expect, sweep, needle) in [
            ("metric = \"latency_p95_ms\"\nmax = 1", "", "expect[0].metric: no summary column 'latency_p95_ms' (known: logical,"),
            ("metric = \"seed\"\nmax = 1", "", "expect[0].metric: 'seed' identifies a run"),
            ("metric = \"param_fleets.0.arrival.rate\"\nmax = 1", SWEEP, "expect[0].metric: 'param_fleets.0.arrival.rate' is a swept parameter"),
            ("metric = \"amplification\"\nmin = 2\nmax = 1", "", "expect[0].min: must be at most max (found min 2 > max 1)"),
            ("metric = \"amplification\"\nmax = 1\nper = \"replication\"", "", "expect[0].per: unknown variant `replication`, expected `cell` or `run`"),
            ("metric = \"amplification\"\nmax = 1\nwhere = { rate = 1 }", "", "expect[0].where.rate: the scenario has no [sweep]"),
            ("metric = \"amplification\"\nmax = 1\nwhere = { rate = 1 }", SWEEP, "expect[0].where.rate: 'rate' is not a swept key (swept: fleets.0.layers.0.max_attempts, fleets.0.arrival.rate)"),
            ("metric = \"amplification\"\nmax = 1\nwhere = { \"fleets.0.arrival.rate\" = 15 }", SWEEP, "expect[0].where.fleets.0.arrival.rate: no cell has fleets.0.arrival.rate = 15 (swept values: 10, 20)"),
            ("metric = \"amplification\"\nmax = 1\nwhere = { \"fleets.0.arrival.rate\" = 10, \"param_fleets.0.arrival.rate\" = 10 }", SWEEP, "selects the same swept key"),
        ] {
            let e = plan_of(&format!("[[expect]]\n{expect}"), sweep).unwrap_err();
            assert!(e.contains(needle), "{expect}: {e}");
            assert!(e.starts_with("scenario 's.toml': "), "{e}");
        }
    }

    #[test]
    fn bounds_render_and_empty_values_fail_them() {
        let e = |min, max| Expectation {
            index: 0,
            metric: "m".into(),
            min,
            max,
            cells: vec![0],
            per: Per::Cell,
        };
        assert_eq!(e(None, Some(1.5)).bound(), "<= 1.5");
        assert_eq!(e(Some(0.9), None).bound(), ">= 0.9");
        assert_eq!(e(Some(0.9), Some(1.0)).bound(), "in [0.9, 1]");
        assert!(e(None, Some(1.5)).holds(Some(1.5)));
        assert!(!e(None, Some(1.5)).holds(Some(1.6)));
        assert!(!e(Some(0.9), Some(1.0)).holds(Some(0.8)));
        assert!(!e(None, Some(1.5)).holds(None));
        assert!(!e(Some(0.0), None).holds(None));
    }
}
