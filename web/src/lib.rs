//! The playground's engine: retrysim compiled to WebAssembly, one request in and one
//! answer out, both JSON.
//!
//! The page sends `{"toml": TEXT, "seed": "N"}` (`seed` optional: the scenario's own;
//! `"at": "recorded_day.toml"`, the shipped scenario the text came from, makes the data
//! files beside it readable as they are to `retrysim run` of that file; `"tables":
//! true` adds the run's `timeseries.csv` and `herd.csv` text, header included, for the
//! test that compares them with the CLI's; `"trace": N` adds the traces of `N` sampled
//! requests, see `retrysim::api::playground::traces`) and gets back the run of the
//! scenario's base point (replication 0) as `retrysim run` makes it, by the library's
//! own code: the `summary.csv` row (its columns and the values as the file holds them)
//! and the numbers the `timeseries`, `phase` and `herd` charts draw (and, for a service
//! graph, the `graph` and `services` charts: `retrysim::api::playground::graph` and
//! `services`). A scenario that
//! does not load comes back as `{"ok": false, "error": MESSAGE}`, MESSAGE being the
//! line `retrysim run playground.toml` prints for it.
//!
//! `{"list": true}` answers with the shipped scenarios, embedded at build time
//! (build.rs): `{"ok": true, "scenarios": [{"path", "header", "text"}]}`.
//!
//! The ABI is plain C (no wasm-bindgen): the page asks for a buffer with
//! [`playground_alloc`], writes the request's UTF-8 bytes into it, calls
//! [`playground_run`], reads the answer at [`playground_output`], and frees the
//! buffer with [`playground_free`]. Nothing here reads a clock, a file or a thread.
//!
//! Tested in the browser, against the command line, by `web/test/playground.mjs`.

use std::cell::RefCell;

use retrysim::api::playground;
use retrysim::{Branch, Overrides, RunCharts, Truncation};
use serde_json::{json, Value};

mod shipped {
    include!(concat!(env!("OUT_DIR"), "/shipped.rs"));
}

/// How messages name the page's scenario: the file a student saves it as.
pub const SCENARIO_FILE: &str = "playground.toml";

thread_local! {
    /// The last answer, until the next request.
    static OUTPUT: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// Runs one request (see the crate docs) and returns the answer, JSON.
pub fn answer(request: &str) -> String {
    match run(request) {
        Ok(v) => v.to_string(),
        Err(message) => json!({ "ok": false, "error": message }).to_string(),
    }
}

/// The request's run, or the message that says why there is none.
fn run(request: &str) -> Result<Value, String> {
    let req: Value =
        serde_json::from_str(request).map_err(|e| format!("error: bad request: {e}"))?;
    if req.get("list").and_then(Value::as_bool) == Some(true) {
        return Ok(list());
    }
    let toml = req
        .get("toml")
        .and_then(Value::as_str)
        .ok_or("error: bad request: no \"toml\" text")?;
    let seed = match req.get("seed") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(parse_seed(s)?),
        Some(Value::Number(n)) => Some(parse_seed(&n.to_string())?),
        Some(other) => return Err(format!("error: bad request: seed {other} is not a number")),
    };
    let overrides = Overrides {
        sets: Vec::new(),
        seed,
    };
    let failed = |e: retrysim::Error| format!("error: {}", retrysim::error::chain(&e));
    let at = req.get("at").and_then(Value::as_str).unwrap_or("");
    let files = files_beside(at);
    let loaded = playground::load_text_with_files(SCENARIO_FILE, toml, &overrides, &files)
        .map_err(failed)?;
    let tables = retrysim::run_tables(&loaded, 0).map_err(failed)?;
    let capacity = loaded.scenario.dependency.capacity();
    let charts = retrysim::run_charts(&tables.timeseries, &tables.herd, capacity)
        .map_err(|e| format!("error: {}", retrysim::error::chain(&e)))?;
    let stopped = tables.result.metrics.totals.truncated.as_ref().map(|why| {
        Truncation::of(
            format!("scenario '{SCENARIO_FILE}'"),
            1,
            vec![(0, Some(why.clone()))],
            "the results shown are marked truncated (truncated = true in the summary row)".into(),
        )
        .map(|t| format!("error: {t}"))
    });
    let mut answer = json!({
        "ok": true,
        "scenario": loaded.scenario.name,
        "seed": tables.result.seed.to_string(),
        "summary": {
            "columns": tables.summary_columns,
            "values": tables.summary_values,
        },
        "stopped": stopped.flatten(),
        "charts": charts_json(&charts),
    });
    let services = playground::services(&loaded, &tables.result);
    if !services.is_null() {
        answer["services"] = services;
        answer["graph"] =
            playground::graph(&loaded, &tables.summary_columns, &tables.summary_values);
    }
    if let Some(n) = req.get("trace").and_then(Value::as_u64) {
        let population = tables.result.metrics.totals.logical;
        answer["trace"] = playground::traces(&loaded, population, n);
    }
    if req.get("tables").and_then(Value::as_bool) == Some(true) {
        answer["timeseries"] = Value::String(tables.timeseries);
        answer["herd"] = Value::String(tables.herd);
    }
    Ok(answer)
}

