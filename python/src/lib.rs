//! `retrysim._native`: the simulator for Python. Each call loads the scenario, runs
//! the library on a worker thread with the GIL released, and returns typed columns
//! (numpy arrays, lists of text) that `retrysim/__init__.py` makes into data frames.
//! While the work runs, the calling thread waits without the GIL and checks for
//! signals every 50 ms: Ctrl-C sets the work's stop flag (in `run` and `sweep`, no new
//! run starts and the runs under way end within a few hundred events) and raises
//! `KeyboardInterrupt` at once.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::Arc;
use std::time::Duration;

use numpy::PyArray1;
use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyRuntimeError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};
use retrysim::api::python::{self as lib, Column, ErrorKind, Table};
use retrysim::{Error, Overrides};

create_exception!(
    _native,
    NativeError,
    PyException,
    "An error of the library: args are (kind, message, file, field)."
);

/// How often the waiting thread looks for Ctrl-C.
const POLL: Duration = Duration::from_millis(50);

/// A library error as a `NativeError(kind, message, file, field)`; the package
/// raises the exception its kind names.
fn py_err(e: &Error) -> PyErr {
    let p = lib::error_parts(e);
    let kind = match p.kind {
        ErrorKind::BadInput => "bad_input",
        ErrorKind::NotFound => "not_found",
        ErrorKind::Io => "io",
        ErrorKind::Stopped => "stopped",
        ErrorKind::Internal => "internal",
        ErrorKind::Interrupted => "interrupted",
    };
    NativeError::new_err((kind, p.message, p.file, p.field))
}

/// Runs `work` on a worker thread with the GIL released; on Ctrl-C sets its stop flag
/// and returns the `KeyboardInterrupt` without waiting for the work to end (work that
/// reads the flag ends soon; whatever it returns is dropped).
fn detached<T, F>(py: Python<'_>, work: F) -> PyResult<T>
where
    T: Send + 'static,
    F: FnOnce(&AtomicBool) -> T + Send + 'static,
{
    let stop = Arc::new(AtomicBool::new(false));
    let (tx, mut rx) = mpsc::channel();
    let flag = Arc::clone(&stop);
    std::thread::Builder::new()
        .name("retrysim".into())
        .spawn(move || {
            let _ = tx.send(work(&flag));
        })
        .map_err(|e| PyRuntimeError::new_err(format!("cannot start a worker thread: {e}")))?;
    loop {
        // The receiver goes to the GIL-free closure and back (it is not `Sync`).
        let (got, back) = py.detach(move || (rx.recv_timeout(POLL), rx));
        rx = back;
        match got {
            Ok(v) => return Ok(v),
            Err(RecvTimeoutError::Timeout) => {
                if let Err(e) = py.check_signals() {
                    stop.store(true, Ordering::Relaxed);
                    return Err(e);
                }
            }
            Err(RecvTimeoutError::Disconnected) => {
                return Err(NativeError::new_err((
                    "internal",
                    "the worker thread failed (a panic: a bug of retrysim)".to_string(),
                    None::<String>,
                    None::<String>,
                )))
            }
        }
    }
}

/// A scenario as given: the embedded default, a file, or TOML text (named `name` in
/// messages).
#[derive(Clone)]
enum Source {
    Default,
    File(PathBuf),
    Text { name: String, text: String },
}

impl Source {
    fn of(kind: &str, value: String, name: Option<String>) -> PyResult<Source> {
        match kind {
            "default" => Ok(Source::Default),
            "path" => Ok(Source::File(PathBuf::from(value))),
            "text" => Ok(Source::Text {
                name: name.unwrap_or_else(|| "<string>".into()),
                text: value,
            }),
            _ => Err(PyRuntimeError::new_err(format!(
                "unknown source kind {kind}"
            ))),
        }
    }

    fn load(&self, o: &Overrides) -> Result<lib::Loaded, Error> {
        match self {
            Source::Default => retrysim::load_scenario(None, o),
            Source::File(p) => retrysim::load_scenario(Some(p), o),
            Source::Text { name, text } => retrysim::load_scenario_text(name, text, o),
        }
    }

    fn path(&self) -> Option<&Path> {
        match self {
            Source::File(p) => Some(p),
            Source::Default | Source::Text { .. } => None,
        }
    }
}

fn overrides(sets: Vec<String>, seed: Option<u64>) -> Overrides {
    Overrides { sets, seed }
}

/// A table as a list of `(name, column)`: a numpy array, or a list of text.
fn table<'py>(py: Python<'py>, t: Table) -> PyResult<Bound<'py, PyList>> {
    let out = PyList::empty(py);
    for (name, col) in t.columns {
        let data: Bound<'py, PyAny> = match col {
            Column::Int(v) => PyArray1::from_vec(py, v).into_any(),
            Column::Float(v) => PyArray1::from_vec(py, v).into_any(),
            Column::Bool(v) => PyArray1::from_vec(py, v).into_any(),
            Column::Text(v) => PyList::new(py, v)?.into_any(),
        };
        out.append(PyTuple::new(
            py,
            [name.into_pyobject(py)?.into_any(), data],
        )?)?;
    }
    Ok(out)
}

