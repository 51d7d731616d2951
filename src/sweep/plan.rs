//! The sweep plan: the Cartesian product of the `[sweep]` keys, in file order (the first
//! key varies slowest), times the replications.
//!
//! Run `r` of the plan is replication `r % R` of cell `r / R`. Its seed depends on the
//! replication only ([`crate::run::replication_seed`]), so the same replication of two
//! cells sees the same arrivals. Every cell is validated before anything runs.

use crate::metrics::summary::{format_float, Layout};
use crate::scenario::guard::bytes_text;
use crate::scenario::{from_table, overrides, Loaded, ScenarioError, Source};

/// The `[sweep]` sub-table that labels the values of swept keys (`[sweep.labels]`).
pub(crate) const LABELS: &str = "labels";

/// Most runs a plan may hold.
pub(crate) const MAX_RUNS: u64 = 1_000_000;
/// Most values a single `{ from, to, step }` range may give.
pub(crate) const MAX_RANGE_VALUES: usize = 100_000;
/// Memory a plan may take: every cell holds its own validated copy of the scenario.
pub(crate) const MAX_PLAN_BYTES: u64 = 4 << 30;
/// Memory one cell of a plan takes besides its values: its index and vector.
pub(crate) const PLAN_BYTES_PER_CELL: u64 = 64;

/// One swept key and its values.
#[derive(Debug, Clone)]
pub struct Axis {
    /// Dotted path into the scenario.
    pub key: String,
    /// Values, in order.
    pub values: Vec<toml::Value>,
    /// What each value shows as in `param_` columns, legends, check tables and the
    /// report: its label, or the value as written ([`super::label`]).
    pub labels: Vec<String>,
}

/// One point of the grid: its values. Its scenario is built when it runs
/// ([`Plan::loaded`]), so a large grid does not hold a scenario per cell.
#[derive(Debug, Clone)]
pub struct Cell {
    /// Cell index.
    pub index: usize,
    /// One value per axis.
    pub values: Vec<toml::Value>,
    /// The index of each value in its axis's values (and labels).
    pub picks: Vec<usize>,
}

/// Everything a sweep will run.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The base scenario.
    pub base: Loaded,
    /// Swept keys.
    pub axes: Vec<Axis>,
    /// Grid cells, in order.
    pub cells: Vec<Cell>,
    /// Replications per cell.
    pub replications: u32,
    /// Summary columns shared by every run.
    pub columns: Vec<String>,
    /// Columns shared by every run, before the `param_` ones.
    pub layout: Layout,
    /// Where cells come from (the base's source without its text).
    source: Source,
}

/// One run of a plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunSpec {
    /// Global run index.
    pub run: u64,
    /// Cell index.
    pub cell: usize,
    /// Replication index.
    pub replication: u32,
}

/// Renders a swept value for a `param_` column: strings bare, numbers shortest.
pub(crate) fn render_value(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        toml::Value::Integer(i) => i.to_string(),
        toml::Value::Float(f) => format_float(*f),
        toml::Value::Boolean(b) => b.to_string(),
        other => other.to_string(),
    }
}

impl Plan {
    /// Number of runs.
    pub fn total_runs(&self) -> u64 {
        self.cells.len() as u64 * u64::from(self.replications)
    }

    /// The column dictionary of a folder of this plan's runs (`columns.csv`); with
    /// `aggregate.csv` and `aggregate_long.csv` when `aggregate`.
    pub fn dictionary(&self, aggregate: bool) -> Vec<crate::metrics::columns::Entry> {
        let keys: Vec<String> = self.axes.iter().map(|a| a.key.clone()).collect();
        crate::metrics::columns::folder_dictionary(crate::metrics::columns::Contents {
            layout: Some(&self.layout),
            params: Some(&keys),
            aggregate,
            // A run folder of a traced scenario holds them (a sweep traces nothing).
            traces: self.axes.is_empty() && self.base.scenario.trace.is_some(),
        })
    }

    /// Run `run` of the plan.
    pub fn spec(&self, run: u64) -> RunSpec {
        let r = u64::from(self.replications);
        RunSpec {
            run,
            cell: (run / r) as usize,
            replication: (run % r) as u32,
        }
    }

    /// The swept keys, in column order.
    pub fn params(&self) -> Vec<String> {
        self.axes.iter().map(|a| a.key.clone()).collect()
    }