/// The shipped scenarios, each with its header.
fn list() -> Value {
    let scenarios: Vec<Value> = shipped::SCENARIOS
        .iter()
        .map(|(path, text)| json!({ "path": path, "header": playground::header(text), "text": text }))
        .collect();
    json!({ "ok": true, "scenarios": scenarios })
}

/// The embedded data files beside the shipped scenario `at` (a path under
/// scenarios/), named relative to its folder as the scenario names them.
fn files_beside(at: &str) -> Vec<(&'static str, &'static [u8])> {
    let dir = match at.rfind('/') {
        Some(i) => &at[..=i],
        None => "",
    };
    shipped::DATA
        .iter()
        .filter_map(|(p, b)| p.strip_prefix(dir).map(|rel| (rel, *b)))
        .collect()
}

/// A seed: a whole number from 0 (the library refuses one past `i64::MAX`, as it
/// refuses `--seed`).
fn parse_seed(s: &str) -> Result<u64, String> {
    s.trim()
        .parse::<u64>()
        .map_err(|_| format!("error: seed '{s}' is not a whole number of at least 0"))
}

/// The charts' numbers as JSON: columns of the time series, spans as `[start, end]`,
/// branches as `{label, points: [[x, y], ...]}`.
fn charts_json(c: &RunCharts) -> Value {
    let s = &c.series;
    let spans = |v: &[(f64, f64)]| -> Vec<[f64; 2]> { v.iter().map(|&(a, b)| [a, b]).collect() };
    let branch = |b: &Branch| {
        let points: Vec<[f64; 2]> = b.points.iter().map(|&(x, y)| [x, y]).collect();
        json!({ "label": b.label, "points": points })
    };
    json!({
        "bucket": s.bucket(),
        "end": s.end(),
        "t": s.t,
        "offered": s.offered,
        "inbound": s.inbound,
        "goodput": s.goodput,
        "success_rate": s.success_rate,
        "outages": spans(&c.outages),
        "breaker_open": spans(&c.breaker_open),
        "budget_exhausted": spans(&c.budget_exhausted),
        "capacity": c.capacity,
        "phase": c.phase.iter().map(branch).collect::<Vec<_>>(),
        "herd": {
            "width": c.herd.width(),
            "t": c.herd.t,
            "inbound": c.herd.inbound,
        },
    })
}

/// A buffer of `len` bytes for the page to write a request into.
#[no_mangle]
pub extern "C" fn playground_alloc(len: usize) -> *mut u8 {
    let mut v = Vec::<u8>::with_capacity(len);
    let p = v.as_mut_ptr();
    std::mem::forget(v);
    p
}

/// Frees a buffer of [`playground_alloc`].
///
/// # Safety
/// `ptr` and `len` must be those of one earlier [`playground_alloc`], freed once.
#[no_mangle]
pub unsafe extern "C" fn playground_free(ptr: *mut u8, len: usize) {
    // SAFETY: the caller passes a buffer `playground_alloc(len)` returned.
    drop(unsafe { Vec::from_raw_parts(ptr, 0, len) });
}

/// Runs the request in the `len` bytes at `ptr` (UTF-8 JSON); returns the length of
/// the answer, read at [`playground_output`].
///
/// # Safety
/// `ptr` must point at `len` initialised bytes (a buffer of [`playground_alloc`]).
#[no_mangle]
pub unsafe extern "C" fn playground_run(ptr: *const u8, len: usize) -> usize {
    // SAFETY: the caller wrote `len` bytes at `ptr`.
    let bytes = unsafe { std::slice::from_raw_parts(ptr, len) };
    let out = match std::str::from_utf8(bytes) {
        Ok(text) => answer(text),
        Err(_) => json!({ "ok": false, "error": "error: bad request: not UTF-8" }).to_string(),
    };
    OUTPUT.with(|o| {
        let mut o = o.borrow_mut();
        *o = out.into_bytes();
        o.len()
    })
}

/// Where the last answer is (its length is what [`playground_run`] returned).
#[no_mangle]
pub extern "C" fn playground_output() -> *const u8 {
    OUTPUT.with(|o| o.borrow().as_ptr())
}
