//! What the Python package (`python/`, `import retrysim`) calls: a run, a sweep, a
//! check, an explanation and a search, each returned as typed tables (a column of
//! whole numbers, floats, flags or text, named and ordered as the CSV file has them)
//! instead of files, and errors taken apart into the fields a Python exception
//! carries. The rows are the command line's own cells (`crate::export::csv`), so
//! the numbers are those of the CSV files: a float is the value its CSV text holds
//! (10 significant digits, `crate::metrics::format::shortest`).

use std::path::Path;
use std::sync::atomic::AtomicBool;

use crate::error::Error;
use crate::export::csv::{
    herd_cells, ordinal_cells, services_cells, timeseries_cells_laid, ATTEMPTS_BY_ORDINAL_COLUMNS,
    HERD_COLUMNS,
};
use crate::export::manifest::{FolderKind, Origin};
use crate::metrics::columns::{SERVICES_COLUMNS, SERVICES_FILE, SERVICE_GROUP};
use crate::metrics::format::shortest;
use crate::metrics::summary::Cell;
use crate::run::RunResult;
use crate::scenario::{Overrides, ScenarioError};

/// A scenario read, overridden, parsed and validated (what [`crate::load_scenario`] returns).
pub use crate::scenario::Loaded;
use crate::sweep::plan::Plan;
use crate::sweep::{self, store};
use crate::truncation::Truncation;

/// One column of a [`Table`], typed as a data frame holds it.
#[derive(Debug, Clone, PartialEq)]
pub enum Column {
    /// Whole numbers, none missing (`int64`).
    Int(Vec<i64>),
    /// Numbers, a missing one NaN (`float64`): a column of whole numbers with a gap
    /// is one too, as pandas reads it.
    Float(Vec<f64>),
    /// Flags, none missing (`bool`).
    Bool(Vec<bool>),
    /// Text, `None` where missing (`object`).
    Text(Vec<Option<String>>),
}

/// A table: its columns in order, each named as in the CSV file's header.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Table {
    /// The columns, with their names.
    pub columns: Vec<(String, Column)>,
}

impl Table {
    /// The number of rows.
    pub fn rows(&self) -> usize {
        self.columns.first().map_or(0, |(_, c)| match c {
            Column::Int(v) => v.len(),
            Column::Float(v) => v.len(),
            Column::Bool(v) => v.len(),
            Column::Text(v) => v.len(),
        })
    }

    /// The column named `name`.
    pub fn column(&self, name: &str) -> Option<&Column> {
        self.columns.iter().find(|(n, _)| n == name).map(|(_, c)| c)
    }
}

/// A field before its column's type is known.
#[derive(Debug, Clone, PartialEq)]
enum Value {
    Null,
    Int(u64),
    Float(f64),
    Bool(bool),
    Text(String),
}

impl Value {
    /// A summary cell as its CSV field holds it.
    fn of(c: &Cell) -> Value {
        match c {
            Cell::Int(v) => Value::Int(*v),
            Cell::Float(x) => Value::Float(shortest(*x).parse().unwrap_or(*x)),
            Cell::Bool(b) => Value::Bool(*b),
            Cell::Text(t) => Value::Text(t.clone()),
            Cell::Empty => Value::Null,
        }
    }

    /// A field read back from CSV text the library rendered (`aggregate.csv`).
    fn parse(field: &str) -> Value {
        if field.is_empty() {
            Value::Null
        } else {
            Value::Text(crate::export::csv::uncell(field).to_string())
        }
    }
}

/// Rows collected column by column, typed at the end.
struct Builder {
    names: Vec<String>,
    values: Vec<Vec<Value>>,
}

impl Builder {
    fn new<S: AsRef<str>>(names: impl IntoIterator<Item = S>) -> Builder {
        let names: Vec<String> = names.into_iter().map(|s| s.as_ref().to_string()).collect();
        let values = vec![Vec::new(); names.len()];
        Builder { names, values }
    }