    /// The labels of cell `cell`'s values, one per axis: its `param_` texts.
    pub fn labels(&self, cell: usize) -> Vec<&str> {
        self.axes
            .iter()
            .zip(&self.cells[cell].picks)
            .map(|(a, &i)| a.labels[i].as_str())
            .collect()
    }
}

fn sweep_err(l: &Loaded, key: &str, message: String) -> ScenarioError {
    ScenarioError::Sweep {
        path: l.source.path.clone(),
        key: key.to_string(),
        message,
    }
}

fn number(v: &toml::Value) -> Option<f64> {
    match v {
        toml::Value::Integer(i) => Some(*i as f64),
        toml::Value::Float(f) => Some(*f),
        _ => None,
    }
}

/// A labelled value, `{ label = "...", value = ... }`: its label and value.
fn labelled(v: &toml::Value) -> Option<(&toml::Value, &toml::Value)> {
    let t = v.as_table()?;
    let ok = t.len() == 2 && t.contains_key("label") && t.contains_key("value");
    ok.then(|| (&t["label"], &t["value"]))
}

/// Reads one `[sweep]` entry with its labels: the values, each with the label it
/// carries (`{ label = "...", value = ... }`) or the one `[sweep.labels]` gives it;
/// values without one get a derived label ([`super::label::derive`]).
fn axis(
    base: &Loaded,
    key: &str,
    v: &toml::Value,
    given: Option<&toml::Value>,
) -> Result<Axis, ScenarioError> {
    let mut own: Vec<Option<String>> = Vec::new();
    let values = match v {
        toml::Value::Array(a) if a.iter().any(|x| labelled(x).is_some()) => {
            let mut values = Vec::with_capacity(a.len());
            for (i, x) in a.iter().enumerate() {
                match labelled(x) {
                    Some((toml::Value::String(l), value)) => {
                        own.push(Some(l.clone()));
                        values.push(value.clone());
                    }
                    Some((l, _)) => {
                        return Err(sweep_err(
                            base,
                            key,
                            format!("value {i}: label must be a string (found {})", l.type_str()),
                        ))
                    }
                    None => {
                        own.push(None);
                        values.push(x.clone());
                    }
                }
            }
            values
        }
        other => axis_values(base, key, other)?,
    };
    own.resize(values.len(), None);
    if let Some(g) = given {
        let list = match g {
            toml::Value::Array(l) if l.len() == values.len() => l,
            _ => {
                return Err(sweep_err(
                    base,
                    &format!("labels.{key}"),
                    format!(
                        "must be a list of {} strings, one per value (found {})",
                        values.len(),
                        render_value(g)
                    ),
                ))
            }
        };
        for (i, l) in list.iter().enumerate() {
            let Some(text) = l.as_str() else {
                return Err(sweep_err(
                    base,
                    &format!("labels.{key}"),
                    format!("value {i}: must be a string (found {})", render_value(l)),
                ));
            };
            if own[i].is_some() {
                return Err(sweep_err(
                    base,
                    &format!("labels.{key}"),
                    format!("value {i} has its own label already"),
                ));
            }
            own[i] = Some(text.to_string());
        }
    }
    let derived = super::label::derive(key, &values);
    let labels: Vec<String> = own
        .into_iter()
        .zip(derived)
        .map(|(o, d)| o.unwrap_or(d))
        .collect();
    let mut first: std::collections::HashMap<&str, usize> =
        std::collections::HashMap::with_capacity(labels.len());
    for (i, l) in labels.iter().enumerate() {
        if l.trim().is_empty() || l.chars().any(char::is_control) {
            return Err(sweep_err(
                base,
                key,
                format!(
                    "value {i}: a label must be printable text, not empty (found '{}')",
                    crate::scenario::error::shown(l)
                ),
            ));
        }
        if let Some(&j) = first.get(l.as_str()) {
            return Err(sweep_err(
                base,
                key,
                format!("values {j} and {i} have the same label '{l}': labels must tell the values apart"),
            ));
        }
        first.insert(l, i);
    }
    Ok(Axis {
        key: key.to_string(),
        values,
        labels,
    })
}