/// Turns a scenario given as JSON (a Python dict, `json.dumps`) into TOML text.
#[pyfunction]
fn json_to_toml(json: &str) -> PyResult<String> {
    let bad = |m: String| NativeError::new_err(("bad_input", m, Some("<dict>"), None::<String>));
    let v: serde_json::Value = serde_json::from_str(json).map_err(|e| {
        bad(format!(
            "scenario '<dict>' is not a table of TOML values: {e}"
        ))
    })?;
    let t: toml::Table = toml::Table::try_from(v)
        .map_err(|e| bad(format!("scenario '<dict>' cannot be written as TOML: {e}")))?;
    toml::to_string(&t)
        .map_err(|e| bad(format!("scenario '<dict>' cannot be written as TOML: {e}")))
}

/// Loads and runs a scenario's base point; returns a dict of tables and the manifest.
#[pyfunction]
#[pyo3(signature = (kind, scenario, name=None, sets=vec![], seed=None, series=true))]
#[allow(clippy::too_many_arguments)]
fn run<'py>(
    py: Python<'py>,
    kind: &str,
    scenario: String,
    name: Option<String>,
    sets: Vec<String>,
    seed: Option<u64>,
    series: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let src = Source::of(kind, scenario, name)?;
    let out = detached(py, move |stop| {
        let o = overrides(sets, seed);
        let loaded = src.load(&o)?;
        lib::run(&loaded, src.path(), &o, series, stop)
    })?;
    let out = match out {
        Ok(Some(out)) => out,
        Ok(None) => return Err(pyo3::exceptions::PyKeyboardInterrupt::new_err(())),
        Err(e) => return Err(py_err(&e)),
    };
    let d = PyDict::new(py);
    d.set_item("summary", table(py, out.summary)?)?;
    match out.aggregate {
        Some(a) => d.set_item("aggregate", table(py, a)?)?,
        None => d.set_item("aggregate", py.None())?,
    }
    if let Some(s) = out.series {
        d.set_item("timeseries", table(py, s.timeseries)?)?;
        d.set_item("herd", table(py, s.herd)?)?;
        d.set_item("attempts_by_ordinal", table(py, s.attempts_by_ordinal)?)?;
        d.set_item("services", table(py, s.services)?)?;
    }
    d.set_item("traces", table(py, out.traces)?)?;
    d.set_item("manifest", out.manifest_json)?;
    d.set_item("truncation", out.truncation)?;
    Ok(d)
}

/// Loads a scenario with a `[sweep]` and runs every run in memory, in parallel.
#[pyfunction]
#[pyo3(signature = (kind, scenario, name=None, sets=vec![], seed=None, jobs=None, series=false))]
#[allow(clippy::too_many_arguments)]
fn sweep<'py>(
    py: Python<'py>,
    kind: &str,
    scenario: String,
    name: Option<String>,
    sets: Vec<String>,
    seed: Option<u64>,
    jobs: Option<usize>,
    series: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let src = Source::of(kind, scenario, name)?;
    let out = detached(py, move |stop| {
        let loaded = src.load(&overrides(sets, seed))?;
        let plan = lib::plan(loaded)?;
        lib::sweep(&plan, jobs, series, stop).map(|o| o.map(|o| (o, lib::total_runs(&plan))))
    })?;
    let (out, runs) = match out {
        Ok(Some(out)) => out,
        Ok(None) => return Err(pyo3::exceptions::PyKeyboardInterrupt::new_err(())),
        Err(e) => return Err(py_err(&e)),
    };
    let d = PyDict::new(py);
    d.set_item("summary", table(py, out.summary)?)?;
    d.set_item("aggregate", table(py, out.aggregate)?)?;
    if let Some(s) = out.series {
        d.set_item("timeseries", table(py, s.timeseries)?)?;
        d.set_item("herd", table(py, s.herd)?)?;
        d.set_item("attempts_by_ordinal", table(py, s.attempts_by_ordinal)?)?;
        d.set_item("services", table(py, s.services)?)?;
    }
    d.set_item("truncation", out.truncation)?;
    d.set_item("runs", runs)?;
    Ok(d)
}