    fn push(&mut self, row: impl IntoIterator<Item = Value>) {
        let mut row = row.into_iter();
        for col in &mut self.values {
            col.push(row.next().unwrap_or(Value::Null));
        }
    }

    fn push_cells(&mut self, row: &[Cell]) {
        self.push(row.iter().map(Value::of));
    }

    fn finish(self) -> Table {
        Table {
            columns: self
                .names
                .into_iter()
                .zip(self.values)
                .map(|(n, v)| (n, typed(v)))
                .collect(),
        }
    }
}

/// The type of a column from its values, as pandas reads the CSV file: whole numbers
/// are `Int` (`Float` with a gap), any float makes `Float`, flags are `Bool`, text
/// that is every time a number is that number (a swept value), and an empty column
/// is `Float` (all NaN).
fn typed(values: Vec<Value>) -> Column {
    let nulls = values.iter().filter(|v| **v == Value::Null).count();
    let all = |f: &dyn Fn(&Value) -> bool| values.iter().all(|v| *v == Value::Null || f(v));
    if nulls == values.len() {
        return Column::Float(vec![f64::NAN; values.len()]);
    }
    let number = |v: &Value| -> Option<f64> {
        match v {
            Value::Int(i) => Some(*i as f64),
            Value::Float(x) => Some(*x),
            Value::Text(t) => t.parse::<f64>().ok().filter(|x| x.is_finite()),
            _ => None,
        }
    };
    let whole = |v: &Value| -> Option<i64> {
        match v {
            Value::Int(i) => i64::try_from(*i).ok(),
            Value::Text(t) => t.parse::<i64>().ok(),
            _ => None,
        }
    };
    if all(&|v| whole(v).is_some()) {
        return if nulls == 0 {
            Column::Int(values.iter().filter_map(whole).collect())
        } else {
            Column::Float(
                values
                    .iter()
                    .map(|v| number(v).unwrap_or(f64::NAN))
                    .collect(),
            )
        };
    }
    if all(&|v| number(v).is_some()) {
        return Column::Float(
            values
                .iter()
                .map(|v| number(v).unwrap_or(f64::NAN))
                .collect(),
        );
    }
    if nulls == 0 && all(&|v| matches!(v, Value::Bool(_))) {
        return Column::Bool(values.iter().map(|v| *v == Value::Bool(true)).collect());
    }
    Column::Text(
        values
            .into_iter()
            .map(|v| match v {
                Value::Null => None,
                Value::Int(i) => Some(i.to_string()),
                Value::Float(x) => Some(shortest(x)),
                Value::Bool(b) => Some(b.to_string()),
                Value::Text(t) => Some(t),
            })
            .collect(),
    )
}

/// A table from CSV text the library rendered (its header, then its rows).
fn from_csv(text: &str) -> Table {
    let mut r = ::csv::ReaderBuilder::new()
        .has_headers(true)
        .from_reader(text.as_bytes());
    let header: Vec<String> = r
        .headers()
        .map(|h| h.iter().map(str::to_string).collect())
        .unwrap_or_default();
    let mut b = Builder::new(&header);
    for rec in r.records().flatten() {
        b.push(rec.iter().map(Value::parse));
    }
    b.finish()
}

/// The names of a CSV header line.
fn header_names(line: &str) -> Vec<String> {
    from_csv(line).columns.into_iter().map(|(n, _)| n).collect()
}

/// What [`run`] returns: the tables `retrysim run` writes, in memory.
#[derive(Debug, Clone)]
pub struct RunOutput {
    /// `summary.csv`: one row a replication.
    pub summary: Table,
    /// `aggregate.csv`, for a scenario with replications.
    pub aggregate: Option<Table>,
    /// `timeseries.csv`, `herd.csv`, `attempts_by_ordinal.csv` and `services.csv`,
    /// when asked for.
    pub series: Option<Series>,
    /// `traces.csv` (no rows unless the scenario traces requests).
    pub traces: Table,
    /// `manifest.toml` as JSON.
    pub manifest_json: String,
    /// The message of the runs that stopped at a limit, if any did.
    pub truncation: Option<String>,
}