/// Reads one `[sweep]` entry: a list, `{ from, to, step }`, or a single value.
fn axis_values(
    base: &Loaded,
    key: &str,
    v: &toml::Value,
) -> Result<Vec<toml::Value>, ScenarioError> {
    match v {
        toml::Value::Array(a) if a.is_empty() => {
            Err(sweep_err(base, key, "the list of values is empty".into()))
        }
        toml::Value::Array(a) => Ok(a.clone()),
        toml::Value::Table(t)
            if t.contains_key("from") || t.contains_key("to") || t.contains_key("step") =>
        {
            for k in t.keys() {
                if !["from", "to", "step"].contains(&k.as_str()) {
                    return Err(sweep_err(
                        base,
                        key,
                        format!("a range takes from, to and step (found '{k}')"),
                    ));
                }
            }
            let get = |name: &str| {
                t.get(name)
                    .ok_or_else(|| sweep_err(base, key, format!("a range needs '{name}'")))
            };
            let (from, to, step) = (get("from")?, get("to")?, get("step")?);
            let all_int = [from, to, step].iter().all(|v| v.is_integer());
            let (f, t_, s) = match (number(from), number(to), number(step)) {
                (Some(a), Some(b), Some(c)) if a.is_finite() && b.is_finite() && c.is_finite() => {
                    (a, b, c)
                }
                _ => {
                    return Err(sweep_err(
                        base,
                        key,
                        "from, to and step must be finite numbers".into(),
                    ))
                }
            };
            if s == 0.0 || (t_ - f) * s < 0.0 {
                return Err(sweep_err(
                    base,
                    key,
                    format!("step {s} never gets from {f} to {t_}"),
                ));
            }
            let too_many = |n: String| {
                sweep_err(
                    base,
                    key,
                    format!("the range gives {n} values, more than {MAX_RANGE_VALUES}"),
                )
            };
            let int = |v: &toml::Value| i128::from(v.as_integer().unwrap_or(0));
            // Integer ranges count exactly; float ranges may overflow to infinity.
            let n = if all_int {
                (int(to) - int(from)) / int(step) + 1
            } else {
                let span = (t_ - f) / s + 1e-9;
                if span.is_nan() || span >= MAX_RANGE_VALUES as f64 {
                    return Err(too_many(format!("{:.3e}", span.floor() + 1.0)));
                }
                span.floor() as i128 + 1
            };
            if n > MAX_RANGE_VALUES as i128 {
                return Err(too_many(n.to_string()));
            }
            // Each value from its index: never by repeated addition. Integer values lie
            // between from and to, so they fit.
            Ok((0..n)
                .map(|i| {
                    if all_int {
                        toml::Value::Integer((int(from) + i * int(step)) as i64)
                    } else {
                        toml::Value::Float(f + i as f64 * s)
                    }
                })
                .collect())
        }
        toml::Value::Table(_) => Err(sweep_err(
            base,
            key,
            "must be a list of values or a range { from, to, step }".into(),
        )),
        single => Ok(vec![single.clone()]),
    }
}

fn apply_cell(
    base: &Loaded,
    source: &Source,
    keys: &[&str],
    values: &[toml::Value],
) -> Result<Loaded, ScenarioError> {
    let mut table = base.table.clone();
    table.remove("sweep");
    for (k, v) in keys.iter().zip(values) {
        overrides::apply(&mut table, k, v.clone()).map_err(|m| sweep_err(base, k, m))?;
    }
    from_table(source, table)
}

/// Whether sweeping `key` can change the summary's columns (the number of layers, the
/// fleets' or the services' names, a tier's limiter, rejection cost or queue policy): only then must
/// every cell be built to know them.
fn shapes_columns(key: &str) -> bool {
    let parts: Vec<&str> = key.split('.').collect();
    // A tier's key below `dependency` or `services.<i>`.
    let tier = |k: Option<&&str>| {
        k.is_none_or(|k| matches!(*k, "admission" | "reject_cost" | "queue_policy"))
    };
    match parts[0] {
        "fleets" => parts.len() <= 2 || (parts.len() == 3 && matches!(parts[2], "layers" | "name")),
        "services" => parts.len() <= 2 || parts[2] == "name" || tier(parts.get(2)),
        "dependency" => tier(parts.get(1)),
        _ => false,
    }
}