/// Explains and lints a scenario: (text, lints, denied ids).
#[pyfunction]
#[pyo3(signature = (kind, scenario, name=None, sets=vec![], deny=vec![]))]
fn explain<'py>(
    py: Python<'py>,
    kind: &str,
    scenario: String,
    name: Option<String>,
    sets: Vec<String>,
    deny: Vec<String>,
) -> PyResult<Bound<'py, PyTuple>> {
    let src = Source::of(kind, scenario, name)?;
    let out = detached(py, move |_| {
        let deny = lib::deny_ids(&deny)?;
        let loaded = src.load(&overrides(sets, None))?;
        Ok::<_, Error>((lib::explain(&loaded), deny))
    })?;
    let (e, deny) = out.map_err(|e| py_err(&e))?;
    let lints = PyList::empty(py);
    for (id, fleet, layer, message) in e.lints {
        lints.append((id, fleet, layer, message))?;
    }
    PyTuple::new(
        py,
        [
            e.text.into_pyobject(py)?.into_any(),
            lints.into_any(),
            PyList::new(py, deny)?.into_any(),
        ],
    )
}

/// Checks scenario files: (table, passed, truncation, baselines written).
#[pyfunction]
#[pyo3(signature = (scenarios, sets=vec![], seed=None, baseline=None, tolerance=0.05, write_baseline=false, jobs=None))]
#[allow(clippy::too_many_arguments)]
fn check<'py>(
    py: Python<'py>,
    scenarios: Vec<PathBuf>,
    sets: Vec<String>,
    seed: Option<u64>,
    baseline: Option<PathBuf>,
    tolerance: f64,
    write_baseline: bool,
    jobs: Option<usize>,
) -> PyResult<Bound<'py, PyTuple>> {
    let out = detached(py, move |_| {
        lib::check(
            &scenarios,
            &overrides(sets, seed),
            baseline.as_deref(),
            tolerance,
            write_baseline,
            jobs,
        )
    })?;
    let c = out.map_err(|e| py_err(&e))?;
    PyTuple::new(
        py,
        [
            table(py, c.table)?.into_any(),
            c.passed.into_pyobject(py)?.to_owned().into_any(),
            c.truncation.into_pyobject(py)?.into_any(),
            PyList::new(py, c.wrote)?.into_any(),
        ],
    )
}

/// Searches a key of a scenario file: a dict of the answer, the probes and the rows.
#[pyfunction]
#[pyo3(signature = (scenario, key, range, sets=vec![], seed=None, tolerance=None, largest=false, jobs=None))]
#[allow(clippy::too_many_arguments)]
fn search<'py>(
    py: Python<'py>,
    scenario: PathBuf,
    key: String,
    range: String,
    sets: Vec<String>,
    seed: Option<u64>,
    tolerance: Option<f64>,
    largest: bool,
    jobs: Option<usize>,
) -> PyResult<Bound<'py, PyDict>> {
    let out = detached(py, move |_| {
        lib::search(
            &scenario,
            &overrides(sets, seed),
            &key,
            &range,
            tolerance,
            largest,
            jobs,
        )
    })?;
    let s = out.map_err(|e| py_err(&e))?;
    let d = PyDict::new(py);
    d.set_item("key", s.key)?;
    d.set_item("answer", s.answer)?;
    d.set_item("integer", s.integer)?;
    d.set_item("neighbour", s.neighbour)?;
    d.set_item("probes", table(py, s.probes)?)?;
    d.set_item("rows", table(py, s.rows)?)?;
    d.set_item("runs", s.runs)?;
    Ok(d)
}

/// The native module.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("NativeError", m.py().get_type::<NativeError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(json_to_toml, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(sweep, m)?)?;
    m.add_function(wrap_pyfunction!(explain, m)?)?;
    m.add_function(wrap_pyfunction!(check, m)?)?;
    m.add_function(wrap_pyfunction!(search, m)?)?;
    Ok(())
}