/// What [`sweep`] returns: the tables of a sweep folder, in memory.
#[derive(Debug, Clone)]
pub struct SweepOutput {
    /// `summary.csv`: one row a run, in plan order.
    pub summary: Table,
    /// `aggregate.csv`: one row a grid cell.
    pub aggregate: Table,
    /// Every run's series, when asked for.
    pub series: Option<Series>,
    /// The message of the runs that stopped at a limit, if any did.
    pub truncation: Option<String>,
}

/// Runs that stopped at a limit, and why.
type Stopped = Vec<(u64, Option<String>)>;

/// The summary rows of `results`, runs of `plan` (as data and as CSV lines), and the
/// runs that stopped early.
fn summaries(plan: &Plan, results: &[RunResult]) -> (Table, Vec<String>, Stopped) {
    let mut b = Builder::new(&plan.columns);
    let mut text = Vec::with_capacity(results.len());
    for r in results {
        let s = store::summary_of(plan, r);
        let cells: Vec<Cell> = plan
            .columns
            .iter()
            .map(|c| s.get(c).cloned().unwrap_or(Cell::Empty))
            .collect();
        b.push_cells(&cells);
        text.push(crate::export::csv::rows([&cells[..]]));
    }
    (b.finish(), text, crate::run::stopped_at_limits(results))
}

/// `aggregate.csv` of summary rows (each its CSV line), as [`sweep::aggregate`]
/// computes it from the rows as written.
fn aggregate(plan: &Plan, lines: &[String]) -> Table {
    let rows: Vec<Vec<String>> = lines
        .iter()
        .map(|l| {
            ::csv::ReaderBuilder::new()
                .has_headers(false)
                .from_reader(l.as_bytes())
                .records()
                .next()
                .and_then(Result::ok)
                .map(|r| r.iter().map(str::to_string).collect())
                .unwrap_or_default()
        })
        .collect();
    let wide = sweep::aggregate::render(&plan.columns, &rows, plan.replications as usize).wide;
    from_csv(&wide)
}

fn stopped_message(
    subject: String,
    runs: u64,
    stopped: Vec<(u64, Option<String>)>,
) -> Option<String> {
    Truncation::of(
        subject,
        runs,
        stopped,
        "the rows returned are marked truncated (truncated = true in the summary)".into(),
    )
    .map(|t| t.to_string())
}

/// The tables of a folder that hold every run's rows (not its summary).
#[derive(Debug, Clone)]
pub struct Series {
    /// `timeseries.csv`.
    pub timeseries: Table,
    /// `herd.csv`.
    pub herd: Table,
    /// `attempts_by_ordinal.csv`.
    pub attempts_by_ordinal: Table,
    /// `services.csv` (no rows without a service graph).
    pub services: Table,
}