/// Builds the plan of a loaded scenario, validating each swept value on its own. Without
/// `[sweep]` it has one cell, the base scenario. Cells are built when they run
/// ([`Plan::loaded`]); [`Plan::validate`] builds a set of them beforehand, so a grid
/// of any size plans in memory proportional to its values, not its cells.
pub(crate) fn plan(base: Loaded) -> Result<Plan, ScenarioError> {
    let mut axes = Vec::new();
    if let Some(sweep) = &base.file.sweep {
        // `[sweep.labels]`: a list of labels per swept key.
        let given = match sweep.get(LABELS) {
            Some(toml::Value::Table(t)) => Some(t),
            _ => None,
        };
        if let Some(g) = given {
            for k in g.keys() {
                if k == LABELS || !sweep.contains_key(k) {
                    let swept: Vec<&str> = sweep
                        .keys()
                        .map(String::as_str)
                        .filter(|k| *k != LABELS)
                        .collect();
                    return Err(sweep_err(
                        &base,
                        &format!("labels.{k}"),
                        format!("is not a swept key (swept: {})", swept.join(", ")),
                    ));
                }
            }
        }
        for (key, v) in sweep {
            if key == LABELS && given.is_some() {
                continue;
            }
            axes.push(axis(&base, key, v, given.and_then(|g| g.get(key)))?);
        }
    }
    let replications = base.scenario.replications;
    let cells_n = axes
        .iter()
        .try_fold(1u64, |acc, a| acc.checked_mul(a.values.len() as u64))
        .unwrap_or(u64::MAX);
    let runs = cells_n.saturating_mul(u64::from(replications));
    if runs > MAX_RUNS {
        return Err(sweep_err(
            &base,
            "(grid)",
            format!("the sweep has {runs} runs ({cells_n} cells × {replications} replications), more than the cap of {MAX_RUNS}"),
        ));
    }
    let values_bytes: u64 = axes
        .iter()
        .flat_map(|a| &a.values)
        .map(|v| v.to_string().len() as u64)
        .sum();
    let per_cell = PLAN_BYTES_PER_CELL
        .saturating_add(axes.len() as u64 * std::mem::size_of::<toml::Value>() as u64);
    let need = cells_n
        .saturating_mul(per_cell)
        .saturating_add(values_bytes);
    if need > MAX_PLAN_BYTES {
        return Err(sweep_err(
            &base,
            "(grid)",
            format!(
                "the sweep's {cells_n} cells would take about {} of memory to plan ({} each); at most {} is allowed (fewer values per key)",
                bytes_text(need),
                bytes_text(per_cell),
                bytes_text(MAX_PLAN_BYTES)
            ),
        ));
    }
    // Cells keep where they came from, not the text: the base has it.
    let source = Source {
        path: base.source.path.clone(),
        stem: base.source.stem.clone(),
        text: String::new(),
    };
    // Each value alone first, so an error names the key that carries it.
    for a in &axes {
        for v in &a.values {
            let one = apply_cell(&base, &source, &[a.key.as_str()], std::slice::from_ref(v))
                .and_then(|l| same_runs(&base, l));
            one.map_err(|e| {
                sweep_err(
                    &base,
                    &a.key,
                    format!("value {}: {}", render_value(v), strip(&e, &base, &a.key)),
                )
            })?;
        }
    }
    let cells: Vec<Cell> = (0..cells_n as usize)
        .map(|index| {
            let mut rest = index;
            let mut values = vec![toml::Value::Boolean(false); axes.len()];
            let mut picks = vec![0; axes.len()];
            for (ai, a) in axes.iter().enumerate().rev() {
                picks[ai] = rest % a.values.len();
                values[ai] = a.values[picks[ai]].clone();
                rest /= a.values.len();
            }
            Cell {
                index,
                values,
                picks,
            }
        })
        .collect();
    let mut plan = Plan {
        layout: Layout::of(&base.scenario),
        base,
        axes,
        cells,
        replications,
        columns: Vec::new(),
        source,
    };
    if plan.axes.iter().any(|a| shapes_columns(&a.key)) {
        let layouts = plan.build_cells(0..plan.cells.len(), |l| Layout::of(&l.scenario))?;
        for l in &layouts {
            plan.layout.merge(l);
        }
    }
    let mut columns = plan.layout.columns();
    columns.extend(
        plan.axes
            .iter()
            .map(|a| crate::metrics::columns::param_column(&a.key)),
    );
    plan.columns = columns;
    Ok(plan)
}