/// The rows of `results`, runs of `plan` with their series, as its folder's tables
/// lay them out (each run with its own cell's scenario).
fn series(plan: &Plan, results: &[RunResult]) -> Result<Series, Error> {
    let mut ts = Builder::new(header_names(&store::timeseries_header_of(plan)));
    let mut herd = Builder::new(HERD_COLUMNS);
    let mut ord = Builder::new(ATTEMPTS_BY_ORDINAL_COLUMNS);
    let graph = plan.layout.uses(&SERVICE_GROUP);
    let service_groups = plan.layout.file_groups(SERVICES_FILE);
    let mut services = if graph {
        Builder::new(
            service_groups
                .iter()
                .flat_map(|g| g.columns.iter().map(|c| c.name)),
        )
    } else {
        Builder::new(SERVICES_COLUMNS)
    };
    let mut cell = None;
    for r in results {
        let c = plan.spec(r.run).cell;
        if cell.as_ref().is_none_or(|(i, _)| *i != c) {
            let scn = plan.loaded(c).map_err(sweep::SweepError::from)?.scenario;
            cell = Some((c, scn));
        }
        let Some((_, scn)) = &cell else { continue };
        let groups = plan.layout.series_groups(scn);
        timeseries_cells_laid(r, scn.dependency.servers, &groups, &mut |row| {
            ts.push_cells(row);
        });
        herd_cells(r, &mut |row| herd.push_cells(row));
        ordinal_cells(r, &mut |row| ord.push_cells(row));
        if scn.graph {
            let names: Vec<String> = scn.services.iter().map(|s| s.name.clone()).collect();
            services_cells(r, &names, &service_groups, &mut |row| {
                services.push_cells(row);
            });
        }
    }
    Ok(Series {
        timeseries: ts.finish(),
        herd: herd.finish(),
        attempts_by_ordinal: ord.finish(),
        services: services.finish(),
    })
}

/// Runs the base point of a loaded scenario (its replications, in parallel; any
/// `[sweep]` left out) in memory, as `retrysim run` does into a folder, and returns
/// its tables (those of every run's series only `with_series`: else each run's
/// series are dropped as it ends); `path` is the scenario file as given (`None`:
/// text), for the manifest. `Ok(None)` when `stop` was set before every replication
/// had started.
pub fn run(
    loaded: &Loaded,
    path: Option<&Path>,
    overrides: &Overrides,
    with_series: bool,
    stop: &AtomicBool,
) -> Result<Option<RunOutput>, Error> {
    let plan = sweep::folder::base_plan(loaded)?;
    let Some(results) = sweep::run_in_memory_until(&plan, stop, !with_series)? else {
        return Ok(None);
    };
    let scn = plan.loaded(0).map_err(sweep::SweepError::from)?.scenario;
    let (summary, lines, stopped) = summaries(&plan, &results);
    let replicated = plan.replications > 1;
    let series = if with_series {
        Some(series(&plan, &results)?)
    } else {
        None
    };
    let graph = plan.layout.uses(&SERVICE_GROUP);
    let mut files = store::table_files(replicated, graph);
    let traces = traces(&scn, results.first(), &mut files);
    files.sort();
    let plot = sweep::plot_table::of(&plan, FolderKind::Run)?;
    // A scenario given as text is known by the name its messages use.
    let origin = match path {
        Some(_) => Origin::of(path, overrides.typed()),
        None => Origin {
            identity: loaded.source.path.clone(),
            overrides: overrides.typed(),
        },
    };
    let manifest = sweep::manifest_of(&plan, FolderKind::Run, &origin, &files, &plot).render();
    let manifest_json = toml::from_str::<toml::Value>(&manifest)
        .ok()
        .and_then(|v| serde_json::to_string(&v).ok())
        .unwrap_or_else(|| "{}".into());
    Ok(Some(RunOutput {
        aggregate: replicated.then(|| aggregate(&plan, &lines)),
        summary,
        series,
        traces,
        manifest_json,
        truncation: stopped_message(
            format!("scenario '{}'", loaded.source.path),
            plan.total_runs(),
            stopped,
        ),
    }))
}

/// `traces.csv` of replication 0 (`first`) when the scenario traces requests: the
/// run again with its traces, as `retrysim run` writes them; the file names join
/// `files`.
fn traces(
    scn: &crate::scenario::Scenario,
    first: Option<&RunResult>,
    files: &mut Vec<String>,
) -> Table {
    use crate::export::trace::{order, row, secs, Val};
    use crate::metrics::columns::TRACES_COLUMNS;
    let mut b = Builder::new(TRACES_COLUMNS);
    if let (Some(t), Some(r0)) = (scn.trace, first) {
        files.extend(sweep::folder::TRACE_FILES.map(String::from));
        let log = crate::run::trace_run(scn, 0, r0.metrics.totals.logical, t.sample);
        for i in order(&log) {
            b.push(row(&log, i).into_iter().map(|v| match v {
                Val::Null => Value::Null,
                Val::Int(n) => Value::Int(n),
                Val::Secs(ns) => Value::Float(secs(ns).parse().unwrap_or(f64::NAN)),
                Val::Text(s) => Value::Text(s),
                Val::Bool(f) => Value::Bool(f),
            }));
        }
    }
    b.finish()
}

/// Plans the `[sweep]` grid of a loaded scenario ([`crate::plan_sweep`]), so that
/// [`sweep`] can run it.
pub fn plan(loaded: Loaded) -> Result<Plan, Error> {
    crate::api::plan_sweep(loaded)
}

/// The runs in a plan (cells × replications).
pub fn total_runs(plan: &Plan) -> u64 {
    plan.total_runs()
}

/// Runs every run of a planned sweep in memory, in parallel on `jobs` threads (`None`:
/// all cores), and returns the summary and aggregate tables its folder would hold,
/// and with `with_series` its other tables (every run's series held in memory).
/// `Ok(None)` when `stop` was set before every run had started.
pub fn sweep(
    plan: &Plan,
    jobs: Option<usize>,
    with_series: bool,
    stop: &AtomicBool,
) -> Result<Option<SweepOutput>, Error> {
    let pool = sweep::pool(jobs)?;
    let Some(results) = sweep::install(pool.as_ref(), || {
        sweep::run_in_memory_until(plan, stop, !with_series)
    })?
    else {
        return Ok(None);
    };
    let (summary, lines, stopped) = summaries(plan, &results);
    Ok(Some(SweepOutput {
        summary,
        aggregate: aggregate(plan, &lines),
        series: if with_series {
            Some(series(plan, &results)?)
        } else {
            None
        },
        truncation: stopped_message(
            format!("sweep '{}'", plan.base.scenario.name),
            plan.total_runs(),
            stopped,
        ),
    }))
}

/// What [`explain`] returns.
#[derive(Debug, Clone)]
pub struct Explained {
    /// The text `retrysim explain` prints.
    pub text: String,
    /// The lints that fired: id, fleet, layer (if about one), message.
    pub lints: Vec<(String, String, Option<String>, String)>,
}

/// Explains and lints a loaded scenario, as `retrysim explain` prints it.
pub fn explain(loaded: &Loaded) -> Explained {
    let e = crate::explain::explain(&loaded.scenario);
    let mut text = e.render();
    if !loaded.imports.is_empty() {
        text.push_str("\nimported:\n");
        for i in &loaded.imports {
            for l in i.provenance() {
                text.push_str(&format!("  {l}\n"));
            }
        }
    }
    Explained {
        text,
        lints: e
            .lints
            .iter()
            .map(|l| {
                (
                    l.id.to_string(),
                    l.fleet.clone(),
                    l.layer.clone(),
                    l.message.clone(),
                )
            })
            .collect(),
    }
}

/// The lint ids `deny` names (`all`: every lint), or the error of an unknown one.
pub fn deny_ids(deny: &[String]) -> Result<Vec<String>, Error> {
    Ok(crate::explain::lint::resolve_deny(deny)?
        .into_iter()
        .map(str::to_string)
        .collect())
}