/// Refuses a cell whose replications or seed differ from the base's.
fn same_runs(base: &Loaded, l: Loaded) -> Result<Loaded, ScenarioError> {
    if l.scenario.replications != base.scenario.replications {
        return Err(sweep_err(
            base,
            "replications",
            "cannot be swept: set it in the scenario".into(),
        ));
    }
    if l.scenario.seed != base.scenario.seed {
        return Err(sweep_err(
            base,
            "seed",
            "cannot be swept: replications derive the seeds".into(),
        ));
    }
    Ok(l)
}

impl Plan {
    /// The scenario of cell `cell`, built and validated now.
    pub fn loaded(&self, cell: usize) -> Result<Loaded, ScenarioError> {
        let c = &self.cells[cell];
        if self.axes.is_empty() {
            return Ok(self.base.clone());
        }
        let keys: Vec<&str> = self.axes.iter().map(|a| a.key.as_str()).collect();
        apply_cell(&self.base, &self.source, &keys, &c.values)
            .and_then(|l| same_runs(&self.base, l))
            .map_err(|e| {
                let cell: Vec<String> = keys
                    .iter()
                    .zip(&c.values)
                    .map(|(k, v)| format!("{k} = {}", render_value(v)))
                    .collect();
                let key = keys.join(", ");
                let message = format!(
                    "cell {{{}}}: {}",
                    cell.join(", "),
                    strip(&e, &self.base, &key)
                );
                sweep_err(&self.base, &key, message)
            })
    }

    /// Builds the cells `cells` (in parallel) and maps each; the first error in cell
    /// order wins. Nothing of a cell is kept but what `f` returns.
    fn build_cells<T: Send>(
        &self,
        cells: impl Iterator<Item = usize>,
        f: impl Fn(&Loaded) -> T + Sync,
    ) -> Result<Vec<T>, ScenarioError> {
        use rayon::prelude::*;
        let cells: Vec<usize> = cells.collect();
        cells
            .par_iter()
            .map(|&c| self.loaded(c).map(|l| f(&l)))
            .collect::<Vec<_>>()
            .into_iter()
            .collect()
    }

    /// Builds every cell (in parallel) and maps each, in cell order; the first error
    /// in cell order wins.
    pub(crate) fn map_cells<T: Send>(
        &self,
        f: impl Fn(&Loaded) -> T + Sync,
    ) -> Result<Vec<T>, ScenarioError> {
        self.build_cells(0..self.cells.len(), f)
    }

    /// The shape of a finished run of each cell that the runs `runs` use (what its
    /// files must hold), by cell; the cells are built to know it.
    pub(crate) fn shapes(
        &self,
        runs: &[u64],
    ) -> Result<std::collections::HashMap<usize, super::store::Shape>, ScenarioError> {
        let mut cells: Vec<usize> = runs.iter().map(|&r| self.spec(r).cell).collect();
        cells.sort_unstable();
        cells.dedup();
        let shapes = self.build_cells(cells.iter().copied(), |l| {
            super::store::Shape::of(&l.scenario)
        })?;
        Ok(cells.into_iter().zip(shapes).collect())
    }

    /// Validates every cell that the runs `runs` use, before any of them runs.
    pub fn validate(&self, runs: &[u64]) -> Result<(), ScenarioError> {
        let mut cells: Vec<usize> = runs.iter().map(|&r| self.spec(r).cell).collect();
        cells.dedup();
        self.build_cells(cells.into_iter(), |_| ()).map(|_| ())
    }
}