/// The check table's rows as a [`Table`]: the columns `retrysim check` prints, then
/// `pass` (a flag) and `mean` (the value found, as a number).
fn check_table(rows: &[crate::check::CheckRow]) -> Table {
    let mut b = Builder::new([
        "scenario", "cell", "metric", "bound", "value", "result", "pass", "mean",
    ]);
    for r in rows {
        b.push([
            Value::Text(r.scenario.clone()),
            Value::Text(r.cell.clone()),
            Value::Text(r.metric.clone()),
            Value::Text(r.bound.clone()),
            Value::Text(r.value.clone()),
            Value::Text(if r.pass { "pass" } else { "FAIL" }.into()),
            Value::Bool(r.pass),
            r.data.value.mean.map_or(Value::Null, Value::Float),
        ]);
    }
    let mut t = b.finish();
    // Text columns stay text even when every value reads as a number.
    for (name, col) in &mut t.columns {
        if name != "pass" && name != "mean" {
            if let Column::Int(_) | Column::Float(_) = col {
                let texts = rows
                    .iter()
                    .map(|r| {
                        Some(match name.as_str() {
                            "scenario" => r.scenario.clone(),
                            "cell" => r.cell.clone(),
                            "metric" => r.metric.clone(),
                            "bound" => r.bound.clone(),
                            _ => r.value.clone(),
                        })
                    })
                    .collect();
                *col = Column::Text(texts);
            }
        }
    }
    if rows.is_empty() {
        if let Some((_, c)) = t.columns.iter_mut().find(|(n, _)| n == "pass") {
            *c = Column::Bool(Vec::new());
        }
    }
    t
}

/// What [`check`] returns.
#[derive(Debug, Clone)]
pub struct Checked {
    /// The check table (one row per expectation and cell, then baseline drift).
    pub table: Table,
    /// Whether every row passes.
    pub passed: bool,
    /// The message of the runs that stopped at a limit, if any did.
    pub truncation: Option<String>,
    /// The baselines written (their files).
    pub wrote: Vec<String>,
}

/// Checks scenario files as `retrysim check` does (expectations, then the baseline);
/// every scenario is validated before anything runs (the first error is returned).
pub fn check(
    scenarios: &[std::path::PathBuf],
    overrides: &Overrides,
    baseline: Option<&Path>,
    tolerance: f64,
    write_baseline: bool,
    jobs: Option<usize>,
) -> Result<Checked, Error> {
    let req = crate::check::Request {
        scenarios: scenarios.to_vec(),
        overrides: overrides.clone(),
        baseline: baseline.map(Path::to_path_buf),
        tolerance,
        write_baseline,
        force: false,
        jobs,
    };
    let prepared = crate::check::prepare(&req).map_err(|mut errors| errors.remove(0))?;
    let checked = crate::check::run_all(&req, &prepared, &mut |_| {})?;
    let rows: Vec<crate::check::CheckRow> = checked.iter().flat_map(|c| c.rows.clone()).collect();
    let truncation = checked
        .iter()
        .filter_map(|c| c.truncation.as_ref().map(ToString::to_string))
        .collect::<Vec<_>>();
    Ok(Checked {
        passed: rows.iter().all(|r| r.pass),
        table: check_table(&rows),
        truncation: (!truncation.is_empty()).then(|| truncation.join("\n")),
        wrote: checked
            .iter()
            .filter_map(|c| {
                c.wrote_baseline
                    .as_ref()
                    .map(|(f, _)| f.display().to_string())
            })
            .collect(),
    })
}

/// What [`search`] returns.
#[derive(Debug, Clone)]
pub struct Searched {
    /// The key searched.
    pub key: String,
    /// The answer: the smallest (largest) value at which every expectation holds.
    pub answer: Option<f64>,
    /// Whether the key takes whole numbers (the values are then whole).
    pub integer: bool,
    /// The value one step past the answer (or the failing end when none holds).
    pub neighbour: Option<f64>,
    /// Every value tried, in order, and whether every expectation held there.
    pub probes: Table,
    /// The check rows of every value tried.
    pub rows: Table,
    /// Runs in all.
    pub runs: u64,
}

/// Searches `key` of a scenario file over `range` (`1..200`) for the smallest (with
/// `largest`, the largest) value at which every `[[expect]]` holds, as `retrysim
/// search` does.
pub fn search(
    scenario: &Path,
    overrides: &Overrides,
    key: &str,
    range: &str,
    tolerance: Option<f64>,
    largest: bool,
    jobs: Option<usize>,
) -> Result<Searched, Error> {
    use crate::search::Point;
    let req = crate::search::Request {
        scenario: scenario.to_path_buf(),
        overrides: overrides.clone(),
        key: key.to_string(),
        range: range.to_string(),
        tolerance,
        largest,
        jobs,
    };
    let out = crate::api::search_scenario(&req, &mut |_| {}, &mut |_| {})?;
    let num = |p: &Point| match p {
        Point::Int(i) => *i as f64,
        Point::Float(x) => *x,
    };
    let integer = out
        .probes
        .first()
        .is_some_and(|p| matches!(p.point, Point::Int(_)));
    let mut probes = Builder::new(["value", "pass"]);
    for p in &out.probes {
        let v = match p.point {
            Point::Int(i) => Value::Text(i.to_string()),
            Point::Float(x) => Value::Float(x),
        };
        probes.push([v, Value::Bool(p.pass)]);
    }
    let mut probes = probes.finish();
    if out.probes.is_empty() {
        probes.columns[1].1 = Column::Bool(Vec::new());
    }
    let rows: Vec<crate::check::CheckRow> =
        out.probes.iter().flat_map(|p| p.rows.clone()).collect();
    Ok(Searched {
        key: key.to_string(),
        answer: out.answer.as_ref().map(|p| num(&p.point)),
        integer,
        neighbour: out.neighbour.as_ref().map(|p| num(&p.point)),
        probes,
        rows: check_table(&rows),
        runs: out.runs,
    })
}

/// What kind of Python exception an [`Error`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// A scenario (or another input) is not usable: `ScenarioError` (a `ValueError`).
    BadInput,
    /// A file that is not there: `FileNotFoundError`.
    NotFound,
    /// The file system refused: `OSError`.
    Io,
    /// Runs stopped at their limits.
    Stopped,
    /// No fault of the input.
    Internal,
    /// Stopped by its stop flag.
    Interrupted,
}

/// An [`Error`] taken apart: its kind, the message `retrysim` prints after `error: `,
/// and the file and field it names when it is about a scenario's field.
#[derive(Debug, Clone)]
pub struct ErrorParts {
    /// The kind.
    pub kind: ErrorKind,
    /// The message ([`crate::error::chain`]).
    pub message: String,
    /// The scenario file as messages name it.
    pub file: Option<String>,
    /// The field's path (`fleets[0].layers[1].max_attempts`), or the key of a `--set`
    /// or a sweep.
    pub field: Option<String>,
}