/// An error's message without what the sweep error of `key` around it says again: the
/// "scenario 'path': " prefix, and "sweep key 'K': " when it is about `key` itself (about
/// another key, it keeps the key: `seed: cannot be swept ...`).
fn strip(e: &ScenarioError, base: &Loaded, key: &str) -> String {
    if let ScenarioError::Sweep {
        key: k, message, ..
    } = e
    {
        return if k == key {
            message.clone()
        } else {
            format!("{k}: {message}")
        };
    }
    let s = e.to_string();
    let prefix = format!("scenario '{}': ", base.source.path);
    s.strip_prefix(&prefix).map(str::to_string).unwrap_or(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::{load, Source};

    fn base(sweep: &str) -> Result<Plan, ScenarioError> {
        let text = format!(
            "duration = \"10s\"\nreplications = 2\n[dependency]\nservers = 2\nservice_time = \"10ms\"\n[[fleets]]\nname = \"a\"\narrival = {{ kind = \"poisson\", rate = 10 }}\n[[fleets.layers]]\nmax_attempts = 3\n[sweep]\n{sweep}\n"
        );
        let src = Source {
            path: "s.toml".into(),
            stem: "s".into(),
            text,
        };
        plan(load(src, &[]).unwrap())
    }

    #[test]
    fn the_grid_is_the_product_in_file_order_times_replications() {
        let p = base(
            "\"fleets.0.layers.0.max_attempts\" = [1, 2, 3]\n\"fleets.0.arrival.rate\" = [10, 20]",
        )
        .unwrap();
        assert_eq!(p.cells.len(), 6);
        assert_eq!(p.total_runs(), 12);
        let vals: Vec<String> = p
            .cells
            .iter()
            .map(|c| {
                c.values
                    .iter()
                    .map(render_value)
                    .collect::<Vec<_>>()
                    .join("/")
            })
            .collect();
        assert_eq!(vals, ["1/10", "1/20", "2/10", "2/20", "3/10", "3/20"]);
        assert_eq!(
            p.spec(5),
            RunSpec {
                run: 5,
                cell: 2,
                replication: 1
            }
        );
        assert_eq!(
            p.loaded(3).unwrap().scenario.fleets[0].layers[0].max_attempts,
            2
        );
        assert!(p.columns.iter().any(|c| c == "param_fleets.0.arrival.rate"));
    }

    #[test]
    fn sweeping_a_tiers_limiter_or_rejection_cost_from_none_writes_their_columns() {
        let has = |sweep: &str, col: &str| base(sweep).unwrap().columns.iter().any(|c| c == col);
        let cost = r#""dependency.reject_cost" = ["0s", "1ms"]"#;
        assert!(has(cost, "reject_busy_fraction"));
        let limiter =
            r#""dependency.admission" = [{ kind = "fixed_window", limit = 5, window = "1s" }]"#;
        assert!(has(limiter, "admission_rejected"));
        assert!(!has(
            r#""dependency.servers" = [1, 2]"#,
            "reject_busy_fraction"
        ));
    }

    #[test]
    fn ranges_are_computed_by_index() {
        let p = base("\"fleets.0.arrival.rate\" = { from = 0.1, to = 1.0, step = 0.1 }").unwrap();
        let v: Vec<f64> = p.axes[0]
            .values
            .iter()
            .map(|v| v.as_float().unwrap())
            .collect();
        assert_eq!(v.len(), 10);
        assert_eq!(v[2], 0.1 + 2.0 * 0.1);
        assert_eq!(render_value(&p.axes[0].values[2]), "0.3");
        let p =
            base("\"fleets.0.layers.0.max_attempts\" = { from = 1, to = 7, step = 3 }").unwrap();
        assert_eq!(p.axes[0].values, vec![1.into(), 4.into(), 7.into()]);
    }

    #[test]
    fn bad_sweeps_name_the_key() {
        for (sweep, needle) in [
            ("\"fleets.0.layers.0.max_attempts\" = []", "empty"),
            ("\"fleets.0.layers.0.max_attempts\" = [1, \"x\"]", "value x"),
            ("\"fleets.0.layers.0.bogus\" = [1]", "bogus"),
            ("\"fleets.3.name\" = [\"x\"]", "past the end"),
            (
                "\"fleets.0.arrival.rate\" = { from = 1, to = 0, step = 1 }",
                "never gets",
            ),
            (
                "\"fleets.0.arrival.rate\" = { from = 0, to = 1e9, step = 1 }",
                "more than",
            ),
            ("\"seed\" = [1, 2]", "cannot be swept"),
            ("\"replications\" = [1, 2]", "cannot be swept"),
            ("\"fleets.0.name.x\" = [1]", "'fleets.0.name' is a string, not a table"),
            (
                "\"fleets.0.layers.0.max_attempts.x\" = [1]",
                "is an integer, not a table",
            ),
            // Found by fuzzing: the count of a huge float range overflowed.
            (
                "\"fleets.0.arrival.rate\" = { from = -1e308, to = 0, step = 5e-324 }",
                "more than",
            ),
            (
                "\"fleets.0.layers.0.max_attempts\" = { from = -9223372036854775807, to = 9223372036854775807, step = 1 }",
                "more than",
            ),
        ] {
            let e = base(sweep).unwrap_err().to_string();
            assert!(e.contains(needle), "{sweep}: {e}");
            assert!(e.contains("sweep"), "{sweep}: {e}");
            // Each prefix once: `sweep key 'seed': value 2: sweep key 'seed': ...` was.
            assert_eq!(e.matches("sweep key").count(), 1, "{e}");
            assert_eq!(e.matches("scenario '").count(), 1, "{e}");
        }
    }

    #[test]
    fn values_carry_labels_inline_or_from_sweep_labels() {
        let p = base(
            r#""fleets.0.layers" = [
  { label = "no retries", value = [{ max_attempts = 1 }] },
  { label = "3 tries", value = [{ max_attempts = 3 }] },
  [{ max_attempts = 5 }],
]
"fleets.0.arrival.rate" = [10, 20]
"#,
        )
        .unwrap();
        assert_eq!(
            p.axes[0].labels,
            ["no retries", "3 tries", "layers.0.max_attempts=5"]
        );
        assert_eq!(p.axes[0].values[1].to_string(), "[{ max_attempts = 3 }]");
        assert_eq!(p.labels(3), ["3 tries", "20"]);
        assert_eq!(
            p.loaded(3).unwrap().scenario.fleets[0].layers[0].max_attempts,
            3
        );
        let p = base(
            "\"fleets.0.layers.0.max_attempts\" = [1, 3]\n[sweep.labels]\n\"fleets.0.layers.0.max_attempts\" = [\"off\", \"on\"]",
        )
        .unwrap();
        assert_eq!(p.axes.len(), 1);
        assert_eq!(p.axes[0].labels, ["off", "on"]);
        assert_eq!(
            p.columns.last().unwrap(),
            "param_fleets.0.layers.0.max_attempts"
        );
    }

    #[test]
    fn bad_labels_name_the_key_and_the_rule() {
        for (sweep, needle) in [
            (
                "k = [{ label = 1, value = 2 }]",
                "value 0: label must be a string (found integer)",
            ),
            (
                "\"fleets.0.layers.0.max_attempts\" = [{ label = \"a\", value = 1 }, { label = \"a\", value = 2 }]",
                "values 0 and 1 have the same label 'a'",
            ),
            (
                "\"fleets.0.layers.0.max_attempts\" = [{ label = \" \", value = 1 }]",
                "a label must be printable text, not empty",
            ),
            (
                "\"fleets.0.layers.0.max_attempts\" = [1, 2]\n[sweep.labels]\n\"fleets.0.layers.0.max_attempts\" = [\"a\"]",
                "labels.fleets.0.layers.0.max_attempts': must be a list of 2 strings, one per value (found [\"a\"])",
            ),
            (
                "\"fleets.0.layers.0.max_attempts\" = [1, 2]\n[sweep.labels]\n\"fleets.0.arrival.rate\" = [\"a\"]",
                "labels.fleets.0.arrival.rate': is not a swept key (swept: fleets.0.layers.0.max_attempts)",
            ),
            (
                "\"fleets.0.layers.0.max_attempts\" = [1, 2]\n[sweep.labels]\n\"fleets.0.layers.0.max_attempts\" = [\"a\", 2]",
                "value 1: must be a string (found 2)",
            ),
            (
                "\"fleets.0.layers.0.max_attempts\" = [{ label = \"a\", value = 1 }, 2]\n[sweep.labels]\n\"fleets.0.layers.0.max_attempts\" = [\"a\", \"b\"]",
                "value 0 has its own label already",
            ),
        ] {
            let e = base(sweep).unwrap_err().to_string();
            assert!(e.contains(needle), "{sweep}: {e}");
            assert!(e.starts_with("scenario 's.toml'"), "{e}");
        }
    }

    #[test]
    fn a_grid_over_the_cap_is_refused() {
        let e =
            base("a = { from = 1, to = 1000, step = 1 }\nb = { from = 1, to = 1000, step = 1 }")
                .unwrap_err()
                .to_string();
        assert!(e.contains("cap"), "{e}");
    }
}