/// Takes an [`Error`] apart for a Python exception.
pub fn error_parts(e: &Error) -> ErrorParts {
    let message = crate::error::chain(e);
    let scenario = match e {
        Error::BadInput(c) => c.downcast_ref::<ScenarioError>(),
        _ => None,
    };
    let file = scenario.map(|s| match s {
        ScenarioError::Read { path, .. }
        | ScenarioError::Empty { path }
        | ScenarioError::Syntax { path, .. }
        | ScenarioError::Field { path, .. }
        | ScenarioError::Sweep { path, .. }
        | ScenarioError::Override { path, .. } => path.clone(),
    });
    let kind = match (e, scenario) {
        (_, Some(ScenarioError::Read { source, .. })) => {
            if source.kind() == std::io::ErrorKind::NotFound {
                ErrorKind::NotFound
            } else {
                ErrorKind::Io
            }
        }
        (Error::BadInput(_), _) => ErrorKind::BadInput,
        (Error::Io(_), _) => ErrorKind::Io,
        (Error::Stopped(_), _) => ErrorKind::Stopped,
        (Error::Internal(_), _) => ErrorKind::Internal,
        (Error::Interrupted(_), _) => ErrorKind::Interrupted,
    };
    ErrorParts {
        kind,
        message,
        file,
        field: scenario.and_then(ScenarioError::field).map(str::to_string),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loaded(sets: &[&str]) -> Loaded {
        let o = Overrides {
            sets: sets.iter().map(|s| s.to_string()).collect(),
            seed: None,
        };
        crate::load_scenario(None, &o).unwrap()
    }

    #[test]
    fn a_run_gives_the_summary_row_the_csv_file_holds() {
        let l = loaded(&["duration=\"20s\""]);
        let out = run(
            &l,
            None,
            &Overrides::default(),
            true,
            &AtomicBool::new(false),
        )
        .unwrap()
        .unwrap();
        let t = crate::run_tables(&l, 0).unwrap();
        assert_eq!(
            out.summary
                .columns
                .iter()
                .map(|(n, _)| n)
                .collect::<Vec<_>>(),
            t.summary_columns.iter().collect::<Vec<_>>()
        );
        for ((name, col), text) in out.summary.columns.iter().zip(&t.summary_values) {
            let got = match col {
                Column::Int(v) => v[0].to_string(),
                Column::Float(v) if v[0].is_nan() => String::new(),
                Column::Float(v) => shortest(v[0]),
                Column::Bool(v) => v[0].to_string(),
                Column::Text(v) => v[0].clone().unwrap_or_default(),
            };
            assert_eq!(&got, text, "{name}");
        }
        let series = out.series.unwrap();
        let ts_rows = t.timeseries.lines().count() - 1;
        assert_eq!(series.timeseries.rows(), ts_rows);
        assert_eq!(series.herd.rows(), t.herd.lines().count() - 1);
        assert!(out.manifest_json.contains("\"run\""));
    }

    /// A stop set while a run is under way ends it within a few hundred events (the
    /// engine asks between batches), not at the run's end: this 10-hour run would take
    /// many seconds to finish.
    #[test]
    fn a_stop_set_during_a_run_ends_it() {
        use std::sync::Arc;
        let l = loaded(&["duration=\"36000s\""]);
        let stop = Arc::new(AtomicBool::new(false));
        let setter = {
            let stop = Arc::clone(&stop);
            std::thread::spawn(move || {
                std::thread::sleep(std::time::Duration::from_millis(20));
                stop.store(true, std::sync::atomic::Ordering::Relaxed);
            })
        };
        let out = run(&l, None, &Overrides::default(), true, &stop).unwrap();
        setter.join().unwrap();
        assert!(out.is_none());
    }

    #[test]
    fn a_stopped_run_returns_nothing() {
        let l = loaded(&[]);
        let out = run(
            &l,
            None,
            &Overrides::default(),
            true,
            &AtomicBool::new(true),
        )
        .unwrap();
        assert!(out.is_none());
    }

    #[test]
    fn columns_are_typed_as_pandas_reads_them() {
        let t = |v: Vec<Value>| typed(v);
        assert_eq!(
            t(vec![Value::Int(1), Value::Int(2)]),
            Column::Int(vec![1, 2])
        );
        assert!(matches!(t(vec![Value::Int(1), Value::Null]), Column::Float(v) if v[1].is_nan()));
        assert_eq!(
            t(vec![Value::Text("0.5".into()), Value::Text("2".into())]),
            Column::Float(vec![0.5, 2.0])
        );
        assert_eq!(
            t(vec![Value::Text("a".into()), Value::Null]),
            Column::Text(vec![Some("a".into()), None])
        );
        assert_eq!(t(vec![Value::Bool(true)]), Column::Bool(vec![true]));
    }

    #[test]
    fn a_field_error_names_its_file_and_field() {
        let o = Overrides {
            sets: vec!["fleets[0].layers[0].max_attempts=0".into()],
            seed: None,
        };
        let text = crate::scenario::DEFAULT_SCENARIO;
        let e = crate::load_scenario_text("x.toml", text, &o).unwrap_err();
        let p = error_parts(&e);
        assert_eq!(p.kind, ErrorKind::BadInput);
        assert_eq!(p.file.as_deref(), Some("x.toml"));
        assert!(p.field.is_some(), "{p:?}");
    }
}
